// SPDX-License-Identifier: GPL-2.0
/*
 * munmapsnoop: trace munmap(), brk() shrinks and mremap() shrinks, one line
 * per call, with the call's mmap_lock phases -- the function_graph trace of
 * commit dd2283f2605e ("mm: mmap: zap pages with read mmap_sem in munmap"),
 * split by lock mode.
 *
 * Uses libbpf CO-RE; needs root and a kernel with BTF.
 */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>
#include "munmapsnoop.h"
#include "munmapsnoop.skel.h"
#include "trace_helpers.h"

#define SYSCTL_MODE	"/proc/sys/vm/munmap_lock_mode"
#define VMLINUX_BTF	"/sys/kernel/btf/vmlinux"
#define MAX_SLOTS	40	/* log2 slots of microseconds */

enum mode { MODE_UNKNOWN, MODE_EXCLUSIVE, MODE_DOWNGRADE, MODE_SECTION, MODE_NR };
static const char *mode_names[MODE_NR] = { "unknown", "exclusive", "downgrade", "section" };
static const char *op_names[] = { "munmap", "brk", "mremap" };

static struct env {
	pid_t pid;
	char comm[TASK_COMM_LEN];
	const char *cgroup;
	bool json;
	bool verbose;
	long long min_us;
	long duration;
} env;

static volatile sig_atomic_t exiting;

const char *argp_program_version = "munmapsnoop 0.1";
const char argp_program_doc[] =
"Trace munmap(), brk() and mremap() shrinks: one line per call with the\n"
"mmap_lock write hold, read hold (after downgrade_write), time in\n"
"unmap_region(), lock mode, sections, lock drops and the waiters it blocked.\n"
"\n"
"USAGE: munmapsnoop [-h] [-j] [-p PID] [-c COMM] [--cgroup PATH] [-d SECONDS]\n"
"                   [--min-us N]\n"
"\n"
"EXAMPLES:\n"
"    munmapsnoop                 # trace every munmap/brk/mremap shrink\n"
"    munmapsnoop --min-us 1000   # only calls that took 1 ms or more\n"
"    munmapsnoop -p 185 -j       # process 185, one JSON object per call\n"
"    munmapsnoop -c munmap_test -d 10  # by command name, for 10 seconds\n"
"    munmapsnoop --cgroup /sys/fs/cgroup/job  # calls of a cgroup and below\n";

#define OPT_MIN_US	1000
#define OPT_CGROUP	1001

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Trace this process only (exit when it exits)", 0 },
	{ "comm", 'c', "COMM", 0, "Trace this command name only", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Trace calls of tasks in this cgroup v2 directory or below it", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS", 0 },
	{ "json", 'j', NULL, 0, "One JSON object per call on stdout (schema 1)", 0 },
	{ "min-us", OPT_MIN_US, "N", 0, "Only calls that took N microseconds or more", 0 },
	{ "verbose", 'v', NULL, 0, "Verbose debug output (libbpf messages)", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static long long parse_num(const char *what, const char *arg, long long max,
			   struct argp_state *state)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > max) {
		fprintf(stderr, "munmapsnoop: invalid %s '%s': want an integer in [0, %lld]\n",
			what, arg, max);
		argp_usage(state);
	}
	return v;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case 'p':
		env.pid = parse_num("PID", arg, INT_MAX, state);
		if (env.pid <= 0) {
			fprintf(stderr, "munmapsnoop: invalid PID '%s'\n", arg);
			argp_usage(state);
		}
		break;
	case 'c':
		if (!*arg || strlen(arg) >= TASK_COMM_LEN) {
			fprintf(stderr, "munmapsnoop: invalid COMM '%s': 1 to %d characters\n",
				arg, TASK_COMM_LEN - 1);
			argp_usage(state);
		}
		strncpy(env.comm, arg, TASK_COMM_LEN - 1);
		break;
	case 'd':
		env.duration = parse_num("duration", arg, 86400 * 365, state);
		if (!env.duration) {
			fprintf(stderr, "munmapsnoop: invalid duration '%s': want >= 1 second\n", arg);
			argp_usage(state);
		}
		break;
	case 'j':
		env.json = true;
		break;
	case OPT_CGROUP:
		if (!*arg) {
			fprintf(stderr, "munmapsnoop: --cgroup needs a path\n");
			argp_usage(state);
		}
		env.cgroup = arg;
		break;
	case OPT_MIN_US:
		env.min_us = parse_num("--min-us", arg, 1000000000000LL, state);
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_ARG:
		fprintf(stderr, "munmapsnoop: unexpected argument '%s'\n", arg);
		argp_usage(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *format, va_list args)
{
	if (env.verbose)
		return vfprintf(stderr, format, args);
	if (level != LIBBPF_DEBUG)	/* printed if loading fails */
		libbpf_log_keep(format, args);
	return 0;
}

static void sig_handler(int sig)
{
	exiting = 1;
}

/* ---- kernel feature probes ---- */

static bool btf_has(const char *name, int kind)
{
	struct btf *btf = vmlinux_btf();

	return btf && btf__find_by_name_kind(btf, name, kind) >= 0;
}

static bool btf_func(const char *name)
{
	return btf_has(name, BTF_KIND_FUNC);
}

/* Address of the data symbol NAME in /proc/kallsyms, 0 if absent. */
static unsigned long long kallsyms_data_addr(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr, found = 0;
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3)
			continue;
		if (strchr("dDbBrR", type) && !strcmp(sym, name)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

/* ---- vm.munmap_lock_mode ---- */

static int sysctl_fd = -1;
static enum mode sysctl_mode = MODE_UNKNOWN;
static unsigned long long sysctl_read_ns;

/* Accepts "downgrade", "1", or a "[downgrade] exclusive section" list. */
static enum mode parse_mode(const char *s)
{
	const char *b = strchr(s, '[');
	int i;

	if (b)
		s = b + 1;
	while (isspace((unsigned char)*s))
		s++;
	if (isdigit((unsigned char)*s)) {
		switch (atoi(s)) {
		case 0: return MODE_EXCLUSIVE;
		case 1: return MODE_DOWNGRADE;
		case 2: return MODE_SECTION;
		default: return MODE_UNKNOWN;
		}
	}
	for (i = MODE_EXCLUSIVE; i < MODE_NR; i++)
		if (!strncmp(s, mode_names[i], strlen(mode_names[i])))
			return i;
	return MODE_UNKNOWN;
}

/* The sysctl as it is now; re-read at most every 100 ms. */
static enum mode current_sysctl_mode(void)
{
	unsigned long long now = mono_ns();
	char buf[128];
	ssize_t n;

	if (sysctl_fd < 0 || now - sysctl_read_ns < 100000000ULL)
		return sysctl_mode;
	n = pread(sysctl_fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = 0;
		sysctl_mode = parse_mode(buf);
	}
	sysctl_read_ns = now;
	return sysctl_mode;
}

/*
 * The mode of a call: the kernel's mode when it is known (read in the BPF
 * program at call entry, else from the sysctl), refined by what the call
 * did. More than one write acquisition or unmap_region() is section; a
 * munmap in section mode is section even in one chunk; else a
 * downgrade_write() is downgrade and one write hold without it exclusive
 * (brk and mremap behave as downgrade in section mode; a call next to a
 * VM_GROWSDOWN stack stays exclusive in downgrade mode). No write
 * acquisition seen (tool attached mid-call, or -EINTR): unknown.
 */
static enum mode call_mode(const struct event *e, enum mode kmode)
{
	if (!e->write_acqs)
		return MODE_UNKNOWN;
	if (e->write_acqs > 1 || e->sections > 1)
		return MODE_SECTION;
	if (kmode == MODE_SECTION && e->op == OP_MUNMAP)
		return MODE_SECTION;
	if (e->downgrades)
		return MODE_DOWNGRADE;
	return MODE_EXCLUSIVE;
}

/* ---- summary ---- */

struct hist {
	const char *name;
	unsigned long long slots[MAX_SLOTS];	/* log2 of microseconds */
	unsigned long long count, sum_ns, max_ns;
};

static struct summary {
	unsigned long long calls, ops[3], modes[MODE_NR];
	unsigned long long waiters, wait_ns, lock_drops;
	struct hist total, write_hold, read_hold, unmap_region;
} sum = {
	.total = { .name = "total" },
	.write_hold = { .name = "write hold" },
	.read_hold = { .name = "read hold (downgraded calls)" },
	.unmap_region = { .name = "unmap_region" },
};

static void hist_add(struct hist *h, unsigned long long ns)
{
	int slot = log2_slot_of(ns / 1000);

	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	h->slots[slot]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

static void hist_print(const struct hist *h)
{
	char a[32], b[32], c[32], d[32];

	if (!h->count)
		return;
	fprintf(stderr, "\n%s: count %llu, avg %s, p50 %s, p99 %s, max %s\n", h->name, h->count,
		fmt_ns(a, sizeof(a), h->sum_ns / h->count),
		fmt_ns(b, sizeof(b), log2_quantile(h->slots, MAX_SLOTS, 0.5, h->max_ns / 1000) * 1000),
		fmt_ns(c, sizeof(c), log2_quantile(h->slots, MAX_SLOTS, 0.99, h->max_ns / 1000) * 1000),
		fmt_ns(d, sizeof(d), h->max_ns));
	print_log2_hist(stderr, h->slots, MAX_SLOTS, "usecs");
}

static void print_summary(struct munmapsnoop_bpf *obj)
{
	unsigned long long *d = obj->bss->drops;

	fprintf(stderr, "\nmunmapsnoop: %llu calls (munmap %llu, brk %llu, mremap %llu); "
		"modes: exclusive %llu, downgrade %llu, section %llu, unknown %llu; lock drops %llu\n",
		sum.calls, sum.ops[OP_MUNMAP], sum.ops[OP_BRK], sum.ops[OP_MREMAP],
		sum.modes[MODE_EXCLUSIVE], sum.modes[MODE_DOWNGRADE],
		sum.modes[MODE_SECTION], sum.modes[MODE_UNKNOWN], sum.lock_drops);
	fprintf(stderr, "waiters blocked: %llu, summed wait %.1f us\n",
		sum.waiters, sum.wait_ns / 1e3);
	fprintf(stderr, "lost: %llu events (ring buffer full), %llu calls untraced (map full), "
		"%llu waiters uncounted (map full)\n",
		d[DROP_RINGBUF], d[DROP_CALLS], d[DROP_WAITS]);
	hist_print(&sum.total);
	hist_print(&sum.write_hold);
	hist_print(&sum.read_hold);
	hist_print(&sum.unmap_region);
}

/* ---- output ---- */

static void print_header(void)
{
	if (env.json)
		return;
	printf("%-14s %-7s %-15s %-6s %-14s %10s %11s %10s %11s %11s %-2s %-9s %4s %4s %7s %10s\n",
	       "TIME(s)", "PID", "COMM", "OP", "START", "LEN(KiB)", "TOTAL(us)",
	       "WRITE(us)", "READ(us)", "UNMAP_R(us)", "DG", "MODE", "SECT",
	       "DROP", "WAITERS", "WAIT(us)");
}

static void print_json(const struct event *e, const char *op, enum mode m,
		       enum mode kmode, unsigned int drops)
{
	char comm[TASK_COMM_LEN + 1] = {}, start[24];
	struct jw w;

	memcpy(comm, e->comm, TASK_COMM_LEN);
	snprintf(start, sizeof(start), "0x%llx", e->start);
	jw_init(&w, stdout);
	jw_obj_open(&w);
	jw_ku64(&w, "schema", 1);
	jw_kstr(&w, "tool", "munmapsnoop");
	jw_ku64(&w, "ts_ns", e->ts_ns);
	jw_ku64(&w, "pid", e->pid);
	jw_ku64(&w, "tid", e->tid);
	jw_kstr(&w, "comm", comm);
	jw_kstr(&w, "op", op);
	jw_kstr(&w, "start", start);
	jw_ku64(&w, "len", e->len);
	jw_ku64(&w, "total_ns", e->total_ns);
	jw_ku64(&w, "write_hold_ns", e->write_hold_ns);
	jw_ku64(&w, "read_hold_ns", e->read_hold_ns);
	jw_ku64(&w, "unmap_region_ns", e->unmap_region_ns);
	jw_key(&w, "downgraded");
	jw_bool(&w, e->downgrades > 0);
	jw_kstr(&w, "mode", mode_names[m]);
	jw_ku64(&w, "sections", e->sections);
	jw_ku64(&w, "lock_drops", drops);
	jw_ku64(&w, "waiters", e->waiters);
	jw_ku64(&w, "wait_ns", e->wait_ns);
	/* additions to the contract */
	jw_ki64(&w, "ret", e->ret);
	jw_kstr(&w, "kernel_mode", mode_names[kmode]);
	jw_ku64(&w, "acquire_ns", e->acquire_ns);
	jw_ku64(&w, "unlocked_ns", e->unlocked_ns);
	jw_ku64(&w, "write_acquisitions", e->write_acqs);
	jw_ku64(&w, "read_waiters", e->read_waiters);
	jw_ku64(&w, "write_waiters", e->write_waiters);
	jw_ku64(&w, "max_wait_ns", e->max_wait_ns);
	jw_obj_close(&w);
	fputc('\n', stdout);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct event *e = data;
	enum mode kmode = e->kmode ? (enum mode)e->kmode : current_sysctl_mode();
	enum mode m = call_mode(e, kmode);
	unsigned int drops = e->write_acqs > 1 ? e->write_acqs - 1 : 0;
	const char *op = e->op < 3 ? op_names[e->op] : "?";

	sum.calls++;
	if (e->op < 3)
		sum.ops[e->op]++;
	sum.modes[m]++;
	sum.waiters += e->waiters;
	sum.wait_ns += e->wait_ns;
	sum.lock_drops += drops;
	hist_add(&sum.total, e->total_ns);
	hist_add(&sum.write_hold, e->write_hold_ns);
	if (e->downgrades)
		hist_add(&sum.read_hold, e->read_hold_ns);
	if (e->sections)
		hist_add(&sum.unmap_region, e->unmap_region_ns);

	if (env.json)
		print_json(e, op, m, kmode, drops);
	else
		printf("%-14.6f %-7u %-15.15s %-6s 0x%-12llx %10llu %11.1f %10.1f %11.1f %11.1f %-2s %-9s %4u %4u %7u %10.1f\n",
		       e->ts_ns / 1e9, e->pid, e->comm, op, e->start, e->len / 1024,
		       e->total_ns / 1e3, e->write_hold_ns / 1e3, e->read_hold_ns / 1e3,
		       e->unmap_region_ns / 1e3, e->downgrades ? "Y" : "N", mode_names[m],
		       e->sections, drops, e->waiters, e->wait_ns / 1e3);
	fflush(stdout);
	return 0;
}

/* ---- setup ---- */

static int die(const char *msg, const char *fix)
{
	fprintf(stderr, "munmapsnoop: %s%s%s\n", msg, fix ? ": " : "", fix ? fix : "");
	return 1;
}

static const char *required[] = {
	"__vm_munmap", "down_write_killable", "downgrade_write", "up_write", "up_read",
};

/*
 * Every choice of what to load, in one place, before the load; the one
 * skeleton attach in main() then attaches everything loaded. Notes on
 * stderr name what this kernel cannot give.
 */
static void choose_probes(struct munmapsnoop_bpf *obj)
{
	bool have_region, have_vms_clear, have_fallback, have_waits, vms;

	obj->rodata->targ_tgid = env.pid;
	if (env.comm[0]) {
		obj->rodata->filter_comm = true;
		memcpy((char *)obj->rodata->targ_comm, env.comm, TASK_COMM_LEN);
	}
	obj->rodata->filter_cg = env.cgroup != NULL;
	obj->rodata->min_ns = env.min_us * 1000;
	obj->rodata->mode_addr = kallsyms_data_addr("sysctl_munmap_lock_mode");

	/* Where munmap zaps the range. 6.1-6.11: unmap_region() (kprobe: 7
	 * arguments). 6.12 and later (struct vma_munmap_struct in BTF):
	 * vms_complete_munmap_vmas() -> vms_clear_ptes(), static (inlined, or
	 * refused by kprobes), while unmap_region() only serves mmap's error
	 * path: probe vms_clear_ptes(), else unmap_vmas() + free_pgtables() +
	 * tlb_finish_mmu() (the rest of what both do), else none. */
	vms = btf_has("vma_munmap_struct", BTF_KIND_STRUCT);
	have_vms_clear = vms && kprobe_traceable("vms_clear_ptes");
	have_region = !vms && kprobe_traceable("unmap_region");
	have_fallback = !have_region && !have_vms_clear &&
			btf_func("unmap_vmas") && btf_func("free_pgtables") &&
			btf_func("tlb_finish_mmu");
	bpf_program__set_autoload(obj->progs.unmap_region_entry, have_region);
	bpf_program__set_autoload(obj->progs.unmap_region_exit, have_region);
	bpf_program__set_autoload(obj->progs.vms_clear_ptes_entry, have_vms_clear);
	bpf_program__set_autoload(obj->progs.vms_clear_ptes_exit, have_vms_clear);
	bpf_program__set_autoload(obj->progs.unmap_vmas_entry, have_fallback);
	bpf_program__set_autoload(obj->progs.unmap_vmas_exit, have_fallback);
	bpf_program__set_autoload(obj->progs.free_pgtables_entry, have_fallback);
	bpf_program__set_autoload(obj->progs.free_pgtables_exit, have_fallback);
	bpf_program__set_autoload(obj->progs.tlb_finish_mmu_entry, have_fallback);
	bpf_program__set_autoload(obj->progs.tlb_finish_mmu_exit, have_fallback);
	if (have_vms_clear)
		fprintf(stderr, "munmapsnoop: note: munmap zaps in vms_clear_ptes() on this kernel "
			"(not unmap_region()): unmap_region_ns times vms_clear_ptes()\n");
	else if (have_fallback)
		fprintf(stderr, "munmapsnoop: note: %s: "
			"unmap_region_ns times unmap_vmas() + free_pgtables() + tlb_finish_mmu() instead\n",
			vms ? "munmap zaps in vms_clear_ptes() on this kernel, which kprobes cannot attach to"
			    : "unmap_region() cannot be probed (inlined, or refused by kprobes)");
	else if (!have_region)
		fprintf(stderr, "munmapsnoop: note: neither %s nor unmap_vmas()/free_pgtables()/tlb_finish_mmu() "
			"can be probed: unmap_region_ns and sections stay 0\n",
			vms ? "vms_clear_ptes()" : "unmap_region()");

	if (!btf_func("down_write")) {
		bpf_program__set_autoload(obj->progs.down_write_entry, false);
		bpf_program__set_autoload(obj->progs.down_write_exit, false);
		fprintf(stderr, "munmapsnoop: note: down_write() not in BTF: "
			"write re-acquisitions by down_write() (section mode) are not seen\n");
	}
	if (!btf_func("__x64_sys_brk")) {
		bpf_program__set_autoload(obj->progs.brk_entry, false);
		bpf_program__set_autoload(obj->progs.brk_exit, false);
		fprintf(stderr, "munmapsnoop: note: __x64_sys_brk() not in BTF: brk shrinks not traced\n");
	}
	if (!btf_func("__x64_sys_mremap")) {
		bpf_program__set_autoload(obj->progs.mremap_entry, false);
		bpf_program__set_autoload(obj->progs.mremap_exit, false);
		fprintf(stderr, "munmapsnoop: note: __x64_sys_mremap() not in BTF: mremap shrinks not traced\n");
	}
	have_waits = vmlinux_btf_has_tracepoint("contention_begin") &&
		     vmlinux_btf_has_tracepoint("contention_end");
	if (!have_waits) {
		bpf_program__set_autoload(obj->progs.contention_begin, false);
		bpf_program__set_autoload(obj->progs.contention_end, false);
		fprintf(stderr, "munmapsnoop: note: no lock:contention_begin/end tracepoints: "
			"waiters and wait_ns stay 0\n");
	}
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = argp_program_doc,
	};
	struct ring_buffer *rb = NULL;
	struct munmapsnoop_bpf *obj = NULL;
	unsigned long long deadline = 0;
	char buf[256];
	size_t i;
	int err, cgfd = -1;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return err;

	if (env.cgroup) {
		cgfd = cgroup_open("munmapsnoop", env.cgroup);
		if (cgfd < 0)
			return 1;
	}
	if (geteuid() != 0)
		return die("must run as root", "loading BPF programs needs root (CAP_BPF, CAP_PERFMON)");
	if (access(VMLINUX_BTF, R_OK))
		return die("the kernel has no BTF (" VMLINUX_BTF " missing)",
			   "rebuild it with CONFIG_DEBUG_INFO_BTF=y");
	if (env.pid && kill(env.pid, 0) && errno == ESRCH) {
		fprintf(stderr, "munmapsnoop: no process with PID %d\n", env.pid);
		return 1;
	}
	libbpf_set_print(libbpf_print_fn);

	if (!vmlinux_btf())
		return die("cannot read the kernel BTF from " VMLINUX_BTF,
			   "rebuild the kernel with CONFIG_DEBUG_INFO_BTF=y");
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if (!btf_func(required[i])) {
			snprintf(buf, sizeof(buf),
				 "required kernel function %s() not found in the kernel BTF", required[i]);
			return die(buf, "it is inlined or renamed in this kernel; munmapsnoop cannot trace it");
		}
	}

	obj = munmapsnoop_bpf__open();
	if (!obj) {
		bpf_failed("munmapsnoop", "open", -errno, env.verbose);
		return 1;
	}
	choose_probes(obj);

	err = munmapsnoop_bpf__load(obj);
	if (err) {
		bpf_failed("munmapsnoop", "load", err, env.verbose);
		goto cleanup;
	}
	if (cgfd >= 0 &&
	    cgroup_install("munmapsnoop", bpf_map__fd(obj->maps.cgroup_map), cgfd)) {
		err = -1;
		goto cleanup;
	}
	err = munmapsnoop_bpf__attach(obj);
	if (err) {
		bpf_failed("munmapsnoop", "attach", err, env.verbose);
		goto cleanup;
	}
	rb = ring_buffer__new(bpf_map__fd(obj->maps.events), handle_event, NULL, NULL);
	if (!rb) {
		err = -errno;
		fprintf(stderr, "munmapsnoop: failed to create the ring buffer: %s\n", strerror(errno));
		goto cleanup;
	}

	sysctl_fd = open(SYSCTL_MODE, O_RDONLY | O_CLOEXEC);
	if (sysctl_fd < 0) {
		fprintf(stderr, "munmapsnoop: note: no %s (unpatched kernel): mode is inferred "
			"from the lock calls only\n", SYSCTL_MODE);
	} else {
		current_sysctl_mode();
	}

	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);
	if (env.duration)
		deadline = mono_ns() + env.duration * 1000000000ULL;
	buf[0] = 0;
	if (env.pid)
		snprintf(buf, sizeof(buf), " of PID %d", env.pid);
	else if (env.cgroup)
		snprintf(buf, sizeof(buf), " in cgroup %s", env.cgroup);
	fprintf(stderr, "Tracing munmap/brk/mremap shrinks%s (vm.munmap_lock_mode: %s)... "
		"Hit Ctrl-C to end.\n", buf, sysctl_fd < 0 ? "absent" : mode_names[sysctl_mode]);
	print_header();

	while (!exiting) {
		/* Submitted without wake-up: sleep, then consume what is there. */
		err = ring_buffer__poll(rb, 100);
		if (err >= 0)
			err = ring_buffer__consume(rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "munmapsnoop: error polling the ring buffer: %s\n", strerror(-err));
			goto cleanup;
		}
		err = 0;
		if (deadline && mono_ns() >= deadline)
			break;
		if (env.pid && kill(env.pid, 0) && errno == ESRCH)
			break;
	}
	/* Events submitted before we stopped. */
	ring_buffer__consume(rb);
	print_summary(obj);

cleanup:
	ring_buffer__free(rb);
	munmapsnoop_bpf__destroy(obj);
	if (sysctl_fd >= 0)
		close(sysctl_fd);
	return err != 0;
}
