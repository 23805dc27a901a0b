/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmlockstat: the contract between mmlockstat.bpf.c and mmlockstat.c.
 * Histograms live in the `hists` array map (one struct hist per enum
 * hist_id, cumulative since load; --full's read holds mostly in the global
 * `rcpus` array, struct rcpu below); the longest holds and waits come up
 * the ring buffer as struct event, only when longer than the threshold
 * user space keeps in the `thresh` map (so only top-N candidates cross).
 */
#ifndef __MMLOCKSTAT_H
#define __MMLOCKSTAT_H

#define TASK_COMM_LEN	16
#define MAX_SLOTS	40	/* log2 ns buckets: last one is >= 2^39 ns (~9 min) */
#define MAX_TASKS	10240	/* tasks holding, acquiring or waiting at one time */
#define MAX_LOCKS	4096	/* mmap_locks known / owned at one time */
#define MAX_STACKS	1024	/* distinct kernel stacks (-s) */
#define STACK_DEPTH	24

struct kstack {			/* a `stacks` value: innermost first, 0-ended */
	unsigned long long ips[STACK_DEPTH];
};

/* Histogram names are the JSON contract (DESIGN.md section 5): keep order in
 * step with hist_names[] in mmlockstat_output.c. */
enum hist_id {
	H_WRITE_HOLD = 0,	/* every write-mode span: up_write or downgrade */
	H_READ_HOLD,		/* read-mode spans (default mode: downgraded only) */
	H_DG_WRITE,		/* write phase of holds that downgraded */
	H_DG_READ,		/* read phase of holds that downgraded */
	H_READ_WAIT,		/* lock:contention_begin..end, LCB_F_READ */
	H_WRITE_WAIT,		/* lock:contention_begin..end, LCB_F_WRITE */
	H_WRITE_ACQUIRE,	/* down_write*() entry..return: all, incl. spin */
	H_READ_ACQUIRE,		/* --full: start_locking..acquire_returned */
	H_VMA_WRITE_WAIT,	/* per-VMA locks: vma_start_write() blocked by a
				 * page fault holding the VMA lock (slow path) */
	H_VMA_FALLBACK_WAIT,	/* per-VMA locks: mmap_lock waits of user page
				 * faults that fell back from the VMA lock */
	NR_HISTS,
};

/* Cumulative since load: user space takes interval deltas. The maximum is
 * kept apart, in the `maxes` array, so that user space can reset it per
 * interval without racing the counters. */
struct hist {
	unsigned long long slots[MAX_SLOTS];
	unsigned long long count;
	unsigned long long sum;
};

/* --full: the read side's per-CPU state, a global array indexed by CPU
 * (global data needs no map lookup: one helper call finds it). CPUs from
 * MAX_RCPUS on use task storage and the `hists` map instead. */
#define MAX_RCPUS	256

struct rslot {			/* one read hold started on this CPU */
	unsigned long long lock;	/* 0: free */
	unsigned long long ts;
	unsigned long long task;	/* struct task_struct * of the reader */
	int stackid;
	unsigned int own;		/* the lock was the reader's own mm's */
};

struct rcpu {
	struct rslot slot;
	struct hist hold;		/* this CPU's share of H_READ_HOLD */
	unsigned long long max;		/* reset by user space per interval */
	unsigned long long vma_faults;	/* user faults that took a VMA lock */
	unsigned long long vma_fallbacks; /* user faults that went on to mmap_lock */
} __attribute__((aligned(64)));	/* a CPU's own cache lines */

/* Per-VMA locks: one per task, indexed by tid (mmlockstat.bpf.c) */
#define VSLOTS	4096

struct vslot {
	unsigned int tid;
	unsigned int fallback;		/* in lock_mm_and_find_vma, user fault */
	unsigned long long lock;	/* &vma->vm_lock->lock of its last fault */
	unsigned long long ts;		/* when that fault took it */
};

enum counter_id {
	C_DROP_RINGBUF = 0,	/* event lost: ring buffer full */
	C_DROP_MAP,		/* hold or wait not tracked: map full (E2BIG, ENOMEM) */
	C_UNENDED,		/* downgraded read phase whose end was not seen */
	C_LEFT_MM,		/* --full: read hold released after exec/exit left its mm */
	C_LEFT_MM_UNTIMED,	/* --full: such a hold whose release was not seen */
	C_TP_MEMCG_ID,		/* --full: tracepoints carry memcg_id (cheap) */
	C_TP_MEMCG_PATH,	/* --full: tracepoints carry memcg_path (6.1) */
	C_VMA_FAULTS,		/* struct rcpu's vma_faults, CPUs >= MAX_RCPUS */
	C_VMA_FALLBACKS,	/* struct rcpu's vma_fallbacks, CPUs >= MAX_RCPUS */
	C_DG_UNTRACKED,		/* default mode: a downgrade no end probe follows */
	C_DROP_BUSY,		/* hold or wait not tracked: map update refused (busy) */
	C_NO_START,		/* a hold or wait of the own mmap_lock ended unseen begun */
	C_STACK_LOST,		/* -s: a stack not kept (map full, hash taken) */
	NR_COUNTERS,
};

enum phase {
	PHASE_NONE = 0,
	PHASE_WRITE = 1,	/* held for write */
	PHASE_DG_READ = 2,	/* downgraded: read phase of a write hold */
	PHASE_READ = 3,		/* plain read hold (--full only) */
	PHASE_VMA_READ = 4,	/* a page fault holding a VMA lock for read */
};

/* Syscall number of a holder; negative: not in a syscall. */
#define SYS_FAULT	-1	/* user task, not in a syscall: page fault */
#define SYS_KTHREAD	-2

struct holder {
	unsigned long long start_ns;	/* hold start (acquisition) */
	unsigned long long phase_ns;	/* current phase start */
	unsigned int pid;		/* tgid */
	unsigned int tid;
	int sysnr;
	int stackid;
	unsigned int phase;		/* enum phase */
	unsigned int selected;		/* passes -p/-c filters */
	char comm[TASK_COMM_LEN];
};

/* The first writer still queued on a lock. rwsem readers do not pass a
 * waiting writer: a reader that blocks while it is queued waits for it
 * (and for what it waits for), even when only readers hold the lock. */
struct qwriter {
	unsigned long long since_ns;	/* its wait began; in an event: how
					 * long it had waited when the
					 * reader began to */
	unsigned int pid;		/* tgid */
	unsigned int tid;
	int sysnr;
	unsigned int pad;
	char comm[TASK_COMM_LEN];
};

enum event_kind {
	EV_HOLD = 1,	/* a hold ended */
	EV_WAIT = 2,	/* a wait ended */
};

enum wait_kind {
	WAIT_READ = 1,		/* mmap_lock, for read */
	WAIT_WRITE = 2,		/* mmap_lock, for write */
	WAIT_VMA_WRITE = 3,	/* a VMA lock, for write (vma_start_write) */
};

enum hold_kind {
	HOLD_WRITE = 1,		/* write hold ended by up_write */
	HOLD_DOWNGRADE = 2,	/* write phase + read phase */
	HOLD_READ = 3,		/* --full: plain read hold */
};

struct event {
	unsigned int kind;		/* enum event_kind */
	unsigned int sub;		/* hold: enum hold_kind; wait: enum wait_kind */
	unsigned int pid;
	unsigned int tid;
	int sysnr;
	int stackid;
	unsigned long long lock;
	unsigned long long start_ns;	/* hold: acquired; wait: began
					 * (bpf_ktime_get_ns: CLOCK_MONOTONIC) */
	unsigned long long total_ns;	/* hold: whole hold; wait: the wait */
	unsigned long long write_ns;	/* hold: write phase */
	unsigned long long read_ns;	/* hold: read phase */
	char comm[TASK_COMM_LEN];
	/* waits: who held the lock when the wait began (has_holder) */
	unsigned int has_holder;
	unsigned int vma_fallback;	/* a user page fault that fell back
					 * from the VMA lock to mmap_lock */
	struct holder holder;
	/* read waits: the writer queued ahead of it (has_queued) */
	unsigned int has_queued;
	unsigned int pad2;
	struct qwriter queued;
};

/* tests/tools/mmlockstat_drops.icount.sh counts the events its ring
 * buffer takes by this size (plus an 8-byte record header each) */
_Static_assert(sizeof(struct event) == 192, "struct event: update RING_CAP in mmlockstat_drops");

#endif /* __MMLOCKSTAT_H */
