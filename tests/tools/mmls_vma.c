// SPDX-License-Identifier: GPL-2.0
/*
 * mmls_vma: the workload of the per-VMA lock checks (tests/tools/
 * debian_tools_run.sh). Two scenes, after a go line on stdin (-g), each
 * timed by the threads themselves with CLOCK_MONOTONIC:
 *
 * 1. hold: the main thread holds this process's mmap_lock for write
 *    HOLD_MS with the calibration module (test_mmap_lock). A quarter into
 *    the hold two threads each touch one page:
 *      fresh: the first page of an anonymous mapping never touched (no
 *             anon_vma yet: the fault needs mmap_lock, on 6.12 too);
 *      warm:  a new page of a mapping whose anon_vma exists (on a kernel
 *             with per-VMA locks the fault takes only the VMA lock).
 * 2. thp: a thread faults a 2 MiB transparent huge page (zeroing it under
 *    the VMA lock: milliseconds under TCG); once that thread has run 1 ms
 *    of CPU time since it set its flag (all of it in the fault: the flag
 *    is set right before the touch), or 100 us of CPU time and 2 ms since
 *    the flag (a fault that sleeps, e.g. allocating, holds the VMA lock
 *    while it sleeps), the main thread mprotect()s the last
 *    page of the same mapping (a 4 KiB page past the huge one), which
 *    write-locks the VMA: vma_start_write() waits for that fault on a
 *    kernel with per-VMA locks. Both threads run on CPU 0 and the main
 *    thread is SCHED_FIFO: its wakeup preempts the fault at its next
 *    cond_resched() (zeroing goes page by page), so the mprotect comes
 *    while the fault holds the VMA lock, whatever else runs on that CPU
 *    and however the host schedules the vCPUs (single-threaded TCG runs
 *    one vCPU for up to 100 ms before the other). Still, a fault can end
 *    before the main thread gets the CPU back (about 1 run in 20 here:
 *    such faults took twice as long, spinning where they cannot be
 *    preempted); by the threads' own clocks the mprotect then started
 *    after the fault ended, and the scene is played again on a new
 *    mapping by a new thread, up to 5 times (thp_attempts): a property
 *    of the workload, measured by the workload, not a retried check.
 *
 * Usage: mmls_vma [-g] HOLD_MS
 * Output, key=value per line: hold_rc write_ns (the module's measure)
 * fresh_ns fresh_tid warm_ns warm_tid thp_ns thp_tid thp_huge
 * mprotect_ns mprotect_overlap (1: it started while the fault ran) fifo
 * thp_attempts (the figures are the last attempt's).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HOLD "/sys/kernel/debug/test_mmap_lock/hold"
#define LAST "/sys/kernel/debug/test_mmap_lock/last"
#define PAGE 4096UL
#define HUGE (2UL << 20)
#define THP_ATTEMPTS 5

struct toucher {
	char *addr;
	unsigned long long ns;
	long tid;
};

/* threads stay until their scene is over: a thread's exit munmaps and
 * madvises, which would wait on the lock and blur the scene */
static atomic_int scene_done, nready;
/* when the touches of scene 1 start (CLOCK_MONOTONIC ns): set once both
 * threads are ready, right before the hold */
static _Atomic unsigned long long touch_at_ns;

static void linger(void)
{
	while (!atomic_load(&scene_done))
		usleep(1000);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *touch_at(void *arg)
{
	struct toucher *t = arg;
	unsigned long long t0, at;
	struct timespec ts;

	volatile char stack[64 * 1024];

	/* started, and its stack faulted in, before the hold begins: on a
	 * kernel without per-VMA locks those faults would wait for it too */
	for (size_t i = 0; i < sizeof(stack); i += PAGE)
		stack[i] = 0;
	t->tid = syscall(SYS_gettid);
	atomic_fetch_add(&nready, 1);
	while (!(at = atomic_load(&touch_at_ns)))
		usleep(100);
	ts.tv_sec = at / 1000000000ULL;
	ts.tv_nsec = at % 1000000000ULL;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	t0 = now_ns();
	*(volatile char *)t->addr = 1;
	t->ns = now_ns() - t0;
	linger();
	return NULL;
}

static atomic_int thp_started;
static unsigned long long thp_t0, thp_t1;

static unsigned long long cpu_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *thp_fault(void *arg)
{
	struct toucher *t = arg;

	t->tid = syscall(SYS_gettid);
	thp_t0 = now_ns();
	atomic_store(&thp_started, 1);
	*(volatile char *)t->addr = 1;
	thp_t1 = now_ns();
	t->ns = thp_t1 - thp_t0;
	linger();
	return NULL;
}

static char *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmls_vma: mmap");
		exit(1);
	}
	return p;
}

/* Is the page at @p backed by a huge page? (AnonHugePages of its VMA) */
static int is_huge(void *p)
{
	char line[256];
	unsigned long lo, hi, kb;
	int in = 0, huge = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (unsigned long)p >= lo && (unsigned long)p < hi;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			huge = kb >= 2048;
	}
	fclose(f);
	return huge;
}

/*
 * Scene 2 once: returns 1 if the mprotect started before the fault ended.
 * The main thread runs SCHED_FIFO on CPU 0 for the scene only (a thread
 * created while it is FIFO would be FIFO too).
 */
static int thp_scene(struct toucher *thp, unsigned long long *m0,
		     unsigned long long *m1, int *fifo, int *huge)
{
	struct sched_param fp = { .sched_priority = 1 }, op = { 0 };
	unsigned long long c0, w0;
	clockid_t thp_clock;
	char *region, *big;
	pthread_t tt;

	/* [big, big + 2 MiB + 2 pages): one huge page, two small ones */
	region = map(2 * HUGE + 2 * PAGE, PROT_READ | PROT_WRITE);
	big = (char *)(((uintptr_t)region + HUGE - 1) & ~(HUGE - 1));
	munmap(big + HUGE + 2 * PAGE, region + 2 * HUGE + 2 * PAGE - (big + HUGE + 2 * PAGE));
	if (big != region)
		munmap(region, big - region);
	madvise(big, HUGE + 2 * PAGE, MADV_HUGEPAGE);
	big[HUGE] = 1;			/* the anon_vma, on a small page */
	thp->addr = big;

	atomic_store(&scene_done, 0);
	atomic_store(&thp_started, 0);
	pin(0);
	pthread_create(&tt, NULL, thp_fault, thp);	/* inherits CPU 0 */
	*fifo = sched_setscheduler(0, SCHED_FIFO, &fp) == 0;
	pthread_getcpuclockid(tt, &thp_clock);
	while (!atomic_load(&thp_started))
		usleep(100);
	c0 = cpu_ns(thp_clock);
	w0 = now_ns();
	for (;;) {
		unsigned long long c = cpu_ns(thp_clock) - c0;

		if (c >= 1000000 || (c >= 100000 && now_ns() - w0 >= 2000000))
			break;
		usleep(200);
	}
	*m0 = now_ns();
	mprotect(big + HUGE + PAGE, PAGE, PROT_READ);
	*m1 = now_ns();
	sched_setscheduler(0, SCHED_OTHER, &op);
	atomic_store(&scene_done, 1);
	pthread_join(tt, NULL);
	*huge = is_huge(big);
	return *m0 < thp_t1;
}

int main(int argc, char **argv)
{
	struct toucher fresh = {}, warm = {}, thp = {};
	unsigned long long write_ns = 0, read_ns = 0, m0, m1;
	int go = 0, hold_fd, last_fd, rc, fifo = 0, huge = 0, thp_attempts;
	pthread_t tf, tw;
	char req[64], buf[256];
	long hold_ms;

	if (argc > 1 && !strcmp(argv[1], "-g")) {
		go = 1;
		argc--, argv++;
	}
	if (argc != 2 || (hold_ms = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: mmls_vma [-g] HOLD_MS\n");
		return 2;
	}
	hold_fd = open(HOLD, O_WRONLY);
	last_fd = open(LAST, O_RDONLY);
	if (hold_fd < 0 || last_fd < 0) {
		perror("mmls_vma: " HOLD " (modprobe test_mmap_lock?)");
		return 1;
	}
	/* everything mapped and faulted that the scenes do not time */
	/* Each between two PROT_NONE pages: mapped PROT_NONE, it merges with
	 * no neighbour (an anonymous one would lend it its anon_vma) */
	fresh.addr = map(3 * PAGE, PROT_NONE) + PAGE;
	mprotect(fresh.addr, PAGE, PROT_READ | PROT_WRITE);
	warm.addr = map(4 * PAGE, PROT_NONE) + PAGE;
	mprotect(warm.addr, 2 * PAGE, PROT_READ | PROT_WRITE);
	warm.addr[0] = 1;		/* the anon_vma */
	warm.addr += PAGE;
	snprintf(req, sizeof(req), "write %ld", hold_ms * 1000);

	if (go) {
		printf("ready %d\n", getpid());
		fflush(stdout);
		if (!fgets(buf, sizeof(buf), stdin))
			return 1;
	}
	/* 1. hold */
	pthread_create(&tf, NULL, touch_at, &fresh);
	pthread_create(&tw, NULL, touch_at, &warm);
	while (atomic_load(&nready) < 2)
		usleep(1000);
	atomic_store(&touch_at_ns, now_ns() + hold_ms * 1000000ULL / 4);
	rc = write(hold_fd, req, strlen(req)) < 0 ? -1 : 0;
	atomic_store(&scene_done, 1);
	pthread_join(tf, NULL);
	pthread_join(tw, NULL);
	memset(buf, 0, sizeof(buf));
	if (pread(last_fd, buf, sizeof(buf) - 1, 0) > 0)
		sscanf(buf, "write_ns=%llu read_ns=%llu", &write_ns, &read_ns);

	/* 2. thp: again (a new mapping, a new thread) while the mprotect did
	 * not start during the fault, by the workload's own clocks */
	for (thp_attempts = 1; thp_attempts <= THP_ATTEMPTS; thp_attempts++)
		if (thp_scene(&thp, &m0, &m1, &fifo, &huge))
			break;

	printf("hold_rc=%d\nwrite_ns=%llu\n", rc, write_ns);
	printf("fresh_ns=%llu\nfresh_tid=%ld\n", fresh.ns, fresh.tid);
	printf("warm_ns=%llu\nwarm_tid=%ld\n", warm.ns, warm.tid);
	printf("thp_ns=%llu\nthp_tid=%ld\nthp_huge=%d\n", thp.ns, thp.tid, huge);
	printf("mprotect_ns=%llu\nmprotect_overlap=%d\nfifo=%d\nthp_attempts=%d\n",
	       m1 - m0, m0 < thp_t1, fifo, thp_attempts > THP_ATTEMPTS ? THP_ATTEMPTS : thp_attempts);
	return rc ? 1 : 0;
}
