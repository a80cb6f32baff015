/*
 * server: the HTTPS front end of the webhook, on libmicrohttpd (GnuTLS
 * underneath), with routes registered by exact path. Nothing above this
 * module includes <microhttpd.h>.
 *
 * Every request is checked before its body is read, in this order:
 * unknown path 404, method other than POST 405 (Allow: POST; read
 * routes take GET and HEAD instead, see struct server_route),
 * Content-Type other than application/json 415, a declared body over
 * max_body 413 (then the connection is closed unread). A body without a
 * declared length that crosses max_body is dropped as it arrives and
 * answered 413; one that goes on past twice the cap gets the connection
 * closed. Answers are the route's, or a short text/plain error.
 *
 * TLS: 1.2 and 1.3 only (GnuTLS priorities "NORMAL:-VERS-ALL:+VERS-TLS1.3
 * :+VERS-TLS1.2", or 1.3 alone with min_tls13), certificate and key as
 * PEM text in memory.
 *
 * DESIGN: certificate rotation restarts the daemon. libmicrohttpd's
 * per-handshake certificate callback hands out GnuTLS types (and so
 * needs -lgnutls), whereas a restart needs nothing beyond what we link:
 * server_set_certificate retires the running daemon and starts a new
 * one with the new PEM on the same listening socket. The port never
 * closes and no client is ever cut off:
 *  1. the old daemon is marked retired: each answer it gives from then
 *     on carries "Connection: close", so the client learns with a
 *     complete answer that this connection ends (a client must not be
 *     left to find a kept-alive connection closed under the request it
 *     just sent: kube-apiserver does not resend a POST);
 *  2. it is quiesced (it stops accepting; libmicrohttpd hands the
 *     listening socket back) and the new daemon takes the socket, so
 *     every new connection sees the new certificate;
 *  3. the old one keeps serving what it has open, in its own time: the
 *     owner's thread never waits for it. It is stopped (its threads
 *     joined) at a later server_set_certificate, server_retired or
 *     server_stop once it has no connection left, or once the idle
 *     timeout plus RETIRE_GRACE_MS (2 s) have passed since it retired:
 *     by then libmicrohttpd's own idle timeout closed every connection
 *     it kept idle, so stopping it cuts no client between two requests.
 * A connection accepted by the old daemon just before the quiesce gets
 * the old certificate; that is why the certificate manager keeps the CA
 * across serving-certificate renewals, and keeps the previous CA in the
 * bundle across a CA rotation (certs_keep_previous_ca).
 *
 * Threads: libmicrohttpd's internal thread pool (opts.threads polling
 * threads; a slow client holds a socket, never a thread) runs the
 * route functions concurrently; they must be thread-safe. The server
 * struct itself is touched only by its owner's thread: server_start,
 * server_set_certificate and server_stop are called from one thread.
 */
#ifndef WEBHOOK_SERVER_H
#define WEBHOOK_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "model/errors.h"

#define SERVER_DEFAULT_MAX_BODY ((size_t)3 << 20) /* kube-apiserver's */

/* A complete request; every pointer is borrowed for the call. */
struct server_req {
	const char *method;
	const char *path;
	const char *body; /* NUL-terminated; "" when none */
	size_t len;
	void *conn;       /* server-private: server_req_arg reads it */
};

/* The value of query argument key ("limit" of "?limit=5"), decoded, or
 * NULL when absent; "" for "?key". Borrowed for the call. */
const char *server_req_arg(const struct server_req *req, const char *key);

/* The answer a route fills; the server frees body. */
struct server_resp {
	unsigned code;     /* HTTP status; 0 means 500 */
	const char *ctype; /* static Content-Type, or NULL (text/plain) */
	char *body;        /* owned malloc'd text, or NULL */
	size_t len;
};

/*
 * Observer of served requests: called once per request that reached a
 * route and was answered after its body was read (not for the early 404,
 * 405, 415 and 413 answers, which reach no webhook, as in
 * controller-runtime), with the route's path (static), the HTTP status
 * and the server-side latency: seconds from the request body complete to
 * the response queued (route function + encoding + MHD_queue_response;
 * TLS and socket time excluded). Runs on the server thread that served
 * the request, concurrently with other requests: it must be thread-safe
 * and cheap (no lock held long, no I/O).
 */
typedef void server_observe_fn(void *ud, const char *path, unsigned code,
			       double seconds);

/* Route function: runs on a server thread; must not block for long. */
typedef void server_fn(void *ctx, const struct server_req *req,
		       struct server_resp *resp);

struct server_route {
	const char *path; /* exact, e.g. "/validate-batch-v1-job" */
	server_fn *fn;
	void *ctx;        /* passed to fn; outlives the server */
	/* A read route (the visibility API): GET and HEAD instead of POST
	 * (405 Allow: GET, HEAD otherwise), no Content-Type check, a body
	 * ignored; path is a prefix (every path starting with it) when it
	 * ends with '/', and also matches itself without that '/'. */
	bool get;
};

struct server_opts {
	const char *addr;      /* IP to bind; NULL or "" = every interface */
	unsigned port;         /* 0: any free port */
	const char *cert_pem;  /* required */
	const char *key_pem;   /* required */
	bool min_tls13;        /* refuse TLS 1.2 too */
	const char *priorities; /* GnuTLS priority string (the
				   Configuration's tls section,
				   config_tls_priorities); NULL: by
				   min_tls13; copied */
	size_t max_body;       /* 0: SERVER_DEFAULT_MAX_BODY */
	unsigned threads;      /* polling threads; 0: 2 */
	unsigned timeout_s;    /* idle connection timeout; 0: 30 */
	unsigned max_connections; /* 0: 512 */
	server_observe_fn *observe; /* NULL: none */
	void *observe_ud;      /* passed to observe; outlives the server */
};

struct server;

/*
 * Binds, and starts serving routes (the array is copied; paths must be
 * static or outlive the server). Returns new, or NULL + err (bad address,
 * port in use, unusable certificate or key).
 */
struct server *server_start(const struct server_opts *o,
			    const struct server_route *routes, size_t nroutes,
			    struct err *err);

/*
 * Serves cert_pem/key_pem to every new connection from now on (see
 * DESIGN); never waits for the old daemon's connections. On failure (a
 * PEM GnuTLS refuses) the old daemon keeps serving and -1 + err is
 * returned.
 */
int server_set_certificate(struct server *s, const char *cert_pem,
			   const char *key_pem, struct err *err) MUST_CHECK;
/* Stops the retired daemons that are done (DESIGN, step 3) and returns
 * how many still serve connections. */
size_t server_retired(struct server *s);

unsigned server_port(const struct server *s);
/* Stops accepting, closes every connection, waits for the threads,
 * frees. NULL is a no-op. */
void server_stop(struct server *s);

/* Helpers for route functions: set resp to code with a copy of text. */
void server_resp_text(struct server_resp *resp, unsigned code,
		      const char *text);

#endif
