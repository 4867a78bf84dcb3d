# Shell helpers of the e2e tests that run inside an L1, shared by
# tests/e2e/l1-tests.sh (x86-64) and tests/e2e-arm64/l1-tests.sh: both
# tiers' run scripts copy this file to /e2e/l1-lib.sh, and the tests source
# it. busybox sh. Expects TIMEOUT (seconds per VM) and VERBOSE (0/1).

# hintvm's exit statuses (include/hintvm/hintvm.h).
STATUS_POWEROFF=0
STATUS_USAGE=2
STATUS_REBOOT=4
STATUS_CRASH=6

result() { # NAME STATUS DETAIL
	echo "E2E-RESULT name=$1 status=$2 detail=$3"
}

# Show a run's console for whoever reads the test log: on a failure (the
# only call without VERBOSE=1) all of it, up to its last 400 lines, and the
# end of L1's kernel log, which tells a fault of the nested hypervisor (L1's
# KVM, or QEMU's emulation under it) from one of hintvm's.
show_log() { # NAME LOG
	tail -n 400 "$2" | tr -d '\r' | sed "s/^/E2E-LOG $1: /"
	[ "${VERBOSE:-0}" = 1 ] && return
	dmesg 2>/dev/null | tail -n 15 | sed "s/^/E2E-LOG $1: L1 dmesg: /"
}

field() { # KEY LINE -> value of KEY=... in LINE
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# Run a VMM under e2e-run (tests/e2e/e2e-run.c): its console goes to LOG;
# sets RUN (the e2e-run line), STATUS, INIT_MS (when MARKER first appeared)
# and WALL_MS. The command's stdin is RUN_VM_INPUT when set, else /dev/null.
run_vm() { # LOG MARKER -- COMMAND...
	log=$1 marker=$2
	shift 3
	RUN=$(e2e-run -t "$TIMEOUT" -m "$marker" -o "$log" \
		-i "${RUN_VM_INPUT:-/dev/null}" -- "$@")
	STATUS=$(field status "$RUN")
	INIT_MS=$(field marker_ms "$RUN")
	WALL_MS=$(field wall_ms "$RUN")
}

# What the guest init (guest-firmware/linux/init.c) reported against what it
# was given: vCPU count, /proc/cmdline and the initrd's marker file. Appends
# to $problems.
check_guest_init() { # GUEST_LINE CPUS CMDLINE
	if [ -z "$1" ]; then
		problems="$problems guest init never reported;"
		return 1
	fi
	[ "$(field nproc "$1")" = "$2" ] ||
		problems="$problems nproc=$(field nproc "$1"), expected $2;"
	seen=$(echo "$1" | sed -n 's/.*cmdline="\(.*\)"$/\1/p')
	[ "$seen" = "$3" ] ||
		problems="$problems /proc/cmdline \"$seen\", expected \"$3\";"
	[ "$(field marker "$1")" = hintvm-e2e-initrd ] ||
		problems="$problems initrd marker file not visible;"
}
