#!/bin/bash
# agent-modules.sh PKGROOT KVER OUT_CPIO: the part of an unpacked kernel
# package's /lib/modules/KVER that `hintvm initramfs` reads for the guest
# agent (docs/agent.md), as a newc archive rooted at /: modules.order,
# modules.builtin and the modules the agent wants with their dependencies
# (each module's own .modinfo "depends=", as hintvm reads them: an
# unpacked package has no modules.dep). The e2e tiers append it to the L1
# initramfs, so that in L1 `hintvm run --agent -k KERNEL` finds
# /lib/modules/KVER as on a Debian host (the whole directory would be
# ~400 MiB of initramfs for TCG to unpack). Used by both tiers' prepare
# scripts; the list follows src/image/initramfs.c.
set -euo pipefail
pkgroot=$1 kver=$2 out=$3
src=$pkgroot/lib/modules/$kver
WANTED="virtio_pci virtio_mmio vmw_vsock_virtio_transport virtio_blk
	virtio_net virtio_console virtio_rng ext4 erofs overlay crc32c_generic
	9pnet_virtio 9p pvpanic_mmio pvpanic_pci"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dst=$work/lib/modules/$kver
mkdir -p "$dst"
python3 - "$src" $WANTED > "$work/list" <<'PY'
import os, sys
src, wanted = sys.argv[1], sys.argv[2:]
def name(path):
    base = os.path.basename(path)
    return base[:base.index(".ko")].replace("-", "_")
paths = {name(l.strip()): l.strip() for l in open(os.path.join(src, "modules.order")) if ".ko" in l}
def depends(path):
    data = open(os.path.join(src, path), "rb").read()
    i = data.find(b"\0depends=")
    if i < 0:
        return []
    value = data[i + 9:data.index(b"\0", i + 1)].decode()
    return [d.replace("-", "_") for d in value.split(",") if d]
seen = set()
def visit(n):
    if n in seen or n not in paths:
        return
    seen.add(n)
    for d in depends(paths[n]):
        visit(d)
    print(paths[n])
for w in wanted:
    visit(w)
PY
while read -r m; do
	mkdir -p "$dst/$(dirname "$m")"
	case $m in
	*.xz) xz -dc "$src/$m" > "$dst/${m%.xz}" ;;
	*) cp "$src/$m" "$dst/$m" ;;
	esac
done < "$work/list"
for f in modules.order modules.builtin; do
	[ -f "$src/$f" ] && sed 's/\.ko\.xz$/.ko/' "$src/$f" > "$dst/$f"
done
(cd "$work" && find . | LC_ALL=C sort |
	cpio --quiet -o -H newc --owner 0:0) > "$out"
echo "agent-modules: $(wc -l < "$work/list") modules of $kver" >&2
