# The host side of every nested tier (tests/e2e/run, tests/e2e-arm64/run,
# tests/oci/run, tests/kvm-l1/run, and tests/kernel/run-l1 through
# tests/l1/boot): boot an L1 under one reset policy, once per `meson test`
# run, and report its cases from the one result format of
# tests/l1/guest.sh. Each tier's own script keeps only what its L1 carries
# and its cases. bash.
l1_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=qemu.sh
. "$l1_here/qemu.sh"

# l1_guest_files DIR [KVM_HOLD]: the L1 side of this library, for the
# tier's initramfs or root: DIR/l1/guest.sh, nested-fault.sh and, when
# given, the static kvm-hold (x86).
l1_guest_files() {
	mkdir -p "$1/l1"
	cp "$l1_here/guest.sh" "$l1_here/nested-fault.sh" "$1/l1/"
	if [ -n "${2:-}" ]; then
		cp "$2" "$1/l1/kvm-hold"
		chmod 755 "$1/l1/kvm-hold"
	fi
}

# l1_once WORKDIR COMMAND [ARG...]: every per-case meson test of a tier
# calls its run script; the first of a `meson test` invocation runs
# COMMAND (which boots the L1 and fills WORKDIR/results.txt) under a lock,
# the others read its results. The run is keyed on the parent's pid and
# start time (HINTVM_E2E_SESSION overrides it, to reuse results across
# runs). A COMMAND that fails still leaves a verdict for every case.
l1_once() {
	local workdir=$1 session
	shift
	session=${HINTVM_E2E_SESSION:-$PPID:$(awk '{ print $22 }' /proc/$PPID/stat)}
	exec 9> "$workdir/lock"
	flock 9
	if [ "$(cat "$workdir/session" 2>/dev/null)" != "$session" ] ||
		[ ! -s "$workdir/results.txt" ]; then
		: > "$workdir/results.txt"
		("$@") || echo "E2E-FAIL-ALL $0 could not boot the L1 (status $?)" \
			>> "$workdir/results.txt"
		echo "$session" > "$workdir/session"
	fi
	flock -u 9
}

# l1_boot LABEL CMDLINE [QEMU ARG...]
# Boots the L1 (l1_qemu with L1_ARCH, L1_CPU, L1_TIMEOUT, L1_KERNEL,
# L1_INITRD) and appends its E2E- lines and an E2E-L1-HOST line (QEMU's
# status, wall time, serial log) to L1_WORKDIR/results.txt. LABEL names
# the boot (its logs are l1-LABEL-serial.log; empty: l1-serial.log).
#
# The one reset policy: an L1 that went away before "E2E-L1 done"
# (QEMU's status 0 with -no-reboot) because its kernel panicked (panic=-1
# resets; a wedge of both emulated CPUs becomes one through
# softlockup_panic) or its emulated CPU triple-faulted outside guest mode
# was ended by QEMU's TCG, not by a process in it, which hintvm is (issue
# 12, docs/linux-guests.md). So is one whose console stayed silent for
# L1_STALL_S (qemu.sh's l1_stall_watch; the tiers that set it say what
# else a silence there can be). It boots once more, with l1.skip= naming
# the cases that already have a verdict (guest.sh's l1_wanted), so the case
# that was running runs again and no verdict is given twice. A second
# such end, one of unknown cause, or a timeout fails the cases that have
# no verdict. L1_RESUME=0 turns the second boot off (repeat runs).
# HINTVM_L1_CRASH_AFTER=NAME panics the first boot once NAME has its
# verdict, to exercise this path.
l1_boot() {
	local label=$1 cmdline=$2 serial err cause names first
	shift 2
	serial=$L1_WORKDIR/l1${label:+-$label}-serial.log
	err=$L1_WORKDIR/qemu${label:+-$label}-stderr.log
	first=$cmdline
	[ -n "${HINTVM_L1_CRASH_AFTER:-}" ] &&
		first="$first l1.crash_after=$HINTVM_L1_CRASH_AFTER"
	l1_boot_once "$label" "$first" "$serial" "$err" "$@"
	case $L1_RC in
	0) ! grep -q '^E2E-L1 done' "$L1_WORKDIR/boot.txt" || return 0
		cause=$(l1_reset_cause "$serial" "$err") ;;
	125) cause=stall ;;
	*) return 0 ;;
	esac
	sed -i "\$s/\$/ reset=$cause/" "$L1_WORKDIR/results.txt"
	case $cause in
	triple-fault|panic|stall) [ "${L1_RESUME:-1}" = 1 ] || return 0 ;;
	*) return 0 ;;
	esac
	sed -i '$s/$/ (resumed in the next boot)/' "$L1_WORKDIR/results.txt"
	[ "$cause" = panic ] && l1_panic_head "$serial" >> "$L1_WORKDIR/results.txt"
	mv "$serial" "$serial.reset"
	mv "$err" "$err.reset" 2>/dev/null || true
	mv "$err.cpu-reset" "$err.cpu-reset.reset" 2>/dev/null || true
	names=$(sed -n 's/^E2E-RESULT name=\([^ ]*\) .*/\1/p' "$L1_WORKDIR/boot.txt" |
		sort -u | paste -sd, -)
	l1_boot_once "$label" "$cmdline${names:+ l1.skip=$names}" "$serial" "$err" "$@"
}

# One boot: its E2E- lines go to L1_WORKDIR/boot.txt and are appended to
# the results with the E2E-L1-HOST line. Sets L1_RC (QEMU's status).
l1_boot_once() { # LABEL CMDLINE SERIAL_LOG STDERR_LOG [QEMU ARG...]
	local label=$1 cmdline=$2 serial=$3 err=$4 start end
	shift 4
	L1_RC=0
	start=$(date +%s.%N)
	l1_qemu "$L1_ARCH" "${L1_CPU:-}" "$L1_TIMEOUT" "$L1_KERNEL" "$L1_INITRD" \
		"$cmdline" "$serial" "$err" "$@" || L1_RC=$?
	end=$(date +%s.%N)
	tr -d '\r' < "$serial" | grep -a '^E2E-' > "$L1_WORKDIR/boot.txt" || true
	cat "$L1_WORKDIR/boot.txt" >> "$L1_WORKDIR/results.txt"
	echo "E2E-L1-HOST ${label:+boot=$label }qemu_status=$L1_RC wall_s=$(awk \
		-v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }') serial=$serial" \
		>> "$L1_WORKDIR/results.txt"
}

# l1_report RESULTS (--all | --result NAME)
# --all prints every line and a summary; a boot that did not finish its
# cases (and was not resumed) fails the run, whatever its cases reported.
# --result NAME prints NAME's lines and exits 0 (pass), 1 (fail; also a
# case with no verdict, or one that failed in any repeat) or 77 (skip).
# E2E-SKIP-ALL / E2E-FAIL-ALL (the tier could not prepare its L1) give
# every case 77 / 1. Names in L1_INFO_ONLY (comparisons that run last and
# judge nothing) skip when they have no verdict.
l1_report() {
	local n_pass n_fail n_skip boots finished line serial
	local results=$1 mode=$2 want=${3:-}
	if grep -q '^E2E-SKIP-ALL' "$results"; then
		echo "SKIP: $(sed -n 's/^E2E-SKIP-ALL //p' "$results")"
		return 77
	fi
	if grep -q '^E2E-FAIL-ALL' "$results"; then
		sed -n 's/^E2E-FAIL-ALL //p' "$results"
		return 1
	fi
	if [ "$mode" = --all ]; then
		cat "$results"
		n_pass=$(grep -c '^E2E-RESULT .* status=pass' "$results" || true)
		n_fail=$(grep -c '^E2E-RESULT .* status=fail' "$results" || true)
		n_skip=$(grep -c '^E2E-RESULT .* status=skip' "$results" || true)
		echo "$n_pass passed, $n_fail failed, $n_skip skipped"
		boots=$(grep '^E2E-L1-HOST' "$results" | grep -vc 'resumed in the next boot' || true)
		finished=$(grep -c '^E2E-L1 done' "$results" || true)
		if [ "$finished" -lt "$boots" ]; then
			echo "$((boots - finished)) of $boots L1 boots did not finish their cases"
			return 1
		fi
		[ "$n_fail" -eq 0 ]
		return
	fi
	grep -E "^E2E-(TIME|INFO|LOG|BENCH) (name=)?($want|l1-panic)[ :]" "$results" || true
	line=$(grep "^E2E-RESULT name=$want " "$results" | grep -m 1 ' status=fail ' ||
		grep -m 1 "^E2E-RESULT name=$want " "$results" || true)
	if [ -z "$line" ]; then
		serial=$(sed -n 's/^E2E-L1-HOST .*serial=\([^ ]*\).*/\1/p' "$results" | tail -n 1)
		[ -n "$serial" ] && { echo "(the end of $serial)"; tail -n 30 "$serial" | tr -d '\r'; }
	fi
	# Last, where a log cut to its tail (scripts/failure-summary) still
	# shows them: how each boot ended, and the verdict.
	grep '^E2E-L1-HOST' "$results" || true
	if [ -z "$line" ]; then
		echo "no result for $want: the L1 did not get that far"
		case " ${L1_INFO_ONLY:-} " in
		*" $want "*) echo "SKIP: information only"; return 77 ;;
		esac
		return 1
	fi
	echo "$line"
	case $line in
	*" status=pass "*) return 0 ;;
	*" status=skip "*) return 77 ;;
	*) return 1 ;;
	esac
}
