/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The arm64 machine hintvm presents: guest-physical addresses and interrupt
 * numbers. The low 1 GiB is the device area and RAM starts at 1 GiB, as on
 * QEMU's "virt" board, so guests and tools that know that board feel at
 * home. Shared by the VMM and the built-in test kernel
 * (guest-firmware/arm64); only plain #defines, so freestanding code and
 * assembly can include it. The guest still learns every address from the
 * device tree: the test kernel uses these only as its fallback.
 */
#ifndef HVM_ARM64_PLATFORM_H
#define HVM_ARM64_PLATFORM_H

/* ---- GICv3 ---- */
#define ARM64_GICD_GPA 0x08000000ULL /* distributor, 64 KiB */
#define ARM64_GICD_SIZE 0x10000ULL
#define ARM64_GICR_GPA 0x080a0000ULL /* redistributors, one per vCPU */
#define ARM64_GICR_STRIDE 0x20000ULL /* RD_base + SGI_base frames */
#define ARM64_GICR_END 0x09000000ULL
#define ARM64_MAX_VCPUS ((ARM64_GICR_END - ARM64_GICR_GPA) / ARM64_GICR_STRIDE)
#define ARM64_GIC_NR_IRQS 128 /* SGIs + PPIs + 96 SPIs */
#define ARM64_GIC_SPI_BASE 32 /* INTID of SPI 0 */

/* PPIs (INTID - 16 is what the device tree says). */
#define ARM64_GIC_PPI_BASE 16 /* INTID of PPI 0 */
#define ARM64_PPI_PMU 7 /* INTID 23 */
#define ARM64_PPI_HYP_TIMER 10 /* INTID 26 */
#define ARM64_PPI_VIRT_TIMER 11 /* INTID 27 */
#define ARM64_PPI_SEC_PHYS_TIMER 13 /* INTID 29 */
#define ARM64_PPI_PHYS_TIMER 14 /* INTID 30 */

/* ---- devices ---- */
#define ARM64_UART_GPA 0x09000000ULL /* ns16550a, byte registers */
#define ARM64_UART_SIZE 0x1000ULL
#define ARM64_UART_SPI 1
#define ARM64_UART_CLOCK_HZ 1843200
#define ARM64_HINT_GPA 0x09010000ULL /* scheduling-hint MMIO page */
#define ARM64_HINT_SIZE 0x1000ULL
#define ARM64_PVPANIC_GPA 0x09020000ULL /* "qemu,pvpanic-mmio", 1 byte */
/* PV time (steal time) records, 64 bytes per vCPU, in their own memslot
 * outside /memory: the guest finds them through SMCCC, not the FDT. The
 * upper half holds the kernel/ series' vCPU-state structures (--pv
 * preempted), also 64 bytes per vCPU. */
#define ARM64_PVTIME_GPA 0x090a0000ULL
#define ARM64_PVTIME_SIZE 0x10000ULL
#define ARM64_PVTIME_STRIDE 64
#define ARM64_PV_STATE_OFFSET (ARM64_PVTIME_SIZE / 2)
#define ARM64_VIRTIO_MMIO_GPA 0x0a000000ULL /* slot N at base + N * size */
#define ARM64_VIRTIO_MMIO_SIZE 0x200ULL
#define ARM64_VIRTIO_MMIO_SLOTS 32
#define ARM64_VIRTIO_MMIO_SPI 16 /* slot N uses SPI 16 + N */

/* ---- RAM ---- */
#define ARM64_RAM_GPA 0x40000000ULL
#define ARM64_KERNEL_ALIGN 0x200000ULL /* Image base: 2 MiB aligned */
#define ARM64_DTB_MAX 0x200000ULL /* the boot protocol's limit */

#endif
