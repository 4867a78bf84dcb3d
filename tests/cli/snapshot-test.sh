#!/bin/bash
# Snapshots from the command line (docs/snapshot.md): `hintvm ctl VM
# snapshot DIR paused` of a running test kernel, `hintvm run --restore DIR`
# running it to its end, and each way a snapshot is refused (status 2,
# nothing started) with its exact message: truncated, corrupt, another
# format version or architecture, a missing or resized memory file, a file
# another user owns or others may write; a device that cannot be saved
# yet; a disk restored onto an image of another size or mode, or a
# restore whose devices differ from the snapshot's, or on its own image
# written since; a clone on its own copy of the disk; virtio-net's tap
# reattached by name, a clone on another tap, a missing tap, no --net,
# another MAC; a share the guest never used kept by its tag and restored
# on another directory, another tag or an added share refused. TAP output; skips without
# /dev/kvm. usage: snapshot-test.sh HINTVM
set -u
hintvm=$1
tmp=$(mktemp -d)
export HINTVM_RUNTIME_DIR=$tmp/run
pids=()
taps=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for t in "${taps[@]}"; do ip tuntap del "$t" mode tap 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/tap.sh"

if [ ! -w /dev/kvm ]; then
	echo "1..0 # SKIP no usable /dev/kvm"
	exit 0
fi

wait_for_line() { # FILE PATTERN
	for _ in $(seq 200); do grep -Eq -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
	return 1
}

# A snapshot of snap-count, taken mid-run and left paused, then stopped.
snap=$tmp/snap
mkdir "$snap"
"$hintvm" run --name snapvm -c 2 -m 64M \
	-p "test=snap-count chunk=20000000 lines=60" </dev/null >"$tmp/orig.out" 2>&1 &
pids+=($!)
vm_pid=$!
if wait_for_line "$tmp/orig.out" 'seq=3 '; then
	expect "ctl snapshot DIR paused" 0 '"ok":true,"state":"paused"' -- ctl snapvm snapshot "$snap" paused
else
	not_ok "the VM to snapshot printed nothing"
fi
"$hintvm" ctl snapvm stop >/dev/null 2>&1
wait "$vm_pid" 2>/dev/null
mode=$(stat -c %a "$snap/state" "$snap/memory" | sort -u)
[ "$mode" = 600 ] && ok "snapshot files are 0600" || { echo "modes: $mode" >"$tmp/err"; not_ok "snapshot files are 0600"; }

# A number is whole when " c0=" follows it (the pause may cut a line).
last=$(grep -o 'seq=[0-9]* c0=' "$tmp/orig.out" | tail -1 | sed 's/seq=\([0-9]*\) c0=/\1/')
expect "run --restore goes on to the end" 0 'RESULT test=snap-count cpus=2 ok=1 lines=60' -- run --restore "$snap"
# The pause can fall inside a line: its start is then the end of
# orig.out (before whatever hintvm printed as it stopped), its rest the
# start of the restored output; join them, so the line is counted once.
frag=$(awk -v l="seq=$last c0=" 'f { print; exit } index($0, l) { f = 1 }' "$tmp/orig.out")
frag=${frag%%hintvm:*}
case $frag in snap-count*) ;; *) frag= ;; esac
first=$( (printf '%s' "$frag"; cat "$tmp/out") | grep -o 'seq=[0-9]* c0=' | head -1 | sed 's/seq=\([0-9]*\) c0=/\1/')
if [ -n "$last" ] && [ "$first" = $((last + 1)) ] && ! grep -q testkernel: "$tmp/out"; then
	ok "restored output continues at seq=$first after seq=$last, no boot"
else
	echo "# before: last seq=$last; after: first seq=$first" >"$tmp/err"
	not_ok "restored output continues where it stopped"
fi

# The restored VM drops root as a booted one does (--user auto).
if [ "$(id -u)" = 0 ]; then
	"$hintvm" run --restore "$snap" --name restored </dev/null >"$tmp/restored.out" 2>&1 &
	rpid=$!
	pids+=($rpid)
	uid=0
	for _ in $(seq 200); do
		uid=$(awk '/^Uid:/ { print $3 }' "/proc/$rpid/status" 2>/dev/null)
		[ -n "$uid" ] && [ "$uid" != 0 ] && break
		sleep 0.01
	done
	if [ -n "$uid" ] && [ "$uid" != 0 ]; then
		ok "a restored VM runs as its --user (uid $uid), not root"
	else
		echo "# uid ${uid:-gone}" >"$tmp/err"
		not_ok "a restored VM runs as its --user, not root"
	fi
	wait "$rpid" 2>/dev/null
else
	skip "a restored VM runs as its --user, not root" "needs root"
fi

# Each refusal on a copy of the good snapshot.
bad() { rm -rf "$tmp/bad"; cp -a "$snap" "$tmp/bad"; }
size=$(stat -c %s "$snap/state")

bad
truncate -s $((size - 100)) "$tmp/bad/state"
expect_line "truncated state refused" 2 \
	"hintvm: snapshot $tmp/bad/state: truncated: the header says $size bytes, the file has $((size - 100))" \
	-- run --restore "$tmp/bad"

bad
printf '\x03' | dd of="$tmp/bad/state" bs=1 seek=8 conv=notrunc status=none
expect_line "another format version refused" 2 \
	"hintvm: snapshot $tmp/bad/state: format version 3, but this hintvm reads version 2 only" \
	-- run --restore "$tmp/bad"

bad
printf '\x02' | dd of="$tmp/bad/state" bs=1 seek=12 conv=notrunc status=none
expect_line "another architecture refused" 2 \
	"hintvm: snapshot $tmp/bad/state: taken on architecture arm64 (2), but this host is x86_64" \
	-- run --restore "$tmp/bad"

bad
printf '\xff' | dd of="$tmp/bad/state" bs=1 seek=$((size - 1000)) conv=notrunc status=none
expect "corrupt state refused" 2 \
	"^hintvm: snapshot $tmp/bad/state: corrupt: the CRC-32 of its body is 0x[0-9a-f]{8}, the header says 0x[0-9a-f]{8}\$" \
	-- run --restore "$tmp/bad"

bad
rm "$tmp/bad/memory"
expect_line "missing memory file refused" 2 \
	"hintvm: snapshot $tmp/bad/memory: cannot open it: No such file or directory" \
	-- run --restore "$tmp/bad"

bad
truncate -s 32M "$tmp/bad/memory"
expect_line "resized memory file refused" 2 \
	"hintvm: snapshot $tmp/bad/memory: 33554432 bytes, but the state file says the guest has 67108864" \
	-- run --restore "$tmp/bad"

bad
chmod 0666 "$tmp/bad/state"
expect_line "state others may write refused" 2 \
	"hintvm: snapshot $tmp/bad/state: mode 0666 lets others write it; expected 0600" \
	-- run --restore "$tmp/bad"

if [ "$(id -u)" = 0 ]; then
	bad
	chown 65534 "$tmp/bad/state"
	expect_line "state another user owns refused" 2 \
		"hintvm: snapshot $tmp/bad/state: owned by uid 65534, not by you (uid 0) or root" \
		-- run --restore "$tmp/bad"
else
	skip "state another user owns refused" "needs root to chown"
fi

# A share the guest never mounted (the test kernel mounts none) is kept
# by its tag; a restore names a directory of its own for it, and one with
# another tag, or none, is refused before it starts.
mkdir "$tmp/shared" "$tmp/other"
"$hintvm" run --name sharevm --share "$tmp/shared,tag=t" -p "test=smp-count iterations=4294967296" \
	--console none </dev/null >>"$tmp/vms.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$HINTVM_RUNTIME_DIR/sharevm.sock" ] && break; sleep 0.05; done
mkdir "$tmp/share"
expect "ctl snapshot keeps a share the guest never used" 0 '"ok"' \
	-- ctl sharevm snapshot "$tmp/share" paused
"$hintvm" ctl sharevm stop >/dev/null 2>&1
expect_line "a restore with another tag refused, naming both" 2 \
	"hintvm: snapshot $tmp/share/state: virtio-9p0: the share's tag is u, but the snapshot's was t: the restored guest knows the share by the tag it read at boot; restore with --share DIR,tag=t" \
	-- run --restore "$tmp/share" --share "$tmp/other,tag=u"
"$hintvm" run --restore "$tmp/share" --name sharevm2 --share "$tmp/other,tag=t" \
	--console none </dev/null >>"$tmp/vms.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$HINTVM_RUNTIME_DIR/sharevm2.sock" ] && break; sleep 0.05; done
expect "a restore on another directory runs" 0 '"state":"running"' -- ctl sharevm2 status
"$hintvm" ctl sharevm2 stop >/dev/null 2>&1
expect "a restore that adds a share refused, naming it" 2 "virtio-9p0" \
	-- run --restore "$snap" --share "$tmp/shared,tag=t"

# A disk: snap-blk snapshotted between its writes; each restore whose
# devices differ from the snapshot's is refused, naming what differs.
disk=$(realpath "$tmp")/disk.img
truncate -s $((21 * 512)) "$disk"
mkdir "$tmp/dsnap"
"$hintvm" run --name blkvm -m 64M -d "$disk" \
	-p "test=snap-blk records=20 chunk=40000000" </dev/null >"$tmp/blk.out" 2>&1 &
pids+=($!)
vm_pid=$!
if wait_for_line "$tmp/blk.out" 'snap-blk seq=3'; then
	expect "ctl snapshot of a VM with a disk" 0 '"ok":true,"state":"paused"' -- ctl blkvm snapshot "$tmp/dsnap" paused
else
	not_ok "the VM with a disk printed nothing"
fi
"$hintvm" ctl blkvm stop >/dev/null 2>&1
wait "$vm_pid" 2>/dev/null
cp "$disk" "$tmp/clone.img"
truncate -s $((42 * 512)) "$tmp/bigger.img"
expect_line "a disk of another size refused" 2 \
	"hintvm: snapshot $tmp/dsnap/state: virtio-blk0: the disk $(realpath "$tmp")/bigger.img is 21504 bytes, but the snapshot's ($disk) was 10752 bytes: restore with an image of that size" \
	-- run --restore "$tmp/dsnap" -d "$tmp/bigger.img"
expect_line "a read-only disk for a writable one refused" 2 \
	"hintvm: snapshot $tmp/dsnap/state: virtio-blk0: the disk $disk is read-only, but the snapshot's ($disk) was writable" \
	-- run --restore "$tmp/dsnap" -d "$disk,ro"
expect_line "a restore without the disk refused" 2 \
	"hintvm: snapshot $tmp/dsnap/state: it has device 'virtio-blk0' (section 11), which this restore lacks: give the options of the snapshotted VM (a clone may name its own --disk image)" \
	-- run --restore "$tmp/dsnap"
expect_line "a restore with a device the snapshot lacks refused" 2 \
	"hintvm: snapshot $tmp/dsnap/state: this restore has virtio-rng, the snapshot has no such device: give the options of the snapshotted VM" \
	-- run --restore "$tmp/dsnap" -d "$disk" --rng
expect "a clone on its own copy of the disk runs to the end" 0 \
	'RESULT test=snap-blk cpus=1 ok=1 written=20 verified=20' -- run --restore "$tmp/dsnap" -d "$tmp/clone.img"
expect "a restore on the snapshot's own, unchanged image runs to the end" 0 \
	'RESULT test=snap-blk cpus=1 ok=1 written=20 verified=20' -- run --restore "$tmp/dsnap" -d "$disk"
expect "a restore on that image, now written since, refused" 2 \
	"^hintvm: snapshot $tmp/dsnap/state: virtio-blk0: the disk $disk was modified after the snapshot \\(at [0-9]+\\.[0-9]{9}, the snapshot saw [0-9]+\\.[0-9]{9}\\): the restored guest would not know those writes; restore onto a copy of the image taken with the snapshot\$" \
	-- run --restore "$tmp/dsnap" -d "$disk"

# During continuous disk I/O, rate-limited so that a request is almost
# always held (iops=20: 50 ms each): the snapshot waits for it to be
# started and answered, and a clone on a copy of the image runs the load
# to its end.
truncate -s 16M "$tmp/load.img"
mkdir "$tmp/lsnap"
"$hintvm" run --name loadvm -m 64M -d "$tmp/load.img,iops=20" \
	-p "test=blkload ms=1500 size=65536 op=write span=8" </dev/null >"$tmp/load.out" 2>&1 &
pids+=($!)
vm_pid=$!
wait_for_line "$tmp/load.out" 'testkernel:' && sleep 0.3
expect "ctl snapshot during disk I/O" 0 '"ok":true,"state":"paused"' -- ctl loadvm snapshot "$tmp/lsnap" paused
# Requests the guest queued before the pause stay queued (they are in the
# snapshot's rings) while the VM stays paused: the image stays as saved.
before=$(stat -c %y "$tmp/load.img")
sleep 0.5
after=$(stat -c %y "$tmp/load.img")
if [ "$before" = "$after" ]; then
	ok "a VM its snapshot left paused writes nothing more to its disk"
else
	not_ok "a VM its snapshot left paused writes nothing more to its disk"
	echo "# the image changed from $before to $after"
fi
cp "$tmp/load.img" "$tmp/load-clone.img"
expect "resume after a paused snapshot" 0 '"ok":true' -- ctl loadvm resume
for _ in $(seq 50); do
	[ "$(stat -c %y "$tmp/load.img")" != "$after" ] && break
	sleep 0.1
done
if [ "$(stat -c %y "$tmp/load.img")" != "$after" ]; then
	ok "resumed, its disk is written again"
else
	not_ok "resumed, its disk is written again"
fi
"$hintvm" ctl loadvm stop >/dev/null 2>&1
wait "$vm_pid" 2>/dev/null
expect "its clone finishes the load" 0 'RESULT test=blkload cpus=1 ok=1' \
	-- run --restore "$tmp/lsnap" -d "$tmp/load-clone.img,iops=20"

# virtio-net on a tap: snapshotted with snap-count running, restored on
# the tap named again, on another tap (a clone), and each refusal: a
# missing tap, no --net at all, another MAC. Taps need CAP_NET_ADMIN.
tap1=hvmsnap$$
tap1=${tap1:0:13}a
tap2=${tap1%a}b
if ip tuntap add "$tap1" mode tap 2>"$tmp/err" && taps+=("$tap1") &&
	ip tuntap add "$tap2" mode tap 2>>"$tmp/err" && taps+=("$tap2"); then
	mkdir "$tmp/nsnap"
	"$hintvm" run --name netvm -m 64M --net tap="$tap1" \
		-p "test=snap-count chunk=20000000 lines=30" </dev/null >"$tmp/net.out" 2>&1 &
	pids+=($!)
	vm_pid=$!
	if wait_for_line "$tmp/net.out" 'seq=3 '; then
		expect "ctl snapshot of a VM with a tap" 0 '"ok":true,"state":"paused"' -- ctl netvm snapshot "$tmp/nsnap" paused
	else
		not_ok "the VM with a tap printed nothing"
	fi
	"$hintvm" ctl netvm stop >/dev/null 2>&1
	wait "$vm_pid" 2>/dev/null
	expect "a restore reattaches its tap by name and runs to the end" 0 \
		'RESULT test=snap-count cpus=1 ok=1 lines=30' -- run --restore "$tmp/nsnap" --net tap="$tap1"
	expect "a clone on another tap runs to the end, saying so" 0 \
		"virtio-net0: restored onto tap $tap2 \\(the snapshot's was $tap1\\)" -- \
		run --restore "$tmp/nsnap" --net tap="$tap2" -v
	grep -q 'RESULT test=snap-count cpus=1 ok=1 lines=30' "$tmp/out" &&
		ok "that clone ran to the end" || not_ok "that clone ran to the end"
	# A clone on a tap another VM holds: refused, said so.
	"$hintvm" run --name tapholder --net tap="$tap1" -p "test=spinlock ms=20000" \
		</dev/null >/dev/null 2>&1 &
	pids+=($!)
	holder=$!
	for _ in $(seq 100); do [ -S "$HINTVM_RUNTIME_DIR/tapholder.sock" ] && break; sleep 0.05; done
	expect_line "a clone on a tap another VM holds refused" 2 \
		"hintvm: --net tap=$tap1: in use by another process (each VM, and each clone of a snapshot, needs a tap of its own)" \
		-- run --restore "$tmp/nsnap" --net tap="$tap1"
	"$hintvm" ctl tapholder stop >/dev/null 2>&1
	wait "$holder" 2>/dev/null
	expect_line "a restore whose tap is missing refused" 2 \
		"hintvm: --net tap=hvmnosuchtap0: there is no network interface hvmnosuchtap0 (create it first: ip tuntap add hvmnosuchtap0 mode tap user \$USER)" \
		-- run --restore "$tmp/nsnap" --net tap=hvmnosuchtap0
	expect_line "a restore without --net refused, naming the tap" 2 \
		"hintvm: snapshot $tmp/nsnap/state: it has device 'virtio-net0' (on tap $tap1: give --net tap=$tap1) (section 11), which this restore lacks: give the options of the snapshotted VM (a clone may name its own --disk image)" \
		-- run --restore "$tmp/nsnap"
	expect_line "a restore with another MAC refused" 2 \
		"hintvm: snapshot $tmp/nsnap/state: virtio-net0: the MAC is 52:54:00:12:34:99, but the snapshot's was 52:54:00:12:34:56 (on tap $tap1): the restored guest keeps the MAC it read at boot; restore with --net tap=NAME,mac=52:54:00:12:34:56" \
		-- run --restore "$tmp/nsnap" --net tap="$tap1",mac=52:54:00:12:34:99
else
	for c in "snapshot and restore with a tap" "a clone on another tap" \
		"a clone on a tap another VM holds refused" \
		"a restore whose tap is missing refused" "a restore without --net refused" \
		"a restore with another MAC refused"; do
		skip "$c" "cannot create a tap: $(head -n 1 "$tmp/err")"
	done
fi

echo "1..$n"
[ "$failed" -eq 0 ]
