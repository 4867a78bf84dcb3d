#!/bin/bash
# bench/tables --check, the lint of the generated result tables: the tree
# as it is passes, and in a copy of README.md, docs/benchmarks.md and
# bench/results a figure edited by hand, a CSV changed under its table and
# a region without its end marker each fail, naming the file; running
# bench/tables on the copy makes it pass again; a startup goal's verdict
# follows the CSV it is judged on. TAP output.
#
# usage: bench-tables-test.sh [SOURCE_ROOT]
set -u
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
tables=$top/bench/tables
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../cli/tap.sh
. "$top/tests/cli/tap.sh"

fresh() {
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree/docs" "$tmp/tree/bench"
	cp "$top/README.md" "$tmp/tree/"
	cp "$top/docs/benchmarks.md" "$tmp/tree/docs/"
	cp -r "$top/bench/results" "$tmp/tree/bench/"
}

check() { "$tables" --check --root "$1" >"$tmp/out" 2>"$tmp/err"; }

# fails NAME PATTERN: the check fails on the copy, PATTERN in its output.
fails() {
	if check "$tmp/tree"; then
		echo "# bench/tables --check passed" >>"$tmp/err"
		not_ok "$1"
	elif ! grep -Eq -- "$2" "$tmp/err"; then
		echo "# output does not match /$2/" >>"$tmp/err"
		not_ok "$1"
	else
		ok "$1"
	fi
}

if check "$top"; then
	ok "the tree's tables are what their CSVs give"
else
	not_ok "the tree's tables are what their CSVs give"
fi

# A figure edited by hand inside a generated region.
fresh
sed -i 's/^| PIO exit round trip | [0-9.]* µs/| PIO exit round trip | 1.00 µs/' \
	"$tmp/tree/README.md"
fails "a hand-edited figure in README.md is caught" \
	'README.md:[0-9]+: a generated table differs from its CSV'

# The CSV changes and the table is not regenerated.
fresh
sed -i 's/^exits,qemu,pio-cpl0,1,2,exit_roundtrip_us,us,[0-9.]*,/exits,qemu,pio-cpl0,1,2,exit_roundtrip_us,us,99.9,/' \
	"$tmp/tree/bench/results/exits.csv"
fails "a table left behind by its CSV is caught" \
	'README.md:[0-9]+: .*differs'

# Regenerating puts it right.
if "$tables" --root "$tmp/tree" >"$tmp/out" 2>"$tmp/err" &&
	check "$tmp/tree" && grep -q '| 99.9 µs |' "$tmp/tree/README.md"; then
	ok "bench/tables regenerates the region from the changed CSV"
else
	not_ok "bench/tables regenerates the region from the changed CSV"
fi

# A goal is judged by the whole spread, not the median: RSS runs all
# under 2.2 MiB meet it, runs all above miss it.
goal() {
	fresh
	sed -i "s/^\(startup,hintvm,testkernel-split,1,2,rss_overhead_kib,KiB\),[0-9.]*,[0-9.]*,[0-9.]*,/\1,$2,/" \
		"$tmp/tree/bench/results/startup.csv"
	if "$tables" --root "$tmp/tree" >"$tmp/out" 2>"$tmp/err" &&
		grep -q "^| VMM RSS overhead <= 2.2 MiB .* | $3 (the whole p10-p90" \
			"$tmp/tree/docs/benchmarks.md"; then
		ok "$1"
	else
		grep 'VMM RSS overhead' "$tmp/tree/docs/benchmarks.md" >>"$tmp/err"
		not_ok "$1"
	fi
}
goal "an RSS goal whose runs all fall within it is met" 2000,1900,2100 met
goal "an RSS goal whose runs all exceed it is missed" 2400,2300,2500 missed

# A region that never ends would swallow the rest of the file.
fresh
sed -i '/^<!-- bench:exits end -->$/d' "$tmp/tree/docs/benchmarks.md"
fails "a region without its end marker is refused" \
	'docs/benchmarks.md:[0-9]+: region exits has no'

echo "1..$n"
[ "$failed" -eq 0 ]
