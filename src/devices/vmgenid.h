/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The VM generation ID (Microsoft's "Virtual Machine Generation ID"
 * specification, as Linux's drivers/virt/vmgenid.c reads it): 16 bytes
 * in guest memory that change whenever the VM may be a copy of one that
 * ran before -- every restore from a snapshot or template. Linux mixes
 * the new value into its random pool and reseeds at once
 * (add_vmfork_randomness()), so two clones of one snapshot do not share
 * their random numbers. The arch tells the guest where the bytes are
 * (x86: the DSDT's VGEN device, ADDR) and how it learns of a change (a
 * general-purpose event whose method notifies VGEN).
 */
#ifndef HVM_DEVICES_VMGENID_H
#define HVM_DEVICES_VMGENID_H

#include <stdint.h>

struct guest_memory;

#define VMGENID_LEN 16

/* A fresh generation ID at GPA; -errno with the reason. */
int vmgenid_write(const struct guest_memory *mem, uint64_t gpa);

#endif
