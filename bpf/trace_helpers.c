// SPDX-License-Identifier: GPL-2.0
/* trace_helpers: see trace_helpers.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "trace_helpers.h"

/* ---- kernel symbols ---------------------------------------------------- */

struct ksyms {
	struct ksym *syms;
	int n, cap;
	char *strs;
	size_t strs_len, strs_cap;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct ksyms *ksyms__load(void)
{
	struct ksyms *k;
	char line[512], name[256], type;
	unsigned long addr;
	FILE *f;
	int i;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		goto err;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!addr || (type != 't' && type != 'T' && type != 'w' &&
			      type != 'W'))
			continue;
		if (k->n == k->cap) {
			void *p;

			k->cap = k->cap ? k->cap * 2 : 4096;
			p = realloc(k->syms, k->cap * sizeof(*k->syms));
			if (!p)
				goto err;
			k->syms = p;
		}
		size_t len = strlen(name) + 1;

		if (k->strs_len + len > k->strs_cap) {
			char *p;

			k->strs_cap = (k->strs_cap + len) * 2;
			p = realloc(k->strs, k->strs_cap);
			if (!p)
				goto err;
			k->strs = p;
		}
		memcpy(k->strs + k->strs_len, name, len);
		/* store the offset; fixed up to pointers below */
		k->syms[k->n].name = (const char *)(uintptr_t)k->strs_len;
		k->syms[k->n].addr = addr;
		k->strs_len += len;
		k->n++;
	}
	fclose(f);
	for (i = 0; i < k->n; i++)
		k->syms[i].name = k->strs + (uintptr_t)k->syms[i].name;
	qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
	return k;
err:
	fclose(f);
	ksyms__free(k);
	return NULL;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->strs);
	free(k);
}

const struct ksym *ksyms__map_addr(const struct ksyms *k, unsigned long addr)
{
	int lo = 0, hi, mid;

	if (!k || !k->n)
		return NULL;
	hi = k->n - 1;
	if (addr < k->syms[0].addr)
		return NULL;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &k->syms[lo];
}

const struct ksym *ksyms__get_symbol(const struct ksyms *k, const char *name)
{
	for (int i = 0; k && i < k->n; i++)
		if (!strcmp(k->syms[i].name, name))
			return &k->syms[i];
	return NULL;
}

static char libbpf_log[8192];
static size_t libbpf_log_len;
static bool libbpf_log_cut;

void libbpf_log_keep(const char *format, va_list args)
{
	size_t room = sizeof(libbpf_log) - libbpf_log_len;
	int n;

	if (libbpf_log_cut)
		return;
	n = vsnprintf(libbpf_log + libbpf_log_len, room, format, args);
	if (n < 0)
		return;
	if ((size_t)n >= room) {	/* keep whole lines only */
		libbpf_log[libbpf_log_len] = 0;
		libbpf_log_cut = true;
		return;
	}
	libbpf_log_len += n;
}

void libbpf_log_print(FILE *f, const char *indent)
{
	const char *p = libbpf_log, *nl;

	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		fprintf(f, "%s%.*s\n", indent, (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
	if (libbpf_log_cut)
		fprintf(f, "%s(more: -v prints all of libbpf's messages)\n", indent);
}

void bpf_failed(const char *tool, const char *what, int err, bool verbose)
{
	fprintf(stderr, "%s: cannot %s BPF programs: %s%s\n", tool, what,
		strerror(-err), verbose ? "" : "; libbpf said:");
	libbpf_log_print(stderr, "  ");
	if (err == -ENOMEM)
		fprintf(stderr, "%s: BPF maps are charged to the memory cgroup: "
			"raise its memory.max, or run outside the limit\n", tool);
}

bool kernel_has_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

struct btf *vmlinux_btf(void)
{
	static struct btf *btf;
	static bool tried;

	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
	}
	return btf;
}

bool vmlinux_btf_has_func(const char *name)
{
	struct btf *btf = vmlinux_btf();

	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/*
 * A tracepoint tp_btf can attach to: the kernel's BTF has the typedef
 * btf_trace_NAME that its TRACE_EVENT defines (libbpf resolves
 * "tp_btf/NAME" through it). The tracepoint is not a BTF function.
 */
bool vmlinux_btf_has_tracepoint(const char *name)
{
	struct btf *btf = vmlinux_btf();
	char tname[128];

	if (!btf || snprintf(tname, sizeof(tname), "btf_trace_%s", name) >=
		    (int)sizeof(tname))
		return false;
	return btf__find_by_name_kind(btf, tname, BTF_KIND_TYPEDEF) > 0;
}

bool vmlinux_btf_has_member(const char *type, const char *member)
{
	struct btf *btf = vmlinux_btf();
	const struct btf_member *m;
	const struct btf_type *t;
	bool found = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		m = btf_members(t);
		for (int i = 0; i < btf_vlen(t) && !found; i++, m++)
			found = !strcmp(btf__name_by_offset(btf, m->name_off), member);
	}
	return found;
}

bool kallsyms_has_func(const char *name)
{
	static struct ksyms *cache;

	if (!cache)
		cache = ksyms__load();
	return ksyms__get_symbol(cache, name) != NULL;
}

bool kprobe_traceable(const char *name)
{
	static const char *const lists[] = {
		"/sys/kernel/tracing/available_filter_functions",
		"/sys/kernel/debug/tracing/available_filter_functions",
	};
	char line[256];
	size_t n = strlen(name);
	bool found = false;
	FILE *f = NULL;

	if (!kallsyms_has_func(name))
		return false;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]) && !f; i++)
		f = fopen(lists[i], "r");
	if (!f)		/* no tracefs: kallsyms is all we can go by */
		return true;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, n) &&
			(line[n] == '\n' || line[n] == ' ' || line[n] == '\0');
	fclose(f);
	return found;
}

/* ---- log2 histograms --------------------------------------------------- */

unsigned long long log2_slot_low(int slot)
{
	return slot ? 1ULL << slot : 0;
}

unsigned long long log2_slot_high(int slot)
{
	return (1ULL << (slot + 1)) - 1;
}

int log2_slot_of(unsigned long long v)
{
	int s = 0;

	while (v >>= 1)
		s++;
	return s;
}

static void print_stars(FILE *f, unsigned long long val, unsigned long long max,
			int width)
{
	int n = max ? (int)(val * width / max) : 0;

	if (val && !n)
		n = 0;
	for (int i = 0; i < width; i++)
		fputc(i < n ? '*' : ' ', f);
	if (val > max)
		fputc('+', f);
}

void print_log2_hist(FILE *f, const unsigned long long *slots, int n,
		     const char *label)
{
	int first = -1, last = -1;
	unsigned long long max = 0;

	for (int i = 0; i < n; i++) {
		if (!slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (last < 0)
		return;
	fprintf(f, "%32s : count    distribution\n", label);
	for (int i = first; i <= last; i++) {
		fprintf(f, "%14llu -> %-14llu : %-8llu |", log2_slot_low(i),
			log2_slot_high(i), slots[i]);
		print_stars(f, slots[i], max, 40);
		fprintf(f, "|\n");
	}
}

unsigned long long log2_quantile(const unsigned long long *slots, int n,
				 double q, unsigned long long max)
{
	unsigned long long total = 0, cum = 0;
	double rank;

	for (int i = 0; i < n; i++)
		total += slots[i];
	if (!total)
		return 0;
	rank = q * total;
	for (int i = 0; i < n; i++) {
		if (!slots[i])
			continue;
		if (cum + slots[i] >= rank) {
			double lo = log2_slot_low(i), hi = log2_slot_high(i) + 1;
			double frac = (rank - cum) / slots[i];
			unsigned long long v = lo + frac * (hi - lo);

			return max && v > max ? max : v;
		}
		cum += slots[i];
	}
	return max;
}

/* ---- time and formatting ----------------------------------------------- */

unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

const char *fmt_ns(char *buf, size_t len, unsigned long long ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.2fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", ns / 1e9);
	return buf;
}

/* ---- JSON writer ------------------------------------------------------- */

void jw_init(struct jw *w, FILE *f)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
}

static void jw_sep(struct jw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0 && w->comma[w->depth])
		fputc(',', w->f);
	if (w->depth > 0)
		w->comma[w->depth] = true;
}

static void jw_open(struct jw *w, char c)
{
	jw_sep(w);
	fputc(c, w->f);
	if (w->depth < JW_MAX_DEPTH - 1)
		w->depth++;
	w->comma[w->depth] = false;
}

static void jw_close(struct jw *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
}

void jw_obj_open(struct jw *w) { jw_open(w, '{'); }
void jw_obj_close(struct jw *w) { jw_close(w, '}'); }
void jw_arr_open(struct jw *w) { jw_open(w, '['); }
void jw_arr_close(struct jw *w) { jw_close(w, ']'); }

static void jw_raw_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void jw_key(struct jw *w, const char *key)
{
	jw_sep(w);
	jw_raw_str(w->f, key);
	fputc(':', w->f);
	w->after_key = true;
}

void jw_str(struct jw *w, const char *s) { jw_sep(w); jw_raw_str(w->f, s); }
void jw_u64(struct jw *w, unsigned long long v) { jw_sep(w); fprintf(w->f, "%llu", v); }
void jw_i64(struct jw *w, long long v) { jw_sep(w); fprintf(w->f, "%lld", v); }
void jw_bool(struct jw *w, bool v) { jw_sep(w); fputs(v ? "true" : "false", w->f); }
void jw_null(struct jw *w) { jw_sep(w); fputs("null", w->f); }

void jw_double(struct jw *w, double v)
{
	jw_sep(w);
	fprintf(w->f, "%.6g", v);
}

void jw_kstr(struct jw *w, const char *k, const char *s) { jw_key(w, k); jw_str(w, s); }
void jw_ku64(struct jw *w, const char *k, unsigned long long v) { jw_key(w, k); jw_u64(w, v); }
void jw_ki64(struct jw *w, const char *k, long long v) { jw_key(w, k); jw_i64(w, v); }
void jw_kdouble(struct jw *w, const char *k, double v) { jw_key(w, k); jw_double(w, v); }

int cgroup_open(const char *tool, const char *path)
{
	struct statfs fs;
	int fd;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: cgroup '%s': %s: give a cgroup v2 directory, "
			"e.g. /sys/fs/cgroup/mytest (mkdir it, write PIDs to its "
			"cgroup.procs)\n", tool, path, strerror(errno));
		return -1;
	}
	if (fstatfs(fd, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
		fprintf(stderr, "%s: cgroup '%s' is not in a cgroup v2 hierarchy: "
			"give a directory under the cgroup2 mount (mount -t cgroup2 "
			"none /sys/fs/cgroup)\n", tool, path);
		close(fd);
		return -1;
	}
	return fd;
}

int cgroup_install(const char *tool, int map_fd, int cgfd)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(map_fd, &zero, &cgfd, BPF_ANY)) {
		fprintf(stderr, "%s: cannot install the cgroup filter: %s\n",
			tool, strerror(errno));
		return -1;
	}
	return 0;
}
