// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * MC146818 RTC + 128 bytes of CMOS. The clock is the host's (UTC) plus an
 * offset the guest sets by writing the time registers; nothing ticks here,
 * every read converts the current time. Register A never reports an update
 * in progress, so Linux's "wait for UIP to clear" loops end at once.
 *
 * Register C: UF (update ended) reads as set when the clock has moved to a
 * new second since the last read of C; reading C clears it. Alarm and
 * periodic flags are never raised (the device has no interrupt line).
 *
 * Access rules: a wide access is split into byte accesses at consecutive
 * offsets, as the ISA bus does (so `outw` to 0x70 sets the index and writes
 * the data); bytes beyond the two ports read all-ones and write nothing.
 */
#include <errno.h>
#include <pthread.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "devices/cmos_rtc.h"

#define CMOS_SIZE 128
#define CMOS_INDEX_MASK 0x7f /* bit 7 of the index port disables NMI */

#define RTC_SECONDS 0x00
#define RTC_MINUTES 0x02
#define RTC_HOURS 0x04
#define RTC_DAY_OF_WEEK 0x06
#define RTC_DAY_OF_MONTH 0x07
#define RTC_MONTH 0x08
#define RTC_YEAR 0x09
#define RTC_REG_A 0x0a
#define RTC_REG_B 0x0b
#define RTC_REG_C 0x0c
#define RTC_REG_D 0x0d
#define RTC_CENTURY 0x32

#define REG_A_UIP 0x80
#define REG_A_DEFAULT 0x26 /* 32.768 kHz time base, 1024 Hz rate */
#define REG_B_SET 0x80
#define REG_B_UIE 0x10
#define REG_B_DM_BINARY 0x04
#define REG_B_24H 0x02
#define REG_B_DEFAULT REG_B_24H /* 24-hour, BCD */
#define REG_C_IRQF 0x80
#define REG_C_UF 0x10
#define REG_C_INT_FLAGS 0x70
#define REG_D_VRT 0x80 /* valid RAM and time: the battery is fine */
#define HOUR_PM 0x80

struct cmos_rtc {
	pthread_mutex_t lock;
	time_t (*now)(void);
	time_t offset; /* guest time minus host time */
	time_t last_update_seen; /* guest second at the last read of C */
	struct tm frozen; /* the time being set while REG_B_SET is on */
	uint8_t index;
	uint8_t ram[CMOS_SIZE];
};

static time_t rtc_host_now(const struct cmos_rtc *rtc)
{
	return rtc->now ? rtc->now() : time(NULL);
}

static time_t rtc_guest_now(const struct cmos_rtc *rtc)
{
	return rtc_host_now(rtc) + rtc->offset;
}

static bool rtc_setting(const struct cmos_rtc *rtc)
{
	return rtc->ram[RTC_REG_B] & REG_B_SET;
}

/* The broken-down time the guest sees now (UTC). */
static void rtc_guest_tm(const struct cmos_rtc *rtc, struct tm *tm)
{
	time_t t;

	if (rtc_setting(rtc)) {
		*tm = rtc->frozen;
		return;
	}
	t = rtc_guest_now(rtc);
	if (!gmtime_r(&t, tm))
		memset(tm, 0, sizeof(*tm));
}

static uint8_t rtc_encode(const struct cmos_rtc *rtc, unsigned int value)
{
	value %= 100;
	if (rtc->ram[RTC_REG_B] & REG_B_DM_BINARY)
		return (uint8_t)value;
	return (uint8_t)(((value / 10) << 4) | (value % 10));
}

/* Returns -1 for a byte that is not a valid number in the current mode. */
static int rtc_decode(const struct cmos_rtc *rtc, uint8_t byte)
{
	if (rtc->ram[RTC_REG_B] & REG_B_DM_BINARY)
		return byte;
	if ((byte >> 4) > 9 || (byte & 0xf) > 9)
		return -1;
	return (byte >> 4) * 10 + (byte & 0xf);
}

static uint8_t rtc_encode_hours(const struct cmos_rtc *rtc, int hour)
{
	int hour12;

	if (rtc->ram[RTC_REG_B] & REG_B_24H)
		return rtc_encode(rtc, (unsigned int)hour);
	hour12 = hour % 12 ? hour % 12 : 12;
	return rtc_encode(rtc, (unsigned int)hour12) |
	       (hour >= 12 ? HOUR_PM : 0);
}

static int rtc_decode_hours(const struct cmos_rtc *rtc, uint8_t byte)
{
	int hour;

	if (rtc->ram[RTC_REG_B] & REG_B_24H) {
		hour = rtc_decode(rtc, byte);
		return hour >= 0 && hour <= 23 ? hour : -1;
	}
	hour = rtc_decode(rtc, byte & ~HOUR_PM);
	if (hour < 1 || hour > 12)
		return -1;
	return hour % 12 + (byte & HOUR_PM ? 12 : 0);
}

static uint8_t rtc_read_time_reg(const struct cmos_rtc *rtc, uint8_t reg)
{
	struct tm tm;

	rtc_guest_tm(rtc, &tm);
	switch (reg) {
	case RTC_SECONDS:
		/* A leap second (60) shows as 59: the chip cannot show it. */
		return rtc_encode(rtc, tm.tm_sec > 59 ? 59 : tm.tm_sec);
	case RTC_MINUTES:
		return rtc_encode(rtc, (unsigned int)tm.tm_min);
	case RTC_HOURS:
		return rtc_encode_hours(rtc, tm.tm_hour);
	case RTC_DAY_OF_WEEK:
		return rtc_encode(rtc, (unsigned int)tm.tm_wday + 1);
	case RTC_DAY_OF_MONTH:
		return rtc_encode(rtc, (unsigned int)tm.tm_mday);
	case RTC_MONTH:
		return rtc_encode(rtc, (unsigned int)tm.tm_mon + 1);
	case RTC_YEAR:
		return rtc_encode(rtc, (unsigned int)(tm.tm_year + 1900) % 100);
	default: /* RTC_CENTURY */
		return rtc_encode(rtc, (unsigned int)(tm.tm_year + 1900) / 100);
	}
}

/*
 * Apply a write to one time register: change that field of the guest's
 * time. While SET is on, the change goes to the frozen copy and takes
 * effect when SET is cleared. Invalid values are ignored.
 */
static void rtc_write_time_reg(struct cmos_rtc *rtc, uint8_t reg, uint8_t byte)
{
	struct tm tm;
	int value = reg == RTC_HOURS ? rtc_decode_hours(rtc, byte)
				     : rtc_decode(rtc, byte);
	time_t t;

	rtc_guest_tm(rtc, &tm);
	switch (reg) {
	case RTC_SECONDS:
		if (value < 0 || value > 59)
			return;
		tm.tm_sec = value;
		break;
	case RTC_MINUTES:
		if (value < 0 || value > 59)
			return;
		tm.tm_min = value;
		break;
	case RTC_HOURS:
		if (value < 0)
			return;
		tm.tm_hour = value;
		break;
	case RTC_DAY_OF_MONTH:
		if (value < 1 || value > 31)
			return;
		tm.tm_mday = value;
		break;
	case RTC_MONTH:
		if (value < 1 || value > 12)
			return;
		tm.tm_mon = value - 1;
		break;
	case RTC_YEAR:
		if (value < 0 || value > 99)
			return;
		tm.tm_year = (tm.tm_year + 1900) / 100 * 100 + value - 1900;
		break;
	case RTC_CENTURY:
		if (value < 0 || value > 99)
			return;
		tm.tm_year = value * 100 + (tm.tm_year + 1900) % 100 - 1900;
		break;
	default: /* day of week: derived from the date */
		return;
	}
	if (rtc_setting(rtc)) {
		rtc->frozen = tm;
		return;
	}
	/* timegm() normalises a day past the month's end, as the chip would
	 * roll over at the next update. */
	tm.tm_isdst = 0;
	t = timegm(&tm);
	if (t != (time_t)-1)
		rtc->offset = t - rtc_host_now(rtc);
}

static void rtc_write_reg_b(struct cmos_rtc *rtc, uint8_t value)
{
	bool was_setting = rtc_setting(rtc);
	bool setting = value & REG_B_SET;
	time_t t;

	if (setting && !was_setting)
		rtc_guest_tm(rtc, &rtc->frozen);
	if (setting)
		value &= ~REG_B_UIE; /* SET clears UIE (data sheet) */
	rtc->ram[RTC_REG_B] = value;
	if (!setting && was_setting) {
		rtc->frozen.tm_isdst = 0;
		t = timegm(&rtc->frozen);
		if (t != (time_t)-1)
			rtc->offset = t - rtc_host_now(rtc);
		rtc->last_update_seen = rtc_guest_now(rtc);
	}
}

static uint8_t rtc_read_reg_c(struct cmos_rtc *rtc)
{
	uint8_t flags = 0;
	time_t t;

	if (!rtc_setting(rtc)) {
		t = rtc_guest_now(rtc);
		if (t != rtc->last_update_seen)
			flags |= REG_C_UF;
		rtc->last_update_seen = t;
	}
	if (flags & rtc->ram[RTC_REG_B] & REG_C_INT_FLAGS)
		flags |= REG_C_IRQF;
	return flags;
}

static bool rtc_is_time_reg(uint8_t reg)
{
	switch (reg) {
	case RTC_SECONDS:
	case RTC_MINUTES:
	case RTC_HOURS:
	case RTC_DAY_OF_WEEK:
	case RTC_DAY_OF_MONTH:
	case RTC_MONTH:
	case RTC_YEAR:
	case RTC_CENTURY:
		return true;
	default:
		return false;
	}
}

static uint8_t rtc_read_data(struct cmos_rtc *rtc)
{
	uint8_t reg = rtc->index;

	if (rtc_is_time_reg(reg))
		return rtc_read_time_reg(rtc, reg);
	switch (reg) {
	case RTC_REG_A:
		return rtc->ram[RTC_REG_A] & ~REG_A_UIP;
	case RTC_REG_C:
		return rtc_read_reg_c(rtc);
	case RTC_REG_D:
		return REG_D_VRT;
	default:
		return rtc->ram[reg];
	}
}

static void rtc_write_data(struct cmos_rtc *rtc, uint8_t value)
{
	uint8_t reg = rtc->index;

	if (rtc_is_time_reg(reg)) {
		rtc_write_time_reg(rtc, reg, value);
		return;
	}
	switch (reg) {
	case RTC_REG_A:
		rtc->ram[RTC_REG_A] = value & ~REG_A_UIP;
		break;
	case RTC_REG_B:
		rtc_write_reg_b(rtc, value);
		break;
	case RTC_REG_C: /* read-only */
	case RTC_REG_D:
		break;
	default:
		rtc->ram[reg] = value;
		break;
	}
}

static void rtc_bus_read(void *dev, uint64_t offset, uint8_t *data,
			 uint32_t len)
{
	struct cmos_rtc *rtc = dev;
	uint32_t i;

	if (offset > 1) {
		memset(data, 0xff, len);
		return;
	}
	pthread_mutex_lock(&rtc->lock);
	for (i = 0; i < len; i++) {
		/* The index port is write-only; it reads as nothing. */
		if (offset + i == 1)
			data[i] = rtc_read_data(rtc);
		else
			data[i] = 0xff;
	}
	pthread_mutex_unlock(&rtc->lock);
}

static void rtc_bus_write(void *dev, uint64_t offset, const uint8_t *data,
			  uint32_t len)
{
	struct cmos_rtc *rtc = dev;
	uint32_t i;

	if (offset > 1)
		return;
	pthread_mutex_lock(&rtc->lock);
	for (i = 0; i < len; i++) {
		if (offset + i == 0)
			rtc->index = data[i] & CMOS_INDEX_MASK;
		else if (offset + i == 1)
			rtc_write_data(rtc, data[i]);
	}
	pthread_mutex_unlock(&rtc->lock);
}

const struct bus_ops cmos_rtc_bus_ops = {
	.read = rtc_bus_read,
	.write = rtc_bus_write,
};

struct cmos_rtc *cmos_rtc_create(time_t (*now)(void))
{
	struct cmos_rtc *rtc = calloc(1, sizeof(*rtc));

	if (!rtc)
		return NULL;
	if (pthread_mutex_init(&rtc->lock, NULL)) {
		free(rtc);
		return NULL;
	}
	rtc->now = now;
	rtc->ram[RTC_REG_A] = REG_A_DEFAULT;
	rtc->ram[RTC_REG_B] = REG_B_DEFAULT;
	rtc->last_update_seen = rtc_guest_now(rtc);
	return rtc;
}

void cmos_rtc_destroy(struct cmos_rtc *rtc)
{
	if (!rtc)
		return;
	pthread_mutex_destroy(&rtc->lock);
	free(rtc);
}

void cmos_rtc_save(struct cmos_rtc *rtc, struct cmos_rtc_state *s)
{
	struct tm frozen;

	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&rtc->lock);
	frozen = rtc->frozen;
	s->offset = rtc->offset;
	s->last_update_seen = rtc->last_update_seen;
	s->frozen = timegm(&frozen);
	s->index = rtc->index;
	memcpy(s->ram, rtc->ram, sizeof(s->ram));
	pthread_mutex_unlock(&rtc->lock);
}

/* A century either way: what a guest can set (years 1900-2099 in BCD). */
#define RTC_OFFSET_MAX (200LL * 366 * 24 * 3600)

int cmos_rtc_load(struct cmos_rtc *rtc, const struct cmos_rtc_state *s)
{
	static const uint8_t zero[sizeof(s->reserved)];
	time_t frozen = (time_t)s->frozen;
	struct tm tm;

	if (s->index > CMOS_INDEX_MASK ||
	    memcmp(s->reserved, zero, sizeof(zero)) ||
	    s->offset > RTC_OFFSET_MAX || s->offset < -RTC_OFFSET_MAX ||
	    !gmtime_r(&frozen, &tm))
		return hvm_set_error(
			-EINVAL,
			"CMOS RTC state: index 0x%x, offset %lld s: expected an index up to 0x%x and an offset within 200 years",
			s->index, (long long)s->offset, CMOS_INDEX_MASK);
	pthread_mutex_lock(&rtc->lock);
	rtc->offset = (time_t)s->offset;
	rtc->last_update_seen = (time_t)s->last_update_seen;
	rtc->frozen = tm;
	rtc->index = s->index;
	memcpy(rtc->ram, s->ram, sizeof(rtc->ram));
	pthread_mutex_unlock(&rtc->lock);
	return 0;
}
