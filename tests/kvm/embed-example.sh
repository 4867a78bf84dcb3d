#!/bin/bash
# libhintvm as an orchestration tool would use it: install to a staging
# directory, find the library through pkg-config, build examples/ against
# it and boot the test kernel. TAP output.
# usage: embed-example.sh BUILD_DIR SOURCE_DIR [SANITIZERS]
set -u
build=$1
src=$2
# A sanitized libhintvm needs a sanitized program around it.
sanitize=${3:-none}
extra_cflags=()
[ "$sanitize" != none ] && extra_cflags=(-fsanitize="$sanitize")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
echo "1..3"
if ! meson install -C "$build" --destdir "$stage" --no-rebuild --quiet >"$stage/install.log" 2>&1; then
	echo "not ok 1 - meson install to a staging dir"; sed 's/^/# /' "$stage/install.log"; exit 1
fi
echo "ok 1 - meson install to a staging dir"
pc=$(find "$stage" -name hintvm.pc | head -1)
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$stage
if ! cc "${extra_cflags[@]}" "$src/examples/boot-test-kernel.c" $(pkg-config --cflags --libs hintvm) \
	-pthread -o "$stage/boot" 2>"$stage/cc.log"; then
	echo "not ok 2 - build the example with pkg-config"; sed 's/^/# /' "$stage/cc.log"; exit 1
fi
echo "ok 2 - build the example with pkg-config"
if [ ! -w /dev/kvm ]; then
	echo "ok 3 - boot through libhintvm # SKIP /dev/kvm is not usable"; exit 0
fi
libdir=$(dirname "$(find "$stage" -name 'libhintvm.so*' | head -1)")
out=$(LD_LIBRARY_PATH=$libdir "$stage/boot" ipi 2 2>&1)
st=$?
if [ $st = 0 ] && grep -q "RESULT test=ipi cpus=2 ok=1" <<<"$out"; then
	echo "ok 3 - boot through libhintvm"
else
	echo "not ok 3 - boot through libhintvm (status $st)"; sed 's/^/# /' <<<"$out"; exit 1
fi
