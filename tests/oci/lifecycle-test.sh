#!/bin/bash
# The OCI runtime-spec lifecycle (create, start, state, kill, delete) and
# runc's command line as engines use it, checked against hintvm-runtime on
# this host: the VMs run hintvm's built-in test kernel (`kernel = builtin`
# in the runtime configuration), so no Linux guest is needed; the real
# clients (containerd, podman) drive it in the oci-x86 tier. TAP output.
#
# usage: lifecycle-test.sh HINTVM_RUNTIME
set -u
# Absolute: some cases run it from another directory (spec).
runtime=$(realpath "$1")
tmp=$(mktemp -d)
root=$tmp/state
trap 'for d in "$root"/*/; do [ -d "$d" ] && "$runtime" --root "$root" delete --force "$(basename "$d")" >/dev/null 2>&1; done; rm -rf "$tmp"' EXIT
# shellcheck source=../cli/tap.sh
. "$(dirname "$0")/../cli/tap.sh"

have_kvm=0
[ -r /dev/kvm ] && [ -w /dev/kvm ] && have_kvm=1

cat > "$tmp/runtime.conf" <<'EOF'
# The test kernel; each container picks its payload by annotation.
kernel = builtin
cmdline = test=hello
annotations = cmdline, halt-poll, cpus, mem
EOF
rt() {
	"$runtime" --root "$root" --log "$tmp/log.json" --log-format json \
		--config "$tmp/runtime.conf" "$@"
}

# bundle NAME [JSON for annotations] [JSON for linux]: a bundle directory.
bundle() {
	local dir=$tmp/$1 ann=${2:-"{}"} linux=${3:-"{}"}
	mkdir -p "$dir/rootfs"
	cat > "$dir/config.json" <<EOF
{
	"ociVersion": "1.0.2",
	"process": { "terminal": false, "user": { "uid": 0, "gid": 0 },
		"args": [ "sh" ], "env": [ "PATH=/bin" ], "cwd": "/" },
	"root": { "path": "rootfs", "readonly": true },
	"hostname": "lifecycle",
	"annotations": $ann,
	"linux": $linux
}
EOF
	echo "$dir"
}

# check NAME COMMAND...: a case that passes when COMMAND succeeds.
check() {
	local name=$1
	shift
	if "$@" >"$tmp/out" 2>"$tmp/err"; then ok "$name"; else not_ok "$name"; fi
}
kvm_check() {
	if [ $have_kvm = 1 ]; then check "$@"; else skip "$1" "/dev/kvm is not usable"; fi
}
# gone PID: the process has exited (reaped, or a zombie). One read of its
# status: it may be reaped between two.
gone() {
	local state
	state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -z "$state" ] || [ "$state" = Z ]
}

status_of() { rt state "$1" 2>/dev/null | sed -n 's/.*"status": *"\([a-z]*\)".*/\1/p'; }
pid_of() { rt state "$1" 2>/dev/null | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p'; }
# wait_status ID STATUS: up to 20 s.
wait_status() {
	local i=0
	while [ "$(status_of "$1")" != "$2" ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(status_of "$1")" = "$2" ]
}
last_log_error() { grep '"level":"error"' "$tmp/log.json" | tail -n 1; }

# ---- without a VM --------------------------------------------------------
check "--version names the runtime" \
	bash -c "'$runtime' --version | grep -q '^hintvm-runtime version'"
check "features is a runtime-spec features document" \
	bash -c "'$runtime' features | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); assert d[\"ociVersionMax\"] and \"mount\" in d[\"linux\"][\"namespaces\"], d'"
case_state_missing() {
	! rt state nosuch && last_log_error | grep -q 'container \\"nosuch\\" does not exist'
}
check "state of an unknown container fails, the error in the JSON log" \
	case_state_missing
case_bad_config() {
	local b
	b=$(bundle bad)
	echo '{"ociVersion": "1.0.2", "process": {"args": 7}}' > "$b/config.json"
	! rt create --bundle "$b" bad && last_log_error | grep -q 'process.args is not an array' &&
		[ ! -e "$root/bad" ]
}
check "a malformed config.json is refused by name, nothing left behind" \
	case_bad_config
case_bad_id() {
	! rt create --bundle "$(bundle badid)" ../escape &&
		last_log_error | grep -q 'invalid container id'
}
check "an id that is not a path component is refused" case_bad_id
case_annotation_refused() {
	local b
	b=$(bundle ann '{"io.hintvm.kernel": "/etc/shadow"}')
	! rt create --bundle "$b" ann &&
		last_log_error | grep -q 'pods may not set kernel' && [ ! -e "$root/ann" ]
}
check "an io.hintvm annotation outside the allow-list is refused" \
	case_annotation_refused
case_small_memory() {
	local b
	b=$(bundle small '{}' '{"resources": {"memory": {"limit": 33554432}}}')
	! rt create --bundle "$b" small &&
		last_log_error | grep -q 'below what a VM needs'
}
check "a memory limit below guest minimum plus overhead is refused" \
	case_small_memory

# `spec`, as users script `runc spec`: a starter config.json in the bundle
# (or the current directory), never over an existing one.
case_spec_writes() {
	mkdir -p "$tmp/spec" && (cd "$tmp/spec" && rt spec) &&
		python3 - "$tmp/spec/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["process"]["args"] == ["sh"], c["process"]["args"]
assert c["process"]["terminal"] is True
assert c["root"]["path"] == "rootfs", c["root"]
assert c["root"]["readonly"] is True
PY
}
check "spec writes a valid config.json: process.args [sh], root.path rootfs, a terminal" \
	case_spec_writes
case_spec_no_overwrite() {
	mkdir -p "$tmp/spec-own" && echo '{"mine": 1}' > "$tmp/spec-own/config.json" &&
		! rt spec --bundle "$tmp/spec-own" 2> "$tmp/spec.err" &&
		grep -q "spec: $tmp/spec-own/config.json exists: remove it first" "$tmp/spec.err" &&
		[ "$(cat "$tmp/spec-own/config.json")" = '{"mine": 1}' ]
}
check "spec refuses to overwrite a bundle's config.json, naming it, and leaves it as it was" \
	case_spec_no_overwrite
case_spec_no_bundle() {
	! rt spec --bundle "$tmp/no-such-bundle" 2> "$tmp/spec.err" &&
		grep -q "cannot create $tmp/no-such-bundle/config.json: No such file" "$tmp/spec.err"
}
check "spec into a bundle directory that does not exist fails, naming the path" \
	case_spec_no_bundle

# ---- the lifecycle, with VMs ---------------------------------------------
case_create() {
	rt create --bundle "$(bundle c1 '{"io.hintvm.cmdline": "test=hello"}')" \
		--pid-file "$tmp/c1.pid" c1 </dev/null >"$tmp/c1.out" 2>&1 &&
		[ "$(status_of c1)" = created ] &&
		[ "$(pid_of c1)" = "$(cat "$tmp/c1.pid")" ] &&
		kill -0 "$(cat "$tmp/c1.pid")"
}
kvm_check "create: status created, --pid-file names the live VMM process" \
	case_create
kvm_check "create of an existing id fails" \
	bash -c "! '$runtime' --root '$root' --config '$tmp/runtime.conf' create --bundle '$tmp/c1' c1"
case_start() {
	rt start c1 && wait_status c1 stopped &&
		grep -q 'RESULT test=hello cpus=1 ok=1' "$tmp/c1.out"
}
kvm_check "start runs the VM; its output reaches the container's stdout" \
	case_start
kvm_check "start of a stopped container fails" bash -c "! '$runtime' --root '$root' start c1"
kvm_check "kill of a stopped container fails" bash -c "! '$runtime' --root '$root' kill c1 KILL"
case_delete_stopped() {
	rt delete c1 && [ ! -e "$root/c1" ] && ! rt state c1
}
kvm_check "delete of a stopped container leaves no state behind" \
	case_delete_stopped

# process.terminal, as containerd's shim and conmon run it: the pty master
# goes to --console-socket, and the line typed into it as soon as it
# arrives (before start: the guest is far from reading) reaches the guest
# whole (the test kernel's typeahead payload opens COM1 the way Linux
# does). The pty is fully raw: nothing typed is echoed by the host, and
# the guest's bare "\n" gets no CR.
case_terminal_typeahead() {
	local b py typed=typed-into-the-console-socket-before-start-0123456789
	b=$(bundle tty '{"io.hintvm.cmdline": "test=typeahead"}')
	sed -i 's/"terminal": false/"terminal": true/' "$b/config.json"
	timeout 60 python3 - "$tmp/tty.sock" "$tmp/tty.out" "$typed" <<'PY' &
import array, os, socket, sys
path, out, typed = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
conn, _ = srv.accept()
fds = array.array("i")
_, anc, _, _ = conn.recvmsg(1, socket.CMSG_LEN(fds.itemsize))
fds.frombytes(anc[0][2][:fds.itemsize])
os.write(fds[0], (typed + "\r").encode())
with open(out, "wb") as f:
    while True:
        try:
            data = os.read(fds[0], 4096)
        except OSError:  # EIO: the VMM process closed the terminal
            break
        if not data:
            break
        f.write(data)
PY
	py=$!
	for _ in $(seq 100); do [ -S "$tmp/tty.sock" ] && break; sleep 0.1; done
	rt create --bundle "$b" --console-socket "$tmp/tty.sock" tty </dev/null >"$tmp/tty.create" 2>&1 &&
		rt start tty && wait_status tty stopped && wait $py &&
		grep -q "RESULT test=typeahead cpus=1 ok=1 got=$typed len=${#typed}\$" "$tmp/tty.out" &&
		[ "$(grep -c "$typed" "$tmp/tty.out")" = 1 ] &&
		! grep -q $'\r' "$tmp/tty.out" && rt delete tty
}
kvm_check "a terminal container: a line typed before start reaches the guest whole; the pty adds no CR and no echo" \
	case_terminal_typeahead

# A VM that runs until it is told otherwise: the flood payload, output
# thrown away.
case_long() {
	rt create --bundle "$(bundle long '{"io.hintvm.cmdline": "test=flood"}')" \
		--pid-file "$tmp/long.pid" long </dev/null >/dev/null 2>&1 &&
		rt start long && [ "$(status_of long)" = running ]
}
kvm_check "a long-running container is running after start" case_long
kvm_check "ps --format json lists the VMM process" \
	bash -c "[ \"\$('$runtime' --root '$root' ps --format json long)\" = \"[\$(cat '$tmp/long.pid')]\" ]"
case_pause() {
	rt pause long && [ "$(status_of long)" = paused ] &&
		rt resume long && [ "$(status_of long)" = running ]
}
kvm_check "pause and resume through the VM's control socket" case_pause
kvm_check "delete of a running container without --force fails" \
	bash -c "! '$runtime' --root '$root' delete long && [ -d '$root/long' ]"
case_kill_term() {
	rt kill long TERM && wait_status long stopped
}
kvm_check "kill TERM stops the VM" case_kill_term
case_delete_after_kill() {
	local pid
	pid=$(cat "$tmp/long.pid")
	rt delete long && [ ! -e "$root/long" ] &&
		gone "$pid"
}
kvm_check "delete after kill: no state, no VMM process" case_delete_after_kill
case_force() {
	local pid
	rt create --bundle "$tmp/long" --pid-file "$tmp/f.pid" forced \
		</dev/null >/dev/null 2>&1 && rt start forced || return 1
	pid=$(cat "$tmp/f.pid")
	rt delete --force forced && [ ! -e "$root/forced" ] &&
		gone "$pid"
}
kvm_check "delete --force of a running container ends its VM" case_force
case_delete_created() {
	local pid
	rt create --bundle "$tmp/long" --pid-file "$tmp/d.pid" created \
		</dev/null >/dev/null 2>&1 || return 1
	pid=$(cat "$tmp/d.pid")
	rt delete created && [ ! -e "$root/created" ] &&
		gone "$pid"
}
kvm_check "delete of a created (never started) container" case_delete_created
# containerd passes --root .../runc/default; on a node where no other
# runtime ran yet, even its parent is missing: create makes both, as runc.
case_deep_root() {
	local deep=$tmp/fresh/runc/default
	"$runtime" --root "$deep" --config "$tmp/runtime.conf" create \
		--bundle "$tmp/long" deep </dev/null >/dev/null 2>&1 &&
		[ -d "$deep/deep" ] && "$runtime" --root "$deep" delete deep &&
		[ ! -e "$deep/deep" ]
}
kvm_check "create makes a --root whose parent does not exist yet" case_deep_root
kvm_check "kill KILL of a running container" bash -c "
	'$runtime' --root '$root' --config '$tmp/runtime.conf' create --bundle '$tmp/long' k </dev/null >/dev/null 2>&1 &&
	'$runtime' --root '$root' start k &&
	'$runtime' --root '$root' kill k 9 &&
	for i in \$(seq 50); do
		'$runtime' --root '$root' state k | grep -q '\"status\": *\"stopped\"' && break
		sleep 0.2
	done &&
	'$runtime' --root '$root' state k | grep -q '\"status\": *\"stopped\"' &&
	'$runtime' --root '$root' delete k"

# Exit statuses: run waits for the VMM process, whose status is the
# container's.
case_run_status() {
	local st b
	b=$(bundle ok '{"io.hintvm.cmdline": "test=hello"}')
	rt run --bundle "$b" okrun \
		</dev/null >/dev/null 2>&1
	st=$?
	rt delete okrun || return 1
	[ $st = 0 ] || { echo "status $st, expected 0"; return 1; }
	b=$(bundle bad2 '{"io.hintvm.cmdline": "test=nosuch"}')
	rt run --bundle "$b" badrun \
		</dev/null >/dev/null 2>&1
	st=$?
	rt delete badrun || return 1
	[ $st != 0 ] || { echo "status 0 for a failing guest"; return 1; }
}
kvm_check "the VMM's exit status is the container's (0 and non-zero)" \
	case_run_status

# cgroupsPath: the VMM process is placed there.
case_cgroup() {
	local cg=/hintvm-lifecycle-$$ pid procs
	rt create --bundle "$(bundle cg '{"io.hintvm.cmdline": "test=flood"}' "{\"cgroupsPath\": \"$cg\"}")" \
		--pid-file "$tmp/cg.pid" cg </dev/null >/dev/null 2>&1 || return 1
	pid=$(cat "$tmp/cg.pid")
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		procs=/sys/fs/cgroup$cg/cgroup.procs
	else
		procs=/sys/fs/cgroup/memory$cg/cgroup.procs
	fi
	grep -qx "$pid" "$procs"
	local st=$?
	rt delete --force cg
	for d in /sys/fs/cgroup$cg /sys/fs/cgroup/*"$cg"; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	return $st
}
# The cgroup directory of CONTROLLER for cgroupsPath CG: cgroup v2's one
# tree, or the v1 hierarchy that has the controller (co-mounted with
# others or on its own, as cpu and cpuacct are on some hosts).
cgdir() { # CONTROLLER CG
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo "/sys/fs/cgroup$2"
		return
	fi
	awk -v c="$1" '{
		for (i = 1; $i != "-"; i++) ;
		if ($(i + 1) != "cgroup") next
		n = split($(i + 3), o, ",")
		for (j = 1; j <= n; j++) if (o[j] == c) { print $5; exit }
	}' /proc/self/mountinfo | sed "s|\$|$2|"
}
cg_cleanup() { # CG
	for d in /sys/fs/cgroup$1 /sys/fs/cgroup/*"$1"; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
}
# linux.resources: the CPU quota and the memory limit are where the
# kernel enforces them, in each controller's own hierarchy, and the VMM
# is in both.
case_cgroup_limits() {
	local cg=/hintvm-limits-$$ pid cpu mem st=0
	rt create --bundle "$(bundle cgl '{"io.hintvm.cmdline": "test=flood"}' \
		"{\"cgroupsPath\": \"$cg\", \"resources\": {\"cpu\": {\"quota\": 50000, \"period\": 100000}, \"memory\": {\"limit\": 536870912}}}")" \
		--pid-file "$tmp/cgl.pid" cgl </dev/null >/dev/null 2>&1 || return 1
	pid=$(cat "$tmp/cgl.pid")
	cpu=$(cgdir cpu "$cg") mem=$(cgdir memory "$cg")
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo "cpu.max: $(cat "$cpu/cpu.max"), memory.max: $(cat "$mem/memory.max")"
		[ "$(cat "$cpu/cpu.max")" = "50000 100000" ] &&
			[ "$(cat "$mem/memory.max")" = 536870912 ] || st=1
	else
		echo "$cpu: quota $(cat "$cpu/cpu.cfs_quota_us"); $mem: limit $(cat "$mem/memory.limit_in_bytes")"
		[ "$(cat "$cpu/cpu.cfs_quota_us")" = 50000 ] &&
			[ "$(cat "$mem/memory.limit_in_bytes")" = 536870912 ] || st=1
	fi
	grep -qx "$pid" "$cpu/cgroup.procs" && grep -qx "$pid" "$mem/cgroup.procs" || st=1
	rt delete --force cgl
	cg_cleanup "$cg"
	return $st
}
# A limit the kernel refuses (a CPU quota under its 1 ms minimum): no
# container, and the error names the value and the file.
case_cgroup_limit_refused() {
	local cg=/hintvm-refused-$$ st=0
	rt create --bundle "$(bundle cgr '{}' \
		"{\"cgroupsPath\": \"$cg\", \"resources\": {\"cpu\": {\"quota\": 500, \"period\": 100000}}}")" \
		cgr </dev/null >"$tmp/cgr.out" 2>&1 && st=1
	grep -Eq 'cannot set linux.resources.cpu.quota = 500( 100000)?: .*(cpu.cfs_quota_us|cpu.max): Invalid argument' \
		"$tmp/cgr.out" "$tmp/log.json" || st=1
	[ $st = 0 ] || cat "$tmp/cgr.out"
	rt delete --force cgr >/dev/null 2>&1
	cg_cleanup "$cg"
	return $st
}
if [ "$(id -u)" = 0 ] && [ $have_kvm = 1 ]; then
	check "linux.cgroupsPath: the VMM process is placed in it" case_cgroup
	check "linux.resources: CPU quota and memory limit set in their controllers' cgroups" case_cgroup_limits
	check "linux.resources: a limit the kernel refuses fails create, naming it" case_cgroup_limit_refused
else
	skip "linux.cgroupsPath: the VMM process is placed in it" "needs root and /dev/kvm"
	skip "linux.resources: CPU quota and memory limit set in their controllers' cgroups" "needs root and /dev/kvm"
	skip "linux.resources: a limit the kernel refuses fails create, naming it" "needs root and /dev/kvm"
fi
check "nothing is left under --root" bash -c "[ -z \"\$(ls -A '$root' 2>/dev/null)\" ]"

echo "1..$n"
[ $failed -eq 0 ]
