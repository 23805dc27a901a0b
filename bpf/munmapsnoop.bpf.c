// SPDX-License-Identifier: GPL-2.0
/*
 * munmapsnoop: one event per munmap / brk-shrink / mremap-shrink call with
 * the call's mmap_lock phases: write hold, read hold (after
 * downgrade_write()), time in unmap_region(), lock drops, and the waiters
 * that blocked on the same mm's mmap_lock while the call ran.
 *
 * Call boundaries: fentry/fexit __vm_munmap (munmap), __x64_sys_brk and
 * __x64_sys_mremap (shrinks only). Lock phases: the rwsem functions
 * filtered on "this task is inside a traced call" (a global counter, then a
 * per-task hash lookup) and on sem == &mm->mmap_lock. unmap_region() takes
 * 7 arguments, which the 6.1 x86 trampoline refuses: kprobe/kretprobe.
 *
 * Waiters: a call is the owner of its mmap_lock in `locks` from its entry,
 * but a waiter is counted behind it only for the part of its wait from the
 * call's first write acquisition on (owned_since): a call that itself
 * waits for the lock (another task holds it) is not what the tasks that
 * block meanwhile wait for. A wait that began before the acquisition
 * counts from it (a reader queued behind the call's queued writer does
 * wait for the call's hold too); a wait that ended before it, or in a call
 * that never acquired the lock, is not counted at all (not in waiters
 * either). So a waiter never counts longer than the call held the lock
 * (or dropped it in between, section mode): max_wait_ns <= total_ns -
 * acquire_ns.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "mmlock.bpf.h"
#include "munmapsnoop.h"

#define PAGE_SIZE_4K	4096ULL
#define PAGE_ALIGN_4K(x)	(((x) + PAGE_SIZE_4K - 1) & ~(PAGE_SIZE_4K - 1))

const volatile pid_t targ_tgid = 0;
const volatile bool filter_comm = false;
const volatile char targ_comm[TASK_COMM_LEN] = {};
const volatile __u64 min_ns = 0;
/* &sysctl_munmap_lock_mode (patched kernel, from kallsyms), 0: absent */
const volatile __u64 mode_addr = 0;

/* Tasks inside a traced call; lets the lock probes return at once. */
__u32 active_calls = 0;
__u64 drops[DROP_NR] = {};

struct call {
	__u64 seq;
	__u64 lock;		/* &mm->mmap_lock of the calling task */
	__u64 ts;
	__u64 start;
	__u64 len;
	__u64 acq_begin;	/* inside down_write*() */
	__u64 owned_since;	/* first write acquisition; 0: not yet */
	__u64 w_begin;		/* write phase open since */
	__u64 r_begin;		/* read phase open since */
	__u64 unlock_begin;	/* lock released since (section drops) */
	__u64 ur_begin;		/* inside unmap_region() since */
	__u64 acquire_ns;
	__u64 write_hold_ns;
	__u64 read_hold_ns;
	__u64 unlocked_ns;
	__u64 unmap_region_ns;
	__u64 wait_ns;
	__u64 max_wait_ns;
	__u32 op;
	__u32 write_acqs;
	__u32 downgrades;
	__u32 read_releases;
	__u32 write_releases;
	__u32 sections;
	__u32 waiters;
	__u32 read_waiters;
	__u32 write_waiters;
	__u32 pending;		/* waiters still blocked */
	__u32 kmode;
};

struct owner {
	__u64 seq;
	__u32 tid;
};

struct wait {
	__u64 seq;		/* the call it is blocked behind; 0: accounted */
	__u64 lock;
	__u64 begin;
	__u32 owner;
	__u32 read;		/* LCB_F_READ: a reader */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CALLS);
	__type(key, __u32);			/* tid */
	__type(value, struct call);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CALLS);
	__type(key, __u64);			/* &mm->mmap_lock */
	__type(value, struct owner);
} locks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_WAITS);
	__type(key, __u32);			/* waiter tid */
	__type(value, struct wait);
} waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

static const struct call zero_call;

static __always_inline bool comm_allowed(void)
{
	char comm[TASK_COMM_LEN];
	int i;

	if (!filter_comm)
		return true;
	bpf_get_current_comm(&comm, sizeof(comm));
	for (i = 0; i < TASK_COMM_LEN; i++) {
		if (comm[i] != targ_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

static __always_inline int call_enter(__u32 op, __u64 start, __u64 len)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct task_struct *task;
	struct mm_struct *mm;
	struct owner o = {};
	struct call *c;
	bool fresh;

	if (targ_tgid && (id >> 32) != targ_tgid)
		return 0;
	if (!comm_allowed() || !cgroup_selected())
		return 0;
	task = bpf_get_current_task_btf();
	mm = task->mm;
	if (!mm)
		return 0;
	/* An entry left by a call whose return we missed is reused: it is
	 * already counted in active_calls. */
	fresh = !bpf_map_update_elem(&calls, &tid, &zero_call, BPF_NOEXIST);
	c = bpf_map_lookup_elem(&calls, &tid);
	if (!c) {
		__sync_fetch_and_add(&drops[DROP_CALLS], 1);
		return 0;
	}
	if (!fresh)
		__builtin_memcpy(c, &zero_call, sizeof(*c));
	c->seq = bpf_ktime_get_ns();	/* unique per task: the call id */
	c->lock = mm_lock_addr(mm);
	c->op = op;
	c->start = start;
	c->len = len;
	if (mode_addr) {
		int mode = -1;

		bpf_probe_read_kernel(&mode, sizeof(mode), (void *)mode_addr);
		if (mode >= 0 && mode <= 2)
			c->kmode = mode + 1;
	}
	o.seq = c->seq;
	o.tid = tid;
	bpf_map_update_elem(&locks, &c->lock, &o, BPF_ANY);
	if (fresh)
		__sync_fetch_and_add(&active_calls, 1);
	c->ts = bpf_ktime_get_ns();
	return 0;
}

/*
 * The part of a wait [begin, end] that lies behind the call's hold: from
 * its first write acquisition on. 0: the wait ended before the call held
 * the lock (or the call never acquired it): not counted.
 */
static __always_inline __u64 wait_behind(__u64 owned_since, __u64 begin, __u64 end)
{
	if (!owned_since || end <= owned_since)
		return 0;
	if (begin < owned_since)
		begin = owned_since;
	return end - begin;
}

struct pending_ctx {
	__u64 seq;
	__u64 now;
	__u64 owned_since;
	__u64 sum;
	__u64 max;
	__u32 owner;
	__u32 n;
	__u32 nread;
};

static long account_pending(struct bpf_map *map, const void *key, void *value,
			    void *data)
{
	struct pending_ctx *p = data;
	struct wait *w = value;
	__u64 d;

	if (w->owner != p->owner || w->seq != p->seq)
		return 0;
	w->seq = 0;
	d = wait_behind(p->owned_since, w->begin, p->now);
	if (!d)
		return 0;
	p->sum += d;
	p->n++;
	if (w->read)
		p->nread++;
	if (d > p->max)
		p->max = d;
	return 0;
}

static __always_inline int call_exit(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct owner *o;
	struct event *e;
	struct call *c;
	__u64 now;

	c = bpf_map_lookup_elem(&calls, &tid);
	if (!c)
		return 0;
	now = bpf_ktime_get_ns();
	/* Phases still open (not expected: the call released the lock). */
	if (c->w_begin)
		c->write_hold_ns += now - c->w_begin;
	if (c->r_begin)
		c->read_hold_ns += now - c->r_begin;
	/* Waiters still blocked: count their wait up to now. */
	if (c->pending) {
		struct pending_ctx p = { .seq = c->seq, .now = now, .owner = tid,
					 .owned_since = c->owned_since };

		bpf_for_each_map_elem(&waits, account_pending, &p, 0);
		__sync_fetch_and_add(&c->wait_ns, p.sum);
		__sync_fetch_and_add(&c->waiters, p.n);
		__sync_fetch_and_add(&c->read_waiters, p.nread);
		__sync_fetch_and_add(&c->write_waiters, p.n - p.nread);
		if (p.max > c->max_wait_ns)
			c->max_wait_ns = p.max;
	}
	o = bpf_map_lookup_elem(&locks, &c->lock);
	if (o && o->tid == tid)
		bpf_map_delete_elem(&locks, &c->lock);

	if (now - c->ts < min_ns)
		goto out;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&drops[DROP_RINGBUF], 1);
		goto out;
	}
	e->ts_ns = c->ts;
	e->start = c->start;
	e->len = c->len;
	e->total_ns = now - c->ts;
	e->acquire_ns = c->acquire_ns;
	e->write_hold_ns = c->write_hold_ns;
	e->read_hold_ns = c->read_hold_ns;
	e->unlocked_ns = c->unlocked_ns;
	e->unmap_region_ns = c->unmap_region_ns;
	e->wait_ns = c->wait_ns;
	e->max_wait_ns = c->max_wait_ns;
	e->ret = ret;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->tid = tid;
	e->op = c->op;
	e->write_acqs = c->write_acqs;
	e->downgrades = c->downgrades;
	e->read_releases = c->read_releases;
	e->write_releases = c->write_releases;
	e->sections = c->sections;
	e->waiters = c->waiters;
	e->read_waiters = c->read_waiters;
	e->write_waiters = c->write_waiters;
	e->kmode = c->kmode;
	bpf_get_current_comm(&e->comm, sizeof(e->comm));
	/* No wake-up from inside the traced call (an IPI to the reader's CPU
	 * would be charged to it): user space polls every 100 ms. */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
out:
	bpf_map_delete_elem(&calls, &tid);
	__sync_fetch_and_add(&active_calls, -1);
	return 0;
}

/* The call of the current task, if it is traced and sem is its mmap_lock. */
static __always_inline struct call *lock_call(void *sem)
{
	__u32 tid;
	struct call *c;

	if (!active_calls)
		return NULL;
	tid = (__u32)bpf_get_current_pid_tgid();
	c = bpf_map_lookup_elem(&calls, &tid);
	if (!c || (sem && c->lock != (__u64)sem))
		return NULL;
	return c;
}

/* ---- lock phases ---- */

static __always_inline void write_begin(struct rw_semaphore *sem)
{
	struct call *c = lock_call(sem);

	if (c)
		c->acq_begin = bpf_ktime_get_ns();
}

static __always_inline void write_acquired(struct rw_semaphore *sem)
{
	struct call *c = lock_call(sem);
	__u64 now;

	if (!c)
		return;
	now = bpf_ktime_get_ns();
	if (!c->write_acqs) {
		if (c->acq_begin)
			c->acquire_ns = now - c->acq_begin;
		c->owned_since = now;	/* waiters count from here */
	} else if (c->unlock_begin) {
		c->unlocked_ns += now - c->unlock_begin;
	}
	c->unlock_begin = 0;
	c->acq_begin = 0;
	c->write_acqs++;
	c->w_begin = now;
}

SEC("fentry/down_write_killable")
int BPF_PROG(down_write_killable_entry, struct rw_semaphore *sem)
{
	write_begin(sem);
	return 0;
}

SEC("fexit/down_write_killable")
int BPF_PROG(down_write_killable_exit, struct rw_semaphore *sem, int ret)
{
	if (!ret)
		write_acquired(sem);
	return 0;
}

SEC("fentry/down_write")
int BPF_PROG(down_write_entry, struct rw_semaphore *sem)
{
	write_begin(sem);
	return 0;
}

SEC("fexit/down_write")
int BPF_PROG(down_write_exit, struct rw_semaphore *sem)
{
	write_acquired(sem);
	return 0;
}

SEC("fentry/downgrade_write")
int BPF_PROG(downgrade_write_entry, struct rw_semaphore *sem)
{
	struct call *c = lock_call(sem);
	__u64 now;

	if (!c)
		return 0;
	now = bpf_ktime_get_ns();
	if (c->w_begin)
		c->write_hold_ns += now - c->w_begin;
	c->w_begin = 0;
	c->r_begin = now;
	c->downgrades++;
	return 0;
}

SEC("fentry/up_write")
int BPF_PROG(up_write_entry, struct rw_semaphore *sem)
{
	struct call *c = lock_call(sem);
	__u64 now;

	if (!c || !c->w_begin)
		return 0;
	now = bpf_ktime_get_ns();
	c->write_hold_ns += now - c->w_begin;
	c->w_begin = 0;
	c->write_releases++;
	c->unlock_begin = now;
	return 0;
}

/* On the page-fault path: lock_call() returns at its first test there. */
SEC("fentry/up_read")
int BPF_PROG(up_read_entry, struct rw_semaphore *sem)
{
	struct call *c = lock_call(sem);
	__u64 now;

	if (!c || !c->r_begin)
		return 0;
	now = bpf_ktime_get_ns();
	c->read_hold_ns += now - c->r_begin;
	c->r_begin = 0;
	c->read_releases++;
	c->unlock_begin = now;
	return 0;
}

/* ---- time in unmap_region() (7 arguments: kprobe) ---- */

static __always_inline void region_begin(void)
{
	struct call *c = lock_call(NULL);

	if (c)
		c->ur_begin = bpf_ktime_get_ns();
}

static __always_inline void region_end(bool count)
{
	struct call *c = lock_call(NULL);

	if (!c || !c->ur_begin)
		return;
	c->unmap_region_ns += bpf_ktime_get_ns() - c->ur_begin;
	c->ur_begin = 0;
	if (count)
		c->sections++;
}

SEC("kprobe/unmap_region")
int BPF_KPROBE(unmap_region_entry)
{
	region_begin();
	return 0;
}

SEC("kretprobe/unmap_region")
int BPF_KRETPROBE(unmap_region_exit)
{
	region_end(true);
	return 0;
}

/* 6.12: munmap zaps in vms_clear_ptes() (when it is not inlined) */
SEC("kprobe/vms_clear_ptes")
int BPF_KPROBE(vms_clear_ptes_entry)
{
	region_begin();
	return 0;
}

SEC("kretprobe/vms_clear_ptes")
int BPF_KRETPROBE(vms_clear_ptes_exit)
{
	region_end(true);
	return 0;
}

/* Fallback when neither can be probed: unmap_vmas + free_pgtables +
 * tlb_finish_mmu, what both do but for the mmu_gather set-up. */
SEC("fentry/unmap_vmas")
int BPF_PROG(unmap_vmas_entry)
{
	region_begin();
	return 0;
}

SEC("fexit/unmap_vmas")
int BPF_PROG(unmap_vmas_exit)
{
	region_end(true);
	return 0;
}

SEC("fentry/free_pgtables")
int BPF_PROG(free_pgtables_entry)
{
	region_begin();
	return 0;
}

SEC("fexit/free_pgtables")
int BPF_PROG(free_pgtables_exit)
{
	region_end(false);
	return 0;
}

/* ... and tlb_finish_mmu(): the TLB flush and the freeing of the pages */
SEC("fentry/tlb_finish_mmu")
int BPF_PROG(tlb_finish_mmu_entry)
{
	region_begin();
	return 0;
}

SEC("fexit/tlb_finish_mmu")
int BPF_PROG(tlb_finish_mmu_exit)
{
	region_end(false);
	return 0;
}

/* ---- waiters: lock:contention_begin/end on a traced call's mmap_lock ---- */

SEC("tp_btf/contention_begin")
int BPF_PROG(contention_begin, void *lock, unsigned int flags)
{
	__u64 l = (__u64)lock;
	struct wait w = {};
	struct owner *o;
	struct call *c;
	__u32 tid;

	if (!active_calls)
		return 0;
	o = bpf_map_lookup_elem(&locks, &l);
	if (!o)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	if (tid == o->tid)
		return 0;
	c = bpf_map_lookup_elem(&calls, &o->tid);
	if (!c || c->seq != o->seq)
		return 0;
	w.seq = o->seq;
	w.owner = o->tid;
	w.lock = l;
	w.read = !!(flags & LCB_F_READ);
	w.begin = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&waits, &tid, &w, BPF_ANY)) {
		__sync_fetch_and_add(&drops[DROP_WAITS], 1);
		return 0;
	}
	/* counted in waiters when it ends (contention_end, call_exit), and
	 * only if it overlaps the call's hold */
	__sync_fetch_and_add(&c->pending, 1);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(contention_end, void *lock, int ret)
{
	__u32 tid;
	struct wait *w;
	struct call *c;
	__u64 d;

	if (!active_calls)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	w = bpf_map_lookup_elem(&waits, &tid);
	if (!w || w->lock != (__u64)lock)
		return 0;
	if (w->seq) {
		c = bpf_map_lookup_elem(&calls, &w->owner);
		if (c && c->seq == w->seq) {
			__sync_fetch_and_add(&c->pending, -1);
			d = wait_behind(c->owned_since, w->begin, bpf_ktime_get_ns());
			if (d) {
				__sync_fetch_and_add(&c->wait_ns, d);
				__sync_fetch_and_add(&c->waiters, 1);
				if (w->read)
					__sync_fetch_and_add(&c->read_waiters, 1);
				else
					__sync_fetch_and_add(&c->write_waiters, 1);
				if (d > c->max_wait_ns)
					c->max_wait_ns = d;
			}
		}
	}
	bpf_map_delete_elem(&waits, &tid);
	return 0;
}

/*
 * ---- call boundaries ----
 * Last in the file, returns before entries: the skeleton attaches programs
 * in this order, so a call is only traced once the lock and unmap_region
 * probes and its return probe are in place.
 */

SEC("fexit/__vm_munmap")
int vm_munmap_exit(__u64 *ctx)
{
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	return call_exit((int)ret);
}

SEC("fexit/__x64_sys_brk")
int brk_exit(__u64 *ctx)
{
	__u64 ret = 0;

	if (!active_calls)
		return 0;
	bpf_get_func_ret(ctx, &ret);
	return call_exit((long)ret);
}

SEC("fexit/__x64_sys_mremap")
int mremap_exit(__u64 *ctx)
{
	__u64 ret = 0;

	if (!active_calls)
		return 0;
	bpf_get_func_ret(ctx, &ret);
	return call_exit((long)ret);
}

/* downgrade is true for the munmap syscall only: vm_munmap() callers in
 * the kernel (the ELF loader, ...) are not traced. */

SEC("fentry/__vm_munmap")
int BPF_PROG(vm_munmap_entry, unsigned long start, size_t len, bool downgrade)
{
	if (!downgrade)
		return 0;
	return call_enter(OP_MUNMAP, start, len);
}

SEC("fentry/__x64_sys_brk")
int BPF_PROG(brk_entry, struct pt_regs *regs)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 newbrk = PAGE_ALIGN_4K(regs->di), oldbrk;

	if (!task->mm || regs->di < task->mm->start_brk)
		return 0;	/* brk(0) and other queries: nothing unmapped */
	oldbrk = PAGE_ALIGN_4K(task->mm->brk);
	if (newbrk >= oldbrk)		/* grow or no-op: nothing unmapped */
		return 0;
	return call_enter(OP_BRK, newbrk, oldbrk - newbrk);
}

SEC("fentry/__x64_sys_mremap")
int BPF_PROG(mremap_entry, struct pt_regs *regs)
{
	__u64 addr = regs->di;
	__u64 old_len = PAGE_ALIGN_4K(regs->si);
	__u64 new_len = PAGE_ALIGN_4K(regs->dx);

	if (new_len >= old_len)		/* not a shrink */
		return 0;
	return call_enter(OP_MREMAP, addr + new_len, old_len - new_len);
}

char LICENSE[] SEC("license") = "GPL";
