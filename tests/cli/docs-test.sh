#!/bin/bash
# The man pages and the bash completion are generated from the option
# tables; check that they say what --help says, render cleanly, complete
# an option, a request and a VM name, and that meson installs them.
# usage: docs-test.sh HINTVM BUILD_DIR SOURCE_DIR
set -u
hintvm=$1
build=$2
src=$3
man1=$build/docs/man/hintvm.1
man3=$build/docs/man/libhintvm.3
completion=$build/src/cli/completion/hintvm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }

# roff writes every '-' of an option as '\-'.
roff_dashes() { sed 's/-/\\-/g' <<<"$1"; }

# Every option --help prints is in hintvm(1).
missing=()
for cmd in run ctl ls top; do
	for opt in $("$hintvm" "$cmd" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		grep -qF -- "$(roff_dashes "$opt")" "$man1" || missing+=("$cmd $opt")
	done
done
if [ ${#missing[@]} = 0 ]; then ok "hintvm(1) lists every option of --help"; else not_ok "hintvm(1) lists every option of --help" "missing: ${missing[*]}"; fi

# Every public call is in libhintvm(3), and every option key.
missing=()
for fn in $(grep -oE 'HVM_API [^(]*\(' "$src/include/hintvm/hintvm.h" | grep -oE 'hvm_[a-z0-9_]+\($' | tr -d '('); do
	grep -qF -- "$fn" "$man3" || missing+=("$fn")
done
for opt in $("$hintvm" run --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
	[ "$opt" = --help ] && continue
	grep -qF -- "$(roff_dashes "$opt")" "$man3" || missing+=("$opt")
done
if [ ${#missing[@]} = 0 ]; then ok "libhintvm(3) names every public call and option"; else not_ok "libhintvm(3) names every public call and option" "missing: ${missing[*]}"; fi

# The keys `set` takes come from one table (abi/control_proto.c): --help
# prints it, and docs/control-socket.md's table of them says the same.
help_keys=$("$hintvm" ctl --help | sed -n 's/^Keys of set: \(.*\)\.$/\1/p' | tr -d ',' | tr ' ' '\n' | sort)
doc_keys=$(awk '/^\| key \| applies \|/ { on = 1; next } on && /^\|---/ { next }
	on && /^\|/ { gsub(/[|` ]/, "", $2); print $2; next } on { exit }' FS='|' \
	"$src/docs/control-socket.md" | sort)
if [ -n "$help_keys" ] && [ "$help_keys" = "$doc_keys" ]; then
	ok "docs/control-socket.md lists the keys of set that hintvm ctl --help does"
else
	not_ok "docs/control-socket.md lists the keys of set that hintvm ctl --help does" \
		"--help: $(echo $help_keys)" "docs: $(echo $doc_keys)"
fi

# Both render without a roff warning.
for page in "$man1" "$man3"; do
	warnings=$(groff -man -ww -z "$page" 2>&1)
	if [ -z "$warnings" ]; then ok "$(basename "$page") renders cleanly"; else not_ok "$(basename "$page") renders cleanly" "$warnings"; fi
done

# Completion: as bash calls it, with a registry holding one VM.
export HINTVM_RUNTIME_DIR=$tmp/run
mkdir -p "$HINTVM_RUNTIME_DIR"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$HINTVM_RUNTIME_DIR/web-1.sock"
complete_words() {
	# shellcheck disable=SC1090
	bash -c 'complete() { :; }; source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _hintvm; echo "${COMPREPLY[*]}"' \
		_ "$completion" "$@"
}
check_completion() {
	local want=$1; shift
	local got
	got=$(complete_words "$@")
	if grep -qw -- "$want" <<<"$got"; then ok "completes '$*' with $want"; else not_ok "completes '$*' with $want" "got: $got"; fi
}
check_completion run hintvm r
check_completion --halt-poll hintvm run --halt
check_completion --name hintvm run --na
check_completion dedicated hintvm run --pin d
check_completion web-1 hintvm ctl we
check_completion set hintvm ctl web-1 se
check_completion halt-poll hintvm ctl web-1 set ha
check_completion --once hintvm top --on

# meson install puts them where man and bash-completion look.
stage=$tmp/stage
if meson install -C "$build" --destdir "$stage" --no-rebuild --quiet >"$tmp/install.log" 2>&1 &&
	[ -n "$(find "$stage" -path '*/man1/hintvm.1')" ] &&
	[ -n "$(find "$stage" -path '*/man3/libhintvm.3')" ] &&
	[ -n "$(find "$stage" -path '*/bash-completion/completions/hintvm')" ]; then
	ok "meson install installs hintvm.1, libhintvm.3 and the completion"
else
	not_ok "meson install installs hintvm.1, libhintvm.3 and the completion" "$(tail -5 "$tmp/install.log")"
fi
echo "1..$n"
[ $failed = 0 ]
