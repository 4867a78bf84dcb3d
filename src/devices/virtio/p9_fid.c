// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/virtio/p9_fid.h"

void p9_fid_table_init(struct p9_fid_table *t, unsigned int max,
		       struct budget *budget)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->max = max;
	t->budget = budget;
}

static void fid_free(struct p9_fid_table *t, struct p9_fid *fid)
{
	if (fid->fd >= 0)
		close(fid->fd);
	pthread_mutex_destroy(&fid->lock);
	free(fid->path);
	free(fid->xattr_name);
	free(fid->xattr_buf);
	budget_release(t->budget, fid->charged);
	free(fid);
}

int p9_fid_charge(struct p9_fid_table *t, struct p9_fid *fid, size_t n)
{
	if (!budget_charge(t->budget, n))
		return -ENOMEM;
	fid->charged += n;
	return 0;
}

void p9_fid_put(struct p9_fid_table *t, struct p9_fid *fid)
{
	bool last;

	if (!fid)
		return;
	pthread_mutex_lock(&t->lock);
	last = --fid->refs == 0;
	pthread_mutex_unlock(&t->lock);
	if (last)
		fid_free(t, fid);
}

void p9_fid_table_clear(struct p9_fid_table *t)
{
	for (unsigned int b = 0; b < P9_FID_BUCKETS; b++) {
		struct p9_fid *fid;

		pthread_mutex_lock(&t->lock);
		fid = t->buckets[b];
		t->buckets[b] = NULL;
		pthread_mutex_unlock(&t->lock);
		while (fid) {
			struct p9_fid *next = fid->next;

			pthread_mutex_lock(&t->lock);
			t->count--;
			pthread_mutex_unlock(&t->lock);
			p9_fid_put(t, fid);
			fid = next;
		}
	}
}

void p9_fid_table_destroy(struct p9_fid_table *t)
{
	p9_fid_table_clear(t);
	pthread_mutex_destroy(&t->lock);
}

static struct p9_fid **slot_of(struct p9_fid_table *t, uint32_t id)
{
	struct p9_fid **p = &t->buckets[id % P9_FID_BUCKETS];

	while (*p && (*p)->id != id)
		p = &(*p)->next;
	return p;
}

int p9_fid_add(struct p9_fid_table *t, uint32_t id, const char *path,
	       uint32_t uid, struct p9_fid **out)
{
	/* What the guest makes the host hold: the fid and its path. */
	size_t cost = sizeof(struct p9_fid) + strlen(path) + 1;
	struct p9_fid *fid;
	struct p9_fid **slot;

	if (!budget_charge(t->budget, cost))
		return -ENFILE;
	fid = calloc(1, sizeof(*fid));
	if (!fid || !(fid->path = strdup(path))) {
		free(fid);
		budget_release(t->budget, cost);
		return -ENOMEM;
	}
	fid->charged = cost;
	fid->id = id;
	fid->uid = uid;
	fid->fd = -1;
	fid->refs = 2;
	pthread_mutex_init(&fid->lock, NULL);
	pthread_mutex_lock(&t->lock);
	slot = slot_of(t, id);
	if (*slot || t->count >= t->max) {
		int err = *slot ? -EEXIST : -EMFILE;

		pthread_mutex_unlock(&t->lock);
		fid_free(t, fid);
		return err;
	}
	*slot = fid;
	t->count++;
	pthread_mutex_unlock(&t->lock);
	*out = fid;
	return 0;
}

struct p9_fid *p9_fid_get(struct p9_fid_table *t, uint32_t id)
{
	struct p9_fid *fid;

	pthread_mutex_lock(&t->lock);
	fid = *slot_of(t, id);
	if (fid)
		fid->refs++;
	pthread_mutex_unlock(&t->lock);
	return fid;
}

struct p9_fid *p9_fid_take(struct p9_fid_table *t, uint32_t id)
{
	struct p9_fid **slot, *fid;

	pthread_mutex_lock(&t->lock);
	slot = slot_of(t, id);
	fid = *slot;
	if (fid) {
		*slot = fid->next;
		fid->next = NULL;
		t->count--;
	}
	pthread_mutex_unlock(&t->lock);
	return fid;
}

int p9_fid_path(struct p9_fid_table *t, struct p9_fid *fid, char *buf,
		size_t cap)
{
	int r = 0;

	pthread_mutex_lock(&t->lock);
	if ((size_t)snprintf(buf, cap, "%s", fid->path) >= cap)
		r = -ENAMETOOLONG;
	pthread_mutex_unlock(&t->lock);
	return r;
}

int p9_fid_set_path(struct p9_fid_table *t, struct p9_fid *fid,
		    const char *path)
{
	size_t len = strlen(path) + 1;
	char *copy;

	if (!budget_charge(t->budget, len))
		return -ENOMEM;
	copy = strdup(path);
	if (!copy) {
		budget_release(t->budget, len);
		return -ENOMEM;
	}
	pthread_mutex_lock(&t->lock);
	/* The old path's charge goes with it. */
	budget_release(t->budget, strlen(fid->path) + 1);
	fid->charged += len - (strlen(fid->path) + 1);
	free(fid->path);
	fid->path = copy;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/* PATH is OLD or below it: the rest after OLD ("" or "/..."), else NULL. */
static const char *below(const char *path, const char *old, size_t old_len)
{
	if (strncmp(path, old, old_len))
		return NULL;
	if (path[old_len] == '\0' || path[old_len] == '/')
		return path + old_len;
	return NULL;
}

int p9_fid_rename(struct p9_fid_table *t, const char *old, const char *new)
{
	size_t old_len = strlen(old);
	int r = 0;

	if (!old_len)
		return 0; /* the root is never renamed */
	pthread_mutex_lock(&t->lock);
	for (unsigned int b = 0; b < P9_FID_BUCKETS; b++) {
		for (struct p9_fid *fid = t->buckets[b]; fid; fid = fid->next) {
			const char *rest = below(fid->path, old, old_len);
			size_t was, now;
			char *moved;

			if (!rest)
				continue;
			if (asprintf(&moved, "%s%s", new, rest) < 0) {
				r = -ENOMEM;
				continue;
			}
			/* The rename happened: its cost is taken, not asked. */
			was = strlen(fid->path);
			now = strlen(moved);
			if (now >= was)
				budget_force(t->budget, now - was);
			else
				budget_release(t->budget, was - now);
			fid->charged += now - was; /* modulo: either way */
			free(fid->path);
			fid->path = moved;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

unsigned int p9_fid_count(struct p9_fid_table *t)
{
	unsigned int n;

	pthread_mutex_lock(&t->lock);
	n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}
