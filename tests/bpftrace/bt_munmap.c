// SPDX-License-Identifier: GPL-2.0
/*
 * bt_munmap: the small workload of the bpftrace script tests.
 *
 * Per iteration: map SIZE MiB of anonymous memory with 4 KiB pages
 * (MADV_NOHUGEPAGE), populate every page, then munmap() it while a thread
 * of this process reads /proc/self/cmdline in a loop (mmap_lock read side,
 * the `ps` of the seeds' hung-task splat). Prints one line per iteration:
 *
 *   bt_munmap pid=P iter=I len=BYTES munmap_us=U reader_reads=N reader_max_us=M
 *             writer_ops=W populate_ns_per_page=F addr=0xA
 *
 * addr is where the mapping was: it tells how many vm.munmap_section_bytes
 * sections the munmap of it spans.
 *
 * populate_ns_per_page (time to fault in one 4 KiB page) is what a tracer
 * attached to the read side costs: compare runs with and without it.
 *
 * reader_max_us is the slowest /proc/self/cmdline read that overlapped the
 * munmap() call.
 *
 * Usage: bt_munmap [-s MIB] [-n ITERATIONS] [-g GOFILE] [-R] [-w]
 *   -s MIB   mapping size (default 256)
 *   -n N     iterations (default 1)
 *   -g FILE  before each iteration print "ready pid=P iter=I", wait until
 *            FILE exists and remove it: a tracer can be started with this
 *            PID first, and a sysctl changed between iterations. If FILE
 *            is a FIFO, read one byte from it instead (no polling: the
 *            tests under icount keep the one vCPU free of timer-driven
 *            wake-ups while they measure)
 *   -R       no reader thread
 *   -w       also a writer thread: mprotect() flips on a small mapping
 *            while munmap() runs (mmap_lock write side; it queues behind
 *            the read phase of a downgraded munmap, and readers queue
 *            behind it)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL

static atomic_int stop, in_munmap;
static atomic_long reads, max_ns, wops;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void *reader(void *arg)
{
	char buf[256];

	(void)arg;
	while (!atomic_load(&stop)) {
		int busy = atomic_load(&in_munmap);
		uint64_t t0 = now_ns(), dt;
		int fd = open("/proc/self/cmdline", O_RDONLY);

		if (fd < 0) {
			perror("bt_munmap: open /proc/self/cmdline");
			exit(1);
		}
		if (read(fd, buf, sizeof(buf)) < 0) {
			perror("bt_munmap: read /proc/self/cmdline");
			exit(1);
		}
		close(fd);
		dt = now_ns() - t0;
		if (busy || atomic_load(&in_munmap)) {
			atomic_fetch_add(&reads, 1);
			if ((long)dt > atomic_load(&max_ns))
				atomic_store(&max_ns, (long)dt);
		}
	}
	return NULL;
}

static void *writer(void *arg)
{
	size_t len = 64 << 10;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	if (p == MAP_FAILED) {
		perror("bt_munmap: mmap (writer)");
		exit(1);
	}
	while (!atomic_load(&stop)) {
		if (!atomic_load(&in_munmap)) {
			usleep(1000);
			continue;
		}
		if (mprotect(p, len, PROT_READ) || mprotect(p, len, PROT_READ | PROT_WRITE)) {
			perror("bt_munmap: mprotect");
			exit(1);
		}
		atomic_fetch_add(&wops, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long mib = 256, iters = 1;
	const char *gofile = NULL;
	int use_reader = 1, use_writer = 0, c;
	pthread_t th, wth;

	while ((c = getopt(argc, argv, "s:n:g:Rwh")) != -1) {
		switch (c) {
		case 's': mib = strtoul(optarg, NULL, 0); break;
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 'g': gofile = optarg; break;
		case 'R': use_reader = 0; break;
		case 'w': use_writer = 1; break;
		default:
			fprintf(stderr, "usage: bt_munmap [-s MIB] [-n ITERATIONS] [-g GOFILE] [-R] [-w]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (!mib || !iters) {
		fprintf(stderr, "bt_munmap: -s and -n must be positive\n");
		return 2;
	}
	prctl(PR_SET_NAME, "bt_munmap");
	if ((use_reader && pthread_create(&th, NULL, reader, NULL)) ||
	    (use_writer && pthread_create(&wth, NULL, writer, NULL))) {
		fprintf(stderr, "bt_munmap: pthread_create failed\n");
		return 1;
	}
	for (unsigned long i = 0; i < iters; i++) {
		size_t len = mib << 20;
		char *p;
		uint64_t t0, t1, tp;

		if (gofile) {
			struct stat st;

			printf("ready pid=%d iter=%lu\n", getpid(), i);
			fflush(stdout);
			if (stat(gofile, &st) == 0 && S_ISFIFO(st.st_mode)) {
				int fd = open(gofile, O_RDONLY);
				char c;

				if (fd < 0 || read(fd, &c, 1) != 1) {
					perror("bt_munmap: read the go FIFO");
					return 1;
				}
				close(fd);
			} else {
				while (access(gofile, F_OK) != 0)
					usleep(20000);
				unlink(gofile);
			}
		}
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("bt_munmap: mmap");
			return 1;
		}
		if (madvise(p, len, MADV_NOHUGEPAGE))
			perror("bt_munmap: madvise(MADV_NOHUGEPAGE)");
		tp = now_ns();
		for (size_t off = 0; off < len; off += PAGE)
			p[off] = 1;
		tp = now_ns() - tp;
		atomic_store(&reads, 0);
		atomic_store(&max_ns, 0);
		atomic_store(&wops, 0);
		usleep(20000);	/* let the reader get going */
		atomic_store(&in_munmap, 1);
		t0 = now_ns();
		if (munmap(p, len)) {
			perror("bt_munmap: munmap");
			return 1;
		}
		t1 = now_ns();
		usleep(5000);	/* a read that started inside still counts */
		atomic_store(&in_munmap, 0);
		printf("bt_munmap pid=%d iter=%lu len=%zu munmap_us=%llu reader_reads=%ld reader_max_us=%ld writer_ops=%ld populate_ns_per_page=%llu addr=%p\n",
		       getpid(), i, len, (unsigned long long)(t1 - t0) / 1000,
		       atomic_load(&reads), atomic_load(&max_ns) / 1000,
		       atomic_load(&wops), (unsigned long long)(tp / (len / PAGE)), (void *)p);
		fflush(stdout);
	}
	atomic_store(&stop, 1);
	if (use_reader)
		pthread_join(th, NULL);
	if (use_writer)
		pthread_join(wth, NULL);
	return 0;
}
