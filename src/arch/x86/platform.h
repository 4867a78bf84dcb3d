/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The x86 machine hintvm presents: port numbers, IRQs and guest-physical
 * addresses. Shared by the VMM and the built-in test kernel
 * (guest-firmware/x86), so both agree by construction. Only plain #defines:
 * this header is also included by freestanding guest code and assembly.
 */
#ifndef HVM_X86_PLATFORM_H
#define HVM_X86_PLATFORM_H

/* xAPIC ids 0-253 for vCPUs; 254 is the I/O APIC's (MP table, MADT). */
#define X86_MAX_VCPUS 254

/* ---- I/O ports ---- */
#define X86_I8042_DATA_PORT 0x60
#define X86_I8042_CMD_PORT 0x64 /* status on read, command on write */
#define X86_CMOS_PORT 0x70 /* index at 0x70, data at 0x71 */
#define X86_POST_PORT 0x80 /* Linux io_delay target: a coalesced sink */
#define X86_DEBUG_EXIT_PORT 0xf4 /* QEMU isa-debug-exit compatible, 4 bytes */
#define X86_PVPANIC_PORT 0x505 /* QEMU pvpanic ISA default, 1 byte */
#define X86_COM1_PORT 0x3f8
#define X86_COM1_IRQ 4
#define X86_PM1A_EVT_PORT 0x600 /* ACPI PM1a_EVT_BLK: STS (2) + EN (2) */
#define X86_PM1A_CNT_PORT 0x604 /* ACPI PM1a_CNT_BLK (2) */
#define X86_GPE0_PORT 0x608 /* ACPI GPE0_BLK: STS (2) + EN (2) */
#define X86_VMGENID_GPE 0 /* \_GPE._E00 notifies \_SB.VGEN */
#define X86_HINT_PORT 0x610 /* guest scheduling hints, see docs/ */
#define X86_HINT_PORT_LEN 0x10
#define X86_RR_PARTNER_PORT 0x620 /* --rr-partner, abi/rr_partner_abi.h */
#define X86_RR_PARTNER_IRQ 23 /* its answers: I/O APIC only (>= 16: no PIC) */
#define X86_BENCH_NOP_PORT 0x6f0 /* no device: the exits benchmark's target */
#define X86_RESET_PORT 0xcf9 /* ACPI RESET_REG, write 0x06 or 0x0e */

/* The ACPI SCI; PM1 register bits are the device's (devices/acpi_pm.h). */
#define ACPI_SCI_IRQ 9

/* ---- guest-physical layout ---- */
#define X86_PVH_START_INFO_GPA 0x1000 /* struct hvm_start_info */
#define X86_PVH_MODLIST_GPA 0x1100 /* hvm_modlist_entry[] (initrd) */
#define X86_PVH_MEMMAP_GPA 0x1200 /* hvm_memmap_table_entry[] */
#define X86_PVH_MEMMAP_MAX 64
#define X86_CMDLINE_GPA 0x2000
#define X86_CMDLINE_MAX 4096 /* bytes, including the NUL */
/* 0x3000-0x9efff is free guest RAM (the test kernel's AP trampoline
 * lives at X86_AP_TRAMPOLINE_GPA). */
/* Page-aligned and below 1 MiB, so a SIPI vector can point at it. */
#define X86_AP_TRAMPOLINE_GPA 0x8000
#define X86_LOW_RAM_END 0x9fc00 /* start of the EBDA-style hole */
#define X86_ACPI_GPA 0xe0000 /* RSDP, then the other tables */
#define X86_ACPI_MAX 0xf000
#define X86_VMGENID_GPA 0xef000 /* the VM generation ID: 16 bytes */
#define X86_MPTABLE_GPA 0xf0000 /* MP floating pointer + config table */
#define X86_MPTABLE_MAX 0x10000
#define X86_HIGH_MEM_START 0x100000 /* 1 MiB: kernels load here */
#define X86_MMIO_HOLE_START 0xc0000000ULL /* RAM above this moves to 4 GiB */
#define X86_MMIO_HOLE_END 0x100000000ULL
#define X86_PCI_MMIO_GPA 0xe0000000ULL /* PCI BAR window (virtio-pci) */
#define X86_PCI_MMIO_SIZE 0x10000000ULL
#define X86_IOAPIC_GPA 0xfec00000
#define X86_LAPIC_GPA 0xfee00000
/* One page for KVM (EPT real mode), then three for its TSS. */
#define X86_KVM_IDENTITY_MAP_GPA 0xfeffc000
#define X86_KVM_TSS_GPA 0xfeffd000 /* three pages for KVM (VMX real mode) */

#endif
