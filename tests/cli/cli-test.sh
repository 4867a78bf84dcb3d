#!/bin/bash
# The hintvm command line as a user meets it: help, exit statuses and one
# clear error line (naming the input, the value and what was expected) for
# every kind of bad input. Output is TAP; cases that need /dev/kvm skip
# with the reason when it is missing.
# usage: cli-test.sh HINTVM TESTKERNEL_ELF
set -u
hintvm=$1
kernel_elf=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every VM registers itself; keep this run's VMs to itself.
export HINTVM_RUNTIME_DIR=$tmp/run
have_kvm=0
[ -r /dev/kvm ] && [ -w /dev/kvm ] && have_kvm=1

. "$(dirname "$0")/tap.sh"

kvm_expect() {
	if [ $have_kvm = 1 ]; then expect "$@"; else skip "$1" "/dev/kvm is not usable"; fi
}

expect "--version" 0 '^hintvm [0-9]+\.[0-9]+' -- --version
expect "--help" 0 'run' -- --help
expect "run --help lists options" 0 '--mem SIZE' -- run --help
expect "no command" 2 'usage' --
expect "unknown command" 2 "'frobnicate' is not a command" -- frobnicate
expect "unknown option" 2 "unknown option.*--frob" -- run --frob
expect "unknown short option" 2 "option -z is unknown" -- run -z
expect "missing value" 2 "" -- run --mem
expect "stray argument" 2 "unexpected argument 'vmlinuz'" -- run vmlinuz
expect "-m 0" 2 "--mem: '0' is too small" -- run -m 0
expect "-m 12q" 2 "--mem: '12q' is not a memory size" -- run -m 12q
expect "-m unaligned" 2 "not a multiple of 4 KiB" -- run -m 4097K
expect "-m more than the host" 2 "more than this host's .* MiB of RAM; use --mem-overcommit" -- run -m 64T
expect "-c 0" 2 "--cpus: '0' is not a valid vCPU count; expected a number from 1 to" -- run -c 0
expect "-c 9999" 2 "--cpus: '9999'" -- run -c 9999
expect "bad switch value" 2 "--hugepages: 'maybe'" -- run --hugepages=maybe
expect "bad console" 2 "--console: 'vga'" -- run --console vga
expect "bad irqchip" 2 "--irqchip: 'pic'" -- run --irqchip pic
expect "bad --core-sched" 2 "--core-sched: 'always' is not a core scheduling mode; expected vm, vcpu or off" -- run --core-sched always
expect "--core-sched without a mode" 2 "missing value: '--core-sched'" -- run --core-sched
expect "run --help lists --core-sched" 0 '--core-sched vm\|vcpu\|off +core scheduling' -- run --help
printf 'core-sched = smt\n' >"$tmp/cs.conf"
expect "bad core-sched in a config file" 2 "cs.conf:1: --core-sched: 'smt' is not a core scheduling mode" -- run --config "$tmp/cs.conf"
printf 'cpus = 2\nmemory = 1G\n' >"$tmp/bad.conf"
expect "malformed config line" 2 "bad.conf:2: unknown option 'memory'" -- run --config "$tmp/bad.conf"
expect "missing config file" 2 "cannot read config file $tmp/none.conf" -- run --config "$tmp/none.conf"
expect "no /dev/kvm" 2 "/nonexistent/kvm does not exist" -- run --kvm-device /nonexistent/kvm

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -e /dev/kvm ] &&
	[ "$(stat -c %a /dev/kvm)" = 600 ]; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$hintvm" run \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st = 2 ] && grep -q "no permission to open /dev/kvm" "$tmp/err"; then
		ok "no permission on /dev/kvm"
	else
		echo "# status $st" >>"$tmp/err"; not_ok "no permission on /dev/kvm"
	fi
else
	skip "no permission on /dev/kvm" "needs root, setpriv and a 0600 /dev/kvm"
fi

kvm_expect "missing kernel" 2 "cannot open kernel $tmp/nope" -- run -k "$tmp/nope"
head -c 3000 "$kernel_elf" >"$tmp/truncated.elf"
kvm_expect "kernel ends mid-segment" 2 "truncated" -- run -k "$tmp/truncated.elf"
echo "not a kernel" >"$tmp/text"
kvm_expect "wrong-format kernel" 2 "is not a kernel hintvm can boot" -- run -k "$tmp/text"
: >"$tmp/empty"
kvm_expect "empty kernel" 2 "kernel $tmp/empty is empty" -- run -k "$tmp/empty"
kvm_expect "missing initrd" 2 "cannot open initrd $tmp/nope" -- run -i "$tmp/nope"
kvm_expect "directory as initrd" 2 "is not a regular file" -- run -i "$tmp"
long=$(head -c 5000 /dev/zero | tr '\0' 'x')
kvm_expect "command line too long" 2 "--cmdline is 5000 bytes long" -- run -p "$long"

# Host inputs that are not files: refused at once, never waited on.
mkfifo "$tmp/fifo"
expect "FIFO as config file" 2 "config file $tmp/fifo is not a regular file" -- run --config "$tmp/fifo"
kvm_expect "FIFO as kernel" 2 "kernel $tmp/fifo is not a regular file" -- run -k "$tmp/fifo"
kvm_expect "FIFO as initrd" 2 "initrd $tmp/fifo is not a regular file" -- run -i "$tmp/fifo"
kvm_expect "FIFO as read-only disk" 2 "--disk $tmp/fifo: not a regular file or block device" -- run -d "$tmp/fifo,ro"
kvm_expect "FIFO nobody reads as --stats-json" 0 "--stats-json: cannot write $tmp/fifo" -- run --stats-json "$tmp/fifo"
# --share: the directory must be one, and the tag is the guest's.
kvm_expect "--share of a missing directory" 2 "--share $tmp/nope: cannot open the directory" -- run --share "$tmp/nope,tag=x"
kvm_expect "--share of a FIFO" 2 "--share $tmp/fifo: cannot open the directory" -- run --share "$tmp/fifo,tag=x"
expect "--share without a tag" 2 "a share needs a mount tag" -- run --share "$tmp"
# A tap that does not exist is named, not silently created.
kvm_expect "missing tap" 2 "--net tap=hvmnosuchtap0: there is no network interface hvmnosuchtap0" -- run -n tap=hvmnosuchtap0
if [ -e /sys/class/net/hvmnosuchtap0 ]; then
	not_ok "missing tap: no interface left behind"
else
	ok "missing tap: no interface left behind"
fi

if [ "$(cat /proc/sys/vm/nr_hugepages 2>/dev/null)" = 0 ]; then
	kvm_expect "--hugepages without reserved huge pages" 2 "--hugepages: cannot get 64 MiB of huge pages" -- run --hugepages -m 64M
else
	skip "--hugepages without reserved huge pages" "this host has huge pages reserved"
fi
kvm_expect "--hugepages with an odd size" 2 "not a multiple of the 2 MiB huge page size" -- run --hugepages -m 63M
kvm_expect "boots the test kernel" 0 "hello from cpu 0" -- run
kvm_expect "explicit kernel file" 0 "hello from cpu 1" -- run -k "$kernel_elf" -c 2
printf '# profile\ncpus = 2\nmem = 64M\ncmdline = test=hello\n' >"$tmp/vm.conf"
kvm_expect "config file" 0 "RESULT test=hello cpus=2 ok=1" -- run --config "$tmp/vm.conf"
kvm_expect "command line beats config file" 0 "RESULT test=hello cpus=1 ok=1" -- run --config "$tmp/vm.conf" -c 1
kvm_expect "guest crash status" 6 "guest crash: vCPU 0: triple fault" -- run -p test=fault
# After a triple fault KVM may hold only the reset state (AMD): the report
# names the exits that led to it (here: the RESULT line going out on the UART).
kvm_expect "triple fault lists the exits before it" 6 "exit [0-9]+: port \(2\) write 0x3f8/1 pc 0x" -- run -p test=fault
kvm_expect "debug-exit status" 3 "ok=0" -- run -p test=no-such-payload

if [ $have_kvm = 1 ]; then
	# A guest that runs until stopped: SIGTERM ends it cleanly.
	"$hintvm" run -c 2 -p "test=smp-count iterations=4294967296" \
		</dev/null >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q "testkernel:" "$tmp/out" 2>/dev/null && break
		sleep 0.1
	done
	kill -TERM $pid
	wait $pid
	st=$?
	if [ $st = 10 ] && grep -q "guest stopped" "$tmp/err"; then
		ok "SIGTERM stops the VM (status 10)"
	else
		echo "# status $st" >>"$tmp/err"; not_ok "SIGTERM stops the VM (status 10)"
	fi
else
	skip "SIGTERM stops the VM" "/dev/kvm is not usable"
fi

if [ $have_kvm = 1 ] && command -v qemu-system-x86_64 >/dev/null; then
	# A disk image shared with QEMU: each sees the other's locks.
	disk=$tmp/disk.img
	truncate -s 16M "$disk"
	# /proc/locks names a file MAJ:MIN:INODE (hex device numbers): the
	# inode alone matches other processes' locks on other file systems.
	ino=$(printf '%02x:%02x:%s' $(stat -c '%Hd %Ld %i' "$disk"))
	# QEMU itself in the background ($! is its pid), never left behind.
	qemu-system-x86_64 -S -display none -nodefaults \
		-drive file="$disk",if=none,format=raw,id=d0 \
		-device virtio-blk-pci,drive=d0 >"$tmp/qemu.out" 2>&1 &
	qpid=$!
	trap 'kill $qpid 2>/dev/null; rm -rf "$tmp"' EXIT
	# Until QEMU holds byte 101, its "I write" lock (it takes its locks
	# one by one, the write one last); up to 60 s: QEMU's start takes
	# seconds on a loaded 2-CPU machine.
	for _ in $(seq 600); do
		awk -v f="$ino" '$2 == "OFDLCK" && $6 == f && $7 <= 101 &&
			($8 == "EOF" || $8 >= 101) { found = 1 } END { exit !found }' \
			/proc/locks && break
		sleep 0.1
	done
	expect "a disk QEMU writes is refused" 2 "--disk $disk: in use: .*lock=off" -- run -d "$disk"
	expect "a disk QEMU writes is refused read-only too" 2 "--disk $disk: in use" -- run -d "$disk,ro"
	expect "lock=off shares it anyway" 0 "hello from cpu 0" -- run -d "$disk,lock=off"
	kill $qpid
	wait $qpid 2>/dev/null
	trap 'rm -rf "$tmp"' EXIT
	for _ in $(seq 600); do
		grep -q " $ino " /proc/locks || break
		sleep 0.1
	done
	"$hintvm" run -p "test=smp-count iterations=4294967296" -d "$disk" \
		</dev/null >"$tmp/vm.out" 2>"$tmp/vm.err" &
	pid=$!
	for _ in $(seq 100); do
		grep -q "testkernel:" "$tmp/vm.out" 2>/dev/null && break
		sleep 0.1
	done
	if ! grep -q "testkernel:" "$tmp/vm.out"; then
		cp "$tmp/vm.err" "$tmp/err"; not_ok "hintvm runs on the disk QEMU left"
	fi
	timeout 30 qemu-system-x86_64 -S -display none -nodefaults \
		-drive file="$disk",if=none,format=raw,id=d0 \
		-device virtio-blk-pci,drive=d0 >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st = 1 ] && grep -q 'Failed to get .*lock' "$tmp/err"; then
		ok "QEMU refuses a disk hintvm writes"
	else
		echo "# QEMU status $st" >>"$tmp/err"; not_ok "QEMU refuses a disk hintvm writes"
	fi
	kill -TERM $pid
	wait $pid
else
	skip "disk locks shared with QEMU" "needs /dev/kvm and qemu-system-x86_64"
fi

if [ $have_kvm = 1 ]; then
	# Signals from the moment the VM is being created (its /dev/kvm is
	# open) until hintvm is gone, every 2 ms: each run ends with status 10,
	# and (in the ASan build) without a sanitizer report.
	python3 - "$hintvm" "$tmp/err" >"$tmp/out" 2>&1 <<'PY'
import os, signal, subprocess, sys, time
hintvm, err = sys.argv[1:3]
def kvm_open(pid):
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "/dev/kvm":
                return True
        except OSError:
            pass
    return False
statuses = {}
for run in range(20):
    vm = subprocess.Popen([hintvm, "run", "-c", "2", "-p",
                           "test=smp-count iterations=4294967296"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=open(err + str(run), "w"))
    while vm.poll() is None and not kvm_open(vm.pid):
        pass
    sig = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
    n = 0
    while vm.poll() is None:
        try:
            vm.send_signal(sig[n % 3])
        except ProcessLookupError:
            break
        n += 1
        time.sleep(0.002)
    st = vm.wait()
    statuses[st] = statuses.get(st, 0) + 1
    text = open(err + str(run)).read()
    if "Sanitizer" in text or "runtime error" in text:
        print("run", run, "sanitizer report:")
        print(text[:3000])
print("statuses", statuses)
PY
	sed 's/^/# /' "$tmp/out"
	if grep -qx "statuses {10: 20}" "$tmp/out"; then
		ok "signals during start and teardown: every run stops cleanly (status 10)"
	else
		not_ok "signals during start and teardown: every run stops cleanly (status 10)"
	fi
else
	skip "signals during start and teardown" "/dev/kvm is not usable"
fi

if [ $have_kvm = 1 ]; then
	# A guest floods ttyS0 while nobody reads hintvm's stdout (a pipe
	# shrunk to one page): the VM still answers its control socket, pause
	# included, SIGTERM still ends it, and --stats counts the dropped bytes.
	python3 - "$hintvm" "$tmp/flood.sock" "$tmp/err" >"$tmp/out" 2>&1 <<'PY'
import fcntl, os, signal, subprocess, sys, time
hintvm, sock, err = sys.argv[1:4]
r, w = os.pipe()
fcntl.fcntl(w, 1031, 16384)  # F_SETPIPE_SZ: the reader stalls sooner
vm = subprocess.Popen([hintvm, "run", "-p", "test=flood", "--stats",
                       "--control", sock], stdin=subprocess.DEVNULL,
                      stdout=w, stderr=open(err, "w"))
os.close(w)
import array, termios
start = time.monotonic()
queued = array.array("i", [0])
last, since = -1, start
# The pipe is full when it stops growing (the last page may stay part
# filled: a pipe reports POLLOUT per free page, not per free byte).
while time.monotonic() - start < 60:
    fcntl.ioctl(r, termios.FIONREAD, queued)
    if queued[0] != last:
        last, since = queued[0], time.monotonic()
    elif last > 0 and time.monotonic() - since >= 1:
        break
    time.sleep(0.05)
# Then the 64 KiB console buffer behind it fills: wait until the VM says it
# drops output (a slow guest on a loaded host takes long to get there).
import json
deadline = time.monotonic() + 180
while time.monotonic() < deadline:
    c = subprocess.run([hintvm, "ctl", sock, "stats"], timeout=20,
                       capture_output=True)
    try:
        if json.loads(c.stdout)["stats"]["console"]["dropped"] > 0:
            break
    except (ValueError, KeyError):
        pass
    time.sleep(0.5)
for req in ("pause", "resume"):
    try:
        c = subprocess.run([hintvm, "ctl", sock, req], timeout=20,
                           capture_output=True)
        print("ctl", req, "status", c.returncode)
    except subprocess.TimeoutExpired:
        print("ctl", req, "no answer")
start = time.monotonic()
vm.send_signal(signal.SIGTERM)
try:
    st = vm.wait(timeout=30)
    print("exit", st, "after %.3f s" % (time.monotonic() - start))
except subprocess.TimeoutExpired:
    print("still running 30 s after SIGTERM")
    vm.kill()
    vm.wait()
PY
	sed 's/^/# /' "$tmp/out"
	if grep -q "ctl pause status 0" "$tmp/out" && grep -q "ctl resume status 0" "$tmp/out" &&
		grep -q "^exit 10 after" "$tmp/out" &&
		grep -Eq "console: [0-9]+ bytes out, [1-9][0-9]* dropped" "$tmp/err"; then
		ok "a guest flooding a stalled stdout stays controllable and stoppable"
	else
		not_ok "a guest flooding a stalled stdout stays controllable and stoppable"
	fi

	# A guest writing CRASH_LOADED to pvpanic in a loop gets a few log
	# lines, not one per write.
	timeout --preserve-status -s TERM 3 "$hintvm" run -p "test=flood flood.target=pvpanic" \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	st=$?
	lines=$(grep -c pvpanic "$tmp/err")
	if [ $st = 10 ] && [ "$lines" -ge 1 ] && [ "$lines" -le 10 ]; then
		ok "pvpanic log lines are rate-limited ($lines in 3 s)"
	else
		echo "# status $st, $lines pvpanic lines" >>"$tmp/err"
		not_ok "pvpanic log lines are rate-limited"
	fi
else
	skip "flooding guests" "/dev/kvm is not usable"
fi

if [ $have_kvm = 1 ]; then
	# The control socket of a running VM, including requests it must refuse.
	sock=$tmp/ctl.sock
	# umask 000: the socket must still be the VM user's alone.
	(umask 000; exec "$hintvm" run -c 2 -p "test=smp-count iterations=4294967296" \
		--control "$sock" </dev/null >"$tmp/vm.out" 2>"$tmp/vm.err") &
	pid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
	expect "ctl status" 0 '"state":"running","vcpus":2' -- ctl "$sock" status
	expect "ctl pause" 0 '"state":"paused"' -- ctl "$sock" pause
	expect "ctl status while paused" 0 '"state":"paused"' -- ctl "$sock" status
	expect "ctl resume" 0 '"state":"running"' -- ctl "$sock" resume
	expect "ctl unknown request" 1 "unknown request 'reboot-now'; expected status" -- ctl "$sock" reboot-now
	expect "ctl oversized request" 1 "longer than" -- ctl "$sock" "$(head -c 1100 /dev/zero | tr '\0' 'y')"
	expect "a second VM on the same socket is refused" 2 "another VM is serving $sock" -- run --control "$sock"
	# Idle connections cannot starve the socket: with 100 of them open
	# (none sends anything) a real request is still answered; a partial
	# line is dropped after a second, a NUL gets an error at once.
	python3 - "$hintvm" "$sock" >"$tmp/out" 2>&1 <<'PY'
import socket, subprocess, sys, time
hintvm, sock = sys.argv[1:3]
idle = []
for _ in range(100):
    s = socket.socket(socket.AF_UNIX)
    s.setblocking(False)
    try:
        s.connect(sock)
    except BlockingIOError:
        pass
    idle.append(s)
start = time.monotonic()
r = subprocess.run([hintvm, "ctl", sock, "status"], capture_output=True,
                   timeout=30)
print("idle100 status", r.returncode, r.stdout.decode().strip(),
      "in %.3f s" % (time.monotonic() - start))
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
s.settimeout(10)
s.sendall(b"\0status\n")
print("nul reply", s.recv(512).decode().strip())
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
s.settimeout(10)
s.sendall(b"stat")
try:
    print("partial reply %r" % s.recv(512))
except socket.timeout:
    print("partial still open after 10 s")
PY
	sed 's/^/# /' "$tmp/out"
	if grep -q '^idle100 status 0 .*"ok":true' "$tmp/out"; then
		ok "ctl answered while 100 idle connections are open"
	else
		not_ok "ctl answered while 100 idle connections are open"
	fi
	if grep -q '^nul reply .*"ok":false.*printable' "$tmp/out"; then
		ok "a NUL in a request gets an error reply"
	else
		not_ok "a NUL in a request gets an error reply"
	fi
	if grep -qx "partial reply b''" "$tmp/out"; then
		ok "a client without a complete line is dropped"
	else
		not_ok "a client without a complete line is dropped"
	fi
	if [ "$(stat -c %a "$sock")" = 600 ]; then
		ok "control socket is 0600 under umask 000"
	else
		echo "# mode $(stat -c %a "$sock")" >"$tmp/err"
		not_ok "control socket is 0600 under umask 000"
	fi
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		# Even when the file is opened up, only root and the VM's user
		# get to steer it (SO_PEERCRED).
		chmod 0666 "$sock"
		chmod o+x "$tmp"
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$hintvm" ctl "$sock" pause </dev/null >"$tmp/out" 2>"$tmp/err"
		st=$?
		chmod 0600 "$sock"
		chmod o-x "$tmp"
		if [ $st = 1 ] && grep -q "permission denied" "$tmp/out"; then
			ok "another user's request is refused"
		else
			echo "# status $st" >>"$tmp/err"; not_ok "another user's request is refused"
		fi
	else
		skip "another user's request is refused" "needs root and setpriv"
	fi
	expect "ctl stop" 0 '"state":"stopping"' -- ctl "$sock" stop
	wait $pid
	st=$?
	# Started by root, the VM ran as its --user, which may not unlink
	# in root's directory: the socket stays, answering no more.
	if [ $st = 10 ] && { [ ! -e "$sock" ] || { [ "$(id -u)" = 0 ] &&
		! "$hintvm" ctl "$sock" status </dev/null >/dev/null 2>&1; }; }; then
		ok "VM stopped through the socket (status 10); the socket is gone or dead"
	else
		echo "# status $st" >"$tmp/err"; not_ok "VM stopped through the socket (status 10); the socket is gone or dead"
	fi
	expect "ctl with nobody listening" 2 "cannot connect to $sock" -- ctl "$sock" status
	echo "not a socket" >"$tmp/file"
	expect "--control over a regular file is refused" 2 "exists and is not a socket" -- run --control "$tmp/file"
else
	skip "control socket" "/dev/kvm is not usable"
fi

echo "1..$n"
[ $failed = 0 ]
