# The L1 of every nested tier: QEMU in software emulation (TCG) with a CPU
# model that has hardware virtualization, so that the L1 Linux has a
# /dev/kvm for hintvm. x86-64: -cpu EPYC (KVM on emulated SVM); arm64:
# -M virt,virtualization=on (the kernel at EL2, KVM built in). Sourced by
# tests/l1/host.sh. bash.

# l1_qemu ARCH CPU TIMEOUT_S KERNEL INITRD CMDLINE SERIAL_LOG STDERR_LOG
#         [QEMU ARG...]
# Boots the L1 with no input; its serial console goes to SERIAL_LOG (the
# console= argument is added here). CPU empty: the tiers' default model
# (EPYC; arm64: max,pauth-impdef=on, 3x faster than plain max with the
# cheap pointer-auth algorithm; cortex-a72 gives nVHE). Returns QEMU's
# status (124 when TIMEOUT_S ran out; 125 when L1_STALL_S seconds passed
# without console output; 0 also when the L1 reset itself: -no-reboot). QEMU's own record of CPU resets and triple faults (-d
# cpu_reset) goes to STDERR_LOG.cpu-reset: l1_reset_cause reads it.
l1_qemu() {
	local arch=$1 cpu=$2 timeout=$3 kernel=$4 initrd=$5 cmdline=$6
	local serial=$7 err=$8 machine
	shift 8
	case $arch in
	x86)
		machine=(qemu-system-x86_64 -accel tcg -M pc -cpu "${cpu:-EPYC}")
		cmdline="console=ttyS0 $cmdline" ;;
	arm64)
		machine=(qemu-system-aarch64 -accel tcg,thread=multi
			-M virt,virtualization=on,gic-version=3
			-cpu "${cpu:-max,pauth-impdef=on}")
		cmdline="console=ttyAMA0 $cmdline" ;;
	*) echo "l1_qemu: unknown architecture '$arch' (x86 or arm64)" >&2
		return 2 ;;
	esac
	timeout --foreground -k 10 "$timeout" "${machine[@]}" -smp 2 -m 2G \
		-nodefaults -nographic -serial stdio -no-reboot \
		-d cpu_reset -D "$err.cpu-reset" \
		-kernel "$kernel" -initrd "$initrd" -append "$cmdline" "$@" \
		< /dev/null > "$serial" 2> "$err" &
	l1_stall_watch $! "$serial" "$err"
}

# l1_stall_watch PID SERIAL_LOG STDERR_LOG: waits for the L1's QEMU
# (PID, its timeout) and returns its status. With L1_STALL_S set, an L1
# whose serial console stayed silent that long is stopped: status 125,
# and a line in STDERR_LOG. The cases of the tiers that set it print
# within seconds when they pass (the longest silence in their logs is
# under 40 s of L1 uptime), so such an L1 is wedged (with both emulated
# CPUs stuck no soft lockup can panic it, and its whole deadline would be
# lost) or a case waits out a long deadline of its own: tests/oci/run.
l1_stall_watch() {
	local pid=$1 serial=$2 err=$3 size last=-1 still=0
	while [ "${L1_STALL_S:-0}" -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 1
		size=$(stat -c %s "$serial" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size still=0
			continue
		fi
		still=$((still + 1))
		[ "$still" -ge "$L1_STALL_S" ] || continue
		echo "l1_qemu: no serial output for ${still} s (L1_STALL_S): stopping the L1" >> "$err"
		kill -TERM "$pid" 2>/dev/null
		for still in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null && sleep 1
		done
		pkill -KILL -P "$pid" 2>/dev/null
		wait "$pid"
		return 125
	done
	wait "$pid"
}

# Why an L1 that QEMU ended with status 0 before its tests were done went
# away, from its serial log and QEMU's -d cpu_reset record: prints
# "triple-fault" (QEMU emulated a triple fault of the x86 L1 CPU outside
# guest mode: the L1 kernel's own exception handling failed without a
# word), "panic" (the L1 kernel panicked: panic=-1 resets), or "unknown".
l1_reset_cause() { # SERIAL_LOG STDERR_LOG
	# E2E- lines carry the L2 guests' consoles (the panic test's among
	# them); the L1 kernel's own messages are the other lines.
	if grep -av '^E2E-' "$1" | grep -aq -e 'Kernel panic' -e 'BUG:' -e 'Oops'; then
		echo panic
	elif grep -aq '^Triple fault' "$2.cpu-reset" 2>/dev/null; then
		echo triple-fault
	else
		echo unknown
	fi
}

# The first lines of the L1 kernel's oops or panic in SERIAL_LOG, as
# "E2E-LOG l1-panic: ..." lines: where it happened (RIP, the task, the
# first frames). A CI log keeps only its tail, which is the panic's end.
l1_panic_head() { # SERIAL_LOG
	tr -d '\r' < "$1" | awk '
		/^E2E-/ { next }
		!start && /BUG:|Oops|general protection|double fault|stack guard|Kernel panic/ { start = 1 }
		start && n < 40 { print "E2E-LOG l1-panic: " $0; n++ }'
}
