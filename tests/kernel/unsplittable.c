// SPDX-License-Identifier: GPL-2.0
/*
 * unsplittable: munmap() over a VMA that refuses to be split, in whatever
 * vm.munmap_lock_mode the caller set. Prints TAP (10 checks).
 *
 * The VMA is a special mapping, whose ->may_split refuses every split
 * (-EINVAL): the vDSO, or the [vvar] where the vDSO is one page (6.1).
 * Each case runs in its own child, which moves its copy of it (mremap) to
 * straddle B, a multiple of 2 MiB, with anonymous memory on both sides:
 *
 *	B - 4 MiB        B - 4 KiB    B - 4 KiB + len         B + 2 MiB
 *	|  anon (pattern)    |  special  |      anon (pattern)     |
 *
 * With vm.munmap_section_bytes = 2 MiB, B is a section boundary.
 *   across: munmap(B - 4M, 6M) returns 0 and leaves nothing of the range,
 *           as one munmap() does in exclusive mode;
 *   end:    munmap(B - 4M, 4M) ends inside the special mapping: EINVAL,
 *           as in exclusive mode, and nothing was unmapped (the pages
 *           below still hold their pattern);
 *   start:  munmap(B, 2M) starts inside it: EINVAL, nothing unmapped.
 * The child calls no vDSO function once it has moved it. Each case
 * writes "NAME B=0x... len=0x... pid=N" to stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1UL << 20)
#define SEC (2 * MIB)
#define NCHECKS 10

static long page;
static const char *special;	/* "[vdso]" or "[vvar]": 2 pages or more */
static int *done;		/* checks printed so far, shared with children */
static int failed;

static void check(int ok, const char *what, const char *why)
{
	int n = __atomic_add_fetch(done, 1, __ATOMIC_SEQ_CST);

	if (!ok)
		failed = 1;

	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", n, what,
	       ok || !why ? "" : ": ", ok || !why ? "" : why);
	fflush(stdout);
}

/* VMAs of /proc/self/maps that overlap [lo, hi); *sp: one is the special
 * mapping. */
static int vmas_in(unsigned long lo, unsigned long hi, int *sp, char *text,
		   size_t tlen)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long s, e;
	char line[512];
	int n = 0;

	*sp = 0;
	if (text)
		text[0] = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &s, &e) != 2 || e <= lo || s >= hi)
			continue;
		n++;
		if (strstr(line, special))
			*sp = 1;
		if (text && strlen(text) + strlen(line) < tlen)
			strcat(text, line);
	}
	fclose(f);
	return n;
}

/* Where the special mapping NAME is; 0 if it is not there. */
static int special_where(const char *name, unsigned long *start,
			 unsigned long *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long s, e;
	char line[512];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (strstr(line, name) && sscanf(line, "%lx-%lx", &s, &e) == 2) {
			*start = s;
			*len = e - s;
			found = 1;
		}
	fclose(f);
	return found;
}

/* Every page of [lo, hi) mapped and holding its pattern byte? */
static int intact(unsigned long lo, unsigned long hi)
{
	unsigned char v;

	for (unsigned long a = lo; a < hi; a += page) {
		if (mincore((void *)a, page, &v))
			return 0;
		if (*(volatile unsigned char *)a != (unsigned char)(a / page))
			return 0;
	}
	return 1;
}

static void fill(unsigned long lo, unsigned long hi)
{
	for (unsigned long a = lo; a < hi; a += page)
		*(unsigned char *)a = (unsigned char)(a / page);
}

enum { ACROSS, END, START };
static const char *const names[] = { "across", "end", "start" };

/* The layout above; returns B, or 0 with *why set. */
static unsigned long layout(char *why, size_t wlen)
{
	unsigned long vs, vl, b, lo, hi;
	char *r;

	if (!special_where(special, &vs, &vl)) {
		snprintf(why, wlen, "no %s in /proc/self/maps", special);
		return 0;
	}
	/* 10 MiB of address space, then B: 2 MiB-aligned, 4 MiB in */
	r = mmap(NULL, 10 * MIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED) {
		snprintf(why, wlen, "mmap 10 MiB: %s", strerror(errno));
		return 0;
	}
	b = ((unsigned long)r + 4 * MIB + SEC - 1) & ~(SEC - 1);
	lo = b - 4 * MIB;
	hi = b + SEC;
	if (mmap((void *)lo, b - page - lo, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
	    mmap((void *)(b - page + vl), hi - (b - page + vl),
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		snprintf(why, wlen, "mmap the anonymous parts: %s", strerror(errno));
		return 0;
	}
	if (mremap((void *)vs, vl, vl, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (void *)(b - page)) == MAP_FAILED) {
		snprintf(why, wlen, "mremap %s to 0x%lx: %s", special, b - page,
			 strerror(errno));
		return 0;
	}
	fill(lo, b - page);
	fill(b - page + vl, hi);
	return b;
}

static void run_case(int c)
{
	unsigned long b, vs = 0, vl = 0, lo, hi;
	char what[160], why[8448], before[4096], after[4096];
	int n, vd, r, err;

	b = layout(why, sizeof(why));
	lo = b - 4 * MIB;
	hi = b + SEC;
	snprintf(what, sizeof(what),
		 "%s: %s moved to straddle 0x%lx, anonymous pages on both sides",
		 names[c], special, b);
	if (b) {
		n = vmas_in(lo, hi, &vd, before, sizeof(before));
		special_where(special, &vs, &vl);
		if (vs != b - page || !intact(lo, b - page) ||
		    !intact(b - page + vl, hi) || n < 3) {
			snprintf(why, sizeof(why), "%s at 0x%lx, %d VMAs:\n%s",
				 special, vs, n, before);
			b = 0;
		}
	}
	check(b != 0, what, why);
	if (!b)
		exit(1);
	fprintf(stderr, "%s B=0x%lx len=0x%lx pid=%d\n", names[c], b, vl,
		(int)getpid());

	switch (c) {
	case ACROSS:
		r = munmap((void *)lo, hi - lo);
		err = errno;
		snprintf(what, sizeof(what),
			 "across: munmap(B - 4 MiB, 6 MiB) over the %s returns 0",
			 special);
		snprintf(why, sizeof(why), "returned %d (%s)", r, strerror(err));
		check(r == 0, what, why);
		n = vmas_in(lo, hi, &vd, after, sizeof(after));
		snprintf(why, sizeof(why), "%d VMAs left:\n%s", n, after);
		check(n == 0, "across: nothing of the range is left in /proc/self/maps", why);
		break;
	case END:
	case START:
		if (c == END)
			r = munmap((void *)lo, b - lo);
		else
			r = munmap((void *)b, SEC);
		err = errno;
		snprintf(what, sizeof(what),
			 "%s: munmap(%s) %s inside the %s fails with EINVAL, as one munmap does",
			 names[c], c == END ? "B - 4 MiB, 4 MiB" : "B, 2 MiB",
			 c == END ? "ending" : "starting", special);
		snprintf(why, sizeof(why), "returned %d (%s)", r,
			 r ? strerror(err) : "no error");
		check(r == -1 && err == EINVAL, what, why);
		n = vmas_in(lo, hi, &vd, after, sizeof(after));
		snprintf(what, sizeof(what),
			 "%s: nothing was unmapped: the same VMAs, every page holds its pattern",
			 names[c]);
		snprintf(why, sizeof(why), "before:\n%safter:\n%s", before, after);
		check(!strcmp(before, after) && intact(lo, b - page) &&
		      intact(b - page + vl, hi), what, why);
		break;
	}
	if (c != ACROSS)
		return;
	snprintf(what, sizeof(what), "across: the %s is gone", special);
	check(!vd, what, NULL);
}

int main(void)
{
	static const int per[] = { [ACROSS] = 4, [END] = 3, [START] = 3 };
	int c, st, start;
	pid_t p;

	unsigned long s, l;

	page = sysconf(_SC_PAGESIZE);
	/* one page cannot straddle B: on 6.1 the vDSO is one page */
	special = "[vdso]";
	if (!special_where(special, &s, &l) || l < 2 * (unsigned long)page)
		special = "[vvar]";
	if (!special_where(special, &s, &l) || l < 2 * (unsigned long)page ||
	    l > SEC / 2) {
		printf("Bail out! no [vdso] or [vvar] of 2 pages to 1 MiB in /proc/self/maps\n");
		return 2;
	}
	done = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (done == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		return 2;
	}
	printf("1..%d\n", NCHECKS);
	fflush(stdout);
	for (c = ACROSS; c <= START; c++) {
		start = *done;
		p = fork();
		if (p < 0) {
			printf("Bail out! fork: %s\n", strerror(errno));
			return 2;
		}
		if (!p) {
			run_case(c);
			exit(failed);
		}
		waitpid(p, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failed = 1;
		/* a child that died part-way: its remaining checks fail */
		while (*done < start + per[c]) {
			char why[64];

			snprintf(why, sizeof(why), "the child %s %d",
				 WIFSIGNALED(st) ? "died of signal" : "exited",
				 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			check(0, names[c], why);
		}
	}
	return failed;
}
