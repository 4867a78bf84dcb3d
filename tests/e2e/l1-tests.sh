#!/bin/sh
# The e2e tests, run inside L1 by l1-init. Each prints one E2E-RESULT line
# (pass/fail/skip) and, for guest boots, an E2E-TIME line with the
# boot-to-init time: from starting the VMM process to the guest init's
# first line on the console, as seen from L1.
E2E=/e2e
HINTVM=$E2E/hintvm
VMLINUX=$E2E/l2/vmlinux
BZIMAGE=$E2E/l2/vmlinuz
INITRD=$E2E/l2-initramfs.cpio
MEM=256M
TIMEOUT=${E2E_TIMEOUT:-120}
# quiet: every console byte costs exits; panic=-1: should the pvpanic
# driver be missing, a panic still ends the VM (as a reset, status 4).
BASE_CMDLINE="console=ttyS0 quiet panic=-1"
# HINTVM_E2E_VERBOSE=1 (tests/e2e/run) boots L2 kernels without "quiet"
# and copies every guest console to the L1 serial log.
VERBOSE=0
if grep -q 'e2e.verbose=1' /proc/cmdline; then
	VERBOSE=1
	BASE_CMDLINE="console=ttyS0 panic=-1"
fi
MARKER="E2E-GUEST init"

# HINTVM_E2E_ONLY=name,name (tests/e2e/run) runs just those tests.
ONLY=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^e2e.only=//p' | tr ',' ' ')
selected() { # NAME
	[ -z "$ONLY" ] && return 0
	for n in $ONLY; do [ "$n" = "$1" ] && return 0; done
	result "$1" skip "not selected (HINTVM_E2E_ONLY=$(echo $ONLY | tr ' ' ','))"
	return 1
}

result() { # NAME STATUS DETAIL
	echo "E2E-RESULT name=$1 status=$2 detail=$3"
}

# Show the end of a failed run's console, for whoever reads the test log.
show_log() { # NAME LOG
	if [ $VERBOSE = 1 ]; then
		sed "s/^/E2E-LOG $1: /" "$2"
	else
		tail -n 40 "$2" | sed "s/^/E2E-LOG $1: /"
	fi
}

field() { # KEY LINE -> value of KEY=... in LINE
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# hintvm's exit statuses (include/hintvm/hintvm.h).
STATUS_POWEROFF=0
STATUS_USAGE=2
STATUS_REBOOT=4
STATUS_CRASH=6

run_vm() { # NAME LOG -- COMMAND...: sets RUN (the e2e-run line)
	name=$1 log=$2
	shift 3
	RUN=$(e2e-run -t "$TIMEOUT" -m "$MARKER" -o "$log" -- "$@")
	STATUS=$(field status "$RUN")
	INIT_MS=$(field marker_ms "$RUN")
	WALL_MS=$(field wall_ms "$RUN")
}

# Boot KERNEL with CPUS vCPUs; the guest init then does ACTION.
boot_case() { # NAME KERNEL_LABEL KERNEL CPUS ACTION EXPECTED_STATUS [ARGS]
	name=$1 label=$2 kernel=$3 cpus=$4 action=$5 expect=$6
	selected "$name" || return
	cmdline="$BASE_CMDLINE${7:+ $7} e2e.action=$action"
	log=/tmp/$name.log
	if [ ! -x "$HINTVM" ]; then
		result "$name" skip "no static hintvm in the L1 image"
		return
	fi
	run_vm "$name" "$log" -- "$HINTVM" run -k "$kernel" -i "$INITRD" \
		-p "$cmdline" -c "$cpus" -m "$MEM"
	guest=$(grep -m 1 "$MARKER" "$log" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=hintvm kernel=$label cpus=$cpus boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS guest_uptime_s=$(field uptime "$guest")"
	problems="" clocksource=""
	[ "$STATUS" = "$expect" ] ||
		problems="$problems exit status $STATUS, expected $expect;"
	if [ -z "$guest" ]; then
		problems="$problems guest init never reported;"
	else
		nproc=$(field nproc "$guest")
		[ "$nproc" = "$cpus" ] ||
			problems="$problems nproc=$nproc, expected $cpus;"
		seen=$(echo "$guest" | sed -n 's/.*cmdline="\(.*\)"$/\1/p')
		[ "$seen" = "$cmdline" ] ||
			problems="$problems /proc/cmdline \"$seen\", expected \"$cmdline\";"
		[ "$(field marker "$guest")" = hintvm-e2e-initrd ] ||
			problems="$problems initrd marker file not visible;"
		# What a guest needs to boot without stalls (DESIGN.md).
		platform=$(grep -m 1 "E2E-GUEST platform" "$log" | tr -d '\r')
		for want in hypervisor tsc_deadline rtc i8042; do
			[ "$(field $want "$platform")" = 1 ] ||
				problems="$problems guest lacks $want ($platform);"
		done
		clocksource=$(field clocksource "$platform")
		# The pvpanic driver bound to the DSDT's device (ACPI only).
		case " ${7:-} " in
		*" acpi=off "*) ;;
		*) [ "$(field pvpanic "$platform")" = 3 ] ||
			problems="$problems pvpanic driver not bound ($(grep -m 1 'E2E-GUEST modules' "$log" | tr -d '\r'); $platform);" ;;
		esac
	fi
	if [ "$action" = panic ]; then
		grep -q "Kernel panic" "$log" ||
			problems="$problems no \"Kernel panic\" on the console;"
		grep -q "guest kernel panicked (pvpanic)" "$log" ||
			problems="$problems hintvm did not report the pvpanic event;"
	fi
	[ $VERBOSE = 1 ] && [ -z "$problems" ] && show_log "$name" "$log"
	if [ -z "$problems" ]; then
		result "$name" pass "$label${7:+ $7}, $cpus vCPU(s), $action -> status $STATUS, init after ${INIT_MS} ms, clocksource $clocksource"
	else
		show_log "$name" "$log"
		result "$name" fail "$label${7:+ $7}, $cpus vCPU(s), $action:$problems"
	fi
}

# A damaged bzImage must be refused with a message before any VM runs.
corrupt_case() {
	name=corrupt-bzimage
	selected $name || return
	if [ ! -x "$HINTVM" ]; then
		result $name skip "no static hintvm in the L1 image"
		return
	fi
	problems=""
	size=$(wc -c < "$BZIMAGE")
	head -c $((size / 2)) "$BZIMAGE" > /tmp/truncated.bzImage
	# Same size, but the boot sector's 0xAA55 flag is zeroed.
	{ head -c 510 "$BZIMAGE"; printf '\000\000'; tail -c +513 "$BZIMAGE"; } \
		> /tmp/badflag.bzImage
	for img in truncated badflag; do
		log=/tmp/$name-$img.log
		run_vm $name "$log" -- "$HINTVM" run -k /tmp/$img.bzImage \
			-i "$INITRD" -p "$BASE_CMDLINE" -c 1 -m "$MEM"
		msg=$(grep -v '^$' "$log" | head -n 1 | tr -d '\r')
		echo "E2E-INFO name=$name image=$img status=$STATUS wall_ms=$WALL_MS message=$msg"
		[ "$STATUS" = "$STATUS_USAGE" ] ||
			problems="$problems $img: exit status $STATUS, expected $STATUS_USAGE;"
		grep -q "$MARKER" "$log" && problems="$problems $img: guest ran;"
		case "$img:$msg" in
		truncated:*truncated*|badflag:*boot_flag*) ;;
		*) problems="$problems $img: message \"$msg\" does not say why;" ;;
		esac
	done
	if [ -z "$problems" ]; then
		result $name pass "truncated and bad-boot-flag bzImages refused with status $STATUS_USAGE before the VM ran"
	else
		result $name fail "$problems"
	fi
}

# The same vmlinux boot under QEMU in this L1, for comparison only. rtc=on:
# without a CMOS RTC, rtc_cmos stalls the guest for ~25 s here.
qemu_case() {
	name=qemu-microvm
	selected $name || return
	qemu=/usr/bin/qemu-system-x86_64
	if ! "$qemu" -version > /tmp/qemu-version.log 2>&1; then
		result $name skip "QEMU does not run in L1: $(head -n 1 /tmp/qemu-version.log)"
		return
	fi
	cmdline="$BASE_CMDLINE e2e.action=poweroff"
	log=/tmp/$name.log
	run_vm $name "$log" -- "$qemu" -M microvm,rtc=on -enable-kvm -cpu host \
		-smp 1 -m "$MEM" -nodefaults -no-user-config -nographic \
		-serial stdio -no-reboot -L /usr/share/qemu \
		-kernel "$VMLINUX" -initrd "$INITRD" -append "$cmdline"
	guest=$(grep -m 1 "$MARKER" "$log" | tr -d '\r')
	echo "E2E-TIME name=$name vmm=qemu-microvm kernel=vmlinux cpus=1 boot_to_init_ms=$INIT_MS wall_ms=$WALL_MS guest_uptime_s=$(field uptime "$guest")"
	if [ -n "$guest" ]; then
		[ $VERBOSE = 1 ] && show_log $name "$log"
		result $name pass "information only: QEMU microvm reached init after ${INIT_MS} ms"
	else
		show_log $name "$log"
		result $name skip "information only: QEMU microvm did not reach init (status $STATUS)"
	fi
}

boot_case boot-pvh-1cpu vmlinux "$VMLINUX" 1 poweroff $STATUS_POWEROFF
boot_case boot-pvh-2cpu vmlinux "$VMLINUX" 2 poweroff $STATUS_POWEROFF
boot_case boot-bzimage-1cpu bzImage "$BZIMAGE" 1 poweroff $STATUS_POWEROFF
boot_case boot-bzimage-2cpu bzImage "$BZIMAGE" 2 poweroff $STATUS_POWEROFF
boot_case reboot vmlinux "$VMLINUX" 1 reboot $STATUS_REBOOT
# The guest's pvpanic driver reports the panic: a guest crash, not the
# reset panic=-1 would give.
boot_case panic vmlinux "$VMLINUX" 1 panic $STATUS_CRASH
# Without ACPI: CPUs from the MP table, reset through the i8042 (0xfe).
boot_case acpi-off-2cpu vmlinux "$VMLINUX" 2 reboot $STATUS_REBOOT acpi=off
corrupt_case
qemu_case
