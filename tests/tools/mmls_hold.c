// SPDX-License-Identifier: GPL-2.0
/*
 * mmls_hold: the workload of the mmlockstat tests. Holds this process's
 * mmap_lock in known ways, after a go signal, doing nothing else that
 * takes the lock for write in between (no allocation, no stdio until the
 * end), so that a tool filtered to this process sees exactly these holds.
 *
 * Usage: mmls_hold [-g] [-r DELAY_US] REQ...
 *   REQ  write:US | read:US | downgrade:WRITE_US:READ_US   (test_mmap_lock)
 *        munmap:MiB   (map + populate with 4 KiB pages before go, munmap after)
 *   -g   print "ready PID" and wait for a line on stdin before the first REQ
 *   -r   a reader thread pread()s /proc/self/cmdline DELAY_US after each
 *        REQ starts, timing it with CLOCK_MONOTONIC (its own wait). It
 *        sleeps to an absolute deadline (start + DELAY_US) with 1 ns timer
 *        slack, so when it noticed the REQ (it polls) does not move its
 *        pread. It runs SCHED_FIFO, so another task that has the (single)
 *        CPU at the deadline does not delay it either (it says how late
 *        it started: reader_late_ns), and the holder's unlock hands it the
 *        CPU at once.
 *
 * Output (stdout, after all REQs): one line per REQ
 *   "req=REQ rc=0 write_ns=N read_ns=N wall_ns=N reader_ns=N
 *    locked_at_ns=N unlocked_at_ns=N reader_at_ns=N reader_late_ns=N"
 * (one line). write_ns/read_ns and locked_at_ns/unlocked_at_ns: the
 * module's in-kernel measurement (.../last; ktime_get_ns(), the clock of
 * CLOCK_MONOTONIC); for munmap: 0 and wall_ns is the syscall's duration.
 * reader_at_ns: when the reader's pread started (CLOCK_MONOTONIC),
 * reader_ns how long it took, reader_late_ns how far after its deadline
 * it started; 0 without -r.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define HOLD "/sys/kernel/debug/test_mmap_lock/hold"
#define LAST "/sys/kernel/debug/test_mmap_lock/last"
#define MAX_REQ 64
#define MIB (1UL << 20)

struct req {
	char text[64];		/* as written to the module */
	const char *arg;
	int munmap;
	size_t len;
	void *map;
	int rc;
	unsigned long long write_ns, read_ns, wall_ns, reader_ns;
	unsigned long long locked_at_ns, unlocked_at_ns, reader_at_ns;
	long long reader_late_ns;
};

static struct req reqs[MAX_REQ];
static int nreq;
static atomic_int seq, reader_done = 1, stop;
static _Atomic unsigned long long start_ns;	/* of the current REQ */
static long delay_us;
static int cmdline_fd;
static char outbuf[MAX_REQ * 320];

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *reader(void *arg)
{
	static char buf[4096];
	struct sched_param fifo = { .sched_priority = 1 };
	int last = 0;

	/* timer slack (50 us by default) would move the deadline below */
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0))
		perror("mmls_hold: PR_SET_TIMERSLACK (continuing)");
	/* and so would another task that has the (single) CPU at the
	 * deadline: as the only real-time task the reader preempts it */
	errno = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
	if (errno)
		perror("mmls_hold: SCHED_FIFO (continuing)");
	while (!atomic_load(&stop)) {
		struct timespec d = { 0, 50000 };
		int s = atomic_load(&seq);

		if (s == last) {
			nanosleep(&d, NULL);
			continue;
		}
		last = s;
		unsigned long long at = atomic_load(&start_ns) + delay_us * 1000ULL;

		d.tv_sec = at / 1000000000ULL;
		d.tv_nsec = at % 1000000000ULL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) == EINTR)
			;
		unsigned long long t0 = now_ns();

		if (pread(cmdline_fd, buf, sizeof(buf), 0) < 0)
			perror("pread");
		reqs[s - 1].reader_ns = now_ns() - t0;
		reqs[s - 1].reader_at_ns = t0;
		reqs[s - 1].reader_late_ns = (long long)(t0 - at);
		atomic_store(&reader_done, 1);
	}
	return NULL;
}

static int parse(struct req *r, const char *a)
{
	unsigned long w, x;
	char junk;

	r->arg = a;
	if (sscanf(a, "write:%lu%c", &w, &junk) == 1)
		snprintf(r->text, sizeof(r->text), "write %lu", w);
	else if (sscanf(a, "read:%lu%c", &w, &junk) == 1)
		snprintf(r->text, sizeof(r->text), "read %lu", w);
	else if (sscanf(a, "downgrade:%lu:%lu%c", &w, &x, &junk) == 2)
		snprintf(r->text, sizeof(r->text), "downgrade %lu %lu", w, x);
	else if (sscanf(a, "munmap:%lu%c", &w, &junk) == 1 && w) {
		r->munmap = 1;
		r->len = w * MIB;
	} else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	int opt, go = 0, hold_fd = -1, last_fd = -1, len = 0;
	pthread_t th;
	char line[64];

	while ((opt = getopt(argc, argv, "gr:")) != -1) {
		switch (opt) {
		case 'g': go = 1; break;
		case 'r': delay_us = atol(optarg); break;
		default:
			fprintf(stderr, "usage: mmls_hold [-g] [-r DELAY_US] REQ...\n");
			return 2;
		}
	}
	for (; optind < argc; optind++) {
		if (nreq == MAX_REQ || parse(&reqs[nreq], argv[optind])) {
			fprintf(stderr, "mmls_hold: bad request '%s'\n", argv[optind]);
			return 2;
		}
		nreq++;
	}
	for (int i = 0; i < nreq; i++) {
		struct req *r = &reqs[i];

		if (!r->munmap) {
			if (hold_fd < 0) {
				hold_fd = open(HOLD, O_WRONLY);
				last_fd = open(LAST, O_RDONLY);
				if (hold_fd < 0 || last_fd < 0) {
					perror("mmls_hold: " HOLD " (modprobe test_mmap_lock?)");
					return 1;
				}
			}
			continue;
		}
		r->map = mmap(NULL, r->len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r->map == MAP_FAILED) {
			perror("mmls_hold: mmap");
			return 1;
		}
		madvise(r->map, r->len, MADV_NOHUGEPAGE);
		for (size_t off = 0; off < r->len; off += 4096)
			((volatile char *)r->map)[off] = 1;
	}
	cmdline_fd = open("/proc/self/cmdline", O_RDONLY);
	if (delay_us > 0 && pthread_create(&th, NULL, reader, NULL)) {
		perror("pthread_create");
		return 1;
	}
	memset(outbuf, 0, sizeof(outbuf));	/* fault it in now */
	/* No page faults after go: with --full every fault is a read hold
	 * (and a file-backed fault over 9p can hold the lock for ms). */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("mmls_hold: mlockall (continuing)");
	if (go) {
		len = snprintf(line, sizeof(line), "ready %d\n", getpid());
		if (write(1, line, len) != len)
			return 1;
		if (read(0, line, sizeof(line)) < 0)
			return 1;
	}
	for (int i = 0; i < nreq; i++) {
		struct req *r = &reqs[i];
		unsigned long long t0;
		struct timespec d = { 0, 2000000 };

		t0 = now_ns();
		if (delay_us > 0) {
			atomic_store(&reader_done, 0);
			atomic_store(&start_ns, t0);
			atomic_store(&seq, i + 1);
		}
		if (r->munmap) {
			r->rc = munmap(r->map, r->len) ? -errno : 0;
		} else {
			ssize_t n = write(hold_fd, r->text, strlen(r->text));

			r->rc = n < 0 ? -errno : 0;
		}
		r->wall_ns = now_ns() - t0;
		if (!r->munmap) {
			char b[256];
			ssize_t n = pread(last_fd, b, sizeof(b) - 1, 0);

			if (n > 0) {
				b[n] = 0;
				sscanf(b, "write_ns=%llu read_ns=%llu locked_at_ns=%llu downgraded_at_ns=%*u unlocked_at_ns=%llu",
				       &r->write_ns, &r->read_ns,
				       &r->locked_at_ns, &r->unlocked_at_ns);
			}
		}
		while (delay_us > 0 && !atomic_load(&reader_done))
			nanosleep(&d, NULL);
		nanosleep(&d, NULL);	/* separate the holds */
	}
	atomic_store(&stop, 1);
	if (delay_us > 0)
		pthread_join(th, NULL);
	len = 0;
	for (int i = 0; i < nreq; i++) {
		struct req *r = &reqs[i];

		len += snprintf(outbuf + len, sizeof(outbuf) - len,
				"req=%s rc=%d write_ns=%llu read_ns=%llu wall_ns=%llu reader_ns=%llu locked_at_ns=%llu unlocked_at_ns=%llu reader_at_ns=%llu reader_late_ns=%lld\n",
				r->arg, r->rc, r->write_ns, r->read_ns,
				r->wall_ns, r->reader_ns, r->locked_at_ns,
				r->unlocked_at_ns, r->reader_at_ns,
				r->reader_late_ns);
	}
	if (write(1, outbuf, len) != len)
		return 1;
	return 0;
}
