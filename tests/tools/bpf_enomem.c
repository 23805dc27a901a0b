// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_enomem: an LD_PRELOAD library under which bpf(BPF_MAP_CREATE) fails
 * with ENOMEM, as it does when the memory cgroup's memory.max is too small
 * for a tool's maps (a container's limit). Measured with mmlockstat: the
 * load fails that way under a 10-16 MiB limit on the lab kernel and 16 MiB
 * on Debian's 6.1, but a little less OOM-kills it and 6.12 OOM-kills it up
 * to 18 MiB; this makes the same failure on every kernel and every run.
 * libbpf makes its bpf() calls through syscall(3), which this replaces.
 *
 * Usage: LD_PRELOAD=tests/bin/bpf_enomem CMD [ARG]...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long nr, ...)
{
	static long (*next)(long nr, ...);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_bpf && a[0] == BPF_MAP_CREATE) {
		errno = ENOMEM;
		return -1;
	}
	if (!next)
		next = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
