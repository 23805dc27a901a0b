// SPDX-License-Identifier: GPL-2.0
/*
 * mmlockstat: mmap_lock hold and wait histograms, with the write phase and
 * the read phase of a downgraded hold (munmap since dd2283f2605e) apart.
 *
 * Default probes (nothing on the uncontended read path):
 *   fentry/fexit down_write{,_killable,_trylock}, fentry up_write and
 *   downgrade_write, filtered to &current->mm->mmap_lock: write holds,
 *   downgrade phases, write acquisition time, the lock's current owner;
 *   kretprobes on the functions that downgrade (do_mas_munmap, brk, mremap):
 *   end of the downgraded read phase (the up_read itself is not probed);
 *   a downgrade in any other syscall or in a fault (a module, exec, stack
 *   expansion) has no such end: its hold ends at the downgrade, its write
 *   phase measured, its read phase untimed and counted (C_DG_UNTRACKED);
 *   tp_btf lock:contention_begin/end: read and write waits (slow path);
 *   fentry exit_mmap: forgets a dead mm's lock.
 * State lives in plain hash maps, not LRU ones: a full map refuses a new
 * entry and the loss is counted (C_DROP_MAP), where an LRU map would
 * evict a tracked hold and say nothing.
 * --full adds every read hold and drops the kretprobes: tp_btf on the
 *   mmap_lock tracepoints when they carry memcg_id (0002), else fexit
 *   down_read_trylock (ret == 1), fexit down_read, down_read_killable,
 *   down_read_interruptible and fentry up_read (also the exact end of a
 *   downgraded read phase), each returning after one compare unless
 *   sem == &current->mm->mmap_lock; fentry+fexit of the blocking down_read*()
 *   time read_acquire in both. A hold's start and its read_hold histogram
 *   live in a global per-CPU array (struct rcpu: no map lookup; task
 *   storage when the slot is busy), and only top-N candidates cross the
 *   ring buffer.
 * kp_* programs are the kprobe fallback for kernels without fentry; there
 * --full uses the mmap_lock:* tracepoints instead (tp_* programs).
 * Per-VMA locks (6.4+, CONFIG_PER_VMA_LOCK; loaded only where they exist):
 *   fexit lock_vma_under_rcu (every user page fault) notes which VMA lock
 *   the task took, in a global array indexed by tid (one store, no map);
 *   a writer blocked on a lock whose reader-owner's note names that lock
 *   waits in vma_start_write() for that fault (vma_write_wait);
 *   fentry/fexit lock_mm_and_find_vma with user-mode regs: a fault that
 *   fell back from the VMA lock to mmap_lock; its mmap_lock waits also go
 *   to vma_fallback_wait.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "mmlockstat.h"
#include "bits.bpf.h"
#include "mmlock.bpf.h"

const volatile pid_t targ_tgid = 0;
const volatile bool filter_comm = false;
const volatile char targ_comm[TASK_COMM_LEN] = {};
const volatile bool want_stacks = false;
/* --full with fentry: read holds via the rwsem read functions */
const volatile bool full_fentry = false;
/* --full with tp_btf on the mmap_lock tracepoints (memcg_id layout only:
 * there a raw tracepoint formats nothing) */
const volatile bool full_tp = false;
const volatile __u32 nr_cpus = 1;
/* the kernel has per-VMA locks with struct vma_lock (6.4 to 6.14) */
const volatile bool vma_locks = false;
/* Default mode: a downgraded read phase ends at the return of the
 * functions of these syscalls (munmap, brk, mremap: set by user space);
 * dg_any: -E named more, any downgrade may end at one of them. */
const volatile bool dg_by_return = false;
const volatile bool dg_any = false;
const volatile int dg_sysnr[3] = { -1, -1, -1 };

/* Per-CPU: the read side adds to them on every page fault with --full;
 * user space sums the CPUs (and takes the largest max). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_HISTS);
	__type(key, u32);
	__type(value, struct hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NR_COUNTERS);
	__type(key, u32);
	__type(value, u64);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_HISTS);
	__type(key, u32);
	__type(value, u64);
} maxes SEC(".maps");

/* [0] holds, [1] waits: user space's current top-N cut-off in ns */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
} thresh SEC(".maps");

/* tid -> the write hold it is in (write or downgraded-read phase) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TASKS);
	__type(key, u32);
	__type(value, struct holder);
} holds SEC(".maps");

/* lock address -> its write (or downgraded) holder: blame for waiters */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, struct holder);
} owners SEC(".maps");

/* mmap_lock addresses seen by the write side: lets a remote waiter (a `ps`
 * reading /proc/PID/cmdline) be recognised */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, u8);
} mmlocks SEC(".maps");

struct wacq {
	u64 ts;
	u64 lock;
};

/* tid -> down_write*() entry */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TASKS);
	__type(key, u32);
	__type(value, struct wacq);
} wacqs SEC(".maps");

struct wait {
	u64 ts;
	u64 lock;
	u32 flags;	/* lock:contention_begin's, and W_VMA */
	s32 stackid;
	u32 has_holder;
	u32 has_queued;
	struct holder holder;
	struct qwriter queued;
};

/* lock address -> the first writer still waiting for it: the link between
 * a blocked reader and the (reader) holder it cannot share the lock with */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LOCKS);
	__type(key, u64);
	__type(value, struct qwriter);
} qwriters SEC(".maps");

#define W_VMA	(1U << 31)	/* a VMA lock, not mmap_lock */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TASKS);
	__type(key, u32);
	__type(value, struct wait);
} waits SEC(".maps");

struct rkey {
	u32 tid;
	u32 pad;
	u64 lock;
};

struct rhold {
	u64 acq_ts;	/* start_locking */
	u64 ts;		/* acquire_returned: 0 while acquiring */
	s32 sysnr;
	s32 stackid;
};

/* --full: (tid, lock) -> read acquisition / hold */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TASKS);
	__type(key, struct rkey);
	__type(value, struct rhold);
} rholds SEC(".maps");

/* --full: per task, what the per-CPU slot below cannot hold: a read hold
 * started while its CPU's slot was busy, a blocking acquisition's start,
 * and "in the read phase of a downgraded hold" (set by the write side). */
struct rtask {
	u64 ts;		/* read hold start (acquisition returned); 0: none */
	u64 lock;	/* the lock of that read hold */
	u64 acq_ts;	/* down_read*() entry of a blocking acquisition */
	u32 dg;		/* in the read phase of a downgraded hold */
	s32 stackid;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rtask);
} rtasks SEC(".maps");

/* --full: per CPU, one read hold started there and not yet ended, and
 * that CPU's read_hold histogram (struct rcpu, mmlockstat.h). A page
 * fault's hold starts and ends on one CPU without sleeping, so almost
 * every hold lives in its CPU's slot: at each end one helper call finds
 * it, no map lookup, no task storage. A hold that starts while the slot
 * is busy (its owner sleeps or was preempted holding the lock) goes to
 * task storage; one whose task migrated is found by scanning the CPUs'
 * slots at its end. The slots are also the readers blamed for a writer
 * queued behind them (contention_begin scans them). */
struct rcpu rcpus[MAX_RCPUS];
_Static_assert(!(MAX_RCPUS & (MAX_RCPUS - 1)), "MAX_RCPUS: a power of 2");

static __always_inline struct rcpu *rcpu_here(void)
{
	u32 cpu = bpf_get_smp_processor_id();

	if (cpu >= MAX_RCPUS)
		return NULL;
	barrier_var(cpu);	/* keep the mask: the verifier needs it */
	return &rcpus[cpu & (MAX_RCPUS - 1)];
}

/* Per-VMA locks: per task (indexed by tid; a collision overwrites, so a
 * wait can go unclassified, never misclassified: the tid is checked), the
 * VMA lock its last user page fault took, and whether its current fault
 * fell back to mmap_lock. */
struct vslot vslots[VSLOTS];
_Static_assert(!(VSLOTS & (VSLOTS - 1)), "VSLOTS: a power of 2");

static __always_inline struct vslot *vslot_of(u32 tid)
{
	barrier_var(tid);
	return &vslots[tid & (VSLOTS - 1)];
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* -s: kernel stacks, keyed by a hash of their frames (stack_id()) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_STACKS);
	__type(key, u32);
	__type(value, struct kstack);
} stacks SEC(".maps");

static __always_inline void count(u32 id)
{
	u64 *c = bpf_map_lookup_elem(&counters, &id);

	if (c)
		__sync_fetch_and_add(c, 1);
}

/* Insert or update: a map that is full (or whose bucket is busy on this
 * CPU: another program of ours interrupted) refuses a new key, and that
 * hold or wait is not tracked. Count it; -EEXIST (BPF_NOEXIST) is not a
 * loss. The maps are plain hashes, not LRU: an LRU map would evict a
 * tracked entry instead, silently. */
static __always_inline int map_put(void *map, const void *key,
				   const void *val, u64 flags)
{
	/* an int: the helper's error can come back zero-extended */
	int err = (int)bpf_map_update_elem(map, key, val, flags);

	if (err == -E2BIG || err == -ENOMEM)
		count(C_DROP_MAP);
	else if (err && err != -EEXIST)
		count(C_DROP_BUSY);
	return err;
}

static __always_inline void hist_put(struct hist *h, u64 *max, u64 ns)
{
	u64 slot = log2l(ns);

	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, ns);
	if (ns > *max)	/* racy by design: a lost max costs one sample */
		*max = ns;
}

static __always_inline void hist_add(u32 id, u64 ns)
{
	struct hist *h = bpf_map_lookup_elem(&hists, &id);
	u64 *max = bpf_map_lookup_elem(&maxes, &id);

	if (h && max)
		hist_put(h, max, ns);
}

static __always_inline bool over_thresh(u32 which, u64 ns)
{
	u64 *t = bpf_map_lookup_elem(&thresh, &which);

	return !t || ns > *t;
}

static __always_inline bool task_selected(void)
{
	if (targ_tgid && (bpf_get_current_pid_tgid() >> 32) != targ_tgid)
		return false;
	if (!cgroup_selected())
		return false;
	if (filter_comm) {
		char comm[TASK_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		for (int i = 0; i < TASK_COMM_LEN; i++) {
			if (comm[i] != targ_comm[i])
				return false;
			if (!comm[i])
				break;
		}
	}
	return true;
}

/* The id of the current kernel stack in `stacks`, or -1 (counted).
 * Not bpf_get_stackid(): a stack trace map keeps one stack per hash
 * bucket and refuses another whose hash falls in a taken bucket: with 16
 * stacks in its 1024 buckets, a new one was lost with a chance of up to
 * 1.6 %, uncounted. Here the key is a 31-bit hash of the frames, a taken
 * key is compared frame by frame, and a stack not kept (map full, two
 * stacks with one hash) is counted. The frames sit on the BPF stack: a
 * per-CPU buffer could be overwritten by a program of ours that
 * preempted this one. */
static __always_inline s32 stack_id(void *ctx)
{
	u64 h = 0xcbf29ce484222325ULL;	/* FNV-1a, a frame at a time */
	struct kstack s, *old;
	long n, err;
	u32 id;

	if (!want_stacks)
		return -1;
	/* the helper zero-fills the frames past the stack's end */
	n = bpf_get_stack(ctx, s.ips, sizeof(s.ips), 0);
	if (n <= 0)
		goto lost;
	for (int i = 0; i < STACK_DEPTH; i++)
		h = (h ^ s.ips[i]) * 0x100000001b3ULL;
	id = (h ^ (h >> 32)) & 0x7fffffff;
	err = (int)bpf_map_update_elem(&stacks, &id, &s, BPF_NOEXIST);
	if (!err)
		return id;
	if (err != -EEXIST)
		goto lost;
	old = bpf_map_lookup_elem(&stacks, &id);
	if (!old)
		goto lost;
	for (int i = 0; i < STACK_DEPTH; i++)
		if (old->ips[i] != s.ips[i])
			goto lost;
	return id;
lost:
	count(C_STACK_LOST);
	return -1;
}

static __always_inline void fill_holder(struct holder *h, void *ctx, u64 now,
					u32 phase)
{
	u64 id = bpf_get_current_pid_tgid();

	h->start_ns = now;
	h->phase_ns = now;
	h->pid = id >> 32;
	h->tid = (u32)id;
	h->sysnr = current_sysnr();
	h->stackid = stack_id(ctx);
	h->phase = phase;
	h->selected = task_selected();
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

static __always_inline void emit_hold(struct holder *h, u32 sub, u64 lock,
				      u64 total, u64 wr, u64 rd)
{
	struct event *e;

	if (!over_thresh(0, total))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(C_DROP_RINGBUF);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = EV_HOLD;
	e->sub = sub;
	e->pid = h->pid;
	e->tid = h->tid;
	e->sysnr = h->sysnr;
	e->stackid = h->stackid;
	e->lock = lock;
	e->start_ns = h->start_ns;
	e->total_ns = total;
	e->write_ns = wr;
	e->read_ns = rd;
	__builtin_memcpy(e->comm, h->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* ---- write side ---------------------------------------------------- */

/* --full: the first CPU slot holding a read hold of @lock (by @task, or by
 * any task when @task is 0). Slow path: scans the CPUs. */
static __always_inline struct rslot *slot_scan(u64 lock, u64 task)
{
	for (u32 cpu = 0; cpu < MAX_RCPUS; cpu++) {
		struct rslot *r = &rcpus[cpu].slot;

		if (cpu >= nr_cpus)
			break;
		if (r->lock == lock && (!task || r->task == task))
			return r;
	}
	return NULL;
}

/* --full: take the read hold of (@task, @lock) out of any CPU's slot (a
 * task that migrated while holding the lock). */
static __always_inline bool slot_scan_take(u64 task, u64 lock, u64 *start,
					   s32 *stackid)
{
	struct rslot *r = slot_scan(lock, task);

	if (!r)
		return false;
	*start = r->ts;
	*stackid = r->stackid;
	r->lock = 0;
	return true;
}

/* --full: the current task downgraded its write hold of @lock. Its read
 * release ends the read phase: tell it through task storage (rare path).
 * With the tracepoints, mmap_write_downgrade() emitted acquire_returned
 * (read) just before downgrade_write(): drop the read hold it started. */
static __always_inline void read_downgraded(u64 lock)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rtask *t;
	u64 start;
	s32 sid;

	t = bpf_task_storage_get(&rtasks, task, 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count(C_DROP_MAP);
		return;
	}
	t->dg = 1;
	if (!full_tp)
		return;
	if (t->ts && t->lock == lock)
		t->ts = 0;
	else
		slot_scan_take((u64)task, lock, &start, &sid);
}

static __always_inline void write_enter(u64 lock)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct wacq a = { .ts = bpf_ktime_get_ns(), .lock = lock };

	if (lock != current_mmap_lock())
		return;
	map_put(&wacqs, &tid, &a, BPF_ANY);
}

static __always_inline void write_acquired(void *ctx, u64 lock, bool ok)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	u64 now = bpf_ktime_get_ns();
	struct holder h = {}, *prev;
	struct wacq *a;
	u8 one = 1;

	a = bpf_map_lookup_elem(&wacqs, &tid);
	if (!a || a->lock != lock)
		return;
	if (task_selected())
		hist_add(H_WRITE_ACQUIRE, now - a->ts);
	bpf_map_delete_elem(&wacqs, &tid);
	if (!ok)
		return;

	map_put(&mmlocks, &lock, &one, BPF_ANY);
	/* A write acquisition proves every earlier holder is gone: a
	 * downgraded read phase whose end we did not see is closed here. */
	prev = bpf_map_lookup_elem(&owners, &lock);
	if (prev && prev->tid != tid) {
		u32 ptid = prev->tid;
		struct holder *ph = bpf_map_lookup_elem(&holds, &ptid);

		if (ph && ph->phase == PHASE_DG_READ) {
			count(C_UNENDED);
			bpf_map_delete_elem(&holds, &ptid);
		}
	}
	fill_holder(&h, ctx, now, PHASE_WRITE);
	map_put(&holds, &tid, &h, BPF_ANY);
	map_put(&owners, &lock, &h, BPF_ANY);
}

static __always_inline void write_release(u64 lock)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct holder *h = bpf_map_lookup_elem(&holds, &tid);
	u64 now, d;

	if (!h) {
		/* its start was not seen: taken before we attached, or
		 * its entry was refused (counted there too) */
		if (lock == current_mmap_lock())
			count(C_NO_START);
		return;
	}
	if (h->phase != PHASE_WRITE || lock != current_mmap_lock())
		return;
	now = bpf_ktime_get_ns();
	d = now - h->start_ns;
	if (h->selected) {
		hist_add(H_WRITE_HOLD, d);
		emit_hold(h, HOLD_WRITE, lock, d, d, 0);
	}
	bpf_map_delete_elem(&holds, &tid);
	bpf_map_delete_elem(&owners, &lock);
}

/* The current task's hold of @lock is over: forget it, and the lock's
 * owner entry if that is still this task. */
static __always_inline void hold_forget(u32 tid, u64 lock)
{
	struct holder *o;

	bpf_map_delete_elem(&holds, &tid);
	o = bpf_map_lookup_elem(&owners, &lock);
	if (o && o->tid == tid)
		bpf_map_delete_elem(&owners, &lock);
}

/* Default mode: will an end probe see the read phase of a downgrade by
 * holder @h end? Only inside the syscalls whose functions carry them (its
 * syscall was read when it took the lock). */
static __always_inline bool dg_tracked(const struct holder *h)
{
	int nr = h->sysnr;

	if (!dg_by_return || dg_any)
		return true;
	return nr >= 0 && (nr == dg_sysnr[0] || nr == dg_sysnr[1] ||
			   nr == dg_sysnr[2]);
}

static __always_inline void write_downgrade(u64 lock)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct holder *h = bpf_map_lookup_elem(&holds, &tid), *o;
	u64 now, d;

	if (!h || h->phase != PHASE_WRITE || lock != current_mmap_lock())
		return;
	now = bpf_ktime_get_ns();
	d = now - h->start_ns;
	if (h->selected) {
		hist_add(H_WRITE_HOLD, d);
		hist_add(H_DG_WRITE, d);
	}
	if (!dg_tracked(h)) {
		/* No probe would end its read phase: an open phase would
		 * be blamed for later waits and ended by an unrelated
		 * return (a failed mremap() of the same task). End the hold
		 * here. */
		count(C_DG_UNTRACKED);
		hold_forget(tid, lock);
		return;
	}
	h->phase = PHASE_DG_READ;
	h->phase_ns = now;
	if (full_fentry || full_tp)
		read_downgraded(lock);
	o = bpf_map_lookup_elem(&owners, &lock);
	if (o && o->tid == tid) {
		o->phase = PHASE_DG_READ;
		o->phase_ns = now;
	}
}

/* End of the read phase of a downgraded hold held by the current task. */
static __always_inline void downgraded_read_end(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct holder *h = bpf_map_lookup_elem(&holds, &tid);
	u64 now, lock, rd, wr;

	if (!h || h->phase != PHASE_DG_READ)
		return;
	now = bpf_ktime_get_ns();
	lock = current_mmap_lock();
	rd = now - h->phase_ns;
	wr = h->phase_ns - h->start_ns;
	if (h->selected) {
		hist_add(H_READ_HOLD, rd);
		hist_add(H_DG_READ, rd);
		emit_hold(h, HOLD_DOWNGRADE, lock, now - h->start_ns, wr, rd);
	}
	hold_forget(tid, lock);
}

SEC("fentry/down_write")
int BPF_PROG(down_write_entry, struct rw_semaphore *sem)
{
	write_enter((u64)sem);
	return 0;
}

SEC("fexit/down_write")
int BPF_PROG(down_write_exit, struct rw_semaphore *sem)
{
	write_acquired(ctx, (u64)sem, true);
	return 0;
}

SEC("fentry/down_write_killable")
int BPF_PROG(down_write_killable_entry, struct rw_semaphore *sem)
{
	write_enter((u64)sem);
	return 0;
}

SEC("fexit/down_write_killable")
int BPF_PROG(down_write_killable_exit, struct rw_semaphore *sem, int ret)
{
	write_acquired(ctx, (u64)sem, ret == 0);
	return 0;
}

SEC("fentry/down_write_trylock")
int BPF_PROG(down_write_trylock_entry, struct rw_semaphore *sem)
{
	write_enter((u64)sem);
	return 0;
}

SEC("fexit/down_write_trylock")
int BPF_PROG(down_write_trylock_exit, struct rw_semaphore *sem, int ret)
{
	write_acquired(ctx, (u64)sem, ret == 1);
	return 0;
}

SEC("fentry/up_write")
int BPF_PROG(up_write_entry, struct rw_semaphore *sem)
{
	write_release((u64)sem);
	return 0;
}

SEC("fentry/downgrade_write")
int BPF_PROG(downgrade_write_entry, struct rw_semaphore *sem)
{
	write_downgrade((u64)sem);
	return 0;
}

/* Attached by user space to each function after which a downgraded read
 * phase is over (default mode): do_mas_munmap, brk, mremap, -E FUNC. */
SEC("kretprobe")
int BPF_KRETPROBE(read_end_kretprobe)
{
	downgraded_read_end();
	return 0;
}

/* kprobe fallback (no fentry): one entry program for down_write*, and one
 * return program per return-value convention. */
SEC("kprobe/down_write")
int BPF_KPROBE(kp_down_write_entry, struct rw_semaphore *sem)
{
	write_enter((u64)sem);
	return 0;
}

static __always_inline u64 wacq_lock(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct wacq *a = bpf_map_lookup_elem(&wacqs, &tid);

	return a ? a->lock : 0;
}

SEC("kretprobe/down_write")
int BPF_KRETPROBE(kp_down_write_exit)
{
	u64 lock = wacq_lock();

	if (lock)
		write_acquired(ctx, lock, true);
	return 0;
}

SEC("kretprobe/down_write_killable")
int BPF_KRETPROBE(kp_down_write_killable_exit, int ret)
{
	u64 lock = wacq_lock();

	if (lock)
		write_acquired(ctx, lock, ret == 0);
	return 0;
}

SEC("kretprobe/down_write_trylock")
int BPF_KRETPROBE(kp_down_write_trylock_exit, int ret)
{
	u64 lock = wacq_lock();

	if (lock)
		write_acquired(ctx, lock, ret == 1);
	return 0;
}

SEC("kprobe/up_write")
int BPF_KPROBE(kp_up_write_entry, struct rw_semaphore *sem)
{
	write_release((u64)sem);
	return 0;
}

SEC("kprobe/downgrade_write")
int BPF_KPROBE(kp_downgrade_write_entry, struct rw_semaphore *sem)
{
	write_downgrade((u64)sem);
	return 0;
}

/* An mm is torn down: forget its lock (the next mm may get its address).
 * The maps are plain hashes: nothing else would ever remove these. */
static __always_inline void mm_gone(struct mm_struct *mm)
{
	u64 l = mm_lock_addr(mm);

	bpf_map_delete_elem(&mmlocks, &l);
	bpf_map_delete_elem(&owners, &l);
	bpf_map_delete_elem(&qwriters, &l);
}

SEC("fentry/exit_mmap")
int BPF_PROG(exit_mmap_entry, struct mm_struct *mm)
{
	mm_gone(mm);
	return 0;
}

SEC("kprobe/exit_mmap")
int BPF_KPROBE(kp_exit_mmap_entry, struct mm_struct *mm)
{
	mm_gone(mm);
	return 0;
}

/* ---- waits --------------------------------------------------------- */

/* --full (fentry): a writer waits with no write owner: blame a reader of
 * the lock that started its hold on some CPU and has not ended it. */
static __always_inline void find_reader(struct wait *w, u64 l)
{
	struct rslot *r = slot_scan(l, 0);
	struct task_struct *t;

	if (!r)
		return;
	t = (struct task_struct *)r->task;
	w->has_holder = 1;
	w->holder.start_ns = r->ts;
	w->holder.phase_ns = r->ts;
	w->holder.pid = BPF_CORE_READ(t, tgid);
	w->holder.tid = BPF_CORE_READ(t, pid);
	w->holder.sysnr = SYS_FAULT;
	w->holder.stackid = r->stackid;
	w->holder.phase = PHASE_READ;
	w->holder.selected = 1;
	bpf_probe_read_kernel_str(w->holder.comm, sizeof(w->holder.comm),
				  &t->comm);
}

/* rwsem->owner: the task, and this bit while readers own it (rwsem.c) */
#define RWSEM_READER_OWNED	(1UL << 0)
#define RWSEM_OWNER_FLAGS	7UL

/* Per-VMA locks: is @l, taken for write, a VMA lock whose reader is a page
 * fault? The rwsem's owner field names the last reader to take it; if that
 * task's last fault took @l, @l is a VMA lock (a writer only ever waits
 * there in vma_start_write(), for faults) and that fault is the holder. */
static __always_inline bool vma_reader(struct wait *w, u64 l)
{
	unsigned long owner = BPF_CORE_READ((struct rw_semaphore *)l, owner.counter);
	struct task_struct *t;
	struct vslot *s;
	u32 tid;

	if (!(owner & RWSEM_READER_OWNED))
		return false;
	t = (struct task_struct *)(owner & ~RWSEM_OWNER_FLAGS);
	tid = BPF_CORE_READ(t, pid);
	s = vslot_of(tid);
	if (s->tid != tid || s->lock != l)
		return false;
	w->has_holder = 1;
	w->holder.start_ns = s->ts;
	w->holder.phase_ns = s->ts;
	w->holder.pid = BPF_CORE_READ(t, tgid);
	w->holder.tid = tid;
	w->holder.sysnr = SYS_FAULT;
	w->holder.stackid = -1;
	w->holder.phase = PHASE_VMA_READ;
	w->holder.selected = !targ_tgid || w->holder.pid == targ_tgid;
	bpf_probe_read_kernel_str(w->holder.comm, sizeof(w->holder.comm),
				  &t->comm);
	return true;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(contention_begin, void *lock, unsigned int flags)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	u64 l = (u64)lock;
	struct wait w = {}, *old;
	struct holder *o;

	if (!(flags & (LCB_F_READ | LCB_F_WRITE)))
		return 0;
	o = bpf_map_lookup_elem(&owners, &l);
	if (!o && !is_current_mmap_lock(lock) &&
	    !bpf_map_lookup_elem(&mmlocks, &l)) {
		if (!vma_locks || !(flags & LCB_F_WRITE) || !vma_reader(&w, l))
			return 0;
		flags |= W_VMA;
	}
	old = bpf_map_lookup_elem(&waits, &tid);
	if (old && old->lock == l)	/* begin can repeat within one wait */
		return 0;
	w.ts = bpf_ktime_get_ns();
	w.lock = l;
	w.flags = flags;
	w.stackid = stack_id(ctx);
	if (o) {
		w.has_holder = 1;
		w.holder = *o;
	} else if ((full_fentry || full_tp) && (flags & LCB_F_WRITE) &&
		   !(flags & W_VMA)) {
		find_reader(&w, l);
	}
	if ((flags & LCB_F_WRITE) && !(flags & W_VMA)) {
		struct qwriter q = { .since_ns = w.ts, .tid = tid,
				     .sysnr = current_sysnr() };

		q.pid = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(q.comm, sizeof(q.comm));
		/* the first one queued stays (FIFO: later readers queue
		 * behind it) */
		map_put(&qwriters, &l, &q, BPF_NOEXIST);
	} else if (flags & LCB_F_READ) {
		struct qwriter *q = bpf_map_lookup_elem(&qwriters, &l);

		if (q && q->tid != tid) {
			w.has_queued = 1;
			w.queued = *q;
			w.queued.since_ns = w.ts - q->since_ns;
		}
	}
	map_put(&waits, &tid, &w, BPF_ANY);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(contention_end, void *lock, int ret)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tid = (u32)id;
	struct wait *w = bpf_map_lookup_elem(&waits, &tid);
	bool fallback = false;
	struct vslot *vs;
	struct event *e;
	u64 d;

	if (!w) {
		if (is_current_mmap_lock(lock))
			count(C_NO_START);
		return 0;
	}
	if (w->lock != (u64)lock)
		return 0;
	if ((w->flags & LCB_F_WRITE) && !(w->flags & W_VMA)) {
		struct qwriter *q = bpf_map_lookup_elem(&qwriters, &w->lock);

		if (q && q->tid == tid)
			bpf_map_delete_elem(&qwriters, &w->lock);
	}
	d = bpf_ktime_get_ns() - w->ts;
	if (!task_selected() && !(w->has_holder && w->holder.selected))
		goto out;
	if (w->flags & W_VMA) {
		hist_add(H_VMA_WRITE_WAIT, d);
	} else {
		hist_add(w->flags & LCB_F_WRITE ? H_WRITE_WAIT : H_READ_WAIT, d);
		if (vma_locks) {
			vs = vslot_of(tid);
			fallback = vs->tid == tid && vs->fallback;
			if (fallback)
				hist_add(H_VMA_FALLBACK_WAIT, d);
		}
	}
	if (!over_thresh(1, d))
		goto out;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(C_DROP_RINGBUF);
		goto out;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = EV_WAIT;
	e->sub = w->flags & W_VMA ? WAIT_VMA_WRITE :
		 w->flags & LCB_F_WRITE ? WAIT_WRITE : WAIT_READ;
	e->vma_fallback = fallback;
	e->pid = id >> 32;
	e->tid = tid;
	e->sysnr = current_sysnr();
	e->stackid = w->stackid;
	e->lock = w->lock;
	e->start_ns = w->ts;
	e->total_ns = d;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->has_holder = w->has_holder;
	e->holder = w->holder;
	e->has_queued = w->has_queued;
	e->queued = w->queued;
	bpf_ringbuf_submit(e, 0);
out:
	bpf_map_delete_elem(&waits, &tid);
	return 0;
}

/* ---- per-VMA locks ---------------------------------------------------- */

/* 6.4 to 6.14: vma->vm_lock points to the rwsem (vmlinux.h is 6.1's) */
struct vma_lock___pv {
	struct rw_semaphore lock;
} __attribute__((preserve_access_index));

struct vm_area_struct___pv {
	struct vma_lock___pv *vm_lock;
} __attribute__((preserve_access_index));

static __always_inline void vma_count(bool fallback)
{
	struct rcpu *r;

	if (!task_selected())
		return;
	r = rcpu_here();
	if (!r)
		count(fallback ? C_VMA_FALLBACKS : C_VMA_FAULTS);
	else if (fallback)
		r->vma_fallbacks++;
	else
		r->vma_faults++;
}

/* Every user page fault tries the VMA lock first (x86, 6.4+). */
SEC("fexit/lock_vma_under_rcu")
int BPF_PROG(vma_lock_exit, struct mm_struct *mm, unsigned long address,
	     struct vm_area_struct *ret)
{
	struct vm_area_struct___pv *v = (void *)ret;
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct vslot *s;

	if (!ret)
		return 0;
	s = vslot_of(tid);
	s->tid = tid;
	s->lock = (u64)&BPF_CORE_READ(v, vm_lock)->lock;
	s->ts = bpf_ktime_get_ns();
	vma_count(false);
	return 0;
}

/* A user-mode fault gets here only after the VMA lock failed it (no VMA
 * lock, or the fault needed mmap_lock: VM_FAULT_RETRY); kernel-mode faults
 * come straight here. */
static __always_inline bool user_fault(struct pt_regs *regs)
{
	return regs && (BPF_CORE_READ(regs, cs) & 3);
}

SEC("fentry/lock_mm_and_find_vma")
int BPF_PROG(fallback_entry, struct mm_struct *mm, unsigned long address,
	     struct pt_regs *regs)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct vslot *s;

	if (!user_fault(regs))
		return 0;
	s = vslot_of(tid);
	if (s->tid != tid) {
		s->tid = tid;
		s->lock = 0;
	}
	s->fallback = 1;
	vma_count(true);
	return 0;
}

SEC("fexit/lock_mm_and_find_vma")
int BPF_PROG(fallback_exit, struct mm_struct *mm, unsigned long address,
	     struct pt_regs *regs)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct vslot *s = vslot_of(tid);

	if (s->tid == tid)
		s->fallback = 0;
	return 0;
}

/* ---- --full: the mmap_lock tracepoints ------------------------------ */

/* Upstream/backported flavour of the mmap_lock event class (CO-RE). */
struct trace_event_raw_mmap_lock___new {
	u64 memcg_id;
} __attribute__((preserve_access_index));

/* Field names, not positions: 6.1 has memcg_path (a __data_loc string),
 * the backported/upstream version memcg_id; neither is read. */
static __always_inline void note_tp_flavour(void)
{
	static bool seen;

	if (seen)
		return;
	seen = true;
	if (bpf_core_field_exists(struct trace_event_raw_mmap_lock___new, memcg_id))
		count(C_TP_MEMCG_ID);
	else
		count(C_TP_MEMCG_PATH);
}

SEC("tracepoint/mmap_lock/mmap_lock_start_locking")
int tp_start_locking(struct trace_event_raw_mmap_lock *ctx)
{
	struct rkey k = { .tid = (u32)bpf_get_current_pid_tgid() };
	struct rhold r = {};

	if (BPF_CORE_READ(ctx, write))
		return 0;
	k.lock = mm_lock_addr(BPF_CORE_READ(ctx, mm));
	r.acq_ts = bpf_ktime_get_ns();
	r.stackid = -1;
	map_put(&rholds, &k, &r, BPF_ANY);
	return 0;
}

SEC("tracepoint/mmap_lock/mmap_lock_acquire_returned")
int tp_acquire_returned(struct trace_event_raw_mmap_lock_acquire_returned *ctx)
{
	struct rkey k = { .tid = (u32)bpf_get_current_pid_tgid() };
	struct holder *h, o = {};
	struct rhold *r;
	u64 now;
	u8 one = 1;

	note_tp_flavour();
	if (BPF_CORE_READ(ctx, write))
		return 0;
	k.lock = mm_lock_addr(BPF_CORE_READ(ctx, mm));
	r = bpf_map_lookup_elem(&rholds, &k);
	/* mmap_write_downgrade() emits acquire_returned(write=false) with no
	 * start_locking before it: downgrade_write's fentry handles it. */
	h = bpf_map_lookup_elem(&holds, &k.tid);
	if (h && h->phase == PHASE_WRITE && k.lock == current_mmap_lock()) {
		if (r)
			bpf_map_delete_elem(&rholds, &k);
		return 0;
	}
	if (!r)
		return 0;
	if (!BPF_CORE_READ(ctx, success)) {
		bpf_map_delete_elem(&rholds, &k);
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (task_selected())
		hist_add(H_READ_ACQUIRE, now - r->acq_ts);
	r->ts = now;
	r->sysnr = current_sysnr();
	r->stackid = stack_id(ctx);
	map_put(&mmlocks, &k.lock, &one, BPF_ANY);
	/* Blame for writers queued behind readers: remember one reader. */
	if (!bpf_map_lookup_elem(&owners, &k.lock)) {
		fill_holder(&o, ctx, now, PHASE_READ);
		map_put(&owners, &k.lock, &o, BPF_NOEXIST);
	}
	return 0;
}

SEC("tracepoint/mmap_lock/mmap_lock_released")
int tp_released(struct trace_event_raw_mmap_lock *ctx)
{
	struct rkey k = { .tid = (u32)bpf_get_current_pid_tgid() };
	struct holder *h, *o, me = {};
	struct rhold *r;
	u64 now, d;

	if (BPF_CORE_READ(ctx, write))
		return 0;
	k.lock = mm_lock_addr(BPF_CORE_READ(ctx, mm));
	/* The end of a downgraded read phase is up_read's (below): this
	 * event comes after 6.1 formatted the memcg path, ~1 ms late under
	 * TCG, where the phase's start (downgrade_write) is not. */
	h = bpf_map_lookup_elem(&holds, &k.tid);
	if (h && h->phase == PHASE_DG_READ && k.lock == current_mmap_lock())
		return 0;
	r = bpf_map_lookup_elem(&rholds, &k);
	if (!r || !r->ts)
		return 0;
	now = bpf_ktime_get_ns();
	d = now - r->ts;
	o = bpf_map_lookup_elem(&owners, &k.lock);
	if (o && o->tid == k.tid && o->phase == PHASE_READ)
		bpf_map_delete_elem(&owners, &k.lock);
	if (task_selected()) {
		hist_add(H_READ_HOLD, d);
		if (over_thresh(0, d)) {
			fill_holder(&me, ctx, r->ts, PHASE_READ);
			me.sysnr = r->sysnr;
			me.stackid = r->stackid;
			emit_hold(&me, HOLD_READ, k.lock, d, 0, d);
		}
	}
	bpf_map_delete_elem(&rholds, &k);
	return 0;
}

/* --full with kprobes only (the tracepoints time plain read holds): ends
 * the read phase of a downgraded hold exactly. */
static __always_inline void read_release(u64 lock)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct holder *h = bpf_map_lookup_elem(&holds, &tid);

	if (h && h->phase == PHASE_DG_READ && lock == current_mmap_lock())
		downgraded_read_end();
}

/* ---- --full with fentry: the rwsem read functions ------------------
 * These fire for every rwsem read acquisition and release in the system;
 * everything but the current task's own mmap_lock leaves after one load
 * and one compare. A remote mm's lock (/proc/PID/ readers, ptrace, GUP
 * remote) is not seen, as on the write side. */

static __always_inline bool own_mmap_lock(struct task_struct *task, u64 lock)
{
	return lock == mm_lock_addr(task->mm);
}

/* Entry of a blocking read acquisition: its start, for read_acquire. */
static __always_inline void read_enter(u64 lock)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rtask *t;

	if (!own_mmap_lock(task, lock) || !task_selected())
		return;
	t = bpf_task_storage_get(&rtasks, task, 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count(C_DROP_MAP);
		return;
	}
	t->acq_ts = bpf_ktime_get_ns();
}

/* A blocking read acquisition of the task's own mmap_lock returned with the
 * lock held: read_acquire. Task storage, but only off the fault fast path
 * (page faults take mmap_lock with a trylock first). */
static __always_inline void read_acquire_end(u64 lock, u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rtask *t;

	if (!own_mmap_lock(task, lock) || !task_selected())
		return;
	t = bpf_task_storage_get(&rtasks, task, 0, 0);
	if (!t || !t->acq_ts)
		return;
	hist_add(H_READ_ACQUIRE, now - t->acq_ts);
	t->acq_ts = 0;
}

/* A read hold of @lock starts now. @any_mm: the lock is known to be an
 * mmap_lock (the tracepoints), else it must be the task's own. */
static __always_inline void read_start(void *ctx, u64 lock, bool any_mm)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rcpu *c;
	struct rtask *t;
	u64 now;

	if (!any_mm && !own_mmap_lock(task, lock))
		return;
	if (!task_selected())
		return;
	now = bpf_ktime_get_ns();
	c = rcpu_here();
	if (c && !c->slot.lock) {
		c->slot.lock = lock;
		c->slot.ts = now;
		c->slot.task = (u64)task;
		c->slot.own = !any_mm || own_mmap_lock(task, lock);
		c->slot.stackid = want_stacks ? stack_id(ctx) : -1;
		return;
	}
	/* the slot is busy: its hold's task sleeps or was preempted */
	t = bpf_task_storage_get(&rtasks, task, 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count(C_DROP_MAP);
		return;
	}
	t->ts = now;
	t->lock = lock;
	t->stackid = want_stacks ? stack_id(ctx) : -1;
}

static __always_inline void read_released(void *ctx, u64 lock, bool any_mm)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rtask *t;
	struct rcpu *c;
	u64 now, d, start;
	s32 stackid;

	/* This CPU's slot first, before the own-mm test: exec takes the old
	 * mm's lock for read and releases it after the task switched to the
	 * new mm, exit after it set current->mm to NULL, so the release is
	 * of a lock that is no longer the task's own. */
	c = rcpu_here();
	if (c && c->slot.lock == lock && c->slot.task == (u64)task) {
		start = c->slot.ts;
		stackid = c->slot.stackid;
		c->slot.lock = 0;
		if (c->slot.own && !own_mmap_lock(task, lock))
			count(C_LEFT_MM);
		goto hold;
	}
	if (!any_mm && !own_mmap_lock(task, lock))
		return;
	/* slow path: a downgraded read phase, a spilled or migrated hold */
	t = bpf_task_storage_get(&rtasks, task, 0, 0);
	if (t && t->dg && (!any_mm || own_mmap_lock(task, lock))) {
		t->dg = 0;
		downgraded_read_end();
		return;
	}
	if (t && t->ts && t->lock == lock) {
		start = t->ts;
		stackid = t->stackid;
		t->ts = 0;
		goto hold;
	}
	if (!task_selected() ||
	    !slot_scan_take((u64)task, lock, &start, &stackid))
		return;
hold:
	now = bpf_ktime_get_ns();
	d = now - start;
	if (c)		/* this CPU's read_hold histogram: no lookup */
		hist_put(&c->hold, &c->max, d);
	else
		hist_add(H_READ_HOLD, d);
	if (over_thresh(0, d)) {
		struct holder me = {};

		fill_holder(&me, ctx, start, PHASE_READ);
		me.stackid = stackid;
		emit_hold(&me, HOLD_READ, lock, d, 0, d);
	}
}

SEC("fexit/down_read_trylock")
int BPF_PROG(down_read_trylock_exit, struct rw_semaphore *sem, int ret)
{
	if (ret == 1)	/* a trylock never waits: not in read_acquire */
		read_start(ctx, (u64)sem, false);
	return 0;
}

SEC("fentry/down_read")
int BPF_PROG(down_read_entry, struct rw_semaphore *sem)
{
	read_enter((u64)sem);
	return 0;
}

/* fexit of a blocking down_read*(): read_acquire; with the fentry read
 * probes also the start of the hold (with tp_btf, acquire_returned is) */
static __always_inline void read_acquired(void *ctx, u64 lock)
{
	read_acquire_end(lock, bpf_ktime_get_ns());
	if (!full_tp)
		read_start(ctx, lock, false);
}

SEC("fexit/down_read")
int BPF_PROG(down_read_exit, struct rw_semaphore *sem)
{
	read_acquired(ctx, (u64)sem);
	return 0;
}

SEC("fentry/down_read_killable")
int BPF_PROG(down_read_killable_entry, struct rw_semaphore *sem)
{
	read_enter((u64)sem);
	return 0;
}

SEC("fexit/down_read_killable")
int BPF_PROG(down_read_killable_exit, struct rw_semaphore *sem, int ret)
{
	if (ret == 0)
		read_acquired(ctx, (u64)sem);
	return 0;
}

SEC("fentry/down_read_interruptible")
int BPF_PROG(down_read_interruptible_entry, struct rw_semaphore *sem)
{
	read_enter((u64)sem);
	return 0;
}

SEC("fexit/down_read_interruptible")
int BPF_PROG(down_read_interruptible_exit, struct rw_semaphore *sem, int ret)
{
	if (ret == 0)
		read_acquired(ctx, (u64)sem);
	return 0;
}

SEC("fentry/up_read")
int BPF_PROG(up_read_entry, struct rw_semaphore *sem)
{
	read_released(ctx, (u64)sem, false);
	return 0;
}

/* --full: the current task left an mm (exec, exit) and may have released
 * that mm's read lock after leaving it (exec_mmap() after the switch to
 * the new mm, exit_mm() after clearing current->mm). read_released()
 * timed such a hold if it sat in that CPU's slot; one that migrated to
 * another CPU or was kept in task storage was not found (its lock was no
 * longer the task's own): free it here, untimed and counted, so no slot
 * stays claimed by a lock that may be freed and reused by another mm. */
static __always_inline void left_mm(u64 mine)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct rtask *t;

	for (u32 cpu = 0; cpu < MAX_RCPUS; cpu++) {
		struct rslot *r = &rcpus[cpu].slot;

		if (cpu >= nr_cpus)
			break;
		if (r->task == (u64)task && r->lock && r->lock != mine) {
			r->lock = 0;
			count(C_LEFT_MM_UNTIMED);
		}
	}
	t = bpf_task_storage_get(&rtasks, task, 0, 0);
	if (t && t->ts && t->lock != mine) {
		t->ts = 0;
		count(C_LEFT_MM_UNTIMED);
	}
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_done)
{
	left_mm(current_mmap_lock());
	return 0;
}

/* after exit_mm(): current->mm is NULL, every read hold is a left one */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_done)
{
	left_mm(0);
	return 0;
}

/* ---- --full with tp_btf: the mmap_lock tracepoints as raw tracepoints --
 * Used when the kernel's tracepoints carry memcg_id (patch 0002 /
 * upstream 6.14): a raw tracepoint runs no TP_fast_assign, so an event
 * costs a call and the program, and no trampoline sits on the fault path.
 * Arguments are positional: (mm, write[, success]) is the memcg_id
 * layout's prototype; 6.1's (mm, memcg_path, write[, success]) is never
 * loaded here (user space checks the layout). Blocking acquisitions are
 * timed from fentry down_read*() (read_enter above) for read_acquire. */
SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(tpb_acquire_returned, struct mm_struct *mm, bool write,
	     bool success)
{
	if (write || !success)
		return 0;
	read_start(ctx, mm_lock_addr(mm), true);
	return 0;
}

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(tpb_released, struct mm_struct *mm, bool write)
{
	if (write)
		return 0;
	read_released(ctx, mm_lock_addr(mm), true);
	return 0;
}

SEC("kprobe/up_read")
int BPF_KPROBE(kp_up_read_entry, struct rw_semaphore *sem)
{
	read_release((u64)sem);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
