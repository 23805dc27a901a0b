// SPDX-License-Identifier: GPL-2.0
/*
 * mmlockstat: mmap_lock hold and wait histograms, with the write phase and
 * the read phase of downgraded holds (munmap, brk, mremap) kept apart, and
 * blame for the longest waits. See README.md and -h.
 *
 * This file: options, probe choice, open/load/attach, the top-N lists fed
 * by the ring buffer, the sums of the BPF maps per interval, the main loop.
 * Printing (text, JSON, /metrics) is in mmlockstat_output.c.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "mmlockstat.h"
#include "mmlockstat.skel.h"
#include "mmlockstat_output.h"
#include "http_exporter.h"
#include "trace_helpers.h"

#define MAX_READ_END	16

static struct env {
	pid_t pid;
	char comm[TASK_COMM_LEN];
	bool filter_comm;
	const char *cgroup;
	int cgfd;
	double interval;
	double duration;
	bool json;
	bool stacks;
	int top;
	bool full;
	bool kprobes;
	int map_entries;
	const char *prom;
	const char *read_end[MAX_READ_END];
	int nr_read_end;
	bool verbose;
} env = {
	.top = 5,
	.cgfd = -1,
};

const char *argp_program_version = "mmlockstat 1.0";
const char argp_program_doc[] =
"Summarize mmap_lock hold and wait times as log2 histograms.\n"
"\n"
"Histograms (ns): write_hold, read_hold, downgrade_write_phase,\n"
"downgrade_read_phase, read_wait, write_wait, write_acquire (and\n"
"read_acquire with --full); the longest holds and waits, each wait with the\n"
"holder it was blocked behind (pid, comm, operation, phase), and for a read\n"
"wait the writer queued ahead of it (readers do not pass it). On kernels with\n"
"per-VMA locks (6.4+: Debian's 6.12) also vma_fallback_wait (mmap_lock\n"
"waits of page faults that fell back from the VMA lock) and vma_write_wait\n"
"(writers blocked in vma_start_write() by a fault holding the VMA).\n"
"\n"
"Default probes stay off the uncontended mmap_lock read path (page faults):\n"
"write-side rwsem functions filtered to mm->mmap_lock, the lock contention\n"
"tracepoints, and the return of the functions that downgrade (munmap, brk,\n"
"mremap; more with -E). read_hold then holds only downgraded read phases.\n"
"A downgrade in any other syscall (a module) or fault ends its hold at the\n"
"downgrade: its read phase is not timed (untracked_downgrades).\n"
"With per-VMA locks each fault also runs a fexit on lock_vma_under_rcu():\n"
"+5.8 % per page fault on Debian's 6.12 (6.1, without them: +0.5 %).\n"
"--full adds every read hold: the raw mmap_lock tracepoints when they carry\n"
"a memcg id (patch 0002), else the read-side rwsem functions (down_read*,\n"
"up_read) filtered to the task's own mmap_lock; starts in per-CPU slots,\n"
"per-CPU histograms: +7-8 % per page fault on the lab kernel, +9.7 % on\n"
"Debian's 6.1, +10.3 % on 6.12 (docs/BENCH.md). With --kprobes it uses the\n"
"mmap_lock tracepoints through perf (on stock 6.1 they format a memcg path\n"
"per event: +75-87 %).\n"
"\n"
"Nothing is lost silently: events the tool could not record are counted per\n"
"cause (a full map, the ring buffer full, kprobe misses, programs skipped\n"
"for recursion, ends whose start was not seen) in JSON \"drops\" and a\n"
"warning line in the text output.\n"
"\n"
"USAGE: mmlockstat [-p PID] [-c COMM] [--cgroup PATH] [-i SEC] [-d SEC] [-j]\n"
"                  [-s] [--full]\n"
"                  [--prometheus ADDR:PORT] [-E FUNC] [--map-entries N] [-v]\n"
"\v"
"EXAMPLES:\n"
"    mmlockstat                 # trace until Ctrl-C, then print histograms\n"
"    mmlockstat -d 10 -j        # 10 seconds, one JSON object (schema 1)\n"
"    mmlockstat -p 181 -i 1     # process 181 (its holds, waits on its lock)\n"
"    mmlockstat -c munmap_test -s   # by command name, with kernel stacks\n"
"    mmlockstat --cgroup /sys/fs/cgroup/job -j  # a cgroup and those below it\n"
"    mmlockstat --full -d 5     # every read hold too\n"
"    mmlockstat --prometheus :9464  # serve /metrics on 127.0.0.1:9464\n"
"    mmlockstat -E tml_hold_write   # also end read phases at this return\n"
"    mmlockstat --map-entries 64    # small maps (a test of drops.map_full)\n"
"\n"
"Exit status: 0 ok, 1 runtime error, 2 bad usage.\n";

enum {
	OPT_FULL = 0x100,
	OPT_PROM,
	OPT_KPROBES,
	OPT_MAP_ENTRIES,
	OPT_CGROUP,
};

#define MAX_MAP_ENTRIES	(1 << 20)

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Trace this process: its holds and waits, and waits behind its holds", 0 },
	{ "comm", 'c', "COMM", 0, "Trace tasks with this command name (same rules as -p)", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Trace tasks in this cgroup v2 directory or below it (same rules as -p)", 0 },
	{ "interval", 'i', "SECONDS", 0, "Print every SECONDS (histograms are per interval)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS", 0 },
	{ "json", 'j', NULL, 0, "One JSON object per interval (schema 1, see README.md)", 0 },
	{ "stacks", 's', NULL, 0, "Kernel stacks for the top holds and waits", 0 },
	{ "top", 'n', "N", 0, "Top N longest holds and waits to show (default 5)", 0 },
	{ "full", OPT_FULL, NULL, 0, "Also trace every read hold (raw mmap_lock tracepoints or read-side rwsem functions)", 0 },
	{ "prometheus", OPT_PROM, "ADDR:PORT", 0, "Serve /metrics (ADDR defaults to 127.0.0.1)", 0 },
	{ "read-end", 'E', "FUNC", 0, "Also end downgraded read phases at FUNC's return (repeatable; then every downgrade stays open until an end probe)", 0 },
	{ "kprobes", OPT_KPROBES, NULL, 0, "Use kprobes instead of fentry/fexit", 0 },
	{ "map-entries", OPT_MAP_ENTRIES, "N", 0, "Entries of each map of holds, waits, locks and stacks (default: 10240 per task, 4096 per lock, 1024 stacks; a full map's losses are counted in drops.map_full, or stacks_lost)", 0 },
	{ "verbose", 'v', NULL, 0, "Name each probe attached, and all of libbpf's messages (else its warnings only if loading fails)", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static double parse_seconds(const char *arg, struct argp_state *state,
			    const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || v <= 0 || v > 1e7)
		argp_error(state, "invalid %s '%s': want seconds > 0", what, arg);
	return v;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;
	long v;

	switch (key) {
	case 'p':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v <= 0 || v > INT_MAX)
			argp_error(state, "invalid PID '%s'", arg);
		env.pid = v;
		break;
	case 'c':
		if (!*arg || strlen(arg) >= TASK_COMM_LEN)
			argp_error(state, "invalid COMM '%s': 1 to %d characters",
				   arg, TASK_COMM_LEN - 1);
		strncpy(env.comm, arg, TASK_COMM_LEN - 1);
		env.filter_comm = true;
		break;
	case 'i':
		env.interval = parse_seconds(arg, state, "interval");
		break;
	case 'd':
		env.duration = parse_seconds(arg, state, "duration");
		break;
	case 'j':
		env.json = true;
		break;
	case 's':
		env.stacks = true;
		break;
	case 'n':
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 0 || v > MAX_TOP)
			argp_error(state, "invalid top N '%s': 0 to %d", arg,
				   MAX_TOP);
		env.top = v;
		break;
	case OPT_CGROUP:
		if (!*arg)
			argp_error(state, "--cgroup needs a path");
		env.cgroup = arg;
		break;
	case OPT_FULL:
		env.full = true;
		break;
	case OPT_PROM:
		env.prom = arg;
		break;
	case 'E':
		if (env.nr_read_end >= MAX_READ_END)
			argp_error(state, "too many -E (max %d)", MAX_READ_END);
		env.read_end[env.nr_read_end++] = arg;
		break;
	case OPT_KPROBES:
		env.kprobes = true;
		break;
	case OPT_MAP_ENTRIES:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 1 || v > MAX_MAP_ENTRIES)
			argp_error(state, "invalid --map-entries '%s': 1 to %d",
				   arg, MAX_MAP_ENTRIES);
		env.map_entries = v;
		break;
	case 'v':
		env.verbose = true;
		break;
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static volatile sig_atomic_t exiting;

static void sig_handler(int sig)
{
	exiting = 1;
}

static int libbpf_print_fn(enum libbpf_print_level level, const char *format,
			   va_list args)
{
	if (env.verbose)
		return vfprintf(stderr, format, args);
	if (level != LIBBPF_DEBUG)	/* printed if loading fails */
		libbpf_log_keep(format, args);
	return 0;
}

/* ---- top-N holds and waits --------------------------------------------- */

static struct top top_holds, top_waits;
static struct mmlockstat_bpf *obj;
static struct ksyms *ksyms;
static struct out_ctx out;	/* what the printers need: set once attached */

static void set_thresh(int which, unsigned long long ns)
{
	__u32 k = which;

	bpf_map__update_elem(obj->maps.thresh, &k, sizeof(k), &ns, sizeof(ns),
			     BPF_ANY);
}

static void top_add(struct top *t, int which, const struct event *e)
{
	int i;

	if (!env.top)
		return;
	if (t->n == env.top && e->total_ns <= t->ev[t->n - 1].total_ns)
		return;
	if (t->n < env.top)
		t->n++;
	for (i = t->n - 1; i > 0 && t->ev[i - 1].total_ns < e->total_ns; i--)
		t->ev[i] = t->ev[i - 1];
	t->ev[i] = *e;
	if (t->n == env.top)
		set_thresh(which, t->ev[t->n - 1].total_ns);
}

static void top_reset(void)
{
	top_holds.n = top_waits.n = 0;
	set_thresh(0, 0);
	set_thresh(1, 0);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct event *e = data;

	if (size < sizeof(*e))
		return 0;
	if (e->kind == EV_HOLD)
		top_add(&top_holds, 0, e);
	else if (e->kind == EV_WAIT)
		top_add(&top_waits, 1, e);
	return 0;
}

/* ---- snapshots ---------------------------------------------------------- */

static struct snap prev;	/* cumulative at the last print */
static unsigned long long prev_ns, start_ns;
static char kernel_release[65];
static const char *probe_kind = "fentry";
static const char *tp_memcg;	/* --full: mmap_lock tracepoint layout */
static int ncpus = 1;
/* --full: read holds from tp_btf on the mmap_lock tracepoints (memcg_id
 * layout) rather than from trampolines on the rwsem read functions. */
static bool read_tp;

/* @dst += @src, bucket by bucket (the max is kept apart). */
static void hist_acc(struct hist *dst, const struct hist *src)
{
	for (int j = 0; j < MAX_SLOTS; j++)
		dst->slots[j] += src->slots[j];
	dst->count += src->count;
	dst->sum += src->sum;
}

/* bpf_link_info of a kprobe perf link as 6.7+ fills it (the installed
 * uapi header may predate it): perf_event.kprobe.missed counts the
 * handler runs the kernel skipped (another kprobe running on that CPU,
 * or, for a kretprobe, no free instance: maxactive tasks in the
 * function). Older kernels leave it zero, type included. */
struct kprobe_link_info {
	__u32 type, id, prog_id, pad;
	__u32 pe_type, pe_pad;
	__u64 func_name;
	__u32 name_len, offset;
	__u64 addr, missed, cookie;
};
#define PERF_EVENT_KPROBE	3	/* enum bpf_perf_event_type */
#define PERF_EVENT_KRETPROBE	4

#define MAX_KP_LINKS	64
static struct bpf_link *kp_links[MAX_KP_LINKS];
static int nr_kp_links;

/* What the kernel lost of ours: kprobe misses (where it reports them) and
 * recursion misses (a program not run because one of ours was running on
 * that CPU: bpf_prog_info.recursion_misses, 5.12+). Cumulative. */
static void read_losses(struct snap *s)
{
	struct bpf_program *p;

	for (int i = 0; i < nr_kp_links; i++) {
		struct kprobe_link_info li;
		__u32 len = sizeof(li);

		memset(&li, 0, sizeof(li));
		if (bpf_obj_get_info_by_fd(bpf_link__fd(kp_links[i]), &li, &len))
			continue;
		if (li.pe_type != PERF_EVENT_KPROBE &&
		    li.pe_type != PERF_EVENT_KRETPROBE)
			continue;
		s->kp_missed_known = true;
		s->kp_missed += li.missed;
	}
	bpf_object__for_each_program(p, obj->obj) {
		struct bpf_prog_info pi;
		__u32 len = sizeof(pi);
		int fd = bpf_program__fd(p);

		if (fd < 0)
			continue;
		memset(&pi, 0, sizeof(pi));
		if (!bpf_obj_get_info_by_fd(fd, &pi, &len))
			s->recursion_misses += pi.recursion_misses;
	}
}

/* hists and maxes are per-CPU arrays: sum the counters, take the largest
 * max; --full's read holds add each CPU's struct rcpu (global data, read
 * in place). Reading one CPU's counters is not atomic with its updates;
 * the next interval picks up anything missed, so counts are never lost. */
static void read_snap(struct snap *s, bool reset_max)
{
	static struct hist *ph;
	static __u64 *pm;
	int n = ncpus;

	if (!ph) {
		ph = calloc(n, sizeof(*ph));
		pm = calloc(n, sizeof(*pm));
		if (!ph || !pm) {
			fprintf(stderr, "mmlockstat: out of memory\n");
			exit(1);
		}
	}
	memset(s, 0, sizeof(*s));
	for (__u32 i = 0; i < NR_HISTS; i++) {
		memset(ph, 0, n * sizeof(*ph));
		memset(pm, 0, n * sizeof(*pm));
		bpf_map__lookup_elem(obj->maps.hists, &i, sizeof(i), ph,
				     n * sizeof(*ph), 0);
		bpf_map__lookup_elem(obj->maps.maxes, &i, sizeof(i), pm,
				     n * sizeof(*pm), 0);
		for (int c = 0; c < n; c++) {
			hist_acc(&s->h[i], &ph[c]);
			if (pm[c] > s->max[i])
				s->max[i] = pm[c];
		}
		if (reset_max) {
			memset(pm, 0, n * sizeof(*pm));
			bpf_map__update_elem(obj->maps.maxes, &i, sizeof(i),
					     pm, n * sizeof(*pm), BPF_ANY);
		}
	}
	for (int c = 0; c < n && c < MAX_RCPUS; c++) {
		struct rcpu *r = &obj->bss->rcpus[c];

		hist_acc(&s->h[H_READ_HOLD], &r->hold);
		s->c[C_VMA_FAULTS] += r->vma_faults;
		s->c[C_VMA_FALLBACKS] += r->vma_fallbacks;
		if (r->slot.lock)
			s->open_reads++;
		if (r->max > s->max[H_READ_HOLD])
			s->max[H_READ_HOLD] = r->max;
		if (reset_max)
			r->max = 0;
	}
	for (__u32 i = 0; i < NR_COUNTERS; i++) {
		__u64 v = 0;

		bpf_map__lookup_elem(obj->maps.counters, &i, sizeof(i), &v,
				     sizeof(v), 0);
		s->c[i] += v;
	}
	read_losses(s);
}

static void delta(struct snap *d, const struct snap *cur, const struct snap *old)
{
	*d = *cur;
	for (int i = 0; i < NR_HISTS; i++) {
		for (int j = 0; j < MAX_SLOTS; j++)
			d->h[i].slots[j] -= old->h[i].slots[j];
		d->h[i].count -= old->h[i].count;
		d->h[i].sum -= old->h[i].sum;
		if (!d->h[i].count)
			d->max[i] = 0;
	}
	for (int i = 0; i < NR_COUNTERS; i++)
		if (i != C_TP_MEMCG_ID && i != C_TP_MEMCG_PATH)
			d->c[i] -= old->c[i];
	d->kp_missed -= old->kp_missed;
	d->recursion_misses -= old->recursion_misses;
}

/* The kernel has per-VMA locks we can trace (6.4 to 6.14) */
static bool vma_avail;

static void print_period(void)
{
	struct snap cur, d;
	unsigned long long now = mono_ns();
	double secs = (now - prev_ns) / 1e9;

	/* drain what is in flight so the top lists match the histograms */
	read_snap(&cur, true);
	delta(&d, &cur, &prev);
	if (env.json)
		print_json(&out, &d, secs, &top_holds, &top_waits);
	else
		print_text(&out, &d, secs, &top_holds, &top_waits);
	prev = cur;
	prev_ns = now;
	top_reset();
}

/* --prometheus: the histograms split by the vm.munmap_lock_mode in force
 * when their samples were taken, polled every MODE_POLL_NS (a sample taken
 * in the poll interval in which the mode changed may be counted under
 * either). "native": the kernel has no such sysctl (upstream downgrade). */
#define MODE_POLL_NS	200000000ULL
static struct mode_snap by_mode[] = {
	{ "exclusive" }, { "downgrade" }, { "section" }, { "native" },
	{ "unknown" },
};
#define NR_MODES	(sizeof(by_mode) / sizeof(by_mode[0]))
static struct snap mode_prev;
static unsigned long long mode_polled;

static int current_mode(void)
{
	char buf[32] = "";
	FILE *f = fopen("/proc/sys/vm/munmap_lock_mode", "r");

	if (!f)
		return 3;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	for (int i = 0; i < 3; i++)
		if (!strcmp(buf, by_mode[i].name))
			return i;
	return 4;
}

static void mode_poll(void)
{
	struct snap cur, d;
	struct snap *m;
	int mode = current_mode();

	read_snap(&cur, false);
	delta(&d, &cur, &mode_prev);
	mode_prev = cur;
	m = &by_mode[mode].s;
	for (int i = 0; i < NR_HISTS; i++)
		hist_acc(&m->h[i], &d.h[i]);
	by_mode[mode].seen = true;
	mode_polled = mono_ns();
}

/* --prometheus: http_serve_pending()'s body callback */
static void serve_metrics(FILE *f, void *ctx)
{
	mode_poll();
	prom_body(f, &out, by_mode, NR_MODES, &mode_prev);
}

/* ---- probes: one place chooses, per kernel, then one attach ------------ */

/* Functions that end a downgraded read phase in default mode (the first
 * that returns wins; absent ones are skipped). */
static const char *const read_end_funcs[] = {
	"do_mas_munmap", "__vm_munmap", "do_vmi_munmap",
	"__x64_sys_brk", "__x64_sys_mremap",
};

/* What this kernel gets: set by choose_probes(), read by attach_probes()
 * and the output. */
static struct {
	bool kprobes;	/* kprobes, else fentry/fexit */
	bool wait;	/* lock:contention_begin/end (tp_btf) */
	bool trylock;	/* down_write_trylock() exists */
} pc;

/* --full with fentry: every read hold of the task's own mmap_lock. */
static struct read_prog {
	struct bpf_program **prog;
	const char *func;
	bool required;
	bool blocking;	/* a blocking down_read*(): also used with tp_btf */
} read_progs[] = {
	{ NULL, "down_read_trylock", true, false },
	{ NULL, "down_read", true, true },
	{ NULL, "down_read", true, true },
	{ NULL, "down_read_killable", false, true },
	{ NULL, "down_read_killable", false, true },
	{ NULL, "down_read_interruptible", false, true },
	{ NULL, "down_read_interruptible", false, true },
	{ NULL, "up_read", true, false },
};

static void read_progs_init(void)
{
	read_progs[0].prog = &obj->progs.down_read_trylock_exit;
	read_progs[1].prog = &obj->progs.down_read_entry;
	read_progs[2].prog = &obj->progs.down_read_exit;
	read_progs[3].prog = &obj->progs.down_read_killable_entry;
	read_progs[4].prog = &obj->progs.down_read_killable_exit;
	read_progs[5].prog = &obj->progs.down_read_interruptible_entry;
	read_progs[6].prog = &obj->progs.down_read_interruptible_exit;
	read_progs[7].prog = &obj->progs.up_read_entry;
}

/*
 * --full: which probes see the read holds and what they cost, as measured
 * by scripts/bench-overhead (icount guest, faultbench; docs/BENCH.md).
 */
static void full_cost_note(void)
{
	const char *how, *cost;

	if (pc.kprobes) {
		how = "the mmap_lock tracepoints (perf) and a kprobe on up_read";
		cost = "measured +75-87 % CPU per page fault on 6.1";
	} else if (read_tp) {
		how = "tp_btf on the mmap_lock tracepoints";
		cost = "measured +7.6 % CPU per page fault on the lab kernel";
	} else {
		how = "fentry/fexit on the rwsem read functions (every rwsem "
		      "reader pays, VMA locks included)";
		cost = "measured +9.7 % CPU per page fault on Debian's 6.1, "
		       "+10.3 % on 6.12";
	}
	fprintf(stderr, "mmlockstat: --full: read holds via %s: %s "
		"(under QEMU; docs/BENCH.md)\n", how, cost);
}

/* Which layout the kernel's mmap_lock tracepoints have (JSON
 * tracepoint_memcg): 6.1's memcg_path or the backported memcg_id. */
static const char *tracepoint_layout(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const char *res = NULL;
	const struct btf_type *t;
	const struct btf_member *m;
	int id;

	if (!btf)
		return NULL;
	id = btf__find_by_name_kind(btf, "trace_event_raw_mmap_lock", BTF_KIND_STRUCT);
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		m = btf_members(t);
		for (int i = 0; i < btf_vlen(t); i++, m++) {
			const char *n = btf__name_by_offset(btf, m->name_off);

			if (!strcmp(n, "memcg_id"))
				res = "id";
			else if (!strcmp(n, "__data_loc_memcg_path"))
				res = "path";
		}
	}
	btf__free(btf);
	return res;
}

/*
 * Per-VMA locks (6.4+, CONFIG_PER_VMA_LOCK): traced where user page faults
 * go through lock_vma_under_rcu() and, on fallback, lock_mm_and_find_vma(),
 * and the VMA lock is struct vma_lock's rwsem (to 6.14; 6.15 made it a
 * reference count). Kernels without them (6.1) say nothing: their faults
 * take mmap_lock, which the rest traces. One line when they exist but
 * cannot be traced.
 */
static bool vma_locks_traceable(void)
{
	const char *why = NULL;

	if (!vmlinux_btf_has_func("lock_vma_under_rcu"))
		return false;
	if (pc.kprobes)
		why = "needs fentry/fexit (not with --kprobes)";
	else if (!pc.wait)
		why = "needs the lock:contention_begin tracepoint";
	else if (!vmlinux_btf_has_func("lock_mm_and_find_vma"))
		why = "no lock_mm_and_find_vma() to see fallbacks";
	else if (!vmlinux_btf_has_member("vm_area_struct", "vm_lock"))
		why = "the VMA lock is not struct vma_lock's rwsem (6.15+)";
	if (why)
		fprintf(stderr, "mmlockstat: warning: per-VMA locks not traced: "
			"%s; vma_write_wait and vma_fallback_wait are left out\n", why);
	return !why;
}

static void use(struct bpf_program *p)
{
	bpf_program__set_autoload(p, true);
}

/*
 * Every choice of what to load, in one place: nothing is loaded unless it is
 * named here, and attach_probes() attaches everything loaded. Returns -1
 * (having said why) if a function the tool needs is missing.
 */
static int choose_probes(bool kprobes)
{
	static const char *const required[] = {
		"down_write", "down_write_killable", "up_write", "downgrade_write",
	};
	struct bpf_program *p;
	bool exit_mmap;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(required); i++)
		if (!kallsyms_has_func(required[i])) {
			fprintf(stderr, "mmlockstat: kernel function %s not found: "
				"cannot trace write holds\n", required[i]);
			return -1;
		}
	read_progs_init();
	if (env.full && !kprobes)
		for (i = 0; i < ARRAY_SIZE(read_progs); i++)
			if (read_progs[i].required &&
			    !kallsyms_has_func(read_progs[i].func)) {
				fprintf(stderr, "mmlockstat: kernel function %s not "
					"found: cannot trace read holds (--full)\n",
					read_progs[i].func);
				return -1;
			}
	pc.kprobes = kprobes;
	pc.trylock = kallsyms_has_func("down_write_trylock");
	pc.wait = vmlinux_btf_has_tracepoint("contention_begin") &&
		  vmlinux_btf_has_tracepoint("contention_end");
	exit_mmap = kallsyms_has_func("exit_mmap");
	if (!exit_mmap)
		fprintf(stderr, "mmlockstat: warning: no exit_mmap(): a dead "
			"process's lock stays in the maps (drops.map_full may "
			"grow on a long run)\n");
	vma_avail = vma_locks_traceable();

	bpf_object__for_each_program(p, obj->obj)
		bpf_program__set_autoload(p, false);

	/* the write side: every write hold of an mm's lock */
	if (!kprobes) {
		use(obj->progs.down_write_entry);
		use(obj->progs.down_write_exit);
		use(obj->progs.down_write_killable_entry);
		use(obj->progs.down_write_killable_exit);
		use(obj->progs.up_write_entry);
		use(obj->progs.downgrade_write_entry);
		if (pc.trylock) {
			use(obj->progs.down_write_trylock_entry);
			use(obj->progs.down_write_trylock_exit);
		}
		if (exit_mmap)
			use(obj->progs.exit_mmap_entry);
	} else {
		/* kp_down_write_entry: also down_write_killable and
		 * down_write_trylock (attach_probes()) */
		use(obj->progs.kp_down_write_entry);
		use(obj->progs.kp_down_write_exit);
		use(obj->progs.kp_down_write_killable_exit);
		use(obj->progs.kp_up_write_entry);
		use(obj->progs.kp_downgrade_write_entry);
		if (pc.trylock)
			use(obj->progs.kp_down_write_trylock_exit);
		if (exit_mmap)
			use(obj->progs.kp_exit_mmap_entry);
	}
	/* waits */
	if (pc.wait) {
		use(obj->progs.contention_begin);
		use(obj->progs.contention_end);
	}
	if (vma_avail) {
		use(obj->progs.vma_lock_exit);
		use(obj->progs.fallback_entry);
		use(obj->progs.fallback_exit);
	}
	/* read holds: downgraded phases only (ended at the downgrading
	 * function's return), or --full: every one */
	if (!env.full) {
		use(obj->progs.read_end_kretprobe);
	} else if (kprobes) {
		use(obj->progs.tp_start_locking);
		use(obj->progs.tp_acquire_returned);
		use(obj->progs.tp_released);
		use(obj->progs.kp_up_read_entry);
	} else {
		for (i = 0; i < ARRAY_SIZE(read_progs); i++)
			if (kallsyms_has_func(read_progs[i].func) &&
			    (!read_tp || read_progs[i].blocking))
				use(*read_progs[i].prog);
		if (read_tp) {
			use(obj->progs.tpb_acquire_returned);
			use(obj->progs.tpb_released);
		}
		use(obj->progs.exec_done);
		use(obj->progs.exit_done);
	}

	obj->rodata->vma_locks = vma_avail;
	obj->rodata->full_fentry = env.full && !kprobes && !read_tp;
	obj->rodata->full_tp = read_tp && !kprobes;
	obj->rodata->nr_cpus = ncpus;
	obj->rodata->dg_by_return = !env.full;
	obj->rodata->dg_any = env.nr_read_end > 0;
	obj->rodata->dg_sysnr[0] = SYS_munmap;
	obj->rodata->dg_sysnr[1] = SYS_brk;
	obj->rodata->dg_sysnr[2] = SYS_mremap;

	obj->rodata->targ_tgid = env.pid;
	obj->rodata->filter_comm = env.filter_comm;
	obj->rodata->filter_cg = env.cgfd >= 0;
	memcpy((char *)obj->rodata->targ_comm, env.comm, TASK_COMM_LEN);
	obj->rodata->want_stacks = env.stacks;
	if (env.map_entries) {
		struct bpf_map *maps[] = {
			obj->maps.holds, obj->maps.owners, obj->maps.mmlocks,
			obj->maps.wacqs, obj->maps.qwriters, obj->maps.waits,
			obj->maps.rholds, obj->maps.stacks,
		};

		for (i = 0; i < ARRAY_SIZE(maps); i++)
			bpf_map__set_max_entries(maps[i], env.map_entries);
	}
	return 0;
}

/* Its misses are read from the kernel (read_losses()). */
static void keep_kp_link(struct bpf_link *l)
{
	if (nr_kp_links < MAX_KP_LINKS)
		kp_links[nr_kp_links++] = l;
}

/* A kprobe program on one more function: SEC() names only one. */
static int attach_kprobe(struct bpf_program *p, const char *func, bool ret,
			 bool quiet)
{
	struct bpf_link *l = bpf_program__attach_kprobe(p, ret, func);

	if (!l) {
		if (!quiet)
			fprintf(stderr, "mmlockstat: cannot attach %s to %s: %s\n",
				ret ? "kretprobe" : "kprobe", func, strerror(errno));
		return -1;
	}
	keep_kp_link(l);
	if (env.verbose)
		fprintf(stderr, "mmlockstat: probe %s/%s\n",
			ret ? "kretprobe" : "kprobe", func);
	return 0;
}

/*
 * One skeleton attach for every program loaded whose SEC() names its
 * target, in the object's order: each end probe is defined after its
 * start, so a hold is only ended once its start can be seen. Then the
 * kprobes on more functions than their SEC() names.
 */
static int attach_probes(void)
{
	const struct bpf_object_skeleton *s = obj->skeleton;
	int err, n = 0;

	err = mmlockstat_bpf__attach(obj);
	if (err) {
		bpf_failed("mmlockstat", "attach", err, env.verbose);
		return -1;
	}
	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_program *p = *s->progs[i].prog;
		struct bpf_link *l = *s->progs[i].link;

		if (!l)
			continue;
		if (bpf_program__type(p) == BPF_PROG_TYPE_KPROBE)
			keep_kp_link(l);
		if (env.verbose)
			fprintf(stderr, "mmlockstat: probe %s\n",
				bpf_program__section_name(p));
	}
	if (pc.kprobes &&
	    (attach_kprobe(obj->progs.kp_down_write_entry, "down_write_killable", false, false) ||
	     (pc.trylock &&
	      attach_kprobe(obj->progs.kp_down_write_entry, "down_write_trylock", false, false))))
		return -1;
	if (env.full) {
		if (env.nr_read_end)
			fprintf(stderr, "mmlockstat: -E ignored with --full "
				"(read phases end at up_read)\n");
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(read_end_funcs); i++)
		if (kallsyms_has_func(read_end_funcs[i]) &&
		    !attach_kprobe(obj->progs.read_end_kretprobe, read_end_funcs[i], true, true))
			n++;
	if (!n)
		fprintf(stderr, "mmlockstat: warning: none of do_mas_munmap, "
			"__vm_munmap, do_vmi_munmap found: downgraded read phases "
			"of munmap are not measured (use --full)\n");
	for (int i = 0; i < env.nr_read_end; i++) {
		if (!kallsyms_has_func(env.read_end[i])) {
			fprintf(stderr, "mmlockstat: -E %s: no such kernel function\n",
				env.read_end[i]);
			return -1;
		}
		if (attach_kprobe(obj->progs.read_end_kretprobe, env.read_end[i], true, false))
			return -1;
	}
	return 0;
}

/* Open, choose, load; on a kernel whose fentry/fexit do not load (no
 * trampolines), once more with kprobes. */
static int open_and_load(void)
{
	int err;

	for (bool kprobes = env.kprobes; ; kprobes = true) {
		obj = mmlockstat_bpf__open();
		if (!obj) {
			fprintf(stderr, "mmlockstat: cannot open BPF object: %s\n",
				strerror(errno));
			return -1;
		}
		err = choose_probes(kprobes);
		if (err)
			return err;
		err = mmlockstat_bpf__load(obj);
		if (!err || kprobes)
			break;
		fprintf(stderr, "mmlockstat: fentry/fexit unavailable (%s); "
			"falling back to kprobes\n", strerror(-err));
		mmlockstat_bpf__destroy(obj);
	}
	if (err) {
		bpf_failed("mmlockstat", "load", err, env.verbose);
		return err;
	}
	if (env.verbose)
		fprintf(stderr, "mmlockstat: chose %s write probes, %s, %s%s\n",
			pc.kprobes ? "kprobe" : "fentry/fexit",
			pc.wait ? "tp_btf contention waits" : "no waits",
			!env.full ? "kretprobes ending downgraded read phases" :
			pc.kprobes ? "mmap_lock tracepoints (perf) for read holds" :
			read_tp ? "tp_btf mmap_lock tracepoints for read holds" :
				  "fentry/fexit read holds",
			vma_avail ? ", per-VMA locks" : "");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = argp_program_doc,
	};
	struct ring_buffer *rb = NULL;
	unsigned long long next_print = 0, end_ns = 0, last_pid_check = 0;
	struct utsname u;
	int err, lfd = -1;
	char errbuf[256];

	argp_err_exit_status = 2;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;

	if (env.pid && kill(env.pid, 0) && errno == ESRCH) {
		fprintf(stderr, "mmlockstat: pid %d does not exist\n", env.pid);
		return 1;
	}
	if (env.cgroup) {
		env.cgfd = cgroup_open("mmlockstat", env.cgroup);
		if (env.cgfd < 0)
			return 1;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "mmlockstat: needs root (loads BPF programs)\n");
		return 1;
	}
	if (!kernel_has_btf()) {
		fprintf(stderr, "mmlockstat: kernel has no BTF: rebuild with "
			"CONFIG_DEBUG_INFO_BTF=y\n");
		return 1;
	}
	if (env.prom) {
		lfd = http_listen(env.prom, errbuf, sizeof(errbuf));
		if (lfd < 0) {
			fprintf(stderr, "mmlockstat: --prometheus: %s\n", errbuf);
			return 1;
		}
	}
	uname(&u);
	snprintf(kernel_release, sizeof(kernel_release), "%s", u.release);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus < 1) {
		fprintf(stderr, "mmlockstat: cannot count possible CPUs: %s\n",
			strerror(-ncpus));
		return 1;
	}
	if (env.full)
		tp_memcg = tracepoint_layout();
	/* MMLS_READ_PROBES=fentry forces the trampolines (comparison) */
	read_tp = env.full && !env.kprobes && tp_memcg && !strcmp(tp_memcg, "id") &&
		  !(getenv("MMLS_READ_PROBES") && !strcmp(getenv("MMLS_READ_PROBES"), "fentry"));
	libbpf_set_print(libbpf_print_fn);

	err = open_and_load();
	if (err)
		goto cleanup;
	if (env.cgfd >= 0 &&
	    cgroup_install("mmlockstat", bpf_map__fd(obj->maps.cgroup_map), env.cgfd)) {
		err = -1;
		goto cleanup;
	}
	if (pc.kprobes)
		probe_kind = "kprobe";
	if (!pc.wait)
		fprintf(stderr, "mmlockstat: warning: no lock:contention_begin "
			"tracepoint (kernel < 5.19?): read_wait and write_wait "
			"stay empty\n");
	err = attach_probes();
	if (err)
		goto cleanup;
	if (env.full)
		full_cost_note();

	rb = ring_buffer__new(bpf_map__fd(obj->maps.events), handle_event,
			      NULL, NULL);
	if (!rb) {
		err = -errno;
		fprintf(stderr, "mmlockstat: cannot create ring buffer: %s\n",
			strerror(errno));
		goto cleanup;
	}
	if (env.stacks) {
		ksyms = ksyms__load();
		if (!ksyms)
			fprintf(stderr, "mmlockstat: warning: cannot read "
				"/proc/kallsyms: stacks print as addresses\n");
	}
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);

	start_ns = prev_ns = mono_ns();
	out = (struct out_ctx){
		.pid = env.pid,
		.comm = env.filter_comm ? env.comm : NULL,
		.cgroup = env.cgroup,
		.full = env.full,
		.stacks = env.stacks,
		.vma_avail = vma_avail,
		.kernel = kernel_release,
		.probes = probe_kind,
		.read_probes = pc.kprobes ? "tracepoint" :
			       read_tp ? "tp_btf" : "fentry",
		.tp_memcg = tp_memcg,
		.start_ns = start_ns,
		.stack_map = obj->maps.stacks,
		.ksyms = ksyms,
	};
	memset(&prev, 0, sizeof(prev));	/* first period counts from load */
	if (env.interval)
		next_print = start_ns + env.interval * 1e9;
	if (env.duration)
		end_ns = start_ns + env.duration * 1e9;
	fprintf(stderr, "Tracing mmap_lock (%s, %s probes%s%s)%s... Hit Ctrl-C to end.\n",
		env.full ? "full: every read hold" :
			   "default: write side + contention + downgraded read phases",
		probe_kind, vma_avail ? ", per-VMA locks" : "",
		env.stacks ? ", stacks" : "",
		lfd >= 0 ? ", serving /metrics" : "");

	while (!exiting) {
		unsigned long long now;

		err = ring_buffer__poll(rb, lfd >= 0 ? 50 : 100);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "mmlockstat: ring buffer: %s\n",
				strerror(-err));
			goto cleanup;
		}
		err = 0;
		now = mono_ns();
		if (lfd >= 0 && now - mode_polled >= MODE_POLL_NS)
			mode_poll();
		if (lfd >= 0)
			http_serve_pending(lfd, serve_metrics, NULL);
		if (env.pid && now - last_pid_check > 1000000000ULL) {
			last_pid_check = now;
			if (kill(env.pid, 0) && errno == ESRCH) {
				fprintf(stderr, "mmlockstat: pid %d exited\n", env.pid);
				break;
			}
		}
		if (end_ns && now >= end_ns)
			break;
		if (next_print && now >= next_print) {
			ring_buffer__consume(rb);
			print_period();
			next_print += env.interval * 1e9;
		}
	}
	ring_buffer__consume(rb);
	if (!env.interval || mono_ns() - prev_ns > 1000000ULL)
		print_period();

cleanup:
	ring_buffer__free(rb);
	mmlockstat_bpf__destroy(obj);
	ksyms__free(ksyms);
	if (lfd >= 0)
		close(lfd);
	return err ? 1 : 0;
}
