#!/bin/bash
# --share ...,server=process (docs/shares.md) seen from the host: the share
# is served by a separate file-server process, a child of hintvm, with only
# CAP_DAC_OVERRIDE and CAP_FOWNER (bounding set too), its seccomp filter
# and no_new_privs, its root the share (nothing outside it reachable, even
# through /proc/PID/root); hintvm's own threads keep no capability; it
# exits with the VM; its death is logged and counted in --stats; without
# CAP_SYS_ADMIN the VM is refused with the reason; server=thread forks
# nothing. The test kernel issues no 9P requests: guest I/O through the
# process is test_p9_file_server's (unit) and the e2e tiers'. TAP output.
# usage: share-server-test.sh HINTVM
set -u
hintvm=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HINTVM_RUNTIME_DIR=$tmp/run
. "$(dirname "$0")/tap.sh"

echo "1..11"
if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ] || [ "$(id -u)" != 0 ]; then
	for i in $(seq 11); do skip "share server $i" "needs root and /dev/kvm"; done
	exit 0
fi
ulimit -c 0
mkdir -p "$tmp/share/sub" "$tmp/outside"
echo inside >"$tmp/share/sub/file"
echo outside >"$tmp/outside/marker"

# start NAME ARGS...: a VM with a busy guest, in the background ($vm_pid).
start() {
	local name=$1
	shift
	"$hintvm" run --name "$name" -c 1 -p "test=spinlock ms=30000" --stats \
		"$@" </dev/null >"$tmp/out" 2>"$tmp/err" &
	vm_pid=$!
	for _ in $(seq 100); do
		"$hintvm" ctl "$name" status >/dev/null 2>&1 && break
		sleep 0.1
	done
}

stop() {
	"$hintvm" ctl "$1" stop >/dev/null 2>&1
	wait "$vm_pid"
	echo $? >"$tmp/status"
}

field() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$2/status"; }

start fs-proc --share "$tmp/share,tag=t,server=process"
srv=$(pgrep -P "$vm_pid" -x hvm-9p-server)
if [ -n "$srv" ] && [ "$srv" != "$vm_pid" ]; then
	ok "server=process: a file-server process of its own (pid $srv)"
else
	not_ok "server=process: a file-server process of its own"
fi
caps="$(field CapEff "$srv") $(field CapPrm "$srv") $(field CapBnd "$srv") $(field CapInh "$srv") $(field CapAmb "$srv")"
if [ "$caps" = "000000000000000a 000000000000000a 000000000000000a 0000000000000000 0000000000000000" ]; then
	ok "file server: only CAP_DAC_OVERRIDE and CAP_FOWNER"
else
	echo "# caps: $caps" >"$tmp/err"; not_ok "file server: only CAP_DAC_OVERRIDE and CAP_FOWNER"
fi
if [ "$(field Seccomp "$srv") $(field NoNewPrivs "$srv")" = "2 1" ]; then
	ok "file server: Seccomp 2, NoNewPrivs 1"
else
	not_ok "file server: Seccomp 2, NoNewPrivs 1"
fi
# Its root is the share: same directory, and nothing above it by any path.
if [ "$(stat -c %d:%i "/proc/$srv/root/.")" = "$(stat -c %d:%i "$tmp/share")" ] &&
	[ "$(cat "/proc/$srv/root/sub/file")" = inside ] &&
	! [ -e "/proc/$srv/root/../outside/marker" ] &&
	! [ -e "/proc/$srv/root$tmp/outside/marker" ] &&
	[ "$(readlink "/proc/$srv/cwd")" = / ]; then
	ok "file server: its root is the share, nothing outside reachable"
else
	ls -la "/proc/$srv/root/" >"$tmp/err" 2>&1
	not_ok "file server: its root is the share, nothing outside reachable"
fi
# hintvm's own threads (the 9P workers among them) hold nothing.
bad=$(for t in /proc/"$vm_pid"/task/*; do
	[ "$(awk '/^CapEff:/ {print $2}' "$t/status")" = 0000000000000000 ] ||
		cat "$t/comm"
done)
if [ -z "$bad" ] && grep -qx hvm-9p /proc/"$vm_pid"/task/*/comm; then
	ok "hintvm's threads, 9P workers included: CapEff 0"
else
	echo "# with capabilities: $bad" >"$tmp/err"; not_ok "hintvm's threads, 9P workers included: CapEff 0"
fi
stop fs-proc
sleep 0.2
if [ "$(cat "$tmp/status")" = 10 ] && ! kill -0 "$srv" 2>/dev/null; then
	ok "the file server exits with the VM"
else
	not_ok "the file server exits with the VM"
fi

# hintvm killed outright: the file server never outlives it (PDEATHSIG).
start fs-kill --share "$tmp/share,tag=t,server=process"
srv=$(pgrep -P "$vm_pid" -x hvm-9p-server)
kill -9 "$vm_pid"
wait "$vm_pid" 2>/dev/null
sleep 0.3
# Dead is gone or a zombie (a container's PID 1 may never reap it).
if [ -n "$srv" ] && { ! [ -e "/proc/$srv" ] ||
	[ "$(awk '{print $3}' "/proc/$srv/stat" 2>/dev/null)" = Z ]; }; then
	ok "hintvm killed: its file server dies too"
else
	not_ok "hintvm killed: its file server dies too"
fi

# Its death: logged once, in --stats, and the VM runs on.
start fs-dead --share "$tmp/share,tag=t,server=process"
kill -9 "$(pgrep -P "$vm_pid" -x hvm-9p-server)"
sleep 0.5
"$hintvm" ctl fs-dead stats >"$tmp/stats" 2>&1
stop fs-dead
if [ "$(cat "$tmp/status")" = 10 ] &&
	grep -q '"servers_died":1' "$tmp/stats" &&
	grep -q "virtio-9p0 (tag t): its file-server process (pid [0-9]*) died" "$tmp/err" &&
	grep -q "shares: 1 file-server process(es) died" "$tmp/err"; then
	ok "a dead file server: logged, counted in --stats, the VM runs on"
else
	not_ok "a dead file server: logged, counted in --stats, the VM runs on"
fi

# Without CAP_SYS_ADMIN: refused at creation, naming the share and why.
setpriv --bounding-set=-sys_admin "$hintvm" run -p test=hello \
	--share "$tmp/share,tag=t,server=process" </dev/null >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st != 0 ] && grep -q "tag t).*--share $tmp/share,server=process: .*needs root (CAP_SYS_ADMIN" "$tmp/err"; then
	ok "server=process without CAP_SYS_ADMIN: a clear refusal"
else
	echo "# exit status $st" >>"$tmp/err"; not_ok "server=process without CAP_SYS_ADMIN: a clear refusal"
fi

# server=thread (and auto without --user) forks nothing.
start fs-thread --user none --share "$tmp/share,tag=t,server=thread" --share "$tmp/outside,tag=u"
kids=$(pgrep -P "$vm_pid" | wc -l)
stop fs-thread
if [ "$kids" = 0 ] && [ "$(cat "$tmp/status")" = 10 ]; then
	ok "server=thread and auto without --user: no process"
else
	not_ok "server=thread and auto without --user: no process"
fi
# auto, started by root: the VM's threads become their --user, so the
# share is served by a process that kept root's view of it.
start fs-auto --share "$tmp/share,tag=t"
kids=$(pgrep -P "$vm_pid" | wc -l)
vm_uid=$(awk '/^Uid:/ {print $2}' /proc/"$vm_pid"/status)
stop fs-auto
if [ "$kids" = 1 ] && [ "$vm_uid" != 0 ] && [ "$(cat "$tmp/status")" = 10 ]; then
	ok "auto as root: the VM is its --user, the share has a file-server process"
else
	echo "# children $kids, VM uid $vm_uid" >"$tmp/err"
	not_ok "auto as root: the VM is its --user, the share has a file-server process"
fi
exit $((failed > 0))
