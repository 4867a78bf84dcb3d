#!/bin/bash
# scripts/check-layering, checked by planting one violation of each of its
# rules in a copy of the tree's sources (HVM_TREE) and expecting the check
# to fail naming the offender; the copy as it is must pass. TAP output.
#
# usage: layering-test.sh [SOURCE_ROOT]
set -u
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
check=$top/scripts/check-layering
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../cli/tap.sh
. "$top/tests/cli/tap.sh"

# One copy of what the check reads (the C, header and assembler files);
# fresh puts back what the last case planted.
(cd "$top" && find src include guest-firmware tests bench examples \
	-name '*.[chS]' -print0 | cpio -0pdm --quiet "$tmp/tree")
# and the names of the shim's generated protobuf-c headers.
cp "$top/src/shim/meson.build" "$tmp/tree/src/shim/"
planted=()
fresh() {
	local f

	for f in "${planted[@]}"; do
		rm -f "$tmp/tree/$f"
		[ ! -e "$top/$f" ] || cp "$top/$f" "$tmp/tree/$f"
	done
	planted=()
}

# plant FILE TEXT: append TEXT to FILE of the copy (created if need be).
plant() {
	mkdir -p "$(dirname "$tmp/tree/$1")"
	printf '%s\n' "$2" >>"$tmp/tree/$1"
	planted+=("$1")
}

# fails NAME PATTERN: the check fails on the copy, PATTERN in its output.
fails() {
	if HVM_TREE=$tmp/tree "$check" >"$tmp/out" 2>"$tmp/err"; then
		echo "# check-layering passed" >>"$tmp/err"
		not_ok "$1"
	elif ! grep -Eq -- "$2" "$tmp/out"; then
		echo "# output does not match /$2/" >>"$tmp/err"
		not_ok "$1"
	else
		ok "$1"
	fi
}

passes() {
	if HVM_TREE=$tmp/tree "$check" >"$tmp/out" 2>"$tmp/err"; then
		ok "$1"
	else
		not_ok "$1"
	fi
}

fresh
passes "the tree as it is keeps its layers"

fresh
plant src/core/vm.c '#include "agent/agent_client.h"'
fails "src/core/vm.c may not include the agent's host side" \
	'src/core/vm.c includes src/agent/agent_client.h: it may include only'

fresh
plant src/core/vm.c '#include "control/control.h"'
fails "src/core/vm.c may not include the control plane" \
	'src/core/vm.c includes src/control/control.h'

fresh
plant src/base/log.c '#include "core/vm.h"'
fails "src/base includes nothing above it" \
	'src/base/log.c includes src/core/vm.h: it may include only its own directory and nothing else'

fresh
plant src/devices/uart8250.c '#include "arch/x86/platform.h"'
fails "only src/arch includes arch headers" \
	'src/devices/uart8250.c includes src/arch/x86/platform.h'

fresh
plant src/base/log.c '#include "../../tests/unit/sandboxed_call.h"'
fails "src/ never includes from tests/" \
	'src/base/log.c includes tests/unit/sandboxed_call.h'

fresh
plant guest-firmware/oci/oci-init.c '#include "runtime/spec.h"'
fails "guest code includes no host header (oci-init and runtime/spec.h)" \
	'guest-firmware/oci/oci-init.c includes src/runtime/spec.h'

fresh
plant guest-firmware/x86/main.c '#include "core/vm.h"'
fails "guest code includes no host header (a test kernel and core/vm.h)" \
	'guest-firmware/x86/main.c includes src/core/vm.h'

fresh
plant guest-firmware/x86/main.c '#include "arch/x86/cpuid.h"'
fails "guest code includes only its arch's platform header of src/arch" \
	'guest-firmware/x86/main.c includes src/arch/x86/cpuid.h'

fresh
plant guest-firmware/agent/main.c '#include "arch/x86/platform.h"'
fails "the guest agent includes no arch header" \
	'guest-firmware/agent/main.c includes src/arch/x86/platform.h'

fresh
plant src/core/vm.c '#include "core/no_such_header.h"'
fails "an include that resolves to no file fails" \
	'src/core/vm.c includes src/core/.*no_such_header.h: no such file'

fresh
plant src/newdir/thing.c '#include "base/log.h"'
fails "a directory without a row in the table fails" \
	'src/newdir/thing.c includes src/base/log.h: its directory has no row'

fresh
plant src/devices/uart8250.c '
const char *hvm_version(void)
{
	return "planted";
}'
fails "a public hvm_ symbol defined outside src/vmm and its listed files" \
	'src/devices/uart8250.c:[0-9]+ defines the public hvm_version'

fresh
plant src/control/registry.c '
struct hvm_vm *
hvm_vm_create(const struct hvm_config *cfg)
{
	return 0;
}'
fails "a listed file defines only the public symbols listed for it" \
	'src/control/registry.c:[0-9]+ defines the public hvm_vm_create'

fresh
plant src/devices/uart8250.c 'int hvm_vm_start(struct hvm_vm *vm);'
passes "a declaration of a public symbol is no definition"

echo "1..$n"
[ "$failed" -eq 0 ]
