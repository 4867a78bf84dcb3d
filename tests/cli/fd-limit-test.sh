#!/bin/bash
# hintvm at its file limit (RLIMIT_NOFILE), as a guest or a local client
# can drive it: host clients of the vsock socket that never finish their
# handshake each hold a descriptor for 5 s. While the process is at its
# limit, the VM's owner still gets answers on the control socket (a spare
# descriptor kept for that), and no thread spins on a listener that stays
# readable while accept4 fails (the listener pauses instead). TAP; without
# /dev/kvm everything skips.
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
echo "1..3"

# A hard limit of 96: the vsock device cannot raise it.
prlimit --nofile=96:96 "$hintvm" run --name fdl --vsock "cid=3,uds=$tmp/v.sock" \
	-p "test=spinlock ms=60000" </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/v.sock" ] && break; sleep 0.1; done

# cpu_ticks: user + system time of the whole process, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }

# Hold 150 half-open connections (more than the limit leaves: the rest
# wait in the backlog, and each accepted one is held 5 s), ask for the
# status while the process is at its limit, and measure the process's CPU
# time over 2 s meanwhile.
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
time.sleep(6)
PY
holder=$!
for _ in $(seq 50); do [ -e "$tmp/held" ] && break; sleep 0.1; done
sleep 0.5
start=$(date +%s%N)
{
	timeout 20 "$hintvm" ctl fdl status >"$tmp/status" 2>&1
	echo "$? $((($(date +%s%N) - start) / 1000000))" >"$tmp/status.st"
} &
asker=$!
before=$(cpu_ticks)
sleep 2
after=$(cpu_ticks)
spent=$((after - before))
wait $asker
read -r st ms <"$tmp/status.st"
status=$(cat "$tmp/status")
wait $holder
# The spinlock payload keeps 1 vCPU busy: 2 s of it is about 200 ticks;
# a listener spinning on EMFILE adds up to 200 more per spinning thread.
nvcpu_ticks=$((2 * $(getconf CLK_TCK)))
if grep -q 'at its file limit' "$tmp/err"; then
	ok "the process reached its file limit, and says so"
else
	sed 's/^/# /' "$tmp/err" | tail -n 5
	not_ok "the process reached its file limit, and says so"
fi
if [ "$spent" -le $((nvcpu_ticks + nvcpu_ticks / 4)) ]; then
	ok "at the limit nothing spins: $spent ticks in 2 s (one busy vCPU: ~$nvcpu_ticks)"
else
	not_ok "at the limit nothing spins: $spent ticks in 2 s (one busy vCPU: ~$nvcpu_ticks)"
fi
if [ "$st" = 0 ] && [ "$ms" -lt 1000 ] && echo "$status" | grep -q running; then
	ok "hintvm ctl status answers at the limit (${ms} ms)"
else
	echo "# status $st after ${ms} ms: $status"
	not_ok "hintvm ctl status answers at the limit"
fi
"$hintvm" ctl fdl stop >/dev/null 2>&1
wait "$pid"
pid=""
