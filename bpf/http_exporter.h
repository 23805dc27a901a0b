/* SPDX-License-Identifier: GPL-2.0 */
/*
 * http_exporter: Prometheus text exposition (log2 ns histograms in seconds,
 * counters, gauges) and a tiny single-threaded HTTP server for /metrics,
 * polled from a tool's main loop (mmlockstat --prometheus).
 */
#ifndef __HTTP_EXPORTER_H
#define __HTTP_EXPORTER_H

#include <stddef.h>
#include <stdio.h>

/* ---- Prometheus text exposition (version 0.0.4) ---- */
/* NAME_seconds_bucket{le=..} (cumulative, all n slots + +Inf), _sum, _count
 * from a log2 ns histogram. @labels: NULL, or more labels for every sample
 * ('mode="section"'); the HELP/TYPE header is printed when @help is not
 * NULL (once per metric family: pass NULL for its further label sets). */
void prom_log2_hist_seconds(FILE *f, const char *name, const char *help,
			    const char *labels,
			    const unsigned long long *slots, int n,
			    unsigned long long sum_ns);
void prom_counter(FILE *f, const char *name, const char *help,
		  unsigned long long v);
void prom_gauge(FILE *f, const char *name, const char *help, double v);

/* ---- tiny HTTP server for /metrics ---- */
/* Listen on "PORT", "ADDR:PORT" or ":PORT" (ADDR defaults to 127.0.0.1).
 * Returns a non-blocking listening fd, or -1 with a message in @err. */
int http_listen(const char *spec, char *err, size_t errlen);
/* Serve every pending connection on @lfd: GET /metrics gets the text that
 * @body writes, anything else 404. Never blocks for long (1 s socket
 * timeouts). Returns the number of requests served. */
int http_serve_pending(int lfd, void (*body)(FILE *f, void *ctx), void *ctx);

#endif /* __HTTP_EXPORTER_H */
