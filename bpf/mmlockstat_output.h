/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmlockstat_output: the interface between mmlockstat.c, which loads,
 * attaches and sums, and mmlockstat_output.c, which prints (text, JSON
 * lines, the Prometheus /metrics body). User space only: mmlockstat.h is
 * the contract with the BPF side.
 */
#ifndef __MMLOCKSTAT_OUTPUT_H
#define __MMLOCKSTAT_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "mmlockstat.h"

#define MAX_TOP		64	/* -n N: at most this many holds and waits */

struct bpf_map;
struct ksyms;

/* Histograms and counters summed over the CPUs: cumulative since load, or
 * the delta of one interval. */
struct snap {
	struct hist h[NR_HISTS];
	unsigned long long max[NR_HISTS];
	unsigned long long c[NR_COUNTERS];
	unsigned long long open_reads;	/* --full: read holds not ended yet */
	unsigned long long kp_missed;	/* our kprobes' misses (6.7+) */
	bool kp_missed_known;		/* ... which this kernel reports */
	unsigned long long recursion_misses;	/* programs not run */
};

/* The longest holds, or waits, of an interval: longest first. */
struct top {
	struct event ev[MAX_TOP];
	int n;
};

/* --prometheus: the histograms of the samples taken while
 * vm.munmap_lock_mode was @name, cumulative. */
struct mode_snap {
	const char *name;
	bool seen;
	struct snap s;
};

/* What the printers need to know of the run: set by mmlockstat.c once the
 * programs are attached. */
struct out_ctx {
	pid_t pid;			/* -p, or 0 */
	const char *comm;		/* -c, or NULL */
	const char *cgroup;		/* --cgroup, or NULL */
	bool full;			/* --full */
	bool stacks;			/* -s */
	bool vma_avail;			/* per-VMA locks traced: vma_* */
	const char *kernel;		/* uname -r */
	const char *probes;		/* "fentry" or "kprobe" */
	const char *read_probes;	/* --full: tp_btf, fentry, tracepoint */
	const char *tp_memcg;		/* --full: "id", "path" or NULL (BTF) */
	unsigned long long start_ns;	/* CLOCK_MONOTONIC when attached */
	const struct bpf_map *stack_map; /* -s: stack id -> addresses */
	const struct ksyms *ksyms;	/* -s: NULL prints addresses */
};

/* One interval @d of @secs: the report on stdout, text or one JSON line. */
void print_text(const struct out_ctx *o, const struct snap *d, double secs,
		const struct top *holds, const struct top *waits);
void print_json(const struct out_ctx *o, const struct snap *d, double secs,
		const struct top *holds, const struct top *waits);
/* The /metrics text: @modes' histograms, @total's counters. */
void prom_body(FILE *f, const struct out_ctx *o, const struct mode_snap *modes,
	       int nr_modes, const struct snap *total);

#endif /* __MMLOCKSTAT_OUTPUT_H */
