// SPDX-License-Identifier: GPL-2.0
/*
 * munmap_section: unmap a large populated mapping while other threads of the
 * same process fault pages and read /proc/self/cmdline, then check the
 * result and the vm.munmap_lock_mode counters (/sys/kernel/debug/munmap_lock).
 *
 * Usage: munmap_section [-s MiB] [-k MiB] [-f MiB] [-S BYTES] [-a] [-u]
 *                       [-e section|exact|none|atomic] [-t] [-q]
 *   -s MiB   size of the range to unmap (default 1024), 4 KiB pages
 *   -k MiB   size kept mapped on each side of it, same VMA (default 8)
 *   -f MiB   size of the region the faulting thread works in (default 16;
 *            0: no faulting thread)
 *   -S BYTES vm.munmap_section_bytes in effect (to compute the expected
 *            number of sections; default: read from debugfs)
 *   -a       place the range so that it straddles a 1 GiB boundary
 *   -u       register the whole mapping with userfaultfd
 *            (UFFD_FEATURE_EVENT_UNMAP) and expect one UNMAP event
 *   -e WHAT  expected counter change: "section" (sections >= expected
 *            chunks, drops > 0), "exact" (sections == expected chunks,
 *            drops == chunks - 1: a waiter at every boundary, as on one
 *            vCPU under icount), "none" (no section counter moves: other
 *            modes), "atomic" (section mode with userfaultfd: one atomic
 *            section, no drop)
 *   -t       timing run: leave out the checks of the address space after
 *            the munmap (range gone, neighbours intact, the faulting
 *            thread's data); the other checks and the figures stay
 *   -q       do not print the figures line
 *
 * Prints TAP (docs/CONVENTIONS.md): a plan computed from the options, one
 * "ok N - ..."/"not ok N - ..." line per check and "# key=value ..."
 * figures; exits 1 if a check failed. A setup error ends it early, short
 * of its plan (the caller's subtest then fails).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIB (1UL << 20)
#define GIB (1UL << 30)
#define PG 4096UL
#define MAGIC 0x5ec7104UL

static int failed, nchecks;
/* odd while munmap() runs: +1 before the call, +1 after it. An operation
 * overlapped the call if it saw an odd value at either end or the value
 * changed under it -- a read blocked for the whole call included (under
 * single-threaded TCG a thread can sleep through both flips). */
static atomic_int phase;
#define OVERLAPPED(p0, p1)	(((p0) & 1) || ((p1) & 1) || (p0) != (p1))
static atomic_int stop;

static void ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++nchecks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		failed = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct counters {
	long sections, drops, drops_resched, atomic;
	unsigned long section_bytes;
	char mode[64];
};

static int read_counters(struct counters *c)
{
	FILE *f = fopen("/sys/kernel/debug/munmap_lock", "r");
	char key[64], val[64];

	memset(c, 0, sizeof(*c));
	if (!f)
		return -1;
	while (fscanf(f, "%63s %63s", key, val) == 2) {
		if (!strcmp(key, "mode"))
			snprintf(c->mode, sizeof(c->mode), "%s", val);
		else if (!strcmp(key, "section_bytes"))
			c->section_bytes = strtoul(val, NULL, 0);
		else if (!strcmp(key, "munmap_section"))
			c->sections = atol(val);
		else if (!strcmp(key, "munmap_section_drop"))
			c->drops = atol(val);
		else if (!strcmp(key, "munmap_section_drop_resched"))
			c->drops_resched = atol(val);
		else if (!strcmp(key, "munmap_section_atomic"))
			c->atomic = atol(val);
	}
	fclose(f);
	return 0;
}

/* --- reader: /proc/self/cmdline in a loop (the `ps` of the seeds) --- */
static uint64_t reader_max_ns, reader_reads;

static void *reader(void *arg)
{
	char buf[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY);

	if (fd < 0)
		return NULL;
	while (!atomic_load(&stop)) {
		int p0 = atomic_load(&phase);
		uint64_t t0 = now_ns(), d;

		if (pread(fd, buf, sizeof(buf), 0) < 0)
			break;
		d = now_ns() - t0;
		if (OVERLAPPED(p0, atomic_load(&phase))) {
			reader_reads++;
			if (d > reader_max_ns)
				reader_max_ns = d;
		}
	}
	close(fd);
	return NULL;
}

/* --- faulter: write every page, check, MADV_DONTNEED, again --- */
static char *fault_area;
static size_t fault_len;
static uint64_t faulter_max_ns, faulter_faults, faulter_bad;

static void *faulter(void *arg)
{
	unsigned long pass = 0;
	size_t off;
	int pm;

	while (!atomic_load(&stop)) {
		pass++;
		for (off = 0; off < fault_len; off += PG) {
			int p0 = atomic_load(&phase);
			uint64_t t0 = now_ns(), d;

			*(volatile unsigned long *)(fault_area + off) = pass;
			d = now_ns() - t0;
			if (OVERLAPPED(p0, atomic_load(&phase))) {
				faulter_faults++;
				if (d > faulter_max_ns)
					faulter_max_ns = d;
			}
		}
		for (off = 0; off < fault_len; off += PG)
			if (*(unsigned long *)(fault_area + off) != pass)
				faulter_bad++;
		/*
		 * madvise() takes mmap_lock for read as a fault does: if the
		 * munmap starts while this thread is here, this is the call
		 * that waits for it, so it counts like a fault.
		 */
		pm = atomic_load(&phase);
		madvise(fault_area, fault_len, MADV_DONTNEED);
		if (OVERLAPPED(pm, atomic_load(&phase)))
			faulter_faults++;
	}
	return NULL;
}

/* --- userfaultfd monitor: UNMAP events are synchronous, read them --- */
static int uffd = -1;
static unsigned long uffd_unmaps, uffd_start, uffd_end;

static void *monitor(void *arg)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	while (!atomic_load(&stop)) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event == UFFD_EVENT_UNMAP) {
			uffd_unmaps++;
			uffd_start = msg.arg.remove.start;
			uffd_end = msg.arg.remove.end;
		}
	}
	return NULL;
}

/* --- access checks --- */
static sigjmp_buf segv_env;
static volatile sig_atomic_t segv_seen;

static void on_segv(int sig)
{
	segv_seen = 1;
	siglongjmp(segv_env, 1);
}

static int faults_on_access(volatile char *p)
{
	segv_seen = 0;
	if (sigsetjmp(segv_env, 1) == 0)
		(void)*p;
	return segv_seen;
}

static int maps_overlap(unsigned long lo, unsigned long hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long s, e;
	char line[512];
	int hit = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
			hit = 1;
	fclose(f);
	return hit;
}

/* The unmapped range is gone, the rest is intact: 5 checks. */
static void check_address_space(unsigned long lo, unsigned long hi,
				unsigned long size, unsigned long keep,
				char *area, unsigned long total)
{
	struct sigaction sa;
	unsigned long i, bad;
	char *mc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	ok(faults_on_access((char *)lo) &&
	   faults_on_access((char *)lo + size / 2 + 123) &&
	   faults_on_access((char *)hi - 1),
	   "first, middle and last byte of the unmapped range raise SIGSEGV");
	mc = malloc(size / PG);
	errno = 0;
	ok(mincore((void *)lo, size, (unsigned char *)mc) == -1 && errno == ENOMEM,
	   "mincore() over the unmapped range fails with ENOMEM");
	free(mc);
	ok(maps_overlap(lo, hi) == 0, "/proc/self/maps has nothing in the unmapped range");

	bad = 0;
	for (i = 0; i < keep; i += PG)
		if (*(unsigned long *)(area + i) != ((i / PG) ^ MAGIC))
			bad++;
	for (i = keep + size; i < total; i += PG)
		if (*(unsigned long *)(area + i) != ((i / PG) ^ MAGIC))
			bad++;
	ok(bad == 0, "the %lu MiB kept on each side hold their data (%lu bad pages)",
	   keep / MIB, bad);
	ok(maps_overlap(lo - keep, lo) == 1 && maps_overlap(hi, hi + keep) == 1,
	   "both kept parts are still mapped");
}

static unsigned long chunks_expected(unsigned long lo, unsigned long hi,
				     unsigned long step)
{
	unsigned long n = 0, cur = lo;

	while (cur < hi) {
		n++;
		if (hi - cur > step)
			cur = cur - cur % step + step;
		else
			cur = hi;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned long size = 1024 * MIB, keep = 8 * MIB, flen = 16 * MIB;
	unsigned long step = 0, total, i, lo, hi, nexp = 0;
	const char *expect = NULL;
	int straddle = 0, use_uffd = 0, quiet = 0, timing = 0, opt;
	struct counters c0, c1;
	pthread_t rt, ft, mt;
	uint64_t t0, munmap_ns;
	char *base, *area;
	int ret, err;

	while ((opt = getopt(argc, argv, "s:k:f:S:aue:tq")) != -1) {
		switch (opt) {
		case 's': size = strtoul(optarg, NULL, 0) * MIB; break;
		case 'k': keep = strtoul(optarg, NULL, 0) * MIB; break;
		case 'f': flen = strtoul(optarg, NULL, 0) * MIB; break;
		case 'S': step = strtoul(optarg, NULL, 0); break;
		case 'a': straddle = 1; break;
		case 'u': use_uffd = 1; break;
		case 'e': expect = optarg; break;
		case 't': timing = 1; break;
		case 'q': quiet = 1; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of %s.c\n",
				argv[0]);
			return 2;
		}
	}
	if (expect && strcmp(expect, "section") && strcmp(expect, "exact") &&
	    strcmp(expect, "atomic") && strcmp(expect, "none")) {
		fprintf(stderr, "-e %s: want section, exact, atomic or none\n", expect);
		return 2;
	}
	/* munmap's return and the reader: 2; the address space after it:
	 * 5 (not with -t); a faulting thread: 1, and 1 for its data (not
	 * with -t); userfaultfd: 1; the counters: 2 for "section" or
	 * "exact", 1 for "atomic" or "none". */
	printf("1..%d\n", 2 + (timing ? 0 : 5) + (flen ? 1 + !timing : 0) +
	       use_uffd + (!expect ? 0 : !strcmp(expect, "section") ||
			   !strcmp(expect, "exact") ? 2 : 1));
	if (read_counters(&c0) || !c0.mode[0]) {
		ok(0, "read /sys/kernel/debug/munmap_lock (patch 0001 and debugfs needed)");
		return 1;
	}
	if (!step)
		step = c0.section_bytes;

	total = keep + size + keep;
	if (straddle) {
		/* Reserve 4 GiB of address space, put the range across a
		 * 1 GiB boundary inside it. */
		base = mmap(NULL, 4 * GIB, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (base == MAP_FAILED) {
			ok(0, "reserve address space: %s", strerror(errno));
			return 1;
		}
		lo = ((unsigned long)base + GIB - 1) & ~(GIB - 1);
		lo += GIB - size / 2 - keep;
		area = mmap((void *)lo, total, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		/* drop the rest of the reservation */
		munmap(base, lo - (unsigned long)base);
		munmap((char *)lo + total,
		       (unsigned long)base + 4 * GIB - lo - total);
	} else {
		area = mmap(NULL, total, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (area == MAP_FAILED) {
		ok(0, "mmap %lu MiB: %s", total / MIB, strerror(errno));
		return 1;
	}
	madvise(area, total, MADV_NOHUGEPAGE);
	for (i = 0; i < total; i += PG)
		*(unsigned long *)(area + i) = (i / PG) ^ MAGIC;

	fault_len = flen;
	if (flen) {
		fault_area = mmap(NULL, flen, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fault_area == MAP_FAILED) {
			ok(0, "mmap fault area: %s", strerror(errno));
			return 1;
		}
		madvise(fault_area, flen, MADV_NOHUGEPAGE);
	}

	if (use_uffd) {
		struct uffdio_api api = {
			.api = UFFD_API,
			.features = UFFD_FEATURE_EVENT_UNMAP,
		};
		struct uffdio_register reg = {
			.range = { .start = (unsigned long)area, .len = total },
			.mode = UFFDIO_REGISTER_MODE_MISSING,
		};

		uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
		if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) ||
		    ioctl(uffd, UFFDIO_REGISTER, &reg)) {
			ok(0, "userfaultfd register with EVENT_UNMAP: %s",
			   strerror(errno));
			return 1;
		}
	}

	lo = (unsigned long)area + keep;
	hi = lo + size;
	nexp = chunks_expected(lo, hi, step);

	pthread_create(&rt, NULL, reader, NULL);
	if (flen)
		pthread_create(&ft, NULL, faulter, NULL);
	if (use_uffd)
		pthread_create(&mt, NULL, monitor, NULL);
	usleep(200000);

	read_counters(&c0);
	atomic_fetch_add(&phase, 1);
	t0 = now_ns();
	ret = munmap((void *)lo, size);
	err = errno;
	munmap_ns = now_ns() - t0;
	atomic_fetch_add(&phase, 1);
	read_counters(&c1);

	usleep(100000);
	atomic_store(&stop, 1);
	pthread_join(rt, NULL);
	if (flen)
		pthread_join(ft, NULL);
	if (use_uffd)
		pthread_join(mt, NULL);

	ok(ret == 0, "munmap of %lu MiB (mode %s) returns 0%s%s", size / MIB,
	   c1.mode, ret ? ": " : "", ret ? strerror(err) : "");

	if (!timing)
		check_address_space(lo, hi, size, keep, area, total);
	if (flen) {
		if (!timing)
			ok(faulter_bad == 0, "the faulting thread saw consistent data (%lu bad)",
			   (unsigned long)faulter_bad);
		ok(faulter_faults > 0, "the faulting thread faulted during munmap (%lu faults or madvise calls)",
		   (unsigned long)faulter_faults);
	}
	ok(reader_reads > 0, "the /proc/self/cmdline reader ran during munmap (%lu reads)",
	   (unsigned long)reader_reads);

	if (use_uffd)
		ok(uffd_unmaps == 1 && uffd_start == lo && uffd_end == hi,
		   "userfaultfd got one UNMAP event for the whole range (%lu events)",
		   uffd_unmaps);

	if (expect && !strcmp(expect, "section")) {
		ok(c1.sections - c0.sections >= (long)nexp,
		   "section mode: munmap_section counter grew by >= %lu (%ld)",
		   nexp, c1.sections - c0.sections);
		ok(c1.drops - c0.drops > 0,
		   "section mode: munmap_section_drop counter grew (%ld)",
		   c1.drops - c0.drops);
	} else if (expect && !strcmp(expect, "exact")) {
		ok(c1.sections - c0.sections == (long)nexp,
		   "section mode: munmap_section counter grew by exactly %lu (%ld)",
		   nexp, c1.sections - c0.sections);
		ok(c1.drops - c0.drops == (long)nexp - 1,
		   "section mode, a waiter at every boundary: munmap_section_drop counter grew by exactly %lu (%ld)",
		   nexp - 1, c1.drops - c0.drops);
	} else if (expect && !strcmp(expect, "atomic")) {
		ok(c1.atomic - c0.atomic >= 1 && c1.drops == c0.drops,
		   "section mode with userfaultfd: stayed atomic (atomic +%ld, drops +%ld)",
		   c1.atomic - c0.atomic, c1.drops - c0.drops);
	} else if (expect && !strcmp(expect, "none")) {
		ok(c1.sections == c0.sections && c1.drops == c0.drops,
		   "mode %s: section counters unchanged (sections +%ld, drops +%ld)",
		   c1.mode, c1.sections - c0.sections, c1.drops - c0.drops);
	}

	if (!quiet)
		printf("# mode=%s size_mib=%lu section_bytes=%lu chunks_expected=%lu munmap_ms=%.1f reader_max_ms=%.2f reader_reads=%lu fault_max_ms=%.2f faults=%lu sections=%ld drops=%ld drops_resched=%ld atomic=%ld munmap_us=%lu reader_max_us=%lu fault_max_us=%lu\n",
		       c1.mode, size / MIB, step, nexp, munmap_ns / 1e6,
		       reader_max_ns / 1e6, (unsigned long)reader_reads,
		       faulter_max_ns / 1e6, (unsigned long)faulter_faults,
		       c1.sections - c0.sections, c1.drops - c0.drops,
		       c1.drops_resched - c0.drops_resched, c1.atomic - c0.atomic,
		       (unsigned long)(munmap_ns / 1000),
		       (unsigned long)(reader_max_ns / 1000),
		       (unsigned long)(faulter_max_ns / 1000));
	return failed;
}
