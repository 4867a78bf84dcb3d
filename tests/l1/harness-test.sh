#!/bin/bash
# The nested tiers' harness (tests/l1) without QEMU, in seconds: a fake
# qemu-system-x86_64 plays an L1 that finishes, panics, triple-faults,
# goes away for no known reason or times out, and the checks are what a
# tier's user sees of it: which boots happen with which command line,
# which verdicts the report gives, what evidence is kept. Then the L1
# side (guest.sh) on a made-up kernel command line: case selection, the
# crash-after hook and the evidence-gated retry. TAP.
#
#   harness-test.sh SOURCE_ROOT
set -uo pipefail
root=$1
l1=$root/tests/l1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
ok() { # COND-STATUS NAME
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
check() { # NAME COMMAND...
	local name=$1
	shift
	"$@" > "$tmp/check.out" 2>&1
	local st=$?
	[ $st = 0 ] || sed 's/^/# /' "$tmp/check.out"
	ok $st "$name"
}

# --- the fake L1 ---------------------------------------------------------
# Each boot appends its -append line to $FAKE_DIR/boots and plays the
# next word of $FAKE_PLAN: done (every case of $FAKE_CASES not in
# l1.skip, then "E2E-L1 done"), panic:CASE / triple:CASE / gone:CASE (the
# cases up to CASE, then a kernel panic, a triple fault in QEMU's
# cpu_reset log, or nothing), hang (QEMU's timeout status, 124),
# stall:CASE (the cases up to CASE, then silence until killed).
mkdir -p "$tmp/bin"
cat > "$tmp/bin/qemu-system-x86_64" <<'FAKE'
#!/bin/bash
cmdline="" log=""
while [ $# -gt 0 ]; do
	case $1 in
	-append) cmdline=$2; shift ;;
	-D) log=$2; shift ;;
	esac
	shift
done
echo "$cmdline" >> "$FAKE_DIR/boots"
nboot=$(wc -l < "$FAKE_DIR/boots")
plan=$(echo $FAKE_PLAN | cut -d' ' -f"$nboot")
skip=,$(echo "$cmdline" | tr ' ' '\n' | sed -n 's/^l1\.skip=//p'),
stop=${plan#*:}
echo "E2E-L1 init"
for c in $FAKE_CASES; do
	case $skip in *",$c,"*) continue ;; esac
	echo "E2E-TIME name=$c done_uptime_s=1.0"
	echo "E2E-RESULT name=$c status=pass detail=boot $nboot"
	[ "$c" = "$stop" ] && break
done
case $plan in
done) echo "E2E-L1 done uptime_s=2.0" ;;
panic:*) echo "[ 9.9] Kernel panic - not syncing: sysrq triggered crash"
	echo "[ 9.9] RIP: 0010:sysrq_handle_crash+0x16/0x20" ;;
triple:*) echo "Triple fault" > "$log" ;;
gone:*) ;;
hang) exit 124 ;;
stall:*) exec sleep 60 ;;
esac
exit 0
FAKE
chmod 755 "$tmp/bin/qemu-system-x86_64"
export PATH=$tmp/bin:$PATH

# boot_fake PLAN [VAR=VALUE...]: one tier run (l1_boot) in a fresh workdir;
# leaves $w (the workdir) and $boots (the -append lines).
boot_fake() {
	local plan=$1
	shift
	w=$(mktemp -d "$tmp/w.XXXX")
	(
		export FAKE_DIR=$w FAKE_PLAN=$plan FAKE_CASES="a b c"
		for kv in "$@"; do export "${kv?}"; done
		# shellcheck source=host.sh
		. "$l1/host.sh"
		L1_ARCH=x86 L1_TIMEOUT=30 L1_KERNEL=/dev/null L1_INITRD=/dev/null
		L1_WORKDIR=$w
		: > "$w/results.txt"
		l1_boot "" "quiet"
	)
	boots=$(cat "$w/boots")
}
report() { # ARGS... -> the status of l1_report on $w's results
	(
		. "$l1/host.sh"
		l1_report "$w/results.txt" "$@"
	) > "$tmp/report.out" 2>&1
}
has() { grep -q -- "$2" "$1"; }
lacks() { ! grep -q -- "$2" "$1"; }

boot_fake done
ok $([ "$(echo "$boots" | wc -l)" = 1 ]; echo $?) "an L1 that finishes boots once"
report --all
ok $? "its report passes every case"
report --result b
ok $? "a case's report passes it"

boot_fake "panic:b done"
ok $([ "$(echo "$boots" | wc -l)" = 2 ]; echo $?) "an L1 that panics boots once more"
ok $(echo "$boots" | sed -n 2p | grep -q 'l1.skip=a,b$'; echo $?) \
	"the second boot skips the cases that have their verdict (l1.skip=a,b)"
check "the first boot's host line says it panicked and was resumed" \
	has "$w/results.txt" 'reset=panic (resumed in the next boot)'
check "the panic's head is kept for the case logs (E2E-LOG l1-panic)" \
	has "$w/results.txt" 'E2E-LOG l1-panic: .*RIP: 0010:sysrq_handle_crash'
check "the first boot's serial log is kept beside the second's" \
	test -s "$w/l1-serial.log.reset" -a -s "$w/l1-serial.log"
report --all
ok $? "the resumed run passes: two boots, one of them resumed, one done"
ok $([ "$(grep -c '^E2E-RESULT name=b ' "$w/results.txt")" = 1 ]; echo $?) \
	"no case gets its verdict twice"
report --result c
ok $? "the case after the panic has its verdict from the second boot"
check "its report shows the panic's evidence" has "$tmp/report.out" 'l1-panic'

boot_fake "triple:a done"
ok $([ "$(echo "$boots" | wc -l)" = 2 ] &&
	grep -q 'reset=triple-fault (resumed' "$w/results.txt"; echo $?) \
	"a triple fault of the emulated CPU gets the second boot too"

boot_fake "gone:a done"
ok $([ "$(echo "$boots" | wc -l)" = 1 ]; echo $?) \
	"an L1 that went away for no known reason gets no second boot"
report --all
ok $([ $? = 1 ] && has "$tmp/report.out" '1 of 1 L1 boots did not finish'; echo $?) \
	"and the run fails, naming the unfinished boot"
report --result c
ok $([ $? = 1 ] && has "$tmp/report.out" 'no result for c'; echo $?) \
	"a case it never reached fails with 'no result'"
ok $(tail -n 2 "$tmp/report.out" | head -n 1 | grep -q '^E2E-L1-HOST qemu_status=0 ' &&
	tail -n 1 "$tmp/report.out" | grep -q '^no result for c'; echo $?) \
	"and its output ends with how the boot ended, then the verdict (what a log's tail keeps)"

boot_fake "panic:a panic:b done"
ok $([ "$(echo "$boots" | wc -l)" = 2 ]; echo $?) "a second panic gets no third boot"
report --result c
ok $([ $? = 1 ]; echo $?) "the case neither boot reached fails"

boot_fake "hang"
ok $([ "$(echo "$boots" | wc -l)" = 1 ] &&
	grep -q 'qemu_status=124' "$w/results.txt"; echo $?) \
	"a timeout gets no second boot (its status is in the host line)"

boot_fake "stall:a done" L1_STALL_S=2
ok $([ "$(echo "$boots" | wc -l)" = 2 ] &&
	grep -q 'qemu_status=125 .*reset=stall (resumed in the next boot)' "$w/results.txt" &&
	grep -q 'no serial output for 2 s' "$w/qemu-stderr.log.reset"; echo $?) \
	"an L1 silent for L1_STALL_S is stopped (status 125) and resumed"
report --all
ok $? "the resumed run passes"
report --result b
ok $(has "$tmp/report.out" 'detail=boot 2'; echo $?) \
	"the case after the stall has its verdict from the second boot"

boot_fake "stall:a stall:b" L1_STALL_S=2
report --result c
ok $([ $? = 1 ] && [ "$(echo "$boots" | wc -l)" = 2 ]; echo $?) \
	"a second stall gets no third boot, and the case neither reached fails"

boot_fake "panic:a done" L1_RESUME=0
ok $([ "$(echo "$boots" | wc -l)" = 1 ]; echo $?) \
	"L1_RESUME=0 (repeated runs) turns the second boot off"

boot_fake "panic:b done" HINTVM_L1_CRASH_AFTER=b
ok $(echo "$boots" | sed -n 1p | grep -q ' l1.crash_after=b$' &&
	! echo "$boots" | sed -n 2p | grep -q crash_after; echo $?) \
	"HINTVM_L1_CRASH_AFTER reaches the first boot only"

# --- the report on results it did not boot for ---------------------------
w=$tmp/report
mkdir -p "$w"
printf '%s\n' "E2E-RESULT name=r status=pass detail=round 1" \
	"E2E-RESULT name=r status=fail detail=round 2" \
	"E2E-RESULT name=s status=skip detail=not selected" \
	"E2E-L1 done" "E2E-L1-HOST qemu_status=0 wall_s=1.0 serial=/dev/null" \
	> "$w/results.txt"
report --result r
ok $([ $? = 1 ]; echo $?) "a case that failed in any repeat fails"
report --result s
ok $([ $? = 77 ]; echo $?) "a skipped case reports 77"
(
	. "$l1/host.sh"
	L1_INFO_ONLY="q"
	l1_report "$w/results.txt" --result q
) > /dev/null 2>&1
ok $([ $? = 77 ]; echo $?) "an information-only case without a verdict skips"
echo "E2E-SKIP-ALL no QEMU here" > "$w/results.txt"
report --result r
ok $([ $? = 77 ] && has "$tmp/report.out" 'SKIP: no QEMU here'; echo $?) \
	"a tier that cannot have its L1 skips every case, with the reason"

# --- l1_once: one boot per meson test run --------------------------------
w=$tmp/once
mkdir -p "$w"
once() {
	(
		. "$l1/host.sh"
		count() { echo boot >> "$w/count"; echo "E2E-RESULT name=x status=pass detail=-" > "$w/results.txt"; }
		l1_once "$w" count
	)
}
HINTVM_E2E_SESSION=s1 once
HINTVM_E2E_SESSION=s1 once
HINTVM_E2E_SESSION=s2 once
ok $([ "$(wc -l < "$w/count")" = 2 ]; echo $?) \
	"the cases of one run share one boot; the next run boots again"
(
	export HINTVM_E2E_SESSION=s3
	. "$l1/host.sh"
	l1_once "$w" false
)
ok $(grep -q '^E2E-FAIL-ALL .* could not boot the L1 (status 1)' "$w/results.txt"; echo $?) \
	"a boot that fails leaves a verdict for every case"

# --- the L1 side: guest.sh -----------------------------------------------
guest() { # CMDLINE SCRIPT: runs SCRIPT after sourcing guest.sh
	echo "$1" > "$tmp/cmdline"
	: > "$tmp/sysrq"
	L1_LIB=$l1 L1_CMDLINE=$tmp/cmdline L1_SYSRQ=$tmp/sysrq ${GUEST_SH:-sh} -c ". $l1/guest.sh; $2"
}
out=$(guest "quiet l1.only=a,b l1.skip=b" 'for c in a b c; do l1_selected $c && echo run-$c; done')
ok $([ "$out" = "run-a
$(echo "$out" | grep '^E2E-TIME name=c done_uptime_s=[0-9.]* mem_avail_mib=[0-9]*$')
E2E-RESULT name=c status=skip detail=not selected (only: a,b)" ]; echo $?) \
	"l1.only runs the named cases, l1.skip leaves out the resumed ones quietly, others skip with a verdict"
guest "l1.crash_after=b" 'result a pass x; result b pass y' > /dev/null
ok $([ "$(cat "$tmp/sysrq")" = c ]; echo $?) "l1.crash_after=NAME panics once NAME has its verdict"
guest "quiet" 'result a pass x' > /dev/null
ok $([ ! -s "$tmp/sysrq" ]; echo $?) "and only then"
# The evidence-gated retry: a run that crashes (status 6) is repeated only
# while nested_fault_seen has KVM's record of the emulated CPU's fault.
retry='runs=0
once() { runs=$((runs + 1)); STATUS=$1; echo "console of run $runs" > $2; }
nested_fault_arm() { :; }
nested_fault_flight() { return 1; }'
out=$(guest "" "$retry
nested_fault_seen() { echo 'kvm_exit: rip 0xffffffff81000000'; }
l1_fault_retry t $tmp/t.log once 6 $tmp/t.log; echo runs=\$runs")
ok $(echo "$out" | grep -q '^runs=3$' &&
	echo "$out" | grep -q 'E2E-LOG t: l1-fault: .*kvm_exit: rip 0xffffffff81000000'; echo $?) \
	"a crash with the nested-fault evidence runs up to twice more, with the record in the case's log"
out=$(guest "" "$retry
nested_fault_seen() { return 1; }
l1_fault_retry t $tmp/t.log once 6 $tmp/t.log; echo runs=\$runs")
ok $(echo "$out" | grep -q '^runs=1$'; echo $?) "a crash without evidence is not run again"
out=$(guest "" "$retry
nested_fault_seen() { echo evidence; }
l1_fault_retry t $tmp/t.log once timeout $tmp/t.log; echo runs=\$runs")
ok $(echo "$out" | grep -q '^runs=2$'; echo $?) "a timeout with evidence runs once more only"
out=$(guest "" "$retry
nested_fault_seen() { echo evidence; }
l1_fault_retry t $tmp/t.log once 1 $tmp/t.log; echo runs=\$runs")
ok $(echo "$out" | grep -q '^runs=1$'; echo $?) "any other failure is not run again"

# l1_case: a case of several steps gets the same gate on its verdicts.
case_lib='runs=0
nested_fault_arm() { :; }
body() { runs=$((runs + 1)); if [ $runs = 1 ]; then result c fail "first try"; else result c pass "second try"; fi; }
reset() { echo reset-ran; }'
out=$(guest "" "$case_lib
nested_fault_seen() { echo 'kvm_exit: rip 0xffffffff81000000'; }
l1_case c body reset; echo runs=\$runs")
ok $(echo "$out" | grep -q '^runs=2$' && echo "$out" | grep -qx reset-ran &&
	echo "$out" | grep -q '^E2E-LOG c: l1-fault:   failed: c first try$' &&
	echo "$out" | grep -q '^E2E-RESULT name=c status=pass detail=second try$' &&
	! echo "$out" | grep -q 'status=fail'; echo $?) \
	"a case's failure with the nested-fault evidence runs the case once more, after its reset; its first verdict is kept as a log line"
out=$(guest "" "$case_lib
nested_fault_seen() { return 1; }
l1_case c body reset; echo runs=\$runs")
ok $(echo "$out" | grep -q '^runs=1$' &&
	echo "$out" | grep -q '^E2E-RESULT name=c status=fail detail=first try$' &&
	! echo "$out" | grep -q reset-ran; echo $?) \
	"without the evidence the case runs once and its failure stands"
out=$(guest "l1.only=d" "$case_lib
nested_fault_seen() { echo evidence; }
l1_case c body; echo runs=\$runs")
ok $(echo "$out" | grep -q '^runs=0$' &&
	echo "$out" | grep -q '^E2E-RESULT name=c status=skip'; echo $?) \
	"a case l1.only leaves out does not run"

echo "1..$n"
exit $failed
