#!/bin/sh
# The arm64 e2e tests, run inside L1 by l1-init (argument: the mode, "vhe"
# or "nvhe"). Each prints one E2E-RESULT line (pass/fail/skip); guest boots
# also print an E2E-TIME line with the boot-to-init time: from starting
# hintvm to the guest's first marker line on its console, seen from L1.
MODE=${1:-vhe}
E2E=/e2e
HINTVM=$E2E/hintvm
IMAGE=$E2E/l2/Image
INITRD=$E2E/l2-initramfs.cpio
TESTKERNEL=$E2E/testkernel.Image
MEM=256M
TIMEOUT=${E2E_TIMEOUT:-120}
# quiet: every console byte is an MMIO exit (~100 us each here).
BASE_CMDLINE="console=ttyS0 quiet panic=-1"
MARKER="E2E-GUEST init"

. "$E2E/l1-lib.sh"

# The built-in test kernel's payload on CPUS vCPUs: one RESULT line with
# ok=1 and cpus=CPUS, then PSCI SYSTEM_OFF (status 0).
testkernel_case() { # PAYLOAD CPUS
	payload=$1 cpus=$2 name=tk-$1-$2cpu
	l1_selected "$name" || return
	log=/tmp/$name.log
	if [ ! -f "$TESTKERNEL" ]; then
		result "$name" skip "this build has no arm64 test kernel"
		return
	fi
	run_vm "$log" "RESULT " -- "$HINTVM" run -k "$TESTKERNEL" \
		-p "test=$payload" -c "$cpus" -m 64M
	line=$(grep -m 1 "^RESULT " "$log" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=testkernel cpus=$cpus result_ms=$INIT_MS wall_ms=$WALL_MS"
	echo "E2E-INFO name=$name $line"
	problems=""
	[ "$STATUS" = "$STATUS_POWEROFF" ] ||
		problems="$problems exit status $STATUS, expected $STATUS_POWEROFF;"
	[ "$(field test "$line")" = "$payload" ] ||
		problems="$problems no RESULT line for test=$payload;"
	[ "$(field ok "$line")" = 1 ] || problems="$problems ok=$(field ok "$line");"
	[ "$(field cpus "$line")" = "$cpus" ] ||
		problems="$problems cpus=$(field cpus "$line"), expected $cpus;"
	if [ "$payload" = cpuid ]; then
		[ "$(field pvtime "$line")" = 1 ] ||
			problems="$problems no PV time;"
		[ "$(field sve "$line")$(field pauth "$line")$(field pmu "$line")" = 000 ] ||
			problems="$problems optional CPU features visible without --cpu-features;"
		[ "$(field hint "$line")" = 1 ] ||
			problems="$problems the scheduling-hint page did not answer (hint=$(field hint "$line"));"
	fi
	if [ -z "$problems" ]; then
		result "$name" pass "$line"
	else
		show_log "$name" "$log"
		result "$name" fail "$problems"
	fi
}

# --pv controls PV time: the cpuid payload sees steal-time records by
# default (pvtime=1) and none with --pv none (pvtime=0).
pv_case() { # NAME PV_ARG EXPECTED_PVTIME
	name=$1 pv=$2 want=$3
	l1_selected "$name" || return
	log=/tmp/$name.log
	if [ ! -f "$TESTKERNEL" ]; then
		result "$name" skip "this build has no arm64 test kernel"
		return
	fi
	run_vm "$log" "RESULT " -- "$HINTVM" run -k "$TESTKERNEL" \
		-p "test=cpuid" -c 2 -m 64M --pv "$pv"
	line=$(grep -m 1 "^RESULT " "$log" | tr -d '\r')
	if [ "$STATUS" = "$STATUS_POWEROFF" ] &&
		[ "$(field ok "$line")" = 1 ] &&
		[ "$(field pvtime "$line")" = "$want" ]; then
		result "$name" pass "--pv $pv: $line"
	else
		show_log "$name" "$log"
		result "$name" fail "--pv $pv: expected pvtime=$want, status 0 (status $STATUS, ${line:-no RESULT line})"
	fi
}

# --cpu-features: the ID registers show SVE, pointer auth and the PMU only
# when asked (the default cpuid cases see none of them).
features_case() {
	name=cpu-features
	l1_selected "$name" || return
	log=/tmp/$name.log
	if [ ! -f "$TESTKERNEL" ]; then
		result "$name" skip "this build has no arm64 test kernel"
		return
	fi
	run_vm "$log" "RESULT " -- "$HINTVM" run -k "$TESTKERNEL" \
		-p "test=cpuid" -c 2 -m 64M --cpu-features pmu,sve,pauth
	line=$(grep -m 1 "^RESULT " "$log" | tr -d '\r')
	if [ "$STATUS" = 0 ] && [ "$(field ok "$line")" = 1 ] &&
		[ "$(field sve "$line")" = 1 ] &&
		[ "$(field pauth "$line")" = 1 ] &&
		[ "$(field pmu "$line")" = 1 ]; then
		result $name pass "--cpu-features pmu,sve,pauth: $line"
	else
		show_log $name "$log"
		result $name fail "expected sve=1 pauth=1 pmu=1, status 0 (status $STATUS, ${line:-no RESULT line})"
	fi
}

# Linux to init with CPUS vCPUs, then ACTION (poweroff or reboot).
linux_case() { # NAME CPUS ACTION EXPECTED_STATUS
	name=$1 cpus=$2 action=$3 expect=$4
	l1_selected "$name" || return
	cmdline="$BASE_CMDLINE e2e.action=$action"
	log=/tmp/$name.log
	run_vm "$log" "$MARKER" -- "$HINTVM" run --stats -k "$IMAGE" -i "$INITRD" \
		-p "$cmdline" -c "$cpus" -m "$MEM"
	guest=$(grep -m 1 "$MARKER" "$log" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=Image mode=$MODE cpus=$cpus boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS guest_uptime_s=$(field uptime "$guest")"
	problems=""
	[ "$STATUS" = "$expect" ] ||
		problems="$problems exit status $STATUS, expected $expect;"
	check_guest_init "$guest" "$cpus" "$cmdline"
	if [ -z "$problems" ]; then
		result "$name" pass "$MODE, $cpus vCPU(s), $action -> status $STATUS, init after ${INIT_MS} ms"
	else
		show_log "$name" "$log"
		result "$name" fail "$MODE, $cpus vCPU(s), $action:$problems"
	fi
}

# Two busy vCPUs squeezed onto one L1 CPU: the guest must see steal time
# (PV time through KVM_ARM_VCPU_PVTIME_CTRL) grow in /proc/stat.
steal_case() {
	name=linux-steal
	l1_selected "$name" || return
	log=/tmp/$name.log
	cat "$INITRD" "$E2E/l2-extra.cpio" > /tmp/steal-initrd.cpio
	run_vm "$log" "E2E-GUEST steal" -- taskset -c 0 "$HINTVM" run \
		-k "$IMAGE" -i /tmp/steal-initrd.cpio -c 2 -m "$MEM" \
		-p "$BASE_CMDLINE rdinit=/steal-init"
	line=$(grep -m 1 "E2E-GUEST steal" "$log" | tr -d '\r')
	before=$(field steal_before "$line")
	after=$(field steal_after "$line")
	echo "E2E-INFO name=$name $line"
	if [ -n "$after" ] && [ "$after" -gt "${before:-0}" ] 2>/dev/null; then
		result $name pass "2 busy vCPUs on 1 L1 CPU: steal $before -> $after ticks"
	else
		show_log $name "$log"
		result $name fail "steal did not grow (line: ${line:-none}, status $STATUS)"
	fi
}

# virtio-mmio: a disk and the entropy device, found by Linux through the
# device tree hintvm builds (virtio,mmio nodes).
virtio_case() {
	name=linux-virtio-mmio
	l1_selected "$name" || return
	log=/tmp/$name.log
	cat "$INITRD" "$E2E/l2-extra.cpio" > /tmp/virtio-initrd.cpio
	dd if=/dev/zero of=/tmp/disk.img bs=1024 count=1024 2>/dev/null
	printf 'hintvm-e2e-disk' | dd of=/tmp/disk.img conv=notrunc 2>/dev/null
	run_vm "$log" "E2E-GUEST virtio" -- "$HINTVM" run --stats -k "$IMAGE" \
		-i /tmp/virtio-initrd.cpio -c 1 -m "$MEM" \
		-d /tmp/disk.img --rng -p "$BASE_CMDLINE rdinit=/virtio-init"
	line=$(grep -m 1 "E2E-GUEST virtio" "$log" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=Image mode=$MODE cpus=1 boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS"
	if [ "$(field blk "$line")" = hintvm-e2e-disk ] &&
		[ "$(field rng_bytes "$line")" = 16 ] &&
		[ "$(field devices "$line")" = 2 ] && [ "$STATUS" = 0 ]; then
		result $name pass "virtio-blk and virtio-rng over virtio-mmio: $line"
	else
		show_log $name "$log"
		result $name fail "status $STATUS, ${line:-no virtio line}"
	fi
}

# --share (docs/shares.md): the x86 tier's virtio-9p case on virtio-mmio.
# One guest, four shares of L1 directories (rw cache=none, loose
# cache=loose, mapped ids=mapped, ro); tests/e2e/l2-share-test runs
# hvm-share-check on each and an overlayfs with the ro share as lower;
# then L1 checks its own view of every directory.
SHARE_HOST_LINE="written by L1 for the ro share"
share_case() {
	name=linux-virtio-9p
	# One boot gives linux-virtio-9p-overlay its verdict too: the pair
	# runs when either is selected, and is left out together.
	if ! l1_wanted $name && ! l1_wanted $name-overlay; then
		l1_selected $name
		l1_selected $name-overlay
		return
	fi
	check=$E2E/hvm-share-check
	if [ ! -x $check ]; then
		result $name skip "no hvm-share-check in the L1 image"
		result $name-overlay skip "no hvm-share-check in the L1 image"
		return
	fi
	# On ext2 (ext4's driver): L1's tmpfs has no user.* xattrs on 6.1.
	for m in crc16 mbcache jbd2 crc32c_generic ext4 loop; do
		insmod $E2E/modules/$m.ko 2>/tmp/insmod.err ||
			grep -q 'File exists' /tmp/insmod.err ||
			echo "E2E-INFO name=$name insmod $m failed: $(cat /tmp/insmod.err)"
	done
	if ! share_fs_mount; then
		result $name fail "no ext2 file system for the shares: $(head -n 2 /tmp/mke2fs.err)"
		result $name-overlay fail "no ext2 file system for the shares"
		return
	fi
	# The guest: base initramfs, busybox and modules, hvm-share-check.
	rm -rf /tmp/share-l2
	mkdir -p /tmp/share-l2/bin
	cp $check /tmp/share-l2/bin/
	(cd /tmp/share-l2 && find . | cpio -o -H newc > /tmp/share-bin.cpio 2>/dev/null)
	cat "$INITRD" "$E2E/l2-extra.cpio" /tmp/share-bin.cpio > /tmp/share-initrd.cpio
	log=/tmp/$name.log
	RUN_VM_RESET=share_dirs_fresh run_vm "$log" "E2E-GUEST init" -- \
		"$HINTVM" run --stats -k "$IMAGE" -i /tmp/share-initrd.cpio -c 1 -m "$MEM" \
		-p "$BASE_CMDLINE rdinit=/share-init" \
		--share /tmp/share/rw,tag=rw --share /tmp/share/loose,tag=loose \
		--share /tmp/share/mapped,tag=mapped,ids=mapped \
		--share /tmp/share/ro,tag=ro,ro
	echo "E2E-TIME name=$name vmm=hintvm kernel=Image mode=$MODE cpus=1 boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS"
	guest=$(grep -a 'E2E-GUEST' "$log" | tr -d '\r')
	line() { echo "$guest" | grep -m 1 "^E2E-GUEST $1"; }
	problems=""
	[ "$STATUS" = 0 ] || problems="$problems exit status $STATUS;"
	echo "$guest" | grep -q '^E2E-GUEST done' ||
		problems="$problems guest did not finish;"
	failed=$(echo "$guest" | grep 'insmod .* failed' | tr '\n' ' ')
	[ -z "$failed" ] || problems="$problems $failed;"
	common=$problems
	share_judge line "$check"
	if [ -z "$problems" ]; then
		result $name pass "Debian's 9p client over virtio-mmio on 4 shares: the exerciser on cache=none, cache=loose and ids=mapped, all seen by L1; ro refused every change; no set-id file or device node reached the host"
	else
		show_log $name "$log"
		result $name fail "$problems"
	fi
	problems=$common
	ov=$(line "share overlay ")
	[ "$(field mount "$ov")" = 0 ] && [ "$(field copyup "$ov")" = 1 ] &&
		[ "$(field new "$ov")" = 1 ] && [ "$(field whiteout "$ov")" = 1 ] &&
		[ "$(field lower_intact "$ov")" = 1 ] ||
		problems="$problems ${ov:-no overlay line};"
	if [ -z "$problems" ]; then
		result $name-overlay pass "overlayfs with the ro share as lower and tmpfs as upper: copy-up, new file and whiteout; the share untouched"
	else
		result $name-overlay fail "$problems"
	fi
	share_fs_unmount
}

# The same Linux boot under QEMU/KVM in this L1, for comparison only
# (PL011 console, QEMU's own device tree).
qemu_case() {
	name=qemu-kvm
	l1_selected "$name" || return
	qemu=/usr/bin/qemu-system-aarch64
	if ! "$qemu" -version > /tmp/qemu-version.log 2>&1; then
		result $name skip "no QEMU in the L1: $(head -n 1 /tmp/qemu-version.log)"
		return
	fi
	cmdline="console=ttyAMA0 quiet panic=-1 e2e.action=poweroff"
	log=/tmp/$name.log
	run_vm "$log" "$MARKER" -- "$qemu" -M virt,gic-version=3 -accel kvm \
		-cpu host -smp 1 -m "$MEM" -nodefaults -nographic -serial stdio \
		-no-reboot -kernel "$IMAGE" -initrd "$INITRD" -append "$cmdline"
	guest=$(grep -m 1 "$MARKER" "$log" | tr -d '\r')
	qemu_ms=$INIT_MS
	echo "E2E-TIME name=$name vmm=qemu kernel=Image mode=$MODE cpus=1 boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS guest_uptime_s=$(field uptime "$guest")"
	# hintvm right after, same guest: the fairest pairing this host allows.
	run_vm /tmp/$name-hintvm.log "$MARKER" -- "$HINTVM" run -k "$IMAGE" \
		-i "$INITRD" -c 1 -m "$MEM" \
		-p "console=ttyS0 quiet panic=-1 e2e.action=poweroff"
	guest2=$(grep -m 1 "$MARKER" /tmp/$name-hintvm.log | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=Image mode=$MODE cpus=1 boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS guest_uptime_s=$(field uptime "$guest2")"
	if [ -n "$guest" ]; then
		result $name pass "information only: to init QEMU/KVM ${qemu_ms} ms, hintvm right after ${INIT_MS} ms"
	else
		show_log $name "$log"
		result $name skip "information only: QEMU/KVM did not reach init (status $STATUS)"
	fi
}

# Refused before any VM runs, with a message that says what is wrong.
bad_kernel_case() {
	name=bad-kernel
	l1_selected "$name" || return
	problems=""
	size=$(wc -c < "$IMAGE")
	# image_size (bytes 16-23) of 4 KiB: smaller than the file.
	{ head -c 16 "$IMAGE"; printf '\000\020\000\000\000\000\000\000'; tail -c +25 "$IMAGE"; } > /tmp/small.Image
	head -c 4096 "$E2E/e2e-run" > /tmp/elf.Image
	for img in small elf; do
		log=/tmp/$name-$img.log
		run_vm "$log" "$MARKER" -- "$HINTVM" run -k /tmp/$img.Image \
			-i "$INITRD" -p "$BASE_CMDLINE" -c 1 -m "$MEM"
		msg=$(grep -v '^$' "$log" | head -n 1 | tr -d '\r')
		echo "E2E-INFO name=$name image=$img status=$STATUS message=$msg"
		[ "$STATUS" = "$STATUS_USAGE" ] ||
			problems="$problems $img: exit status $STATUS, expected $STATUS_USAGE;"
		case "$img:$msg" in
		small:*image_size*|elf:*"arm64 ELF"*) ;;
		*) problems="$problems $img: message \"$msg\" does not say why;" ;;
		esac
	done
	if [ -z "$problems" ]; then
		result $name pass "corrupt Image and ELF file refused with status $STATUS_USAGE (size $size)"
	else
		result $name fail "$problems"
	fi
}

# A guest MMIO access KVM cannot decode (a load pair to an unclaimed
# address) ends the VM as a guest crash naming the address: not a host
# error, not a hang.
bad_mmio_case() {
	name=bad-mmio
	l1_selected "$name" || return
	log=/tmp/$name.log
	if [ ! -f "$TESTKERNEL" ]; then
		result "$name" skip "this build has no arm64 test kernel"
		return
	fi
	run_vm "$log" "RESULT " -- "$HINTVM" run -k "$TESTKERNEL" \
		-p "test=bad-mmio" -c 1 -m 64M
	line=$(grep -m 1 "^RESULT " "$log" | tr -d '\r')
	msg=$(grep -m 1 "cannot emulate" "$log" | tr -d '\r')
	echo "E2E-INFO name=$name status=$STATUS message=$msg"
	problems=""
	[ "$(field expect "$line")" = guest-crash ] ||
		problems="$problems no RESULT line with expect=guest-crash;"
	[ "$STATUS" = "$STATUS_CRASH" ] ||
		problems="$problems exit status $STATUS, expected $STATUS_CRASH;"
	case "$msg" in
	*"MMIO at $(field addr "$line")"*) ;;
	*) problems="$problems no message naming the address $(field addr "$line");" ;;
	esac
	if [ -z "$problems" ]; then
		result $name pass "$msg"
	else
		show_log "$name" "$log"
		result $name fail "$problems"
	fi
}

# virtio-vsock over virtio-mmio on arm64 KVM: the test kernel's vsock
# payload (the same driver as x86's kvm test) first attacks the device
# (14 claims; hvm-vsock host-hold at UDS_7000 is the peer that never
# reads), then L1 drives its echo through the hybrid socket: 256 KiB
# checked byte by byte, 64 connections at once, a port nobody serves
# (closed), port 1 ends it. The socket must be 0600 and gone afterwards.
tk_vsock_case() {
	name=tk-vsock
	l1_selected "$name" || return
	log=/tmp/$name.log
	v=$E2E/hvm-vsock
	if [ ! -f "$TESTKERNEL" ] || [ ! -x $v ]; then
		result "$name" skip "this build has no arm64 test kernel or hvm-vsock"
		return
	fi
	rm -rf /tmp/vsock
	# Started by root, the VM runs as its own uid (--user auto): its
	# connections to UDS_7000 and its socket's removal at the end are that
	# uid's, so the directory and the listener let it in (docs/sandbox.md).
	mkdir /tmp/vsock && chmod 0777 /tmp/vsock
	uds=/tmp/vsock/v.sock
	(umask 0; exec $v host-hold ${uds}_7000 >/dev/null 2>&1) &
	hold=$!
	# Empty now, as in the x86 vsock case: the wait below must never read
	# an older run's "serving" before the VM's redirection truncates it.
	# The console alone goes to the log the wait reads: hintvm's warnings
	# about the hostile claims, written to the same file, once cut the
	# "serving" line in two and the wait ran until the guest gave up.
	: >"$log"
	: >"$log.hintvm"
	start=$(date +%s)
	timeout -k 10 $TIMEOUT "$HINTVM" run -k "$TESTKERNEL" -c 1 -m 64M \
		-p "test=vsock vsock.ms=60000" --vsock cid=3,uds=$uds \
		>"$log" 2>"$log.hintvm" &
	vm=$!
	# The hostile phase runs first; echo is served from the start.
	while ! grep -q 'vsock: cid 3, serving' "$log" && kill -0 $vm 2>/dev/null &&
		[ $(($(date +%s) - start)) -lt $TIMEOUT ]; do
		sleep 0.2
	done
	mode=$(stat -c %a $uds 2>/dev/null)
	echo_line=$($v host-echo $uds 1234 262144 2>&1)
	many_line=$($v host-many $uds 1234 64 2>&1)
	refused_line=$($v host-connect $uds 4444 2>&1)
	$v host-connect $uds 1 >/dev/null 2>&1
	bg_vm_wait $name $vm $((TIMEOUT + 1))
	kill $hold 2>/dev/null
	cat "$log.hintvm" >>"$log"
	line=$(grep -m 1 "^RESULT " "$log" | tr -d '\r')
	echo "E2E-INFO name=$name $line; echo: $echo_line"
	problems=""
	[ "$STATUS" = "$STATUS_POWEROFF" ] ||
		problems="$problems exit status $STATUS, expected $STATUS_POWEROFF;"
	[ "$(field ok "$line")" = 1 ] || problems="$problems ${line:-no RESULT line};"
	[ "$(field hostile "$line")" = 14/14 ] ||
		problems="$problems hostile=$(field hostile "$line");"
	[ "$mode" = 600 ] || problems="$problems socket mode ${mode:-missing};"
	[ "$(field ok "$echo_line")" = 1 ] || problems="$problems echo: $echo_line;"
	[ "$(field ok "$many_line")" = 1 ] || problems="$problems 64 at once: $many_line;"
	[ "$refused_line" = closed ] || problems="$problems port 4444: $refused_line;"
	[ ! -e $uds ] || problems="$problems $uds left behind;"
	if [ -z "$problems" ]; then
		result $name pass "$line; 256 KiB echo checked, 64 connections at once, unknown port closed"
	else
		show_log "$name" "$log"
		result $name fail "$problems"
	fi
}

if [ "$MODE" = nvhe ]; then
	linux_case linux-nvhe 2 poweroff $STATUS_POWEROFF
	exit 0
fi
for cpus in 1 2 4; do
	for payload in hello ipi smp-count fault cpuid; do
		testkernel_case $payload $cpus
	done
done
pv_case pv-host host 1
pv_case pv-none none 0
features_case
linux_case linux-1cpu 1 poweroff $STATUS_POWEROFF
linux_case linux-2cpu 2 poweroff $STATUS_POWEROFF
linux_case linux-reboot 1 reboot $STATUS_REBOOT
steal_case
virtio_case
share_case
# The guest agent (docs/agent.md, tests/e2e/l1-agent.sh): exec over
# Debian's vsock driver, the main process's exit status.
. "$E2E/l1-agent.sh"
agent_cases "$IMAGE"
bad_kernel_case
bad_mmio_case
tk_vsock_case
qemu_case
