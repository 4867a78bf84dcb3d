#!/bin/bash
# The sandbox as a user sees it (docs/sandbox.md): every thread of a running
# VM has its seccomp filter (Seccomp: 2), no capabilities and no_new_privs;
# --sandbox off has none of that; and a forbidden system call from each kind
# of thread kills hintvm by SIGSYS with one line naming the call, the kind
# and the table to edit (through the HINTVM_TEST_SANDBOX_VIOLATION hook,
# which makes a thread of that kind call personality(2), allowed to none).
# Output is TAP; without /dev/kvm everything skips. In sanitizer builds it
# runs the same: they confine themselves too (docs/sandbox.md).
# usage: sandbox-test.sh HINTVM [NO_SECCOMP [NO_USERNS]]
#   (tests/cli/no-seccomp.c, tests/cli/no-userns.c)
set -u
hintvm=$1
no_seccomp=${2:-}
no_userns=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HINTVM_RUNTIME_DIR=$tmp/run
. "$(dirname "$0")/tap.sh"

if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
	echo "1..1"
	skip "sandbox" "/dev/kvm is not usable"
	exit 0
fi
# A killed hintvm would leave a core file per case.
ulimit -c 0

# thread_states NAME: "comm Seccomp NoNewPrivs CapEff" per thread of the
# running VM NAME, once every thread kind asked for is there.
thread_states() {
	local pid=$1
	for t in /proc/"$pid"/task/*; do
		echo "$(cat "$t/comm" 2>/dev/null)" \
			"$(awk '/^Seccomp:/ {s=$2} /^NoNewPrivs:/ {n=$2}
				/^CapEff:/ {c=$2} END {print s, n, c}' "$t/status" 2>/dev/null)"
	done
}

# run_and_inspect NAME OUT ARGS...: start a VM with a busy guest, a disk, an
# entropy device, input on a pipe and the control socket, record its
# threads, then stop it.
run_and_inspect() {
	local name=$1 out=$2
	shift 2
	truncate -s 8M "$tmp/disk.img"
	mkfifo "$tmp/in.$name"
	"$hintvm" run --name "$name" -c 2 -d "$tmp/disk.img" --rng \
		--stats --stats-interval 1 -p "test=spinlock ms=20000" "$@" \
		<"$tmp/in.$name" >"$tmp/out" 2>"$tmp/err" &
	local pid=$!
	exec 7>"$tmp/in.$name" # the console-in thread waits on this pipe
	for _ in $(seq 100); do
		"$hintvm" ctl "$name" status >/dev/null 2>&1 && break
		sleep 0.1
	done
	# Every request kind once, so the control thread's table is exercised.
	for req in status info stats "stat exits" pause resume \
		"set halt-poll 10000" "set sched-hints on"; do
		# shellcheck disable=SC2086 # the request's words are arguments
		"$hintvm" ctl "$name" $req >/dev/null 2>>"$tmp/err"
	done
	thread_states "$pid" >"$out"
	"$hintvm" ctl "$name" stop >/dev/null 2>&1
	exec 7>&-
	wait "$pid"
	echo $? >"$out.status"
}

echo "1..65"

run_and_inspect sb-on "$tmp/on"
if [ "$(cat "$tmp/on.status")" = 10 ] &&
	grep -q vcpu "$tmp/on" && grep -q control "$tmp/on" &&
	grep -q console-in "$tmp/on" && grep -q console-out "$tmp/on" &&
	grep -q hvm-virtio "$tmp/on" &&
	! grep -v ' 2 1 0000000000000000$' "$tmp/on" | grep -v '^kvm-' | grep -q .; then
	ok "every thread: Seccomp 2, no_new_privs, CapEff 0"
else
	sed 's/^/# /' "$tmp/on" "$tmp/on.status"
	not_ok "every thread: Seccomp 2, no_new_privs, CapEff 0"
fi

run_and_inspect sb-off "$tmp/off" --sandbox off
if [ "$(cat "$tmp/off.status")" = 10 ] &&
	! grep -v '^kvm-' "$tmp/off" | grep -v ' 0 0 ' | grep -q .; then
	ok "--sandbox off: no filter, no no_new_privs"
else
	sed 's/^/# /' "$tmp/off" "$tmp/off.status"
	not_ok "--sandbox off: no filter, no no_new_privs"
fi

# violation KIND ARGS...: the hook makes a thread of KIND misbehave.
violation() {
	local kind=$1
	shift
	echo | HINTVM_TEST_SANDBOX_VIOLATION=$kind timeout 60 "$hintvm" run \
		"$@" >"$tmp/out" 2>"$tmp/err"
	local st=$?
	if [ $st = $((128 + 31)) ] &&
		grep -Eq "sandbox: thread '[^']+' \(kind $kind\) made the forbidden system call personality \([0-9]+\).*add it to the $kind table in src/sandbox/sandbox_rules.c" "$tmp/err"; then
		ok "forbidden call on a $kind thread: killed by SIGSYS, named"
	else
		echo "# exit status $st, expected 159 (SIGSYS)" >>"$tmp/err"
		not_ok "forbidden call on a $kind thread: killed by SIGSYS, named"
	fi
}

busy=(-p "test=spinlock ms=3000")
violation main "${busy[@]}"
violation vcpu "${busy[@]}"
violation event-loop --rng "${busy[@]}"
violation console-in "${busy[@]}"
violation console-out "${busy[@]}"
violation control "${busy[@]}"
violation brain "${busy[@]}"
violation rr-partner --rr-partner -p "test=rr txns=100000"
mkdir -p "$tmp/share"
violation 9p-worker --share "$tmp/share,tag=t" "${busy[@]}"

# TIOCSTI: a thread of each kind that may make ioctls types into the
# terminal it was started from (its controlling terminal, as a user's
# shell's is); the bytes would be read by the user's shell after hintvm
# is gone. tiocsti-probe.py reads that terminal's input queue afterwards.
probe=$(dirname "$0")/tiocsti-probe.py
self=$(/usr/bin/python3 "$probe" --self)
case $self in
*" injected=# "*) ok "TIOCSTI witness: a real injection is seen" ;;
*) echo "# $self"; not_ok "TIOCSTI witness: a real injection is seen" ;;
esac
# tiocsti KIND[:VARIANT] ARGS...
tiocsti() {
	local hook=$1 kind=${1%%:*}
	shift
	local line
	line=$(HINTVM_TEST_SANDBOX_VIOLATION=$hook /usr/bin/python3 "$probe" \
		"$hintvm" run "$@")
	case $line in
	"status=159 injected=- report="*"(kind $kind) made the forbidden system call ioctl ("*", request 0x5412); killing hintvm."*"add it to the $kind ioctl table"*)
		ok "$hook: TIOCSTI from a $kind thread killed by SIGSYS, nothing typed, the request named" ;;
	*)
		echo "# $line"
		not_ok "$hook: TIOCSTI from a $kind thread killed by SIGSYS, nothing typed, the request named" ;;
	esac
}
tiocsti main:tiocsti "${busy[@]}"
tiocsti vcpu:tiocsti "${busy[@]}"
tiocsti vcpu:tiocsti-high "${busy[@]}"
tiocsti event-loop:tiocsti --rng "${busy[@]}"
tiocsti console-in:tiocsti "${busy[@]}"
tiocsti control:tiocsti "${busy[@]}"
tiocsti brain:tiocsti "${busy[@]}"
tiocsti 9p-worker:tiocsti --share "$tmp/share,tag=t" "${busy[@]}"

# Landlock (docs/sandbox.md): KIND:landlock makes a thread of each kind,
# right after it confined itself, try what a compromised one would: read
# a host file seccomp lets every kind open read-only, connect to a host
# abstract socket, signal a host process (signal 0: every check, nothing
# delivered), and for a 9P worker open a file beneath its share. The
# thread writes the outcomes ("seccomp": its filter would trap, so not
# tried) and the VM runs on. What must be refused depends on the ABI the
# kernel offers (asked here as hintvm asks it).
ll_abi=$(/usr/bin/python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
v = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset: VERSION
e = libc.syscall(444, None, 0, 2) if v >= 1 else -1  # ERRATA
print(max(v, 0), max(e, 0))' 2>/dev/null || echo "0 0")
ll_errata=${ll_abi#* }
ll_abi=${ll_abi% *}
[ "$ll_abi" -lt 2 ] && ll_abi=0 # hintvm does not use ABI 1
outside=/etc/passwd # readable wherever CI runs; seccomp allows reading it
echo inside >"$tmp/share/inside"
/usr/bin/python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0hintvm-sandbox-test-%d" % os.getpid())
s.listen(8)
print(os.getpid(), flush=True)
time.sleep(600)' >"$tmp/peer" &
peer_job=$!
for _ in $(seq 50); do [ -s "$tmp/peer" ] && break; sleep 0.1; done
peer=$(cat "$tmp/peer")
# The witness: what the threads are refused is reachable from outside.
if [ -r "$outside" ] && kill -0 "$peer" 2>/dev/null &&
	/usr/bin/python3 -c '
import socket, sys
socket.socket(socket.AF_UNIX).connect("\0hintvm-sandbox-test-" + sys.argv[1])' "$peer"; then
	ok "Landlock witness: $outside, the abstract socket and the peer are reachable unconfined"
else
	not_ok "Landlock witness: $outside, the abstract socket and the peer are reachable unconfined"
fi
# landlock KIND ARGS...
landlock() {
	local kind=$1 line want_in='EACCES|seccomp'
	shift
	line=$(echo | HINTVM_TEST_SANDBOX_VIOLATION=$kind:landlock \
		HINTVM_TEST_LANDLOCK_OUTSIDE=$outside \
		HINTVM_TEST_LANDLOCK_INSIDE=$tmp/share/inside \
		HINTVM_TEST_LANDLOCK_ABSTRACT=hintvm-sandbox-test-$peer \
		HINTVM_TEST_LANDLOCK_PEER=$peer timeout 60 "$hintvm" run "$@" \
		2>&1 >/dev/null | grep -a -m1 "landlock probe: kind $kind ")
	[ "$kind" = 9p-worker ] && want_in=ok
	local name="Landlock on a $kind thread (ABI $ll_abi)" bad=
	case $line in *" abi $ll_abi "*) ;; *) bad="hintvm found another ABI" ;; esac
	if [ "$ll_abi" = 0 ]; then
		if [ -z "$bad" ]; then
			skip "$name" "no usable Landlock on this kernel: seccomp alone"
		else
			echo "# $line"; not_ok "$name"
		fi
		return
	fi
	# The patterns in variables: bash reads them unquoted there.
	local re_out='outside=(EACCES|seccomp) ' re_in="inside=($want_in) "
	local re_abs='abstract=(EPERM|seccomp) ' re_sig='signal=(EPERM|seccomp)$'
	[[ $line =~ $re_out ]] || bad="$bad; read $outside"
	[[ $line =~ $re_in ]] || bad="$bad; inside the share"
	if [ "$ll_abi" -ge 6 ]; then
		[[ $line =~ $re_abs ]] ||
			bad="$bad; connected to the host's abstract socket"
		if [ $((ll_errata & 2)) != 0 ]; then
			[[ $line =~ $re_sig ]] ||
				bad="$bad; signalled a host process"
		else
			name="$name (signals not scoped: the kernel lacks erratum 2)"
		fi
	else
		name="$name (ABI < 6: no socket and signal scopes)"
	fi
	if [ -z "$bad" ]; then
		ok "$name: refused what it must, allowed what it needs"
	else
		echo "# $line"; echo "# wrong:$bad"
		not_ok "$name: refused what it must, allowed what it needs"
	fi
}
landlock main -p test=hello
landlock vcpu -p test=hello
landlock event-loop --rng -p test=hello
landlock console-in -p test=hello
landlock console-out -p test=hello
landlock control -p test=hello
landlock brain -p test=hello
landlock rr-partner --rr-partner -p "test=rr txns=1000"
landlock 9p-worker --user none --share "$tmp/share,tag=t,server=thread" -p test=hello
kill "$peer_job" 2>/dev/null
wait "$peer_job" 2>/dev/null

# virtio-vsock's host side on the event loop under its filter: a host
# client connects to the hybrid socket and asks for a guest port nobody
# serves (the test kernel has no vsock driver); hintvm must answer by
# closing, stay alive, and have made the socket 0600.
"$hintvm" run --name sb-vsock --vsock "cid=3,uds=$tmp/v.sock" \
	-p "test=spinlock ms=20000" </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/v.sock" ] && break; sleep 0.1; done
python3 - "$tmp/v.sock" >>"$tmp/err" 2>&1 <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(15)
s.connect(sys.argv[1])
s.sendall(b"CONNECT 1234\n")
print("vsock reply: %r" % s.recv(64))
PY
mode=$(stat -c %a "$tmp/v.sock" 2>/dev/null)
"$hintvm" ctl sb-vsock stop >/dev/null 2>&1
wait $pid
st=$?
if [ $st = 10 ] && [ "$mode" = 600 ]; then
	ok "vsock host connection served under the event loop's filter; socket 0600"
else
	echo "# status $st, socket mode $mode" >>"$tmp/err"
	not_ok "vsock host connection served under the event loop's filter; socket 0600"
fi

# 9P workers confined at start: a share with a busy guest runs to the end.
run_and_inspect sb-share "$tmp/share.states" --share "$tmp/share,tag=t"
if [ "$(cat "$tmp/share.states.status")" = 10 ] && grep -q '^hvm-9p 2 1 0000000000000000$' "$tmp/share.states"; then
	ok "9P workers: Seccomp 2, no_new_privs, CapEff 0"
else
	sed 's/^/# /' "$tmp/share.states"; not_ok "9P workers: Seccomp 2, no_new_privs, CapEff 0"
fi

# With the sandbox off the hook's call is harmless: the VM runs to its end.
echo | HINTVM_TEST_SANDBOX_VIOLATION=vcpu timeout 60 "$hintvm" run \
	--sandbox off -p test=hello >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st = 0 ]; then ok "--sandbox off: the hook's call is let through"
else echo "# exit status $st" >>"$tmp/err"; not_ok "--sandbox off: the hook's call is let through"; fi

# A config file may turn off what the command line only defaults to.
printf 'sandbox = off\n' >"$tmp/off.conf"
run_and_inspect sb-conf "$tmp/conf" --config "$tmp/off.conf"
if ! grep -v '^kvm-' "$tmp/conf" | grep -v ' 0 0 ' | grep -q .; then
	ok "sandbox = off in a config file overrides the CLI default"
else
	sed 's/^/# /' "$tmp/conf"; not_ok "sandbox = off in a config file overrides the CLI default"
fi
# child_of PID: the (first) child process of PID.
child_of() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"; return
	done
}

# --jail DIR: new user, mount, PID, IPC and network namespaces rooted at
# DIR, rlimits; the parent relays SIGTERM and the child's exit status.
jail=$tmp/jail
mkdir -p "$jail"
truncate -s 8M "$jail/disk.img"
# Inside the jail the runtime directory is its own /run/hintvm.
env -u HINTVM_RUNTIME_DIR "$hintvm" run --jail "$jail,nofile=512" --name sb-jail -d /disk.img \
	-p "test=spinlock ms=20000" </dev/null >"$tmp/out" 2>"$tmp/err" &
parent=$!
for _ in $(seq 100); do [ -S "$jail/run/hintvm/sb-jail.sock" ] && break; sleep 0.1; done
child=$(child_of $parent)
if [ -n "$child" ] &&
	grep -Eq "^NSpid:[[:space:]]+$child[[:space:]]+1$" /proc/"$child"/status &&
	[ "$(readlink /proc/"$child"/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] &&
	[ "$(readlink /proc/"$child"/ns/ipc)" != "$(readlink /proc/self/ns/ipc)" ] &&
	[ "$(ls /proc/"$child"/root/ | tr '\n' ' ')" = "dev disk.img proc run " ] &&
	grep -Eq "^Max open files +512 +512 " /proc/"$child"/limits; then
	ok "--jail: PID 1 of new PID, mount and IPC namespaces, DIR as root, rlimits"
else
	{ echo "# child $child"; grep NSpid /proc/"$child"/status; ls /proc/"$child"/root/; } >>"$tmp/err" 2>&1
	not_ok "--jail: PID 1 of new PID, mount and IPC namespaces, DIR as root, rlimits"
fi
# Inside: a proc of its own with other users' processes hidden, and
# /proc/sys read-only (a thread that regained root still could not
# retune the host's kernel).
if [ -n "$child" ] &&
	awk '$5 == "/proc" && $0 ~ / - proc / && $0 ~ /hidepid=(invisible|2)/ { p = 1 }
		$5 == "/proc/sys" && $6 ~ /^ro(,|$)/ { s = 1 }
		END { exit !(p && s) }' /proc/"$child"/mountinfo; then
	ok "--jail: /proc with hidepid, /proc/sys read-only"
else
	grep -E ' /proc' /proc/"$child"/mountinfo 2>&1 | sed 's/^/# /' >>"$tmp/err"
	not_ok "--jail: /proc with hidepid, /proc/sys read-only"
fi
# Its own user namespace, whose root is the VM's uid and gid on the host
# (one line each, setgroups denied): the host sees every thread of the
# jailed VMM as that uid, so a capability held there acts on nothing of
# the host's.
# A kernel without them (CONFIG_USER_NS off, user.max_user_namespaces 0)
# keeps the jail without one, and says so: those checks skip there.
userns=""
if [ -e /proc/self/ns/user ] && [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null)" != 0 ]; then
	userns=1
fi
vmuid="" vmgid="" uids=""
if [ -n "$child" ]; then
	vmuid=$(awk '/^Uid:/ {print $2}' /proc/"$child"/status)
	vmgid=$(awk '/^Gid:/ {print $2}' /proc/"$child"/status)
	uids=$(awk '/^Uid:/ {print $2; print $3; print $4; print $5}' /proc/"$child"/task/*/status | sort -u | tr '\n' ' ')
fi
if [ -z "$userns" ]; then
	skip "--jail: a user namespace whose root is the VM's uid and gid alone, setgroups denied; every thread that uid on the host" "no user namespaces on this kernel"
elif [ -n "$vmuid" ] && [ "$vmuid" != 0 ] && [ "$vmgid" != 0 ] &&
	[ "$(readlink /proc/"$child"/ns/user)" != "$(readlink /proc/self/ns/user)" ] &&
	[ "$(tr -s ' ' </proc/"$child"/uid_map)" = " 0 $vmuid 1" ] &&
	[ "$(tr -s ' ' </proc/"$child"/gid_map)" = " 0 $vmgid 1" ] &&
	[ "$(cat /proc/"$child"/setgroups)" = deny ] && [ "$uids" = "$vmuid " ]; then
	ok "--jail: a user namespace whose root is the VM's uid and gid alone, setgroups denied; every thread that uid on the host"
else
	{ echo "# uid $vmuid gid $vmgid threads' uids: $uids"; cat /proc/"$child"/uid_map /proc/"$child"/gid_map /proc/"$child"/setgroups; } 2>&1 | sed 's/^/# /' >>"$tmp/err"
	not_ok "--jail: a user namespace whose root is the VM's uid and gid alone, setgroups denied; every thread that uid on the host"
fi
if "$hintvm" ctl "$jail/run/hintvm/sb-jail.sock" status >"$tmp/out" 2>>"$tmp/err" &&
	grep -q '"state":"running"' "$tmp/out"; then
	ok "--jail: the control socket is reached at DIR/run/hintvm/NAME.sock"
else
	not_ok "--jail: the control socket is reached at DIR/run/hintvm/NAME.sock"
fi
kill -TERM $parent
wait $parent
st=$?
if [ $st = 10 ] && ! kill -0 "$child" 2>/dev/null; then
	ok "--jail: SIGTERM to hintvm stops the jailed VM (status 10)"
else
	echo "# status $st" >>"$tmp/err"; not_ok "--jail: SIGTERM to hintvm stops the jailed VM (status 10)"
fi
expect "--jail: a relative directory is refused" 2 "--jail needs an absolute directory" -- run --jail jaildir
# The jail's root is entered by the VM's uid: one that cannot is refused,
# saying so (else its /proc and control socket would fail unseen).
mkdir -m 0700 "$tmp/closed"
expect "--jail: a root the VM's uid cannot enter is refused" 2 "the VM's uid [0-9]* cannot enter it" -- run --jail "$tmp/closed" -p test=hello
# A symlink planted in DIR is not followed out of the jail: before the
# fix, root made DIR/dev's target's kvm (an empty file, or a directory
# tree) wherever the link pointed on the host.
planted() { # NAME LINK TARGET: the jail refuses, and TARGET stays as it was
	local dir=$tmp/planted-$1
	mkdir -p "$dir/dev" "$tmp/host-$1"
	rm -rf "$dir/$2"
	ln -s "$3" "$dir/$2"
	env -u HINTVM_RUNTIME_DIR "$hintvm" run --jail "$dir" -p test=hello \
		</dev/null >"$tmp/out" 2>"$tmp/err.$1"
	local st=$?
	if [ $st != 0 ] && grep -q "a symlink is not followed out of the jail" "$tmp/err.$1" &&
		[ -z "$(ls -A "$tmp/host-$1")" ]; then
		ok "--jail: a planted symlink ($2 -> host) is refused, nothing made on the host"
	else
		{ echo "# status $st"; sed 's/^/# /' "$tmp/err.$1"; ls -la "$tmp/host-$1" | sed 's/^/# /'; } >>"$tmp/err"
		not_ok "--jail: a planted symlink ($2 -> host) is refused, nothing made on the host"
	fi
}
planted dir dev "$tmp/host-dir"
planted file dev/kvm "$tmp/host-file/kvm"
expect "--jail: the VM's files are looked up inside DIR" 2 "cannot open.*$tmp/outside.img|$tmp/outside.img" -- run --jail "$jail" -d "$tmp/outside.img"

# --cgroup PATH (v1 here; v2 works the same way): the jailed hintvm is in
# it before the VM exists.
cg=""
for c in /sys/fs/cgroup/pids /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ -w "$c/cgroup.procs" ] && mkdir "$c/hintvm-sandbox-test.$$" 2>/dev/null; then
		cg=$c/hintvm-sandbox-test.$$; break
	fi
done
if [ -n "$cg" ]; then
	env -u HINTVM_RUNTIME_DIR "$hintvm" run --jail "$jail" --cgroup "$cg" --name sb-cg \
		-p "test=spinlock ms=20000" </dev/null >"$tmp/out" 2>"$tmp/err" &
	parent=$!
	for _ in $(seq 100); do [ -S "$jail/run/hintvm/sb-cg.sock" ] && break; sleep 0.1; done
	child=$(child_of $parent)
	if [ -n "$child" ] && grep -qx "$child" "$cg/cgroup.procs"; then
		ok "--cgroup: the jailed hintvm runs in the cgroup"
	else
		not_ok "--cgroup: the jailed hintvm runs in the cgroup"
	fi
	kill -TERM $parent
	wait $parent
	rmdir "$cg"
else
	skip "--cgroup: the jailed hintvm runs in the cgroup" "no writable cgroup hierarchy"
fi
# A kernel without user namespaces (tests/cli/no-userns.c): the jail of
# before, and a warning that says so; its threads still become the VM's
# uid, and the host still reaches its control socket.
if [ -n "$no_userns" ]; then
	env -u HINTVM_RUNTIME_DIR "$no_userns" "$hintvm" run --jail "$jail" --name sb-nouserns \
		-p "test=spinlock ms=20000" </dev/null >"$tmp/out" 2>"$tmp/err.nouserns" &
	parent=$!
	answered=""
	for _ in $(seq 100); do
		"$hintvm" ctl "$jail/run/hintvm/sb-nouserns.sock" status >"$tmp/out" 2>/dev/null &&
			grep -q '"state":"running"' "$tmp/out" && answered=1 && break
		sleep 0.1
	done
	child=$(child_of $parent)
	uids=""
	[ -n "$child" ] && uids=$(awk '/^Uid:/ {print $2; print $3; print $4; print $5}' /proc/"$child"/task/*/status | sort -u | tr '\n' ' ')
	usernsof=$(readlink /proc/"$child"/ns/user 2>/dev/null)
	kill -TERM $parent
	wait $parent
	st=$?
	if [ -n "$answered" ] && [ $st = 10 ] && [ "$usernsof" = "$(readlink /proc/self/ns/user)" ] &&
		grep -q "warning: --jail: no user namespace" "$tmp/err.nouserns" &&
		[ -n "$uids" ] && [ "$(echo $uids | wc -w)" = 1 ] && [ "$uids" != "0 " ]; then
		ok "no user namespaces: the jail without one, said so; threads the VM's uid, the control socket answers"
	else
		{ echo "# answered=$answered status $st uids $uids userns $usernsof"; sed 's/^/# /' "$tmp/err.nouserns"; } >>"$tmp/err"
		not_ok "no user namespaces: the jail without one, said so; threads the VM's uid, the control socket answers"
	fi
else
	skip "no user namespaces: the jail without one" "no tests/cli/no-userns helper given"
fi
# A kernel without seccomp filters (tinyconfig-based ones, as in the
# kernel suite's L1): hintvm run's default (auto) says so and runs the VM;
# --sandbox on refuses to run without its sandbox.
if [ -n "$no_seccomp" ]; then
	"$no_seccomp" "$hintvm" run -p test=hello --control none </dev/null >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st = 0 ] && grep -q "warning: sandbox: this kernel has no seccomp filters.*running without the sandbox" "$tmp/err"; then
		ok "no seccomp in the kernel: the default warns and runs"
	else
		echo "# exit status $st" >>"$tmp/err"; not_ok "no seccomp in the kernel: the default warns and runs"
	fi
	"$no_seccomp" "$hintvm" run -p test=hello --control none --sandbox on </dev/null >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st = 2 ] && grep -q "^hintvm: sandbox: this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)" "$tmp/err"; then
		ok "no seccomp in the kernel: --sandbox on refuses, saying why"
	else
		echo "# exit status $st" >>"$tmp/err"; not_ok "no seccomp in the kernel: --sandbox on refuses, saying why"
	fi
else
	skip "no seccomp in the kernel" "no tests/cli/no-seccomp helper given"
fi

# Started by root, no thread of a VM is root (--user auto, the default).
# For each thread kind, what an attacker owning that thread tries once it
# is confined (the KIND:OP=TARGET hook): each must fail, by the uid (EACCES,
# EPERM) or the filter (SIGSYS). --user none shows the probe can succeed.
if [ "$(id -u)" = 0 ]; then
	chmod 0711 "$tmp"
	mkdir -m 0755 "$tmp/pub"
	echo secret >"$tmp/pub/secret" && chmod 0600 "$tmp/pub/secret"
	python3 - "$tmp/pub/root.sock" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o600)
s.listen(64)
time.sleep(120)
PY
	sock_pid=$!
	for _ in $(seq 100); do [ -S "$tmp/pub/root.sock" ] && break; sleep 0.05; done
	attacks=("read=/etc/shadow" "read=/proc/sys/kernel/cad_pid" "read=$tmp/pub/secret" "write=$tmp/pub/secret"
		"unlink=$tmp/pub/secret" "connect=$tmp/pub/root.sock"
		"write=/proc/sys/kernel/core_pattern" "write=/dev/kvm" "kill=1")
	short=(-p "test=spinlock ms=200")
	# attack KIND ARGS...: every attack from a thread of KIND. A process
	# kind is trapped with ATTACK_TRAP (hintvm's status when it dies),
	# tries ATTACK_EXTRA too and reports as ATTACK_LABEL.
	attack() {
		local kind=$1 bad=0 a st trap=${ATTACK_TRAP:-159}
		local label=${ATTACK_LABEL:-"$1 thread as its --user: root-only files, /proc/sys, /dev/kvm, root's socket, init: all refused"}
		shift
		: >"$tmp/err"
		# shellcheck disable=SC2086 # ATTACK_EXTRA: words
		for a in "${attacks[@]}" ${ATTACK_EXTRA:-}; do
			echo | HINTVM_TEST_SANDBOX_VIOLATION=$kind:$a timeout 60 \
				"$hintvm" run "$@" >/dev/null 2>"$tmp/attack"
			st=$?
			if grep -q "^sandbox-probe $kind ${a%%=*} ${a#*=}: " "$tmp/attack"; then
				grep -q "^sandbox-probe $kind ${a%%=*} ${a#*=}: succeeded" "$tmp/attack" && bad=1
			elif [ $st != "$trap" ] || ! grep -q "(kind $kind) made the forbidden" "$tmp/attack"; then
				bad=1 # neither refused nor killed: the hook never ran
			fi
			grep -E "^sandbox-probe|forbidden" "$tmp/attack" | sed "s/^/# /" >>"$tmp/err"
		done
		if [ $bad = 0 ] && [ -s "$tmp/err" ]; then
			ok "$label"
		else
			not_ok "$label"
		fi
	}
	attack main "${short[@]}"
	attack vcpu "${short[@]}"
	attack event-loop --rng "${short[@]}"
	attack console-in "${short[@]}"
	attack console-out "${short[@]}"
	attack control "${short[@]}"
	attack brain "${short[@]}"
	attack 9p-worker --share "$tmp/share,tag=t" "${short[@]}"
	# The file server (server=process) stays root, to serve a root-owned
	# share under its ids model: its mount namespace holds the share
	# alone, Landlock grants that much, and its filter has no socket or
	# kill. What its owner tries: each refused (the probe's line) or
	# trapped (the report; the VM then fails to start, status 2).
	ATTACK_TRAP=2 ATTACK_EXTRA="read=/../../etc/shadow write=/../proc/sysrq-trigger" \
		ATTACK_LABEL="file-server process: root-only files, /proc, /dev/kvm, sockets, init, paths above its share: all refused" \
		attack file-server --share "$tmp/share,tag=t,server=process" "${short[@]}"
	# The witness: the same thread, left root (caps dropped), reads a
	# 0600 file of root's that its Landlock domain allows (beneath /proc).
	echo | HINTVM_TEST_SANDBOX_VIOLATION="vcpu:read=/proc/sys/kernel/cad_pid" timeout 60 \
		"$hintvm" run --user none "${short[@]}" >/dev/null 2>"$tmp/err"
	if grep -q "^sandbox-probe vcpu read /proc/sys/kernel/cad_pid: succeeded" "$tmp/err"; then
		ok "witness: with --user none a vCPU thread reads root's 0600 /proc/sys/kernel/cad_pid"
	else
		not_ok "witness: with --user none a vCPU thread reads root's 0600 /proc/sys/kernel/cad_pid"
	fi
	kill $sock_pid 2>/dev/null
	# --jail: the supervisor that waits and relays signals is the VM's uid
	# too (it may still signal the VM: its saved uid), and relays SIGTERM.
	jd=$(mktemp -d)
	chmod 0755 "$jd" # the jail's root: the VM's uid enters it
	"$hintvm" run --jail "$jd" -p "test=spinlock ms=20000" </dev/null >/dev/null 2>&1 &
	sup=$!
	for _ in $(seq 100); do pgrep -P $sup >/dev/null && break; sleep 0.05; done
	sleep 0.5
	uids=$(for p in $sup $(pgrep -P $sup); do awk '/^Uid:/ {print $2}' /proc/$p/task/*/status; done | sort -u | tr '\n' ' ')
	kill -TERM $sup
	wait $sup
	st=$?
	rm -rf "$jd"
	echo "# uids: $uids; status $st" >"$tmp/err"
	case " $uids" in
	*" 0 "*) not_ok "--jail: the supervisor and the jailed VM are not root; SIGTERM relayed (10)" ;;
	*) if [ $st = 10 ] && [ "$(echo $uids | wc -w)" = 1 ]; then
		ok "--jail: the supervisor and the jailed VM are not root; SIGTERM relayed (10)"
	   else not_ok "--jail: the supervisor and the jailed VM are not root; SIGTERM relayed (10)"; fi ;;
	esac
	# Inside --jail: the same attacks, from the two kinds that may
	# open sockets or are the guest's (event-loop, vcpu).
	jd=$(mktemp -d)
	chmod 0755 "$jd" # the jail's root: the VM's uid enters it
	attack vcpu --jail "$jd" "${short[@]}"
	attack event-loop --jail "$jd" --rng "${short[@]}"
	# The jail's own network namespace: a host abstract socket (which no
	# file permission guards) is not there. Outside a jail Landlock's
	# scope refuses it (EPERM); inside, the name is not found at all.
	python3 - <<'PY' &
import socket, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0hintvm-sandbox-test")
s.listen(8)
time.sleep(30)
PY
	abs_pid=$!
	for _ in $(seq 100); do
		python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect("\0hintvm-sandbox-test")' 2>/dev/null && break
		sleep 0.05
	done
	echo | HINTVM_TEST_SANDBOX_VIOLATION=event-loop:connect=@hintvm-sandbox-test \
		timeout 60 "$hintvm" run --jail "$jd" --rng "${short[@]}" >/dev/null 2>"$tmp/err"
	if python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect("\0hintvm-sandbox-test")' &&
		grep -q "^sandbox-probe event-loop connect @hintvm-sandbox-test: Connection refused" "$tmp/err"; then
		ok "--jail: a host abstract socket the host reaches is not in the jail's network namespace"
	else
		not_ok "--jail: a host abstract socket the host reaches is not in the jail's network namespace"
	fi
	kill $abs_pid 2>/dev/null
	# --net in a jail: the tap is attached in the host's namespace
	# before the jail leaves it (an up tap has carrier while a process
	# holds it attached), and the VM's
	# namespace holds nothing but lo.
	tap=hvmjail$$
	tap=${tap:0:15}
	if ip tuntap add "$tap" mode tap 2>"$tmp/err" && ip link set "$tap" up 2>>"$tmp/err"; then
		"$hintvm" run --jail "$jd" --net tap="$tap" -p "test=spinlock ms=20000" \
			</dev/null >/dev/null 2>"$tmp/jail-net.err" &
		sup=$!
		carrier=0 ifs=""
		for _ in $(seq 100); do
			carrier=$(cat /sys/class/net/"$tap"/carrier 2>/dev/null)
			[ "$carrier" = 1 ] && break
			sleep 0.05
		done
		vmpid=$(pgrep -P $sup | head -n 1)
		[ -n "$vmpid" ] && ifs=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/"$vmpid"/net/dev | tr '\n' ' ')
		kill -TERM $sup
		wait $sup
		st=$?
		ip tuntap del "$tap" mode tap
		echo "# carrier=$carrier interfaces in the jail: $ifs status $st" >"$tmp/err"
		sed 's/^/# /' "$tmp/jail-net.err" >>"$tmp/err"
		if [ "$carrier" = 1 ] && [ "$ifs" = "lo " ] && [ $st = 10 ]; then
			ok "--jail --net: the tap attached before the jail's network namespace, which has only lo"
		else
			not_ok "--jail --net: the tap attached before the jail's network namespace, which has only lo"
		fi
	else
		skip "--jail --net: the tap attached before the jail's network namespace, which has only lo" "cannot create a tap: $(head -n 1 "$tmp/err")"
	fi
	# Root of the jail's user namespace, with capabilities: the file
	# server keeps CAP_DAC_OVERRIDE and CAP_FOWNER and is that root. In
	# DIR (its share) it cannot read root's 0600 file, write root's 0644
	# one or unlink in root's directory, since host root is not mapped
	# there; the witness: it reads a mode-0000 file of the VM's uid,
	# which only a capability allows.
	ju=1879112000
	mkdir -m 0755 "$jd/share" "$jd/share/rootdir"
	echo secret >"$jd/share/secret" && chmod 0600 "$jd/share/secret"
	echo data >"$jd/share/rootfile" && chmod 0644 "$jd/share/rootfile"
	: >"$jd/share/rootdir/f"
	echo mine >"$jd/share/mine" && chown $ju:$ju "$jd/share/mine" && chmod 0000 "$jd/share/mine"
	bad=0
	: >"$tmp/err"
	for a in read=/secret:no write=/rootfile:no unlink=/rootdir/f:no read=/mine:yes; do
		want=${a##*:} a=${a%:*}
		echo | HINTVM_TEST_SANDBOX_VIOLATION=file-server:$a timeout 60 \
			"$hintvm" run --jail "$jd" --user $ju:$ju --share /share,tag=t,server=process \
			"${short[@]}" >/dev/null 2>"$tmp/attack"
		grep "^sandbox-probe" "$tmp/attack" | sed 's/^/# /' >>"$tmp/err"
		if grep -q "^sandbox-probe file-server ${a%%=*} ${a#*=}: succeeded" "$tmp/attack"; then
			[ "$want" = yes ] || bad=1
		elif [ "$want" = yes ] || ! grep -q "^sandbox-probe file-server ${a%%=*} ${a#*=}: Permission denied" "$tmp/attack"; then
			bad=1
		fi
	done
	if [ -z "$userns" ]; then
		skip "--jail: root of its user namespace, with capabilities, reads, writes and unlinks nothing of host root's in DIR" "no user namespaces on this kernel"
	elif [ $bad = 0 ] && [ "$(cat "$jd/share/rootfile")" = data ] && [ -e "$jd/share/rootdir/f" ]; then
		ok "--jail: root of its user namespace, with capabilities, reads, writes and unlinks nothing of host root's in DIR"
	else
		not_ok "--jail: root of its user namespace, with capabilities, reads, writes and unlinks nothing of host root's in DIR"
	fi
	rm -rf "$jd"
	# Two VMs at once: two uids, neither root, so neither can signal the other.
	"$hintvm" run --name uid-a -p "test=spinlock ms=20000" </dev/null >/dev/null 2>&1 &
	pa=$!
	"$hintvm" run --name uid-b -p "test=spinlock ms=20000" </dev/null >/dev/null 2>&1 &
	pb=$!
	for _ in $(seq 100); do
		"$hintvm" ctl uid-a status >/dev/null 2>&1 && "$hintvm" ctl uid-b status >/dev/null 2>&1 && break
		sleep 0.1
	done
	ua=$(awk '/^Uid:/ {print $2}' /proc/$pa/task/*/status | sort -u | tr '\n' ' ')
	ub=$(awk '/^Uid:/ {print $2}' /proc/$pb/task/*/status | sort -u | tr '\n' ' ')
	"$hintvm" ctl uid-a stop >/dev/null 2>&1
	"$hintvm" ctl uid-b stop >/dev/null 2>&1
	wait $pa $pb
	echo "# uids: a: $ua b: $ub" >"$tmp/err"
	case "$ua|$ub" in
	"0 "*|*"|0 "|*" "*" |"*|*"| "*|"|"*) not_ok "two VMs: one uid each, not root, not the same" ;;
	*) if [ "$ua" != "$ub" ]; then ok "two VMs: one uid each, not root, not the same"
	   else not_ok "two VMs: one uid each, not root, not the same"; fi ;;
	esac
else
	for k in main vcpu event-loop console-in console-out control brain 9p-worker file-server witness jail jail-vcpu jail-event-loop jail-abstract jail-net jail-userns-caps two-vms; do
		skip "--user auto: $k" "needs root (started unprivileged, a VM keeps its uid)"
	done
fi
[ $failed = 0 ]
