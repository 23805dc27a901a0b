// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_recurse: force BPF recursion misses on another tool's mmap_lock
 * programs (mmlockstat --kprobes --full: its programs on the mmap_lock
 * tracepoints run through perf, under the same per-CPU guard as kprobes).
 *
 * Loads bpf_recurse.bpf.o (next to this binary), attaches its kprobe to
 * FUNC (default __x64_sys_getppid), then calls getppid() N times: each call
 * runs the program, which takes this process's mmap_lock for read with
 * bpf_find_vma() and so fires mmap_lock_acquire_returned and
 * mmap_lock_released while the guard is held. Prints "calls N hits H
 * found F": H program runs, F of them with the lock taken. With --no-bpf
 * it makes the same calls without loading anything (the control).
 *
 * Usage: bpf_recurse [-n N] [-f FUNC] [--no-bpf]
 * Exit: 0 done, 1 the program could not be loaded or attached, 2 usage.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

enum { CFG_TGID, CFG_ADDR, CFG_HITS, CFG_FOUND, CFG_MAX };

static int usage(void)
{
	fprintf(stderr, "usage: bpf_recurse [-n N] [-f FUNC] [--no-bpf]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *func = "__x64_sys_getppid";
	char path[PATH_MAX], *slash;
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	struct bpf_link *link;
	unsigned long long v[CFG_MAX] = { 0 };
	long n = 1000;
	bool bpf = true;
	ssize_t len;
	int fd, err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "-f") && i + 1 < argc)
			func = argv[++i];
		else if (!strcmp(argv[i], "--no-bpf"))
			bpf = false;
		else
			return usage();
	}
	if (n < 1)
		return usage();
	if (!bpf) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		printf("calls %ld hits 0 found 0\n", n);
		return 0;
	}

	len = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (len < 0) {
		perror("bpf_recurse: /proc/self/exe");
		return 1;
	}
	path[len] = 0;
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "bpf_recurse.bpf.o");
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "bpf_recurse: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "bpf_recurse: cannot load %s: %s\n", path, strerror(-err));
		return 1;
	}
	fd = bpf_object__find_map_fd_by_name(obj, "cfg");
	v[CFG_TGID] = getpid();
	v[CFG_ADDR] = (unsigned long long)(unsigned long)&main;
	for (__u32 k = CFG_TGID; k <= CFG_ADDR; k++)
		if (bpf_map_update_elem(fd, &k, &v[k], BPF_ANY)) {
			perror("bpf_recurse: cfg");
			return 1;
		}
	prog = bpf_object__find_program_by_name(obj, "trigger");
	link = prog ? bpf_program__attach_kprobe(prog, false, func) : NULL;
	if (!link) {
		fprintf(stderr, "bpf_recurse: cannot attach a kprobe to %s: %s\n",
			func, strerror(errno));
		return 1;
	}
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	bpf_link__destroy(link);
	for (__u32 k = CFG_HITS; k <= CFG_FOUND; k++)
		bpf_map_lookup_elem(fd, &k, &v[k]);
	printf("calls %ld hits %llu found %llu\n", n, v[CFG_HITS], v[CFG_FOUND]);
	bpf_object__close(obj);
	return 0;
}
