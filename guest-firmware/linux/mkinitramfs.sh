#!/bin/sh
# mkinitramfs.sh OUT INIT: an uncompressed newc initramfs holding INIT as
# /init and the marker file the e2e tests look for (proof that the guest
# sees its initrd's content).
set -eu
out=$1 init=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$init" "$dir/init"
chmod 755 "$dir/init"
echo hintvm-e2e-initrd > "$dir/e2e-marker"
(cd "$dir" && printf '%s\n' . init e2e-marker |
	cpio --quiet -o -H newc --owner 0:0) > "$out.tmp"
mv "$out.tmp" "$out"
