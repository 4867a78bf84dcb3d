// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hintvm ctl NAME|PATH REQUEST [ARGS]: one request to a running VM's
 * control socket; prints the VM's JSON reply. Exit 0 when the VM answered
 * ok, 1 when it refused, 2 when there was nobody to ask (or no answer).
 * `events` keeps printing one line per event until the VM ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/control_proto.h"
#include "cli.h"
#include "ctl_client.h"
#include "hintvm/hintvm.h"

#define REPLY_TIMEOUT_MS 5000
/* A snapshot writes all the guest's memory before it answers. */
#define SNAPSHOT_TIMEOUT_MS 120000

static void usage(FILE *out)
{
	char keys[128];

	cli_usage(out, "ctl");
	fprintf(out, "\nKeys of set: %s.\n",
		ctl_set_keys_text(keys, sizeof(keys)));
}

/* REQUEST [ARGS] as one line: JSON as given, or the words. */
static char *request_line(int argc, char **argv)
{
	size_t len = 2;
	char *line;

	for (int i = 0; i < argc; i++) {
		if (i && (!argv[i][0] || strpbrk(argv[i], " \t\n"))) {
			fprintf(stderr,
				"hintvm ctl: argument '%s' is empty or holds a blank; send a JSON request instead\n",
				argv[i]);
			return NULL;
		}
		len += strlen(argv[i]) + 1;
	}
	line = calloc(1, len);
	if (!line)
		return NULL;
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(line, " ");
		strcat(line, argv[i]);
	}
	strcat(line, "\n");
	return line;
}

static bool reply_ok(const char *line)
{
	struct json_object *obj = json_tokener_parse(line), *ok;
	bool yes = obj && json_object_object_get_ex(obj, "ok", &ok) &&
		   json_object_get_boolean(ok);

	json_object_put(obj);
	return yes;
}

static int stream_events(struct ctl_conn *c, long count)
{
	char *line;

	for (long seen = 0; count < 0 || seen < count;) {
		line = ctl_conn_read_line(c, -1);
		if (!line)
			return 0; /* the VM ended: the stream is complete */
		puts(line);
		fflush(stdout);
		if (strstr(line, "\"event\":"))
			seen++;
	}
	return 0;
}

/* DIR/NAME created (or truncated) mode 0600 for the VM to write. */
static int create_snapshot_file(int dir, const char *dirname, const char *name)
{
	int fd = openat(dir, name,
			O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			0600);

	if (fd < 0 || fchmod(fd, 0600) < 0) {
		fprintf(stderr, "hintvm ctl: cannot create %s/%s: %s\n",
			dirname, name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * snapshot DIR [paused]: this side opens DIR and creates its two files,
 * the VM writes them through the descriptors it is passed (docs/
 * snapshot.md): the VM's sandbox needs no access to DIR.
 */
static int snapshot_request(int argc, char **argv, char **line, int fds[2])
{
	bool paused = argc == 3 && !strcmp(argv[2], "paused");
	int dir;

	if (argc < 2 || argc > 3 || (argc == 3 && !paused)) {
		fprintf(stderr,
			"hintvm ctl: usage: hintvm ctl VM snapshot DIR [paused]\n");
		return -1;
	}
	dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0) {
		fprintf(stderr, "hintvm ctl: snapshot directory %s: %s\n",
			argv[1], strerror(errno));
		return -1;
	}
	fds[0] = create_snapshot_file(dir, argv[1], CTL_SNAPSHOT_STATE);
	fds[1] = fds[0] < 0 ? -1
			    : create_snapshot_file(dir, argv[1],
						   CTL_SNAPSHOT_MEMORY);
	close(dir);
	if (fds[1] < 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		return -1;
	}
	*line = strdup(paused ? "snapshot paused\n" : "snapshot run\n");
	return *line ? 0 : -1;
}

int cmd_ctl(int argc, char **argv)
{
	int fds[2] = { -1, -1 }, timeout_ms = REPLY_TIMEOUT_MS, r;
	struct ctl_conn c;
	long count = -1;
	int first = 1, status;
	char *line, *reply;

	while (first < argc && argv[first][0] == '-' && argv[first][1] == '-') {
		if (!strcmp(argv[first], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[first], "--count") && first + 1 < argc) {
			char *end;

			count = strtol(argv[first + 1], &end, 10);
			if (*end || count < 1) {
				fprintf(stderr,
					"hintvm ctl: --count '%s' is not a positive number\n",
					argv[first + 1]);
				return 2;
			}
			first += 2;
			continue;
		}
		fprintf(stderr,
			"hintvm ctl: unknown option '%s' (see hintvm ctl --help)\n",
			argv[first]);
		return 2;
	}
	if (argc - first < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[first + 1], "snapshot")) {
		if (snapshot_request(argc - first - 1, argv + first + 1, &line,
				     fds) < 0)
			return 2;
		timeout_ms = SNAPSHOT_TIMEOUT_MS;
	} else {
		line = request_line(argc - first - 1, argv + first + 1);
	}
	if (!line)
		return 2;
	if (ctl_conn_open(&c, argv[first]) < 0) {
		fprintf(stderr, "hintvm ctl: %s\n", hvm_last_error());
		free(line);
		if (fds[0] >= 0) {
			close(fds[0]);
			close(fds[1]);
		}
		return 2;
	}
	/*
	 * A VM that refuses us (another user) answers and closes before the
	 * request is sent (EPIPE): its reply is still there to read.
	 */
	r = fds[0] >= 0 ? ctl_conn_send_fds(&c, line, fds, 2)
			: ctl_conn_send(&c, line);
	if (r < 0 && r != -EPIPE)
		fprintf(stderr, "hintvm ctl: cannot send to %s: %s\n",
			argv[first], strerror(-r));
	free(line);
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
	reply = ctl_conn_read_line(&c, timeout_ms);
	if (!reply) {
		fprintf(stderr, "hintvm ctl: %s did not answer%s\n",
			argv[first], errno == ETIMEDOUT ? " in time" : "");
		ctl_conn_close(&c);
		return 2;
	}
	puts(reply);
	fflush(stdout);
	status = reply_ok(reply) ? 0 : 1;
	if (status == 0 && strstr(reply, "\"subscribed\":true"))
		status = stream_events(&c, count);
	ctl_conn_close(&c);
	return status;
}
