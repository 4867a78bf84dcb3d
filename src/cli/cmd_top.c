// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm top: every running VM of this runtime directory, refreshed every
 * second: per VM and per vCPU the run/wait (steal) split, exits per second
 * by kind, the halt-poll window and its success rate, commit state,
 * pinning and boosts. Rates come from two `stats` replies of the VM
 * itself, one interval apart. Plain ANSI on a terminal; --once prints one
 * frame (after one interval) and --json the same numbers for scripts.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctl_client.h"
#include "hintvm/hintvm.h"

#define STATS_TIMEOUT_MS 2000
#define MAX_VMS 256
#define MAX_VCPUS_SHOWN 256

enum sort_key { SORT_NAME, SORT_CPU, SORT_STEAL, SORT_EXITS };

static const char *const sort_names[] = { "name", "cpu", "steal", "exits" };

/* Counters of one vCPU, or their sum over a VM. */
struct counters {
	uint64_t run_ns, wait_ns;
	uint64_t exits, io, mmio, hlt;
	uint64_t boosts;
	uint64_t polls, polls_ok;
};

struct sample {
	char name[65];
	long long pid;
	char state[16], commit[16], pin[24], poll_mode[16];
	long long halt_poll_ns; /* -1: KVM's default */
	uint64_t elapsed_ns;
	unsigned int nr_vcpus;
	struct counters vm;
	struct counters vcpu[MAX_VCPUS_SHOWN];
};

/* What is shown: rates over the interval. */
struct rates {
	double run_pct, steal_pct, exits, io, mmio, hlt, boosts, poll_ok_pct;
};

struct row {
	const struct sample *now;
	struct rates vm;
	struct rates vcpu[MAX_VCPUS_SHOWN];
	bool have_rates;
};

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	quit = 1;
}

static uint64_t u64(struct json_object *obj, const char *path)
{
	struct json_object *v = json_path(obj, path);

	return v ? (uint64_t)json_object_get_int64(v) : 0;
}

static void copy_str(char *dst, size_t len, struct json_object *obj,
		     const char *path)
{
	struct json_object *v = json_path(obj, path);

	snprintf(dst, len, "%s", v ? json_object_get_string(v) : "-");
}

static void add(struct counters *sum, const struct counters *c)
{
	sum->run_ns += c->run_ns;
	sum->wait_ns += c->wait_ns;
	sum->exits += c->exits;
	sum->io += c->io;
	sum->mmio += c->mmio;
	sum->hlt += c->hlt;
	sum->boosts += c->boosts;
	sum->polls += c->polls;
	sum->polls_ok += c->polls_ok;
}

/* One VM's `stats` reply into S; false when it did not answer. */
static bool take_sample(const struct hvm_vm_entry *vm, struct sample *s)
{
	struct json_object *reply = ctl_call(vm->socket, "stats",
					     STATS_TIMEOUT_MS),
			   *st, *vcpus, *poll;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", vm->name);
	if (!reply)
		return false;
	st = json_path(reply, "stats");
	s->pid = (long long)u64(reply, "pid");
	copy_str(s->state, sizeof(s->state), reply, "state");
	copy_str(s->commit, sizeof(s->commit), st, "policy.commit");
	copy_str(s->pin, sizeof(s->pin), st, "policy.pin");
	copy_str(s->poll_mode, sizeof(s->poll_mode), st,
		 "policy.halt_poll_mode");
	poll = json_path(st, "policy.halt_poll_ns");
	s->halt_poll_ns = poll && json_object_is_type(poll, json_type_int)
				  ? json_object_get_int64(poll)
				  : -1;
	s->elapsed_ns = u64(st, "elapsed_ns");
	vcpus = json_path(st, "vcpus");
	if (vcpus && json_object_is_type(vcpus, json_type_array)) {
		size_t n = json_object_array_length(vcpus);

		s->nr_vcpus =
			n > MAX_VCPUS_SHOWN ? MAX_VCPUS_SHOWN : (unsigned int)n;
	}
	for (unsigned int i = 0; i < s->nr_vcpus; i++) {
		struct json_object *v = json_object_array_get_idx(vcpus, i);
		struct counters *c = &s->vcpu[i];

		c->run_ns = u64(v, "run_ns");
		c->wait_ns = u64(v, "wait_ns");
		c->exits = u64(v, "exits.total");
		c->io = u64(v, "exits.io");
		c->mmio = u64(v, "exits.mmio");
		c->hlt = u64(v, "exits.hlt");
		c->boosts = u64(v, "boosts") + u64(v, "irq_boosts");
		c->polls = u64(v, "kvm.halt_attempted_poll");
		c->polls_ok = u64(v, "kvm.halt_successful_poll");
		add(&s->vm, c);
	}
	json_object_put(reply);
	return true;
}

static double per(uint64_t now, uint64_t then, double seconds)
{
	return now >= then && seconds > 0 ? (double)(now - then) / seconds : 0;
}

static void rates(const struct counters *now, const struct counters *then,
		  double seconds, unsigned int nr_vcpus, struct rates *r)
{
	double cpu_s = seconds * (nr_vcpus ? nr_vcpus : 1);
	uint64_t polls = now->polls - then->polls;

	r->run_pct = per(now->run_ns, then->run_ns, cpu_s) / 1e7;
	r->steal_pct = per(now->wait_ns, then->wait_ns, cpu_s) / 1e7;
	r->exits = per(now->exits, then->exits, seconds);
	r->io = per(now->io, then->io, seconds);
	r->mmio = per(now->mmio, then->mmio, seconds);
	r->hlt = per(now->hlt, then->hlt, seconds);
	r->boosts = per(now->boosts, then->boosts, seconds);
	r->poll_ok_pct =
		now->polls >= then->polls && polls
			? 100.0 * (double)(now->polls_ok - then->polls_ok) /
				  (double)polls
			: NAN;
}

static const struct sample *find(const struct sample *list, size_t n,
				 const struct sample *s)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].pid == s->pid && !strcmp(list[i].name, s->name))
			return &list[i];
	return NULL;
}

static void compute(struct row *row, const struct sample *now,
		    const struct sample *then)
{
	double seconds;

	memset(row, 0, sizeof(*row));
	row->now = now;
	if (!then || now->elapsed_ns <= then->elapsed_ns)
		return;
	seconds = (double)(now->elapsed_ns - then->elapsed_ns) / 1e9;
	row->have_rates = true;
	rates(&now->vm, &then->vm, seconds, now->nr_vcpus, &row->vm);
	for (unsigned int i = 0; i < now->nr_vcpus && i < then->nr_vcpus; i++)
		rates(&now->vcpu[i], &then->vcpu[i], seconds, 1, &row->vcpu[i]);
}

static enum sort_key sort_by;

static int compare_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double dx, dy;

	switch (sort_by) {
	case SORT_CPU:
		dx = x->vm.run_pct, dy = y->vm.run_pct;
		break;
	case SORT_STEAL:
		dx = x->vm.steal_pct, dy = y->vm.steal_pct;
		break;
	case SORT_EXITS:
		dx = x->vm.exits, dy = y->vm.exits;
		break;
	default:
		return strcmp(x->now->name, y->now->name);
	}
	if (dx != dy)
		return dx < dy ? 1 : -1; /* biggest first */
	return strcmp(x->now->name, y->now->name);
}

static void poll_text(const struct sample *s, char *buf, size_t len)
{
	if (s->halt_poll_ns < 0)
		snprintf(buf, len, "kvm");
	else
		snprintf(buf, len, "%lld", s->halt_poll_ns);
}

static void print_rates(const struct rates *r, bool have)
{
	char ok[16];

	if (!have) {
		printf(" %6s %6s %8s %7s %7s %7s %7s %7s", "-", "-", "-", "-",
		       "-", "-", "-", "-");
		return;
	}
	if (isnan(r->poll_ok_pct))
		snprintf(ok, sizeof(ok), "-");
	else
		snprintf(ok, sizeof(ok), "%.0f%%", r->poll_ok_pct);
	printf(" %6.1f %6.1f %8.0f %7.0f %7.0f %7.0f %7s %7.1f", r->run_pct,
	       r->steal_pct, r->exits, r->io, r->mmio, r->hlt, ok, r->boosts);
}

static void print_frame(struct row *rows, size_t n, bool ansi)
{
	char clock[16], poll[24];
	time_t t = time(NULL);

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&t));
	if (ansi)
		printf("\033[H\033[2J");
	printf("hintvm top - %s - %zu VM%s - sort: %s%s\n", clock, n,
	       n == 1 ? "" : "s", sort_names[sort_by],
	       ansi ? "  (n name, c cpu, s steal, e exits, q quit)" : "");
	printf("%s%-16s %7s %-8s %-13s %-9s %8s %4s %6s %6s %8s %7s %7s %7s %7s %7s%s\n",
	       ansi ? "\033[7m" : "", "NAME", "PID", "STATE", "COMMIT", "PIN",
	       "POLL-NS", "VCPU", "RUN%", "STEAL%", "EXITS/s", "IO/s", "MMIO/s",
	       "HLT/s", "POLL-OK", "BOOST/s", ansi ? "\033[0m" : "");
	for (size_t i = 0; i < n; i++) {
		const struct sample *s = rows[i].now;

		poll_text(s, poll, sizeof(poll));
		printf("%-16.16s %7lld %-8.8s %-13.13s %-9.9s %8s %4s", s->name,
		       s->pid, s->state, s->commit, s->pin, poll, "all");
		print_rates(&rows[i].vm, rows[i].have_rates);
		printf("\n");
		for (unsigned int v = 0; v < s->nr_vcpus; v++) {
			printf("%-16s %7s %-8s %-13s %-9s %8s %4u", "", "", "",
			       "", "", "", v);
			print_rates(&rows[i].vcpu[v], rows[i].have_rates);
			printf("\n");
		}
	}
	if (!n)
		printf("(no VMs running)\n");
	fflush(stdout);
}

static struct json_object *rates_json(const struct rates *r)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "run_pct",
			       json_object_new_double(r->run_pct));
	json_object_object_add(o, "steal_pct",
			       json_object_new_double(r->steal_pct));
	json_object_object_add(o, "exits_per_s",
			       json_object_new_double(r->exits));
	json_object_object_add(o, "io_per_s", json_object_new_double(r->io));
	json_object_object_add(o, "mmio_per_s",
			       json_object_new_double(r->mmio));
	json_object_object_add(o, "hlt_per_s", json_object_new_double(r->hlt));
	json_object_object_add(o, "boosts_per_s",
			       json_object_new_double(r->boosts));
	json_object_object_add(
		o, "halt_poll_success_pct",
		isnan(r->poll_ok_pct) ? NULL
				      : json_object_new_double(r->poll_ok_pct));
	return o;
}

static void print_json(struct row *rows, size_t n)
{
	struct json_object *doc = json_object_new_object(),
			   *vms = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		const struct sample *s = rows[i].now;
		struct json_object *vm = rows[i].have_rates
						 ? rates_json(&rows[i].vm)
						 : json_object_new_object(),
				   *vcpus = json_object_new_array();

		json_object_object_add(vm, "name",
				       json_object_new_string(s->name));
		json_object_object_add(vm, "pid",
				       json_object_new_int64(s->pid));
		json_object_object_add(vm, "state",
				       json_object_new_string(s->state));
		json_object_object_add(vm, "commit",
				       json_object_new_string(s->commit));
		json_object_object_add(vm, "pin",
				       json_object_new_string(s->pin));
		json_object_object_add(vm, "halt_poll_mode",
				       json_object_new_string(s->poll_mode));
		json_object_object_add(
			vm, "halt_poll_ns",
			s->halt_poll_ns < 0
				? NULL
				: json_object_new_int64(s->halt_poll_ns));
		for (unsigned int v = 0; v < s->nr_vcpus; v++) {
			struct json_object *o =
				rows[i].have_rates
					? rates_json(&rows[i].vcpu[v])
					: json_object_new_object();

			json_object_object_add(o, "id",
					       json_object_new_int((int)v));
			json_object_array_add(vcpus, o);
		}
		json_object_object_add(vm, "vcpus", vcpus);
		json_object_array_add(vms, vm);
	}
	json_object_object_add(doc, "vms", vms);
	printf("%s\n", json_object_to_json_string_ext(
			       doc, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
	json_object_put(doc);
}

/* Every VM's sample; returns how many answered. */
static size_t sample_all(struct sample *out)
{
	struct hvm_vm_entry *vms;
	size_t n, got = 0;

	if (hvm_list_vms(&vms, &n) < 0)
		return 0;
	for (size_t i = 0; i < n && got < MAX_VMS; i++)
		if (take_sample(&vms[i], &out[got]))
			got++;
	free(vms);
	return got;
}

/* Sleep up to MS, or less when a key arrives (returned; 0 for none). */
static int wait_key(int ms, bool keys)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (!keys) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		return 0;
	}
	if (poll(&p, 1, ms) > 0 && read(STDIN_FILENO, &c, 1) == 1)
		return c;
	return 0;
}

static void usage(FILE *out)
{
	cli_usage(out, "top");
}

int cmd_top(int argc, char **argv)
{
	static struct sample a[MAX_VMS], b[MAX_VMS];
	static struct row rows[MAX_VMS];
	struct sample *now = a, *then = b;
	bool once = false, json = false, ansi, keys;
	struct termios saved, raw;
	size_t n_then, n_now;
	double interval = 1.0;
	struct sigaction sa = { .sa_handler = on_signal };

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--once")) {
			once = true;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
			char *end;

			interval = strtod(argv[++i], &end);
			if (*end || !(interval >= 0.1 && interval <= 3600)) {
				fprintf(stderr,
					"hintvm top: --interval '%s' is not a time in seconds from 0.1 to 3600\n",
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--sort") && i + 1 < argc) {
			unsigned int k;

			for (k = 0; k < 4 && strcmp(argv[i + 1], sort_names[k]);
			     k++)
				;
			if (k == 4) {
				fprintf(stderr,
					"hintvm top: --sort '%s' is not a key; expected name, cpu, steal or exits\n",
					argv[i + 1]);
				return 2;
			}
			sort_by = (enum sort_key)k;
			i++;
		} else {
			fprintf(stderr,
				"hintvm top: unexpected argument '%s' (see hintvm top --help)\n",
				argv[i]);
			return 2;
		}
	}
	ansi = !once && !json && isatty(STDOUT_FILENO);
	/* Rates to a tenth are all a reader can use. */
	json_c_set_serialization_double_format("%.1f", JSON_C_OPTION_GLOBAL);
	keys = ansi && isatty(STDIN_FILENO) &&
	       tcgetattr(STDIN_FILENO, &saved) == 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (keys) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	if (ansi)
		printf("\033[?1049h\033[?25l"); /* alternate screen, no cursor */

	n_then = sample_all(then);
	/* The first frame on a terminal at once, without rates. */
	if (ansi) {
		for (size_t i = 0; i < n_then; i++)
			compute(&rows[i], &then[i], NULL);
		print_frame(rows, n_then, ansi);
	}
	while (!quit) {
		int key = wait_key((int)(interval * 1000), keys);
		struct sample *swap;

		if (key == 'q' || key == 'Q')
			break;
		if (key == 'n' || key == 'c' || key == 's' || key == 'e')
			sort_by = key == 'n'   ? SORT_NAME
				  : key == 'c' ? SORT_CPU
				  : key == 's' ? SORT_STEAL
					       : SORT_EXITS;
		if (quit)
			break;
		n_now = sample_all(now);
		for (size_t i = 0; i < n_now; i++)
			compute(&rows[i], &now[i], find(then, n_then, &now[i]));
		qsort(rows, n_now, sizeof(rows[0]), compare_rows);
		if (json)
			print_json(rows, n_now);
		else
			print_frame(rows, n_now, ansi);
		if (once)
			break;
		swap = then;
		then = now;
		now = swap;
		n_then = n_now;
	}
	if (ansi)
		printf("\033[?25h\033[?1049l");
	fflush(stdout);
	if (keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return 0;
}
