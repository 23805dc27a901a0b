/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace_helpers: user-space helpers shared by the bpf/ tools.
 *   ksyms (kernel stacks), kernel function probing (BTF / kallsyms),
 *   log2 histograms (text, percentiles), a JSON writer. Prometheus text
 *   and the /metrics server are in http_exporter.h.
 */
#ifndef __TRACE_HELPERS_H
#define __TRACE_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(x) (sizeof(x) / sizeof((x)[0]))
#endif

/* ---- libbpf's messages ---- */
/*
 * libbpf's warnings, kept instead of printed (a tool that falls back from
 * one probe kind to another would otherwise print the first attempt's
 * failure as if it were fatal). A tool prints them when it gives up:
 * libbpf_log_keep() from its libbpf print callback (level WARN and INFO),
 * libbpf_log_print() on a load or attach failure.
 */
#include <stdarg.h>
void libbpf_log_keep(const char *format, va_list args);
/* Print the kept messages to @f, each line after @indent; empty: nothing. */
void libbpf_log_print(FILE *f, const char *indent);
/*
 * A load or attach that failed, on stderr: "@tool: cannot @what BPF
 * programs: ERROR; libbpf said:", the kept messages, and for ENOMEM the fix
 * (maps are charged to the memory cgroup).
 */
void bpf_failed(const char *tool, const char *what, int err, bool verbose);

/* ---- kernel symbols ---- */
struct ksym {
	const char *name;
	unsigned long addr;
};
struct ksyms;

struct ksyms *ksyms__load(void);
void ksyms__free(struct ksyms *ksyms);
/* The symbol containing @addr (nearest below), or NULL. */
const struct ksym *ksyms__map_addr(const struct ksyms *ksyms, unsigned long addr);
const struct ksym *ksyms__get_symbol(const struct ksyms *ksyms, const char *name);

/* The running kernel's BTF, loaded once and kept (NULL without BTF). */
struct btf *vmlinux_btf(void);
/* Is @name a function in vmlinux BTF (fentry/fexit can attach)? */
bool vmlinux_btf_has_func(const char *name);
/* Is @name a tracepoint in vmlinux BTF (tp_btf can attach)? */
bool vmlinux_btf_has_tracepoint(const char *name);
/* struct @type (vmlinux BTF) has a member named @member */
bool vmlinux_btf_has_member(const char *type, const char *member);
/* Is @name in /proc/kallsyms as a text symbol (kprobes can attach)? */
bool kallsyms_has_func(const char *name);
/* Can a kprobe attach to @name? In kallsyms and, where tracefs can be read,
 * in available_filter_functions: a function in kallsyms but not in that
 * list is refused (-EINVAL), e.g. vms_clear_ptes on Debian's 6.12.118. */
bool kprobe_traceable(const char *name);
/* /sys/kernel/btf/vmlinux exists. */
bool kernel_has_btf(void);

/* --cgroup PATH: an fd of the cgroup v2 directory PATH, or -1 after
 * printing why not to stderr, prefixed with @tool. */
int cgroup_open(const char *tool, const char *path);
/* Put @cgfd in slot 0 of the tool's BPF_MAP_TYPE_CGROUP_ARRAY @map_fd;
 * 0, or -1 after printing why not. */
int cgroup_install(const char *tool, int map_fd, int cgfd);

/* ---- log2 histograms: slot i holds values in [2^i, 2^(i+1)), slot 0 {0,1} ---- */
unsigned long long log2_slot_low(int slot);
unsigned long long log2_slot_high(int slot);	/* inclusive: 2^(i+1)-1 */
int log2_slot_of(unsigned long long v);
/* bcc-style text histogram. */
void print_log2_hist(FILE *f, const unsigned long long *slots, int n,
		     const char *label);
/* Estimate of quantile @q (0..1) by linear interpolation inside the log2
 * bucket that holds it, clamped to @max: exact to within one bucket. */
unsigned long long log2_quantile(const unsigned long long *slots, int n,
				 double q, unsigned long long max);

/* ---- time and formatting ---- */
unsigned long long mono_ns(void);
/* "812ns", "1.25us", "20.1ms", "3.02s" into @buf */
const char *fmt_ns(char *buf, size_t len, unsigned long long ns);

/* ---- JSON writer (compact, one document per line) ---- */
#define JW_MAX_DEPTH 16
struct jw {
	FILE *f;
	int depth;
	bool comma[JW_MAX_DEPTH];
	bool after_key;
};
void jw_init(struct jw *w, FILE *f);
void jw_obj_open(struct jw *w);
void jw_obj_close(struct jw *w);
void jw_arr_open(struct jw *w);
void jw_arr_close(struct jw *w);
void jw_key(struct jw *w, const char *key);
void jw_str(struct jw *w, const char *s);
void jw_u64(struct jw *w, unsigned long long v);
void jw_i64(struct jw *w, long long v);
void jw_double(struct jw *w, double v);
void jw_bool(struct jw *w, bool v);
void jw_null(struct jw *w);
/* key + value shorthands */
void jw_kstr(struct jw *w, const char *key, const char *s);
void jw_ku64(struct jw *w, const char *key, unsigned long long v);
void jw_ki64(struct jw *w, const char *key, long long v);
void jw_kdouble(struct jw *w, const char *key, double v);

#endif /* __TRACE_HELPERS_H */
