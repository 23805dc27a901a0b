// SPDX-License-Identifier: GPL-2.0
/*
 * mmap_churn: many threads of ONE process change and use the address space
 * at the same time, so that vm.munmap_lock_mode=section drops and retakes
 * mmap_lock while other threads map, unmap, remap and fault in the same mm.
 * Every thread checks its own data; any mismatch or unexpected error fails.
 *
 * Usage: mmap_churn [-t SECONDS] [-m MiB]
 *   -t SECONDS  run time (default 5)
 *   -m MiB      largest mapping a thread uses (default 32)
 *
 * Threads: 2 x map/populate/partial-unmap, 1 x MAP_FIXED churn with holes
 * inside a private reservation, 1 x mremap shrink/grow/move, 1 x fault +
 * MADV_DONTNEED, 1 x /proc/self/{cmdline,maps} reader.
 * Prints TAP with one check (docs/CONVENTIONS.md): "1..1", then "ok 1 - ..."
 * or "not ok 1 - ..." with the figures; the errors go to stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MIB (1UL << 20)
#define PG 4096UL

static atomic_int stop;
static atomic_long errors, ops;
static unsigned long maxlen = 32 * MIB;

#define ERR(...) do { fprintf(stderr, __VA_ARGS__); atomic_fetch_add(&errors, 1); } while (0)

static unsigned long rnd(unsigned int *seed, unsigned long lo, unsigned long hi)
{
	return lo + (unsigned long)rand_r(seed) % (hi - lo + 1);
}

static void fill(char *p, unsigned long len, unsigned long tag)
{
	for (unsigned long i = 0; i < len; i += PG)
		*(unsigned long *)(p + i) = tag ^ i;
}

static unsigned long verify(char *p, unsigned long len, unsigned long tag,
			    unsigned long off0)
{
	unsigned long bad = 0;

	for (unsigned long i = 0; i < len; i += PG)
		if (*(unsigned long *)(p + i) != (tag ^ (i + off0)))
			bad++;
	return bad;
}

static void *mapper(void *arg)
{
	unsigned int seed = (uintptr_t)arg;
	unsigned long tag = (uintptr_t)arg << 32;

	while (!atomic_load(&stop)) {
		unsigned long len = rnd(&seed, 1, maxlen / PG) * PG;
		unsigned long a, b, bad;
		char *p;

		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			ERR("mapper: mmap %lu: %s\n", len, strerror(errno));
			continue;
		}
		madvise(p, len, MADV_NOHUGEPAGE);
		tag++;
		fill(p, len, tag);
		/* unmap a random middle part, check both sides, unmap them */
		a = rnd(&seed, 0, len / PG - 1) * PG;
		b = rnd(&seed, a / PG + 1, len / PG) * PG;
		if (munmap(p + a, b - a))
			ERR("mapper: munmap middle: %s\n", strerror(errno));
		bad = verify(p, a, tag, 0) + verify(p + b, len - b, tag, b);
		if (bad)
			ERR("mapper: %lu bad pages beside the hole\n", bad);
		/* The hole may already hold another thread's mapping:
		 * unmap the two sides separately, never across the hole. */
		if ((a && munmap(p, a)) || (b < len && munmap(p + b, len - b)))
			ERR("mapper: munmap sides: %s\n", strerror(errno));
		atomic_fetch_add(&ops, 1);
	}
	return NULL;
}

/* MAP_FIXED over its own reservation: maps, holes, unmaps across holes */
static void *fixer(void *arg)
{
	unsigned int seed = 77;
	unsigned long rlen = 4 * maxlen, tag = 0x7f00000000UL, lost = 0;
	char *r = mmap(NULL, rlen, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r == MAP_FAILED) {
		ERR("fixer: reserve: %s\n", strerror(errno));
		return NULL;
	}
	while (!atomic_load(&stop)) {
		unsigned long off = rnd(&seed, 0, rlen / PG - 2) * PG;
		unsigned long len = rnd(&seed, 1, (rlen - off) / PG) * PG;
		char *p;

		if (len > maxlen)
			len = maxlen;
		p = mmap(r + off, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p != r + off) {
			ERR("fixer: MAP_FIXED: %s\n", strerror(errno));
			continue;
		}
		tag++;
		fill(p, len, tag);
		if (verify(p, len, tag, 0))
			ERR("fixer: data\n");
		/* unmap a random range of the reservation (holes inside) */
		off = rnd(&seed, 0, rlen / PG - 1) * PG;
		len = rnd(&seed, 1, (rlen - off) / PG) * PG;
		if (munmap(r + off, len))
			ERR("fixer: munmap: %s\n", strerror(errno));
		/*
		 * Re-reserve the hole without replacing anything: if another
		 * thread's mmap() landed in it meanwhile, leave this
		 * reservation alone (MAP_FIXED into it could hit that mapping)
		 * and start a new one.
		 */
		p = mmap(r + off, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			 MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != r + off) {
			if (p != MAP_FAILED)
				munmap(p, len);
			else if (errno != EEXIST)
				ERR("fixer: re-reserve: %s\n", strerror(errno));
			r = mmap(NULL, rlen, PROT_NONE, MAP_PRIVATE |
				 MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (r == MAP_FAILED) {
				ERR("fixer: reserve: %s\n", strerror(errno));
				return NULL;
			}
			lost++;
		}
		atomic_fetch_add(&ops, 1);
	}
	munmap(r, rlen);
	if (lost)
		fprintf(stderr, "# fixer: %lu reservations abandoned\n", lost);
	return NULL;
}

static void *remapper(void *arg)
{
	unsigned int seed = 99;
	unsigned long tag = 0x5500000000UL;

	while (!atomic_load(&stop)) {
		unsigned long len = rnd(&seed, 2, maxlen / PG) * PG;
		unsigned long small = rnd(&seed, 1, len / PG - 1) * PG;
		char *p, *q;

		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			ERR("remapper: mmap: %s\n", strerror(errno));
			continue;
		}
		madvise(p, len, MADV_NOHUGEPAGE);
		tag++;
		fill(p, len, tag);
		q = mremap(p, len, small, 0);		/* shrink: unmaps */
		if (q != p) {
			ERR("remapper: shrink: %s\n", strerror(errno));
			munmap(p, len);
			continue;
		}
		if (verify(p, small, tag, 0))
			ERR("remapper: data after shrink\n");
		q = mremap(p, small, len, MREMAP_MAYMOVE);	/* grow */
		if (q == MAP_FAILED) {
			ERR("remapper: grow: %s\n", strerror(errno));
			munmap(p, small);
			continue;
		}
		if (verify(q, small, tag, 0))
			ERR("remapper: data after grow\n");
		if (*(volatile unsigned long *)(q + len - PG) != 0)
			ERR("remapper: grown tail not zero\n");
		munmap(q, len);
		atomic_fetch_add(&ops, 1);
	}
	return NULL;
}

static void *faulter(void *arg)
{
	unsigned long len = 8 * MIB, pass = 0;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);
	while (!atomic_load(&stop)) {
		pass++;
		fill(p, len, pass);
		if (verify(p, len, pass, 0))
			ERR("faulter: data\n");
		madvise(p, len, MADV_DONTNEED);
		atomic_fetch_add(&ops, 1);
	}
	munmap(p, len);
	return NULL;
}

static void *reader(void *arg)
{
	char buf[65536];

	while (!atomic_load(&stop)) {
		int fd = open(arg, O_RDONLY);

		if (fd < 0)
			continue;
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
		atomic_fetch_add(&ops, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int secs = 5, opt, i, n = 0, bad;
	pthread_t t[8];

	while ((opt = getopt(argc, argv, "t:m:")) != -1) {
		if (opt == 't')
			secs = atoi(optarg);
		else if (opt == 'm')
			maxlen = strtoul(optarg, NULL, 0) * MIB;
		else
			return 2;
	}
	pthread_create(&t[n++], NULL, mapper, (void *)1UL);
	pthread_create(&t[n++], NULL, mapper, (void *)2UL);
	pthread_create(&t[n++], NULL, fixer, NULL);
	pthread_create(&t[n++], NULL, remapper, NULL);
	pthread_create(&t[n++], NULL, faulter, NULL);
	pthread_create(&t[n++], NULL, reader, "/proc/self/cmdline");
	pthread_create(&t[n++], NULL, reader, "/proc/self/maps");
	sleep(secs);
	atomic_store(&stop, 1);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	/* ok: no thread saw an error, and they got work done */
	bad = errors || !ops;
	printf("1..1\n%s 1 - mmap_churn: %d threads for %d s, %ld operations, %ld errors\n",
	       bad ? "not ok" : "ok", n, secs, (long)ops, (long)errors);
	return bad;
}
