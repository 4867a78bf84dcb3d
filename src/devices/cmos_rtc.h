/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MC146818-style CMOS RTC at ports 0x70/0x71: time from the host clock in
 * BCD or binary as the guest selects, status registers that say "no update
 * in progress" and "valid RAM", and plain CMOS bytes. A missing RTC reads
 * 0xff, which stalls Linux's rtc_cmos for seconds; this device exists so
 * that it does not.
 */
#ifndef HVM_DEVICES_CMOS_RTC_H
#define HVM_DEVICES_CMOS_RTC_H

#include <time.h>

#include "core/bus.h"

struct cmos_rtc;

/* NOW returns the current time; NULL means time(). */
struct cmos_rtc *cmos_rtc_create(time_t (*now)(void));
void cmos_rtc_destroy(struct cmos_rtc *rtc);

extern const struct bus_ops cmos_rtc_bus_ops; /* 2 ports: index, data */

#endif
