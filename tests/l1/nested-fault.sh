# shellcheck shell=sh
# Sourced by the x86 L1 tests (tests/e2e/l1-lib.sh, tests/kernel/l1-hintvm):
# tells a fault of the L1's emulated CPU apart from a hintvm failure.
#
# The x86 L1 is QEMU 7.2 emulating an AMD CPU with SVM (TCG). Now and then
# (about one run in 450 of 4 vCPUs on 2 L1 CPUs doing directed yields, under
# host load) its emulation of VMRUN resumes an L2 vCPU at the L1 kernel's
# own VMRUN code, __svm_vcpu_run: KVM's trace shows KVM entering the L2 at
# the right RIP and the very next exit (a nested page fault) at the L1's
# address. The L2 then takes a page fault it cannot deliver and
# triple-faults, and hintvm exits with status 6 (docs/linux-guests.md,
# issue 12); a Linux L2 instead takes KVM's emulated page faults at that
# RIP forever, and the run times out. Neither the L2's code nor hintvm can put an L1 kernel address
# into an L2 RIP (hintvm sets registers only before the first KVM_RUN), so
# such an exit is evidence of the emulation fault. The same fault has a
# second shape, with Linux guests: the L2 resumed at the right RIP but
# without its address translation, an instant triple fault on an
# instruction fetch from the page it had just executed
# (nested_fault_lost_page, from the flight recorder below). Any failure
# without one of these records is a failure.
#
# nested_fault_watch MODE records every kvm_exit at such a RIP, through a
# filter on KVM's own tracepoint (nothing else is recorded, so it costs
# nothing while all is well):
#   linux       the L1 kernel's __svm_vcpu_run, from /proc/kallsyms (an L2
#               Linux runs at kernel addresses too, so only this range is
#               proof)
#   testkernel  any RIP in the upper half: hintvm's test kernel runs below
#               4 GiB (the kernel suite's L1 has no kallsyms)
# nested_fault_arm before a run forgets what was recorded; nested_fault_seen
# after it prints the recorded exits (at most 3) and succeeds when there
# were any. Without KVM's tracepoints (or on arm64) the watch is off and
# nested_fault_seen always fails: every failure stays a failure.
#
# Beside the watch, a flight recorder: KVM's entries, exits and injected
# events of the current run in a small ring of their own (a tracefs
# instance), so that a triple fault the watch has no evidence for still
# shows what KVM did for the L2 just before it. nested_fault_flight prints
# its last events.
NESTED_FAULT_TRACE=/sys/kernel/tracing
NESTED_FAULT_FLIGHT=$NESTED_FAULT_TRACE/instances/hintvm-flight
NESTED_FAULT_FLIGHT_EVENTS="kvm_entry kvm_exit kvm_userspace_exit kvm_inj_virq
	kvm_inj_exception kvm_page_fault kvm_pio kvm_mmio kvm_msr kvm_cr
	kvm_apic_accept_irq kvm_eoi kvm_set_irq kvm_msi_set_irq
	kvm_ioapic_set_irq kvm_emulate_insn kvm_vcpu_wakeup"
NESTED_FAULT_ON=0
NESTED_FAULT_FLIGHT_ON=0
NESTED_FAULT_FILTER="off (no KVM tracepoints, or not x86)"

nested_fault_watch() { # MODE
	t=$NESTED_FAULT_TRACE
	[ "$(uname -m)" = x86_64 ] || return 0
	[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null
	[ -w $t/events/kvm/kvm_exit/filter ] || return 0
	case $1 in
	linux)
		# The symbol's start and the next higher address in the kernel.
		range=$(awk '$3 == "__svm_vcpu_run" { print $1; exit }' /proc/kallsyms 2>/dev/null)
		[ -n "$range" ] && [ "$range" != 0000000000000000 ] || return 0
		end=$(awk -v s="$range" '$1 > s && (e == "" || $1 < e) { e = $1 } END { print e }' \
			/proc/kallsyms)
		[ -n "$end" ] || return 0
		filter="guest_rip >= 0x$range && guest_rip < 0x$end"
		;;
	testkernel)
		filter="guest_rip >= 0xffff800000000000"
		;;
	*)
		return 0
		;;
	esac
	echo 64 >$t/buffer_size_kb 2>/dev/null
	echo "$filter" >$t/events/kvm/kvm_exit/filter || return 0
	echo 1 >$t/events/kvm/kvm_exit/enable || return 0
	NESTED_FAULT_ON=1
	NESTED_FAULT_FILTER="kvm_exit if $filter"
	nested_fault_flight_on
}

nested_fault_flight_on() {
	f=$NESTED_FAULT_FLIGHT
	mkdir $f 2>/dev/null
	[ -d $f/events/kvm ] || return 0
	echo 256 >$f/buffer_size_kb 2>/dev/null
	for e in $NESTED_FAULT_FLIGHT_EVENTS; do
		echo 1 >$f/events/kvm/$e/enable 2>/dev/null
	done
	NESTED_FAULT_FLIGHT_ON=1
	NESTED_FAULT_FILTER="$NESTED_FAULT_FILTER; flight recorder on"
}

nested_fault_arm() {
	[ $NESTED_FAULT_ON = 1 ] && echo >$NESTED_FAULT_TRACE/trace
	[ $NESTED_FAULT_FLIGHT_ON = 1 ] && echo >$NESTED_FAULT_FLIGHT/trace
	return 0
}

# nested_fault_tracing off|on: both recorders stopped for a timed run (a
# benchmark's figures must not carry the cost of tracing every KVM exit
# under TCG), then started again.
nested_fault_tracing() {
	v=1
	[ "$1" = off ] && v=0
	[ $NESTED_FAULT_ON = 1 ] && echo $v >$NESTED_FAULT_TRACE/tracing_on
	[ $NESTED_FAULT_FLIGHT_ON = 1 ] && echo $v >$NESTED_FAULT_FLIGHT/tracing_on
	return 0
}

# The flight recorder's last LINES (default 60) events of the run.
nested_fault_flight() { # [LINES]
	[ $NESTED_FAULT_FLIGHT_ON = 1 ] || return 1
	grep -a -v '^#' $NESTED_FAULT_FLIGHT/trace | tail -n "${1:-60}" |
		sed 's/^ *//'
}

nested_fault_seen() {
	[ $NESTED_FAULT_ON = 1 ] || return 1
	exits=$(grep -a 'kvm_exit:' $NESTED_FAULT_TRACE/trace | head -n 3)
	[ -z "$exits" ] && exits=$(nested_fault_lost_page)
	[ -n "$exits" ] || return 1
	echo "$exits"
}

# The second shape of the same fault, from the flight recorder: KVM resumes
# the L2 after an exit (an OUT, say) and the L2 triple-faults at once,
# delivering an instruction-fetch page fault on a not-present page
# (intr_info ...b0e: valid, exception with error code, vector 14; error
# code bit 4 set, bit 0 clear) at the very RIP KVM entered it at, on the
# 4 KiB page of the instruction that made the previous exit. The L2 had
# just executed from that page and nothing ran in between but KVM and
# hintvm's handling of the exit, which touches neither the L2's page
# tables nor its CR3: the emulated VMRUN lost the L2's address
# translation. Prints the exit, the entry and the shutdown.
nested_fault_lost_page() {
	[ $NESTED_FAULT_FLIGHT_ON = 1 ] || return 0
	# The vCPU thread that shut down: its own entries and exits only.
	task=$(grep -a 'kvm_exit: .* reason shutdown ' $NESTED_FAULT_FLIGHT/trace |
		tail -n 1 | awk '{ print $1 }')
	[ -n "$task" ] || return 0
	awk -v t="$task" '$1 == t && ($0 ~ /kvm_exit:/ || $0 ~ /kvm_entry:/)' \
		$NESTED_FAULT_FLIGHT/trace | tail -n 3 | awk '
		{ line[NR] = $0 }
		/kvm_exit:/ { for (i = 1; i < NF; i++) if ($i == "rip") rip[NR] = $(i + 1) }
		/kvm_entry:/ { for (i = 1; i < NF; i++) if ($i == "rip") rip[NR] = $(i + 1) }
		END {
			if (NR != 3 || line[1] !~ /kvm_exit:/ || line[2] !~ /kvm_entry:/ ||
			    line[3] !~ /kvm_exit: .* reason shutdown /)
				exit
			if (line[3] !~ /intr_info 0x8[0-9a-f]*b0e /)
				exit
			ec = line[3]; sub(/.*error_code 0x/, "", ec)
			lo = substr(ec, length(ec), 1); hi = substr(ec, length(ec) - 1, 1)
			if (index("02468ace", lo) == 0 || index("13579bdf", hi) == 0)
				exit
			# "x" prefixes: busybox awk compares hex-looking strings as
			# (rounded) numbers otherwise.
			if ("x" rip[2] != "x" rip[3] ||
			    "x" substr(rip[1], 1, length(rip[1]) - 3) != \
			    "x" substr(rip[3], 1, length(rip[3]) - 3))
				exit
			for (i = 1; i <= 3; i++) { sub(/^ */, "", line[i]); print line[i] }
		}'
}
