// SPDX-License-Identifier: GPL-2.0
/*
 * calib_wait: measure, from userspace, how long another thread of the same
 * process waits for mmap_lock while test_mmap_lock holds it.
 *
 * Usage:
 *   calib_wait [-w] REQUEST      hold + contender, print figures
 *   calib_wait -x REQUEST        only write REQUEST, print its result
 *   calib_wait -k US             fork a child that holds "write 5000000",
 *                                SIGKILL it after US microseconds, print how
 *                                long it took to die
 *
 * With a REQUEST ("write 10000", "read 10000", "downgrade 10000 20000"), one
 * thread writes it to /sys/kernel/debug/test_mmap_lock/hold while a
 * contender thread loops until the hold returns, timing each operation
 * with CLOCK_MONOTONIC:
 *   reader (default): open/read/close /proc/self/cmdline (mmap_read_lock)
 *   writer (-w):      mprotect() of a page back and forth (mmap_write_lock)
 * The phases are placed on the same clock with the instants the module
 * reports in .../last (ktime_get_ns() is CLOCK_MONOTONIC).  Output, one
 * key=value per line:
 *   rc errno           result of the hold write()
 *   hold_wall_ns       duration of the hold write() seen by userspace
 *   last_write_ns last_read_ns   what the module measured
 *   acquire_ns         from the start of the write() to the lock granted
 *   return_ns          from the lock released to the write() returned
 *   ops                contender operations during the hold write()
 *   max_wait_ns        longest contender operation overlapping the hold
 *   write_phase_max_ns longest operation overlapping the write phase
 *   write_phase_ops    operations entirely inside the write phase
 *   read_phase_ops     operations entirely inside the read phase
 *   read_phase_max_ns  longest operation that started inside the read phase
 *   blocked_gap_ns     the part of the phase that blocks this contender (a
 *                      writer: the whole hold; a reader: the write phase)
 *                      that the operation covering most of it did not
 *                      cover: ~0 if the contender was blocked all along
 *   blocked_overrun_ns how long after that phase ended the operation
 *                      covering most of it completed (wakeup latency;
 *                      never negative if the lock was held)
 * ("entirely inside" excludes 1 ms at both ends of the phase).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOLD_PATH "/sys/kernel/debug/test_mmap_lock/hold"
#define LAST_PATH "/sys/kernel/debug/test_mmap_lock/last"
#define MAX_OPS (1 << 18)
#define MARGIN_NS 1000000ULL

struct op {
	uint64_t start, end;
};

static const char *request;
static int writer_mode;
static atomic_int go, done;
static uint64_t hold_start, hold_end;
static int hold_rc, hold_errno;
static struct op *ops;
static size_t nops;
static void *page;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int write_request(const char *req)
{
	int fd = open(HOLD_PATH, O_WRONLY);
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "calib_wait: open %s: %s (is test_mmap_lock loaded?)\n",
			HOLD_PATH, strerror(errno));
		exit(2);
	}
	n = write(fd, req, strlen(req));
	hold_errno = n < 0 ? errno : 0;
	close(fd);
	if (n >= 0 && (size_t)n != strlen(req)) {
		fprintf(stderr, "calib_wait: short write %zd\n", n);
		return -1;
	}
	return n < 0 ? -1 : 0;
}

/* What test_mmap_lock measured for the last hold (see lib/test_mmap_lock.c). */
struct last {
	unsigned long long write_ns, read_ns;
	unsigned long long locked, downgraded, unlocked;
};

static void read_last(struct last *l)
{
	FILE *f = fopen(LAST_PATH, "r");

	if (!f || fscanf(f, "write_ns=%llu read_ns=%llu locked_at_ns=%llu "
			 "downgraded_at_ns=%llu unlocked_at_ns=%llu",
			 &l->write_ns, &l->read_ns, &l->locked, &l->downgraded,
			 &l->unlocked) != 5) {
		fprintf(stderr, "calib_wait: cannot parse %s (a module without "
			"the *_at_ns instants? rebuild with 'make kernel')\n",
			LAST_PATH);
		exit(2);
	}
	fclose(f);
}

static void *holder(void *arg)
{
	(void)arg;
	while (!atomic_load(&go))
		;
	hold_start = now_ns();
	hold_rc = write_request(request);
	hold_end = now_ns();
	atomic_store(&done, 1);
	return NULL;
}

static void contend_once(void)
{
	char buf[256];
	int fd;

	if (writer_mode) {
		/* mprotect() takes mmap_write_lock_killable(). */
		if (mprotect(page, 4096, PROT_READ) ||
		    mprotect(page, 4096, PROT_READ | PROT_WRITE)) {
			perror("calib_wait: mprotect");
			exit(2);
		}
		return;
	}
	/* /proc/PID/cmdline reads go through access_remote_vm(). */
	fd = open("/proc/self/cmdline", O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0) {
		perror("calib_wait: /proc/self/cmdline");
		exit(2);
	}
	close(fd);
}

static int run_hold(void)
{
	struct last l;
	uint64_t ws, we, rs, re, bs, be, max_wait = 0, wmax = 0, rmax = 0;
	uint64_t cover = 0, bend = 0;
	size_t i, wops = 0, rops = 0;
	pthread_t t;

	/*
	 * Populate everything the timed loop touches: a page fault in the
	 * loop would itself wait for mmap_lock and blur what is measured.
	 */
	ops = mmap(NULL, MAX_OPS * sizeof(*ops), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (ops == MAP_FAILED || page == MAP_FAILED) {
		perror("calib_wait: mmap");
		return 2;
	}
	/* Warm up: the first /proc read faults in code and data. */
	for (i = 0; i < 10; i++)
		contend_once();

	if (pthread_create(&t, NULL, holder, NULL)) {
		perror("calib_wait: pthread_create");
		return 2;
	}
	atomic_store(&go, 1);
	while (!atomic_load(&done) && nops < MAX_OPS) {
		ops[nops].start = now_ns();
		contend_once();
		ops[nops].end = now_ns();
		nops++;
	}
	pthread_join(t, NULL);

	printf("rc=%d\nerrno=%d\n", hold_rc, hold_errno);
	printf("hold_wall_ns=%llu\n", (unsigned long long)(hold_end - hold_start));
	if (hold_rc)
		return 1;
	read_last(&l);
	printf("last_write_ns=%llu\nlast_read_ns=%llu\n", l.write_ns, l.read_ns);
	if (l.locked < hold_start || l.unlocked > hold_end) {
		fprintf(stderr, "calib_wait: the module's hold [%llu, %llu] is "
			"not inside the write() [%llu, %llu]: not the same clock?\n",
			l.locked, l.unlocked, (unsigned long long)hold_start,
			(unsigned long long)hold_end);
		return 2;
	}
	printf("acquire_ns=%llu\nreturn_ns=%llu\n",
	       l.locked - hold_start, hold_end - l.unlocked);

	/*
	 * The phases as the module saw them, on this clock.  A write hold
	 * has an empty read phase and a read hold an empty write phase.
	 */
	ws = l.locked;
	re = l.unlocked;
	we = rs = l.downgraded ? l.downgraded : l.write_ns ? re : ws;
	/* What blocks this contender: a writer the whole hold, a reader
	 * the write phase (none in a read hold). */
	bs = ws;
	be = writer_mode ? re : we;
	for (i = 0; i < nops; i++) {
		uint64_t d = ops[i].end - ops[i].start;
		uint64_t a = ops[i].start > bs ? ops[i].start : bs;
		uint64_t b = ops[i].end < be ? ops[i].end : be;

		if (be > bs && b > a && b - a > cover) {
			cover = b - a;
			bend = ops[i].end;
		}
		if (ops[i].end > ws && ops[i].start < re && d > max_wait)
			max_wait = d;
		if (we > ws && ops[i].end > ws && ops[i].start < we && d > wmax)
			wmax = d;
		if (we > ws && ops[i].start >= ws + MARGIN_NS &&
		    ops[i].end + MARGIN_NS <= we)
			wops++;
		if (re > rs && ops[i].start >= rs + MARGIN_NS &&
		    ops[i].end + MARGIN_NS <= re)
			rops++;
		if (re > rs && ops[i].start >= rs && ops[i].start < re &&
		    d > rmax)
			rmax = d;
	}
	printf("contender=%s\nops=%zu\nmax_wait_ns=%llu\n",
	       writer_mode ? "writer" : "reader", nops,
	       (unsigned long long)max_wait);
	printf("write_phase_max_ns=%llu\nwrite_phase_ops=%zu\nread_phase_ops=%zu\n",
	       (unsigned long long)wmax, wops, rops);
	printf("read_phase_max_ns=%llu\n", (unsigned long long)rmax);
	if (be > bs)
		printf("blocked_gap_ns=%llu\nblocked_overrun_ns=%lld\n",
		       (unsigned long long)(be - bs - cover),
		       (long long)(bend - be));
	return 0;
}

static int run_kill(long us)
{
	uint64_t t0, t1;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		perror("calib_wait: fork");
		return 2;
	}
	if (pid == 0) {
		write_request("write 5000000");
		_exit(hold_errno ? 1 : 0);
	}
	usleep(us);
	t0 = now_ns();
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid) {
		perror("calib_wait: waitpid");
		return 2;
	}
	t1 = now_ns();
	printf("killed=%d\nsignal=%d\nexit_after_kill_ns=%llu\n",
	       WIFSIGNALED(status), WIFSIGNALED(status) ? WTERMSIG(status) : 0,
	       (unsigned long long)(t1 - t0));
	return 0;
}

int main(int argc, char **argv)
{
	int opt, only_write = 0;
	long kill_us = -1;

	while ((opt = getopt(argc, argv, "wxk:")) != -1) {
		switch (opt) {
		case 'w':
			writer_mode = 1;
			break;
		case 'x':
			only_write = 1;
			break;
		case 'k':
			kill_us = strtol(optarg, NULL, 10);
			break;
		default:
			goto usage;
		}
	}
	if (kill_us >= 0)
		return run_kill(kill_us);
	if (optind != argc - 1)
		goto usage;
	request = argv[optind];
	if (only_write) {
		int rc = write_request(request);

		printf("rc=%d\nerrno=%d\n", rc, hold_errno);
		return 0;
	}
	return run_hold();
usage:
	fprintf(stderr, "usage: calib_wait [-w] REQUEST | -x REQUEST | -k US\n");
	return 2;
}
