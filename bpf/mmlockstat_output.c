// SPDX-License-Identifier: GPL-2.0
/*
 * mmlockstat_output: how mmlockstat shows what it measured: the text
 * report, JSON lines (schema 1, README.md) and the Prometheus /metrics
 * body. mmlockstat.c collects and hands over a struct snap, the top lists
 * and a struct out_ctx; nothing here reads the BPF maps but the stacks.
 */
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "mmlockstat_output.h"
#include "http_exporter.h"
#include "trace_helpers.h"

/* JSON contract names (DESIGN.md section 5), in enum hist_id order. */
static const char *const hist_names[NR_HISTS] = {
	"write_hold", "read_hold", "downgrade_write_phase",
	"downgrade_read_phase", "read_wait", "write_wait",
	"write_acquire", "read_acquire", "vma_write_wait", "vma_fallback_wait",
};

static const char *const hist_help[NR_HISTS] = {
	"mmap_lock held for write (to up_write or downgrade_write)",
	"mmap_lock held for read (default mode: downgraded read phases only)",
	"write phase of mmap_lock holds that were downgraded",
	"read phase of mmap_lock holds that were downgraded",
	"readers blocked on mmap_lock (contention slow path)",
	"writers blocked on mmap_lock (contention slow path)",
	"down_write on mmap_lock, entry to return (incl. fast path and spin)",
	"blocking read acquisitions of mmap_lock, down_read* entry to return (trylocks not timed)",
	"writers blocked in vma_start_write() on a VMA lock a page fault holds (per-VMA locks)",
	"mmap_lock waits of user page faults that fell back from the VMA lock (per-VMA locks)",
};

/* This run can fill histogram @i: --full for read_acquire, per-VMA locks
 * for vma_*; only these are printed. */
static bool hist_shown(const struct out_ctx *o, int i)
{
	if (i == H_VMA_WRITE_WAIT || i == H_VMA_FALLBACK_WAIT)
		return o->vma_avail;
	return o->full || i != H_READ_ACQUIRE;
}

/* ---- naming ------------------------------------------------------------ */

static const char *op_name(int sysnr)
{
	switch (sysnr) {
	case SYS_KTHREAD: return "kthread";
	case SYS_FAULT: return "fault";
	case 9: return "mmap";
	case 10: return "mprotect";
	case 11: return "munmap";
	case 12: return "brk";
	case 25: return "mremap";
	case 28: return "madvise";
	case 59: case 322: return "execve";
	default: return "other";
	}
}

static const char *phase_name(unsigned int phase)
{
	switch (phase) {
	case PHASE_WRITE: return "write";
	case PHASE_DG_READ: return "downgraded-read";
	case PHASE_READ: return "read";
	case PHASE_VMA_READ: return "vma-read";
	default: return "none";
	}
}

static const char *hold_kind_name(unsigned int sub)
{
	switch (sub) {
	case HOLD_WRITE: return "write";
	case HOLD_DOWNGRADE: return "downgrade";
	case HOLD_READ: return "read";
	default: return "?";
	}
}

static const char *wait_type_name(const struct event *e)
{
	switch (e->sub) {
	case WAIT_WRITE: return "write";
	case WAIT_VMA_WRITE: return "vma-write";
	default: return "read";
	}
}

/* ---- stacks ------------------------------------------------------------ */

/* Kernel stack of @stackid without the BPF program and trampoline frames
 * on top; returns the number of frames. */
static int read_stack(const struct out_ctx *o, int stackid, __u64 *ips)
{
	int n = 0, skip = 0;

	if (stackid < 0)
		return 0;
	if (bpf_map__lookup_elem(o->stack_map, &stackid, sizeof(stackid), ips,
				 STACK_DEPTH * sizeof(__u64), 0))
		return 0;
	while (n < STACK_DEPTH && ips[n])
		n++;
	while (skip < n) {
		const struct ksym *s = ksyms__map_addr(o->ksyms, ips[skip]);

		if (!s || (strncmp(s->name, "bpf_prog_", 9) &&
			   strncmp(s->name, "bpf_trampoline_", 15) &&
			   strcmp(s->name, "kretprobe_trampoline") &&
			   strcmp(s->name, "__kretprobe_trampoline")))
			break;
		skip++;
	}
	memmove(ips, ips + skip, (n - skip) * sizeof(*ips));
	return n - skip;
}

static const char *ksym_name(const struct out_ctx *o, __u64 ip, char *buf,
			     size_t len)
{
	const struct ksym *s = ksyms__map_addr(o->ksyms, ip);

	if (!s)
		snprintf(buf, len, "0x%llx", (unsigned long long)ip);
	else
		snprintf(buf, len, "%s+0x%llx", s->name,
			 (unsigned long long)(ip - s->addr));
	return buf;
}

static void print_stack_text(const struct out_ctx *o, int stackid,
			     const char *indent)
{
	__u64 ips[STACK_DEPTH];
	char b[128];
	int n = read_stack(o, stackid, ips);

	if (!n) {
		printf("%s[stack unavailable]\n", indent);
		return;
	}
	for (int i = 0; i < n; i++)
		printf("%s%s\n", indent, ksym_name(o, ips[i], b, sizeof(b)));
}

static void json_stack(const struct out_ctx *o, struct jw *w, int stackid)
{
	__u64 ips[STACK_DEPTH];
	char b[128];
	int n = read_stack(o, stackid, ips);

	jw_key(w, "stack");
	jw_arr_open(w);
	for (int i = 0; i < n; i++)
		jw_str(w, ksym_name(o, ips[i], b, sizeof(b)));
	jw_arr_close(w);
}

/* ---- output ------------------------------------------------------------ */

/* The causes of loss, in output order: the JSON "drops" keys (and the
 * /metrics cause labels), the text warning's words, the count, and
 * whether the kernel reports it at all (kprobe misses: 6.7+). */
struct loss {
	const char *key;
	const char *text;
	unsigned long long n;
	bool known;
};

enum { NR_LOSSES = 6 };

static void losses(const struct snap *d, struct loss l[NR_LOSSES])
{
	const struct loss all[NR_LOSSES] = {
		{ "map_full", "map full (raise --map-entries)", d->c[C_DROP_MAP], true },
		{ "map_busy", "map busy", d->c[C_DROP_BUSY], true },
		{ "ringbuf_full", "ring buffer full", d->c[C_DROP_RINGBUF], true },
		{ "kprobe_misses", "kprobe misses", d->kp_missed, d->kp_missed_known },
		{ "recursion_misses", "recursion misses", d->recursion_misses, true },
		/* last, and not in the total: mostly a hold or wait in
		 * progress when tracing began, nothing of it lost but its
		 * start */
		{ "ended_without_start", "ended without a start (begun before tracing?)",
		  d->c[C_NO_START], true },
	};

	memcpy(l, all, sizeof(all));
}

/* Events lost, all causes but ended_without_start. */
static unsigned long long lost_total(const struct loss l[NR_LOSSES])
{
	unsigned long long n = 0;

	for (int i = 0; i < NR_LOSSES - 1; i++)
		n += l[i].n;
	return n;
}

/* One warning line naming every cause of loss that is not zero. */
static void print_losses(const struct loss l[NR_LOSSES])
{
	const char *sep = "";

	if (!lost_total(l) && !l[NR_LOSSES - 1].n)
		return;
	printf("warning: not recorded:");
	for (int i = 0; i < NR_LOSSES; i++) {
		if (!l[i].n)
			continue;
		printf("%s %llu %s", sep, l[i].n, l[i].text);
		sep = ",";
	}
	printf("\n");
}

void print_text(const struct out_ctx *o, const struct snap *d, double secs,
		const struct top *holds, const struct top *waits)
{
	char t[32], b1[32], b2[32], b3[32], b4[32];
	time_t now = time(NULL);
	struct loss l[NR_LOSSES];
	bool any = false;

	strftime(t, sizeof(t), "%H:%M:%S", localtime(&now));
	losses(d, l);
	printf("\n%s  mmap_lock over %.2fs  drops %llu  unended-read-phases %llu"
	       "  untracked-downgrades %llu\n",
	       t, secs, lost_total(l), d->c[C_UNENDED], d->c[C_DG_UNTRACKED]);
	print_losses(l);
	if (o->stacks && d->c[C_STACK_LOST])
		printf("warning: %llu kernel stack(s) not recorded (stack map full, "
		       "or two stacks with one hash)\n", d->c[C_STACK_LOST]);
	if (o->full && d->c[C_LEFT_MM_UNTIMED])
		printf("warning: %llu read hold(s) released after exec/exit left the mm, "
		       "on another CPU: not timed\n", d->c[C_LEFT_MM_UNTIMED]);
	if (o->vma_avail)
		printf("per-VMA locks: %llu user page faults took a VMA lock, %llu went on to mmap_lock\n",
		       d->c[C_VMA_FAULTS], d->c[C_VMA_FALLBACKS]);
	for (int i = 0; i < NR_HISTS; i++) {
		const struct hist *h = &d->h[i];

		if (!hist_shown(o, i) || !h->count)
			continue;
		any = true;
		printf("\n%s: count %llu  sum %s  max %s  p50 %s  p99 %s\n",
		       hist_names[i], h->count, fmt_ns(b1, sizeof(b1), h->sum),
		       fmt_ns(b2, sizeof(b2), d->max[i]),
		       fmt_ns(b3, sizeof(b3), log2_quantile(h->slots, MAX_SLOTS, 0.5, d->max[i])),
		       fmt_ns(b4, sizeof(b4), log2_quantile(h->slots, MAX_SLOTS, 0.99, d->max[i])));
		print_log2_hist(stdout, h->slots, MAX_SLOTS, "nsecs");
	}
	if (!any)
		printf("no mmap_lock holds or waits seen\n");

	if (holds->n) {
		printf("\nLongest holds:\n  %-10s %-10s %-10s %-9s %-7s %-16s %s\n",
		       "TOTAL", "WRITE", "READ", "KIND", "PID", "COMM", "OP");
		for (int i = 0; i < holds->n; i++) {
			const struct event *e = &holds->ev[i];

			printf("  %-10s %-10s %-10s %-9s %-7u %-16s %s\n",
			       fmt_ns(b1, sizeof(b1), e->total_ns),
			       fmt_ns(b2, sizeof(b2), e->write_ns),
			       fmt_ns(b3, sizeof(b3), e->read_ns),
			       hold_kind_name(e->sub), e->pid, e->comm,
			       op_name(e->sysnr));
			if (o->stacks)
				print_stack_text(o, e->stackid, "        ");
		}
	}
	if (waits->n) {
		printf("\nLongest waits (holder = who held the lock when the wait began):\n"
		       "  %-10s %-9s %-7s %-16s %-6s <- HOLDER %-7s %-16s %-8s %s\n",
		       "WAIT", "TYPE", "PID", "COMM", "OP", "PID", "COMM", "OP", "PHASE");
		for (int i = 0; i < waits->n; i++) {
			const struct event *e = &waits->ev[i];

			printf("  %-10s %-9s %-7u %-16s %-6s <- ",
			       fmt_ns(b1, sizeof(b1), e->total_ns),
			       e->vma_fallback ? "read(vma)" : wait_type_name(e),
			       e->pid, e->comm, op_name(e->sysnr));
			if (e->has_holder)
				printf("HOLDER %-7u %-16s %-8s %s\n", e->holder.pid,
				       e->holder.comm, op_name(e->holder.sysnr),
				       phase_name(e->holder.phase));
			else
				printf("unknown (reader or untracked)\n");
			/* readers do not pass a queued writer: the chain */
			if (e->has_queued)
				printf("  %-10s %-9s via queued writer %u/%u %s (%s), "
				       "queued %s before: it waits for the holder, "
				       "the reader for both\n", "", "",
				       e->queued.pid, e->queued.tid, e->queued.comm,
				       op_name(e->queued.sysnr),
				       fmt_ns(b1, sizeof(b1), e->queued.since_ns));
			if (o->stacks) {
				print_stack_text(o, e->stackid, "        ");
				if (e->has_holder) {
					printf("      holder acquired at:\n");
					print_stack_text(o, e->holder.stackid, "        ");
				}
			}
		}
	}
	fflush(stdout);
}

/* The task of a hold, a wait, a holder or a queued writer. */
static void json_task(struct jw *w, unsigned int pid, unsigned int tid,
		      const char *comm, int sysnr)
{
	jw_ku64(w, "pid", pid);
	jw_ku64(w, "tid", tid);
	jw_kstr(w, "comm", comm);
	jw_kstr(w, "op", op_name(sysnr));
	jw_ki64(w, "syscall", sysnr);
}

static void json_holder(const struct out_ctx *o, struct jw *w,
			const struct holder *h)
{
	jw_obj_open(w);
	json_task(w, h->pid, h->tid, h->comm, h->sysnr);
	jw_kstr(w, "phase", phase_name(h->phase));
	if (o->stacks)
		json_stack(o, w, h->stackid);
	jw_obj_close(w);
}

void print_json(const struct out_ctx *o, const struct snap *d, double secs,
		const struct top *holds, const struct top *waits)
{
	struct loss l[NR_LOSSES];
	struct jw w;

	jw_init(&w, stdout);
	jw_obj_open(&w);
	jw_ku64(&w, "schema", 1);
	jw_kstr(&w, "tool", "mmlockstat");
	jw_kstr(&w, "kernel", o->kernel);
	jw_kdouble(&w, "interval_s", secs);
	jw_ku64(&w, "ts", (unsigned long long)time(NULL));
	jw_kstr(&w, "mode", o->full ? "full" : "default");
	jw_kstr(&w, "probes", o->probes);
	if (o->full)
		jw_kstr(&w, "read_probes", o->read_probes);
	if (o->full)
		jw_kstr(&w, "tracepoint_memcg",
			d->c[C_TP_MEMCG_ID] ? "id" :
			d->c[C_TP_MEMCG_PATH] ? "path" :
			o->tp_memcg ? o->tp_memcg : "unknown");
	jw_key(&w, "filter");
	jw_obj_open(&w);
	if (o->pid)
		jw_ku64(&w, "pid", o->pid);
	if (o->comm)
		jw_kstr(&w, "comm", o->comm);
	if (o->cgroup)
		jw_kstr(&w, "cgroup", o->cgroup);
	jw_obj_close(&w);

	jw_key(&w, "histograms");
	jw_obj_open(&w);
	for (int i = 0; i < NR_HISTS; i++) {
		const struct hist *h = &d->h[i];

		if (!hist_shown(o, i))
			continue;
		jw_key(&w, hist_names[i]);
		jw_obj_open(&w);
		jw_kstr(&w, "unit", "ns");
		jw_ku64(&w, "count", h->count);
		jw_ku64(&w, "sum", h->sum);
		jw_ku64(&w, "max", d->max[i]);
		jw_ku64(&w, "p50", log2_quantile(h->slots, MAX_SLOTS, 0.5, d->max[i]));
		jw_ku64(&w, "p99", log2_quantile(h->slots, MAX_SLOTS, 0.99, d->max[i]));
		jw_key(&w, "buckets");
		jw_arr_open(&w);
		for (int j = 0; j < MAX_SLOTS; j++) {
			if (!h->slots[j])
				continue;
			jw_obj_open(&w);
			jw_ku64(&w, "le", log2_slot_high(j));
			jw_ku64(&w, "count", h->slots[j]);
			jw_obj_close(&w);
		}
		jw_arr_close(&w);
		jw_obj_close(&w);
	}
	jw_obj_close(&w);

	jw_key(&w, "top_holds");
	jw_arr_open(&w);
	for (int i = 0; i < holds->n; i++) {
		const struct event *e = &holds->ev[i];

		jw_obj_open(&w);
		jw_kstr(&w, "kind", hold_kind_name(e->sub));
		jw_ku64(&w, "start_ns", e->start_ns);
		jw_ku64(&w, "total_ns", e->total_ns);
		jw_ku64(&w, "write_ns", e->write_ns);
		jw_ku64(&w, "read_ns", e->read_ns);
		json_task(&w, e->pid, e->tid, e->comm, e->sysnr);
		if (o->stacks)
			json_stack(o, &w, e->stackid);
		jw_obj_close(&w);
	}
	jw_arr_close(&w);

	jw_key(&w, "top_waits");
	jw_arr_open(&w);
	for (int i = 0; i < waits->n; i++) {
		const struct event *e = &waits->ev[i];

		jw_obj_open(&w);
		jw_kstr(&w, "type", wait_type_name(e));
		if (o->vma_avail) {
			jw_key(&w, "vma_fallback");
			jw_bool(&w, e->vma_fallback);
		}
		jw_ku64(&w, "start_ns", e->start_ns);
		jw_ku64(&w, "wait_ns", e->total_ns);
		json_task(&w, e->pid, e->tid, e->comm, e->sysnr);
		if (o->stacks)
			json_stack(o, &w, e->stackid);
		jw_key(&w, "holder");
		if (e->has_holder)
			json_holder(o, &w, &e->holder);
		else
			jw_null(&w);
		jw_key(&w, "queued_writer");
		if (e->has_queued) {
			jw_obj_open(&w);
			json_task(&w, e->queued.pid, e->queued.tid,
				  e->queued.comm, e->queued.sysnr);
			jw_ku64(&w, "queued_before_ns", e->queued.since_ns);
			jw_obj_close(&w);
		} else {
			jw_null(&w);
		}
		jw_obj_close(&w);
	}
	jw_arr_close(&w);

	jw_key(&w, "vma_locks");
	jw_obj_open(&w);
	jw_key(&w, "available");
	jw_bool(&w, o->vma_avail);
	if (o->vma_avail) {
		jw_ku64(&w, "faults", d->c[C_VMA_FAULTS]);
		jw_ku64(&w, "fallbacks", d->c[C_VMA_FALLBACKS]);
	}
	jw_obj_close(&w);
	losses(d, l);
	jw_key(&w, "drops");
	jw_obj_open(&w);
	jw_ku64(&w, "total", lost_total(l));
	for (int i = 0; i < NR_LOSSES; i++) {
		jw_key(&w, l[i].key);
		if (l[i].known)
			jw_u64(&w, l[i].n);
		else
			jw_null(&w);
	}
	jw_obj_close(&w);
	jw_ku64(&w, "unended_read_phases", d->c[C_UNENDED]);
	jw_ku64(&w, "untracked_downgrades", d->c[C_DG_UNTRACKED]);
	if (o->stacks)
		jw_ku64(&w, "stacks_lost", d->c[C_STACK_LOST]);
	if (o->full) {
		jw_ku64(&w, "read_holds_left_mm", d->c[C_LEFT_MM]);
		jw_ku64(&w, "read_holds_left_mm_untimed", d->c[C_LEFT_MM_UNTIMED]);
		jw_ku64(&w, "read_holds_open", d->open_reads);
	}
	jw_obj_close(&w);
	putchar('\n');
	fflush(stdout);
}

/* ---- Prometheus --------------------------------------------------------- */

void prom_body(FILE *f, const struct out_ctx *o, const struct mode_snap *modes,
	       int nr_modes, const struct snap *total)
{
	char name[96], labels[32];
	struct loss l[NR_LOSSES];

	for (int i = 0; i < NR_HISTS; i++) {
		const char *help = hist_help[i];

		if (!hist_shown(o, i))
			continue;
		snprintf(name, sizeof(name), "mmap_lock_%s", hist_names[i]);
		for (int m = 0; m < nr_modes; m++) {
			if (!modes[m].seen)
				continue;
			snprintf(labels, sizeof(labels), "mode=\"%s\"",
				 modes[m].name);
			prom_log2_hist_seconds(f, name, help, labels,
					       modes[m].s.h[i].slots, MAX_SLOTS,
					       modes[m].s.h[i].sum);
			help = NULL;
		}
	}
	losses(total, l);
	fprintf(f, "# HELP mmap_lock_drops_total holds and waits not recorded, "
		"by cause\n# TYPE mmap_lock_drops_total counter\n");
	for (int i = 0; i < NR_LOSSES; i++)
		if (l[i].known)
			fprintf(f, "mmap_lock_drops_total{cause=\"%s\"} %llu\n",
				l[i].key, l[i].n);
	prom_counter(f, "mmap_lock_unended_read_phases_total",
		     "downgraded read phases whose end was not seen",
		     total->c[C_UNENDED]);
	prom_counter(f, "mmap_lock_untracked_downgrades_total",
		     "downgrades outside munmap/brk/mremap: read phase not timed",
		     total->c[C_DG_UNTRACKED]);
	prom_gauge(f, "mmap_lock_exporter_uptime_seconds",
		   "seconds since mmlockstat attached",
		   (mono_ns() - o->start_ns) / 1e9);
}
