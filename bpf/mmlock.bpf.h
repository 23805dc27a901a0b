/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmlock.bpf.h: BPF-side helpers shared by the mmap_lock tools.
 * Needs vmlinux.h, bpf_helpers.h and bpf_core_read.h included first.
 */
#ifndef __MMLOCK_BPF_H
#define __MMLOCK_BPF_H

/* include/trace/events/lock.h: lock:contention_begin flags */
#define LCB_F_SPIN	(1U << 0)
#define LCB_F_READ	(1U << 1)
#define LCB_F_WRITE	(1U << 2)
#define LCB_F_RT	(1U << 3)
#define LCB_F_PERCPU	(1U << 4)
#define LCB_F_MUTEX	(1U << 5)

#ifndef PF_KTHREAD
#define PF_KTHREAD	0x00200000
#endif
#ifndef ENOSYS
#define ENOSYS		38
#endif
#ifndef E2BIG
#define E2BIG		7
#endif
#ifndef ENOMEM
#define ENOMEM		12
#endif
#ifndef EEXIST
#define EEXIST		17
#endif

/* --cgroup PATH: user space puts the cgroup v2 directory's fd in slot 0
 * of cgroup_map; a task is selected when it runs in that cgroup or one
 * below it (bpf_current_task_under_cgroup(), like bcc's --cgroup). */
const volatile bool filter_cg = false;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

static __always_inline bool cgroup_selected(void)
{
	return !filter_cg || bpf_current_task_under_cgroup(&cgroup_map, 0) == 1;
}

/* Address of mm->mmap_lock (CO-RE: the offset comes from the running
 * kernel's BTF); 0 for a NULL mm. */
static __always_inline __u64 mm_lock_addr(struct mm_struct *mm)
{
	if (!mm)
		return 0;
	return (__u64)(void *)&mm->mmap_lock;
}

/* &current->mm->mmap_lock, or 0 for kernel threads / exiting tasks. */
static __always_inline __u64 current_mmap_lock(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return mm_lock_addr(BPF_CORE_READ(task, mm));
}

/* Is @lock the current task's own mmap_lock? The check perf lock contention
 * makes: only the current mm can be named this way. */
static __always_inline bool is_current_mmap_lock(const void *lock)
{
	__u64 mine = current_mmap_lock();

	return mine && mine == (__u64)lock;
}

/*
 * Syscall the current task is in (x86-64), else -1 for a user task outside
 * a syscall (an exception: a page fault, for mmap_lock) or -2 for a kernel
 * thread. The entry code stores -ENOSYS in pt_regs->ax until the syscall
 * returns; an exception frame holds the user's rax there instead.
 */
static __always_inline int current_sysnr(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;

	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		return -2;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return -1;
	if ((long)BPF_CORE_READ(regs, ax) != -ENOSYS)
		return -1;
	return (int)BPF_CORE_READ(regs, orig_ax);
}

#endif /* __MMLOCK_BPF_H */
