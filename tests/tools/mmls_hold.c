// SPDX-License-Identifier: GPL-2.0
/*
 * mmls_hold: the workload of the mmlockstat tests. Holds this process's
 * mmap_lock in known ways, after a go signal, doing nothing else that
 * takes the lock for write in between (no allocation, no stdio until the
 * end), so that a tool filtered to this process sees exactly these holds.
 *
 * Usage: mmls_hold [-g] [-r DELAY_US] [-w DELAY_US[:FIRST]] [-b N:DELAY_US]
 *                  REQ...
 *   REQ  write:US | read:US | downgrade:WRITE_US:READ_US   (test_mmap_lock)
 *        munmap:MiB   (map + populate with 4 KiB pages before go, munmap after)
 *        brk:N        (N calls of brk(0): N write holds, each ~1 us)
 *        einval       (mremap() of a misaligned address: EINVAL before
 *                     the lock is taken; the tools' mremap probes fire)
 *   -g   print "ready PID" and wait for a line on stdin before the first REQ
 *   -r   a reader thread pread()s /proc/self/cmdline DELAY_US after each
 *        REQ starts, timing it with CLOCK_MONOTONIC (its own wait). It
 *        sleeps to an absolute deadline (start + DELAY_US) with 1 ns timer
 *        slack, so when it noticed the REQ (it polls) does not move its
 *        pread. It runs SCHED_FIFO, so another task that has the (single)
 *        CPU at the deadline does not delay it either (it says how late
 *        it started: reader_late_ns), and the holder's unlock hands it the
 *        CPU at once.
 *   -w   a writer thread, the same way, munmap()s one page (of a pool
 *        mapped before go) DELAY_US after each REQ starts: a write waiter
 *        queued on the lock (before the reader, with a smaller delay);
 *        with :FIRST only from the FIRST-th REQ (1-based) on.
 *   -b   N threads, the same way, each call brk(0) DELAY_US after each
 *        REQ starts: N tasks inside the brk syscall at once, all waiting
 *        for the lock if a REQ holds it (N kretprobe instances in flight).
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
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HOLD "/sys/kernel/debug/test_mmap_lock/hold"
#define LAST "/sys/kernel/debug/test_mmap_lock/last"
#define MAX_REQ 64
#define MAX_BRK 64
#define MIB (1UL << 20)

struct req {
	char text[64];		/* as written to the module */
	const char *arg;
	int munmap, einval;
	unsigned long brks;
	size_t len;
	void *map;
	int rc;
	unsigned long long write_ns, read_ns, wall_ns, reader_ns;
	unsigned long long locked_at_ns, unlocked_at_ns, reader_at_ns;
	long long reader_late_ns;
};

static struct req reqs[MAX_REQ];
static int nreq;
static atomic_int seq, stop;
static _Atomic unsigned long long start_ns;	/* of the current REQ */
static char *pool;	/* -w: one page per REQ */

/* the -r reader, the -w writer and the -b brk callers */
enum { P_READ, P_WRITE, P_BRK };
struct poker {
	long delay_us;
	int kind, first;
	atomic_int done;
};
static struct poker rd = { .done = 1 }, wr = { .kind = P_WRITE, .done = 1 };
static struct poker bk[MAX_BRK];
static int nbk;
/* -b threads sleep on this, not polling: 16 real-time pollers would
 * starve the main thread between a REQ's start and its hold */
static pthread_mutex_t bk_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bk_cv = PTHREAD_COND_INITIALIZER;
static int cmdline_fd;
static char outbuf[MAX_REQ * 320];

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *poke(void *arg)
{
	static char buf[4096];
	struct poker *p = arg;
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

		if (s == last && p->kind == P_BRK) {
			pthread_mutex_lock(&bk_mu);
			while (atomic_load(&seq) == last && !atomic_load(&stop))
				pthread_cond_wait(&bk_cv, &bk_mu);
			pthread_mutex_unlock(&bk_mu);
			continue;
		}
		if (s == last) {
			nanosleep(&d, NULL);
			continue;
		}
		last = s;
		if (s < p->first) {
			atomic_store(&p->done, 1);
			continue;
		}
		unsigned long long at = atomic_load(&start_ns) + p->delay_us * 1000ULL;

		d.tv_sec = at / 1000000000ULL;
		d.tv_nsec = at % 1000000000ULL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d, NULL) == EINTR)
			;
		unsigned long long t0 = now_ns();
		struct req *r = &reqs[s - 1];

		if (p->kind == P_BRK) {
			syscall(SYS_brk, 0UL);
		} else if (p->kind == P_WRITE) {
			if (munmap(pool + (s - 1) * 4096UL, 4096))
				perror("munmap");
		} else {
			if (pread(cmdline_fd, buf, sizeof(buf), 0) < 0)
				perror("pread");
			r->reader_ns = now_ns() - t0;
			r->reader_at_ns = t0;
			r->reader_late_ns = (long long)(t0 - at);
		}
		atomic_store(&p->done, 1);
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
	else if (!strcmp(a, "einval"))
		r->einval = 1;
	else if (sscanf(a, "brk:%lu%c", &w, &junk) == 1 && w)
		r->brks = w;
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
	pthread_t th, tw, tb[MAX_BRK];
	long bdelay;
	char line[64];

	while ((opt = getopt(argc, argv, "gr:w:b:")) != -1) {
		switch (opt) {
		case 'g': go = 1; break;
		case 'r': rd.delay_us = atol(optarg); break;
		case 'w':
			if (sscanf(optarg, "%ld:%d", &wr.delay_us, &wr.first) < 1)
				wr.delay_us = 0;
			break;
		case 'b':
			if (sscanf(optarg, "%d:%ld", &nbk, &bdelay) != 2 ||
			    nbk < 1 || nbk > MAX_BRK || bdelay < 1) {
				fprintf(stderr, "mmls_hold: -b N:DELAY_US, N 1 to %d\n",
					MAX_BRK);
				return 2;
			}
			for (int i = 0; i < nbk; i++) {
				bk[i].kind = P_BRK;
				bk[i].delay_us = bdelay;
				atomic_store(&bk[i].done, 1);
			}
			break;
		default:
			fprintf(stderr, "usage: mmls_hold [-g] [-r DELAY_US] [-w DELAY_US[:FIRST]] [-b N:DELAY_US] REQ...\n");
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

		if (r->einval || r->brks)
			continue;
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
	if (wr.delay_us > 0) {
		pool = mmap(NULL, MAX_REQ * 4096UL, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pool == MAP_FAILED) {
			perror("mmls_hold: mmap");
			return 1;
		}
		memset(pool, 1, MAX_REQ * 4096UL);
	}
	if ((rd.delay_us > 0 && pthread_create(&th, NULL, poke, &rd)) ||
	    (wr.delay_us > 0 && pthread_create(&tw, NULL, poke, &wr))) {
		perror("pthread_create");
		return 1;
	}
	for (int i = 0; i < nbk; i++)
		if (pthread_create(&tb[i], NULL, poke, &bk[i])) {
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
		if (rd.delay_us > 0 || wr.delay_us > 0 || nbk) {
			atomic_store(&rd.done, rd.delay_us <= 0);
			atomic_store(&wr.done, wr.delay_us <= 0);
			for (int j = 0; j < nbk; j++)
				atomic_store(&bk[j].done, 0);
			atomic_store(&start_ns, t0);
			pthread_mutex_lock(&bk_mu);
			atomic_store(&seq, i + 1);
			pthread_cond_broadcast(&bk_cv);
			pthread_mutex_unlock(&bk_mu);
		}
		if (r->einval) {
			r->rc = syscall(SYS_mremap, 1UL, 4096UL, 4096UL, 0UL) == -1 ? -errno : 0;
		} else if (r->brks) {
			for (unsigned long j = 0; j < r->brks; j++)
				syscall(SYS_brk, 0UL);
		} else if (r->munmap) {
			r->rc = munmap(r->map, r->len) ? -errno : 0;
		} else {
			ssize_t n = write(hold_fd, r->text, strlen(r->text));

			r->rc = n < 0 ? -errno : 0;
		}
		r->wall_ns = now_ns() - t0;
		if (!r->munmap && !r->einval && !r->brks) {
			char b[256];
			ssize_t n = pread(last_fd, b, sizeof(b) - 1, 0);

			if (n > 0) {
				b[n] = 0;
				sscanf(b, "write_ns=%llu read_ns=%llu locked_at_ns=%llu downgraded_at_ns=%*u unlocked_at_ns=%llu",
				       &r->write_ns, &r->read_ns,
				       &r->locked_at_ns, &r->unlocked_at_ns);
			}
		}
		while (!atomic_load(&rd.done) || !atomic_load(&wr.done))
			nanosleep(&d, NULL);
		for (int j = 0; j < nbk; j++)
			while (!atomic_load(&bk[j].done))
				nanosleep(&d, NULL);
		nanosleep(&d, NULL);	/* separate the holds */
	}
	pthread_mutex_lock(&bk_mu);
	atomic_store(&stop, 1);
	pthread_cond_broadcast(&bk_cv);
	pthread_mutex_unlock(&bk_mu);
	if (rd.delay_us > 0)
		pthread_join(th, NULL);
	if (wr.delay_us > 0)
		pthread_join(tw, NULL);
	for (int i = 0; i < nbk; i++)
		pthread_join(tb[i], NULL);
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
