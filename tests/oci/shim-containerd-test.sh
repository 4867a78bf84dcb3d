#!/bin/bash
# containerd-shim-hintvm-v2 driven by real containerd and ctr on this host
# (docs/shim.md): a containerd of its own (root, state and socket in a
# temporary directory, the CRI plugin off), `ctr run --runtime
# io.containerd.hintvm.v2`, the VMs on hintvm's built-in test kernel
# (`kernel = builtin`), so no Linux guest is needed; each task picks its
# test by the io.hintvm.cmdline annotation. The L1 cases of the oci tier
# (tests/oci/l1-tests.sh, shim-*) run Linux guests. TAP output; every case
# skips without containerd, root or /dev/kvm.
#
# usage: shim-containerd-test.sh CONTAINERD_SHIM_HINTVM_V2
set -u
shim=$(realpath "$1")
tmp=$(mktemp -d)
ns=shimtest-$$
cd_pid=""
# shellcheck source=../cli/tap.sh
. "$(dirname "$0")/../cli/tap.sh"

cleanup() {
	if [ -n "$cd_pid" ]; then
		for t in $(c task ls -q 2>/dev/null); do
			c task kill -s SIGKILL "$t" >/dev/null 2>&1
		done
		sleep 0.5
		for t in $(c task ls -q 2>/dev/null); do c task rm -f "$t" >/dev/null 2>&1; done
		for t in $(c c ls -q 2>/dev/null); do c c rm "$t" >/dev/null 2>&1; done
		kill "$cd_pid" 2>/dev/null
		wait "$cd_pid" 2>/dev/null
	fi
	grep " $tmp/" /proc/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l
	rm -rf "$tmp"
}
trap cleanup EXIT

skip_all() {
	for name in "ctr run: the VM's output, status 0" \
		"ctr run: a non-zero exit status comes back" \
		"events: create, start, exit with its status, delete" \
		"ctr run -d: ps, pause/resume, kill -a SIGKILL: 137, rm" \
		"the VMM killed with SIGKILL: ctr run returns 137" \
		"the shim killed with SIGKILL: containerd's delete ends the VM" \
		"ctr run -t: a terminal task, a typed line reaches the guest" \
		"ctr task exec: the exec's status, stderr and events (no guest agent here)" \
		"nothing is left: state, sockets, processes, mounts"; do
		skip "$name" "$1"
	done
	echo "1..$n"
	exit 0
}
command -v containerd >/dev/null && command -v ctr >/dev/null ||
	skip_all "containerd and ctr are not installed"
[ "$(id -u)" = 0 ] || skip_all "needs root (containerd)"
[ -r /dev/kvm ] && [ -w /dev/kvm ] || skip_all "/dev/kvm is not usable"

mkdir -p "$tmp/bin" "$tmp/root" "$tmp/state"
ln -s "$shim" "$tmp/bin/containerd-shim-hintvm-v2"
cat > "$tmp/runtime.conf" <<'EOF'
kernel = builtin
cmdline = test=hello
annotations = cmdline
EOF
cat > "$tmp/config.toml" <<EOF
version = 2
root = "$tmp/root"
state = "$tmp/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$tmp/containerd.sock"
[ttrpc]
  address = "$tmp/containerd.sock.ttrpc"
EOF
PATH=$tmp/bin:$PATH HINTVM_RUNTIME_CONFIG=$tmp/runtime.conf \
	containerd --config "$tmp/config.toml" > "$tmp/containerd.log" 2>&1 &
cd_pid=$!
c() { ctr --address "$tmp/containerd.sock" -n "$ns" "$@"; }
i=0
while ! c version >/dev/null 2>&1 && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
c version >/dev/null 2>&1 || { cat "$tmp/containerd.log"; skip_all "containerd did not start"; }

# An image of one small layer: the test kernel runs no process of it.
image=docker.io/hintvm/shim-test:latest
make_image() {
	local d=$tmp/image layer config manifest
	mkdir -p "$d/blobs/sha256" "$tmp/layer/etc"
	echo "root:x:0:0:root:/:/bin/sh" > "$tmp/layer/etc/passwd"
	tar -C "$tmp/layer" --numeric-owner --owner=0 --group=0 -cf "$tmp/layer.tar" .
	layer=$(sha256sum < "$tmp/layer.tar" | cut -d' ' -f1)
	mv "$tmp/layer.tar" "$d/blobs/sha256/$layer"
	printf '{"architecture":"%s","os":"linux","config":{"Cmd":["true"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$(dpkg --print-architecture 2>/dev/null || echo amd64)" "$layer" > "$tmp/c.json"
	config=$(sha256sum < "$tmp/c.json" | cut -d' ' -f1)
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		"$config" "$(stat -c %s "$tmp/c.json")" "$layer" "$(stat -c %s "$d/blobs/sha256/$layer")" > "$tmp/m.json"
	manifest=$(sha256sum < "$tmp/m.json" | cut -d' ' -f1)
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s"}}]}' \
		"$manifest" "$(stat -c %s "$tmp/m.json")" "$image" > "$d/index.json"
	mv "$tmp/c.json" "$d/blobs/sha256/$config"
	mv "$tmp/m.json" "$d/blobs/sha256/$manifest"
	echo '{"imageLayoutVersion":"1.0.0"}' > "$d/oci-layout"
	tar -C "$d" -cf "$tmp/image.tar" .
	c image import "$tmp/image.tar"
}
make_image > "$tmp/image.log" 2>&1 || { cat "$tmp/image.log"; skip_all "the test image cannot be imported"; }

R="--runtime io.containerd.hintvm.v2"
# A task that runs until killed: the spinlock benchmark for 10 minutes.
LONG="io.hintvm.cmdline=test=spinlock ms=600000"
c events > "$tmp/events" 2>&1 &
events_pid=$!

# verdict NAME PROBLEMS: ok when PROBLEMS is empty.
verdict() {
	if [ -z "$2" ]; then ok "$1"; else echo "# $2" > "$tmp/err"; not_ok "$1"; fi
}
wait_status() { # TASK STATUS
	local i=0
	while ! c task ls 2>/dev/null | grep -q "^$1 .*$2" && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	c task ls 2>/dev/null | grep -q "^$1 .*$2"
}
# wait_event PATTERN: until ctr events has logged it (5 s at most): the
# events reach ctr through containerd, after the command that caused them.
wait_event() {
	local i=0
	while ! grep -q -- "$1" "$tmp/events" && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	grep -q -- "$1" "$tmp/events"
}
gone() { [ ! -d "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

out=$(timeout 60 ctr --address "$tmp/containerd.sock" -n "$ns" run --rm $R "$image" t-run true 2>"$tmp/err")
st=$?
echo "$out" > "$tmp/out"
p=""
[ $st = 0 ] || p="status $st;"
echo "$out" | grep -q 'RESULT test=hello cpus=1 ok=1' || p="$p no RESULT line;"
verdict "ctr run: the VM's output, status 0" "$p"

timeout 60 ctr --address "$tmp/containerd.sock" -n "$ns" run --rm $R \
	--annotation io.hintvm.cmdline=test=nosuch "$image" t-exit true > "$tmp/out" 2>&1
st=$?
[ $st = 1 ] && p="" || p="status $st, expected 1"
verdict "ctr run: a non-zero exit status comes back" "$p"

p=""
for topic in create start exit delete; do
	wait_event "/tasks/$topic {\"container_id\":\"t-exit\"" || p="$p no /tasks/$topic;"
done
wait_event '/tasks/exit {"container_id":"t-exit","id":"t-exit","pid":[0-9]*,"exit_status":1,' ||
	p="$p no exit_status 1 in TaskExit;"
cp "$tmp/events" "$tmp/out"
verdict "events: create, start, exit with its status, delete" "$p"

p=""
c run -d $R --annotation "$LONG" "$image" t-kill true > "$tmp/out" 2>&1 || p="run -d failed;"
wait_status t-kill RUNNING || p="$p not RUNNING;"
vmm=$(c task ls | awk '$1 == "t-kill" { print $2 }')
c task ps t-kill | grep -q "^$vmm " || p="$p ps does not list VMM [$vmm];"
c task pause t-kill >> "$tmp/out" 2>&1 && wait_status t-kill PAUSED || p="$p not PAUSED;"
c task resume t-kill >> "$tmp/out" 2>&1 && wait_status t-kill RUNNING || p="$p not RUNNING after resume;"
c task kill -a -s SIGKILL t-kill >> "$tmp/out" 2>&1 || p="$p kill -a failed;"
wait_status t-kill STOPPED || p="$p not STOPPED;"
c task rm t-kill >> "$tmp/out" 2>&1 || p="$p task rm failed;"
grep -q 'exit code 137' "$tmp/out" || p="$p no exit code 137;"
c c rm t-kill >> "$tmp/out" 2>&1 || p="$p c rm failed;"
verdict "ctr run -d: ps, pause/resume, kill -a SIGKILL: 137, rm" "$p"

p=""
timeout 60 ctr --address "$tmp/containerd.sock" -n "$ns" run --rm $R \
	--annotation "$LONG" "$image" t-vmm true > "$tmp/out" 2>&1 &
run_pid=$!
wait_status t-vmm RUNNING || p="not RUNNING;"
vmm=$(c task ls | awk '$1 == "t-vmm" { print $2 }')
[ -n "$vmm" ] && kill -9 "$vmm"
wait $run_pid
st=$?
[ $st = 137 ] || p="$p ctr run returned $st, expected 137;"
verdict "the VMM killed with SIGKILL: ctr run returns 137" "$p"

p=""
c run -d $R --annotation "$LONG" "$image" t-dead true > "$tmp/out" 2>&1 || p="run -d failed;"
wait_status t-dead RUNNING || p="$p not RUNNING;"
vmm=$(c task ls | awk '$1 == "t-dead" { print $2 }')
# The VMM process has the shim's command line too (a fork, no exec): the
# shim is the one whose name is not hintvm-vmm.
shim_pid=$(for pid in $(pgrep -f "containerd-shim-hintvm-v2 -namespace $ns -id t-dead "); do
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = hintvm-vmm ] || echo "$pid"
done | head -n 1)
if [ -z "$vmm" ] || [ -z "$shim_pid" ]; then
	p="$p no VMM [$vmm] or shim [$shim_pid];"
else
	kill -9 "$shim_pid"
	i=0
	while ! gone "$vmm" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	gone "$vmm" || p="$p VMM $vmm still there;"
fi
c task rm t-dead >> "$tmp/out" 2>&1
c c rm t-dead >> "$tmp/out" 2>&1 || p="$p c rm failed;"
[ ! -e "/run/hintvm-shim/$ns/t-dead" ] || p="$p runtime state left;"
verdict "the shim killed with SIGKILL: containerd's delete ends the VM" "$p"

p=""
# ctr -t wants a terminal: script(1) gives it one. The typeahead test
# reads one line from the guest's serial port: typed into script's
# terminal, it goes ctr -> stdin fifo -> shim -> pty master -> VMM.
(sleep 2; printf 'typed-7\r'; sleep 10) | timeout 60 script -qec \
	"ctr --address $tmp/containerd.sock -n $ns run --rm -t $R --annotation 'io.hintvm.cmdline=test=typeahead typeahead.wait_ms=30000' $image t-tty true" \
	/dev/null > "$tmp/out" 2>&1
st=$?
[ $st = 0 ] || p="status $st;"
grep -q 'RESULT test=typeahead cpus=1 ok=1 got=typed-7 len=7' "$tmp/out" || p="$p the typed line did not reach the guest;"
verdict "ctr run -t: a terminal task, a typed line reaches the guest" "$p"

# ctr task exec through the shim: the test kernel has no guest agent, so
# the runtime's exec (the exec's host process) says so on the exec's
# stderr and exits 1; that status comes back as the exec's, with its
# exec-added, exec-started and exit events.
p=""
c run -d $R --annotation "$LONG" "$image" t-exec true > "$tmp/out" 2>&1 || p="run -d failed;"
wait_status t-exec RUNNING || p="$p not RUNNING;"
c task exec --exec-id e1 t-exec true > "$tmp/exec.out" 2> "$tmp/exec.err"
st=$?
[ $st = 1 ] || p="$p exec status $st, expected 1;"
grep -q 'has no guest agent socket' "$tmp/exec.err" || p="$p the runtime's exec error did not reach the exec's stderr;"
wait_event '/tasks/exec-added {"container_id":"t-exec","exec_id":"e1"}' || p="$p no exec-added;"
wait_event '/tasks/exec-started {"container_id":"t-exec","exec_id":"e1","pid":' || p="$p no exec-started;"
wait_event '/tasks/exit {"container_id":"t-exec","id":"e1","pid":[0-9]*,"exit_status":1,' || p="$p no exit of e1 with 1;"
c task exec --exec-id e2 -t t-exec true >> "$tmp/out" 2>&1 < /dev/null && p="$p exec -t succeeded;"
c task kill -s SIGKILL t-exec >> "$tmp/out" 2>&1
wait_status t-exec STOPPED
c task rm t-exec >> "$tmp/out" 2>&1
c c rm t-exec >> "$tmp/out" 2>&1
cat "$tmp/exec.err" >> "$tmp/out"
verdict "ctr task exec: the exec's status, stderr and events (no guest agent here)" "$p"

kill "$events_pid" 2>/dev/null
sleep 0.5
p=""
left=$(ls -A "/run/hintvm-shim/$ns" 2>/dev/null)
[ -z "$left" ] || p="state [$left];"
! ls /run/hintvm-shim/console-*.sock > /dev/null 2>&1 || p="$p console sockets left;"
for id in t-run t-exit t-kill t-vmm t-dead t-exec t-tty; do
	sock=/run/containerd/s/$(printf '%s' "$tmp/containerd.sock/$ns/$id" | sha256sum | cut -d' ' -f1)
	[ ! -e "$sock" ] || p="$p socket of $id;"
done
# A shim leaves once containerd's Shutdown is answered: give it a moment.
i=0
while pgrep -f "containerd-shim-hintvm-v2 -namespace $ns " > /dev/null && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
procs=$(pgrep -f "containerd-shim-hintvm-v2 -namespace $ns " | tr '\n' ' ')
[ -z "$procs" ] || p="$p processes [$procs];"
! grep -q " $tmp/state/" /proc/mounts || p="$p mounts left;"
[ -n "$(c task ls -q)" ] && p="$p tasks left;"
verdict "nothing is left: state, sockets, processes, mounts" "$p"
rmdir "/run/hintvm-shim/$ns" 2>/dev/null

echo "1..$n"
[ $failed -eq 0 ]
