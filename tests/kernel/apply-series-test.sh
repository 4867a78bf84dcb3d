#!/bin/bash
# kernel/apply-series on a made-up source tree and series, against the point
# releases the real one meets: the exact base, a release whose context lines
# moved, one that changed a context line, one that changed a line a patch
# changes.  TAP output; needs only git.
set -uo pipefail
apply=${1:?usage: apply-series-test.sh KERNEL_APPLY_SERIES}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
n=0 failed=0
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
git_() { git -C "$1" "${@:2}" >/dev/null; }

# The "upstream" source: a C file and a list both series append to.
src=$work/src
mkdir -p "$src"
git_ "$src" init -q
seq -f 'int line%g;' 1 40 >"$src/a.c"
printf '%s\n' 'enum caps {' '	CAP_0,' '	CAP_1,' '};' '/* end */' >"$src/caps.h"
git_ "$src" add -A
git_ "$src" commit -q -m base
git_ "$src" tag base

# The series, developed as kernel/export-series expects: prereq, then
# A, B and C each branched from prereq.
edit_commit() { # FILE SED-SCRIPT MESSAGE
	sed -i "$2" "$src/$1"
	git_ "$src" commit -q -am "$3"
}
git_ "$src" checkout -q -b prereq base
edit_commit a.c '20s/.*/int line20_prereq;/' 'prereq: line 20'
git_ "$src" checkout -q -b A prereq
edit_commit a.c '10s/.*/int line10_A;/' 'A: line 10'
edit_commit caps.h '/CAP_1,/a\	CAP_A,' 'A: CAP_A'
git_ "$src" checkout -q -b B prereq
edit_commit caps.h '/CAP_1,/a\	CAP_B,' 'B: CAP_B'
git_ "$src" checkout -q -b C prereq
edit_commit a.c '30s/.*/int line30_C;/' 'C: line 30'
pd=$work/patches
git_ "$src" format-patch -q --no-signature -o "$pd/0-base" base..prereq
git_ "$src" format-patch -q --no-signature -o "$pd/A-one" prereq..A
git_ "$src" format-patch -q --no-signature -o "$pd/B-two" prereq..B
git_ "$src" format-patch -q --no-signature --cover-letter -o "$pd/C-three" prereq..C

# Point releases of the base, as commits in the repository kernel/build
# keeps (one tag per version).
tree=$work/tree
mkdir -p "$tree"
git_ "$tree" init -q
release() { # TAG SED-SCRIPT-FOR-a.c
	git_ "$tree" checkout -q -f --orphan "r-$1"
	git -C "$tree" rm -q -rf . >/dev/null 2>&1 || true
	git -C "$src" show base:a.c >"$tree/a.c"
	git -C "$src" show base:caps.h >"$tree/caps.h"
	[ -z "$2" ] || sed -i "$2" "$tree/a.c"
	git_ "$tree" add -A
	git_ "$tree" commit -q -m "$1"
	git_ "$tree" tag "$1"
}
release v1 ''
release v2 '1i\/* five */\n/* lines */\n/* moved */\n/* the */\n/* context */'
release v3 '28s/.*/int line28_changed;/'
release v4 '30s/.*/int line30_changed;/'
git_ "$tree" worktree add -q --detach "$work/wt" v1

run() { # TAG: apply-series, stderr to $work/err, fuzz report to $work/fuzz
	"$apply" --fuzz-report "$work/fuzz" "$work/wt" "$1" "6.12.$1" \
		"$pd/0-base" "$pd/A-one" "$pd/B-two" "$pd/C-three" 2>"$work/err" >/dev/null
}
combined_has() { # what the combined tree must hold
	local a c
	a=$(git -C "$tree" show combined:a.c) c=$(git -C "$tree" show combined:caps.h)
	grep -qx 'int line10_A;' <<<"$a" && grep -qx 'int line20_prereq;' <<<"$a" &&
		grep -qx 'int line30_C;' <<<"$a" && grep -q CAP_A <<<"$c" &&
		grep -q CAP_B <<<"$c" && [ "$(grep -c CAP_ <<<"$c")" = 4 ]
}

run v1
ok $? "the exact base: applies"
combined_has
ok $? "the exact base: combined holds prereq, A, B and C, both CAP_ lines kept"
[ ! -s "$work/fuzz" ]
ok $? "the exact base: no patch needed reduced context"
for b in prereq A B C; do
	git -C "$tree" rev-parse -q --verify "$b" >/dev/null
	ok $? "the exact base: branch $b exists (kernel/export-series' layout)"
done
[ "$(git -C "$tree" diff --name-only prereq A)" = "$(printf 'a.c\ncaps.h')" ]
ok $? "the exact base: series A alone touches only its own files"

run v2
ok $? "context moved by five lines: applies"
combined_has && [ "$(git -C "$tree" show combined:a.c | head -n 1)" = '/* five */' ]
ok $? "context moved: combined has every change on the new release"
[ ! -s "$work/fuzz" ]
ok $? "context moved: offsets need no reduced context"

run v3
ok $? "a context line changed: applies with reduced context"
[ "$(cat "$work/fuzz")" = C-three/0001-C-line-30.patch ]
ok $? "a context line changed: the fuzz report names C-three/0001 and nothing else"
grep -q 'C-three/0001-C-line-30.patch applies to 6.12.v3 only with reduced context' "$work/err"
ok $? "a context line changed: stderr says which patch, against which version"
combined_has && git -C "$tree" show combined:a.c | grep -qx 'int line28_changed;'
ok $? "a context line changed: combined holds the release's line and every change"
[ "$(git -C "$tree" log -1 --format=%s C)" = 'C: line 30' ] &&
	[ "$(git -C "$tree" log -1 --format=%an C)" = t ]
ok $? "a context line changed: the patch keeps its subject and author"

run v4
rc=$?
[ $rc = 1 ]
ok $? "a changed line a patch changes: fails (status $rc)"
grep -q 'C-three/0001-C-line-30.patch does not apply to 6.12.v4.*a\.c' "$work/err"
ok $? "a changed line a patch changes: the message names the patch, the version and the file"

"$apply" "$work/wt" v1 x "$pd/0-base" >/dev/null 2>&1
ok $(($? != 2)) "too few arguments: usage, status 2"

echo "1..$n"
[ $failed = 0 ] || { echo "# stderr of the last run:"; sed 's/^/# /' "$work/err"; }
exit $failed
