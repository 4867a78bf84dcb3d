/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The architecture-neutral part of running a payload: the RESULT line. */
#include "payload.h"

#include "lib.h"

void result_add(struct result *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (r->len >= sizeof(r->fields) - 1)
		return;
	r->len += snformat(r->fields + r->len, sizeof(r->fields) - r->len,
			   " %s=", key);
	if (r->len >= sizeof(r->fields) - 1)
		return;
	va_start(ap, fmt);
	r->len +=
		format(r->fields + r->len, sizeof(r->fields) - r->len, fmt, ap);
	va_end(ap);
}

void result_fail(const char *test, unsigned int nr_cpus, const char *error)
{
	printk("RESULT test=%s cpus=%u ok=0 error=%s", test, nr_cpus, error);
	machine_exit(false);
}

const struct payload *payload_find(const char *name)
{
	char known[128];
	size_t len = 0;

	for (unsigned int i = 0; payloads[i]; i++) {
		if (!strcmp(payloads[i]->name, name))
			return payloads[i];
	}
	known[0] = '\0';
	for (unsigned int i = 0; payloads[i]; i++)
		len += snformat(known + len, sizeof(known) - len, " %s",
				payloads[i]->name);
	printk("unknown test '%s'; known tests:%s", name, known);
	result_fail(name, 1, "unknown-test");
}

void payload_setup(const struct payload *p, unsigned int nr_online)
{
	if (p->setup && !p->setup())
		result_fail(p->name, nr_online, "bad-parameter");
}

bool payload_report(const struct payload *p, struct result *r,
		    unsigned int nr_online, unsigned int nr_cpus)
{
	bool ok = p->report(r);

	if (nr_online != nr_cpus) {
		result_add(r, "missing", "%u", nr_cpus - nr_online);
		ok = false;
	}
	return ok;
}

void result_exit(const struct payload *p, unsigned int nr_online, bool ok,
		 const struct result *r)
{
	printk("RESULT test=%s cpus=%u ok=%d%s", p->name, nr_online, ok,
	       r->fields);
	machine_exit(ok);
}
