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
echo "1..5"
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
	echo "ok 3 - boot through libhintvm # SKIP /dev/kvm is not usable"
	echo "ok 4 - build the steering example # SKIP /dev/kvm is not usable"
	echo "ok 5 - steer a running VM through libhintvm # SKIP /dev/kvm is not usable"
	exit 0
fi
libdir=$(dirname "$(find "$stage" -name 'libhintvm.so*' | head -1)")
out=$(LD_LIBRARY_PATH=$libdir "$stage/boot" ipi 2 2>&1)
st=$?
if [ $st = 0 ] && grep -q "RESULT test=ipi cpus=2 ok=1" <<<"$out"; then
	echo "ok 3 - boot through libhintvm"
else
	echo "not ok 3 - boot through libhintvm (status $st)"; sed 's/^/# /' <<<"$out"; exit 1
fi
if ! cc "${extra_cflags[@]}" "$src/examples/steer-running-vm.c" $(pkg-config --cflags --libs hintvm) \
	-pthread -o "$stage/steer" 2>"$stage/cc.log"; then
	echo "not ok 4 - build the steering example"; sed 's/^/# /' "$stage/cc.log"; exit 1
fi
echo "ok 4 - build the steering example"
# Its own registry, so that nothing else on the host is listed.
out=$(HINTVM_RUNTIME_DIR=$stage/run LD_LIBRARY_PATH=$libdir "$stage/steer" embedded 2>&1)
st=$?
if [ $st = 0 ] && grep -q "^registered: embedded at $stage/run/embedded.sock" <<<"$out" &&
	grep -q '^info: {"name":"embedded".*"config":{' <<<"$out" &&
	grep -q '^set halt-poll 20000: ok' <<<"$out" &&
	grep -q "^set cpus 2: refused ('cpus' is fixed once the VM exists" <<<"$out" &&
	grep -q '"event":"set".*"key":"halt-poll","value":"20000"' <<<"$out" &&
	grep -q '"event":"state".*"state":"paused"' <<<"$out" &&
	grep -q '"event":"state".*"state":"running"' <<<"$out" &&
	grep -q '"event":"exit".*"reason":"stopped","status":10' <<<"$out" &&
	grep -q '^ended: stopped (status 10)' <<<"$out"; then
	echo "ok 5 - steer a running VM through libhintvm"
else
	echo "not ok 5 - steer a running VM through libhintvm (status $st)"; sed 's/^/# /' <<<"$out"; exit 1
fi
