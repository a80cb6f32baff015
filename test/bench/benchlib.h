/*
 * benchlib: the client code the bench programs share (test/bench/).
 *
 * What a program that drives a devcluster needs: its name on stderr
 * lines, a monotonic clock, the devcluster's files (kubeconfig: server,
 * CA, bearer token; NAME.pid), a process's CPU time (/proc, rusage),
 * libcurl requests and watch streams against the API server, setup
 * creates, a condition lookup, nearest-rank percentiles, and the ROW
 * lines of test/bench/run.sh's protocol. What a program measures, and
 * how (clocks, retries, backoff), stays in the program: nothing here
 * decides a figure.
 *
 * Threads: any thread may call anything here on objects it holds (a
 * struct bench_conn or bench_watch belongs to one thread at a time; a
 * struct bench_kube is read-only once loaded and shared). The program
 * name is set once by bench_init() before any thread starts, and only
 * read afterwards. Call curl_global_init() in main before the first
 * connection, as libcurl asks.
 *
 * Ownership: the structs own what their comments say; callers own the
 * structs (on the stack or in their own state) and release them.
 *
 * Errors: these are test programs, so setup failures that leave nothing
 * to measure end the program (bench_die, exit 1); the kubeconfig and a
 * watch return -1 with a struct err; transport errors of a request are
 * noted on stderr and reported as HTTP status 0.
 */
#ifndef TEST_BENCH_BENCHLIB_H
#define TEST_BENCH_BENCHLIB_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"

struct err;
struct json_t;

/* Names the program in bench_die/bench_note lines ("NAME: ..."); prog
 * is borrowed for the whole run (a string literal). Main thread, first. */
void bench_init(const char *prog);
/* "NAME: message" on stderr, then exit(1). */
void bench_die(const char *fmt, ...) PRINTF_LIKE(1, 2)
	__attribute__((noreturn));
/* "NAME: message" on stderr (progress and problems). */
void bench_note(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* CLOCK_MONOTONIC in microseconds. */
int64_t bench_now_us(void);

/* ---- files and processes ---- */

/* The whole file as a new NUL-terminated string, or NULL (errno set). */
char *bench_read_file(const char *path);
/* The pid in DIR/NAME.pid, or 0 when there is none. */
long bench_read_pid(const char *dir, const char *name);
/* utime + stime of pid so far, in seconds (/proc/PID/stat); -1 when pid
 * <= 0 or the process is gone. */
double bench_proc_cpu_s(long pid);
/* utime + stime of this process so far, in seconds (getrusage). */
double bench_self_cpu_s(void);
/* VmHWM of pid (/proc/PID/status) in MiB; -1 when pid <= 0 or unknown. */
double bench_proc_hwm_mib(long pid);
/* The first three fields of /proc/loadavg ("0.52 0.61 0.70"), new; "?"
 * when unreadable. */
char *bench_loadavg(void);
/* The manager's /metrics URL from DIR/manager.log (its last "metrics
 * server listening on URL" line) plus "/metrics", new, or NULL. */
char *bench_metrics_url(const char *dir);

/* ---- the API server ---- */

/*
 * Where and how to reach a devcluster's API server, from its kubeconfig.
 * Filled by bench_kube_load, read-only afterwards (threads share it).
 */
struct bench_kube {
	char *server;      /* owned: "https://host:port" */
	char *auth;        /* owned: "Authorization: Bearer ..." or NULL */
	unsigned char *ca; /* owned: CA PEM bytes, or NULL (system CAs) */
	size_t ca_len;     /* bytes of ca */
};

/* Reads DIR/kubeconfig (the first server, token and
 * certificate-authority-data lines) into k, which must be zeroed. Returns
 * 0, or -1 with err set and k holding nothing to release. */
int bench_kube_load(struct bench_kube *k, const char *dir, struct err *err)
	MUST_CHECK;
/* Frees what k owns and zeroes it. */
void bench_kube_release(struct bench_kube *k);

/*
 * One keep-alive connection (a libcurl easy handle) and the body of its
 * last answer. 30 s timeout per request, TCP_NODELAY, no signals.
 */
struct bench_conn {
	CURL *h;                       /* owned */
	const struct bench_kube *kube; /* borrowed; NULL: plain URLs */
	char *buf;                     /* owned: the last answer's body,
					  NUL-terminated; NULL before one */
	size_t len, cap;               /* bytes in buf; allocated */
};

/* Opens c for kube (borrowed for c's life; may be NULL for a
 * bench_conn used with curl_easy_perform on URLs of its own). */
void bench_conn_init(struct bench_conn *c, const struct bench_kube *kube);
void bench_conn_release(struct bench_conn *c);

/*
 * One request to kube->server + path: method, and a body (may be NULL: a
 * GET) of Content-Type ctype (NULL: none), with the bearer token and
 * Accept: application/json. The answer's body is in c->buf. Returns the
 * HTTP status, or 0 after a transport error (noted on stderr).
 */
long bench_request(struct bench_conn *c, const char *method,
		   const char *path, const char *ctype, const char *body);

/* POSTs obj (taken: freed here) as JSON to path; dies unless the answer
 * is 201, or 409 when exist_ok (an object left by an earlier run). */
void bench_create_take(struct bench_conn *c, const char *path,
		       struct json_t *obj, bool exist_ok);

/* True when obj (borrowed; may be NULL) has a condition of this type
 * with status "True" in status.conditions. */
bool bench_has_condition(const struct json_t *obj, const char *type);

/* What client-go retries: transport errors, 429 and unavailability. */
bool bench_is_retryable(long code);

/* ---- watch streams ---- */

/* Called with each non-empty line (one watch event) of the stream, not
 * NUL-terminated; on the watching thread. */
typedef void bench_line_fn(void *ud, const char *line, size_t len);
/* True when the stream should end now; called often while it runs. */
typedef bool bench_stop_fn(void *ud);

/*
 * A watch: one easy handle without a timeout, whose stream is cut into
 * lines (at most 4 MiB each; a longer one is dropped and noted, STYLE
 * P5) handed to on_line. One thread at a time.
 */
struct bench_watch {
	CURL *h;                 /* owned */
	struct curl_slist *hdrs; /* owned: token, Accept */
	char *line;              /* owned: the partial line */
	size_t len, cap;         /* bytes in line; allocated */
	bool overflow;           /* the current line passed the cap */
	bench_line_fn *on_line;
	bench_stop_fn *stopped;
	void *ud;                /* borrowed; passed to both */
};

void bench_watch_init(struct bench_watch *w, const struct bench_kube *kube,
		      bench_line_fn *on_line, bench_stop_fn *stopped,
		      void *ud);
/* Streams url (a whole URL) until the server ends it, a transfer error,
 * or stopped(ud). Returns 0 when the server ended it, -1 otherwise with
 * err set (also when stopped). */
int bench_watch_run(struct bench_watch *w, const char *url, struct err *err);
void bench_watch_release(struct bench_watch *w);

/* ---- figures ---- */

/* qsort comparator over int64_t. */
int bench_cmp_i64(const void *a, const void *b);
/* The 0-based index of the nearest-rank pct-th percentile of n sorted
 * values (ceil(n * pct / 100), at least the first); n > 0. */
size_t bench_rank(size_t n, unsigned pct);
/* v with prec decimals into buf, or "—" when v < 0 (no figure). */
void bench_fmt(char *buf, size_t cap, double v, int prec);
/* One ROW line of run.sh's protocol on stdout, flushed; anchor and ratio
 * are "—" when there is none. */
void bench_row(const char *what, const char *figure, const char *unit,
	       const char *anchor, const char *ratio, const char *note);

#endif
