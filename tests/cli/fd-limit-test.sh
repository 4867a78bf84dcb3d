#!/bin/bash
# hintvm at its file limit (RLIMIT_NOFILE), as a guest or a local client
# can drive it: host clients of the vsock socket that never finish their
# handshake each hold a descriptor for 5 s. While the process is at its
# limit, the VM's owner still gets answers on the control socket (a spare
# descriptor kept for that). That a listener pauses instead of spinning
# while accept4 fails is tested on the guard itself, with its own clock
# (tests/unit/base/test_accept.c). TAP; without /dev/kvm everything skips.
# usage: fd-limit-test.sh HINTVM
set -u
hintvm=$1
tmp=$(mktemp -d)
export HINTVM_RUNTIME_DIR=$tmp/run
. "$(dirname "$0")/tap.sh"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
	echo "1..1"
	skip "fd-limit" "/dev/kvm is not usable"
	exit 0
fi
echo "1..2"

# A hard limit of 96: the vsock device cannot raise it.
prlimit --nofile=96:96 "$hintvm" run --name fdl --vsock "cid=3,uds=$tmp/v.sock" \
	-p "test=spinlock ms=60000" </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/v.sock" ] && break; sleep 0.1; done

# Hold 150 half-open connections: more than the limit leaves, so the rest
# wait in the backlog, and hintvm closes each one it accepted after its
# 5 s handshake deadline. Ask for the status while all are held; then the
# holder counts the connections hintvm had closed by the time the answer
# came. An answer that had to wait for a free descriptor comes only after
# hintvm let go of some: the order tells, not a clock.
/usr/bin/python3 - "$tmp/v.sock" "$tmp" <<'PY' &
import os, socket, sys, time
conns = []
for _ in range(150):
    s = socket.socket(socket.AF_UNIX)
    s.setblocking(False)
    try:
        s.connect(sys.argv[1])
    except (BlockingIOError, OSError):
        pass
    conns.append(s)
open(os.path.join(sys.argv[2], "held"), "w").close()
asked = os.path.join(sys.argv[2], "asked")
for _ in range(400):  # at most 40 s: a hung test ends
    if os.path.exists(asked):
        break
    time.sleep(0.1)
released = 0
for s in conns:
    try:
        if s.recv(1, socket.MSG_DONTWAIT) == b"":
            released += 1
    except OSError:
        pass
with open(os.path.join(sys.argv[2], "released"), "w") as f:
    f.write("%d\n" % released)
PY
holder=$!
for _ in $(seq 50); do [ -e "$tmp/held" ] && break; sleep 0.1; done
timeout 20 "$hintvm" ctl fdl status >"$tmp/status" 2>&1
st=$?
touch "$tmp/asked"
wait $holder
released=$(cat "$tmp/released" 2>/dev/null)
if grep -q 'at its file limit' "$tmp/err"; then
	ok "the process reached its file limit, and says so"
else
	sed 's/^/# /' "$tmp/err" | tail -n 5
	not_ok "the process reached its file limit, and says so"
fi
if [ $st = 0 ] && grep -q running "$tmp/status" && [ "$released" = 0 ]; then
	ok "hintvm ctl status answers at the limit, before hintvm let go of any descriptor"
else
	echo "# status $st, connections hintvm had closed by then: ${released:-?}; $(cat "$tmp/status")"
	not_ok "hintvm ctl status answers at the limit, before hintvm let go of any descriptor"
fi
"$hintvm" ctl fdl stop >/dev/null 2>&1
wait "$pid"
pid=""
