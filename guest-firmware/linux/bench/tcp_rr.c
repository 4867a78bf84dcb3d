// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hvm-tcp-rr: netperf TCP_RR-style request/response over one TCP
 * connection, for hintvm's Linux bench guests. The client sends a request
 * of REQ bytes, waits for a response of RESP bytes, and repeats for the
 * given time; small messages and TCP_NODELAY make every transaction a
 * round trip through both network stacks, so its latency is dominated by
 * how fast an idle (halted) vCPU wakes up: the halt-polling question.
 *
 *   hvm-tcp-rr -s [-p PORT] [-1]                 server (-1: one client,
 *                                                then exit)
 *   hvm-tcp-rr -c ADDR [-p PORT] [-l SECONDS] [-r REQ,RESP]   client
 *                                                (ADDR: numeric or localhost)
 *   hvm-tcp-rr -L [-l SECONDS] [-r REQ,RESP]     both, over loopback
 *
 * The client prints one line:
 *   TCP_RR transactions=N seconds=S trans_per_s=T p50_us=A p90_us=B p99_us=C
 * Latencies are kept in a 1 µs-resolution histogram up to 1 s (longer
 * ones count as 1 s).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PORT "12865"
#define MAX_MESSAGE (1 << 20)
#define HIST_US 1000000

static void die(const char *what)
{
	fprintf(stderr, "tcp-rr: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: hvm-tcp-rr -s [-p PORT] [-1]\n"
		"       hvm-tcp-rr -c HOST [-p PORT] [-l SECONDS] [-r REQ,RESP]\n"
		"       hvm-tcp-rr -L [-l SECONDS] [-r REQ,RESP]\n");
	exit(2);
}

/* Read or write exactly LEN bytes; false on EOF or error. */
static bool io_all(int fd, void *buf, size_t len, bool writing)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL)
				    : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static void set_nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		die("TCP_NODELAY");
}

/*
 * Each connection starts with a header: the request and response sizes
 * (two uint32 in network order), so the server needs no options.
 */
static void serve_connection(int fd)
{
	uint32_t sizes[2];
	uint8_t *buf;
	size_t req, resp;

	set_nodelay(fd);
	if (!io_all(fd, sizes, sizeof(sizes), false))
		return;
	req = ntohl(sizes[0]);
	resp = ntohl(sizes[1]);
	if (!req || !resp || req > MAX_MESSAGE || resp > MAX_MESSAGE) {
		fprintf(stderr, "tcp-rr: bad message sizes %zu,%zu\n", req,
			resp);
		return;
	}
	buf = calloc(1, req > resp ? req : resp);
	if (!buf)
		return;
	while (io_all(fd, buf, req, false) && io_all(fd, buf, resp, true))
		;
	free(buf);
}

static int listen_on(const char *port)
{
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6,
				     .sin6_addr = IN6ADDR_ANY_INIT };
	int one = 1, fd;

	addr.sin6_port = htons((uint16_t)atoi(port));
	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		/* No IPv6 in the guest kernel: IPv4 only. */
		struct sockaddr_in a4 = { .sin_family = AF_INET,
					  .sin_port = addr.sin6_port };

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("socket");
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a4, sizeof(a4)) < 0)
			die("bind");
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
			die("bind");
	}
	if (listen(fd, 16) < 0)
		die("listen");
	return fd;
}

static void run_server(int lfd, bool once)
{
	signal(SIGCHLD, SIG_IGN); /* no zombies from per-client children */
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		if (once) {
			serve_connection(fd);
			close(fd);
			return;
		}
		if (fork() == 0) {
			close(lfd);
			serve_connection(fd);
			_exit(0);
		}
		close(fd);
	}
}

/*
 * HOST is a numeric IPv4 or IPv6 address or "localhost": a static binary
 * cannot use the resolver's NSS modules, and bench guests have no DNS.
 */
static int connect_to(const char *host, const char *port)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	uint16_t p = htons((uint16_t)atoi(port));
	int fd;

	if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	a4.sin_port = a6.sin6_port = p;
	if (inet_pton(AF_INET, host, &a4.sin_addr) == 1) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a4, sizeof(a4)))
			die(host);
	} else if (inet_pton(AF_INET6, host, &a6.sin6_addr) == 1) {
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a6, sizeof(a6)))
			die(host);
	} else {
		fprintf(stderr,
			"tcp-rr: '%s' is not a numeric IPv4/IPv6 address\n",
			host);
		exit(2);
	}
	return fd;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint32_t percentile(const uint32_t *hist, uint64_t total,
			   unsigned int pct)
{
	uint64_t want = (total * pct + 99) / 100, seen = 0;

	for (uint32_t us = 0; us <= HIST_US; us++) {
		seen += hist[us];
		if (seen >= want && want)
			return us;
	}
	return HIST_US;
}

static int run_client(int fd, unsigned int seconds, size_t req, size_t resp)
{
	uint32_t sizes[2] = { htonl((uint32_t)req), htonl((uint32_t)resp) };
	uint32_t *hist = calloc(HIST_US + 1, sizeof(*hist));
	uint8_t *buf = calloc(1, req > resp ? req : resp);
	uint64_t start, end, deadline, txns = 0;
	double elapsed;

	if (!hist || !buf)
		die("calloc");
	set_nodelay(fd);
	if (!io_all(fd, sizes, sizeof(sizes), true))
		die("send header");
	start = now_ns();
	deadline = start + (uint64_t)seconds * 1000000000ULL;
	end = start;
	while (end < deadline) {
		uint64_t t0 = end, us;

		if (!io_all(fd, buf, req, true) ||
		    !io_all(fd, buf, resp, false)) {
			fprintf(stderr,
				"tcp-rr: connection lost after %llu "
				"transactions\n",
				(unsigned long long)txns);
			return 1;
		}
		end = now_ns();
		us = (end - t0) / 1000;
		hist[us > HIST_US ? HIST_US : us]++;
		txns++;
	}
	elapsed = (double)(end - start) / 1e9;
	printf("TCP_RR transactions=%llu seconds=%.2f trans_per_s=%.0f "
	       "p50_us=%u p90_us=%u p99_us=%u\n",
	       (unsigned long long)txns, elapsed, (double)txns / elapsed,
	       percentile(hist, txns, 50), percentile(hist, txns, 90),
	       percentile(hist, txns, 99));
	free(hist);
	free(buf);
	close(fd); /* ends the server's side of the connection */
	return 0;
}

int main(int argc, char **argv)
{
	const char *host = NULL, *port = DEFAULT_PORT;
	bool server = false, loopback = false, once = false;
	unsigned int seconds = 10;
	size_t req = 1, resp = 1;
	int c;

	while ((c = getopt(argc, argv, "sc:Lp:l:r:1")) != -1) {
		switch (c) {
		case 's':
			server = true;
			break;
		case 'c':
			host = optarg;
			break;
		case 'L':
			loopback = true;
			break;
		case 'p':
			port = optarg;
			break;
		case 'l':
			seconds = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			if (sscanf(optarg, "%zu,%zu", &req, &resp) != 2)
				usage();
			break;
		case '1':
			once = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || server + !!host + loopback != 1 || !seconds ||
	    !req || !resp || req > MAX_MESSAGE || resp > MAX_MESSAGE)
		usage();
	if (server) {
		run_server(listen_on(port), once);
		return 0;
	}
	if (loopback) {
		int lfd = listen_on("0"); /* any free port */
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char port_str[16];
		pid_t child;
		int status, r;

		if (getsockname(lfd, (struct sockaddr *)&ss, &len) < 0)
			die("getsockname");
		snprintf(
			port_str, sizeof(port_str), "%u",
			ntohs(ss.ss_family == AF_INET6
				      ? ((struct sockaddr_in6 *)&ss)->sin6_port
				      : ((struct sockaddr_in *)&ss)->sin_port));
		child = fork();
		if (child < 0)
			die("fork");
		if (child == 0) {
			run_server(lfd, true);
			_exit(0);
		}
		close(lfd);
		r = run_client(connect_to("localhost", port_str), seconds, req,
			       resp);
		waitpid(child, &status, 0);
		return r;
	}
	return run_client(connect_to(host, port), seconds, req, resp);
}
