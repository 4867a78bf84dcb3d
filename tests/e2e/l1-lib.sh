# Shell helpers of the e2e tests that run inside an L1, shared by
# tests/e2e/l1-tests.sh (x86-64) and tests/e2e-arm64/l1-tests.sh: both
# tiers' run scripts copy this file to /e2e/l1-lib.sh, and the tests source
# it. busybox sh. Expects TIMEOUT (seconds per VM) and VERBOSE (0/1).

# hintvm's exit statuses (include/hintvm/hintvm.h).
STATUS_POWEROFF=0
STATUS_USAGE=2
STATUS_REBOOT=4
STATUS_CRASH=6

# result, l1_selected, l1_fault_retry, nested_fault_*: the nested tiers'
# L1 library (tests/l1/guest.sh).
. /l1/guest.sh

# Show a run's console for whoever reads the test log: on a failure (the
# only call without VERBOSE=1) all of it, up to its last 400 lines, and the
# end of L1's kernel log, which tells a fault of the nested hypervisor (L1's
# KVM, or QEMU's emulation under it) from one of hintvm's.
show_log() { # NAME LOG
	tail -n 400 "$2" | tr -d '\r' | sed "s/^/E2E-LOG $1: /"
	[ "${VERBOSE:-0}" = 1 ] && return
	dmesg 2>/dev/null | tail -n 15 | sed "s/^/E2E-LOG $1: L1 dmesg: /"
}

# bg_vm_wait NAME PID LIMIT_S: waits for a VM started in the background
# (`timeout -k 10 LIMIT_S hintvm run ... &`, PID the timeout's) and sets
# STATUS. A VM that is still there after LIMIT_S did not stop on SIGTERM:
# before timeout's SIGKILL, each of its threads' name, state, wait channel
# and kernel stack go to E2E-LOG lines, so that a hang names its thread
# instead of costing the L1 its whole deadline. busybox sh.
bg_vm_wait() {
	bw_start=$(date +%s)
	while kill -0 "$2" 2>/dev/null &&
		[ $(($(date +%s) - bw_start)) -le "$3" ]; do
		sleep 0.5
	done
	if kill -0 "$2" 2>/dev/null; then
		echo "E2E-LOG $1: still running after SIGTERM:"
		for bw_pid in $(pgrep -P "$2"); do
			l1_threads "$1" "$bw_pid"
		done
	fi
	wait "$2"
	STATUS=$?
}

field() { # KEY LINE -> value of KEY=... in LINE
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# Run a VMM under e2e-run (tests/e2e/e2e-run.c): its console goes to LOG;
# sets RUN (the e2e-run line), STATUS, INIT_MS (when MARKER first appeared)
# and WALL_MS. The command's stdin is RUN_VM_INPUT when set, else /dev/null.
# A run that the L1's emulated CPU broke runs again (l1_fault_retry).
run_vm() { # LOG MARKER -- COMMAND...
	log=$1 marker=$2
	shift 3
	l1_fault_retry "${name:-run_vm}" "$log" run_vm_once "$log" "$marker" "$@"
}

run_vm_once() { # LOG MARKER COMMAND...
	once_log=$1 once_marker=$2
	shift 2
	RUN=$(e2e-run -t "$TIMEOUT" -m "$once_marker" -o "$once_log" \
		-i "${RUN_VM_INPUT:-/dev/null}" -- "$@")
	STATUS=$(field status "$RUN")
	INIT_MS=$(field marker_ms "$RUN")
	WALL_MS=$(field wall_ms "$RUN")
}

# What the guest init (guest-firmware/linux/init.c) reported against what it
# was given: vCPU count, /proc/cmdline and the initrd's marker file. Appends
# to $problems.
check_guest_init() { # GUEST_LINE CPUS CMDLINE
	if [ -z "$1" ]; then
		problems="$problems guest init never reported;"
		return 1
	fi
	[ "$(field nproc "$1")" = "$2" ] ||
		problems="$problems nproc=$(field nproc "$1"), expected $2;"
	seen=$(echo "$1" | sed -n 's/.*cmdline="\(.*\)"$/\1/p')
	[ "$seen" = "$3" ] ||
		problems="$problems /proc/cmdline \"$seen\", expected \"$3\";"
	[ "$(field marker "$1")" = hintvm-e2e-initrd ] ||
		problems="$problems initrd marker file not visible;"
}

# /tmp/share for the --share cases: a fresh ext2 file system (ext4's
# driver: L1's own file systems have no user.* xattrs) on a loop device,
# with share_dirs_fresh's directories. Fails with the reason in
# /tmp/mke2fs.err; sets share_loop (share_fs_unmount undoes it).
share_fs_mount() {
	rm -rf /tmp/share /tmp/share.img
	mkdir -p /tmp/share
	truncate -s 96M /tmp/share.img
	share_loop=$(losetup -f)
	losetup "$share_loop" /tmp/share.img 2>/tmp/mke2fs.err &&
		mke2fs -q "$share_loop" >>/tmp/mke2fs.err 2>&1 &&
		mount -t ext4 "$share_loop" /tmp/share 2>>/tmp/mke2fs.err &&
		share_dirs_fresh
}

share_fs_unmount() {
	umount /tmp/share
	losetup -d "$share_loop"
	rm -f /tmp/share.img
}

# The four share directories of the --share cases, as the guest expects
# them: empty rw, loose and mapped, and ro with two files of L1's. Also
# the RUN_VM_RESET of a run that is repeated (the first one's files would
# make the guest's creates and renames fail).
share_dirs_fresh() {
	rm -rf /tmp/share/rw /tmp/share/loose /tmp/share/mapped /tmp/share/ro
	mkdir -p /tmp/share/rw /tmp/share/loose /tmp/share/mapped /tmp/share/ro
	echo "$SHARE_HOST_LINE" > /tmp/share/ro/host-file
	echo "delete me" > /tmp/share/ro/delete-me
}

# The --share cases of both tiers (docs/shares.md): what the guest's
# hvm-share-check reported on the shares rw, loose, mapped and ro (GETTER
# PREFIX prints its first "E2E-GUEST PREFIX" line) and what L1 sees in
# /tmp/share afterwards, using CHECK (hvm-share-check) and the ro share's
# SHARE_HOST_LINE. Appends to $problems.
share_judge() { # GETTER CHECK
	for tag in rw loose mapped ro; do
		l=$($1 "share $tag ")
		[ "$(field ok "$l")" = 1 ] ||
			problems="$problems guest on $tag: ${l:-no line};"
	done
	# What the guest saw of its attempts to plant set-id files, chown
	# and device nodes (cache=none shows the server's answer).
	rw=$($1 "share rw ")
	[ "$(field suid_mode "$rw")" = 755 ] && [ "$(field chown "$rw")" = EPERM ] &&
		[ "$(field mknod "$rw")" = EPERM ] ||
		problems="$problems ids=host let the guest: $rw;"
	mapped=$($1 "share mapped ")
	[ "$(field suid_mode "$mapped")" = 4755 ] && [ "$(field chown "$mapped")" = ok ] &&
		[ "$(field mknod "$mapped")" = ok ] ||
		problems="$problems ids=mapped did not keep the guest's view: $mapped;"
	for d in rw:host loose:host mapped:mapped; do
		v=$($2 verify /tmp/share/${d%%:*} ${d#*:} 2>&1)
		[ "$(field ok "$v")" = 1 ] ||
			problems="$problems L1 view of ${d%%:*}: $v;"
	done
	[ "$(cat /tmp/share/ro/host-file)" = "$SHARE_HOST_LINE" ] &&
		[ -e /tmp/share/ro/delete-me ] &&
		[ "$(ls /tmp/share/ro | wc -l)" = 2 ] ||
		problems="$problems the ro share changed: $(ls /tmp/share/ro | tr '\n' ' ');"
}
