// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_recurse.bpf.c: a kprobe program that takes its task's mmap_lock for
 * read, through bpf_find_vma(), while it runs (bpf_recurse.c loads it).
 * Kprobe and perf-tracepoint programs share one per-CPU guard
 * (bpf_prog_active): the mmap_lock tracepoints fired under it do not run
 * another tool's programs on them, and from 6.7 on the kernel counts each
 * such skip in that program's recursion misses.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct task_struct;
struct vm_area_struct;

enum { CFG_TGID, CFG_ADDR, CFG_HITS, CFG_FOUND, CFG_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CFG_MAX);
	__type(key, __u32);
	__type(value, __u64);
} cfg SEC(".maps");

static long vma_found(struct task_struct *task, struct vm_area_struct *vma,
		      void *data)
{
	return 0;
}

static __always_inline __u64 *cell(__u32 k)
{
	return bpf_map_lookup_elem(&cfg, &k);
}

SEC("kprobe")
int trigger(void *ctx)
{
	__u64 *tgid = cell(CFG_TGID), *addr = cell(CFG_ADDR);
	__u64 *hits = cell(CFG_HITS), *found = cell(CFG_FOUND);

	if (!tgid || !addr || !hits || !found ||
	    *tgid != bpf_get_current_pid_tgid() >> 32)
		return 0;
	__sync_fetch_and_add(hits, 1);
	/* 0 only if mmap_read_trylock() took the lock and a VMA covers addr */
	if (!bpf_find_vma(bpf_get_current_task_btf(), *addr, vma_found, NULL, 0))
		__sync_fetch_and_add(found, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
