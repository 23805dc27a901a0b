// SPDX-License-Identifier: GPL-2.0
/*
 * munmapsnoop_wait: a munmap() that must wait for the mmap_lock, and a
 * reader queued behind it: the workload of munmapsnoop_wait.icount.sh.
 *
 * Per round, in one process: the main thread asks the test_mmap_lock
 * calibration module for a write hold of HOLD_US; MUNMAP_US after the
 * round started, thread B munmap()s a small populated mapping (it blocks
 * on the lock until the module lets go); READER_US after the start, thread
 * C pread()s /proc/self/cmdline (mmap_lock read: it queues behind B's
 * writer, so it waits for the module's hold and then for B's). The round
 * starts at a barrier of the three threads (a private futex: no
 * mmap_lock); B and C then sleep to absolute deadlines (1 ns timer slack)
 * and run SCHED_FIFO, C above B: neither another task nor the barrier's
 * wake-up moves their calls, and C runs as soon as B's munmap downgrades.
 *
 * Usage: munmapsnoop_wait [-g] [-n ROUNDS] [-w HOLD_US] [-b MUNMAP_US]
 *                         [-r READER_US] [-k KiB]
 *   -g  print "ready PID" and wait for a line on stdin before round 1
 *   -n  rounds (default 1, max 64); round i (from 0) unmaps KiB + 4 i KiB,
 *       so each round's munmap has its own length
 *   -w  the module's write hold (default 20000 us)
 *   -b  B's munmap, after the round's start (default 2000 us)
 *   -r  C's pread (default 4000 us)
 *   -k  the mapping of round 0 (default 256 KiB; 4 KiB pages, populated)
 *
 * Output (stdout, after all rounds), one line per round:
 *   "round=I len=BYTES tid=B's tid rc=.. munmap_at_ns=.. munmap_ns=..
 *    munmap_late_ns=.. locked_at_ns=.. unlocked_at_ns=.. write_ns=..
 *    reader_at_ns=.. reader_ns=.. reader_late_ns=.."
 * CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns() and of the module's
 * ktime_get_ns()): when B's munmap started and how long it took, the
 * module's hold (.../last), when C's pread started and how long it took;
 * *_late_ns: how far after its deadline the call started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HOLD "/sys/kernel/debug/test_mmap_lock/hold"
#define LAST "/sys/kernel/debug/test_mmap_lock/last"
#define MAX_ROUNDS 64
#define PG 4096UL

struct round {
	void *map;
	size_t len;
	int rc;
	unsigned long long munmap_at, munmap_ns, reader_at, reader_ns;
	long long munmap_late, reader_late;
	unsigned long long locked_at, unlocked_at, write_ns;
};

static struct round rounds[MAX_ROUNDS];
static int nrounds = 1, cmdline_fd;
static long hold_us = 20000, munmap_us = 2000, reader_us = 4000;
/* a round starts at round_go (start set before it), ends at round_end */
static pthread_barrier_t round_go, round_end;
static struct timespec start;
static _Atomic int munmap_tid;
static char outbuf[MAX_ROUNDS * 320];

static unsigned long long ns(const struct timespec *t)
{
	return t->tv_sec * 1000000000ULL + t->tv_nsec;
}

/* thread B (arg 0: munmap, SCHED_FIFO 1) and C (arg 1: pread, FIFO 2) */
static void *worker(void *arg)
{
	static char buf[4096];
	int reader = arg != NULL;
	struct sched_param fifo = { .sched_priority = reader ? 2 : 1 };
	long delay_us = reader ? reader_us : munmap_us;

	if (!reader)
		atomic_store(&munmap_tid, (int)syscall(SYS_gettid));
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0))
		perror("munmapsnoop_wait: PR_SET_TIMERSLACK (continuing)");
	errno = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
	if (errno)
		perror("munmapsnoop_wait: SCHED_FIFO (continuing)");
	for (int i = 0; i < nrounds; i++) {
		struct round *r = &rounds[i];
		struct timespec t0, t1, at;
		long long late;

		pthread_barrier_wait(&round_go);
		at.tv_sec = start.tv_sec + delay_us / 1000000;
		at.tv_nsec = start.tv_nsec + delay_us % 1000000 * 1000;
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (reader) {
			if (pread(cmdline_fd, buf, sizeof(buf), 0) < 0)
				perror("pread");
		} else {
			r->rc = munmap(r->map, r->len) ? -errno : 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		late = (long long)(ns(&t0) - ns(&at));
		if (reader) {
			r->reader_at = ns(&t0);
			r->reader_ns = ns(&t1) - ns(&t0);
			r->reader_late = late;
		} else {
			r->munmap_at = ns(&t0);
			r->munmap_ns = ns(&t1) - ns(&t0);
			r->munmap_late = late;
		}
		pthread_barrier_wait(&round_end);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int opt, go = 0, hold_fd, last_fd, len;
	size_t kib = 256;
	pthread_t th[2];
	char line[64], req[64];

	while ((opt = getopt(argc, argv, "gn:w:b:r:k:")) != -1) {
		switch (opt) {
		case 'g': go = 1; break;
		case 'n': nrounds = atoi(optarg); break;
		case 'w': hold_us = atol(optarg); break;
		case 'b': munmap_us = atol(optarg); break;
		case 'r': reader_us = atol(optarg); break;
		case 'k': kib = strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: munmapsnoop_wait [-g] [-n ROUNDS] [-w HOLD_US] [-b MUNMAP_US] [-r READER_US] [-k KiB]\n");
			return 2;
		}
	}
	if (nrounds < 1 || nrounds > MAX_ROUNDS || !kib || hold_us <= 0 ||
	    munmap_us <= 0 || reader_us <= 0) {
		fprintf(stderr, "munmapsnoop_wait: bad arguments\n");
		return 2;
	}
	if ((hold_fd = open(HOLD, O_WRONLY)) < 0 || (last_fd = open(LAST, O_RDONLY)) < 0) {
		perror("munmapsnoop_wait: " HOLD " (modprobe test_mmap_lock?)");
		return 1;
	}
	for (int i = 0; i < nrounds; i++) {
		struct round *r = &rounds[i];

		r->len = kib * 1024 + i * PG;
		r->map = mmap(NULL, r->len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r->map == MAP_FAILED || madvise(r->map, r->len, MADV_NOHUGEPAGE)) {
			perror("munmapsnoop_wait: mmap, MADV_NOHUGEPAGE");
			return 1;
		}
		memset(r->map, 1, r->len);	/* every 4 KiB page populated */
	}
	snprintf(req, sizeof(req), "write %ld", hold_us);
	cmdline_fd = open("/proc/self/cmdline", O_RDONLY);
	pthread_barrier_init(&round_go, NULL, 3);
	pthread_barrier_init(&round_end, NULL, 3);
	for (int i = 0; i < 2; i++) {
		if (pthread_create(&th[i], NULL, worker, i ? (void *)1 : NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	memset(outbuf, 0, sizeof(outbuf));	/* fault it in now */
	/* No page faults after go: nothing but the module, B and C takes
	 * the lock during a round. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("munmapsnoop_wait: mlockall (continuing)");
	while (!atomic_load(&munmap_tid))
		usleep(1000);
	if (go && (dprintf(1, "ready %d\n", getpid()) < 0 || read(0, line, sizeof(line)) < 0))
		return 1;
	for (int i = 0; i < nrounds; i++) {
		struct round *r = &rounds[i];
		struct timespec d = { 0, 2000000 };
		char b[256];
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &start);
		pthread_barrier_wait(&round_go);
		if (write(hold_fd, req, strlen(req)) < 0) {
			perror("munmapsnoop_wait: write " HOLD);
			return 1;
		}
		n = pread(last_fd, b, sizeof(b) - 1, 0);
		if (n > 0) {
			b[n] = 0;
			sscanf(b, "write_ns=%llu read_ns=%*u locked_at_ns=%llu downgraded_at_ns=%*u unlocked_at_ns=%llu",
			       &r->write_ns, &r->locked_at, &r->unlocked_at);
		}
		pthread_barrier_wait(&round_end);	/* B and C are done */
		nanosleep(&d, NULL);	/* separate the rounds */
	}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	len = 0;
	for (int i = 0; i < nrounds; i++) {
		struct round *r = &rounds[i];

		len += snprintf(outbuf + len, sizeof(outbuf) - len,
				"round=%d len=%zu tid=%d rc=%d munmap_at_ns=%llu munmap_ns=%llu munmap_late_ns=%lld locked_at_ns=%llu unlocked_at_ns=%llu write_ns=%llu reader_at_ns=%llu reader_ns=%llu reader_late_ns=%lld\n",
				i, r->len, atomic_load(&munmap_tid), r->rc,
				r->munmap_at, r->munmap_ns, r->munmap_late,
				r->locked_at, r->unlocked_at, r->write_ns,
				r->reader_at, r->reader_ns, r->reader_late);
	}
	if (write(1, outbuf, len) != len)
		return 1;
	return 0;
}
