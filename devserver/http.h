/*
 * http: the devserver's HTTP/1.1 front end on libmicrohttpd, and the small
 * request/response model the API layer works with, so that nothing above
 * this module includes <microhttpd.h>.
 *
 * DESIGN. libmicrohttpd runs in thread-per-connection mode: every client
 * connection gets its own thread, which reads the request, calls the
 * handler, and writes the answer, so a slow or stuck client only ever
 * holds its own thread. A watch is a streamed (chunked) answer whose
 * reader blocks on that connection's thread until it has an event (see
 * http_stream_fn); it never returns 0, which would make libmicrohttpd
 * spin.
 *
 * Request bodies are accumulated up to max_body and never beyond: a
 * Content-Length above it is answered 413 as soon as the headers are in,
 * before any of the body is read (the connection is then closed); a
 * chunked body that crosses it is answered 413 at once (with
 * "Connection: close"; the rest of the body is read and dropped until
 * the client closes or pauses for 2 s, so the answer is not lost to a
 * reset) and the connection is closed. With a token and TLS, requests
 * other than /version,
 * /healthz, /livez and /readyz need "Authorization: Bearer <token>" (401
 * Status, also answered before the body is read); over plain HTTP
 * clients send no credentials, so none are asked for.
 *
 * Slow and idle clients. A request's headers and body must arrive within
 * read_timeout_ms of the connection opening (or of the previous answer
 * on a keep-alive connection); a reaper thread shuts down the socket of
 * any connection still reading past that deadline, so a client that
 * trickles its headers a byte at a time ("slowloris") or idles between
 * requests is disconnected. While an answer is written, idle_timeout_s of
 * silence (a client that stopped reading) closes the connection; watch
 * streams are exempt, since they end by their own deadline or when the
 * client hangs up. At most max_connections connections are served: while
 * more are open, every new request is answered 429 TooManyRequests
 * (Retry-After: 1, and that connection closed), which client-go retries;
 * connections beyond max_connections + HTTP_CONN_SLACK are closed by
 * libmicrohttpd as soon as they are accepted.
 *
 * Threads: the handler runs on connection threads concurrently. The
 * reaper thread and the connection table it watches (under one leaf
 * mutex, never held across I/O other than shutdown(2)) are this module's
 * own.
 */
#ifndef DEVSERVER_HTTP_H
#define DEVSERVER_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/errors.h"

struct MHD_Connection;

/* One request; every pointer is borrowed for the handler call. */
struct http_req {
	const char *method;   /* "GET", "POST", ... */
	const char *path;     /* decoded path, no query */
	const char *body;     /* the body, NUL-terminated; "" when none */
	size_t body_len;
	struct MHD_Connection *conn;
};

/* A request header (case-insensitive name) or NULL. */
const char *http_header(const struct http_req *r, const char *name);
/* A query parameter (decoded; '+' is a space) or NULL. */
const char *http_query(const struct http_req *r, const char *name);
/* The query re-encoded ("?a=1&b=x%20y"; "" without one), new: what a
 * proxy forwards. */
char *http_query_string(const struct http_req *r);
/* True when the client of c has closed its side (for streams). */
bool http_conn_closed(struct MHD_Connection *c);

/*
 * Streamed body reader: writes up to max bytes into buf and returns how
 * many (> 0), or HTTP_STREAM_END to finish the answer cleanly, or
 * HTTP_STREAM_ERROR to drop the connection. It may block; it must never
 * return 0.
 */
typedef long http_stream_fn(void *cls, char *buf, size_t max);
typedef void http_stream_free_fn(void *cls);
#define HTTP_STREAM_END (-1L)
#define HTTP_STREAM_ERROR (-2L)

struct http_header_kv {
	char *name;  /* owned */
	char *value; /* owned */
};

struct http_resp {
	unsigned code;               /* HTTP status */
	char *ctype;                 /* owned Content-Type, or NULL */
	char *body;                  /* owned, len bytes; NULL for streams */
	size_t len;
	struct http_header_kv *hdrs; /* owned, nhdrs entries */
	size_t nhdrs;
	size_t caphdrs;
	http_stream_fn *stream;      /* set: chunked streamed answer */
	void *stream_cls;            /* owned by stream_free */
	http_stream_free_fn *stream_free;
};

void http_resp_init(struct http_resp *r);
void http_resp_release(struct http_resp *r);
/* Sets a body; body is taken (malloc'd). ctype is copied. */
void http_resp_set(struct http_resp *r, unsigned code, const char *ctype,
		   char *body, size_t len);
/* Sets a JSON body (obj is taken) with Content-Type ctype (NULL:
 * application/json). */
void http_resp_json(struct http_resp *r, unsigned code, json_t *obj,
		    const char *ctype);
/* Adds a header (copied). */
void http_resp_header(struct http_resp *r, const char *name,
		      const char *value);

typedef void http_handler_fn(void *ctx, const struct http_req *req,
			     struct http_resp *resp);

struct http_opts {
	const char *addr;      /* IP to bind ("127.0.0.1", "::1") */
	unsigned port;         /* 0: any free port */
	const char *cert_pem;  /* with key_pem: serve HTTPS */
	const char *key_pem;
	const char *token;     /* bearer token required over TLS, or NULL */
	size_t max_body;       /* request body ceiling in bytes; 0: 3 MiB */
	unsigned max_connections; /* served at once; 0: 1024 */
	unsigned read_timeout_ms; /* to read a whole request; 0: 60 s */
	unsigned idle_timeout_s;  /* silence while answering; 0: 60 s */
};

/* Connections accepted beyond max_connections only to be answered 429. */
#define HTTP_CONN_SLACK 64

struct http_server;

/* Starts serving; returns new, or NULL + err. */
struct http_server *http_server_start(const struct http_opts *o,
				      http_handler_fn *fn, void *ctx,
				      struct err *err);
/* "http://127.0.0.1:PORT" or "https://..."; borrowed. */
const char *http_server_url(const struct http_server *s);
unsigned http_server_port(const struct http_server *s);
/* Connections open right now (for tests and diagnostics). Any thread. */
size_t http_server_connections(struct http_server *s);
/* Stops accepting, waits for every connection thread, frees. Streams
 * must have been told to end first (their readers must return). */
void http_server_stop(struct http_server *s);

#endif
