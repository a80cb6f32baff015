/*
 * http: libmicrohttpd glue (thread per connection, optional GnuTLS),
 * body accumulation with a ceiling, bearer-token check, and the
 * translation of struct http_resp into MHD responses (buffers and
 * chunked streams).
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include "devserver/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devserver/status.h"

struct http_server {
	struct MHD_Daemon *d;
	http_handler_fn *fn;
	void *ctx;
	char *token;        /* owned; NULL: no auth */
	bool tls;
	size_t max_body;
	unsigned port;
	char url[96];
};

/* Per-request state between the access-handler calls. */
struct reqstate {
	char *buf;          /* body so far (NUL-terminated) */
	size_t len;
	size_t cap;
	bool too_large;     /* over max_body: dropping the rest */
};

/* The stream adapter MHD's reader callback gets. */
struct stream {
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
	char *s = json_dumps(obj, JSON_COMPACT);

	json_decref(obj);
	if (!s)
		BUG("json_dumps failed");
	http_resp_set(r, code, ctype ? ctype : "application/json", s,
		      strlen(s));
}

void http_resp_header(struct http_resp *r, const char *name,
		      const char *value)
{
	XGROW(r->hdrs, r->caphdrs, r->nhdrs + 1);
	r->hdrs[r->nhdrs].name = xstrdup(name);
	r->hdrs[r->nhdrs].value = xstrdup(value);
	r->nhdrs++;
}

/* ---- MHD callbacks ---- */

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	long n;

	(void)pos;
	n = s->fn(s->cls, buf, max);
	if (n == HTTP_STREAM_END)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (n <= 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *s = cls;

	if (s->free_fn)
		s->free_fn(s->cls);
	free(s);
}

static enum MHD_Result send_resp(struct MHD_Connection *c,
				 struct http_resp *r)
{
	struct MHD_Response *mr;
	enum MHD_Result ret;

	if (r->stream) {
		struct stream *s = xmalloc(sizeof(*s));

		s->fn = r->stream;
		s->cls = r->stream_cls;
		s->free_fn = r->stream_free;
		r->stream = NULL;
		r->stream_cls = NULL;
		r->stream_free = NULL;
		mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
						       32 * 1024, stream_read,
						       s, stream_free);
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

	if (!s->token || !s->tls || is_public_path(url))
		return true;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	return h && !strncmp(h, "Bearer ", 7) && !strcmp(h + 7, s->token);
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
		rs = xcalloc(1, sizeof(*rs));
		*con_cls = rs;
		return MHD_YES;
	}
	if (*upload_size) {
		if (!rs->too_large && rs->len + *upload_size > s->max_body) {
			rs->too_large = true;
			FREE_AND_NULL(rs->buf);
			rs->len = rs->cap = 0;
		}
		if (!rs->too_large) {
			XGROW(rs->buf, rs->cap, rs->len + *upload_size + 1);
			memcpy(rs->buf + rs->len, upload, *upload_size);
			rs->len += *upload_size;
			rs->buf[rs->len] = '\0';
		}
		*upload_size = 0;
		return MHD_YES;
	}
	http_resp_init(&resp);
	if (rs->too_large) {
		status_too_large_body(&st, (unsigned long)s->max_body);
		status_resp(&resp, &st);
	} else if (!authorized(s, c, url)) {
		status_unauthorized(&st);
		status_resp(&resp, &st);
	} else {
		struct http_req req = {
			.method = method, .path = url,
			.body = rs->buf ? rs->buf : "", .body_len = rs->len,
			.conn = c,
		};

		s->fn(s->ctx, &req, &resp);
	}
	ret = send_resp(c, &resp);
	http_resp_release(&resp);
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
		free(rs->buf);
		free(rs);
		*con_cls = NULL;
	}
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Form decoding for paths and query values: %XX and '+' as a space (Go's
 * url.ParseQuery does both; client-go encodes spaces as '+'). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *w = s;

	(void)cls;
	(void)c;
	for (char *r = s; *r; r++) {
		if (*r == '+') {
			*w++ = ' ';
		} else if (*r == '%' && hexval(r[1]) >= 0 && hexval(r[2]) >= 0) {
			*w++ = (char)(hexval(r[1]) * 16 + hexval(r[2]));
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
	s->max_body = o->max_body ? o->max_body : (size_t)3 << 20;
	fd = listen_on(addr, o->port, &s->port, err);
	if (fd < 0)
		goto fail;
	if (s->tls) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			err_set(err, "libmicrohttpd was built without TLS");
			close(fd);
			goto fail;
		}
		flags |= MHD_USE_TLS;
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
			MHD_OPTION_LISTEN_SOCKET, fd,
			MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
			MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)256 * 1024,
			MHD_OPTION_HTTPS_MEM_KEY, o->key_pem,
			MHD_OPTION_HTTPS_MEM_CERT, o->cert_pem,
			MHD_OPTION_END);
	} else {
		s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
			MHD_OPTION_LISTEN_SOCKET, fd,
			MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
			MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
			MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)256 * 1024,
			MHD_OPTION_END);
	}
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
	MHD_stop_daemon(s->d);
	free(s->token);
	free(s);
}
