# The arm64 L1 of the nested tiers: qemu-system-aarch64 in software
# emulation (TCG) with virtualization=on, so that Debian's arm64 kernel runs
# at EL2 with KVM built in and hintvm has a /dev/kvm. Sourced by
# tests/e2e-arm64/run (busybox initramfs L1) and tests/oci/run --arch arm64
# (the Debian-root L1). The twin of tests/e2e/l1-qemu.sh. bash.

# l1_qemu_arm64 TIMEOUT_S CPU KERNEL INITRD CMDLINE SERIAL_LOG STDERR_LOG
#               [QEMU ARG...]
# Boots the L1 with no input, console on its PL011 (CMDLINE gets
# console=ttyAMA0); the serial console goes to SERIAL_LOG. Returns QEMU's
# status (124 when TIMEOUT_S ran out; 0 also when the L1 reset itself:
# -no-reboot).
l1_qemu_arm64() {
	local timeout=$1 cpu=$2 kernel=$3 initrd=$4 cmdline=$5 serial=$6 err=$7
	shift 7
	timeout --foreground -k 10 "$timeout" \
		qemu-system-aarch64 -M virt,virtualization=on,gic-version=3 \
		-cpu "$cpu" -smp 2 -m 2G -accel tcg,thread=multi \
		-nodefaults -nographic -serial stdio -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyAMA0 $cmdline" "$@" \
		< /dev/null > "$serial" 2> "$err"
}
