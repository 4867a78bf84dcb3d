# shellcheck shell=sh
# The L1 side of every nested tier (e2e-x86, e2e-arm64, oci, kernel, the kvm
# suites' L1): sourced by the tiers' L1 scripts from /l1/guest.sh, where
# tests/l1/host.sh (l1_guest_files) packs it with nested-fault.sh and, on
# x86, kvm-hold. busybox sh and bash.
#
# One result format for every tier, on the L1's serial console, which
# tests/l1/host.sh reads:
#   E2E-TIME name=NAME done_uptime_s=S mem_avail_mib=M      when it was given
#   E2E-RESULT name=NAME status=pass|fail|skip detail=TEXT   a case's verdict
#   E2E-TIME / E2E-INFO / E2E-BENCH name=NAME ...             its figures
#   E2E-LOG NAME: TEXT                                        its evidence
#   E2E-L1 done ...                                           the L1 finished
# The kernel command line carries the host's choices: l1.only=a,b (run only
# those cases), l1.skip=a,b (cases that have their verdict from an earlier
# boot of this run, which ended in a panic or a triple fault: the host's
# one reset policy, tests/l1/host.sh), l1.crash_after=NAME
# (HINTVM_L1_CRASH_AFTER: panic the L1 once NAME has its verdict, to
# exercise that policy).
L1_LIB=${L1_LIB:-/l1}
# Where the kernel command line and the panic trigger are (a test of this
# file points them elsewhere: tests/l1/harness-test.sh).
L1_CMDLINE=${L1_CMDLINE:-/proc/cmdline}
L1_SYSRQ=${L1_SYSRQ:-/proc/sysrq-trigger}
# nested_fault_*: faults of the x86 L1's emulated CPU (issue 12).
. "$L1_LIB/nested-fault.sh"

# The value of l1.KEY= on the L1's kernel command line.
l1_arg() { # KEY
	tr ' ' '\n' < "$L1_CMDLINE" | sed -n "s/^l1\.$1=//p" | head -n 1
}
L1_ONLY=$(l1_arg only | tr ',' ' ')
L1_SKIP=$(l1_arg skip | tr ',' ' ')
L1_CRASH_AFTER=$(l1_arg crash_after)

# A case's verdict, dated by the L1's uptime: a case took the time since
# the previous one's.
result() { # NAME STATUS DETAIL
	# Inside l1_case's first run a failure is held back: it may be the
	# L1's emulated CPU's, and the case may run again.
	if [ "${L1_CASE_RUN:-}" = 1 ] && [ "$2" = fail ]; then
		L1_CASE_HELD="$L1_CASE_HELD$1 $3
"
		return 0
	fi
	# The L1's root lives in its RAM: the memory left after each case
	# shows a run that leaks towards the OOM killer.
	echo "E2E-TIME name=$1 done_uptime_s=$(cut -d' ' -f1 /proc/uptime) mem_avail_mib=$(($(sed -n 's/^MemAvailable: *\([0-9]*\).*/\1/p' /proc/meminfo 2>/dev/null || echo 0) / 1024))"
	echo "E2E-RESULT name=$1 status=$2 detail=$3"
	if [ -n "$L1_CRASH_AFTER" ] && [ "$1" = "$L1_CRASH_AFTER" ]; then
		echo "E2E-L1 crash_after=$1: panicking the L1 on purpose"
		echo c > "$L1_SYSRQ"
	fi
}

# Whether case NAME has its verdict from an earlier boot of this run.
l1_resumed() { # NAME
	for n in $L1_SKIP; do [ "$n" = "$1" ] && return 0; done
	return 1
}

# Whether case NAME is to run in this boot, quietly: not when an earlier
# boot gave it its verdict, nor when l1.only leaves it out.
l1_wanted() { # NAME
	l1_resumed "$1" && return 1
	[ -z "$L1_ONLY" ] && return 0
	for n in $L1_ONLY; do [ "$n" = "$1" ] && return 0; done
	return 1
}

# The same, with a skip verdict for a case that l1.only leaves out.
l1_selected() { # NAME
	l1_wanted "$1" && return 0
	l1_resumed "$1" && return 1
	result "$1" skip "not selected (only: $(echo $L1_ONLY | tr ' ' ','))"
	return 1
}

# l1_threads NAME PID: each thread of process PID, its state, wait
# channel, CPU ticks and kernel stack, as E2E-LOG lines: what a hung VMM was
# doing when a case gave up on it.
l1_threads() { # NAME PID
	for t in /proc/$2/task/*; do
		echo "E2E-LOG $1: pid $2 tid ${t##*/} $(cat $t/comm 2>/dev/null)" \
			"state=$(awk '{ print $3 }' $t/stat 2>/dev/null)" \
			"ticks=$(awk '{ print $14 + $15 }' $t/stat 2>/dev/null)" \
			"wchan=$(cat $t/wchan 2>/dev/null)"
		sed "s/^/E2E-LOG $1:   /" $t/stack 2>/dev/null | head -n 12
	done
}

# l1_vm_dump NAME: every VMM process of the L1 (l1_threads), and whether
# each VM's vCPUs still make progress: KVM's exit count (debugfs) read
# twice, a second apart. A guest that spins or halts in a loop still exits;
# a vCPU that never comes back from the L1's KVM does not.
l1_vm_dump() { # NAME
	for p in $(pgrep -f hintvm); do
		case $(cat /proc/$p/comm 2>/dev/null) in
		hintvm*) l1_threads "$1" "$p" ;;
		esac
	done
	[ -d /sys/kernel/debug/kvm ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	for d in /sys/kernel/debug/kvm/*-*; do
		a=$(cat "$d/exits" 2>/dev/null) || continue
		sleep 1
		echo "E2E-LOG $1: KVM VM ${d##*/}: exits $a, a second later $(cat "$d/exits" 2>/dev/null)"
	done
}

# One VM held for the L1's whole run, so that the cases' VMs do not make
# the L1 kernel rewrite its code (kvm-hold.c, issue 12). x86 only: an arm64
# L1 has no kvm-hold.
l1_kvm_hold() {
	[ -x "$L1_LIB/kvm-hold" ] || return 0
	if "$L1_LIB/kvm-hold" 2>/tmp/kvm-hold.err; then
		echo "E2E-L1 kvm-hold: one VM held"
	else
		echo "E2E-L1 kvm-hold failed: $(cat /tmp/kvm-hold.err)"
	fi
}

# l1_fault_retry NAME LOG COMMAND [ARG...]
# Runs a case's VM through COMMAND, which sets STATUS (hintvm's exit
# status, or "timeout") and leaves the VM's console in LOG. A triple fault
# (status 6) or a hang that the x86 L1's emulated CPU caused
# (nested-fault.sh) gets another run, and its evidence goes to the case's
# E2E-LOG lines. Every repeat needs evidence of its own: a crash up to
# twice (seen: the panic case lost its translation in two runs in a row,
# on a host where QEMU's fault came more often), a timeout once, since
# each costs the L1 its whole deadline. Without evidence a failure stays a
# failure. RUN_VM_RESET, when set, is run before a repeat (the case's own
# setup once more: a share's directories, a disk image the first run
# wrote to).
l1_fault_retry() {
	local fr_name=$1 fr_log=$2 fr_runs=1 fr_proven="" fr_evidence fr_flight fr_why
	shift 2
	nested_fault_arm
	"$@"
	while { { [ "$STATUS" = 6 ] && [ $fr_runs -lt 3 ]; } ||
		{ [ "$STATUS" = timeout ] && [ $fr_runs -lt 2 ]; }; } &&
		fr_evidence=$(nested_fault_seen); do
		mv "$fr_log" "$fr_log.l1-fault$fr_runs"
		echo "E2E-LOG $fr_name: l1-fault: status $STATUS right after the L1's emulated VMRUN broke the L2's state (issue 12, tests/l1/nested-fault.sh); run $fr_runs's log kept in $fr_log.l1-fault$fr_runs; running the case again. KVM's record:"
		echo "$fr_evidence" | sed "s/^/E2E-LOG $fr_name: l1-fault:   /"
		[ -n "${RUN_VM_RESET:-}" ] && $RUN_VM_RESET
		nested_fault_arm
		"$@"
		fr_runs=$((fr_runs + 1))
	done
	# The last run failed that way too: say so, it still fails.
	{ [ "$STATUS" = 6 ] || [ "$STATUS" = timeout ]; } &&
		nested_fault_seen > /dev/null &&
		fr_proven=" (with the nested-fault evidence again, after $fr_runs runs: still a failure)"
	# Any other triple fault, or a guest that stopped making progress:
	# what KVM did for the L2 just before it.
	fr_why=""
	[ "$STATUS" = 6 ] && grep -q 'triple fault' "$fr_log" &&
		fr_why="triple fault${fr_proven:- without the nested-fault evidence}"
	[ "$STATUS" = timeout ] && fr_why="timeout$fr_proven"
	if [ -n "$fr_why" ] && fr_flight=$(nested_fault_flight); then
		echo "E2E-LOG $fr_name: l1-flight: $fr_why; KVM's last events for the L2 (tests/l1/nested-fault.sh):"
		echo "$fr_flight" | sed "s/^/E2E-LOG $fr_name: l1-flight:   /"
	fi
	return 0
}

# l1_case NAME FUNCTION [RESET]
# Runs a case made of several steps (a container engine, a shim, a VM:
# no single hintvm status to look at, unlike l1_fault_retry's) when NAME
# is selected. When one of its verdicts fails and nested_fault_seen has
# the record of the x86 L1's emulated-CPU fault (issue 12) from its run,
# the first run's failures become E2E-LOG lines with that record, RESET
# (when given) clears what the run left, and FUNCTION runs once more: its
# verdicts then stand. Without the record a failure stays a failure.
l1_case() {
	local lc_held lc_evidence lc_name lc_detail
	l1_selected "$1" || return 0
	nested_fault_arm
	L1_CASE_RUN=1 L1_CASE_HELD=""
	"$2"
	lc_held=$L1_CASE_HELD
	L1_CASE_RUN=2
	if [ -n "$lc_held" ] && lc_evidence=$(nested_fault_seen); then
		echo "E2E-LOG $1: l1-fault: a verdict failed after the L1's emulated VMRUN broke an L2's state (issue 12, tests/l1/nested-fault.sh); running the case again. The first run's failures, then KVM's record:"
		printf '%s' "$lc_held" | sed "s/^/E2E-LOG $1: l1-fault:   failed: /"
		echo "$lc_evidence" | sed "s/^/E2E-LOG $1: l1-fault:   /"
		[ -z "${3:-}" ] || "$3"
		nested_fault_arm
		"$2"
	else
		printf '%s' "$lc_held" | while read -r lc_name lc_detail; do
			result "$lc_name" fail "$lc_detail"
		done
	fi
	L1_CASE_RUN=""
}

# The last line of a run: every tier's host side counts a boot without it
# as one that did not finish its cases.
l1_done() {
	echo "E2E-L1 done uptime_s=$(cut -d' ' -f1 /proc/uptime)"
}
