// SPDX-License-Identifier: GPL-2.0
/*
 * munmapsnoop_map: the workload of the munmapsnoop tests. Maps SIZE MiB
 * anonymous memory with 4 KiB pages (MADV_NOHUGEPAGE), populates it, then
 * gives it back with one call -- munmap(), a brk() shrink or an mremap()
 * shrink -- optionally while N threads page-fault in their own small
 * mapping of the same mm (mmap_lock readers).
 *
 * Usage: munmapsnoop_map [-s MiB] [-o munmap|brk|mremap] [-f N] [-g] [-n NAME]
 *   -s MiB  size (default 256)
 *   -o OP   how to unmap (default munmap); brk allows no -f
 *   -f N    N faulting threads (default 0)
 *   -g      print "ready PID" and wait for a line on stdin before the call
 *   -n NAME set the command name (comm) to NAME first, e.g. to be the
 *           process a `-c COMM` filter must leave out
 *
 * Prints one line: "op=OP start=0xADDR len=BYTES t0_ns=.. t1_ns=..
 * elapsed_ns=.. ret=.. fault_max_ns=.. faults_during=.." (CLOCK_MONOTONIC,
 * the clock of bpf_ktime_get_ns(); fault_max_ns: the longest single page
 * touch by a faulting thread that overlapped the call).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define PG	4096UL
#define MIB	(1UL << 20)
#define FAULT_MAP	(4 * MIB)
#define MAX_THREADS	16

static atomic_int stop;
static atomic_ullong call_t0, call_t1, fault_max, faults_during;
static char outbuf[4096];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void populate(char *p, size_t len)
{
	size_t i;

	madvise(p, len, MADV_NOHUGEPAGE);
	if (!madvise(p, len, MADV_POPULATE_WRITE))
		return;
	for (i = 0; i < len; i += PG)
		p[i] = 1;
}

static void *faulter(void *arg)
{
	char *p = mmap(NULL, FAULT_MAP, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t i;

	(void)arg;
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, FAULT_MAP, MADV_NOHUGEPAGE);
	while (!atomic_load(&stop)) {
		for (i = 0; i < FAULT_MAP && !atomic_load(&stop); i += PG) {
			uint64_t a = now_ns(), b, t0, t1;

			p[i] = 1;		/* page fault: mmap_read_lock */
			b = now_ns();
			t0 = atomic_load(&call_t0);
			t1 = atomic_load(&call_t1);
			/* overlaps the call: began before its end, ended after its start */
			if (t0 && b >= t0 && (!t1 || a <= t1)) {
				unsigned long long m = atomic_load(&fault_max);

				atomic_fetch_add(&faults_during, 1);
				while (b - a > m && !atomic_compare_exchange_weak(&fault_max, &m, b - a))
					;
			}
		}
		madvise(p, FAULT_MAP, MADV_DONTNEED);
	}
	munmap(p, FAULT_MAP);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t size = 256 * MIB;
	const char *op = "munmap";
	pthread_t th[MAX_THREADS];
	int nfault = 0, gate = 0, c, i;
	char *p, *start, line[16];
	long ret = 0;
	size_t len;

	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));	/* no malloc: brk */
	while ((c = getopt(argc, argv, "s:o:f:gn:")) != -1) {
		switch (c) {
		case 's': size = strtoul(optarg, NULL, 0) * MIB; break;
		case 'o': op = optarg; break;
		case 'f': nfault = atoi(optarg); break;
		case 'g': gate = 1; break;
		case 'n':
			if (prctl(PR_SET_NAME, optarg)) {
				perror("prctl(PR_SET_NAME)");
				return 1;
			}
			break;
		default:
			fprintf(stderr, "usage: %s [-s MiB] [-o munmap|brk|mremap] [-f N] [-g] [-n NAME]\n", argv[0]);
			return 2;
		}
	}
	if (!size || nfault < 0 || nfault > MAX_THREADS ||
	    (strcmp(op, "munmap") && strcmp(op, "brk") && strcmp(op, "mremap")) ||
	    (!strcmp(op, "brk") && nfault)) {
		fprintf(stderr, "munmapsnoop_map: bad arguments\n");
		return 2;
	}

	if (!strcmp(op, "brk")) {
		char *cur = (char *)syscall(SYS_brk, 0);

		p = (char *)((((uintptr_t)cur) + PG - 1) & ~(PG - 1));
		if ((char *)syscall(SYS_brk, p + size) != p + size) {
			perror("brk grow");
			return 1;
		}
		populate(p, size);
		start = p;
		len = size;
	} else {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		populate(p, size);
		start = !strcmp(op, "mremap") ? p + PG : p;
		len = !strcmp(op, "mremap") ? size - PG : size;
	}
	for (i = 0; i < nfault; i++)
		pthread_create(&th[i], NULL, faulter, NULL);
	if (nfault)
		usleep(100000);		/* let the faulters settle */
	if (gate) {
		printf("ready %d\n", getpid());
		/* read(), not stdio: a stdin buffer would be malloc()ed, which
		 * may move brk past our range. */
		if (read(0, line, sizeof(line)) <= 0)
			return 1;
	}

	atomic_store(&call_t0, now_ns());
	if (!strcmp(op, "munmap"))
		ret = munmap(p, size);
	else if (!strcmp(op, "mremap"))
		ret = (long)mremap(p, size, PG, 0) == (long)p ? 0 : -1;
	else
		ret = syscall(SYS_brk, p) == (long)p ? 0 : -1;
	atomic_store(&call_t1, now_ns());

	if (nfault) {
		usleep(50000);
		atomic_store(&stop, 1);
		for (i = 0; i < nfault; i++)
			pthread_join(th[i], NULL);
	}
	printf("op=%s start=%p len=%zu t0_ns=%llu t1_ns=%llu elapsed_ns=%llu ret=%ld fault_max_ns=%llu faults_during=%llu\n",
	       op, start, len, call_t0, call_t1, call_t1 - call_t0, ret,
	       (unsigned long long)fault_max, (unsigned long long)faults_during);
	return ret ? 1 : 0;
}
