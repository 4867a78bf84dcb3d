// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hvm-ebizzy: a workload compatible with ebizzy (same flags, same
 * "N records/s" output), written for hintvm's Linux bench guests. Each
 * thread repeatedly picks a random chunk of sorted records, allocates a
 * buffer, copies the chunk into it, searches it for a random key and frees
 * the buffer. The allocation is the point: with large chunks glibc's
 * malloc maps and unmaps memory each time (mmap_lock and TLB shootdowns),
 * with -M it stays on the heap (arena locks): either way the threads meet
 * in the kernel or in a lock, which is what overcommitted vCPUs suffer.
 *
 *   -t N   threads (default: 2 x online CPUs)    -S N  seconds (default 10)
 *   -s N   chunk size in bytes (default 524288)  -n N  chunks (default 10)
 *   -m     always use mmap for the copy          -M    never use mmap
 *   -l     do not free the copy (leak, as ebizzy -l)
 *   -p     prefault chunks with memset           -R    random copy size
 *   -z     linear instead of binary search       -v    verbose
 *
 * Output, as ebizzy prints it:
 *   12345 records/s
 *   real 10.00 s
 *   user  9.80 s
 *   sys   0.15 s
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t record_t;

struct options {
	unsigned int threads;
	unsigned int seconds;
	size_t chunk_size;
	unsigned int chunks;
	bool always_mmap;
	bool never_mmap;
	bool leak;
	bool prefault;
	bool random_size;
	bool linear;
	int verbose;
};

static struct options opt = {
	.seconds = 10,
	.chunk_size = 512 * 1024,
	.chunks = 10,
};
static record_t **chunks;
static atomic_bool time_up;

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-t threads] [-S seconds] [-s chunk_bytes] [-n chunks] [-m|-M] [-l] [-p] [-R] [-z] [-v]\n",
		prog);
	exit(2);
}

static unsigned long parse_number(const char *s, const char *what,
				  unsigned long min)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < min) {
		fprintf(stderr, "ebizzy: %s '%s' must be a number >= %lu\n",
			what, s, min);
		exit(2);
	}
	return v;
}

static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static void *alloc_copy(size_t size)
{
	void *p;

	if (opt.always_mmap) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	return malloc(size);
}

static void free_copy(void *p, size_t size)
{
	if (opt.leak)
		return;
	if (opt.always_mmap)
		munmap(p, size);
	else
		free(p);
}

static bool search(const record_t *records, size_t n, record_t key)
{
	size_t lo = 0, hi = n;

	if (opt.linear) {
		for (size_t i = 0; i < n; i++) {
			if (records[i] == key)
				return true;
		}
		return false;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (records[mid] == key)
			return true;
		if (records[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

struct worker {
	pthread_t thread;
	uint64_t seed;
	uint64_t records;
	uint64_t misses;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	size_t per_chunk = opt.chunk_size / sizeof(record_t);

	while (!atomic_load_explicit(&time_up, memory_order_relaxed)) {
		uint64_t r = next_random(&w->seed);
		unsigned int c = (unsigned int)(r % opt.chunks);
		size_t n = per_chunk;
		record_t *copy;
		size_t i;

		if (opt.random_size)
			n = 1 + (size_t)((r >> 20) % per_chunk);
		i = (size_t)((r >> 40) % n);
		copy = alloc_copy(n * sizeof(record_t));
		if (!copy) {
			fprintf(stderr, "ebizzy: out of memory\n");
			exit(1);
		}
		memcpy(copy, chunks[c], n * sizeof(record_t));
		if (!search(copy, n, chunks[c][i]))
			w->misses++;
		free_copy(copy, n * sizeof(record_t));
		w->records++;
	}
	return NULL;
}

static double seconds_between(const struct timespec *a,
			      const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double timeval_seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec start, end, nap;
	struct worker *workers;
	struct rusage usage_self;
	uint64_t records = 0, misses = 0;
	size_t per_chunk;
	double elapsed;
	int c;

	while ((c = getopt(argc, argv, "t:S:s:n:mMlpPRzv")) != -1) {
		switch (c) {
		case 't':
			opt.threads =
				(unsigned int)parse_number(optarg, "-t", 1);
			break;
		case 'S':
			opt.seconds =
				(unsigned int)parse_number(optarg, "-S", 1);
			break;
		case 's':
			opt.chunk_size =
				parse_number(optarg, "-s", sizeof(record_t));
			break;
		case 'n':
			opt.chunks =
				(unsigned int)parse_number(optarg, "-n", 1);
			break;
		case 'm':
			opt.always_mmap = true;
			break;
		case 'M':
			opt.never_mmap = true;
			break;
		case 'l':
			opt.leak = true;
			break;
		case 'p':
		case 'P':
			opt.prefault = true;
			break;
		case 'R':
			opt.random_size = true;
			break;
		case 'z':
			opt.linear = true;
			break;
		case 'v':
			opt.verbose++;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc || (opt.always_mmap && opt.never_mmap))
		usage(argv[0]);
	if (!opt.threads) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		opt.threads = 2 * (unsigned int)(cpus > 0 ? cpus : 1);
	}
	if (opt.never_mmap && !mallopt(M_MMAP_MAX, 0))
		fprintf(stderr, "ebizzy: mallopt(M_MMAP_MAX, 0) failed\n");

	per_chunk = opt.chunk_size / sizeof(record_t);
	chunks = calloc(opt.chunks, sizeof(*chunks));
	workers = calloc(opt.threads, sizeof(*workers));
	if (!chunks || !workers) {
		fprintf(stderr, "ebizzy: out of memory\n");
		return 1;
	}
	for (unsigned int i = 0; i < opt.chunks; i++) {
		chunks[i] = malloc(per_chunk * sizeof(record_t));
		if (!chunks[i]) {
			fprintf(stderr, "ebizzy: cannot allocate chunk %u\n",
				i);
			return 1;
		}
		if (opt.prefault)
			memset(chunks[i], 0, per_chunk * sizeof(record_t));
		/* Sorted, distinct keys: every search finds its key. */
		for (size_t j = 0; j < per_chunk; j++)
			chunks[i][j] = ((uint64_t)i << 40) | (2 * j + 1);
	}
	if (opt.verbose)
		fprintf(stderr,
			"ebizzy: %u threads, %u chunks of %zu bytes, %u s%s%s\n",
			opt.threads, opt.chunks, opt.chunk_size, opt.seconds,
			opt.always_mmap ? ", mmap" : "",
			opt.never_mmap ? ", no mmap" : "");

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (unsigned int i = 0; i < opt.threads; i++) {
		workers[i].seed = 0x9e3779b97f4a7c15ULL * (i + 1);
		if (pthread_create(&workers[i].thread, NULL, worker_main,
				   &workers[i])) {
			fprintf(stderr, "ebizzy: cannot start thread %u\n", i);
			return 1;
		}
	}
	nap = (struct timespec){ .tv_sec = opt.seconds };
	while (nanosleep(&nap, &nap) && errno == EINTR)
		;
	atomic_store(&time_up, true);
	for (unsigned int i = 0; i < opt.threads; i++) {
		pthread_join(workers[i].thread, NULL);
		records += workers[i].records;
		misses += workers[i].misses;
		if (opt.verbose > 1)
			fprintf(stderr, "ebizzy: thread %u: %llu records\n", i,
				(unsigned long long)workers[i].records);
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	elapsed = seconds_between(&start, &end);
	getrusage(RUSAGE_SELF, &usage_self);

	printf("%llu records/s\n",
	       (unsigned long long)((double)records / elapsed));
	printf("real %5.2f s\n", elapsed);
	printf("user %5.2f s\n", timeval_seconds(&usage_self.ru_utime));
	printf("sys  %5.2f s\n", timeval_seconds(&usage_self.ru_stime));
	if (misses) {
		fprintf(stderr, "ebizzy: %llu searches missed their key\n",
			(unsigned long long)misses);
		return 1;
	}
	return 0;
}
