// SPDX-License-Identifier: GPL-2.0
/*
 * cmdline_reader: the ps-like reader of munmap_test -c, for any command.
 *
 * Usage: cmdline_reader [-r REP] CGROUP_DIR
 *
 * Until SIGINT or SIGTERM: list the processes of the cgroup v2 directory
 * CGROUP_DIR (its cgroup.procs) and open/read/close /proc/PID/cmdline of
 * each, as ps does. Each read takes the mmap_lock of that process for read
 * (access_remote_vm()), so it waits while the process's munmap holds it for
 * write: the task in the seeds' hung-task splat. Every read is timed from
 * userspace (CLOCK_MONOTONIC). At the end one JSON line on stdout, in
 * munmap_test's reader format (log2 buckets of ns, each with its upper
 * edge "le", only the non-empty ones; p50/p99 are bucket edges):
 *   {"tool":"cmdline_reader","rep":R,"readers":{"cmdline":{"unit":"ns",
 *    "count":N,"sum":..,"max":..,"p50":..,"p99":..,
 *    "buckets":[{"le":1023,"count":5},...]}}}
 * Run it outside the cgroup: scripts/experiment does, for `make report
 * CMD=`.
 * Exit status: 0, 2 on bad usage or a CGROUP_DIR without cgroup.procs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS	64
#define MAX_PIDS	4096

static volatile sig_atomic_t stop;
static uint64_t hist[SLOTS], reads, max_ns, sum_ns;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int slot_of(uint64_t v)
{
	int s = 0;

	while (v > 1 && s < SLOTS - 1) {
		v >>= 1;
		s++;
	}
	return s;
}

/* The upper edge of the bucket holding the p-th quantile (at most the
 * largest read). */
static uint64_t pct(double p)
{
	uint64_t want = (uint64_t)(p * reads + 0.999999), acc = 0;

	if (!reads)
		return 0;
	for (int s = 0; s < SLOTS; s++) {
		acc += hist[s];
		if (acc >= want) {
			uint64_t edge = s ? (2ULL << s) - 1 : 1;

			return edge < max_ns ? edge : max_ns;
		}
	}
	return max_ns;
}

static int list_pids(const char *procs, int *pids)
{
	FILE *f = fopen(procs, "r");
	int n = 0;

	if (!f)
		return -1;
	while (n < MAX_PIDS && fscanf(f, "%d", &pids[n]) == 1)
		n++;
	fclose(f);
	return n;
}

static void read_one(int pid)
{
	char path[64], buf[4096];
	uint64_t t0, d;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	t0 = now_ns();
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;	/* exited between the list and the open */
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	d = now_ns() - t0;
	hist[slot_of(d)]++;
	reads++;
	sum_ns += d;
	if (d > max_ns)
		max_ns = d;
}

int main(int argc, char **argv)
{
	static int pids[MAX_PIDS];
	char procs[4096];
	int opt, rep = 0, n, first = 1;
	struct sigaction sa = { .sa_handler = on_signal };

	while ((opt = getopt(argc, argv, "r:h")) != -1) {
		switch (opt) {
		case 'r':
			rep = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: cmdline_reader [-r REP] CGROUP_DIR\n"
				"  reads /proc/PID/cmdline of every process of the cgroup\n"
				"  until SIGINT/SIGTERM, then prints one JSON line\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "cmdline_reader: want one CGROUP_DIR (try -h)\n");
		return 2;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", argv[optind]);
	if (access(procs, R_OK)) {
		fprintf(stderr, "cmdline_reader: cannot read %s: %s: give a cgroup v2 directory\n",
			procs, strerror(errno));
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		n = list_pids(procs, pids);
		if (n <= 0) {
			usleep(1000);	/* nothing to read yet, or between reps */
			continue;
		}
		for (int i = 0; i < n && !stop; i++)
			read_one(pids[i]);
	}
	printf("{\"tool\":\"cmdline_reader\",\"rep\":%d,\"readers\":{\"cmdline\":{"
	       "\"unit\":\"ns\",\"count\":%llu,\"sum\":%llu,\"max\":%llu,"
	       "\"p50\":%llu,\"p99\":%llu,\"buckets\":[",
	       rep, (unsigned long long)reads, (unsigned long long)sum_ns,
	       (unsigned long long)max_ns, (unsigned long long)pct(0.50),
	       (unsigned long long)pct(0.99));
	for (int s = 0; s < SLOTS; s++) {
		if (!hist[s])
			continue;
		printf("%s{\"le\":%llu,\"count\":%llu}", first ? "" : ",",
		       s ? (2ULL << s) - 1 : 1ULL, (unsigned long long)hist[s]);
		first = 0;
	}
	printf("]}}}\n");
	return 0;
}
