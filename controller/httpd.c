/*
 * httpd: libmicrohttpd glue for /metrics, liveness and readiness (see
 * httpd.h). One internal polling thread per server; requests are
 * answered on the first access-handler call, from memory buffers.
 */
#include "controller/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/sbuf.h"
#include "controller/metrics.h"

#define DEFAULT_MAX_CONNECTIONS 64u
#define DEFAULT_TIMEOUT_S 30u
#define CONN_MEMORY_LIMIT ((size_t)32 * 1024) /* request line + headers */
#define WHY_MAX 256

struct check {
	char *name;            /* owned */
	httpd_check_fn *fn;    /* NULL: flag */
	void *ud;
	atomic_bool flag;      /* flag checks: set by httpd_set_check */
};

struct httpd {
	struct MHD_Daemon *d;
	struct metrics *metrics;   /* borrowed; NULL: no /metrics */
	bool health;
	char *live;                /* owned; "/healthz" */
	char *ready;               /* owned; "/readyz" */
	struct check *checks;      /* owned; sorted by name */
	size_t nchecks;
	unsigned port;
	char url[300];         /* scheme://host:port */
};

bool httpd_bind_disabled(const char *bind)
{
	return !bind || !*bind || !strcmp(bind, "0");
}

int httpd_parse_bind(const char *bind, char *host, size_t hostcap,
		     unsigned *port, struct err *err)
{
	const char *colon, *h = bind, *p;
	size_t hl;
	unsigned long v;
	char *end;

	if (!bind)
		return err_set(err, "bad listen address (null)");
	if (*bind == '[') {
		const char *close = strchr(bind, ']');

		if (!close || close[1] != ':')
			return err_set(err, "bad listen address %s: want "
				       "[host]:port", bind);
		h = bind + 1;
		hl = (size_t)(close - h);
		p = close + 2;
	} else {
		colon = strrchr(bind, ':');
		if (!colon || memchr(bind, ':', (size_t)(colon - bind)))
			return err_set(err, "bad listen address %s: want "
				       "host:port", bind);
		hl = (size_t)(colon - bind);
		p = colon + 1;
	}
	if (hl + 1 > hostcap)
		return err_set(err, "bad listen address %s: host too long",
			       bind);
	if (*p < '0' || *p > '9')
		return err_set(err, "bad listen address %s: bad port", bind);
	errno = 0;
	v = strtoul(p, &end, 10);
	if (*end || errno || v > 65535)
		return err_set(err, "bad listen address %s: bad port", bind);
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (unsigned)v;
	return 0;
}

/* Binds a listening socket for host:port; "" = every address (IPv6
 * dual-stack, else IPv4). Returns the fd, or -1 + err. */
static int listen_on(const char *host, unsigned port, struct err *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char svc[8];
	int fd = -1, rc, one = 1, zero = 0, last = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(svc, sizeof(svc), "%u", port);
	rc = getaddrinfo(*host ? host : "::", svc, &hints, &res);
	if (rc != 0 && !*host)
		rc = getaddrinfo("0.0.0.0", svc, &hints, &res);
	if (rc != 0)
		return err_set(err, "listen address %s: %s", host,
			       gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			last = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6 && !*host)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 64) == 0)
			break;
		last = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0 && !*host && last == EAFNOSUPPORT)
		return listen_on("0.0.0.0", port, err);
	if (fd < 0)
		return err_set(err, "listen on %s:%u: %s", *host ? host : "",
			       port, strerror(last));
	return fd;
}

static unsigned bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* ---- answers ---- */

static enum MHD_Result answer(struct MHD_Connection *c, unsigned status,
			      const char *ctype, char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	/* body is ours (malloc'd) and passes to MHD, which frees it. */
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status,
				   const char *text)
{
	return answer(c, status, "text/plain; charset=utf-8", xstrdup(text),
		      strlen(text));
}

/* What a readiness query asked for. */
struct query {
	bool verbose;
	const char *exclude[16]; /* borrowed from MHD for the request */
	size_t nexclude;
	bool exclude_overflow;
};

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind,
			      const char *key, const char *value)
{
	struct query *q = cls;

	(void)kind;
	if (!strcmp(key, "verbose")) {
		q->verbose = true;
	} else if (!strcmp(key, "exclude") && value) {
		if (q->nexclude < sizeof(q->exclude) / sizeof(q->exclude[0]))
			q->exclude[q->nexclude++] = value;
		else
			q->exclude_overflow = true;
	}
	return MHD_YES;
}

static bool run_check(struct check *k, char *why, size_t n)
{
	why[0] = '\0';
	if (k->fn)
		return k->fn(k->ud, why, n);
	if (!atomic_load(&k->flag)) {
		snprintf(why, n, "%s is not ready yet", k->name);
		return false;
	}
	return true;
}

/* The aggregated readiness answer, as controller-runtime writes it. */
static enum MHD_Result readiness(struct httpd *h, struct MHD_Connection *c,
				 const char *endpoint)
{
	struct query q = { 0 };
	bool failed = false, used[16] = { false };
	char why[WHY_MAX], line[WHY_MAX + 64], *text;
	struct sbuf body = SBUF_INIT;
	size_t len;

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, on_arg, &q);
	for (size_t i = 0; i < h->nchecks; i++) {
		bool excluded = false;

		for (size_t k = 0; k < q.nexclude; k++)
			if (!strcmp(q.exclude[k], h->checks[i].name)) {
				excluded = true;
				used[k] = true;
			}
		if (excluded) {
			snprintf(line, sizeof(line), "[+]%s excluded: ok\n",
				 h->checks[i].name);
		} else if (run_check(&h->checks[i], why, sizeof(why))) {
			snprintf(line, sizeof(line), "[+]%s ok\n",
				 h->checks[i].name);
		} else {
			failed = true;
			snprintf(line, sizeof(line),
				 "[-]%s failed: reason withheld\n",
				 h->checks[i].name);
		}
		sbuf_adds(&body, line);
	}
	if (!failed && !q.verbose) {
		sbuf_release(&body);
		return answer_text(c, MHD_HTTP_OK, "ok");
	}
	for (size_t k = 0; k < q.nexclude; k++) {
		if (used[k])
			continue;
		snprintf(line, sizeof(line), "warn: some health checks cannot "
			 "be excluded: no matches for \"%.*s\"\n", WHY_MAX,
			 q.exclude[k]);
		sbuf_adds(&body, line);
	}
	snprintf(line, sizeof(line), "%s check %s\n", endpoint,
		 failed ? "failed" : "passed");
	sbuf_adds(&body, line);
	text = sbuf_detach(&body, &len);
	return answer(c, failed ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_OK,
		      "text/plain; charset=utf-8", text, len);
}

/* /readyz/<name>: one check, with its reason. */
static enum MHD_Result one_check(struct httpd *h, struct MHD_Connection *c,
				 const char *name)
{
	char why[WHY_MAX], text[WHY_MAX + 64];

	for (size_t i = 0; i < h->nchecks; i++) {
		if (strcmp(h->checks[i].name, name))
			continue;
		if (run_check(&h->checks[i], why, sizeof(why)))
			return answer_text(c, MHD_HTTP_OK, "ok");
		snprintf(text, sizeof(text), "internal server error: %s\n",
			 why[0] ? why : "check failed");
		return answer_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, text);
	}
	return answer_text(c, MHD_HTTP_NOT_FOUND, "404 page not found\n");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version,
				  const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct httpd *h = cls;
	size_t rl;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	/* Answer on the first call; a body, if any, is never read (MHD
	 * closes the connection after the answer instead). */
	(void)upload_data_size;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				   "method not allowed\n");
	if (h->metrics && !strcmp(url, "/metrics")) {
		size_t len;
		char *text = metrics_render(h->metrics, &len);

		return answer(c, MHD_HTTP_OK, METRICS_CONTENT_TYPE, text, len);
	}
	if (h->health) {
		if (!strcmp(url, h->live))
			return answer_text(c, MHD_HTTP_OK, "ok");
		if (!strncmp(url, h->live, strlen(h->live)) &&
		    !strcmp(url + strlen(h->live), "/ping"))
			return answer_text(c, MHD_HTTP_OK, "ok");
		rl = strlen(h->ready);
		if (!strcmp(url, h->ready))
			return readiness(h, c, h->ready + 1);
		if (!strncmp(url, h->ready, rl) && url[rl] == '/' &&
		    url[rl + 1])
			return one_check(h, c, url + rl + 1);
	}
	return answer_text(c, MHD_HTTP_NOT_FOUND, "404 page not found\n");
}

/* ---- lifecycle ---- */

static int cmp_check(const void *a, const void *b)
{
	return strcmp(((const struct check *)a)->name,
		      ((const struct check *)b)->name);
}

static char *path_of(const char *name, const char *dflt)
{
	const char *n = name && *name ? name : dflt;

	return xasprintf("/%s", n[0] == '/' ? n + 1 : n);
}

static void free_server(struct httpd *h)
{
	for (size_t i = 0; i < h->nchecks; i++)
		free(h->checks[i].name);
	free(h->checks);
	free(h->live);
	free(h->ready);
	free(h);
}

struct httpd *httpd_start(const struct httpd_opts *o, struct err *err)
{
	struct httpd *h;
	char host[256];
	unsigned port, flags = MHD_USE_INTERNAL_POLLING_THREAD |
			       MHD_USE_AUTO;
	bool tls = o->cert_pem && o->key_pem;
	int fd;

	if (httpd_bind_disabled(o->bind)) {
		err_set(err, "listen address \"%s\" means disabled",
			o->bind ? o->bind : "");
		return NULL;
	}
	if (httpd_parse_bind(o->bind, host, sizeof(host), &port, err) < 0)
		return NULL;
	if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		err_set(err, "libmicrohttpd was built without TLS");
		return NULL;
	}
	h = xcalloc(1, sizeof(*h));
	h->metrics = o->metrics;
	h->health = o->health;
	h->live = path_of(o->liveness_path, "healthz");
	h->ready = path_of(o->readiness_path, "readyz");
	h->nchecks = o->nchecks ? o->nchecks : 1;
	h->checks = xcalloc(h->nchecks, sizeof(*h->checks));
	if (o->nchecks == 0) {
		h->checks[0].name = xstrdup("ping");
		atomic_init(&h->checks[0].flag, true);
	}
	for (size_t i = 0; i < o->nchecks; i++) {
		h->checks[i].name = xstrdup(o->checks[i].name);
		h->checks[i].fn = o->checks[i].fn;
		h->checks[i].ud = o->checks[i].ud;
		atomic_init(&h->checks[i].flag, false);
	}
	qsort(h->checks, h->nchecks, sizeof(*h->checks), cmp_check);

	fd = listen_on(host, port, err);
	if (fd < 0) {
		free_server(h);
		return NULL;
	}
	h->port = bound_port(fd);
#define COMMON_OPTIONS \
	MHD_OPTION_LISTEN_SOCKET, fd, \
	MHD_OPTION_CONNECTION_LIMIT, \
	o->max_connections ? o->max_connections : DEFAULT_MAX_CONNECTIONS, \
	MHD_OPTION_CONNECTION_TIMEOUT, \
	o->timeout_s ? o->timeout_s : DEFAULT_TIMEOUT_S, \
	MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_MEMORY_LIMIT
	if (tls)
		h->d = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL,
			on_request, h, COMMON_OPTIONS,
			MHD_OPTION_HTTPS_MEM_KEY, o->key_pem,
			MHD_OPTION_HTTPS_MEM_CERT, o->cert_pem,
			MHD_OPTION_HTTPS_PRIORITIES,
			o->priorities ? o->priorities : "NORMAL",
			MHD_OPTION_END);
	else
		h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
			COMMON_OPTIONS, MHD_OPTION_END);
#undef COMMON_OPTIONS
	if (!h->d) {
		err_set(err, "cannot start the HTTP%s server on %s",
			tls ? "S" : "", o->bind);
		close(fd);
		free_server(h);
		return NULL;
	}
	snprintf(h->url, sizeof(h->url), "%s://%s%s%s:%u",
		 tls ? "https" : "http", strchr(host, ':') ? "[" : "",
		 *host ? host : "127.0.0.1", strchr(host, ':') ? "]" : "",
		 h->port);
	return h;
}

unsigned httpd_port(const struct httpd *h)
{
	return h->port;
}

const char *httpd_url(const struct httpd *h)
{
	return h->url;
}

void httpd_set_check(struct httpd *h, const char *name, bool ok)
{
	for (size_t i = 0; i < h->nchecks; i++) {
		if (strcmp(h->checks[i].name, name))
			continue;
		if (h->checks[i].fn)
			BUG("readiness check %s is a function", name);
		atomic_store(&h->checks[i].flag, ok);
		return;
	}
	BUG("no readiness check %s", name);
}

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);
	free_server(h);
}
