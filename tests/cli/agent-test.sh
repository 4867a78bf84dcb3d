#!/bin/bash
# The guest agent's protocol, the agent and hintvm exec on the build host,
# without a VM (docs/agent.md, "Testing without a VM"): hintvm-agent
# --hybrid serves the host side of the hybrid vsock protocol on a Unix
# socket, so hintvm exec talks to it exactly as to a VM's vsock socket.
# Also hintvm initramfs from a made-up modules directory, and --agent's
# usage errors. The same exec cases run in a real guest in the e2e tiers.
# TAP output.
# usage: agent-test.sh HINTVM HINTVM_AGENT EXEC_IN_GUEST AGENT_KEEP AGENT_CONTAINER
set -u
hintvm=$1
agent=$2
example=$3
keep=$4
container=$5
tmp=$(mktemp -d)
export HINTVM_RUNTIME_DIR=$tmp/run
sock=$tmp/v.sock
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"

"$agent" --hybrid "$sock" 2>"$tmp/agent.log" &
pids+=($!)
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done

# check NAME WANT_STATUS WANT_STDOUT -- ARGS...: hintvm exec ARGS.
check() {
	local name=$1 want=$2 out=$3
	shift 4
	timeout 60 "$hintvm" exec "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	local got=$?
	if [ "$got" -ne "$want" ]; then
		echo "# exit status $got, expected $want" >>"$tmp/err"
		not_ok "$name"
	elif [ "$(cat "$tmp/out")" != "$out" ]; then
		echo "# stdout '$(cat "$tmp/out")', expected '$out'" >>"$tmp/err"
		not_ok "$name"
	else
		ok "$name"
	fi
}

check "exec echo" 0 "hello agent" -- "$sock" -- echo hello agent
check "exit status 0" 0 "" -- "$sock" -- true
check "exit status 3" 3 "" -- "$sock" -- sh -c 'exit 3'
check "killed by SIGKILL: 137" 137 "" -- "$sock" -- sh -c 'kill -9 $$'
check "-e and -w" 0 "bar /tmp" -- -e FOO=bar -w /tmp "$sock" -- sh -c 'echo $FOO $PWD'
check "the default PATH and HOME" 0 "/" -- "$sock" -- sh -c 'command -v sh >/dev/null && echo $HOME'
check "stderr apart from stdout" 0 "out" -- "$sock" -- sh -c 'echo out; echo err >&2'
grep -qx err "$tmp/err" && ok "stderr arrives on stderr" || not_ok "stderr arrives on stderr"
check "a command that does not exist: 127" 127 "" -- "$sock" -- no-such-command-here
grep -q "no-such-command-here: No such file or directory" "$tmp/err" &&
	ok "and says why" || not_ok "and says why"
check "a directory is not a command: 126" 126 "" -- "$sock" -- /tmp
check "no such VM: 125" 125 "" -- nobody -- true
check "a socket nobody serves: 125" 125 "" -- "$tmp/none.sock" -- true
check "no command: 125" 125 "" -- "$sock"
check "-u with a name: 125" 125 "" -- -u root "$sock" -- true
check "a relative -w: 125" 125 "" -- -w tmp "$sock" -- true

# stdin to stdout, 10 MiB, compared by hash; EOF passed on.
head -c $((10 * 1024 * 1024)) /dev/urandom >"$tmp/in"
want=$(sha256sum <"$tmp/in" | cut -d' ' -f1)
got=$(timeout 60 "$hintvm" exec "$sock" -- cat <"$tmp/in" | sha256sum | cut -d' ' -f1)
[ "$got" = "$want" ] && ok "10 MiB stdin -> stdout round trip" ||
	{ echo "ok=0 got $got want $want" >"$tmp/err"; not_ok "10 MiB stdin -> stdout round trip"; }

# A signal to hintvm exec reaches the process: SIGTERM, status 143. (-k:
# an exec that ignored it would otherwise outlive the suite's timeout.)
timeout -k 10 60 "$hintvm" exec "$sock" -- sh -c 'echo started; exec sleep 60' \
	</dev/null >"$tmp/out" 2>"$tmp/err" &
exec_pid=$!
for _ in $(seq 600); do
	grep -q started "$tmp/out" 2>/dev/null && break
	sleep 0.1
done
kill -TERM $exec_pid
wait $exec_pid
st=$?
[ $st -eq 143 ] && ok "SIGTERM reaches the process (143)" ||
	{ { echo "# status $st; the agent's log:"; tail -n 5 "$tmp/agent.log"; } >>"$tmp/err"
	  not_ok "SIGTERM reaches the process (143)"; }

# Before the process runs, a signal is hintvm exec's own: an agent that
# accepted the connection but never answers cannot keep it (nor a
# timeout, nor Ctrl-C) waiting.
python3 - "$tmp/mute.sock" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
c, _ = s.accept()
c.recv(64)
c.sendall(b"OK 1\n")
time.sleep(30)
EOF
pids+=($!)
for _ in $(seq 100); do [ -S "$tmp/mute.sock" ] && break; sleep 0.05; done
timeout -k 10 --preserve-status -s TERM 1 "$hintvm" exec "$tmp/mute.sock" -- true \
	</dev/null >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 143 ] && ok "SIGTERM ends an exec whose agent does not answer (143)" ||
	{ echo "# status $st" >>"$tmp/err"; not_ok "SIGTERM ends an exec whose agent does not answer (143)"; }

# Many at once: every one gets its own output and status.
N=${AGENT_TEST_CONCURRENT:-20}
for i in $(seq "$N"); do
	(timeout 60 "$hintvm" exec "$sock" -- sh -c "echo run-$i; exit $((i % 7))" \
		>"$tmp/c$i.out" 2>&1; echo $? >"$tmp/c$i.st") &
done
wait_ok=0
for i in $(seq "$N"); do
	for _ in $(seq 600); do [ -s "$tmp/c$i.st" ] && break; sleep 0.1; done
	[ "$(cat "$tmp/c$i.out")" = "run-$i" ] && [ "$(cat "$tmp/c$i.st")" = $((i % 7)) ] &&
		wait_ok=$((wait_ok + 1))
done
[ $wait_ok -eq "$N" ] && ok "$N concurrent execs" ||
	{ echo "# $wait_ok of $N right" >"$tmp/err"; not_ok "$N concurrent execs"; }

# A terminal driven by a script: the typed command's output comes back,
# the window size is forwarded, Ctrl-C interrupts the guest's foreground
# process and the shell's exit status is hintvm exec's.
{
	printf 'stty size; echo typed-$((6 * 7))\n'
	sleep 1
	printf 'sleep 30\n'
	sleep 2
	printf '\003'
	sleep 1
	printf 'echo after-$((1 + 1)); exit 5\n'
} | timeout 25 script -qec "stty rows 33 cols 101; \"$hintvm\" exec -t \"$sock\" -- sh -i" /dev/null \
	>"$tmp/tty.out" 2>&1
st=$?
tr -d '\r' <"$tmp/tty.out" >"$tmp/out"
: >"$tmp/err"
if [ $st -eq 5 ] && grep -q "typed-42$" "$tmp/out" &&
	grep -q "33 101$" "$tmp/out" && grep -q "after-2$" "$tmp/out"; then
	ok "terminal session: output, window size, Ctrl-C, status"
else
	echo "# status $st" >>"$tmp/err"
	not_ok "terminal session: output, window size, Ctrl-C, status"
fi
check "-t without a terminal: 125" 125 "" -- -t "$sock" -- true

# The embedding example (examples/exec-in-guest.c): stdin in, both
# outputs, the environment it set, the exit.
timeout 60 "$example" "$sock" sh -c 'read l; echo "$GREETING: $l"; echo oops >&2; exit 6' \
	>"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st -eq 6 ] && grep -q "^started: pid [0-9]" "$tmp/out" &&
	grep -qx "stdout: hello from the host: a line from the host" "$tmp/out" &&
	grep -qx "stderr: oops" "$tmp/out" &&
	grep -qx "ended: exit code 6 (status 6)" "$tmp/out"; then
	ok "the embedding example runs a process through libhintvm"
else
	echo "# status $st" >>"$tmp/err"
	not_ok "the embedding example runs a process through libhintvm"
fi

# KEEP outlives its handle; another handle signals it and collects its exit.
timeout 60 "$keep" "$sock" >"$tmp/out" 2>"$tmp/err"
st=$?
[ $st -eq 0 ] && grep -qx "keep: ok status 143" "$tmp/out" &&
	ok "a kept process is signalled and waited for through hvm_process_attach" ||
	{ echo "# status $st" >>"$tmp/err"; not_ok "a kept process is signalled and waited for through hvm_process_attach"; }

# A client that breaks the framing loses its connection, nobody else.
python3 - "$sock" <<'EOF' >"$tmp/out" 2>"$tmp/err"
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"CONNECT 1024\n")
assert s.recv(64).startswith(b"OK ")
s.sendall(struct.pack("<IHHI", 0xffffffff, 1, 0, 1))
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
assert struct.unpack("<IHHI", data[:12])[1] == 65, data  # ERROR
print("closed")
EOF
grep -qx closed "$tmp/out" && ok "an oversized frame is refused and closed" ||
	not_ok "an oversized frame is refused and closed"
check "the agent still serves" 0 "still" -- "$sock" -- echo still

# hintvm-agent -- CMD reports CMD's exit to PATH_1025 and exits with it.
python3 - "$tmp/m.sock" >"$tmp/report" 2>&1 <<'EOF' &
import socket, struct, sys
l = socket.socket(socket.AF_UNIX)
l.bind(sys.argv[1] + "_1025")
l.listen(1)
c, _ = l.accept()
hdr = c.recv(12)
n, t, _, i = struct.unpack("<IHHI", hdr)
p = b""
while len(p) < n:
    p += c.recv(n - len(p))
attrs = {}
while p:
    at, al = struct.unpack("<HH", p[:4])
    attrs[at] = p[4:4 + al]
    p = p[4 + al:]
c.sendall(struct.pack("<IHHI", 0, 64, 0, i))
print("type", t, "signal", struct.unpack("<I", attrs[17])[0] if 17 in attrs else "-")
EOF
report_pid=$!
for _ in $(seq 100); do [ -S "$tmp/m.sock_1025" ] && break; sleep 0.05; done
timeout 30 "$agent" --hybrid "$tmp/m.sock" -- sh -c 'kill -TERM $$' 2>"$tmp/err"
st=$?
wait $report_pid
if [ $st -eq 143 ] && grep -qx "type 8 signal 15" "$tmp/report"; then
	ok "the main process's exit is reported (EXIT_REPORT, SIGTERM)"
else
	echo "# status $st, report: $(cat "$tmp/report")" >>"$tmp/err"
	not_ok "the main process's exit is reported (EXIT_REPORT, SIGTERM)"
fi

# hintvm initramfs: the agent, /dev/console and modules with their
# dependencies first, from a made-up modules directory.
mods=$tmp/lib/modules/9.9.9-test
mkdir -p "$mods/kernel/a" "$mods/kernel/b"
for m in virtio virtio_ring virtio_pci vsock vmw_vsock_virtio_transport_common \
	vmw_vsock_virtio_transport unrelated; do
	echo "module $m" >"$mods/kernel/a/$m.ko"
done
cat >"$mods/modules.dep" <<'EOF'
kernel/a/virtio_pci.ko: kernel/a/virtio.ko kernel/a/virtio_ring.ko
kernel/a/virtio.ko:
kernel/a/virtio_ring.ko:
kernel/a/vmw_vsock_virtio_transport.ko: kernel/a/vmw_vsock_virtio_transport_common.ko kernel/a/vsock.ko kernel/a/virtio.ko
kernel/a/vmw_vsock_virtio_transport_common.ko: kernel/a/vsock.ko
kernel/a/vsock.ko:
kernel/a/unrelated.ko:
EOF
echo "kernel/fs/ext4/ext4.ko" >"$mods/modules.builtin"
expect "initramfs from a modules directory" 0 "" -- initramfs -M "$mods" -o "$tmp/i.cpio"
mkdir "$tmp/x"
(cd "$tmp/x" && cpio -idm --quiet 2>/dev/null <"$tmp/i.cpio")
order=$(tr '\n' ' ' <"$tmp/x/lib/modules/hintvm-agent/order" 2>/dev/null)
: >"$tmp/err"
echo "# order: $order" >"$tmp/out"
case "$order" in
"virtio.ko virtio_ring.ko virtio_pci.ko vsock.ko vmw_vsock_virtio_transport_common.ko vmw_vsock_virtio_transport.ko ")
	ok "modules in dependency order, unrelated ones left out" ;;
*) not_ok "modules in dependency order, unrelated ones left out" ;;
esac
cmp -s "$tmp/x/init" "$agent" && [ -x "$tmp/x/init" ] && ok "the agent is /init" ||
	not_ok "the agent is /init"
cpio -tv --quiet <"$tmp/i.cpio" 2>/dev/null | grep -q '^crw.* 5, *1 .* dev/console$' &&
	ok "/dev/console is a character device 5,1" || not_ok "/dev/console is a character device 5,1"
# An unpacked kernel package has no modules.dep: modules.order, and each
# module's ELF .modinfo "depends=" (compiled here as a module has it).
pkgmods=$tmp/pkg/lib/modules/9.9.9-pkg
mkdir -p "$pkgmods/kernel/net"
mod() { # NAME DEPENDS
	printf '__attribute__((section(".modinfo"), used)) static const char i[] = "license=GPL\\0depends=%s\\0name=%s";\n' \
		"$2" "$1" >"$tmp/m.c"
	cc -c -o "$pkgmods/kernel/net/$1.ko" "$tmp/m.c"
	echo "kernel/net/$1.ko" >>"$pkgmods/modules.order"
}
mod vsock ""
mod virtio ""
mod vmw_vsock_virtio_transport_common vsock
mod vmw_vsock_virtio_transport "vmw_vsock_virtio_transport_common,vsock,virtio"
mod unrelated ""
expect "initramfs from an unpacked package (no modules.dep)" 0 "" -- \
	initramfs -M "$pkgmods" -o "$tmp/p.cpio"
rm -rf "$tmp/x" && mkdir "$tmp/x"
(cd "$tmp/x" && cpio -idm --quiet 2>/dev/null <"$tmp/p.cpio")
order=$(tr '\n' ' ' <"$tmp/x/lib/modules/hintvm-agent/order" 2>/dev/null)
echo "# order: $order" >"$tmp/out"
case "$order" in
"vsock.ko vmw_vsock_virtio_transport_common.ko virtio.ko vmw_vsock_virtio_transport.ko ")
	ok "dependencies from .modinfo, in order" ;;
*) not_ok "dependencies from .modinfo, in order" ;;
esac

expect "initramfs --file" 0 "" -- initramfs --no-modules -f "$agent=bin/tool" -o "$tmp/f.cpio"
cpio -t --quiet <"$tmp/f.cpio" 2>/dev/null | grep -qx "bin/tool" && ok "extra files land at DEST" ||
	not_ok "extra files land at DEST"
expect "initramfs from no modules directory" 1 "modules.order" -- initramfs -M "$tmp" -o "$tmp/n.cpio"
expect "initramfs --file with .." 1 "no \.\." -- initramfs --no-modules -f "$agent=../x" -o "$tmp/n.cpio"
HINTVM_CACHE_DIR=$tmp/cache expect "initramfs into the cache" 0 "$tmp/cache/agent-9.9.9-test-" -- initramfs -M "$mods"
expect "run --agent without a kernel" 2 "give --kernel" -- run --agent
expect "--agent-stdio without --agent" 2 "needs --agent" -- run --agent-stdio

# A VM name leads hintvm exec to the VM's vsock socket (through the
# control socket's info); the test kernel has no agent to answer.
if [ -w /dev/kvm ]; then
	"$hintvm" run -p "test=smp-count iterations=4294967296" --console none \
		--name vt --vsock "cid=3,uds=$tmp/vt.vsock" </dev/null >"$tmp/vm.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 200); do
		[ -S "$tmp/vt.vsock" ] && [ -S "$HINTVM_RUNTIME_DIR/vt.sock" ] && break
		sleep 0.05
	done
	expect "exec by VM name finds its vsock socket" 125 \
		"$tmp/vt.vsock: no agent listens on vsock port 1024" -- exec vt -- true
else
	skip "exec by VM name finds its vsock socket" "/dev/kvm is not usable"
fi

# A pod container's own cgroup and PID namespace (EXEC's CGROUP, PIDNS),
# as the shim asks for them: root only (unshare, setns, mounting /proc).
# The task cgroup is a directory laid out as cgroup2's: the agent writes
# the container's memory.max and cgroup.procs there, as files.
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$tmp/cg/task" "$tmp/cg/ctr-c1"
	echo max >"$tmp/cg/ctr-c1/memory.max"
	: >"$tmp/cg/ctr-c1/cgroup.procs"
	echo "max 100000" >"$tmp/cg/ctr-c1/cpu.max"
	exec 9<"$tmp/cg/task"
	HINTVM_TASK_CGROUP_FD=9 "$agent" --hybrid "$tmp/c.sock" 2>"$tmp/c-agent.log" 9<&9 &
	pids+=($!)
	exec 9<&-
	for _ in $(seq 100); do [ -S "$tmp/c.sock" ] && break; sleep 0.05; done
	timeout 90 "$container" "$tmp/c.sock" "$tmp/cg" >"$tmp/c.out" 2>&1
	while read -r line; do
		case $line in
		"ok "*) ok "${line#ok - }" ;;
		"not ok "*)
			cp "$tmp/c-agent.log" "$tmp/err"; : >"$tmp/out"
			not_ok "${line#not ok - }" ;;
		*) echo "# $line" ;;
		esac
	done <"$tmp/c.out"
	grep -q "^ok - container: a new container" "$tmp/c.out" ||
		not_ok "container: agent-container ran to its end"
else
	skip "container: cgroup and PID namespace" "not root"
fi

echo "1..$n"
[ $failed -eq 0 ]
