// SPDX-License-Identifier: GPL-2.0
/* http_exporter: see http_exporter.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "http_exporter.h"
#include "trace_helpers.h"

/* ---- Prometheus -------------------------------------------------------- */

void prom_log2_hist_seconds(FILE *f, const char *name, const char *help,
			    const char *labels,
			    const unsigned long long *slots, int n,
			    unsigned long long sum_ns)
{
	unsigned long long cum = 0;
	const char *l = labels ? labels : "", *c = labels ? "," : "";

	if (help)
		fprintf(f, "# HELP %s_seconds %s\n# TYPE %s_seconds histogram\n",
			name, help, name);
	for (int i = 0; i < n; i++) {
		cum += slots[i];
		fprintf(f, "%s_seconds_bucket{%s%sle=\"%.9f\"} %llu\n", name,
			l, c, log2_slot_high(i) / 1e9, cum);
	}
	fprintf(f, "%s_seconds_bucket{%s%sle=\"+Inf\"} %llu\n", name, l, c, cum);
	if (labels) {
		fprintf(f, "%s_seconds_sum{%s} %.9f\n", name, l, sum_ns / 1e9);
		fprintf(f, "%s_seconds_count{%s} %llu\n", name, l, cum);
	} else {
		fprintf(f, "%s_seconds_sum %.9f\n", name, sum_ns / 1e9);
		fprintf(f, "%s_seconds_count %llu\n", name, cum);
	}
}

void prom_counter(FILE *f, const char *name, const char *help,
		  unsigned long long v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help,
		name, name, v);
}

void prom_gauge(FILE *f, const char *name, const char *help, double v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n%s %.9g\n", name, help,
		name, name, v);
}

/* ---- HTTP -------------------------------------------------------------- */

int http_listen(const char *spec, char *err, size_t errlen)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(spec, ':'), *port = spec;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char *end;
	long p;
	int fd, one = 1;

	if (colon) {
		size_t hl = colon - spec;

		if (hl >= sizeof(host)) {
			snprintf(err, errlen, "address too long: '%s'", spec);
			return -1;
		}
		if (hl) {
			memcpy(host, spec, hl);
			host[hl] = 0;
		}
		port = colon + 1;
	}
	errno = 0;
	p = strtol(port, &end, 10);
	if (errno || end == port || *end || p <= 0 || p > 65535) {
		snprintf(err, errlen, "bad port in '%s' (want ADDR:PORT)", spec);
		return -1;
	}
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		snprintf(err, errlen, "bad IPv4 address '%s'", host);
		return -1;
	}
	sa.sin_port = htons(p);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		snprintf(err, errlen, "cannot listen on %s:%ld: %s", host, p,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void http_reply(int fd, const char *status, const char *ctype,
		       const char *body, size_t len)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.0 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 status, ctype, len);

	if (write(fd, hdr, n) != n)
		return;
	while (len) {
		ssize_t w = write(fd, body, len);

		if (w <= 0)
			return;
		body += w;
		len -= w;
	}
}

int http_serve_pending(int lfd, void (*body)(FILE *f, void *ctx), void *ctx)
{
	struct timeval tv = { .tv_sec = 1 };
	int served = 0;

	for (;;) {
		char req[1024], method[8], path[256];
		ssize_t n;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return served;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		n = read(fd, req, sizeof(req) - 1);
		if (n > 0) {
			req[n] = 0;
			if (sscanf(req, "%7s %255s", method, path) == 2 &&
			    !strcmp(method, "GET") &&
			    (!strcmp(path, "/metrics") ||
			     !strncmp(path, "/metrics?", 9))) {
				char *buf = NULL;
				size_t len = 0;
				FILE *m = open_memstream(&buf, &len);

				if (m) {
					body(m, ctx);
					fclose(m);
					http_reply(fd, "200 OK",
						   "text/plain; version=0.0.4",
						   buf, len);
					free(buf);
				}
			} else {
				static const char nf[] = "try /metrics\n";

				http_reply(fd, "404 Not Found", "text/plain",
					   nf, sizeof(nf) - 1);
			}
			served++;
		}
		close(fd);
	}
}
