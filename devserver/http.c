/*
 * http: libmicrohttpd glue (thread per connection, optional GnuTLS),
 * body accumulation with a ceiling, bearer-token check, the connection
 * table and its reaper (read deadline, connection cap), and the
 * translation of struct http_resp into MHD responses (buffers and
 * chunked streams).
 *
 * A connection is READING from its accept (or the end of its previous
 * answer) until its request is complete, then SERVING until the answer
 * ends. Only READING connections have a deadline (read_timeout_ms); the
 * reaper enforces it with shutdown(2), which makes the connection's own
 * thread see EOF and close it. libmicrohttpd notifies CLOSED before it
 * closes the socket, and the table entry is removed under the lock in
 * that notification, so the reaper never touches a descriptor that could
 * have been reused.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include "devserver/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/dlist.h"
#include "base/sbuf.h"
#include "base/text.h"
#include "devserver/jsonw.h"
#include "devserver/status.h"

#define DEFAULT_MAX_BODY ((size_t)3 << 20)
#define DEFAULT_MAX_CONNECTIONS 1024u
#define DEFAULT_READ_TIMEOUT_MS 60000u
#define DEFAULT_IDLE_TIMEOUT_S 60u
#define REAPER_TICK_MS 200
/*
 * libmicrohttpd's per-connection memory pool: request line and headers
 * (at most about half of it), the answer's headers and a stream's
 * chunk buffer. libmicrohttpd zeroes the whole pool between two
 * requests of a keep-alive connection, so its size is a per-request
 * cost (256 KiB cost ~10 % of a small write's CPU). 32 KiB is
 * libmicrohttpd's default: request headers up to ~16 KiB.
 */
#define CONN_POOL_BYTES (32 * 1024)
/*
 * TLS 1.2 and 1.3 only, kube-apiserver's default (--tls-min-version
 * VersionTLS12). libmicrohttpd's default ("NORMAL", or the system's
 * @LIBMICROHTTPD) let GnuTLS 3.7 negotiate TLS 1.0 and 1.1 (an
 * `openssl s_client -tls1` handshake succeeded); the suite "dswire"
 * checks both sides with the real openssl client.
 */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* One open connection (libmicrohttpd's socket_context); in the table
 * from NOTIFY_STARTED to NOTIFY_CLOSED. link and reaped are under
 * conns_lock; since and serving are atomics its own thread stores
 * without the lock (since first, then serving, with release order) and
 * the reaper loads under it (serving first, with acquire order), so a
 * connection seen as READING always shows the since of that state. */
struct conn {
	struct dlist link;  /* on the server's conns */
	int fd;             /* the client socket; open while listed */
	_Atomic int64_t since; /* monotonic ms: accepted or last answer
				* ended */
	atomic_bool serving; /* request complete, answer in progress */
	bool reaped;        /* shut down for missing the read deadline */
	bool corked;        /* an answer waits in GnuTLS for on_completed */
	unsigned idle_ms;   /* the server's idle_timeout_s, for uncork */
};

struct http_server {
	struct MHD_Daemon *d;
	http_handler_fn *fn;
	void *ctx;
	char *token;        /* owned; NULL: no auth */
	bool tls;
	size_t max_body;    /* bytes; > 0 */
	unsigned max_conns; /* > 0 */
	unsigned read_timeout_ms;
	unsigned idle_timeout_s;
	unsigned port;
	char url[96];
	pthread_mutex_t conns_lock; /* leaf lock: conns, nconns, stopping */
	pthread_cond_t reaper_cv;   /* wakes the reaper to stop */
	struct dlist conns;         /* open connections, newest first */
	atomic_size_t nconns;       /* changed under conns_lock, read
				     * without it */
	bool stopping;
	bool reaper_started;
	pthread_t reaper;
};

/* Per-request state between the access-handler calls. */
struct reqstate {
	struct sbuf body;   /* the body so far, capped at max_body (P5) */
	size_t seen;        /* body bytes received, kept or not */
};

/* The stream adapter MHD's reader callback gets. */
struct reader {
	http_stream_fn *fn;
	void *cls;
	http_stream_free_fn *free_fn;
};

/* ---- request and response model ---- */

const char *http_header(const struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *http_query(const struct http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
					   name);
}

static void add_escaped(struct sbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~", c)) {
			(void)sbuf_addch(b, (char)c);
		} else {
			(void)sbuf_addch(b, '%');
			(void)sbuf_addch(b, hex[c >> 4]);
			(void)sbuf_addch(b, hex[c & 15]);
		}
	}
}

static enum MHD_Result add_query_arg(void *cls, enum MHD_ValueKind kind,
				     const char *key, const char *value)
{
	struct sbuf *b = cls;

	(void)kind;
	(void)sbuf_addch(b, b->len ? '&' : '?');
	add_escaped(b, key);
	if (value) {
		(void)sbuf_addch(b, '=');
		add_escaped(b, value);
	}
	return MHD_YES;
}

char *http_query_string(const struct http_req *r)
{
	struct sbuf b = SBUF_INIT;

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND,
				  add_query_arg, &b);
	return sbuf_detach(&b, NULL);
}

bool http_conn_closed(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;

	if (!ci)
		return true;
	p.fd = ci->connect_fd;
	p.events = POLLRDHUP;
	p.revents = 0;
	if (poll(&p, 1, 0) > 0 &&
	    (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
		return true;
	return false;
}

void http_resp_init(struct http_resp *r)
{
	memset(r, 0, sizeof(*r));
}

void http_resp_release(struct http_resp *r)
{
	free(r->ctype);
	free(r->body);
	for (size_t i = 0; i < r->nhdrs; i++) {
		free(r->hdrs[i].name);
		free(r->hdrs[i].value);
	}
	free(r->hdrs);
	if (r->stream_free)
		r->stream_free(r->stream_cls);
	http_resp_init(r);
}

void http_resp_set(struct http_resp *r, unsigned code, const char *ctype,
		   char *body, size_t len)
{
	free(r->ctype);
	free(r->body);
	r->code = code;
	r->ctype = ctype ? xstrdup(ctype) : NULL;
	r->body = body;
	r->len = len;
}

void http_resp_json(struct http_resp *r, unsigned code, json_t *obj,
		    const char *ctype)
{
	size_t len;
	char *s = jsonw_dumps(obj, &len);

	json_decref(obj);
	if (!s)
		BUG("json_dumps failed");
	http_resp_set(r, code, ctype ? ctype : "application/json", s, len);
}

void http_resp_header(struct http_resp *r, const char *name,
		      const char *value)
{
	XGROW(r->hdrs, r->caphdrs, r->nhdrs + 1);
	r->hdrs[r->nhdrs].name = xstrdup(name);
	r->hdrs[r->nhdrs].value = xstrdup(value);
	r->nhdrs++;
}

/* ---- the connection table and its reaper ---- */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct conn *k = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
			c, MHD_CONNECTION_INFO_CONNECTION_FD);

		k = xcalloc(1, sizeof(*k));
		k->fd = ci ? ci->connect_fd : -1;
		k->idle_ms = s->idle_timeout_s * 1000u;
		atomic_init(&k->since, mono_ms());
		atomic_init(&k->serving, false);
		pthread_mutex_lock(&s->conns_lock);
		dlist_insert_after(&s->conns, &k->link);
		s->nconns++;
		pthread_mutex_unlock(&s->conns_lock);
		*socket_context = k;
		return;
	}
	if (!k)
		return;
	pthread_mutex_lock(&s->conns_lock);
	dlist_remove(&k->link);
	s->nconns--;
	pthread_mutex_unlock(&s->conns_lock);
	free(k);
	*socket_context = NULL;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* READING -> SERVING (the deadline no longer applies) and back. No
 * lock: see struct conn. */
static void conn_set_serving(struct MHD_Connection *c, bool serving)
{
	struct conn *k = conn_of(c);

	if (!k)
		return;
	atomic_store_explicit(&k->since, mono_ms(), memory_order_relaxed);
	atomic_store_explicit(&k->serving, serving, memory_order_release);
}

static void *reaper_main(void *arg)
{
	struct http_server *s = arg;

	pthread_mutex_lock(&s->conns_lock);
	while (!s->stopping) {
		int64_t now = mono_ms();
		struct timespec until;
		struct dlist *pos;

		DLIST_FOREACH(pos, &s->conns) {
			struct conn *k = DLIST_ENTRY(pos, struct conn, link);

			if (!atomic_load_explicit(&k->serving,
						  memory_order_acquire) &&
			    !k->reaped && k->fd >= 0 &&
			    now - atomic_load_explicit(&k->since,
						       memory_order_relaxed) >
			    (int64_t)s->read_timeout_ms) {
				shutdown(k->fd, SHUT_RDWR);
				k->reaped = true;
			}
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += REAPER_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->reaper_cv, &s->conns_lock, &until);
	}
	pthread_mutex_unlock(&s->conns_lock);
	return NULL;
}

static void stop_reaper(struct http_server *s)
{
	if (!s->reaper_started)
		return;
	pthread_mutex_lock(&s->conns_lock);
	s->stopping = true;
	pthread_cond_signal(&s->reaper_cv);
	pthread_mutex_unlock(&s->conns_lock);
	pthread_join(s->reaper, NULL);
	s->reaper_started = false;
}

size_t http_server_connections(struct http_server *s)
{
	return atomic_load(&s->nconns);
}

/* ---- MHD callbacks ---- */

static ssize_t reader_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct reader *s = cls;
	long n;

	(void)pos;
	n = s->fn(s->cls, buf, max);
	if (n == HTTP_STREAM_END)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n <= 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return (ssize_t)n;
}

static void reader_free(void *cls)
{
	struct reader *s = cls;

	if (s->free_fn)
		s->free_fn(s->cls);
	free(s);
}

/*
 * One TLS record per small answer. libmicrohttpd hands GnuTLS the
 * status line and headers, then the body, in two sends, so each answer
 * reached the client as two TLS records: two reads and two decryptions
 * per request on the client, one more send here. kube-apiserver (Go's
 * net/http behind a buffered writer) answers a small request in one
 * record. Corking the session makes GnuTLS hold both sends, and
 * on_completed (which libmicrohttpd calls once the answer is handed
 * over, on the connection's own thread) sends them as one record.
 * Streams (watches) are not corked: their bytes must go out as they
 * come.
 */
#define CORK_MAX (14 * 1024)

static void cork(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	struct conn *k = conn_of(c);

	if (!ci || !ci->tls_session || !k)
		return;
	gnutls_record_cork((gnutls_session_t)ci->tls_session);
	k->corked = true;
}

/*
 * Sends what cork() held. A client that does not read fills the socket
 * (GnuTLS says AGAIN): wait for room, as libmicrohttpd itself would, up
 * to the idle timeout, then shut the connection down (libmicrohttpd then
 * closes it). GNUTLS_RECORD_WAIT would retry without a bound and without
 * waiting for the socket.
 */
static void uncork(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci;
	struct conn *k = conn_of(c);
	gnutls_session_t ses;
	int64_t deadline;

	if (!k || !k->corked)
		return;
	k->corked = false;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci || !ci->tls_session || k->fd < 0)
		return;
	ses = (gnutls_session_t)ci->tls_session;
	deadline = mono_ms() + (int64_t)k->idle_ms;
	for (;;) {
		int rc = (int)gnutls_record_uncork(ses, 0);
		struct pollfd p = { .fd = k->fd, .events = POLLOUT };

		if (rc >= 0)
			break;
		if ((rc != GNUTLS_E_AGAIN && rc != GNUTLS_E_INTERRUPTED) ||
		    mono_ms() >= deadline) {
			shutdown(k->fd, SHUT_RDWR);
			return;
		}
		poll(&p, 1, 100);
	}
	/* libmicrohttpd set TCP_CORK for the header and, having seen both
	 * sends done, believes the answer pushed; the record only now
	 * reached the socket, so push it (else it waits for the kernel's
	 * 200 ms cork timer). */
	setsockopt(k->fd, IPPROTO_TCP, TCP_CORK, &(int){ 0 }, sizeof(int));
}

static enum MHD_Result send_resp(struct MHD_Connection *c,
				 struct http_resp *r)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;
	bool small = !r->stream && r->len <= CORK_MAX;

	if (r->stream) {
		struct reader *s = xmalloc(sizeof(*s));

		s->fn = r->stream;
		s->cls = r->stream_cls;
		s->free_fn = r->stream_free;
		r->stream = NULL;
		r->stream_cls = NULL;
		r->stream_free = NULL;
		mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
						       32 * 1024, reader_read,
						       s, reader_free);
	} else {
		static char empty[1];

		mr = MHD_create_response_from_buffer(r->len,
						     r->body ? r->body : empty,
						     r->body ? MHD_RESPMEM_MUST_FREE
							     : MHD_RESPMEM_PERSISTENT);
		r->body = NULL;
	}
	if (!mr)
		return MHD_NO;
	if (small)
		cork(c);
	if (r->ctype)
		MHD_add_response_header(mr, "Content-Type", r->ctype);
	MHD_add_response_header(mr, "Cache-Control", "no-cache, private");
	for (size_t i = 0; i < r->nhdrs; i++)
		MHD_add_response_header(mr, r->hdrs[i].name, r->hdrs[i].value);
	ret = MHD_queue_response(c, r->code ? r->code : 500, mr);
	MHD_destroy_response(mr);
	return ret;
}

static void status_resp(struct http_resp *r, struct api_status *st)
{
	if (st->retry_after) {
		char b[16];

		snprintf(b, sizeof(b), "%d", st->retry_after);
		http_resp_header(r, "Retry-After", b);
	}
	http_resp_json(r, (unsigned)st->code, status_to_json(st), NULL);
	status_release(st);
}

static bool is_public_path(const char *url)
{
	static const char *const pub[] = { "/version", "/healthz", "/livez",
					   "/readyz", NULL };

	for (size_t i = 0; pub[i]; i++) {
		size_t n = strlen(pub[i]);

		if (!strncmp(url, pub[i], n) && (!url[n] || url[n] == '/'))
			return true;
	}
	return false;
}

static bool authorized(struct http_server *s, struct MHD_Connection *c,
		       const char *url)
{
	const char *h;
	bool good;

	if (!s->token || !s->tls)
		return true;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	good = h && !strncmp(h, "Bearer ", 7) && !strcmp(h + 7, s->token);
	/*
	 * Public paths (/version, /healthz, ...) admit anonymous callers,
	 * but, as kube-apiserver's union authenticator does, a credential
	 * that is presented and wrong is refused everywhere.
	 */
	if (is_public_path(url))
		return !h || good;
	return good;
}

/*
 * What can be answered as soon as the headers are in, before any of the
 * body is read: over the connection cap (429), a declared body over the
 * ceiling (413), a missing token (401). Returns true with resp filled.
 */
static bool early_answer(struct http_server *s, struct MHD_Connection *c,
			 const char *url, struct http_resp *resp)
{
	struct api_status st = API_STATUS_INIT;
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     "Content-Length");
	size_t n = atomic_load(&s->nconns);

	if (n > s->max_conns) {
		status_too_many_requests(&st, 1);
		status_resp(resp, &st);
		http_resp_header(resp, "Connection", "close");
		return true;
	}
	if (cl) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(cl, &end, 10);
		if (errno == ERANGE || (end != cl && v > s->max_body)) {
			status_too_large_body(&st, (unsigned long)s->max_body);
			status_resp(resp, &st);
			return true;
		}
	}
	if (!authorized(s, c, url)) {
		status_unauthorized(&st);
		status_resp(resp, &st);
		return true;
	}
	return false;
}

/*
 * Writes n bytes to the client of c (through its GnuTLS session when it
 * has one), waiting for room up to deadline (monotonic ms). False when
 * the client is gone or the deadline passed.
 */
static bool write_raw(struct MHD_Connection *c, int fd, const char *p,
		      size_t n, int64_t deadline)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t ses = ci ? (gnutls_session_t)ci->tls_session : NULL;

	while (n > 0) {
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		ssize_t w;

		if (ses) {
			w = gnutls_record_send(ses, p, n);
			if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED)
				w = 0;
			else if (w < 0)
				return false;
		} else {
			w = send(fd, p, n, MSG_NOSIGNAL);
			if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				return false;
			if (w < 0)
				w = 0;
		}
		p += w;
		n -= (size_t)w;
		if (n == 0)
			break;
		if (mono_ms() >= deadline)
			return false;
		poll(&pf, 1, 100);
	}
	return true;
}

/* A connection answered mid-body is closed once its client has sent
 * nothing for this long (or closed, or idle_timeout_s passed): see
 * too_large_now. */
#define DRAIN_QUIET_MS 2000

/*
 * A body without a declared length (chunked) crossed max_body: answer
 * 413 now and close, as kube-apiserver does once it has read limit + 1
 * bytes. libmicrohttpd (0.9.75) takes no response while a body is still
 * arriving (MHD_queue_response refuses in its body states), and reading
 * the rest first could take unbounded time, so the answer is written to
 * the socket here, with "Connection: close". Then the write side is shut
 * (the client sees the answer, then EOF) and what the client still sends
 * is read and dropped until it closes, or has sent nothing for
 * DRAIN_QUIET_MS, or idle_timeout_s passed: closing a socket with unread
 * bytes sends a reset, which can destroy the answer on its way to a
 * client busy sending (Go's net/http waits likewise before it closes,
 * closeWriteAndWait). The caller then returns MHD_NO, and libmicrohttpd
 * drops the connection.
 */
static void too_large_now(struct http_server *s, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ti =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	struct api_status st = API_STATUS_INIT;
	int64_t deadline = mono_ms() + (int64_t)s->idle_timeout_s * 1000;
	size_t blen;
	char *body, *head, date[64];
	time_t now = time(NULL);
	struct tm tm;
	int fd;

	if (!ci)
		return;
	fd = ci->connect_fd;
	conn_set_serving(c, true);
	status_too_large_body(&st, (unsigned long)s->max_body);
	{
		json_t *j = status_to_json(&st);

		body = jsonw_dumps(j, &blen);
		json_decref(j);
		status_release(&st);
		if (!body)
			BUG("jsonw_dumps failed");
	}
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	head = xasprintf("HTTP/1.1 413 Request Entity Too Large\r\n"
			 "Cache-Control: no-cache, private\r\n"
			 "Content-Type: application/json\r\n"
			 "Date: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n", date, blen);
	if (write_raw(c, fd, head, strlen(head), deadline) &&
	    write_raw(c, fd, body, blen, deadline)) {
		char sink[16 * 1024];

		if (ti && ti->tls_session)
			gnutls_bye((gnutls_session_t)ti->tls_session,
				   GNUTLS_SHUT_WR);
		/* libmicrohttpd may have corked the socket: the shutdown
		 * pushes the answer out, then the FIN */
		shutdown(fd, SHUT_WR);
		deadline = mono_ms() + (int64_t)s->idle_timeout_s * 1000;
		for (;;) {
			struct pollfd pf = { .fd = fd, .events = POLLIN };
			int64_t left = deadline - mono_ms();
			ssize_t r;

			if (left > DRAIN_QUIET_MS)
				left = DRAIN_QUIET_MS;
			if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
				break;
			r = recv(fd, sink, sizeof(sink), 0);
			if (r == 0 || (r < 0 && errno != EAGAIN &&
				       errno != EINTR))
				break;
		}
	}
	free(head);
	free(body);
}

/* Takes one piece of the body. Returns false to drop the connection:
 * a body without a declared length crossed the ceiling, and was
 * answered 413 (too_large_now). */
static bool take_body(struct http_server *s, struct MHD_Connection *c,
		      struct reqstate *rs, const char *upload, size_t n)
{
	rs->seen += n;
	if (sbuf_add(&rs->body, upload, n) == 0)
		return true;
	too_large_now(s, c);
	return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct reqstate *rs = *con_cls;
	struct http_resp resp;
	struct api_status st = API_STATUS_INIT;
	enum MHD_Result ret;

	(void)version;
	if (!rs) {
		/* 1. the headers are in */
		rs = xcalloc(1, sizeof(*rs));
		sbuf_init(&rs->body, s->max_body);
		*con_cls = rs;
		http_resp_init(&resp);
		if (!early_answer(s, c, url, &resp))
			return MHD_YES;
		/* libmicrohttpd closes the connection after this answer when
		 * a body was announced, without reading it */
		conn_set_serving(c, true);
		ret = send_resp(c, &resp);
		http_resp_release(&resp);
		return ret;
	}
	if (*upload_size) {
		/* 2. a piece of the body */
		bool keep = take_body(s, c, rs, upload, *upload_size);

		*upload_size = 0;
		return keep ? MHD_YES : MHD_NO;
	}
	/* 3. the request is complete: answer it */
	conn_set_serving(c, true);
	http_resp_init(&resp);
	if (rs->body.failed) {
		status_too_large_body(&st, (unsigned long)s->max_body);
		status_resp(&resp, &st);
	} else {
		struct http_req req = {
			.method = method, .path = url,
			.body = sbuf_cstr(&rs->body), .body_len = rs->body.len,
			.conn = c,
		};

		s->fn(s->ctx, &req, &resp);
	}
	/* The handler may have run long (webhook calls): restart the
	 * silence timer for the answer; streams have their own deadline and
	 * hang-up check, and no silence limit. */
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
				  resp.stream ? 0u : s->idle_timeout_s);
	ret = send_resp(c, &resp);
	http_resp_release(&resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct reqstate *rs = *con_cls;

	(void)cls;
	(void)toe;
	uncork(c);
	/* keep-alive: the next request has read_timeout_ms to arrive */
	conn_set_serving(c, false);
	if (rs) {
		sbuf_release(&rs->body);
		free(rs);
		*con_cls = NULL;
	}
}

/* Form decoding for paths and query values: %XX and '+' as a space (Go's
 * url.ParseQuery does both; client-go encodes spaces as '+'). %00 stays
 * as it is: a NUL would silently cut the string short, so that
 * ".../configmaps/a%00b" named "a". */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *w = s;

	(void)cls;
	(void)c;
	for (char *r = s; *r; r++) {
		if (*r == '+') {
			*w++ = ' ';
		} else if (*r == '%' && text_hexval(r[1]) >= 0 &&
			   text_hexval(r[2]) >= 0 &&
			   (r[1] != '0' || r[2] != '0')) {
			*w++ = (char)(text_hexval(r[1]) * 16 +
				      text_hexval(r[2]));
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

/* Binds addr:port and returns the listening socket, or -1 + err. */
static int listen_on(const char *addr, unsigned port, unsigned *bound,
		     struct err *err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, addr, &a->sin6_addr) != 1)
			return err_set(err, "bad listen address %s", addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, addr, &a->sin_addr) != 1)
			return err_set(err, "bad listen address %s", addr);
		len = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(fd, 128) < 0) {
		err_set(err, "listen on %s:%u: %s", addr, port,
			strerror(errno));
		close(fd);
		return -1;
	}
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	*bound = ntohs(ss.ss_family == AF_INET6
		       ? ((struct sockaddr_in6 *)&ss)->sin6_port
		       : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

struct http_server *http_server_start(const struct http_opts *o,
				      http_handler_fn *fn, void *ctx,
				      struct err *err)
{
	struct http_server *s = xcalloc(1, sizeof(*s));
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	const char *addr = o->addr ? o->addr : "127.0.0.1";
	int fd;

	s->fn = fn;
	s->ctx = ctx;
	s->tls = o->cert_pem && o->key_pem;
	s->token = o->token ? xstrdup(o->token) : NULL;
	s->max_body = o->max_body ? o->max_body : DEFAULT_MAX_BODY;
	s->max_conns = o->max_connections ? o->max_connections
					  : DEFAULT_MAX_CONNECTIONS;
	s->read_timeout_ms = o->read_timeout_ms ? o->read_timeout_ms
						: DEFAULT_READ_TIMEOUT_MS;
	s->idle_timeout_s = o->idle_timeout_s ? o->idle_timeout_s
					      : DEFAULT_IDLE_TIMEOUT_S;
	pthread_mutex_init(&s->conns_lock, NULL);
	dlist_init(&s->conns);
	pthread_cond_init(&s->reaper_cv, NULL);
	fd = listen_on(addr, o->port, &s->port, err);
	if (fd < 0)
		goto fail;
	if (s->tls &&
	    MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		err_set(err, "libmicrohttpd was built without TLS");
		close(fd);
		goto fail;
	}
	if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0) {
		err_set(err, "cannot start the connection reaper");
		close(fd);
		goto fail;
	}
	s->reaper_started = true;
	/* The options both modes share, then the TLS material. */
#define COMMON_OPTIONS \
	MHD_OPTION_LISTEN_SOCKET, fd, \
	MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, \
	MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, \
	MHD_OPTION_UNESCAPE_CALLBACK, unescape, s, \
	MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_POOL_BYTES, \
	MHD_OPTION_CONNECTION_LIMIT, s->max_conns + HTTP_CONN_SLACK, \
	MHD_OPTION_CONNECTION_TIMEOUT, s->idle_timeout_s
	if (s->tls) {
		flags |= MHD_USE_TLS;
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
			COMMON_OPTIONS,
			MHD_OPTION_HTTPS_MEM_KEY, o->key_pem,
			MHD_OPTION_HTTPS_MEM_CERT, o->cert_pem,
			MHD_OPTION_HTTPS_PRIORITIES, TLS_PRIORITIES,
			MHD_OPTION_END);
	} else {
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
			COMMON_OPTIONS, MHD_OPTION_END);
	}
#undef COMMON_OPTIONS
	if (!s->d) {
		err_set(err, "cannot start the HTTP daemon on %s:%u", addr,
			s->port);
		close(fd);
		goto fail;
	}
	snprintf(s->url, sizeof(s->url), "%s://%s%s%s:%u",
		 s->tls ? "https" : "http", strchr(addr, ':') ? "[" : "",
		 addr, strchr(addr, ':') ? "]" : "", s->port);
	return s;
fail:
	stop_reaper(s);
	pthread_cond_destroy(&s->reaper_cv);
	pthread_mutex_destroy(&s->conns_lock);
	free(s->token);
	free(s);
	return NULL;
}

const char *http_server_url(const struct http_server *s)
{
	return s->url;
}

unsigned http_server_port(const struct http_server *s)
{
	return s->port;
}

void http_server_stop(struct http_server *s)
{
	if (!s)
		return;
	/* The reaper first: MHD_stop_daemon closes the sockets it knows. */
	stop_reaper(s);
	MHD_stop_daemon(s->d);
	pthread_cond_destroy(&s->reaper_cv);
	pthread_mutex_destroy(&s->conns_lock);
	free(s->token);
	free(s);
}
