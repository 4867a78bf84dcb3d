# Shell helpers of the e2e tests that run inside an L1, shared by
# tests/e2e/l1-tests.sh (x86-64) and tests/e2e-arm64/l1-tests.sh: both
# tiers' run scripts copy this file to /e2e/l1-lib.sh, and the tests source
# it. busybox sh. Expects TIMEOUT (seconds per VM) and VERBOSE (0/1).

# hintvm's exit statuses (include/hintvm/hintvm.h).
STATUS_POWEROFF=0
STATUS_USAGE=2
STATUS_REBOOT=4
STATUS_CRASH=6

# nested_fault_*: triple faults of the x86 L1's emulated CPU (issue 12).
. "${E2E:-/e2e}/l1-nested-fault.sh"

result() { # NAME STATUS DETAIL
	echo "E2E-RESULT name=$1 status=$2 detail=$3"
	# e2e.crash_after=NAME (HINTVM_E2E_L1_CRASH_AFTER): panic the L1 once
	# NAME has its result, to exercise tests/e2e/run's next boot after an
	# L1 panic (issue 12).
	case " $(cat /proc/cmdline) " in
	*" e2e.crash_after=$1 "*) echo c > /proc/sysrq-trigger ;;
	esac
}

# Show a run's console for whoever reads the test log: on a failure (the
# only call without VERBOSE=1) all of it, up to its last 400 lines, and the
# end of L1's kernel log, which tells a fault of the nested hypervisor (L1's
# KVM, or QEMU's emulation under it) from one of hintvm's.
show_log() { # NAME LOG
	tail -n 400 "$2" | tr -d '\r' | sed "s/^/E2E-LOG $1: /"
	[ "${VERBOSE:-0}" = 1 ] && return
	dmesg 2>/dev/null | tail -n 15 | sed "s/^/E2E-LOG $1: L1 dmesg: /"
}

field() { # KEY LINE -> value of KEY=... in LINE
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# Run a VMM under e2e-run (tests/e2e/e2e-run.c): its console goes to LOG;
# sets RUN (the e2e-run line), STATUS, INIT_MS (when MARKER first appeared)
# and WALL_MS. The command's stdin is RUN_VM_INPUT when set, else /dev/null.
run_vm() { # LOG MARKER -- COMMAND...
	log=$1 marker=$2
	shift 3
	nested_fault_arm
	run_vm_once "$log" "$marker" "$@"
	# A triple fault or a hang the L1's emulated CPU caused
	# (l1-nested-fault.sh) gets another run; its evidence goes to the
	# case's log lines. (Resumed at the L1's VMRUN code, a Linux L2 takes
	# KVM's emulated page faults there forever: a timeout.) Every repeat
	# needs evidence of its own: a crash up to twice (seen: the panic
	# case lost its translation in two runs in a row, on a host where
	# QEMU's fault came more often), a timeout once, since each costs the
	# L1 its whole deadline.
	runs=1 proven=""
	while { { [ "$STATUS" = $STATUS_CRASH ] && [ $runs -lt 3 ]; } ||
		{ [ "$STATUS" = timeout ] && [ $runs -lt 2 ]; }; } &&
		evidence=$(nested_fault_seen); do
		mv "$log" "$log.l1-fault$runs"
		echo "E2E-LOG ${name:-run_vm}: l1-fault: status $STATUS right after the L1's emulated VMRUN broke the L2's state (issue 12, tests/e2e/l1-nested-fault.sh); run $runs's log kept in $log.l1-fault$runs; running the case again. KVM's record:"
		echo "$evidence" | sed "s/^/E2E-LOG ${name:-run_vm}: l1-fault:   /"
		# The case's own setup once more (a share's directories, a disk
		# image the first run wrote to): what RUN_VM_RESET says.
		[ -n "${RUN_VM_RESET:-}" ] && $RUN_VM_RESET
		nested_fault_arm
		run_vm_once "$log" "$marker" "$@"
		runs=$((runs + 1))
	done
	# The last run failed that way too: say so, it still fails.
	{ [ "$STATUS" = $STATUS_CRASH ] || [ "$STATUS" = timeout ]; } &&
		nested_fault_seen > /dev/null && proven=" (with the nested-fault evidence again, after $runs runs: still a failure)"
	# Any other triple fault, or a guest that stopped making progress:
	# what KVM did for the L2 just before it.
	flight_why=""
	[ "$STATUS" = $STATUS_CRASH ] && grep -q 'triple fault' "$log" &&
		flight_why="triple fault${proven:- without the nested-fault evidence}"
	[ "$STATUS" = timeout ] && flight_why="timeout$proven"
	if [ -n "$flight_why" ] && flight=$(nested_fault_flight); then
		echo "E2E-LOG ${name:-run_vm}: l1-flight: $flight_why; KVM's last events for the L2 (tests/e2e/l1-nested-fault.sh):"
		echo "$flight" | sed "s/^/E2E-LOG ${name:-run_vm}: l1-flight:   /"
	fi
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
