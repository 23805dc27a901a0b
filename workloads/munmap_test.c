// SPDX-License-Identifier: GPL-2.0
/*
 * munmap_test: the seeds' munmap test, scaled down, with concurrent
 * readers and an optional writer against the same mm.
 *
 * Per repetition: map SIZE MiB anonymous (4 KiB pages unless -H),
 * populate it, start the readers, let them settle, munmap the region,
 * let them run a little longer, stop them. Every reader times each of its
 * own operations from userspace (CLOCK_MONOTONIC, the clock BPF's
 * bpf_ktime_get_ns() uses, so the timestamps line up with the tools').
 *
 * Readers:
 *   -f N  N threads page-faulting on their own 16 MiB mapping
 *         (touch every page, MADV_DONTNEED, repeat): mmap_lock read side.
 *   -c    a ps-like child *process* that opens/reads/closes
 *         /proc/PID/cmdline of this process in a loop: mmap_lock read side
 *         through access_remote_vm(), the task in the seeds' hung-task
 *         splat.
 *   -w    a writer thread: mmap 64 KiB, mprotect, munmap: write side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define PAGE		4096UL
#define FAULT_MAP	(16UL << 20)
#define WRITER_MAP	(64UL << 10)
#define MAX_FAULTERS	64
/* Latency histogram: 16 linear sub-buckets per power of two (~4 % wide). */
#define SUB_BITS	4
#define SUB		(1 << SUB_BITS)
#define NBUCKETS	(64 * SUB)

enum kind { K_FAULT, K_CMDLINE, K_WRITER, K_NR };
static const char *kind_name[K_NR] = { "fault", "cmdline", "writer" };

struct lat {
	int kind;
	int tid;
	uint64_t count;
	uint64_t sum_ns;
	uint64_t max_ns;
	uint64_t max_start_ns;		/* when the longest op began */
	uint64_t ovl_count;		/* ops overlapping the munmap call */
	uint64_t ovl_max_ns;
	uint64_t ovl_max_start_ns;
	uint64_t hist[NBUCKETS];
};

/* Shared with the cmdline child (MAP_SHARED), so it lives in one block. */
struct shared {
	_Atomic int run;		/* readers loop while 1 */
	_Atomic int stop_child;		/* child exits when 1 */
	_Atomic uint64_t unmap_start;	/* munmap window, 0 = not yet */
	_Atomic uint64_t unmap_end;
	_Atomic int ready;		/* readers that started this rep */
	struct lat lat[MAX_FAULTERS + 2];
};

static struct shared *sh;
static size_t size_mb = 1024;
static int nfault, cmdline, writer, reps = 1, json, thp, settle_ms = 200;
static pid_t self_pid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int bucket_of(uint64_t v)
{
	int msb;

	if (v < SUB)
		return (int)v;
	msb = 63 - __builtin_clzll(v);
	return ((msb - SUB_BITS + 1) << SUB_BITS) +
	       (int)((v >> (msb - SUB_BITS)) & (SUB - 1));
}

/* Upper bound (inclusive) of a fine bucket. */
static uint64_t bucket_hi(int b)
{
	int shift;

	if (b < SUB)
		return b;
	shift = (b >> SUB_BITS) - 1;
	return (((uint64_t)(SUB + (b & (SUB - 1))) << shift) +
		((1ULL << shift) - 1));
}

static void record(struct lat *l, uint64_t t0, uint64_t t1)
{
	uint64_t d = t1 - t0, us, ue;

	l->count++;
	l->sum_ns += d;
	l->hist[bucket_of(d)]++;
	if (d > l->max_ns) {
		l->max_ns = d;
		l->max_start_ns = t0;
	}
	us = atomic_load_explicit(&sh->unmap_start, memory_order_relaxed);
	ue = atomic_load_explicit(&sh->unmap_end, memory_order_relaxed);
	/* Overlaps [us, ue) (ue == 0: munmap still running). */
	if (us && t1 > us && (!ue || t0 < ue)) {
		l->ovl_count++;
		if (d > l->ovl_max_ns) {
			l->ovl_max_ns = d;
			l->ovl_max_start_ns = t0;
		}
	}
}

static int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static void *fault_thread(void *arg)
{
	struct lat *l = arg;
	char *p;

	prctl(PR_SET_NAME, "mt-fault");
	l->tid = gettid_();
	p = mmap(NULL, FAULT_MAP, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("munmap_test: mmap (fault thread)");
		exit(1);
	}
	madvise(p, FAULT_MAP, MADV_NOHUGEPAGE);
	atomic_fetch_add(&sh->ready, 1);
	while (atomic_load(&sh->run)) {
		for (size_t off = 0; off < FAULT_MAP && atomic_load(&sh->run);
		     off += PAGE) {
			uint64_t t0 = now_ns();

			p[off] = 1;
			record(l, t0, now_ns());
		}
		madvise(p, FAULT_MAP, MADV_DONTNEED);
	}
	munmap(p, FAULT_MAP);
	return NULL;
}

static void *writer_thread(void *arg)
{
	struct lat *l = arg;

	prctl(PR_SET_NAME, "mt-writer");
	l->tid = gettid_();
	atomic_fetch_add(&sh->ready, 1);
	while (atomic_load(&sh->run)) {
		uint64_t t0 = now_ns();
		void *p = mmap(NULL, WRITER_MAP, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t t1 = now_ns();

		record(l, t0, t1);
		if (p == MAP_FAILED)
			continue;
		t0 = now_ns();
		mprotect(p, WRITER_MAP, PROT_READ);
		record(l, t0, now_ns());
		t0 = now_ns();
		munmap(p, WRITER_MAP);
		record(l, t0, now_ns());
	}
	return NULL;
}

/* The ps-like reader: a separate process, as in the seeds' hung task. */
static void cmdline_child(struct lat *l)
{
	char path[64], buf[4096];

	prctl(PR_SET_NAME, "mt-ps");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	l->tid = getpid();
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)self_pid);
	while (!atomic_load(&sh->stop_child)) {
		if (!atomic_load(&sh->run)) {
			usleep(1000);
			continue;
		}
		atomic_fetch_add(&sh->ready, 1);
		while (atomic_load(&sh->run)) {
			uint64_t t0 = now_ns();
			int fd = open(path, O_RDONLY);

			if (fd >= 0) {
				while (read(fd, buf, sizeof(buf)) > 0)
					;
				close(fd);
			}
			record(l, t0, now_ns());
		}
	}
	_exit(0);
}

static uint64_t pct(const uint64_t *hist, uint64_t count, double p)
{
	uint64_t want = (uint64_t)(p * count + 0.999999), acc = 0;

	if (!count)
		return 0;
	if (want < 1)
		want = 1;
	for (int b = 0; b < NBUCKETS; b++) {
		acc += hist[b];
		if (acc >= want)
			return bucket_hi(b);
	}
	return 0;
}

static void print_lat_json(FILE *f, int kind, int nthreads)
{
	static uint64_t hist[NBUCKETS];
	uint64_t log2[65] = { 0 };
	uint64_t count = 0, sum = 0, max = 0, maxs = 0, oc = 0, om = 0, oms = 0;
	int first = 1, tid = 0;

	memset(hist, 0, sizeof(hist));
	for (int i = 0; i < nthreads; i++) {
		struct lat *l = &sh->lat[i];

		if (l->kind != kind)
			continue;
		count += l->count;
		sum += l->sum_ns;
		if (l->max_ns >= max) {
			max = l->max_ns;
			maxs = l->max_start_ns;
		}
		oc += l->ovl_count;
		if (l->ovl_max_ns >= om) {
			om = l->ovl_max_ns;
			oms = l->ovl_max_start_ns;
			tid = l->tid;
		}
		for (int b = 0; b < NBUCKETS; b++)
			hist[b] += l->hist[b];
	}
	for (int b = 0; b < NBUCKETS; b++) {
		uint64_t hi = bucket_hi(b);
		/* log2 bucket with upper bound 2^k - 1 >= hi, as bcc's. */
		int k = hi ? 64 - __builtin_clzll(hi) : 0;

		log2[k] += hist[b];
	}
	fprintf(f, "\"%s\":{\"unit\":\"ns\",\"count\":%" PRIu64
		",\"sum\":%" PRIu64 ",\"max\":%" PRIu64
		",\"max_start_ns\":%" PRIu64 ",\"p50\":%" PRIu64
		",\"p99\":%" PRIu64 ",\"overlap_count\":%" PRIu64
		",\"overlap_max\":%" PRIu64 ",\"overlap_max_start_ns\":%" PRIu64
		",\"overlap_max_tid\":%d,\"buckets\":[",
		kind_name[kind], count, sum, max, maxs, pct(hist, count, 0.50),
		pct(hist, count, 0.99), oc, om, oms, tid);
	for (int k = 0; k < 65; k++) {
		if (!log2[k])
			continue;
		fprintf(f, "%s{\"le\":%" PRIu64 ",\"count\":%" PRIu64 "}",
			first ? "" : ",",
			k >= 64 ? UINT64_MAX : (uint64_t)((1ULL << k) - 1), log2[k]);
		first = 0;
	}
	fprintf(f, "]}");
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int run_rep(int rep, int nthreads, int have_child)
{
	size_t len = size_mb << 20;
	uint64_t t0, t_map, t_pop, t_us, t_ue;
	pthread_t th[MAX_FAULTERS + 1];
	int nth = 0, want_ready;
	char *p;

	for (int i = 0; i < nthreads; i++) {
		int kind = sh->lat[i].kind, tid = sh->lat[i].tid;

		memset(&sh->lat[i], 0, sizeof(sh->lat[i]));
		sh->lat[i].kind = kind;
		sh->lat[i].tid = tid;
	}
	atomic_store(&sh->unmap_start, 0);
	atomic_store(&sh->unmap_end, 0);
	atomic_store(&sh->ready, 0);

	t0 = now_ns();
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "munmap_test: mmap %zu MiB: %s\n", size_mb,
			strerror(errno));
		return -1;
	}
	madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	t_map = now_ns();
	if (madvise(p, len, MADV_POPULATE_WRITE)) {
		for (size_t off = 0; off < len; off += PAGE)
			p[off] = 1;
	}
	t_pop = now_ns();

	atomic_store(&sh->run, 1);
	for (int i = 0; i < nthreads; i++) {
		void *(*fn)(void *);

		if (sh->lat[i].kind == K_FAULT)
			fn = fault_thread;
		else if (sh->lat[i].kind == K_WRITER)
			fn = writer_thread;
		else
			continue;
		if (pthread_create(&th[nth++], NULL, fn, &sh->lat[i])) {
			fprintf(stderr, "munmap_test: pthread_create failed\n");
			exit(1);
		}
	}
	want_ready = nth + have_child;
	while (atomic_load(&sh->ready) < want_ready)
		sleep_ms(1);
	sleep_ms(settle_ms);

	t_us = now_ns();
	atomic_store(&sh->unmap_start, t_us);
	if (munmap(p, len)) {
		fprintf(stderr, "munmap_test: munmap: %s\n", strerror(errno));
		return -1;
	}
	t_ue = now_ns();
	atomic_store(&sh->unmap_end, t_ue);
	sleep_ms(settle_ms);
	atomic_store(&sh->run, 0);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	/* Wait for the child to finish its current read. */
	sleep_ms(20);

	if (!json) {
		printf("rep %d: %zu MiB%s: mmap %.3f ms, populate %.3f ms, "
		       "munmap %.3f ms\n", rep, size_mb, thp ? " (THP)" : "",
		       (t_map - t0) / 1e6, (t_pop - t_map) / 1e6,
		       (t_ue - t_us) / 1e6);
		for (int k = 0; k < K_NR; k++) {
			uint64_t c = 0, m = 0, om = 0;

			for (int i = 0; i < nthreads; i++) {
				if (sh->lat[i].kind != k)
					continue;
				c += sh->lat[i].count;
				if (sh->lat[i].max_ns > m)
					m = sh->lat[i].max_ns;
				if (sh->lat[i].ovl_max_ns > om)
					om = sh->lat[i].ovl_max_ns;
			}
			if (c)
				printf("  %-8s ops %" PRIu64 ", max %.3f ms, "
				       "longest overlapping munmap %.3f ms\n",
				       kind_name[k], c, m / 1e6, om / 1e6);
		}
		fflush(stdout);
		return 0;
	}
	printf("{\"schema\":1,\"tool\":\"munmap_test\",\"rep\":%d,"
	       "\"pid\":%d,\"size_mb\":%zu,\"page_size\":%lu,\"thp\":%s,"
	       "\"fault_threads\":%d,\"cmdline_reader\":%s,\"writer\":%s,"
	       "\"settle_ms\":%d,\"mmap_ns\":%" PRIu64
	       ",\"populate_ns\":%" PRIu64 ",\"munmap_ns\":%" PRIu64
	       ",\"munmap_start_ns\":%" PRIu64 ",\"munmap_end_ns\":%" PRIu64
	       ",\"readers\":{", rep, (int)self_pid, size_mb, PAGE,
	       thp ? "true" : "false", nfault, cmdline ? "true" : "false",
	       writer ? "true" : "false", settle_ms, t_map - t0,
	       t_pop - t_map, t_ue - t_us, t_us, t_ue);
	for (int k = 0, first = 1; k < K_NR; k++) {
		int n = 0;

		for (int i = 0; i < nthreads; i++)
			n += sh->lat[i].kind == k;
		if (!n)
			continue;
		printf("%s", first ? "" : ",");
		print_lat_json(stdout, k, nthreads);
		first = 0;
	}
	printf("},\"threads\":[");
	for (int i = 0; i < nthreads; i++)
		printf("%s{\"kind\":\"%s\",\"tid\":%d,\"count\":%" PRIu64
		       ",\"max\":%" PRIu64 ",\"overlap_max\":%" PRIu64
		       ",\"overlap_max_start_ns\":%" PRIu64 "}",
		       i ? "," : "", kind_name[sh->lat[i].kind], sh->lat[i].tid,
		       sh->lat[i].count, sh->lat[i].max_ns,
		       sh->lat[i].ovl_max_ns, sh->lat[i].ovl_max_start_ns);
	printf("]}\n");
	fflush(stdout);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: munmap_test [-s MIB] [-H] [-f N] [-c] [-w] [-r REPS] [-d MS] [-j]\n"
"Map SIZE MiB anonymous memory with 4 KiB pages, populate it and munmap it,\n"
"timing each step, while other threads/processes hit the same mm_struct.\n"
"\n"
"  -s MIB   size of the mapping in MiB (default 1024)\n"
"  -H       allow transparent huge pages (default: MADV_NOHUGEPAGE)\n"
"  -f N     N threads page-faulting on their own 16 MiB mapping\n"
"  -c       a ps-like process reading /proc/PID/cmdline in a loop\n"
"  -w       a writer thread doing mmap/mprotect/munmap of 64 KiB\n"
"  -r REPS  repetitions (default 1)\n"
"  -d MS    readers run MS ms before and after the munmap (default 200)\n"
"  -j       one JSON object per repetition on stdout (see README.md)\n"
"  -h       this help\n"
"\n"
"Examples:\n"
"  munmap_test                  # 1 GiB, no readers\n"
"  munmap_test -s 2048 -f 2 -c  # 2 GiB, two faulting threads and a ps\n"
"  munmap_test -s 256 -f 1 -c -w -r 3 -j > runs.jsonl\n");
}

static long parse_num(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "munmap_test: %s wants an integer in [%ld, %ld],"
			" got '%s'\n", opt, lo, hi, s);
		exit(2);
	}
	return v;
}

static long mem_available_mb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

int main(int argc, char **argv)
{
	int opt, nthreads = 0, rc = 0;
	long avail, need;
	pid_t child = 0;

	opterr = 0;
	while ((opt = getopt(argc, argv, "s:Hf:cwr:d:jh")) != -1) {
		switch (opt) {
		case 's':
			size_mb = parse_num("-s", optarg, 1, 1L << 30);
			break;
		case 'H':
			thp = 1;
			break;
		case 'f':
			nfault = parse_num("-f", optarg, 1, MAX_FAULTERS);
			break;
		case 'c':
			cmdline = 1;
			break;
		case 'w':
			writer = 1;
			break;
		case 'r':
			reps = parse_num("-r", optarg, 1, 100000);
			break;
		case 'd':
			settle_ms = parse_num("-d", optarg, 0, 600000);
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "munmap_test: %s -%c; see -h\n",
				strchr("sfrd", optopt) ? "missing value for" :
				"unknown option", optopt);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "munmap_test: unexpected argument '%s'; see -h\n",
			argv[optind]);
		return 2;
	}
	avail = mem_available_mb();
	need = size_mb + nfault * (FAULT_MAP >> 20) + 16;
	if (avail >= 0 && need > avail) {
		fprintf(stderr, "munmap_test: -s %zu needs ~%ld MiB but "
			"MemAvailable is %ld MiB; use a smaller -s or more "
			"memory (vm-run --mem)\n", size_mb, need, avail);
		return 2;
	}

	self_pid = getpid();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("munmap_test: mmap");
		return 1;
	}
	for (int i = 0; i < nfault; i++)
		sh->lat[nthreads++].kind = K_FAULT;
	if (writer)
		sh->lat[nthreads++].kind = K_WRITER;
	if (cmdline) {
		sh->lat[nthreads].kind = K_CMDLINE;
		child = fork();
		if (child < 0) {
			perror("munmap_test: fork");
			return 1;
		}
		if (!child)
			cmdline_child(&sh->lat[nthreads]);
		nthreads++;
	}
	for (int r = 0; r < reps && !rc; r++)
		rc = run_rep(r, nthreads, cmdline);
	if (child) {
		atomic_store(&sh->stop_child, 1);
		waitpid(child, NULL, 0);
	}
	return rc ? 1 : 0;
}
