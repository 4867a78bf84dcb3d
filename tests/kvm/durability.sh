#!/bin/bash
# SIGKILL durability (docs/virtio.md, "What a flush guarantees"): the test
# kernel's `durable` payload writes numbered records to a virtio-blk disk,
# flushing after each and printing `DURABLE seq=N` once the flush completed;
# this script kills hintvm with SIGKILL at a random moment, many times, and
# checks after each kill that every record up to the last DURABLE line it
# read is on the image, intact. Runs with the sandbox on (the CLI default).
# Output is TAP: one case per kill, then a summary line.
#
# usage: durability.sh HINTVM [--kills N] [--seed S] [--max-ms MS] [--direct]
#   CI runs 20 kills; the campaign before a release: --kills 500.
set -u
hintvm=$1
shift
kills=20 seed=$$ max_ms=1500 disk_opts=""
while [ $# -gt 0 ]; do
	case $1 in
	--kills) kills=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--max-ms) max_ms=$2; shift 2 ;;
	--direct) disk_opts=",direct"; shift ;;
	*) echo "durability.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/hintvm-durability.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HINTVM_RUNTIME_DIR=$tmp/run
. "$(dirname "$0")/../cli/tap.sh"

if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
	echo "1..1"; skip "durability" "/dev/kvm is not usable"; exit 0
fi
ulimit -c 0
RANDOM=$seed
echo "# seed $seed, $kills kills, kill within ${max_ms} ms of start"
echo "1..$((kills + 1))"

# check IMAGE LAST: records 1..LAST intact; prints the count present after
# LAST (written, maybe not flushed: allowed either way).
check() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys
path, last = sys.argv[1], int(sys.argv[2])
data = open(path, 'rb').read()
def intact(seq):
    s = data[seq * 512:(seq + 1) * 512]
    if len(s) < 512 or s[:8] != b'HVMDURAB':
        return False
    a, b = struct.unpack_from('<QQ', s, 8)
    if a != seq or b != (~seq & (2**64 - 1)):
        return False
    return all(s[i] == (seq * 131 + i * 7) & 0xff for i in range(24, 512))
bad = [seq for seq in range(1, last + 1) if not intact(seq)]
if bad:
    print('missing or damaged: %s' % bad[:10])
    sys.exit(1)
extra = 0
while intact(last + 1 + extra):
    extra += 1
print(extra)
EOF
}

total_records=0 total_extra=0 lost=0 early=0
for i in $(seq 1 "$kills"); do
	img=$tmp/disk.img
	rm -f "$img"
	truncate -s 128M "$img"
	"$hintvm" run -d "$img$disk_opts" -p "test=durable records=250000" \
		</dev/null >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	delay_ms=$((RANDOM % max_ms))
	sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
	st=$?
	# Only complete lines count: the kill may cut the last one.
	last=$(grep -a '^DURABLE seq=[0-9]*$' "$tmp/out" | tail -1 | sed 's/.*=//')
	last=${last:-0}
	if [ $st != 137 ]; then
		echo "# hintvm exited with $st before the kill" >>"$tmp/err"
		not_ok "kill $i after ${delay_ms} ms: hintvm had already ended"
		early=$((early + 1))
	elif res=$(check "$img" "$last" 2>&1); then
		ok "kill $i after ${delay_ms} ms: records 1..$last durable (+$res written, unacknowledged)"
		total_records=$((total_records + last))
		total_extra=$((total_extra + res))
	else
		echo "# $res" >>"$tmp/err"
		not_ok "kill $i after ${delay_ms} ms: acknowledged records lost"
		lost=$((lost + 1))
	fi
done
if [ $lost = 0 ] && [ $early = 0 ]; then
	ok "$kills kills, $total_records acknowledged records checked, none lost ($total_extra unacknowledged ones were on the image too)"
else
	not_ok "$kills kills: $lost lost acknowledged records, $early ended before the kill; $total_records acknowledged records checked in the others"
fi
[ $failed = 0 ]
