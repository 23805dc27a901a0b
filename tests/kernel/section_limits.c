// SPDX-License-Identifier: GPL-2.0
/*
 * section_limits: two hazards of vm.munmap_lock_mode=section at the
 * limits, checked in whatever mode is set (kernel patch 0001, issue 13).
 * Prints TAP (8 checks). Needs root (it sets vm.max_map_count and puts it
 * back) and RLIMIT_MEMLOCK of 16 MiB or more.
 *
 * mlock: 16 MiB mlocked at B + 1 MiB (B a multiple of 2 MiB, so section
 *   boundaries fall inside it); munmap of 9 MiB in the middle. VmLck
 *   (mm->locked_vm) drops by exactly 9 MiB, and the two pieces left are
 *   still locked, every page present with its contents (smaps "Locked:").
 *
 * vm.max_map_count: A = [B, B + 8M) read-write, C = [B + 8M, B + 12M)
 *   read-only (two VMAs), the limit set to the map count. munmap(B + 1M,
 *   9M) ends in C: one munmap splits A's head off and C's tail, and the
 *   kernel allows that at the limit. In section mode with 2 MiB sections
 *   the first chunk [B + 1M, B + 2M) lies inside A: a split at both ends,
 *   refused at the limit. The documented result (kernel-patches/README.md):
 *   that mode fails with ENOMEM, and nothing is lost: the failing chunk is
 *   the first, every page of the range is still there. The other modes
 *   succeed and leave nothing of the range.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1UL << 20)
#define NCHECKS 8

static long page;
static int n, failed;

static void check(int ok, const char *what, const char *why)
{
	if (!ok)
		failed = 1;
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", ++n, what,
	       ok || !why ? "" : ": ", ok || !why ? "" : why);
	fflush(stdout);
}

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t got;

	if (!f)
		return -1;
	got = fread(buf, 1, len - 1, f);
	buf[got] = 0;
	fclose(f);
	return 0;
}

/* "VmLck:" of /proc/self/status, in kB; -1 if absent */
static long vmlck_kb(void)
{
	char buf[8192], *p;

	if (read_file("/proc/self/status", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "\nVmLck:");
	return p ? strtol(p + 7, NULL, 10) : -1;
}

/* smaps "Locked:" of the VMA starting at START, in kB; -1 if none */
static long locked_kb(unsigned long start)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long s, e;
	char line[512];
	long kb = -1;
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {
			in = s == start;
			continue;
		}
		if (in && !strncmp(line, "Locked:", 7))
			kb = strtol(line + 7, NULL, 10);
	}
	fclose(f);
	return kb;
}

/* VMAs in /proc/self/maps (its [vsyscall] line is no VMA) */
static long map_count(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	long c = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strstr(line, "[vsyscall]"))
			c++;
	fclose(f);
	return c;
}

static void fill(unsigned long lo, unsigned long hi)
{
	for (unsigned long a = lo; a < hi; a += page)
		*(unsigned char *)a = (unsigned char)(a / page + 1);
}

/* every page of [lo, hi) mapped and holding its pattern byte */
static int intact(unsigned long lo, unsigned long hi)
{
	unsigned char v;

	for (unsigned long a = lo; a < hi; a += page)
		if (mincore((void *)a, page, &v) ||
		    *(volatile unsigned char *)a != (unsigned char)(a / page + 1))
			return 0;
	return 1;
}

/* no page of [lo, hi) mapped */
static int gone(unsigned long lo, unsigned long hi)
{
	unsigned char v;

	for (unsigned long a = lo; a < hi; a += page)
		if (!mincore((void *)a, page, &v) || errno != ENOMEM)
			return 0;
	return 1;
}

/* B: 2 MiB-aligned, with LEN bytes of address space from it reserved */
static unsigned long reserve(unsigned long len)
{
	char *r = mmap(NULL, len + 2 * MIB, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		return 0;
	return ((unsigned long)r + 2 * MIB - 1) & ~(2 * MIB - 1);
}

static void mlock_case(void)
{
	unsigned long b = reserve(18 * MIB), lo, hi;
	char why[256];
	long before, after, l1, l2;
	int r;

	lo = b + MIB;
	hi = lo + 16 * MIB;
	before = vmlck_kb();
	if (!b || mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mlock((void *)lo, hi - lo)) {
		snprintf(why, sizeof(why), "mmap/mlock: %s", strerror(errno));
		check(0, "mlock: 16 MiB mlocked", why);
		check(0, "mlock: munmap", "not run");
		check(0, "mlock: VmLck", "not run");
		check(0, "mlock: the pieces left", "not run");
		return;
	}
	fill(lo, hi);
	after = vmlck_kb();
	snprintf(why, sizeof(why), "VmLck %ld kB -> %ld kB", before, after);
	check(after - before == 16384,
	      "mlock: 16 MiB mlocked at B + 1 MiB: VmLck grew by 16384 kB", why);

	before = after;
	r = munmap((void *)(lo + 2 * MIB), 9 * MIB);
	snprintf(why, sizeof(why), "returned %d (%s)", r, r ? strerror(errno) : "no error");
	check(r == 0, "mlock: munmap(B + 3 MiB, 9 MiB) of the locked range returns 0", why);
	after = vmlck_kb();
	snprintf(why, sizeof(why), "VmLck %ld kB -> %ld kB", before, after);
	check(before - after == 9216, "mlock: VmLck dropped by exactly 9216 kB", why);

	l1 = locked_kb(lo);
	l2 = locked_kb(lo + 11 * MIB);
	snprintf(why, sizeof(why), "Locked: %ld kB and %ld kB, pages %s, gap %s",
		 l1, l2, intact(lo, lo + 2 * MIB) && intact(lo + 11 * MIB, hi) ?
		 "intact" : "lost", gone(lo + 2 * MIB, lo + 11 * MIB) ? "unmapped" :
		 "still mapped");
	check(l1 == 2048 && l2 == 5120 && intact(lo, lo + 2 * MIB) &&
	      intact(lo + 11 * MIB, hi) && gone(lo + 2 * MIB, lo + 11 * MIB),
	      "mlock: the pieces left are locked (smaps Locked: 2048 and 5120 kB), pages intact", why);
	munmap((void *)lo, hi - lo);
}

static int sysctl_rw(const char *path, long *val, int write)
{
	FILE *f = fopen(path, write ? "w" : "r");
	int ok;

	if (!f)
		return -1;
	ok = write ? fprintf(f, "%ld\n", *val) > 0 : fscanf(f, "%ld", val) == 1;
	return fclose(f) || !ok ? -1 : 0;
}

static void map_count_case(int section)
{
	const char *mmc = "/proc/sys/vm/max_map_count";
	unsigned long b = reserve(12 * MIB);
	long old = -1, lim = -1, back = -1;
	char why[256];
	int r, err;

	if (!b || mmap((void *)b, 8 * MIB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mmap((void *)(b + 8 * MIB), 4 * MIB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		snprintf(why, sizeof(why), "mmap: %s", strerror(errno));
		check(0, "max_map_count: A and C mapped", why);
		check(0, "max_map_count: munmap", "not run");
		check(0, "max_map_count: the range", "not run");
		check(0, "max_map_count: restored", "not run");
		return;
	}
	fill(b, b + 12 * MIB);
	mprotect((void *)(b + 8 * MIB), 4 * MIB, PROT_READ);
	if (sysctl_rw(mmc, &old, 0) == 0) {
		lim = map_count();
		if (sysctl_rw(mmc, &lim, 1))
			lim = -1;
	}
	snprintf(why, sizeof(why), "max_map_count %ld, map count %ld", old, lim);
	check(lim > 0, "max_map_count: A rw and C ro mapped, the limit set to the map count", why);

	/* nothing between here and the restore may map anything */
	r = munmap((void *)(b + MIB), 9 * MIB);
	err = errno;
	if (old > 0)
		sysctl_rw(mmc, &old, 1);
	if (section) {
		snprintf(why, sizeof(why), "returned %d (%s)", r, r ? strerror(err) : "no error");
		check(r == -1 && err == ENOMEM,
		      "max_map_count: section mode fails the call with ENOMEM (its first chunk needs a split at both ends)", why);
		check(intact(b, b + 12 * MIB),
		      "max_map_count: nothing is lost: every page of A and C still holds its contents", NULL);
	} else {
		snprintf(why, sizeof(why), "returned %d (%s)", r, r ? strerror(err) : "no error");
		check(r == 0, "max_map_count: one munmap splits at the limit and returns 0", why);
		check(gone(b + MIB, b + 10 * MIB) && intact(b, b + MIB) &&
		      intact(b + 10 * MIB, b + 12 * MIB),
		      "max_map_count: the range is gone, the rest of A and C intact", NULL);
	}
	sysctl_rw(mmc, &back, 0);
	snprintf(why, sizeof(why), "%ld, want %ld", back, old);
	check(back == old && old > 0, "max_map_count: put back", why);
}

int main(void)
{
	char mode[32] = "", bytes[32] = "";
	int section;

	page = sysconf(_SC_PAGESIZE);
	read_file("/proc/sys/vm/munmap_lock_mode", mode, sizeof(mode));
	read_file("/proc/sys/vm/munmap_section_bytes", bytes, sizeof(bytes));
	section = !strncmp(mode, "section", 7);
	if (section && strtoul(bytes, NULL, 10) != 2 * MIB) {
		printf("Bail out! section mode wants vm.munmap_section_bytes = 2 MiB, not %s", bytes);
		return 2;
	}
	printf("1..%d\n", NCHECKS);
	fflush(stdout);
	mlock_case();
	map_count_case(section);
	return failed;
}
