#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Boot the built-in test kernel under QEMU microvm and check its
# verdict: the RESULT line must match PATTERN and QEMU must exit with
# EXPECTED_STATUS (isa-debug-exit: 1 = the kernel wrote 0 = success).
#
# usage: qemu-boot.sh QEMU ACCEL KERNEL SMP CMDLINE PATTERN EXPECTED_STATUS
# ACCEL is tcg or kvm (kvm skips when /dev/kvm is not usable).
set -u

qemu=$1 accel=$2 kernel=$3 smp=$4 cmdline=$5 pattern=$6 expected=$7

if [ -z "$qemu" ] || ! command -v "$qemu" >/dev/null 2>&1; then
	echo "SKIP: qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
	exit 77
fi
if [ "$accel" = kvm ] && ! [ -r /dev/kvm -a -w /dev/kvm ]; then
	echo "SKIP: /dev/kvm is missing or not accessible"
	exit 77
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
timeout 60 "$qemu" -M microvm -accel "$accel" -smp "$smp" -m 128M \
	-kernel "$kernel" -append "$cmdline" \
	-device isa-debug-exit,iobase=0xf4,iosize=4 \
	-serial stdio -nographic -nodefaults -no-reboot >"$log" 2>&1
status=$?
cat "$log"

result=$(grep '^RESULT ' "$log")
if [ "$(printf '%s\n' "$result" | grep -c .)" -ne 1 ]; then
	echo "FAIL: expected exactly one RESULT line, got:"
	printf '%s\n' "$result"
	exit 1
fi
if ! printf '%s\n' "$result" | grep -Eq -- "$pattern"; then
	echo "FAIL: RESULT line does not match '$pattern'"
	exit 1
fi
if [ "$status" -ne "$expected" ]; then
	echo "FAIL: qemu exit status $status, expected $expected"
	exit 1
fi
echo "PASS"
