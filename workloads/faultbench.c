// SPDX-License-Identifier: GPL-2.0
/*
 * faultbench: a page-fault-heavy workload for measuring what tracing the
 * mmap_lock costs (scripts/bench-overhead, docs/BENCH.md).
 *
 * N threads each loop ITERS times over: mmap a private anonymous region of
 * SIZE KiB, madvise(MADV_NOHUGEPAGE), write one byte to every 4 KiB page
 * (one page fault each: mmap_read_lock/unlock on 6.1, no per-VMA locks),
 * munmap the region (mmap_write_lock, downgraded to read for the zap).
 * With -m, one more thread does the same with a larger region
 * (-M KiB, default 16 MiB) and a fixed number of iterations: a
 * munmap-heavy thread whose long downgraded munmaps overlap the faulters.
 * Every count is fixed in advance, so a run does the same work each time.
 *
 * Output (stdout), one JSON object:
 *   sys_ns / user_ns   getrusage(RUSAGE_SELF) delta over the timed part
 *   faults             pages touched (each one is a first-touch fault)
 *   minflt             the kernel's minor fault count delta (cross-check)
 *   sys_ns_per_fault   sys_ns / faults
 *   cpu_ns_per_fault   (sys_ns + user_ns) / faults
 *   faults_per_s       faults / wall time (CLOCK_MONOTONIC)
 * The cost figure is sys_ns_per_fault: every BPF program attached to the
 * fault path runs in the faulting thread's kernel time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define MAX_THREADS	64

struct opts {
	int threads;
	long iters;
	unsigned long size;		/* bytes per faulter region */
	int munmap_thread;
	unsigned long msize;		/* bytes of the munmap-heavy region */
	long miters;
	const char *label;
};

struct worker {
	pthread_t th;
	unsigned long size;
	long iters;
	uint64_t faults;
	uint64_t munmaps;
	int err;
};

static pthread_barrier_t start_barrier;

static void die(const char *msg)
{
	fprintf(stderr, "faultbench: %s: %s\n", msg, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	long i;
	unsigned long off;

	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < w->iters; i++) {
		volatile char *p = mmap(NULL, w->size, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			w->err = errno;
			return NULL;
		}
		if (madvise((void *)p, w->size, MADV_NOHUGEPAGE)) {
			w->err = errno;
			return NULL;
		}
		for (off = 0; off < w->size; off += PAGE)
			p[off] = 1;
		w->faults += w->size / PAGE;
		if (munmap((void *)p, w->size)) {
			w->err = errno;
			return NULL;
		}
		w->munmaps++;
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: faultbench [-t THREADS] [-i ITERS] [-s KIB] [-m] [-M KIB] [-I ITERS]\n"
"                  [-l LABEL]\n"
"  -t N    faulting threads (default 2)\n"
"  -i N    iterations per faulting thread (default 64)\n"
"  -s KIB  region per faulting thread and iteration (default 1024 = 256 pages)\n"
"  -m      add a munmap-heavy thread (large region, long munmaps)\n"
"  -M KIB  munmap-heavy thread's region (default 16384)\n"
"  -I N    munmap-heavy thread's iterations (default 4)\n"
"  -l STR  label copied into the JSON output\n"
"Prints one JSON object with sys time per fault and faults per second.\n");
}

int main(int argc, char **argv)
{
	struct opts o = {
		.threads = 2, .iters = 64, .size = 1024 << 10,
		.munmap_thread = 0, .msize = 16384UL << 10, .miters = 4,
		.label = "",
	};
	struct worker w[MAX_THREADS + 1];
	struct rusage r0, r1;
	uint64_t t0, t1, faults = 0, munmaps = 0, sys_ns, user_ns, wall_ns;
	long minflt;
	int c, i, n;

	while ((c = getopt(argc, argv, "t:i:s:mM:I:l:h")) != -1) {
		switch (c) {
		case 't': o.threads = atoi(optarg); break;
		case 'i': o.iters = atol(optarg); break;
		case 's': o.size = strtoul(optarg, NULL, 0) << 10; break;
		case 'm': o.munmap_thread = 1; break;
		case 'M': o.msize = strtoul(optarg, NULL, 0) << 10; break;
		case 'I': o.miters = atol(optarg); break;
		case 'l': o.label = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (o.threads < 1 || o.threads > MAX_THREADS || o.iters < 1 ||
	    o.size < PAGE || o.size % PAGE || o.msize < PAGE ||
	    o.msize % PAGE || o.miters < 1) {
		fprintf(stderr, "faultbench: bad arguments: threads 1..%d, iterations >= 1, sizes multiples of 4 KiB (try -h)\n",
			MAX_THREADS);
		return 2;
	}
	for (c = 0; o.label[c]; c++)
		if (o.label[c] == '"' || o.label[c] == '\\' ||
		    (unsigned char)o.label[c] < 0x20) {
			fprintf(stderr, "faultbench: -l: label must not contain quotes, backslashes or control characters\n");
			return 2;
		}

	n = o.threads + o.munmap_thread;
	memset(w, 0, sizeof(w));
	for (i = 0; i < n; i++) {
		w[i].size = i < o.threads ? o.size : o.msize;
		w[i].iters = i < o.threads ? o.iters : o.miters;
	}
	if (pthread_barrier_init(&start_barrier, NULL, n + 1))
		die("pthread_barrier_init");
	for (i = 0; i < n; i++) {
		errno = pthread_create(&w[i].th, NULL, work, &w[i]);
		if (errno)
			die("pthread_create");
	}
	/* Measure from the moment every thread exists (their creation is not
	 * part of the figure). */
	if (getrusage(RUSAGE_SELF, &r0))
		die("getrusage");
	t0 = now_ns();
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < n; i++)
		pthread_join(w[i].th, NULL);
	t1 = now_ns();
	if (getrusage(RUSAGE_SELF, &r1))
		die("getrusage");

	for (i = 0; i < n; i++) {
		if (w[i].err) {
			errno = w[i].err;
			die(i < o.threads ? "faulting thread" : "munmap thread");
		}
		faults += w[i].faults;
		munmaps += w[i].munmaps;
	}
	sys_ns = tv_ns(r1.ru_stime) - tv_ns(r0.ru_stime);
	user_ns = tv_ns(r1.ru_utime) - tv_ns(r0.ru_utime);
	minflt = r1.ru_minflt - r0.ru_minflt;
	wall_ns = t1 - t0;

	printf("{\"tool\":\"faultbench\",\"label\":\"%s\",\"variant\":\"%s\","
	       "\"threads\":%d,\"iterations\":%ld,\"region_kib\":%lu,"
	       "\"munmap_thread\":%s,\"munmap_region_kib\":%lu,"
	       "\"munmap_iterations\":%ld,"
	       "\"faults\":%" PRIu64 ",\"minflt\":%ld,\"munmaps\":%" PRIu64 ","
	       "\"wall_ns\":%" PRIu64 ",\"sys_ns\":%" PRIu64 ",\"user_ns\":%" PRIu64 ","
	       "\"sys_ns_per_fault\":%.1f,\"cpu_ns_per_fault\":%.1f,"
	       "\"faults_per_s\":%.0f}\n",
	       o.label, o.munmap_thread ? "munmap" : "fault",
	       o.threads, o.iters, o.size >> 10,
	       o.munmap_thread ? "true" : "false",
	       o.munmap_thread ? o.msize >> 10 : 0,
	       o.munmap_thread ? o.miters : 0,
	       faults, minflt, munmaps, wall_ns, sys_ns, user_ns,
	       (double)sys_ns / faults, (double)(sys_ns + user_ns) / faults,
	       wall_ns ? faults * 1e9 / wall_ns : 0.0);
	return 0;
}
