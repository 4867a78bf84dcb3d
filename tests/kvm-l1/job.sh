# shellcheck shell=bash
# What scripts/test runs inside the x86 L1 (tests/kvm-l1/run) when the host
# has no /dev/kvm. bash, run from the repository root; the host built
# everything. Every meson run writes testlog-l1*.* in its build directory,
# where scripts/failure-summary finds a failure.
#
# By default, what fits in about five minutes of the L1 (TCG makes the cli
# suite's shell scripts ten times slower, not the guests): the regular
# build's kvm suite (both irqchip modes, not sched) and the cli cases that
# drive hintvm-runtime and the sandbox, the ASan+UBSan build's runtime
# lifecycle, and the bench smoke. Not ASan's kvm suite: under ASan the test
# kernel's sched payloads triple-faulted in 3 of 3 L1 runs (QEMU's nested
# SVM, docs/linux-guests.md), where the regular build's passed.
# HINTVM_KVM_L1_FULL=1: the kvm and cli suites of both builds, all of them
# (what scripts/test runs on a host with /dev/kvm; about 12 min).
set -uo pipefail
status=0
failed=()
step() { echo; echo "=== (L1) $*"; }
fail() { status=1; failed+=("$1"); }
# A previous run's logs would read as this run's failures.
rm -f build/meson-logs/*testlog-l1* build-asan/meson-logs/*testlog-l1*
# Timeouts are the host's; everything in here is slower. LOGBASE: each
# run's own testlog-LOGBASE.* (one would overwrite the other's).
#
# A test that fails here runs once more, alone, and the log says so:
# QEMU's emulation of nested SVM now and then loses an L2 vCPU's state
# (the test kernel triple-faults, docs/linux-guests.md) at rates no host
# KVM shows; a test that fails twice fails. The first run's log is kept as
# first-testlog-LOGBASE.json (out of scripts/failure-summary's sight).
# The nested-fault watch of the other tiers (tests/l1/nested-fault.sh, in
# its test-kernel mode) says whether KVM saw the emulated CPU's fault while
# the suite ran; its VMs run side by side, so the record cannot name the
# test, and the rerun does not wait for it.
. tests/l1/nested-fault.sh
nested_fault_watch testkernel
echo "kvm-l1 job: nested-fault watch: $NESTED_FAULT_FILTER"
mtest() { # LOGBASE -C BUILD MESON-TEST-ARGS...
	local base=$1 build=$3 log again suite st=0 evidence
	shift
	nested_fault_arm
	meson test --no-rebuild --print-errorlogs --logbase "testlog-$base" -t 3 "$@" &&
		return 0
	log=$build/meson-logs/testlog-$base.json
	again=$(scripts/failure-summary --names "$log") || return 1
	[ -n "$again" ] || return 1
	echo "kvm-l1 job: WARNING: failed in the L1, running once more: $(echo "$again" | paste -sd, -)"
	if evidence=$(nested_fault_seen); then
		echo "kvm-l1 job: the L1's emulated VMRUN broke an L2 while the suite ran (issue 12); KVM's record:"
		echo "$evidence" | sed 's/^/kvm-l1 job:   /'
	else
		echo "kvm-l1 job: no nested-fault record for this run"
	fi
	mv "$log" "$build/meson-logs/first-testlog-$base.json"
	for suite in $(echo "$again" | cut -d' ' -f1 | sort -u); do
		# shellcheck disable=SC2046 # one name per word
		meson test --no-rebuild --print-errorlogs -t 3 -C "$build" \
			--logbase "testlog-$base-$suite-again" --suite "$suite" \
			$(echo "$again" | awk -v s="$suite" '$1 == s { print $2 }') || st=1
	done
	return $st
}
asan() {
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$@"
}

if [ "${HINTVM_KVM_L1_FULL:-0}" = 1 ]; then
	step "kvm and cli suites"
	mtest l1 -C build --suite kvm --suite cli || fail "kvm and cli suites"
	step "ASan+UBSan build: kvm and cli suites"
	asan mtest l1 -C build-asan --suite kvm --suite cli ||
		fail "ASan+UBSan kvm and cli suites"
else
	# Names and suites intersect in meson test, and names repeat across
	# suites (kvm / control, cli / control): one run per suite.
	# Not sched: its hint flood triple-faulted in 2 of 4 L1 runs (QEMU's
	# nested SVM, docs/linux-guests.md), and after that the same L1's
	# KVM counted no halt exits for any VM. It runs wherever /dev/kvm is.
	step "kvm suite (not sched)"
	names=$(meson test -C build --no-rebuild --list --suite kvm 2>/dev/null |
		sed -n 's|^[^ ]*:kvm / ||p' | grep -v -e '^sched$' -e '^sched-irqchip-kernel$')
	# shellcheck disable=SC2086 # one name per word
	mtest l1-kvm -C build --suite kvm $names || fail "kvm suite"
	step "cli: oci-lifecycle, sandbox"
	mtest l1-cli -C build --suite cli oci-lifecycle sandbox ||
		fail "cli: oci-lifecycle, sandbox"
	step "ASan+UBSan build: oci-lifecycle"
	asan mtest l1-cli -C build-asan --suite cli oci-lifecycle ||
		fail "ASan+UBSan oci-lifecycle"
fi
step "bench smoke: bench/run startup --quick, twovm --quick"
start=$(date +%s)
{ bench/run startup --quick --out build/bench-smoke-l1 &&
	bench/run twovm --quick --repeat 1 --out build/bench-smoke-l1; } \
	> build/bench-smoke-l1.log 2>&1 || {
	tail -n 25 build/bench-smoke-l1.log
	fail "bench smoke"
}
echo "bench smoke: $(( $(date +%s) - start )) s (build/bench-smoke-l1.log)"
[ $status = 0 ] || echo "kvm-l1 job: FAILED: $(printf '%s; ' "${failed[@]}")"
exit $status
