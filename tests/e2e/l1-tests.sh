#!/bin/sh
# The e2e tests, run inside L1 by l1-init. Each prints one E2E-RESULT line
# (pass/fail/skip) and, for guest boots, an E2E-TIME line with the
# boot-to-init time: from starting the VMM process to the guest init's
# first line on the console, as seen from L1.
E2E=/e2e
HINTVM=$E2E/hintvm
VMLINUX=$E2E/l2/vmlinux
BZIMAGE=$E2E/l2/vmlinuz
INITRD=$E2E/l2-initramfs.cpio
MEM=256M
TIMEOUT=${E2E_TIMEOUT:-120}
# quiet: every console byte costs exits; panic=-1: should the pvpanic
# driver be missing, a panic still ends the VM (as a reset, status 4).
BASE_CMDLINE="console=ttyS0 quiet panic=-1"
# HINTVM_E2E_VERBOSE=1 (tests/e2e/run) boots L2 kernels without "quiet"
# and copies every guest console to the L1 serial log.
VERBOSE=0
if grep -q 'e2e.verbose=1' /proc/cmdline; then
	VERBOSE=1
	BASE_CMDLINE="console=ttyS0 panic=-1"
fi
MARKER="E2E-GUEST init"

# l1_selected / l1_wanted (tests/l1/guest.sh, sourced by l1-lib.sh):
# HINTVM_E2E_ONLY=name,name (tests/e2e/run) runs just those tests; a
# resumed boot skips the ones that have their verdict.
. "$E2E/l1-lib.sh"
# A triple fault that QEMU's nested SVM caused is told apart and run again
# (tests/l1/nested-fault.sh, issue 12).
nested_fault_watch linux
echo "E2E-L1 nested-fault watch: $NESTED_FAULT_FILTER"

# Boot KERNEL with CPUS vCPUs; the guest init then does ACTION.
boot_case() { # NAME KERNEL_LABEL KERNEL CPUS ACTION EXPECTED_STATUS [ARGS]
	name=$1 label=$2 kernel=$3 cpus=$4 action=$5 expect=$6
	l1_selected "$name" || return
	cmdline="$BASE_CMDLINE${7:+ $7} e2e.action=$action"
	log=/tmp/$name.log
	if [ ! -x "$HINTVM" ]; then
		result "$name" skip "no static hintvm in the L1 image"
		return
	fi
	run_vm "$log" "$MARKER" -- "$HINTVM" run --stats -k "$kernel" -i "$INITRD" \
		-p "$cmdline" -c "$cpus" -m "$MEM"
	guest=$(grep -m 1 "$MARKER" "$log" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=$label cpus=$cpus boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS guest_uptime_s=$(field uptime "$guest")"
	# Where the boot went (--stats, src/core/boot_trace.c): phases in ms
	# from hintvm's start, and the exits before the guest's first console
	# byte, which under "quiet" is init's first line.
	echo "E2E-INFO name=$name $(grep -a -m 1 'boot (ms from' "$log" | tr -d '\r' | sed 's/^ *//');$(grep -a -m 1 'boot exits before' "$log" | tr -d '\r' | sed 's/^ *boot//')"
	problems="" clocksource=""
	[ "$STATUS" = "$expect" ] ||
		problems="$problems exit status $STATUS, expected $expect;"
	if check_guest_init "$guest" "$cpus" "$cmdline"; then
		# What a guest needs to boot without stalls (docs/linux-guests.md).
		platform=$(grep -m 1 "E2E-GUEST platform" "$log" | tr -d '\r')
		for want in hypervisor tsc_deadline rtc i8042; do
			[ "$(field $want "$platform")" = 1 ] ||
				problems="$problems guest lacks $want ($platform);"
		done
		clocksource=$(field clocksource "$platform")
		# The pvpanic driver bound to the DSDT's device (ACPI only).
		case " ${7:-} " in
		*" acpi=off "*) ;;
		*) [ "$(field pvpanic "$platform")" = 3 ] ||
			problems="$problems pvpanic driver not bound ($(grep -m 1 'E2E-GUEST modules' "$log" | tr -d '\r'); $platform);" ;;
		esac
	fi
	if [ "$action" = panic ]; then
		grep -q "Kernel panic" "$log" ||
			problems="$problems no \"Kernel panic\" on the console;"
		grep -q "guest kernel panicked (pvpanic)" "$log" ||
			problems="$problems hintvm did not report the pvpanic event;"
	fi
	[ $VERBOSE = 1 ] && [ -z "$problems" ] && show_log "$name" "$log"
	if [ -z "$problems" ]; then
		result "$name" pass "$label${7:+ $7}, $cpus vCPU(s), $action -> status $STATUS, init after ${INIT_MS} ms, clocksource $clocksource"
	else
		show_log "$name" "$log"
		result "$name" fail "$label${7:+ $7}, $cpus vCPU(s), $action:$problems"
	fi
}

# A damaged bzImage must be refused with a message before any VM runs.
corrupt_case() {
	name=corrupt-bzimage
	l1_selected $name || return
	if [ ! -x "$HINTVM" ]; then
		result $name skip "no static hintvm in the L1 image"
		return
	fi
	problems=""
	size=$(wc -c < "$BZIMAGE")
	head -c $((size / 2)) "$BZIMAGE" > /tmp/truncated.bzImage
	# Same size, but the boot sector's 0xAA55 flag is zeroed.
	{ head -c 510 "$BZIMAGE"; printf '\000\000'; tail -c +513 "$BZIMAGE"; } \
		> /tmp/badflag.bzImage
	for img in truncated badflag; do
		log=/tmp/$name-$img.log
		run_vm "$log" "$MARKER" -- "$HINTVM" run -k /tmp/$img.bzImage \
			-i "$INITRD" -p "$BASE_CMDLINE" -c 1 -m "$MEM"
		msg=$(grep -v '^$' "$log" | head -n 1 | tr -d '\r')
		echo "E2E-INFO name=$name image=$img status=$STATUS wall_ms=$WALL_MS message=$msg"
		[ "$STATUS" = "$STATUS_USAGE" ] ||
			problems="$problems $img: exit status $STATUS, expected $STATUS_USAGE;"
		grep -q "$MARKER" "$log" && problems="$problems $img: guest ran;"
		case "$img:$msg" in
		truncated:*truncated*|badflag:*boot_flag*) ;;
		*) problems="$problems $img: message \"$msg\" does not say why;" ;;
		esac
	done
	if [ -z "$problems" ]; then
		result $name pass "truncated and bad-boot-flag bzImages refused with status $STATUS_USAGE before the VM ran"
	else
		result $name fail "$problems"
	fi
}

# The same vmlinux boot under QEMU in this L1, for comparison only. rtc=on:
# without a CMOS RTC, rtc_cmos stalls the guest for ~25 s here.
qemu_case() {
	name=qemu-microvm
	l1_selected $name || return
	qemu=/usr/bin/qemu-system-x86_64
	if ! "$qemu" -version > /tmp/qemu-version.log 2>&1; then
		result $name skip "QEMU does not run in L1: $(head -n 1 /tmp/qemu-version.log)"
		return
	fi
	cmdline="$BASE_CMDLINE e2e.action=poweroff"
	log=/tmp/$name.log
	run_vm "$log" "$MARKER" -- "$qemu" -M microvm,rtc=on -enable-kvm -cpu host \
		-smp 1 -m "$MEM" -nodefaults -no-user-config -nographic \
		-serial stdio -no-reboot -L /usr/share/qemu \
		-kernel "$VMLINUX" -initrd "$INITRD" -append "$cmdline"
	guest=$(grep -m 1 "$MARKER" "$log" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=qemu-microvm kernel=vmlinux cpus=1 boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS guest_uptime_s=$(field uptime "$guest")"
	if [ -n "$guest" ]; then
		[ $VERBOSE = 1 ] && show_log $name "$log"
		result $name pass "information only: QEMU microvm reached init after ${INIT_MS} ms"
	else
		show_log $name "$log"
		result $name skip "information only: QEMU microvm did not reach init (status $STATUS)"
	fi
}

boot_case boot-pvh-1cpu vmlinux "$VMLINUX" 1 poweroff $STATUS_POWEROFF
boot_case boot-pvh-2cpu vmlinux "$VMLINUX" 2 poweroff $STATUS_POWEROFF
boot_case boot-bzimage-1cpu bzImage "$BZIMAGE" 1 poweroff $STATUS_POWEROFF
boot_case boot-bzimage-2cpu bzImage "$BZIMAGE" 2 poweroff $STATUS_POWEROFF
boot_case reboot vmlinux "$VMLINUX" 1 reboot $STATUS_REBOOT
# The guest's pvpanic driver reports the panic: a guest crash, not the
# reset panic=-1 would give.
boot_case panic vmlinux "$VMLINUX" 1 panic $STATUS_CRASH
# Without ACPI: CPUs from the MP table, reset through the i8042 (0xfe).
boot_case acpi-off-2cpu vmlinux "$VMLINUX" 2 reboot $STATUS_REBOOT acpi=off
corrupt_case

# ---- virtio devices (docs/virtio.md) --------------------------------------
# The guest is the vmlinux with tests/e2e/l2-virtio-init as /init (busybox
# sh: mount, ping and dd come free), packed here from L1's own busybox and
# Debian's modules. e2e.virtio=... tells it which device to exercise; it
# reports "E2E-GUEST ..." lines and these functions judge them.
VIRTIO_INITRD=/tmp/l2-virtio.cpio
VIRTIO_IMAGE=$E2E/virtio-ext4.img # made by tests/e2e/run (mkfs.ext4)
VIRTIO_L2_MODULES="virtio_ring virtio virtio_pci_modern_dev
	virtio_pci_legacy_dev virtio_pci virtio_blk crc16 mbcache jbd2
	crc32c_generic ext4 failover net_failover virtio_net virtio_console
	virtio-rng 9pnet 9pnet_virtio netfs fscache 9p overlay
	vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport"

virtio_setup() { # once: the L2 initramfs, and L1's ext4, loop and tun
	[ -s "$VIRTIO_INITRD" ] && return 0
	dir=/tmp/l2-virtio
	mkdir -p $dir/bin $dir/modules $dir/proc $dir/sys $dir/dev $dir/tmp
	cp /bin/busybox $dir/bin/busybox
	cp $E2E/l2-virtio-init $dir/init
	cp $E2E/l2-share-test $dir/l2-share-test
	chmod 755 $dir/init
	# The Linux bench programs (tests/e2e/run --bench), for linux-bench.
	for b in hvm-ebizzy hvm-tcp-rr hvm-share-check hvm-vsock; do
		[ -x $E2E/bench/$b ] && cp $E2E/bench/$b $dir/bin/$b
	done
	for m in $VIRTIO_L2_MODULES; do
		cp $E2E/modules/$m.ko $dir/modules/ || return 1
	done
	(cd $dir && find . | cpio -o -H newc > "$VIRTIO_INITRD" 2>/dev/null) ||
		return 1
	# L1 runs the same kernel: the same modules read the guest's ext4
	# image (loop) and give the guest's NIC its tap (tun).
	for m in crc16 mbcache jbd2 crc32c_generic ext4 loop tun; do
		insmod $E2E/modules/$m.ko 2>/tmp/insmod.err ||
			grep -q 'File exists' /tmp/insmod.err ||
			echo "E2E-INFO name=virtio insmod $m failed: $(cat /tmp/insmod.err)"
	done
	return 0
}

# Boot the virtio guest for test NAME, its init doing TEST, with the
# device options after them. Sets LOG, STATUS and GUEST (its E2E-GUEST
# lines, one per line).
virtio_boot() { # NAME TEST DEVICE_OPTION...
	name=$1 test=$2
	shift 2
	LOG=/tmp/$name.log
	run_vm "$LOG" "$MARKER" -- "$HINTVM" run --stats -k "$VMLINUX" -i "$VIRTIO_INITRD" \
		-p "$BASE_CMDLINE e2e.virtio=$test" -c 1 -m "$MEM" "$@"
	GUEST=$(grep -a 'E2E-GUEST' "$LOG" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=vmlinux cpus=1 boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS"
}

guest_line() { # PREFIX: the guest's first line starting "E2E-GUEST PREFIX"
	echo "$GUEST" | grep -m 1 "^E2E-GUEST $1"
}

# Common checks of a virtio boot; appends to $problems.
virtio_check_run() {
	[ "$STATUS" = "$STATUS_POWEROFF" ] ||
		problems="$problems exit status $STATUS, expected $STATUS_POWEROFF;"
	echo "$GUEST" | grep -q '^E2E-GUEST done' ||
		problems="$problems guest did not finish;"
	failed=$(echo "$GUEST" | grep -e 'insmod .* failed' -e ' no /' |
		tr '\n' ' ')
	[ -z "$failed" ] || problems="$problems $failed;"
}

virtio_report() { # NAME PASS_DETAIL
	[ $VERBOSE = 1 ] && [ -z "$problems" ] && show_log "$1" "$LOG"
	if [ -z "$problems" ]; then
		result "$1" pass "$2"
	else
		show_log "$1" "$LOG"
		result "$1" fail "$problems"
	fi
}

virtio_precheck() { # NAME [needs-image|-] [PAIRED]: 1 (reported) when it cannot run
	# A case whose one boot also gives PAIRED its verdict runs when
	# either is selected, and is left out with both.
	if ! l1_wanted "$1" && ! { [ -n "${3:-}" ] && l1_wanted "$3"; }; then
		l1_selected "$1"
		[ -z "${3:-}" ] || l1_selected "$3"
		return 1
	fi
	if [ ! -x "$HINTVM" ]; then
		result "$1" skip "no static hintvm in the L1 image"
		return 1
	fi
	if [ "${2:-}" = needs-image ] && [ ! -s "$VIRTIO_IMAGE" ]; then
		result "$1" skip "no ext4 image: mkfs.ext4 (e2fsprogs) missing on the build host"
		return 1
	fi
	if ! virtio_setup; then
		result "$1" fail "could not pack the virtio L2 initramfs"
		return 1
	fi
	return 0
}

HOST_LINE="written by the build host"
GUEST_LINE="written by the L2 guest through virtio-blk"

# ext4 on --disk: the guest writes, the host (L1) reads it back.
virtio_blk_ext4_case() {
	name=virtio-blk-ext4
	virtio_precheck $name needs-image || return
	img=/tmp/virtio-rw.img
	cp "$VIRTIO_IMAGE" $img
	RUN_VM_RESET="cp $VIRTIO_IMAGE $img" virtio_boot $name blk --disk $img
	problems=""
	virtio_check_run
	mount_line=$(guest_line "blk mount=")
	[ "$(field mount "$mount_line")" = 0 ] ||
		problems="$problems guest mount failed ($mount_line);"
	[ "$(field ro "$mount_line")" = 0 ] ||
		problems="$problems disk read-only in the guest ($mount_line);"
	[ "$(guest_line "blk host_file=")" = "E2E-GUEST blk host_file=$HOST_LINE" ] ||
		problems="$problems guest read \"$(guest_line "blk host_file=")\";"
	[ "$(field umount "$(guest_line "blk umount=")")" = 0 ] ||
		problems="$problems guest umount failed;"
	# Read back in L1 through the loop driver, read-only.
	mkdir -p /tmp/virtio-mnt
	if mount -t ext4 -o loop,ro $img /tmp/virtio-mnt 2>/tmp/l1mount.err; then
		got=$(cat /tmp/virtio-mnt/guest-file 2>&1)
		[ "$got" = "$GUEST_LINE" ] ||
			problems="$problems L1 read \"$got\" from /guest-file;"
		want_md5=$(seq 1 100000 | md5sum | cut -d' ' -f1)
		got_md5=$(md5sum < /tmp/virtio-mnt/guest-seq | cut -d' ' -f1)
		[ "$got_md5" = "$want_md5" ] ||
			problems="$problems /guest-seq md5 $got_md5, expected $want_md5;"
		size=$(wc -c < /tmp/virtio-mnt/guest-seq)
		umount /tmp/virtio-mnt
	else
		problems="$problems L1 cannot mount the image: $(cat /tmp/l1mount.err);"
	fi
	virtio_report $name "guest mounted ext4 from virtio-blk, read the host's file, wrote /guest-file and $size bytes of /guest-seq; L1 read both back intact after power-off"
}

# --disk IMG,ro: the guest cannot write, the image stays byte-identical.
virtio_blk_ro_case() {
	name=virtio-blk-ro
	virtio_precheck $name needs-image || return
	img=/tmp/virtio-ro.img
	cp "$VIRTIO_IMAGE" $img
	before=$(sha256sum < $img | cut -d' ' -f1)
	virtio_boot $name blk-ro --disk $img,ro
	after=$(sha256sum < $img | cut -d' ' -f1)
	problems=""
	virtio_check_run
	[ "$(field ro "$(guest_line "blk-ro ro=")")" = 1 ] ||
		problems="$problems guest does not see the disk read-only ($(guest_line "blk-ro ro="));"
	dd_line=$(guest_line "blk-ro dd_status=")
	[ "$(field dd_status "$dd_line")" != 0 ] ||
		problems="$problems raw write to /dev/vda succeeded;"
	mount_line=$(guest_line "blk-ro mount=")
	[ "$(field opts "$mount_line")" = ro ] ||
		problems="$problems ext4 not mounted read-only ($mount_line);"
	[ "${mount_line#*host_file=}" = "$HOST_LINE" ] ||
		problems="$problems guest could not read the host's file ($mount_line);"
	write_line=$(guest_line "blk-ro file_write=")
	[ "$(field file_write "$write_line")" != 0 ] ||
		problems="$problems file write on the read-only disk succeeded;"
	[ "$before" = "$after" ] ||
		problems="$problems image changed (sha256 $before -> $after);"
	virtio_report $name "guest sees ro=1; raw write failed ($(field dd_error "$dd_line" | tr '_' ' ')); ext4 mounted ro, file write failed ($(field error "$write_line" | tr '_' ' ')); image sha256 unchanged"
}

# --net tap=NAME: the guest pings L1's end of the tap.
virtio_net_case() {
	name=virtio-net-ping
	virtio_precheck $name || return
	tap=e2etap0
	if [ ! -d /sys/class/net/$tap ]; then
		tunctl -t $tap > /tmp/tunctl.log 2>&1 || {
			result $name fail "tunctl -t $tap: $(cat /tmp/tunctl.log)"
			return
		}
		ip addr add 10.0.2.1/24 dev $tap
		ip link set $tap up
	fi
	virtio_boot $name net --net tap=$tap
	problems=""
	virtio_check_run
	net_line=$(guest_line "net mac=")
	replies=$(field replies "$net_line")
	[ "${replies:-0}" -ge 1 ] 2>/dev/null ||
		problems="$problems no ping replies ($net_line);"
	[ "$(field mac "$net_line")" = 52:54:00:12:34:56 ] ||
		problems="$problems unexpected MAC ($net_line);"
	virtio_report $name "guest eth0 $(field mac "$net_line") got $replies/3 replies from 10.0.2.1 on tap $tap"
}

# --rng and --console virtio in one boot, each with its own result.
virtio_rng_console_case() {
	want_rng=0 want_console=0
	l1_selected virtio-rng && want_rng=1
	l1_selected virtio-console && want_console=1
	[ $want_rng = 1 ] || [ $want_console = 1 ] || return
	why=""
	if [ ! -x "$HINTVM" ]; then
		why="skip no static hintvm in the L1 image"
	elif ! virtio_setup; then
		why="fail could not pack the virtio L2 initramfs"
	fi
	if [ -n "$why" ]; then
		[ $want_rng = 1 ] && result virtio-rng ${why%% *} "${why#* }"
		[ $want_console = 1 ] && result virtio-console ${why%% *} "${why#* }"
		return
	fi
	virtio_boot virtio-rng rng-console --rng --console virtio
	echo "E2E-TIME name=virtio-console (the virtio-rng boot) wall_ms=$WALL_MS"
	problems=""
	virtio_check_run
	common=$problems
	if [ $want_rng = 1 ]; then
		problems=$common
		rng_line=$(guest_line "rng current=")
		hex=$(field hex "$rng_line")
		[ "$(field current "$rng_line")" = virtio_rng.0 ] ||
			problems="$problems rng_current is not virtio_rng.0 ($rng_line);"
		[ ${#hex} = 128 ] ||
			problems="$problems read ${#hex} hex digits, expected 128 ($rng_line);"
		[ -n "$(echo "$hex" | tr -d 0)" ] ||
			problems="$problems the bytes are all zero;"
		virtio_report virtio-rng "rng_current virtio_rng.0, 64 bytes from /dev/hwrng: ${hex%${hex#????????????????}}..."
	fi
	if [ $want_console = 1 ]; then
		problems=$common
		grep -q "E2E-HVC0 hello from the guest's hvc0" "$LOG" ||
			problems="$problems the hvc0 line is not on hintvm's output ($(guest_line "console"));"
		virtio_report virtio-console "a line the guest wrote to /dev/hvc0 appeared on hintvm's stdout"
	fi
}

# Serial input: the guest prints a prompt, a typist on hintvm's stdin (a
# fifo) answers once it appears, and the guest echoes what it read.
SERIAL_LINE=typed-on-the-l1-host
serial_input_case() { # NAME
	name=$1
	virtio_precheck $name || return
	fifo=/tmp/$name.fifo
	LOG=/tmp/$name.log
	rm -f $fifo
	mkfifo $fifo
	: > $LOG
	(
		i=0
		while ! grep -q "E2E-GUEST serial ready" $LOG && [ $i -lt 1200 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		echo $SERIAL_LINE
		exec sleep $TIMEOUT # keep stdin open until the VM is gone
	) > $fifo &
	typist=$!
	RUN_VM_INPUT=$fifo
	virtio_boot $name serial --rng
	RUN_VM_INPUT=
	kill $typist 2>/dev/null
	problems=""
	virtio_check_run
	got=$(guest_line "serial got=")
	[ "$got" = "E2E-GUEST serial got=$SERIAL_LINE" ] ||
		problems="$problems guest read \"$got\" from ttyS0;"
	rng=$(field rng "$(guest_line "serial rng=")")
	[ ${#rng} = 16 ] || problems="$problems no bytes from virtio-rng;"
	virtio_report $name "the guest read \"$SERIAL_LINE\" from ttyS0 (IRQ 4) and 8 bytes from virtio-rng"
}

# --share (docs/shares.md): one guest, four shares of L1 directories:
# rw (cache=none), loose (cache=loose), mapped (ids=mapped) and ro. The
# guest runs hvm-share-check on each and builds an overlayfs with the ro
# share as lower layer and tmpfs as upper (a container root); after it
# powered off, L1 checks its own view of every directory.
SHARE_HOST_LINE="written by L1 for the ro share"
virtio_9p_case() {
	name=virtio-9p
	# virtio-9p-overlay comes with virtio-9p (one boot serves both).
	virtio_precheck $name - $name-overlay || return
	check=$E2E/bench/hvm-share-check
	if [ ! -x $check ]; then
		result $name skip "no hvm-share-check in the L1 image"
		result $name-overlay skip "no hvm-share-check in the L1 image"
		return
	fi
	# On ext2 (ext4's driver): L1's rootfs has no user.* xattrs.
	if ! share_fs_mount; then
		result $name fail "no ext2 file system for the shares: $(head -n 2 /tmp/mke2fs.err)"
		result $name-overlay fail "no ext2 file system for the shares"
		return
	fi
	RUN_VM_RESET=share_dirs_fresh virtio_boot $name share \
		--share /tmp/share/rw,tag=rw --share /tmp/share/loose,tag=loose \
		--share /tmp/share/mapped,tag=mapped,ids=mapped \
		--share /tmp/share/ro,tag=ro,ro
	problems=""
	virtio_check_run
	common=$problems
	share_judge guest_line "$check"
	virtio_report $name "Debian's 9p client on 4 shares: create/write 8 MiB/rename/link/symlink/unlink/xattr/truncate on cache=none, cache=loose and ids=mapped, all seen by L1; ro refused every change with EROFS; no set-id file or device node reached the host (ids=host: EPERM; ids=mapped: in xattrs only)"
	problems=$common
	ov=$(guest_line "share overlay ")
	[ "$(field mount "$ov")" = 0 ] && [ "$(field copyup "$ov")" = 1 ] &&
		[ "$(field new "$ov")" = 1 ] && [ "$(field whiteout "$ov")" = 1 ] &&
		[ "$(field lower_intact "$ov")" = 1 ] ||
		problems="$problems ${ov:-no overlay line};"
	virtio_report $name-overlay "overlayfs with the ro share as lower and tmpfs as upper: copy-up, new file and whiteout in the overlay, the share untouched"
	share_fs_unmount
}

# ---- virtio-vsock (docs/virtio.md) -----------------------------------------
# Debian's vsock driver against hintvm's device, both directions, through
# the hybrid socket with hvm-vsock on both sides (guest-firmware/linux/
# bench/vsock.c): L1 listens at UDS_5000 before the boot; the guest calls
# it ("ping", answered "pong:ping") and host port 5001 (nobody: refused),
# serves echo on 1234 and says "ready"; then L1 streams 4 MiB through the
# echo (checked byte by byte), opens 32 connections at once, asks for a
# port nobody listens on (closed) and connects to 1235, after which the
# guest powers off. The socket must be 0600 and gone afterwards.
virtio_vsock_case() {
	name=virtio-vsock
	virtio_precheck $name || return
	v=$E2E/bench/hvm-vsock
	if [ ! -x $v ]; then
		result $name skip "no hvm-vsock in the L1 image (tests/e2e/run --bench)"
		return
	fi
	rm -rf /tmp/vsock
	# Started by root, the VM runs as its own uid (--user auto): the
	# guest's calls reach UDS_5000 as that uid, and at the end it removes
	# its socket as that uid, so the directory and the listener let it in
	# (docs/sandbox.md).
	mkdir /tmp/vsock && chmod 0777 /tmp/vsock
	uds=/tmp/vsock/v.sock
	(umask 0; exec $v host-serve ${uds}_5000 >/tmp/vsock/serve.out 2>&1) &
	serve=$!
	LOG=/tmp/$name.log
	# Empty now: the shell truncates it only once the VM's child runs,
	# and the wait below must not find a repeated run's old "ready".
	# hintvm's own messages go to a second file until the VM ends: written
	# into the console's, they can cut the "ready" line the wait looks for.
	: >"$LOG"
	: >"$LOG.hintvm"
	start=$(date +%s)
	timeout -k 10 $TIMEOUT "$HINTVM" run -k "$VMLINUX" -i "$VIRTIO_INITRD" \
		-p "$BASE_CMDLINE e2e.virtio=vsock" -c 1 -m "$MEM" \
		--vsock cid=3,uds=$uds >"$LOG" 2>"$LOG.hintvm" &
	vm=$!
	while ! grep -q 'E2E-GUEST vsock ready' "$LOG" && kill -0 $vm 2>/dev/null &&
		[ $(($(date +%s) - start)) -lt $TIMEOUT ]; do
		sleep 0.2
	done
	ready_s=$(($(date +%s) - start))
	mode=$(stat -c %a $uds 2>/dev/null)
	echo_line=$($v host-echo $uds 1234 4194304 2>&1)
	many_line=$($v host-many $uds 1234 32 2>&1)
	refused_line=$($v host-connect $uds 4444 2>&1)
	$v host-connect $uds 1235 >/dev/null 2>&1
	bg_vm_wait $name $vm $((TIMEOUT + 1))
	kill $serve 2>/dev/null
	cat "$LOG.hintvm" >>"$LOG"
	GUEST=$(grep -a 'E2E-GUEST' "$LOG" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=vmlinux cpus=1 ready_s=$ready_s"
	echo "E2E-INFO name=$name echo: $echo_line (information only: TCG L1)"
	problems=""
	virtio_check_run
	[ "$mode" = 600 ] || problems="$problems socket mode ${mode:-missing}, expected 600;"
	[ "$(guest_line "vsock call")" = "E2E-GUEST vsock call reply=pong:ping" ] ||
		problems="$problems guest to host: $(guest_line "vsock call");"
	case $(guest_line "vsock absent") in
	*error=connect*) ;;
	*) problems="$problems a guest call to a host port nobody serves: $(guest_line "vsock absent");" ;;
	esac
	[ "$(field ok "$echo_line")" = 1 ] || problems="$problems echo: $echo_line;"
	[ "$(field ok "$many_line")" = 1 ] || problems="$problems 32 at once: $many_line;"
	[ "$refused_line" = closed ] || problems="$problems port 4444: $refused_line;"
	[ -n "$(guest_line "vsock host-done=0")" ] ||
		problems="$problems the guest never saw L1's done connection;"
	[ ! -e $uds ] || problems="$problems $uds left behind;"
	virtio_report $name "Linux's vsock driver: guest->host call answered through UDS_5000, refused port 5001, 4 MiB echo checked ($(field mb_s "$echo_line") MB/s), 32 connections at once, unknown guest port closed, socket 0600 and removed"
}

virtio_blk_ext4_case
virtio_blk_ro_case
virtio_net_case
virtio_rng_console_case
serial_input_case serial-input
virtio_9p_case
virtio_vsock_case

# ---- Linux guest workloads (docs/benchmarks.md) ---------------------------
# The virtio guest with 2 vCPUs and no device, e2e.virtio=bench: it runs
# hvm-ebizzy and hvm-tcp-rr over loopback once each. Passes when both
# lines parse; the numbers are reported (E2E-INFO), never judged: a TCG L1
# on a shared host says nothing about performance.
linux_bench_case() {
	name=linux-bench
	virtio_precheck $name || return
	if [ ! -x $E2E/bench/hvm-ebizzy ] || [ ! -x $E2E/bench/hvm-tcp-rr ]; then
		result $name skip "no hvm-ebizzy/hvm-tcp-rr in the L1 image (tests/e2e/run --bench)"
		return
	fi
	LOG=/tmp/$name.log
	run_vm "$LOG" "$MARKER" -- "$HINTVM" run -k "$VMLINUX" -i "$VIRTIO_INITRD" \
		-p "$BASE_CMDLINE e2e.virtio=bench" -c 2 -m "$MEM"
	GUEST=$(grep -a 'E2E-GUEST' "$LOG" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=vmlinux cpus=2 boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS"
	problems=""
	virtio_check_run
	ebizzy_line=$(guest_line "bench ebizzy")
	records=$(echo "$ebizzy_line" | sed -n 's/^E2E-GUEST bench ebizzy \([0-9][0-9]*\) records\/s$/\1/p')
	[ "${records:-0}" -gt 0 ] 2>/dev/null ||
		problems="$problems hvm-ebizzy printed no records/s > 0 ($ebizzy_line);"
	rr_line=$(guest_line "bench tcp_rr")
	transactions=$(field transactions "$rr_line")
	[ "${transactions:-0}" -gt 0 ] 2>/dev/null ||
		problems="$problems hvm-tcp-rr printed no transactions > 0 ($rr_line);"
	echo "E2E-INFO name=$name cpus=2 ebizzy_records_per_s=$records tcp_rr_transactions=$transactions tcp_rr_trans_per_s=$(field trans_per_s "$rr_line") p50_us=$(field p50_us "$rr_line") p90_us=$(field p90_us "$rr_line") p99_us=$(field p99_us "$rr_line") (information only: TCG L1)"
	virtio_report $name "2 vCPUs: hvm-ebizzy -t 2 -S 2 gave $records records/s, hvm-tcp-rr -L -l 2 $transactions transactions (information only)"
}

linux_bench_case

# ---- PV TLB flush (the test kernel's tlbflush payload) --------------------
# Here, unlike on the dev hosts, KVM sets the steal-time `preempted` byte
# of a vCPU whose thread L1's scheduler preempted, so the guest's PV path
# (skip the IPI, set KVM_VCPU_FLUSH_TLB) really runs. The test kernel is
# the one built into hintvm.
L1_CPUS=$(nproc)

# Boot the test kernel: tlbflush on CPUS vCPUs for MS ms with --pv PV.
# Sets LOG, STATUS, WALL_MS and TLB_RESULT (its RESULT line).
tlbflush_boot() { # NAME CPUS PV MS
	LOG=/tmp/$1.log
	run_vm "$LOG" "$MARKER" -- "$HINTVM" run -c "$2" -m 64M --pv "$3" \
		-p "test=tlbflush ms=$4 pv=auto"
	TLB_RESULT=$(grep -a -m 1 '^RESULT ' "$LOG" | tr -d '\r')
}

# 2x overcommit with PV TLB flush: no stale read, and the guest used PV.
# How many IPIs that saved depends on when L1 preempts vCPU threads: it is
# reported, not judged.
tlbflush_case() {
	name=tlbflush-pv-2x
	l1_selected $name || return
	if [ ! -x "$HINTVM" ]; then
		result $name skip "no static hintvm in the L1 image"
		return
	fi
	cpus=$((2 * L1_CPUS))
	tlbflush_boot $name $cpus host 500
	problems=""
	[ "$STATUS" = "$STATUS_POWEROFF" ] ||
		problems="$problems exit status $STATUS, expected $STATUS_POWEROFF;"
	[ "$(field ok "$TLB_RESULT")" = 1 ] ||
		problems="$problems not ok ($TLB_RESULT);"
	[ "$(field stale "$TLB_RESULT")" = 0 ] ||
		problems="$problems stale reads ($TLB_RESULT);"
	[ "$(field pv "$TLB_RESULT")" = 1 ] ||
		problems="$problems guest did not use PV TLB flush ($TLB_RESULT);"
	echo "E2E-INFO name=$name cpus=$cpus l1_cpus=$L1_CPUS wall_ms=$WALL_MS records=$(field records "$TLB_RESULT") ipis_sent=$(field ipis_sent "$TLB_RESULT") ipis_saved=$(field ipis_saved "$TLB_RESULT") (information only: TCG L1)"
	if [ -z "$problems" ]; then
		[ $VERBOSE = 1 ] && show_log $name "$LOG"
		result $name pass "$cpus vCPUs on $L1_CPUS L1 CPUs, pv=1, stale=0: $(field records "$TLB_RESULT") remaps, $(field ipis_sent "$TLB_RESULT") IPIs sent, $(field ipis_saved "$TLB_RESULT") saved"
	else
		show_log $name "$LOG"
		result $name fail "$problems"
	fi
}

# bench/run tlbflush: e2e.bench=tlbflush:ROUNDS:MS on L1's command line.
# Each round runs every variant once (PV TLB flush on/off at 1x and 2x
# L1's CPUs), rotated so that none always goes first; one E2E-BENCH line
# per run, which bench/run reads (and shows as progress) from the serial
# log. Not a test: no E2E-RESULT line.
tlbflush_bench() {
	spec=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^e2e.bench=//p')
	case $spec in
	tlbflush:*:*) ;;
	*) return ;;
	esac
	rounds=$(echo "$spec" | cut -d: -f2)
	ms=$(echo "$spec" | cut -d: -f3)
	variants="1:on 1:off 2:on 2:off"
	total=$((rounds * 4))
	n=0 r=0
	echo "E2E-BENCH-START name=tlbflush rounds=$rounds ms=$ms l1_cpus=$L1_CPUS runs=$total"
	while [ $r -lt "$rounds" ]; do
		k=$((r % 4)) i=0 head="" tail=""
		for v in $variants; do
			if [ $i -lt $k ]; then tail="$tail $v"; else head="$head $v"; fi
			i=$((i + 1))
		done
		order="$head $tail"
		for v in $order; do
			factor=${v%%:*} flush=${v#*:}
			pv=host
			[ $flush = off ] && pv=host,-tlb-flush
			n=$((n + 1))
			tlbflush_boot tlbflush-bench $((factor * L1_CPUS)) $pv $ms
			# A failed run's console (hintvm says why) for the serial log.
			[ "$STATUS" = 0 ] || tail -n 15 "$LOG" | tr -d '\r' |
				sed 's/^/E2E-LOG tlbflush-bench: /'
			echo "E2E-BENCH name=tlbflush run=$n/$total round=$r variant=pv-flush-$flush vcpus=$((factor * L1_CPUS)) l1_cpus=$L1_CPUS status=$STATUS wall_ms=$WALL_MS ${TLB_RESULT:-RESULT none}"
		done
		r=$((r + 1))
	done
}

tlbflush_case
tlbflush_bench

# bench/run share: e2e.bench=share:ROUNDS:MIB:FILES on L1's command line.
# Each round boots one guest with two shares of L1's tmpfs and an ext2
# image (also on tmpfs) on virtio-blk; the guest runs hvm-share-check bench
# on 9p cache=none, 9p cache=loose and the disk, in an order rotated each
# round, and L1 forwards its E2E-BENCH lines with the round added. Not a
# test: no E2E-RESULT line. Numbers under TCG are only relative.
share_bench() {
	spec=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^e2e.bench=//p')
	case $spec in
	share:*:*:*) ;;
	*) return ;;
	esac
	rounds=$(echo "$spec" | cut -d: -f2)
	mib=$(echo "$spec" | cut -d: -f3)
	files=$(echo "$spec" | cut -d: -f4)
	if ! virtio_setup || [ ! -x $E2E/bench/hvm-share-check ]; then
		echo "E2E-BENCH-START name=share error=no-hvm-share-check-or-initramfs"
		return
	fi
	echo "E2E-BENCH-START name=share rounds=$rounds mib=$mib files=$files"
	r=0
	while [ $r -lt "$rounds" ]; do
		rm -rf /tmp/sb
		mkdir -p /tmp/sb/none /tmp/sb/loose
		truncate -s $((mib * 2 + 64))M /tmp/sb/blk.img
		loop=$(losetup -f)
		losetup "$loop" /tmp/sb/blk.img && mke2fs -q "$loop" >/dev/null 2>&1
		losetup -d "$loop"
		LOG=/tmp/share-bench.log
		# 9p creates are slow under TCG: minutes per guest, not 120 s.
		saved_timeout=$TIMEOUT
		TIMEOUT=$((300 + files * 2))
		run_vm "$LOG" "$MARKER" -- "$HINTVM" run -k "$VMLINUX" -i "$VIRTIO_INITRD" \
			-p "$BASE_CMDLINE e2e.virtio=share-bench e2e.share_bench=$mib:$files:$((r % 3))" \
			-c 1 -m "$MEM" --share /tmp/sb/none,tag=bench \
			--share /tmp/sb/loose,tag=bench2 --disk /tmp/sb/blk.img
		TIMEOUT=$saved_timeout
		grep -a '^E2E-BENCH name=share ' "$LOG" | tr -d '\r' |
			sed "s/\$/ round=$r status=$STATUS/"
		[ "$STATUS" = 0 ] || tail -n 15 "$LOG" | tr -d '\r' |
			sed 's/^/E2E-LOG share-bench: /'
		r=$((r + 1))
	done
	rm -rf /tmp/sb
}

share_bench

# bench/run ebizzy: e2e.bench=ebizzy:ROUNDS:SECONDS on L1's command line.
# What the brain does for a Linux guest, which sends no hints: the virtio
# guest with 2x L1's CPUs in vCPUs runs hvm-ebizzy (a thread per vCPU)
# under --sched-hints on and off, alternating which goes first each round;
# one E2E-BENCH line per run. Not a test: no E2E-RESULT line.
ebizzy_bench() {
	spec=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^e2e.bench=//p')
	case $spec in
	ebizzy:*:*) ;;
	*) return ;;
	esac
	rounds=$(echo "$spec" | cut -d: -f2)
	secs=$(echo "$spec" | cut -d: -f3)
	if ! virtio_setup || [ ! -x $E2E/bench/hvm-ebizzy ]; then
		echo "E2E-BENCH-START name=ebizzy error=no-hvm-ebizzy-or-initramfs"
		return
	fi
	cpus=$((2 * L1_CPUS))
	echo "E2E-BENCH-START name=ebizzy rounds=$rounds seconds=$secs vcpus=$cpus l1_cpus=$L1_CPUS"
	r=0
	while [ $r -lt "$rounds" ]; do
		order="on off"
		[ $((r % 2)) = 1 ] && order="off on"
		for h in $order; do
			LOG=/tmp/ebizzy-bench.log
			run_vm "$LOG" "$MARKER" -- "$HINTVM" run -k "$VMLINUX" \
				-i "$VIRTIO_INITRD" -c $cpus -m "$MEM" \
				--sched-hints $h -p "$BASE_CMDLINE e2e.virtio=ebizzy-bench e2e.ebizzy_s=$secs"
			line=$(grep -a -m 1 'E2E-GUEST ebizzy-bench' "$LOG" | tr -d '\r')
			records=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) records\/s.*/\1/p')
			[ "$STATUS" = 0 ] || tail -n 15 "$LOG" | tr -d '\r' |
				sed 's/^/E2E-LOG ebizzy-bench: /'
			echo "E2E-BENCH name=ebizzy round=$r variant=hints-$h vcpus=$cpus l1_cpus=$L1_CPUS status=$STATUS wall_ms=$WALL_MS records_per_s=${records:-none}"
		done
		r=$((r + 1))
	done
}

ebizzy_bench

# ---- the guest agent (docs/agent.md) ----------------------------------------
# `hintvm run --agent -k vmlinuz` as on a Debian host: the initramfs from
# /lib/modules/VERSION (tests/e2e/agent-modules.sh put it into L1), exec
# over Debian's own vsock driver, and the main process's exit status.
. "$E2E/l1-agent.sh"
agent_cases "$BZIMAGE"

# ---- the in-kernel irqchip (--irqchip kernel) -----------------------------
# The default is the split irqchip; a representative subset again with
# KVM's irqchip and PIT: SMP, poweroff, reboot, panic, serial input with
# virtio. Through a wrapper, so every case above can run unchanged.
HINTVM_SPLIT=$HINTVM
HINTVM=/tmp/hintvm-irqchip-kernel
printf '#!/bin/sh\nverb=$1\nshift\nexec %s "$verb" --irqchip kernel "$@"\n' \
	"$HINTVM_SPLIT" > $HINTVM
chmod 755 $HINTVM
[ -x "$HINTVM_SPLIT" ] || rm -f $HINTVM
boot_case boot-pvh-2cpu-irqchip-kernel vmlinux "$VMLINUX" 2 poweroff $STATUS_POWEROFF
boot_case reboot-irqchip-kernel vmlinux "$VMLINUX" 1 reboot $STATUS_REBOOT
boot_case panic-irqchip-kernel vmlinux "$VMLINUX" 1 panic $STATUS_CRASH
serial_input_case serial-input-irqchip-kernel
HINTVM=$HINTVM_SPLIT

# Last: QEMU in this L1 is information only, and a QEMU that wedges the L1
# must not cost hintvm's results (tests/e2e/run then reports it skipped).
qemu_case
