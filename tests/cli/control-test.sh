#!/bin/bash
# Operating several VMs as a person or a script does: names and the
# registry, hintvm ls, every control request and its errors, event
# subscriptions (several, one of them too slow), hintvm top --once and
# --json, and top's full screen driven in tmux. TAP output; skips without
# /dev/kvm. usage: control-test.sh HINTVM [BIND_SWAP_SO]
set -u
hintvm=$1
bind_swap=${2:-}
tmp=$(mktemp -d)
export HINTVM_RUNTIME_DIR=$tmp/run
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	tmux -L "hvm-test-$$" kill-server 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"

# A VM spinning at CPL3 until stopped, in the background.
start_vm() {
	"$hintvm" run -p "test=smp-count iterations=4294967296" --console none "$@" \
		</dev/null >>"$tmp/vms.log" 2>&1 &
	pids+=($!)
	last_pid=$!
}

wait_for() {
	for _ in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}

expect "ls with no VM" 0 '^NAME +PID +VCPUS' -- ls
expect "ctl NAME of no VM" 2 "no VM named 'nobody' in $HINTVM_RUNTIME_DIR" -- ctl nobody status
# The registry spoof: another local user made the runtime directory first
# (as with /tmp/hintvm-UID), or serves a NAME.sock; ctl and exec must not
# send it anything. Needs root, to be that other user (nobody) with setpriv.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -x /usr/bin/python3 ]; then
	spoof=$(mktemp -d /tmp/hvm-spoof.XXXXXX)
	chmod 0755 "$spoof"
	mkdir -m 0755 "$spoof/run"
	chown 65534:65534 "$spoof/run"
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept()
    with open(sys.argv[3], "ab") as f:
        f.write(c.recv(65536))
    c.close()
' "$spoof/run/web.sock" "$spoof/run/ready" "$spoof/run/got" 2>>"$tmp/vms.log" &
	pids+=($!)
	if wait_for "$spoof/run/ready"; then
		HINTVM_RUNTIME_DIR=$spoof/run expect "ctl refuses a runtime directory another user owns" 2 \
			"runtime directory $spoof/run belongs to uid 65534" -- ctl web stop
		HINTVM_RUNTIME_DIR=$spoof/run expect "exec refuses a runtime directory another user owns" 125 \
			"runtime directory $spoof/run belongs to uid 65534" -- exec web -- sh -c 'deploy --token=secret'
		HINTVM_RUNTIME_DIR=$spoof/run expect "ls refuses a runtime directory another user owns" 2 \
			"belongs to uid 65534" -- ls
		# Our own directory, the other user's socket moved into it (a
		# rename keeps the binding): refused by its owner, then, made
		# ours, by who listens on it.
		mkdir -m 0700 "$tmp/own"
		mv "$spoof/run/web.sock" "$tmp/own/web.sock"
		HINTVM_RUNTIME_DIR=$tmp/own expect "ctl refuses a socket another user owns" 2 \
			"control socket $tmp/own/web.sock belongs to uid 65534" -- ctl web status
		chown 0:0 "$tmp/own/web.sock"
		HINTVM_RUNTIME_DIR=$tmp/own expect "ctl refuses a socket another user listens on" 2 \
			"served by uid 65534" -- ctl web status
		HINTVM_RUNTIME_DIR=$tmp/own expect "exec refuses a socket another user listens on" 125 \
			"served by uid 65534" -- exec web -- sh -c 'deploy --token=secret'
		if [ -s "$spoof/run/got" ]; then
			echo "# the spoofing listener received: $(head -c 200 "$spoof/run/got")" >"$tmp/err"
			not_ok "the other user received nothing"
		else
			ok "the other user received nothing"
		fi
	else
		not_ok "a listener as uid 65534 for the registry spoof cases"
	fi
	rm -rf "$spoof"
else
	skip "the registry spoof" "needs root and setpriv to be another local user"
fi
expect "--name with a slash" 2 "--name: 'a/b' has a character outside" -- run --name a/b
expect "ctl with a bad --count" 2 "--count '0' is not a positive number" -- ctl --count 0 x events
expect "top with a bad --sort" 2 "--sort 'size' is not a key" -- top --sort size

# A host where the default socket cannot be made (the kernel suite's L1 has
# no AF_UNIX; here: a read-only runtime directory, in a mount namespace):
# an unnamed VM runs without one, a named VM, which must be findable, fails.
ro_run() { # ARGS...: hintvm with HINTVM_RUNTIME_DIR on a read-only mount
	mkdir -p "$tmp/ro"
	unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
		shift && exec env HINTVM_RUNTIME_DIR="$0" "$@"' "$tmp/ro" "$tmp/ro" "$hintvm" "$@"
}
if [ -r /dev/kvm ] && [ -w /dev/kvm ] && ro_run --version >/dev/null 2>&1; then
	ro_run run </dev/null >"$tmp/out" 2>"$tmp/err"
	if [ $? = 0 ] && grep -q "warning: no control socket: .*Read-only file system" "$tmp/err"; then
		ok "unnamed VM runs when its default socket cannot be made"
	else
		not_ok "unnamed VM runs when its default socket cannot be made"
	fi
	ro_run run --name web </dev/null >"$tmp/out" 2>"$tmp/err"
	if [ $? = 2 ] && grep -q "cannot listen on $tmp/ro/web.sock: Read-only" "$tmp/err"; then
		ok "named VM fails when its socket cannot be made"
	else
		not_ok "named VM fails when its socket cannot be made"
	fi
else
	skip "default socket on a read-only runtime directory" "no /dev/kvm or no mount namespace"
fi

if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
	skip "running VMs" "/dev/kvm is not usable"
	echo "1..$n"
	exit 0
fi

# A link put in place of a socket right after bind() (bind-swap.so plays
# the racing local user): hintvm refuses it, and the file the link names
# keeps its mode (a chmod of the path would have made it 0600).
if [ -n "$bind_swap" ]; then
	for sock in control vsock; do
		victim=$tmp/victim-$sock
		echo keep >"$victim"
		chmod 0644 "$victim"
		if [ $sock = control ]; then args=(--control "$tmp/swap.sock"); else args=(--vsock "cid=3,uds=$tmp/swap.sock"); fi
		rm -f "$tmp/swap.sock"
		# (An ASan build would refuse a library loaded ahead of its runtime.)
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
		HVM_BIND_SWAP_PATH=$tmp/swap.sock HVM_BIND_SWAP_VICTIM=$victim LD_PRELOAD=$bind_swap \
			expect "--$sock: a link in place of the bound socket is refused" 2 \
			"swap.sock is no longer the socket just bound" -- run --console none "${args[@]}"
		if [ "$(stat -c %a "$victim")" = 644 ] && [ -L "$tmp/swap.sock" ]; then
			ok "--$sock: the file behind the link keeps its mode, the link stays"
		else
			echo "# victim mode $(stat -c %a "$victim")" >"$tmp/err"
			not_ok "--$sock: the file behind the link keeps its mode, the link stays"
		fi
	done
	rm -f "$tmp/swap.sock"
fi

# Three VMs: two named, one with its socket elsewhere, one unnamed.
start_vm -c 2 --name web-1
web_pid=$last_pid
start_vm --name db --control "$tmp/db.sock"
start_vm -m 64M
anon_pid=$last_pid
start_vm --name hidden --control none
wait_for "$HINTVM_RUNTIME_DIR/web-1.sock" && wait_for "$HINTVM_RUNTIME_DIR/db.sock" &&
	wait_for "$HINTVM_RUNTIME_DIR/vm-$anon_pid.sock"
sleep 0.3

expect "ls lists every registered VM" 0 "^web-1 +$web_pid +2 +256M +running" -- ls
if grep -q '^db ' "$tmp/out" && grep -q "^vm-$anon_pid " "$tmp/out" && ! grep -q hidden "$tmp/out"; then
	ok "ls: --control PATH is registered, a generated name too, --control none is not"
else
	not_ok "ls: --control PATH is registered, a generated name too, --control none is not"
fi
expect "ls --json" 0 '"name":"db".*"socket":"[^"]*/db.sock"' -- ls --json
if [ "$(stat -c %a "$HINTVM_RUNTIME_DIR/web-1.sock")" = 600 ] &&
	[ "$(stat -c %a "$HINTVM_RUNTIME_DIR")" = 700 ]; then
	ok "socket 0600, runtime directory 0700"
else
	not_ok "socket 0600, runtime directory 0700"
fi
expect "a second VM of the same name is refused" 2 "a VM named 'web-1' is already running" -- run --name web-1

# Every request, by name and by path, as words and as JSON.
expect "status by name" 0 '"state":"running","vcpus":2,"mem_mib":256,"name":"web-1"' -- ctl web-1 status
expect "status by path" 0 '"name":"db"' -- ctl "$tmp/db.sock" status
expect "status through the registry's link" 0 '"name":"db"' -- ctl db status
expect "info: the effective configuration" 0 '"info":\{"name":"web-1".*"cpus":2.*"sched":\{"commit"' -- ctl web-1 info
expect "stats: the --stats-json document" 0 '"stats":\{"elapsed_ns":[0-9]+.*"vcpus":\[' -- ctl web-1 stats
expect "stat NAME" 0 '"name":"exits","value":[0-9]+' -- ctl web-1 stat exits
expect "stat of an unknown name" 1 '"code":"unknown-stat"' -- ctl web-1 stat no-such-thing
expect "set halt-poll" 0 '"key":"halt-poll","value":"20000".*"halt_poll_ns":20000' -- ctl web-1 set halt-poll 20000
expect "set halt-poll back to auto" 0 '"halt_poll":"auto"' -- ctl web-1 set halt-poll auto
expect "set pin" 0 '"pin":"none"' -- ctl web-1 set pin none
expect "set sched-hints" 0 '"sched_hints":false' -- ctl web-1 set sched-hints off
expect "set stats-interval" 0 '"stats_interval_ms":500' -- ctl web-1 set stats-interval 0.5
expect "set with a bad value" 1 '"code":"bad-value","error":"--halt-poll: .soon. is not a halt-poll setting' -- ctl web-1 set halt-poll soon
expect "set of an option fixed at creation" 1 '"code":"not-at-runtime"' -- ctl web-1 set cpus 4
expect "set of no option" 1 '"code":"unknown-key"' -- ctl web-1 set colour blue
expect "a pin list outside the allowed CPUs" 1 '"code":"bad-value".*host CPU 1000' -- ctl web-1 set pin 1000
expect "unknown request" 1 '"code":"unknown-request"' -- ctl web-1 reboot-now
expect "missing argument" 1 '"code":"bad-request","error":"expected .stat NAME.' -- ctl web-1 stat
expect "JSON with an id" 0 '^\{"v":1,"id":"q1","ok":true,"state":"running"' -- ctl web-1 '{"v":1,"id":"q1","cmd":"status"}'
expect "unsupported version" 1 '"id":7,"ok":false,"code":"unsupported-version"' -- ctl web-1 '{"v":9,"id":7,"cmd":"status"}'
expect "broken JSON" 1 '"code":"bad-json"' -- ctl web-1 '{"cmd":'
expect "pause" 0 '"state":"paused"' -- ctl web-1 pause
expect "resume" 0 '"state":"running"' -- ctl web-1 resume

# Several requests on one connection are answered in order.
python3 - "$HINTVM_RUNTIME_DIR/web-1.sock" >"$tmp/out" 2>&1 <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"id":1,"cmd":"status"}\n{"id":2,"cmd":"stat","name":"exits"}\nbogus\n')
f = s.makefile()
for _ in range(3):
    print(f.readline().strip())
PY
if sed -n 1p "$tmp/out" | grep -q '"id":1,"ok":true' && sed -n 2p "$tmp/out" | grep -q '"id":2,"ok":true' &&
	sed -n 3p "$tmp/out" | grep -q '"code":"unknown-request"'; then
	ok "requests on one connection answered in order"
else
	not_ok "requests on one connection answered in order"
fi

# Two subscribers see the same events; a third never reads and loses some.
"$hintvm" ctl db events >"$tmp/sub1" 2>&1 &
sub1=$!
"$hintvm" ctl --count 2 db events >"$tmp/sub2" 2>&1 &
sub2=$!
python3 - "$tmp/db.sock" "$tmp/slow" >"$tmp/slow.out" 2>&1 <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sys.argv[1])
s.sendall(b"events\n")
open(sys.argv[2] + ".subscribed", "w").close()
for _ in range(300):  # read nothing until told to, 30 s at most
    if os.path.exists(sys.argv[2] + ".go"):
        break
    time.sleep(0.1)
f = s.makefile()
for line in f:
    if '"event":"lost"' in line:
        print("lost", int(line.split('"count":')[1].rstrip("}\n")), flush=True)
    if '"event":"exit"' in line:
        print("exit", flush=True)
        break
PY
slow=$!
wait_for "$tmp/slow.subscribed"
for _ in $(seq 50); do grep -q '"subscribed":true' "$tmp/sub1" "$tmp/sub2" 2>/dev/null &&
	[ "$(grep -l subscribed "$tmp/sub1" "$tmp/sub2" | wc -l)" = 2 ] && break; sleep 0.1; done
expect "status counts the subscribers" 0 '"subscribers":3' -- ctl db status
# Flood: each set is two events (the setting and the halt-poll window).
python3 - "$tmp/db.sock" >"$tmp/flood.out" 2>&1 <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile()
for i in range(3000):
    s.sendall(b"set halt-poll %d\n" % (1000 + i % 2))
    f.readline()
print("done")
PY
wait $sub2
if [ "$(grep -c '"event":"set"' "$tmp/sub2")" = 1 ] && grep -q '"key":"halt-poll"' "$tmp/sub2"; then
	ok "ctl events --count 2 ends after two events"
else
	cp "$tmp/sub2" "$tmp/out"; not_ok "ctl events --count 2 ends after two events"
fi
expect "the VM still answers at once" 0 '"state":"running"' -- ctl db status
expect "status counts the events the slow one lost" 0 '"events_lost":[1-9]' -- ctl db status
touch "$tmp/slow.go"
for _ in $(seq 100); do grep -q '^lost' "$tmp/slow.out" && break; sleep 0.1; done
if grep -Eq '^lost [1-9]' "$tmp/slow.out"; then
	ok "the slow subscriber is told how many events it lost"
else
	cp "$tmp/slow.out" "$tmp/out"; not_ok "the slow subscriber is told how many events it lost"
fi
expect "stop" 0 '"state":"stopping"' -- ctl db stop
wait $slow
if grep -q '^exit' "$tmp/slow.out"; then
	ok "the slow subscriber, reading again, gets the exit event"
else
	cp "$tmp/slow.out" "$tmp/out"; not_ok "the slow subscriber, reading again, gets the exit event"
fi
wait $sub1
# Under load even a reader can fall behind: then it must be told. So: seq
# numbers only grow, every gap is announced by a lost event of its size,
# and the stream ends with the exit event.
if python3 - "$tmp/sub1" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
events = [e for e in lines if "event" in e]
expect, pending_lost = None, 0
for e in events:
    if e["event"] == "lost":
        pending_lost += e["count"]
        continue
    if expect is not None and e["seq"] != expect + pending_lost:
        sys.exit("seq %d after %d with %d announced lost" % (e["seq"], expect, pending_lost))
    expect, pending_lost = e["seq"] + 1, 0
sets = sum(1 for e in events if e["event"] == "set")
assert sets > 0, "no set events"
assert any(e["event"] == "state" and e["state"] == "stopping" for e in events), "no stopping"
assert events[-1]["event"] == "exit" and events[-1]["status"] == 10, "last is not the exit"
PY
then
	ok "a reading subscriber's stream is complete or says what it lost, and ends with the exit"
else
	cp "$tmp/sub1" "$tmp/out"; not_ok "a reading subscriber's stream is complete or says what it lost, and ends with the exit"
fi
if [ "$(id -u)" != 0 ]; then
	if [ ! -e "$tmp/db.sock" ] && [ ! -e "$HINTVM_RUNTIME_DIR/db.sock" ]; then
		ok "the socket and its registry link are gone with the VM"
	else
		not_ok "the socket and its registry link are gone with the VM"
	fi
else
	# Started by root, the VM ran as its --user, which may not unlink in
	# root's directories: its entry stays, dead, until a look cleans it.
	"$hintvm" ls </dev/null >"$tmp/out" 2>"$tmp/err"
	if ! grep -q '^db ' "$tmp/out" && [ ! -e "$HINTVM_RUNTIME_DIR/db.sock" ] &&
		! "$hintvm" ctl db status </dev/null >/dev/null 2>&1; then
		ok "the VM ran as its --user: its registry entry is dead and ls removes it"
	else
		not_ok "the VM ran as its --user: its registry entry is dead and ls removes it"
	fi
fi

# A VM killed outright leaves its entry: the next look cleans it.
kill -9 "$anon_pid"
sleep 0.2
expect "ls after a VM died" 0 "^web-1 " -- ls
if ! grep -q "^vm-$anon_pid " "$tmp/out" && [ ! -e "$HINTVM_RUNTIME_DIR/vm-$anon_pid.sock" ]; then
	ok "a dead VM's entry is removed"
else
	not_ok "a dead VM's entry is removed"
fi

# top: one frame for scripts, JSON, and the full screen as a person sees it.
expect "top --once" 0 "^web-1 +$web_pid +running .* all +[0-9.]+ +[0-9.]+" -- top --once --interval 0.5
if grep -Eq '^ +1 +[0-9.]+ +[0-9.]+' "$tmp/out"; then
	ok "top --once shows a line per vCPU"
else
	not_ok "top --once shows a line per vCPU"
fi
expect "top --once --json" 0 '"vms":\[\{"run_pct":[0-9.]+,"steal_pct":[0-9.]+,.*"name":"web-1".*"vcpus":\[\{' -- top --once --json --interval 0.5
if command -v tmux >/dev/null; then
	sock="hvm-test-$$"
	tmux -L "$sock" new-session -d -x 160 -y 40 "HINTVM_RUNTIME_DIR=$HINTVM_RUNTIME_DIR $hintvm top --interval 0.5"
	seen=0
	for _ in $(seq 50); do
		tmux -L "$sock" capture-pane -p >"$tmp/out" 2>/dev/null
		grep -Eq "^web-1 +$web_pid +running" "$tmp/out" && grep -q "sort: name" "$tmp/out" && { seen=1; break; }
		sleep 0.1
	done
	if [ $seen = 1 ]; then ok "top in a terminal shows the VMs"; else not_ok "top in a terminal shows the VMs"; fi
	tmux -L "$sock" send-keys c
	for _ in $(seq 30); do
		tmux -L "$sock" capture-pane -p >"$tmp/out" 2>/dev/null
		grep -q "sort: cpu" "$tmp/out" && break
		sleep 0.1
	done
	if grep -q "sort: cpu" "$tmp/out"; then ok "top: c sorts by CPU"; else not_ok "top: c sorts by CPU"; fi
	tmux -L "$sock" send-keys q
	for _ in $(seq 30); do tmux -L "$sock" has-session 2>/dev/null || break; sleep 0.1; done
	if tmux -L "$sock" has-session 2>/dev/null; then not_ok "top: q quits"; else ok "top: q quits"; fi
else
	skip "top in a terminal" "tmux is missing"
fi

# A guest flooding a stdout nobody reads: subscribers hear of the drops.
python3 - "$hintvm" >"$tmp/out" 2>&1 <<'PY'
import fcntl, json, os, socket, subprocess, sys, time
hintvm = sys.argv[1]
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: the reader stalls at once
vm = subprocess.Popen([hintvm, "run", "-p", "test=flood", "--name", "flood"],
                      stdin=subprocess.DEVNULL, stdout=w,
                      stderr=subprocess.DEVNULL)
os.close(w)
path = os.path.join(os.environ["HINTVM_RUNTIME_DIR"], "flood.sock")
for _ in range(100):
    if os.path.exists(path):
        break
    time.sleep(0.1)
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b"events\n")
s.settimeout(60)
f = s.makefile()
try:
    for line in f:
        e = json.loads(line)
        if e.get("event") == "console-dropped":
            print("dropped", e["bytes"])
            break
except socket.timeout:
    print("no console-dropped event in 60 s")
vm.terminate()
vm.wait()
PY
if grep -Eq '^dropped [1-9]' "$tmp/out"; then
	ok "subscribers hear of console output dropped for a stalled reader"
else
	not_ok "subscribers hear of console output dropped for a stalled reader"
fi

expect "stop by name" 0 '"state":"stopping"' -- ctl web-1 stop
wait "$web_pid"
st=$?
if [ $st = 10 ]; then ok "the VM stopped through ctl NAME exits 10"; else echo "# status $st" >"$tmp/err"; not_ok "the VM stopped through ctl NAME exits 10"; fi
expect "ls is empty again but for the unlisted VM" 0 "" -- ls
if [ "$(wc -l <"$tmp/out")" = 1 ]; then ok "no VM left listed"; else not_ok "no VM left listed"; fi
echo "1..$n"
[ $failed = 0 ]
