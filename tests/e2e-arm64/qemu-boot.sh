#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Boot the arm64 test kernel under QEMU virt (TCG, GICv3) and check its
# verdict: exactly one RESULT line, matching PATTERN. (QEMU exits 0 for
# both PSCI SYSTEM_OFF and, with -no-reboot, SYSTEM_RESET: the line is
# the verdict.)
#
# usage: qemu-boot.sh QEMU KERNEL SMP CMDLINE PATTERN
set -u

qemu=$1 kernel=$2 smp=$3 cmdline=$4 pattern=$5

if [ -z "$qemu" ] || ! command -v "$qemu" >/dev/null 2>&1; then
	echo "SKIP: qemu-system-aarch64 is not installed (apt-get install qemu-system-arm)"
	exit 77
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
timeout 60 "$qemu" -M virt,gic-version=3 -cpu max -smp "$smp" -m 128M \
	-kernel "$kernel" -append "$cmdline" \
	-serial stdio -nographic -nodefaults -no-reboot >"$log" 2>&1 </dev/null
status=$?
cat "$log"
result=$(grep '^RESULT ' "$log")
if [ "$(printf '%s\n' "$result" | grep -c .)" -ne 1 ]; then
	echo "FAIL: expected exactly one RESULT line (qemu status $status)"
	exit 1
fi
if ! printf '%s\n' "$result" | grep -Eq -- "$pattern"; then
	echo "FAIL: RESULT line does not match '$pattern'"
	exit 1
fi
echo PASS
