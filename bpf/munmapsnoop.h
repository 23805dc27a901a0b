/* SPDX-License-Identifier: GPL-2.0 */
/*
 * munmapsnoop: the contract between munmapsnoop.bpf.c and munmapsnoop.c.
 * One struct event per traced munmap / brk-shrink / mremap-shrink call.
 */
#ifndef __MUNMAPSNOOP_H
#define __MUNMAPSNOOP_H

#define TASK_COMM_LEN	16
#define MAX_CALLS	4096	/* tasks inside a traced call at one time */
#define MAX_WAITS	4096	/* waiters blocked behind traced calls */

enum op {
	OP_MUNMAP = 0,
	OP_BRK = 1,
	OP_MREMAP = 2,
};

/* The ring buffer could not take an event, or a map was full. */
enum drop_reason {
	DROP_RINGBUF = 0,	/* event lost: ring buffer full */
	DROP_CALLS = 1,		/* call not traced: calls map full */
	DROP_WAITS = 2,		/* waiter not counted: waits map full */
	DROP_NR,
};

struct event {
	unsigned long long ts_ns;	/* call entry, bpf_ktime_get_ns() */
	unsigned long long start;	/* first address unmapped */
	unsigned long long len;		/* bytes asked to unmap */
	unsigned long long total_ns;	/* call entry to call return */
	unsigned long long acquire_ns;	/* first write acquisition: wait */
	unsigned long long write_hold_ns;	/* sum of write phases */
	unsigned long long read_hold_ns;	/* sum of read phases */
	unsigned long long unlocked_ns;	/* between a drop and the retake */
	unsigned long long unmap_region_ns;	/* sum over unmap_region calls */
	unsigned long long wait_ns;	/* summed wait of blocked waiters */
	unsigned long long max_wait_ns;	/* longest single waiter */
	long long ret;			/* syscall-level return value */
	unsigned int pid;		/* tgid */
	unsigned int tid;
	unsigned int op;		/* enum op */
	unsigned int write_acqs;	/* write acquisitions seen */
	unsigned int downgrades;	/* downgrade_write() calls */
	unsigned int read_releases;	/* up_read() calls */
	unsigned int write_releases;	/* up_write() calls */
	unsigned int sections;		/* unmap_region (or fallback) calls */
	unsigned int waiters;		/* contention_begin during the call */
	unsigned int read_waiters;
	unsigned int write_waiters;
	unsigned int kmode;		/* vm.munmap_lock_mode + 1, 0: unknown */
	char comm[TASK_COMM_LEN];
};

#endif /* __MUNMAPSNOOP_H */
