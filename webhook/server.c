/*
 * server: libmicrohttpd glue. One struct daemon_gen per running daemon
 * (its MHD handle and the PEM copies it was started with); rotation
 * swaps in a new one on the same listening socket and keeps the old one,
 * retired, until its connections are gone (see server.h DESIGN).
 *
 * Per request, the access handler runs three times, as libmicrohttpd
 * drives it: 1. headers in (route, method, type and length checks, any
 * of which answers at once), 2. body pieces (accumulated up to the cap),
 * 3. complete (call the route).
 */
#include "webhook/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/sbuf.h"

#define DEFAULT_THREADS 2u
#define DEFAULT_TIMEOUT_S 30u
#define DEFAULT_MAX_CONNECTIONS 512u
/* A retired daemon is stopped once it has no connection left, or this
 * long after the idle timeout: by then every connection it kept idle was
 * closed by that timeout, so stopping it cuts no client between two
 * requests. */
#define RETIRE_GRACE_MS 2000
#define PRIO_TLS12 "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define PRIO_TLS13 "NORMAL:-VERS-ALL:+VERS-TLS1.3"

struct server;

struct daemon_gen {
	struct server *s;       /* borrowed: the owner (routes, limits) */
	struct MHD_Daemon *d;
	char *cert_pem;         /* owned; kept while d runs */
	char *key_pem;          /* owned */
	atomic_bool retired;    /* set by the owner's thread, read by the
				 * daemon's: answers carry Connection:
				 * close, so a client does not send another
				 * request on a connection that is going */
	int64_t retired_ms;     /* CLOCK_MONOTONIC when retired */
	struct daemon_gen *next; /* the retired list */
};

struct server {
	struct server_route *routes; /* owned copy; paths borrowed */
	size_t nroutes;
	int fd;                      /* the listening socket */
	unsigned port;
	size_t max_body;             /* > 0 */
	unsigned threads;
	unsigned timeout_s;
	unsigned max_conns;
	char *prio;                  /* owned GnuTLS priority string */
	struct daemon_gen *cur;      /* owned; the daemon that accepts */
	struct daemon_gen *retired;  /* owned list; quiesced daemons that
				      * still serve their connections */
	server_observe_fn *observe;  /* NULL: none */
	void *observe_ud;
};

/* Per-request state between the access-handler calls. */
struct reqstate {
	const struct server_route *route;
	struct sbuf body;   /* the body so far, capped at max_body (P5) */
	size_t seen;        /* body bytes received, kept or not */
	bool ignore_body;   /* a read route: a body is read and dropped */
};

void server_resp_text(struct server_resp *resp, unsigned code,
		      const char *text)
{
	free(resp->body);
	resp->code = code;
	resp->ctype = "text/plain; charset=utf-8";
	resp->body = xasprintf("%s\n", text);
	resp->len = strlen(resp->body);
}

static enum MHD_Result send_resp(struct MHD_Connection *c,
				 struct server_resp *r, const char *allow,
				 bool close)
{
	static char empty[1];
	struct MHD_Response *mr;
	enum MHD_Result ret;

	mr = MHD_create_response_from_buffer(r->len, r->body ? r->body : empty,
					     r->body ? MHD_RESPMEM_MUST_FREE
						     : MHD_RESPMEM_PERSISTENT);
	if (!mr) {
		free(r->body);
		r->body = NULL;
		return MHD_NO;
	}
	r->body = NULL;
	MHD_add_response_header(mr, "Content-Type",
				r->ctype ? r->ctype
					 : "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(mr, "Allow", allow);
	if (close)
		MHD_add_response_header(mr, "Connection", "close");
	ret = MHD_queue_response(c, r->code ? r->code : 500, mr);
	MHD_destroy_response(mr);
	return ret;
}

static bool is_retired(const struct daemon_gen *g)
{
	return atomic_load_explicit(&g->retired, memory_order_relaxed);
}

static enum MHD_Result answer_text(const struct daemon_gen *g,
				   struct MHD_Connection *c, unsigned code,
				   const char *text, const char *allow)
{
	struct server_resp r = { 0, NULL, NULL, 0 };

	server_resp_text(&r, code, text);
	return send_resp(c, &r, allow, is_retired(g));
}

static bool route_matches(const struct server_route *r, const char *path)
{
	size_t n = strlen(r->path);

	if (!strcmp(r->path, path))
		return true;
	if (!r->get || !n || r->path[n - 1] != '/')
		return false;
	/* a prefix route: below it, or the prefix without its '/' */
	return !strncmp(r->path, path, n - 1) &&
	       (path[n - 1] == '\0' || (path[n - 1] == '/' && path[n]));
}

static const struct server_route *find_route(const struct server *s,
					     const char *path)
{
	for (size_t i = 0; i < s->nroutes; i++)
		if (route_matches(&s->routes[i], path))
			return &s->routes[i];
	return NULL;
}

const char *server_req_arg(const struct server_req *req, const char *key)
{
	if (!req->conn)
		return NULL;
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND,
					   key);
}

/* application/json, optionally with parameters ("; charset=utf-8"). */
static bool is_json_type(const char *ct)
{
	static const char want[] = "application/json";
	size_t n = sizeof(want) - 1;

	if (!ct || strncasecmp(ct, want, n))
		return false;
	return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

/* Checks made as soon as the headers are in; answers and returns true
 * when one fails. */
static bool early_answer(const struct daemon_gen *g,
			 struct MHD_Connection *c,
			 const char *url, const char *method,
			 struct reqstate *rs, enum MHD_Result *ret)
{
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     "Content-Length");
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     "Content-Type");
	const struct server *s = g->s;

	rs->route = find_route(s, url);
	if (!rs->route) {
		*ret = answer_text(g, c, 404, "404 page not found", NULL);
		return true;
	}
	if (rs->route->get) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
			*ret = answer_text(g, c, 405, "method not allowed: use "
					   "GET", "GET, HEAD");
			return true;
		}
		rs->ignore_body = true;
		return false;
	}
	if (strcmp(method, "POST")) {
		*ret = answer_text(g, c, 405, "method not allowed: use POST",
				   "POST");
		return true;
	}
	if (!is_json_type(ct)) {
		char *m = xasprintf("contentType=%s, expected application/json",
				    ct ? ct : "");

		*ret = answer_text(g, c, 415, m, NULL);
		free(m);
		return true;
	}
	if (cl) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(cl, &end, 10);
		if (errno == ERANGE || (end != cl && v > s->max_body)) {
			char *m = xasprintf("request body too large: limit is "
					    "%zu bytes", s->max_body);

			*ret = answer_text(g, c, 413, m, NULL);
			free(m);
			return true;
		}
	}
	return false;
}

/* Takes a piece of the body; false drops the connection (an unannounced
 * body that went on far past the cap). */
static bool take_body(const struct server *s, struct reqstate *rs,
		      const char *upload, size_t n)
{
	rs->seen += n;
	if (sbuf_add(&rs->body, upload, n) == 0)
		return true;
	/* Past the cap the body is already released; read on (bounded) so
	 * the client gets its 413. */
	return rs->seen <= 2 * s->max_body;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	const struct daemon_gen *g = cls;
	struct server *s = g->s;
	struct reqstate *rs = *con_cls;
	struct server_resp resp = { 0, NULL, NULL, 0 };
	enum MHD_Result ret;
	unsigned code;

	(void)version;
	if (!rs) {
		/* 1. the headers are in */
		rs = xcalloc(1, sizeof(*rs));
		sbuf_init(&rs->body, s->max_body);
		*con_cls = rs;
		if (early_answer(g, c, url, method, rs, &ret))
			return ret;
		return MHD_YES;
	}
	if (*upload_size) {
		/* 2. a piece of the body */
		bool keep = rs->ignore_body ||
			    take_body(s, rs, upload, *upload_size);

		*upload_size = 0;
		return keep ? MHD_YES : MHD_NO;
	}
	/* 3. complete */
	if (rs->body.failed) {
		char *m = xasprintf("request body too large: limit is %zu "
				    "bytes", s->max_body);

		ret = answer_text(g, c, 413, m, NULL);
		free(m);
		return ret;
	}
	{
		struct server_req req = {
			.method = method, .path = url,
			.body = sbuf_cstr(&rs->body), .len = rs->body.len,
			.conn = c,
		};
		struct timespec t0, t1;

		if (s->observe)
			clock_gettime(CLOCK_MONOTONIC, &t0);
		rs->route->fn(rs->route->ctx, &req, &resp);
		code = resp.code ? resp.code : 500;
		ret = send_resp(c, &resp, NULL, is_retired(g));
		if (s->observe) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			s->observe(s->observe_ud, rs->route->path, code,
				   (double)(t1.tv_sec - t0.tv_sec) +
				   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		}
	}
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct reqstate *rs = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (rs) {
		sbuf_release(&rs->body);
		free(rs);
		*con_cls = NULL;
	}
}

/* Binds addr:port (every interface, IPv6 dual-stack where available,
 * when addr is empty); returns the socket or -1 + err. */
static int listen_on(const char *addr, unsigned port, unsigned *bound,
		     struct err *err)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, zero = 0;
	bool any = !addr || !*addr;

	memset(&ss, 0, sizeof(ss));
	if (any || strchr(addr, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (any)
			a->sin6_addr = in6addr_any;
		else if (inet_pton(AF_INET6, addr, &a->sin6_addr) != 1)
			return err_set(err, "webhook: bad bind address %s",
				       addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, addr, &a->sin_addr) != 1)
			return err_set(err, "webhook: bad bind address %s",
				       addr);
		len = sizeof(*a);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && any) {
		/* no IPv6: every IPv4 interface */
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		memset(&ss, 0, sizeof(ss));
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		a->sin_addr.s_addr = htonl(INADDR_ANY);
		len = sizeof(*a);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0)
		return err_set(err, "webhook: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6 && any)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		err_set(err, "webhook: listen on %s:%u: %s",
			any ? "*" : addr, port, strerror(errno));
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

/* A daemon generation for the PEM pair (copied), not started yet. */
static struct daemon_gen *gen_new(struct server *s, const char *cert,
				  const char *key)
{
	struct daemon_gen *g = xcalloc(1, sizeof(*g));

	g->s = s;
	g->cert_pem = xstrdup(cert);
	g->key_pem = xstrdup(key);
	atomic_init(&g->retired, false);
	return g;
}

/* Stops g's daemon (if any: its threads are joined, its connections
 * closed) and frees g. NULL-safe. */
static void gen_free(struct daemon_gen *g)
{
	if (!g)
		return;
	if (g->d)
		MHD_stop_daemon(g->d);
	free(g->cert_pem);
	free(g->key_pem);
	free(g);
}

/* Starts a daemon serving fd (or no socket at all when fd < 0: a dry run
 * that only proves GnuTLS accepts the PEM) with g's PEM; requests see g
 * as their cls. */
static struct MHD_Daemon *start_daemon(struct daemon_gen *g, int fd)
{
	const struct server *s = g->s;
	unsigned flags = MHD_USE_TLS | MHD_USE_ITC;

	if (fd < 0)
		return MHD_start_daemon(flags | MHD_USE_NO_LISTEN_SOCKET, 0,
					NULL, NULL, on_request, g,
					MHD_OPTION_HTTPS_MEM_KEY, g->key_pem,
					MHD_OPTION_HTTPS_MEM_CERT, g->cert_pem,
					MHD_OPTION_HTTPS_PRIORITIES, s->prio,
					MHD_OPTION_END);
	flags |= MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	return MHD_start_daemon(flags, 0, NULL, NULL, on_request, g,
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_THREAD_POOL_SIZE, s->threads,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, g,
				MHD_OPTION_CONNECTION_TIMEOUT, s->timeout_s,
				MHD_OPTION_CONNECTION_LIMIT, s->max_conns,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)64 * 1024,
				MHD_OPTION_HTTPS_MEM_KEY, g->key_pem,
				MHD_OPTION_HTTPS_MEM_CERT, g->cert_pem,
				MHD_OPTION_HTTPS_PRIORITIES, s->prio,
				MHD_OPTION_END);
}

/* Does GnuTLS take this pair? (A daemon without a socket or threads.) */
static bool pem_usable(struct server *s, const char *cert, const char *key)
{
	struct daemon_gen *g;
	bool ok;

	if (!cert || !key)
		return false;
	g = gen_new(s, cert, key);
	g->d = start_daemon(g, -1);
	ok = g->d != NULL;
	gen_free(g);
	return ok;
}

struct server *server_start(const struct server_opts *o,
			    const struct server_route *routes, size_t nroutes,
			    struct err *err)
{
	struct server *s;

	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		err_set(err, "webhook: libmicrohttpd was built without TLS");
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->routes = xcalloc(nroutes ? nroutes : 1, sizeof(*s->routes));
	memcpy(s->routes, routes, nroutes * sizeof(*routes));
	s->nroutes = nroutes;
	s->max_body = o->max_body ? o->max_body : SERVER_DEFAULT_MAX_BODY;
	s->threads = o->threads ? o->threads : DEFAULT_THREADS;
	s->timeout_s = o->timeout_s ? o->timeout_s : DEFAULT_TIMEOUT_S;
	s->max_conns = o->max_connections ? o->max_connections
					  : DEFAULT_MAX_CONNECTIONS;
	s->prio = xstrdup(o->priorities ? o->priorities
					: o->min_tls13 ? PRIO_TLS13 : PRIO_TLS12);
	s->observe = o->observe;
	s->observe_ud = o->observe_ud;
	s->fd = -1;
	if (!pem_usable(s, o->cert_pem, o->key_pem)) {
		err_set(err, "webhook: the serving certificate or key is "
			"unusable (not PEM, or they do not match)");
		goto fail;
	}
	s->fd = listen_on(o->addr, o->port, &s->port, err);
	if (s->fd < 0)
		goto fail;
	s->cur = gen_new(s, o->cert_pem, o->key_pem);
	s->cur->d = start_daemon(s->cur, s->fd);
	if (!s->cur->d) {
		err_set(err, "webhook: cannot start the HTTPS daemon on port "
			"%u", s->port);
		close(s->fd);
		goto fail;
	}
	return s;
fail:
	gen_free(s->cur);
	free(s->routes);
	free(s->prio);
	free(s);
	return NULL;
}

static unsigned open_connections(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *i =
		MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return i ? i->num_connections : 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Stops the retired daemons whose connections are gone, or whose grace
 * is over (everything: all). */
static void reap(struct server *s, bool all)
{
	struct daemon_gen **p = &s->retired;
	int64_t now = mono_ms();
	int64_t grace = (int64_t)s->timeout_s * 1000 + RETIRE_GRACE_MS;

	while (*p) {
		struct daemon_gen *g = *p;

		if (all || open_connections(g->d) == 0 ||
		    now - g->retired_ms > grace) {
			*p = g->next;
			gen_free(g);
		} else {
			p = &g->next;
		}
	}
}

int server_set_certificate(struct server *s, const char *cert_pem,
			   const char *key_pem, struct err *err)
{
	struct daemon_gen *old = s->cur, *neu;
	MHD_socket fd;
	int rc = 0;

	reap(s, false);
	if (!pem_usable(s, cert_pem, key_pem))
		return err_set(err, "webhook: the new certificate or key is "
			       "unusable (not PEM, or they do not match)");
	neu = gen_new(s, cert_pem, key_pem);
	/* 1. the old daemon's answers from now on close their connection,
	 * and it stops accepting; what it has open carries on */
	atomic_store(&old->retired, true);
	old->retired_ms = mono_ms();
	fd = MHD_quiesce_daemon(old->d);
	if (fd == MHD_INVALID_SOCKET)
		BUG("MHD_quiesce_daemon failed (MHD_USE_ITC missing?)");
	/* 2. the new one takes over the listening socket */
	neu->d = start_daemon(neu, fd);
	if (!neu->d) {
		/* cannot happen after the dry run; keep serving the old PEM
		 * from a fresh daemon rather than go deaf */
		gen_free(neu);
		neu = gen_new(s, old->cert_pem, old->key_pem);
		neu->d = start_daemon(neu, fd);
		if (!neu->d)
			BUG("cannot restart the webhook daemon");
		rc = err_set(err, "webhook: cannot start a daemon with the "
			     "new certificate; still serving the old one");
	}
	s->cur = neu;
	/* 3. the old one finishes its connections in its own time */
	old->next = s->retired;
	s->retired = old;
	reap(s, false);
	return rc;
}

size_t server_retired(struct server *s)
{
	size_t n = 0;

	reap(s, false);
	for (const struct daemon_gen *g = s->retired; g; g = g->next)
		n++;
	return n;
}

unsigned server_port(const struct server *s)
{
	return s->port;
}

void server_stop(struct server *s)
{
	if (!s)
		return;
	reap(s, true);
	/* the daemon owns the listening socket and closes it */
	gen_free(s->cur);
	free(s->routes);
	free(s->prio);
	free(s);
}
