// SPDX-License-Identifier: LGPL-2.1-or-later
/* Accepting at the process's file limit (accept.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/accept.h"

void accept_guard_init(struct accept_guard *g, bool keep_spare)
{
	*g = (struct accept_guard){ .keep_spare = keep_spare, .spare = -1 };
	accept_guard_refill(g);
}

int accept_guarded(struct accept_guard *g, int listen_fd, int flags,
		   uint64_t now_ms)
{
	int fd = accept4(listen_fd, NULL, NULL, flags);

	if (fd >= 0 || (errno != EMFILE && errno != ENFILE))
		return fd;
	g->at_limit++;
	if (g->spare >= 0) {
		close(g->spare);
		g->spare = -1;
		fd = accept4(listen_fd, NULL, NULL, flags);
		if (fd >= 0)
			return fd;
	}
	g->paused_until_ms = now_ms + ACCEPT_BACKOFF_MS;
	errno = EMFILE;
	return -1;
}

bool accept_guard_paused(struct accept_guard *g, uint64_t now_ms)
{
	if (g->paused_until_ms && now_ms < g->paused_until_ms)
		return true;
	g->paused_until_ms = 0;
	return false;
}

void accept_guard_refill(struct accept_guard *g)
{
	if (g->keep_spare && g->spare < 0)
		g->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void accept_guard_destroy(struct accept_guard *g)
{
	if (g->spare >= 0)
		close(g->spare);
	g->spare = -1;
}
