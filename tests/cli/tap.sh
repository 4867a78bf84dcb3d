# TAP helpers of the cli suite's scripts (cli-test.sh, control-test.sh),
# sourced by them. Expects $hintvm and $tmp; each case's output goes to
# $tmp/out and $tmp/err, which a failed case shows as TAP comments.
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1))
	echo "not ok $n - $1"
	sed 's/^/# /' "$tmp/err" "$tmp/out" 2>/dev/null | head -20
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }

# run_status NAME STATUS ARGS...: run hintvm; false, with the case failed,
# when its exit status is not STATUS.
run_status() {
	local name=$1 want=$2 got
	shift 2
	timeout 60 "$hintvm" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] && return 0
	echo "# exit status $got, expected $want" >>"$tmp/err"
	not_ok "$name"
	return 1
}

# expect NAME STATUS PATTERN -- ARGS...: run hintvm, check the exit status
# and that stderr (or stdout) matches PATTERN (extended regex).
expect() {
	local name=$1 want=$2 pattern=$3
	shift 4
	run_status "$name" "$want" "$@" || return 0
	if [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$tmp/err" "$tmp/out"; then
		echo "# output does not match /$pattern/" >>"$tmp/err"
		not_ok "$name"
	else
		ok "$name"
	fi
}

# expect_line NAME STATUS LINE -- ARGS...: the exit status, and LINE as a
# whole line of stderr.
expect_line() {
	local name=$1 want=$2 line=$3
	shift 4
	run_status "$name" "$want" "$@" || return 0
	if ! grep -Fxq -- "$line" "$tmp/err"; then
		echo "# no line: $line" >>"$tmp/err"
		not_ok "$name"
	else
		ok "$name"
	fi
}
