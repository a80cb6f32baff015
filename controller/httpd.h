/*
 * httpd: the manager's plain HTTP (or HTTPS) endpoints on libmicrohttpd:
 * GET /metrics (a struct metrics in the text format 0.0.4), GET /healthz
 * (liveness: 200 "ok" while the process serves) and GET /readyz
 * (readiness, answered as controller-runtime's healthz handler does:
 * 200 "ok" when every check passes; 500 listing "[+]name ok" /
 * "[-]name failed: reason withheld" and "readyz check failed" otherwise;
 * ?verbose, ?exclude=name, and /readyz/<name> for one check).
 *
 * One server per bind address: the manager starts one for
 * metrics.bindAddress (metrics only) and one for
 * health.healthProbeBindAddress (health only), or one with both when the
 * addresses are equal.
 *
 * THREADS. Each server runs libmicrohttpd's one internal polling thread,
 * which renders scrapes (metrics.h: atomics, per-family locks) and runs
 * the readiness checks. Check flags are atomics set from any thread with
 * httpd_set_check; a check function runs on the server thread and must
 * be thread-safe. Nothing else is shared with the loop.
 *
 * Hostile input: every request is answered on its first callback (a body
 * is never read), methods other than GET/HEAD get 405, unknown paths 404;
 * libmicrohttpd's connection cap, idle timeout and per-connection memory
 * limit bound what a client can hold, so the server keeps serving.
 */
#ifndef CONTROLLER_HTTPD_H
#define CONTROLLER_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/alloc.h"
#include "model/errors.h"

struct metrics;
struct httpd;

/* A readiness check that computes its answer: returns true when ready;
 * otherwise may write why (shown only at /readyz/<name>) into why
 * (n bytes). Runs on the server thread. */
typedef bool httpd_check_fn(void *ud, char *why, size_t n);

struct httpd_check {
	const char *name;    /* e.g. "informers-synced"; copied */
	httpd_check_fn *fn;  /* NULL: a flag, false until httpd_set_check */
	void *ud;            /* borrowed; passed to fn */
};

struct httpd_opts {
	/* Go-style listen address: ":8080" (every address, IPv6 and IPv4),
	 * "127.0.0.1:0" (port 0: the kernel picks; see httpd_port),
	 * "[::1]:8081", "localhost:8080". "0" and "" mean disabled:
	 * check httpd_bind_disabled first. */
	const char *bind;
	struct metrics *metrics;     /* serve /metrics when set; borrowed,
					must outlive the server */
	bool health;                 /* serve liveness and readiness */
	const char *liveness_path;   /* NULL: "healthz" (no slash) */
	const char *readiness_path;  /* NULL: "readyz" */
	const struct httpd_check *checks; /* copied; none: a "ping" */
	size_t nchecks;
	/* PEM texts (borrowed for the call); both set: HTTPS. */
	const char *cert_pem;
	const char *key_pem;
	const char *priorities;      /* HTTPS: GnuTLS priority string (the
					tls section); NULL: GnuTLS's own */
	unsigned max_connections;    /* 0: 64 */
	unsigned timeout_s;          /* idle connection timeout; 0: 30 */
};

/* True for "0" and "" (controller-runtime's "disabled"). */
bool httpd_bind_disabled(const char *bind);

/*
 * Splits a listen address into host ("" for every address; brackets
 * removed) and port. 0, or -1 + err ("bad listen address ...").
 */
int httpd_parse_bind(const char *bind, char *host, size_t hostcap,
		     unsigned *port, struct err *err) MUST_CHECK;

/* Binds and starts serving. Returns the server (new; httpd_stop frees),
 * or NULL + err (bad address, port in use, no TLS support, disabled). */
struct httpd *httpd_start(const struct httpd_opts *o, struct err *err)
	MUST_CHECK;

/* The bound port (the chosen one for port 0), and a URL to reach it
 * ("http://127.0.0.1:PORT" for a wildcard bind). Borrowed. */
unsigned httpd_port(const struct httpd *h);
const char *httpd_url(const struct httpd *h);

/* Sets a flag check by name; BUG for an unknown or function check. Any
 * thread. */
void httpd_set_check(struct httpd *h, const char *name, bool ok);

/* Stops the thread, closes every connection, frees h. NULL ok. */
void httpd_stop(struct httpd *h);

#endif
