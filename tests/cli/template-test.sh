#!/bin/bash
# VM templates from the command line (docs/template.md), with the test
# kernel's vsock payload as the guest, whose driver answers the agent's
# HELLO on port 1024 (and nothing else): `hintvm template make` boots it,
# waits for the greeting and stores the snapshot under its key; make
# again and `template key` give the same key without a boot; two clones
# of it (`run --template KEY`) each get their own CID (the transport
# reset) and answer a new connection, carrying the template's state (the
# greeting it answered before the snapshot); `--template auto` makes the
# template of a new configuration on first use, and one template serves
# clones of a share (by its tag) on directories of their own; a template whose initrd
# changed is removed by `template list`; a store others may write is
# refused; drop of one, all, and a bad key; what a template cannot hold.
# TAP output; skips without /dev/kvm (x86: arm64 has no snapshots).
# usage: template-test.sh HINTVM
set -u
hintvm=$1
tmp=$(mktemp -d)
export HINTVM_RUNTIME_DIR=$tmp/run
store=$tmp/store
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"

if [ ! -w /dev/kvm ] || [ "$(uname -m)" != x86_64 ]; then
	echo "1..0 # SKIP no usable /dev/kvm on x86_64"
	exit 0
fi

# The payload ends (and prints its RESULT) when the host connects to
# vsock port 1 through the hybrid socket.
quit() { # SOCKET
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"CONNECT 1\n")
s.recv(64)' "$1" 2>/dev/null
}

wait_for_line() { # FILE PATTERN
	for _ in $(seq 200); do grep -Eq -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

payload="test=vsock vsock.hostile=0 vsock.ms=600000"
vm=(-p "$payload" --vsock cid=3 -m 64M --template-dir "$store")

# Made: the key printed, the store and its files private.
expect "template make prints the key" 0 '^[0-9a-f]{64}$' -- template make "${vm[@]}" --ready-timeout 30
key=$(head -1 "$tmp/out")
perms=$(stat -c '%a %U' "$store" "$store/$key" "$store/$key"/{state,memory,key,origin} 2>&1 | sort -u | tr '\n' ' ')
[ "$perms" = "600 root 700 root " ] && ok "store, template and files are root's, 0700/0600" ||
	{ echo "# $perms" >"$tmp/err"; not_ok "store, template and files are root's, 0700/0600"; }
made=$(grep '^made=' "$store/$key/origin")
expect "make again: the same key" 0 "^$key\$" -- template make "${vm[@]}"
[ "$(grep '^made=' "$store/$key/origin")" = "$made" ] && ok "make again boots nothing (made= unchanged)" ||
	not_ok "make again boots nothing"
expect "template key: the same key" 0 "^$key\$" -- template key "${vm[@]}"
run_status "template key of 2 vCPUs" 0 template key "${vm[@]}" -c 2 &&
	{ [ "$(cat "$tmp/out")" != "$key" ] && ok "template key: 2 vCPUs, another key" || not_ok "template key: 2 vCPUs, another key"; }
expect "template list: key, size, parts" 0 "cmdline=$payload" -- template list --dir "$store"
grep -q "^$key disk=" "$tmp/out" && ok "template list names it" || not_ok "template list names it"

# Two clones at once, each with a CID of its own.
for cid in 5 6; do
	"$hintvm" run --template "$key" --template-dir "$store" --name "c$cid" \
		--vsock "cid=$cid,uds=$tmp/c$cid.sock" </dev/null >"$tmp/c$cid.out" 2>&1 &
	pids+=($!)
	eval "pid$cid=$!"
done
for cid in 5 6; do
	if wait_for_line "$tmp/c$cid.out" "transport reset, cid $cid"; then
		ok "clone $cid: its own CID after the transport reset"
	else
		cp "$tmp/c$cid.out" "$tmp/err"; not_ok "clone $cid: its own CID"
	fi
	# The greeting passes; the test kernel refuses EXEC, by name.
	expect "clone $cid: its agent port greets" 125 "answers HELLO only" -- exec "$tmp/c$cid.sock" -- true
	quit "$tmp/c$cid.sock"
done
wait "$pid5" "$pid6" 2>/dev/null
for cid in 5 6; do
	# conns=2 agent_hellos=2: the template's own knock, then the clone's.
	if grep -q "RESULT test=vsock .*conns=2 .*resets=1 agent_hellos=2 " "$tmp/c$cid.out"; then
		ok "clone $cid: the template's state, then its own greeting"
	else
		cp "$tmp/c$cid.out" "$tmp/err"; not_ok "clone $cid: the template's state"
	fi
	grep -q "testkernel:" "$tmp/c$cid.out" && { cp "$tmp/c$cid.out" "$tmp/err"; not_ok "clone $cid: no boot"; } ||
		ok "clone $cid: no boot"
done

# auto: this configuration's template, made on first use.
auto=(-p "$payload" -m 64M --template-dir "$store" -c 2)
# A VM NAME from --template auto on vsock CID, OPTIONs added: WHAT passes
# when its guest reaches the transport reset a restore sends; then stopped.
run_auto() { # NAME CID WHAT [OPTION...]
	local name=$1 cid=$2 what=$3 pid
	shift 3
	"$hintvm" run --template auto "${auto[@]}" "$@" --name "$name" \
		--vsock "cid=$cid,uds=$tmp/$name.sock" </dev/null >"$tmp/$name.out" 2>&1 &
	pids+=($!)
	pid=$!
	if wait_for_line "$tmp/$name.out" "transport reset, cid $cid"; then
		ok "$what"
	else
		cp "$tmp/$name.out" "$tmp/err"; not_ok "$what"
	fi
	"$hintvm" ctl "$name" stop >/dev/null 2>&1
	wait "$pid" 2>/dev/null
}
run_auto auto1 9 "run --template auto: made, then restored"
[ "$(ls "$store" | wc -l)" = 2 ] && ok "the store has two templates" || { ls -la "$store" >"$tmp/err"; not_ok "the store has two templates"; }

# A share the template's guest never mounts is in it by its tag: each
# clone names a directory of its own, and both find the one template.
mkdir "$tmp/s1" "$tmp/s2"
for d in s1 s2; do
	run_auto "sh$d" 10 "run --template auto with a share on $d" \
		--share "$tmp/$d,tag=pod"
done
[ "$(ls "$store" | wc -l)" = 3 ] && ok "one template per share tag, not per directory" ||
	{ ls -la "$store" >"$tmp/err"; not_ok "one template per share tag, not per directory"; }

# Stale: the initrd it was made from changes.
echo one >"$tmp/initrd"
run_status "make with an initrd" 0 template make "${vm[@]}" --initrd "$tmp/initrd" &&
	ok "make with an initrd"
ikey=$(head -1 "$tmp/out")
echo two >"$tmp/initrd"
expect "a changed initrd: list removes it" 0 "$ikey removed: stale: its initrd $tmp/initrd changed since" -- template list --dir "$store"
[ ! -e "$store/$ikey" ] && ok "stale template gone" || not_ok "stale template gone"
expect "run --template of a removed key" 2 "no template $store/$ikey" -- run --template "$ikey" --template-dir "$store" --vsock cid=5

# A store others may write is refused, by mode.
chmod 0777 "$store"
expect "list refuses a store others may write" 1 "template directory $store has mode 0777" -- template list --dir "$store"
expect "run --template refuses it" 2 "mode 0777" -- run --template "$key" --template-dir "$store" --vsock "cid=5,uds=$tmp/x.sock"
chmod 0700 "$store"

# What a template cannot hold.
expect "make refuses --disk" 2 "cannot have --disk" -- template make "${vm[@]}" --disk "$tmp/initrd"
expect "make refuses a main process" 2 "cannot have --init-args" -- template make "${vm[@]}" -- /bin/true
expect "make needs an agent" 2 "needs --agent" -- template make -p "$payload" --template-dir "$store"
expect "--template and --restore" 2 "one or the other" -- run --template "$key" --template-dir "$store" --restore "$store/$key" --vsock cid=5
expect "a bad key" 2 "expected auto or a key of 64" -- run --template xyz --template-dir "$store"

# Drop one, a bad one, all.
expect "drop a bad key" 2 "64 lower-case hex" -- template drop --dir "$store" ../x
expect "drop one" 0 "" -- template drop --dir "$store" "$key"
[ ! -e "$store/$key" ] && ok "dropped" || not_ok "dropped"
expect "drop --all" 0 "" -- template drop --dir "$store" --all
[ -z "$(ls "$store")" ] && ok "the store is empty" || { ls -la "$store" >"$tmp/err"; not_ok "the store is empty"; }

echo "1..$n"
[ "$failed" -eq 0 ]
