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
#include <stdint.h>

#include "core/bus.h"

struct cmos_rtc;

/* NOW returns the current time; NULL means time(). */
struct cmos_rtc *cmos_rtc_create(time_t (*now)(void));
void cmos_rtc_destroy(struct cmos_rtc *rtc);

extern const struct bus_ops cmos_rtc_bus_ops; /* 2 ports: index, data */

/*
 * Snapshot (docs/snapshot.md): the guest's offset from host time (so the
 * restored clock runs on from the host's wall time, as after a suspend),
 * the time being set while SET is on, the index and the CMOS bytes.
 */
#define CMOS_RTC_STATE_VERSION 1
struct cmos_rtc_state {
	int64_t offset;
	int64_t last_update_seen;
	int64_t frozen; /* timegm() of the frozen time */
	uint8_t index;
	uint8_t reserved[7];
	uint8_t ram[128];
};
void cmos_rtc_save(struct cmos_rtc *rtc, struct cmos_rtc_state *s);
int cmos_rtc_load(struct cmos_rtc *rtc, const struct cmos_rtc_state *s);

#endif
