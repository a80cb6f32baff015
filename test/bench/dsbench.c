/*
 * dsbench: the throughput of bin/cueue-devserver, as rows for
 * test/bench/run.sh (BENCHMARKS.md).
 *
 * For each storage mode (in memory; --data-dir in a fresh temp dir) and
 * each watcher count W (1 and 10), it starts a fresh devserver, creates
 * namespace "bench", attaches W watches to its ConfigMaps, and then N
 * client threads each create K small ConfigMaps and merge-patch each of
 * them once. It reports creates/s and patches/s (aggregate), p50/p99
 * latency, watch events delivered/s (summed over watchers), whether every
 * watcher received every event exactly once and in resourceVersion order,
 * and the devserver's CPU time and peak RSS.
 *
 * Output: "ROW\twhat\tfigure\tunit\tanchor\tratio\tnote" lines on stdout
 * (run.sh's format), progress on stderr. QUICK=1 in the environment asks
 * for the reduced run. Exits 0 when every scenario ran and every check
 * held, 1 when a request failed or a watcher missed an event (the figures
 * are then not worth recording), 2 on bad usage.
 *
 * Threads (this program only; the project's thread rules are about the
 * controller): N client threads, each with its own keep-alive HTTP/1.1
 * connection (a raw socket; --client curl: a curl easy handle); one
 * watch thread driving all W streams with a curl multi handle; the main thread, which starts and stops the devserver and
 * reads its /proc files. They share the per-watcher counters (atomics)
 * and nothing else mutable; phases are separated by a barrier.
 */
#define _GNU_SOURCE /* memmem */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "test/bench/benchlib.h"

#define NS "bench"
#define LINE_CAP (1u << 20)   /* one watch event line; far above ours */
#define RESP_KEEP 512         /* response bytes kept for error messages */
#define START_TIMEOUT_MS 10000
#define ATTACH_TIMEOUT_MS 10000
#define DRAIN_TIMEOUT_MS 60000
#define SLO_P99_MS 1000.0     /* k8s SLO: mutating single-object calls */
#define AIM_WRITES 10000.0    /* the aim, small writes/s */

struct opts {
	const char *devserver;  /* borrowed argv; NULL with server_url */
	const char *server_url; /* borrowed argv; NULL: start one */
	const char *extra[8];   /* borrowed argv: --devserver-arg values */
	int nextra;
	int nclients;           /* > 0 */
	int nobjects;           /* per client; > 0 */
	int watchers[4];        /* watcher counts to run, each >= 0 */
	int nwatchers;
	bool storage[2];        /* [0] memory, [1] disk */
	int repeat;             /* runs per scenario; the median is kept */
	bool quick;
	bool libcurl_clients;      /* --client curl: libcurl request threads */
};

/* A started devserver and what it cost. */
struct server {
	pid_t pid;              /* 0: external (--server) */
	int out_fd;             /* its stdout (pipe), -1 when external */
	char url[256];          /* "http://127.0.0.1:PORT" */
	char workdir[256];      /* temp dir holding data/ and the log */
	double cpu_s;           /* user+sys seconds of its whole life */
	long maxrss_kb;         /* ru_maxrss from wait4 */
};

/* One request thread and what it measured. */
struct client {
	pthread_t tid;
	int id;
	struct run *run;        /* borrowed */
	CURL *h;                /* owned; one keep-alive connection */
	int fd;                 /* the raw client's connection, or -1 */
	char *rbuf;             /* owned; the raw client's response bytes */
	size_t rcap;
	uint32_t *lat_create;   /* owned; nobjects latencies in µs */
	uint32_t *lat_patch;    /* owned; nobjects latencies in µs */
	size_t nerr;            /* failed requests (any phase) */
	char err[RESP_KEEP + 64]; /* the first failure, for the report */
	char resp[RESP_KEEP + 1]; /* the current response's first bytes */
	size_t resp_len;
};

/* One watch stream and what it saw. Written by the watch thread only. */
struct watcher {
	CURL *h;                   /* owned */
	struct run *run;           /* borrowed */
	char *line;                /* owned; a partial line, < LINE_CAP */
	size_t len, cap;
	unsigned char *state;      /* owned; per object: 0, 1 ADDED, 2 MODIFIED */
	uint64_t last_rv;          /* RVs must strictly increase */
	_Atomic uint64_t nevents;  /* ADDED + MODIFIED of bench objects */
	_Atomic uint64_t nbad;     /* duplicates, gaps, RV order, ERROR */
	_Atomic int64_t last_ns;   /* monotonic ns of the last bench event */
	_Atomic bool attached;     /* saw the sentinel object */
	_Atomic bool ended;        /* the stream closed under us */
	char why[160];             /* the first problem, for the report */
};

/* One scenario: a storage mode, a watcher count, and the shared state. */
struct run {
	const struct opts *o;
	const char *url;           /* borrowed: server.url */
	char host[128];            /* "127.0.0.1:PORT" of an http:// url */
	bool raw;                  /* requests over raw sockets */
	int nwatch;
	pthread_barrier_t barrier; /* nclients + main */
	struct watcher *w;         /* owned array of nwatch */
	CURLM *multi;              /* owned; all watch streams */
	_Atomic bool stop;         /* the watch thread exits */
};

/* The figures of one scenario. */
struct result {
	double create_s, patch_s;          /* phase wall times */
	double create_p50, create_p99;     /* ms */
	double patch_p50, patch_p99;       /* ms */
	double drain_s;                    /* first create -> last event */
	double lag_ms;                     /* last patch -> last event */
	uint64_t events;                   /* summed over watchers */
	int ncomplete;                     /* watchers with every event */
	size_t nerr;                       /* failed requests */
	double load_cpu_s;                 /* devserver CPU during the load */
	double client_cpu_s;               /* this process, same window */
	double cpu_s;                      /* devserver, whole life */
	long maxrss_kb;
	double create_lo, create_hi;       /* creates/s range over repeats */
	double patch_lo, patch_hi;         /* patches/s range over repeats */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static _Noreturn void die(const char *fmt, ...) PRINTF_LIKE(1, 2);
static _Noreturn void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("dsbench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void progress(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("  dsbench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- the devserver process ---- */

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/*
 * Starts the devserver on a free port, with --data-dir when disk; fills
 * s. Returns 0, or -1 with the reason on stderr (its log included).
 */
static int server_start(const struct opts *o, bool disk, struct server *s)
{
	const char *tmp = getenv("TMPDIR");
	char data[300], log[300], line[256];
	size_t len = 0;
	int64_t deadline;
	int pfd[2];

	memset(s, 0, sizeof(*s));
	s->out_fd = -1;
	if (o->server_url) {
		snprintf(s->url, sizeof(s->url), "%s", o->server_url);
		return 0;
	}
	snprintf(s->workdir, sizeof(s->workdir), "%s/dsbench.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(s->workdir)) {
		fprintf(stderr, "dsbench: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(data, sizeof(data), "%s/data", s->workdir);
	snprintf(log, sizeof(log), "%s/devserver.log", s->workdir);
	if (pipe(pfd) != 0)
		die("pipe: %s", strerror(errno));
	s->pid = fork();
	if (s->pid < 0)
		die("fork: %s", strerror(errno));
	if (s->pid == 0) {
		int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(pfd[1], 1);
		if (lfd >= 0)
			dup2(lfd, 2);
		close(pfd[0]);
		{
			const char *av[8 + 16];
			int n = 0;

			av[n++] = o->devserver;
			av[n++] = "--listen";
			av[n++] = "127.0.0.1:0";
			if (disk) {
				av[n++] = "--data-dir";
				av[n++] = data;
			}
			for (int i = 0; i < o->nextra; i++)
				av[n++] = o->extra[i];
			av[n] = NULL;
			execv(o->devserver, (char *const *)av);
		}
		fprintf(stderr, "exec %s: %s\n", o->devserver,
			strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	s->out_fd = pfd[0];
	/* wait for "listening on URL\n" */
	deadline = now_ns() + (int64_t)START_TIMEOUT_MS * 1000000;
	while (len < sizeof(line) - 1) {
		struct pollfd p = { .fd = s->out_fd, .events = POLLIN };
		int64_t left = (deadline - now_ns()) / 1000000;
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		n = read(s->out_fd, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		line[len] = '\0';
		if (strchr(line, '\n')) {
			char *nl = strchr(line, '\n');

			*nl = '\0';
			if (strncmp(line, "listening on ", 13) != 0)
				break;
			snprintf(s->url, sizeof(s->url), "%s", line + 13);
			return 0;
		}
	}
	fprintf(stderr, "dsbench: %s did not start; its log:\n",
		o->devserver);
	{
		FILE *f = fopen(log, "r");
		char b[512];

		while (f && fgets(b, sizeof(b), f))
			fprintf(stderr, "  | %s", b);
		if (f)
			fclose(f);
	}
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	s->pid = 0;
	return -1;
}

/* SIGTERM, wait4 for its rusage, remove the temp dir. */
static void server_stop(struct server *s)
{
	struct rusage ru;
	int status;

	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		if (wait4(s->pid, &status, 0, &ru) == s->pid) {
			s->cpu_s = (double)ru.ru_utime.tv_sec +
				   ru.ru_utime.tv_usec / 1e6 +
				   (double)ru.ru_stime.tv_sec +
				   ru.ru_stime.tv_usec / 1e6;
			s->maxrss_kb = ru.ru_maxrss;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				fprintf(stderr, "dsbench: devserver exited "
					"with status 0x%x\n", status);
		}
		s->pid = 0;
	}
	if (s->out_fd >= 0)
		close(s->out_fd);
	s->out_fd = -1;
	if (s->workdir[0])
		nftw(s->workdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	s->workdir[0] = '\0';
}

/* ---- requests ---- */

static size_t keep_resp(char *data, size_t size, size_t nmemb, void *cls)
{
	struct client *c = cls;
	size_t n = size * nmemb, room = RESP_KEEP - c->resp_len;

	if (room > n)
		room = n;
	memcpy(c->resp + c->resp_len, data, room);
	c->resp_len += room;
	c->resp[c->resp_len] = '\0';
	return n;
}

static CURL *easy_new(void)
{
	CURL *h = curl_easy_init();

	if (!h)
		die("curl_easy_init failed");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
	return h;
}

/*
 * The raw client: HTTP/1.1 over one keep-alive TCP connection per thread,
 * one writev per request and usually one read per answer. libcurl's
 * per-request overhead (option handling, header lists, its poll loop)
 * cost as much CPU as the devserver spent on a small write, and on a
 * 2-core machine the load generator's CPU is taken from the server it
 * measures; --client curl keeps the libcurl path for comparison. The
 * requests are the same either way (method, path, Host, Accept,
 * Content-Type, Content-Length, body).
 */
static int raw_connect(struct client *c)
{
	char host[128], *colon;
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int one = 1;

	snprintf(host, sizeof(host), "%s", c->run->host);
	colon = strrchr(host, ':');
	if (!colon)
		return -1;
	*colon = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai)
		return -1;
	c->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd >= 0 && connect(c->fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		close(c->fd);
		c->fd = -1;
	}
	freeaddrinfo(ai);
	if (c->fd < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static void raw_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* The value of header name (case-insensitive) in head, or NULL. */
static const char *raw_header(const char *head, const char *name)
{
	size_t n = strlen(name);

	for (const char *l = strstr(head, "\r\n"); l; l = strstr(l, "\r\n")) {
		l += 2;
		if (!strncasecmp(l, name, n) && l[n] == ':') {
			l += n + 1;
			while (*l == ' ')
				l++;
			return l;
		}
	}
	return NULL;
}

/* Reads one answer: its status, or 0 (transport error, in c->resp). */
static long raw_response(struct client *c)
{
	size_t have = 0, head_len = 0, body_len = 0;
	const char *cl, *conn;
	long code = 0;
	bool close_after;

	for (;;) {
		ssize_t n;
		char *end;

		if (have + 4096 + 1 > c->rcap)
			XGROW(c->rbuf, c->rcap, have + 4096 + 1);
		n = read(c->fd, c->rbuf + have, c->rcap - have - 1);
		if (n <= 0) {
			snprintf(c->resp, sizeof(c->resp), "read: %s",
				 n ? strerror(errno) : "connection closed");
			raw_close(c);
			return 0;
		}
		have += (size_t)n;
		c->rbuf[have] = '\0';
		if (!head_len) {
			end = strstr(c->rbuf, "\r\n\r\n");
			if (!end)
				continue;
			head_len = (size_t)(end - c->rbuf) + 4;
			*end = '\0'; /* the head as one string */
			if (sscanf(c->rbuf, "HTTP/1.%*d %ld", &code) != 1 ||
			    raw_header(c->rbuf, "Transfer-Encoding")) {
				snprintf(c->resp, sizeof(c->resp),
					 "unexpected answer: %.200s", c->rbuf);
				raw_close(c);
				return 0;
			}
			cl = raw_header(c->rbuf, "Content-Length");
			body_len = cl ? strtoul(cl, NULL, 10) : 0;
			conn = raw_header(c->rbuf, "Connection");
			close_after = conn && !strncasecmp(conn, "close", 5);
			c->rbuf[head_len - 4] = '\r';
		}
		if (have >= head_len + body_len)
			break;
	}
	c->resp_len = body_len < RESP_KEEP ? body_len : RESP_KEEP;
	memcpy(c->resp, c->rbuf + head_len, c->resp_len);
	c->resp[c->resp_len] = '\0';
	if (close_after || have != head_len + body_len)
		raw_close(c);
	return code;
}

static long raw_request(struct client *c, const char *method,
			const char *path, const char *ctype, const char *body)
{
	char head[1024];
	size_t blen = body ? strlen(body) : 0, done = 0;
	int n = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: %s\r\n"
			 "User-Agent: dsbench\r\nAccept: application/json\r\n"
			 "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n",
			 method, path, c->run->host, ctype, blen);
	struct iovec iov[2] = { { head, (size_t)n }, { (void *)body, blen } };

	c->resp_len = 0;
	c->resp[0] = '\0';
	if (c->fd < 0 && raw_connect(c) < 0) {
		snprintf(c->resp, sizeof(c->resp), "connect: %s",
			 strerror(errno));
		return 0;
	}
	while (done < (size_t)n + blen) {
		ssize_t w;

		w = writev(c->fd, iov, 2);
		if (w <= 0) {
			snprintf(c->resp, sizeof(c->resp), "write: %s",
				 strerror(errno));
			raw_close(c);
			return 0;
		}
		done += (size_t)w;
		for (int i = 0; i < 2; i++) {
			size_t t = (size_t)w < iov[i].iov_len ? (size_t)w
							      : iov[i].iov_len;

			iov[i].iov_base = (char *)iov[i].iov_base + t;
			iov[i].iov_len -= t;
			w -= (ssize_t)t;
		}
	}
	return raw_response(c);
}

/*
 * One request on c's connection: method, path under the server URL, body
 * (may be NULL) of ctype. Returns the HTTP status, 0 on transport errors;
 * the response's first bytes are in c->resp.
 */
static long request(struct client *c, const char *method, const char *path,
		    const char *ctype, const char *body)
{
	char url[512], ct[128];
	struct curl_slist *hdrs = NULL;
	long code = 0;
	CURLcode rc;

	if (c->run->raw && !c->h)
		return raw_request(c, method, path, ctype, body);
	snprintf(url, sizeof(url), "%s%s", c->run->url, path);
	snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
	hdrs = curl_slist_append(hdrs, ct);
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:");
	c->resp_len = 0;
	c->resp[0] = '\0';
	curl_easy_setopt(c->h, CURLOPT_URL, url);
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, keep_resp);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	if (body) {
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE,
				 (long)strlen(body));
	} else {
		curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST,
			 strcmp(method, "GET") && strcmp(method, "POST") ?
			 method : NULL);
	rc = curl_easy_perform(c->h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
	else
		snprintf(c->resp, sizeof(c->resp), "%s",
			 curl_easy_strerror(rc));
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	return code;
}

static void note_failure(struct client *c, const char *what, long code)
{
	if (c->nerr++ == 0)
		snprintf(c->err, sizeof(c->err), "%s: HTTP %ld: %s", what,
			 code, c->resp);
}

/* Client thread: creates, then patches, each phase between barriers. */
static void *client_main(void *arg)
{
	struct client *c = arg;
	struct run *r = c->run;
	int k = r->o->nobjects;
	char path[256], body[256];

	pthread_barrier_wait(&r->barrier);
	for (int i = 0; i < k; i++) {
		int64_t t0 = now_ns();
		long code;

		snprintf(body, sizeof(body), "{\"apiVersion\":\"v1\","
			 "\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
			 "\"o-%d-%d\"},\"data\":{\"v\":\"0\"}}", c->id, i);
		code = request(c, "POST", "/api/v1/namespaces/" NS
			       "/configmaps", "application/json", body);
		c->lat_create[i] = (uint32_t)((now_ns() - t0) / 1000);
		if (code != 201)
			note_failure(c, "create", code);
	}
	pthread_barrier_wait(&r->barrier);
	pthread_barrier_wait(&r->barrier);
	for (int i = 0; i < k; i++) {
		int64_t t0 = now_ns();
		long code;

		snprintf(path, sizeof(path), "/api/v1/namespaces/" NS
			 "/configmaps/o-%d-%d", c->id, i);
		code = request(c, "PATCH", path,
			       "application/merge-patch+json",
			       "{\"data\":{\"v\":\"1\"}}");
		c->lat_patch[i] = (uint32_t)((now_ns() - t0) / 1000);
		if (code != 200)
			note_failure(c, "patch", code);
	}
	pthread_barrier_wait(&r->barrier);
	return NULL;
}

/* ---- watches ---- */

static void watch_bad(struct watcher *w, const char *fmt, ...)
	PRINTF_LIKE(2, 3);
static void watch_bad(struct watcher *w, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&w->nbad, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(w->why, sizeof(w->why), fmt, ap);
		va_end(ap);
	}
}

/* The string value after key (e.g. "\"name\":\"") in [p, p+n), or NULL. */
static const char *field(const char *p, size_t n, const char *key,
			 size_t *vlen)
{
	size_t klen = strlen(key);
	const char *v = memmem(p, n, key, klen), *end;

	if (!v)
		return NULL;
	v += klen;
	end = memchr(v, '"', n - (size_t)(v - p));
	if (!end)
		return NULL;
	*vlen = (size_t)(end - v);
	return v;
}

/*
 * One watch event line. It is scanned, not parsed: the devserver writes
 * compact JSON, and a full parse per event on 10 streams would take CPU
 * from the server being measured.
 */
static void watch_line(struct watcher *w, const char *p, size_t n)
{
	const struct opts *o = w->run->o;
	const char *type, *name, *rv;
	size_t tlen, nlen, rvlen, show = n < 120 ? n : 120;
	int cl, ix, consumed = 0;
	uint64_t v;
	size_t idx;

	type = field(p, n, "\"type\":\"", &tlen);
	if (!type) {
		watch_bad(w, "event without type: %.*s", (int)show, p);
		return;
	}
	if (tlen == 5 && !memcmp(type, "ERROR", 5)) {
		watch_bad(w, "ERROR event: %.*s", (int)show, p);
		return;
	}
	if (tlen == 8 && !memcmp(type, "BOOKMARK", 8))
		return;
	name = field(p, n, "\"name\":\"", &nlen);
	rv = field(p, n, "\"resourceVersion\":\"", &rvlen);
	if (!name || !rv) {
		watch_bad(w, "event without name or RV: %.*s", (int)show, p);
		return;
	}
	v = strtoull(rv, NULL, 10);
	if (v <= w->last_rv)
		watch_bad(w, "RV %" PRIu64 " after %" PRIu64, v, w->last_rv);
	w->last_rv = v;
	if (nlen == 8 && !memcmp(name, "sentinel", 8)) {
		atomic_store(&w->attached, true);
		return;
	}
	if (sscanf(name, "o-%d-%d\"%n", &cl, &ix, &consumed) != 2 ||
	    !consumed || cl < 0 || cl >= o->nclients || ix < 0 ||
	    ix >= o->nobjects)
		return; /* not ours */
	idx = (size_t)cl * (size_t)o->nobjects + (size_t)ix;
	if (tlen == 5 && !memcmp(type, "ADDED", 5) && w->state[idx] == 0)
		w->state[idx] = 1;
	else if (tlen == 8 && !memcmp(type, "MODIFIED", 8) &&
		 w->state[idx] == 1)
		w->state[idx] = 2;
	else
		watch_bad(w, "%.*s for o-%d-%d in state %d", (int)tlen, type,
			  cl, ix, w->state[idx]);
	atomic_store(&w->last_ns, now_ns());
	atomic_fetch_add(&w->nevents, 1);
}

/* curl write callback: split the stream into lines (capped, STYLE P5). */
static size_t watch_data(char *data, size_t size, size_t nmemb, void *cls)
{
	struct watcher *w = cls;
	size_t n = size * nmemb, i = 0;

	while (i < n) {
		const char *nl = memchr(data + i, '\n', n - i);
		size_t take = nl ? (size_t)(nl - (data + i)) : n - i;

		if (w->len + take >= LINE_CAP) {
			watch_bad(w, "event line over %u bytes", LINE_CAP);
			return 0; /* ends the transfer */
		}
		if (!nl || w->len) {
			XGROW(w->line, w->cap, w->len + take + 1);
			memcpy(w->line + w->len, data + i, take);
			w->len += take;
		}
		if (!nl)
			break;
		if (w->len) {
			watch_line(w, w->line, w->len);
			w->len = 0;
		} else {
			watch_line(w, data + i, take);
		}
		i += take + 1;
	}
	return n;
}

/* Watch thread: drives every stream until run->stop. */
static void *watch_main(void *arg)
{
	struct run *r = arg;
	int running = 1;

	while (!atomic_load(&r->stop)) {
		CURLMsg *m;
		int left;

		curl_multi_perform(r->multi, &running);
		while ((m = curl_multi_info_read(r->multi, &left))) {
			struct watcher *w = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
					  (char **)&w);
			atomic_store(&w->ended, true);
			watch_bad(w, "stream ended: %s",
				  curl_easy_strerror(m->data.result));
		}
		curl_multi_poll(r->multi, NULL, 0, 100, NULL);
	}
	return NULL;
}

static void watchers_start(struct run *r, uint64_t from_rv)
{
	size_t nobj = (size_t)r->o->nclients * (size_t)r->o->nobjects;
	char url[512];

	snprintf(url, sizeof(url), "%s/api/v1/namespaces/" NS "/configmaps"
		 "?watch=true&resourceVersion=%" PRIu64
		 "&timeoutSeconds=3600", r->url, from_rv);
	r->multi = curl_multi_init();
	r->w = xcalloc((size_t)r->nwatch ? (size_t)r->nwatch : 1,
		       sizeof(*r->w));
	for (int i = 0; i < r->nwatch; i++) {
		struct watcher *w = &r->w[i];

		w->run = r;
		w->state = xcalloc(nobj, 1);
		w->h = easy_new();
		curl_easy_setopt(w->h, CURLOPT_TIMEOUT_MS, 0L);
		curl_easy_setopt(w->h, CURLOPT_URL, url);
		curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, watch_data);
		curl_easy_setopt(w->h, CURLOPT_WRITEDATA, w);
		curl_easy_setopt(w->h, CURLOPT_PRIVATE, (char *)w);
		curl_multi_add_handle(r->multi, w->h);
	}
}

static void watchers_stop(struct run *r)
{
	for (int i = 0; i < r->nwatch; i++) {
		struct watcher *w = &r->w[i];

		curl_multi_remove_handle(r->multi, w->h);
		curl_easy_cleanup(w->h);
		free(w->line);
		free(w->state);
	}
	curl_multi_cleanup(r->multi);
	free(r->w);
	r->w = NULL;
	r->multi = NULL;
}

/* ---- one scenario ---- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (ms) of all clients' latencies of one phase. */
static void percentiles(struct client *cs, int nc, int k, bool patch,
			double *p50, double *p99)
{
	size_t n = (size_t)nc * (size_t)k, j = 0;
	uint32_t *all = xmalloc(n * sizeof(*all));

	for (int i = 0; i < nc; i++) {
		memcpy(all + j, patch ? cs[i].lat_patch : cs[i].lat_create,
		       (size_t)k * sizeof(*all));
		j += (size_t)k;
	}
	qsort(all, n, sizeof(*all), cmp_u32);
	*p50 = all[bench_rank(n, 50)] / 1000.0;
	*p99 = all[bench_rank(n, 99)] / 1000.0;
	free(all);
}

/* The namespace's RV from a create answer, or 0. */
static uint64_t rv_of(const char *resp)
{
	size_t n;
	const char *v = field(resp, strlen(resp), "\"resourceVersion\":\"",
			      &n);

	return v ? strtoull(v, NULL, 10) : 0;
}

static bool all_attached(const struct run *r)
{
	for (int i = 0; i < r->nwatch; i++)
		if (!atomic_load(&r->w[i].attached) ||
		    atomic_load(&r->w[i].ended))
			return false;
	return true;
}

/* Events every watcher must see: one ADDED and one MODIFIED per object. */
static uint64_t expected_events(const struct opts *o)
{
	return 2 * (uint64_t)o->nclients * (uint64_t)o->nobjects;
}

static bool all_drained(const struct run *r)
{
	for (int i = 0; i < r->nwatch; i++) {
		const struct watcher *w = &r->w[i];

		if (atomic_load(&w->ended))
			continue;
		if (atomic_load(&w->nevents) < expected_events(r->o))
			return false;
	}
	return true;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * Runs one scenario against a fresh devserver; fills res. Returns 0, or
 * -1 when it could not run at all (res then holds nothing useful).
 */
static int scenario(const struct opts *o, bool disk, int nwatch,
		    struct result *res)
{
	struct server srv;
	struct run r = { .o = o, .nwatch = nwatch };
	struct client setup = { .run = &r };
	struct client *cs;
	pthread_t wt;
	int64_t t0, t1, t2, t3, deadline, last = 0;
	double cpu0 = 0, cpu1 = 0, self0, self1;
	uint64_t ns_rv;
	long code;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (server_start(o, disk, &srv) < 0)
		return -1;
	r.url = srv.url;
	if (!o->libcurl_clients && !strncmp(srv.url, "http://", 7)) {
		snprintf(r.host, sizeof(r.host), "%.120s", srv.url + 7);
		r.host[strcspn(r.host, "/")] = '\0';
		r.raw = true;
	}
	setup.h = easy_new();
	code = request(&setup, "POST", "/api/v1/namespaces",
		       "application/json", "{\"apiVersion\":\"v1\",\"kind\":"
		       "\"Namespace\",\"metadata\":{\"name\":\"" NS "\"}}");
	ns_rv = rv_of(setup.resp);
	if (code != 201 || !ns_rv) {
		fprintf(stderr, "dsbench: create namespace: HTTP %ld: %s\n",
			code, setup.resp);
		goto out_server;
	}
	/* 1. watches from the namespace's RV, so none can miss an event;
	 * the sentinel proves each stream is live before the load starts */
	watchers_start(&r, ns_rv);
	if (pthread_create(&wt, NULL, watch_main, &r) != 0)
		die("pthread_create failed");
	code = request(&setup, "POST", "/api/v1/namespaces/" NS "/configmaps",
		       "application/json", "{\"apiVersion\":\"v1\",\"kind\":"
		       "\"ConfigMap\",\"metadata\":{\"name\":\"sentinel\"}}");
	if (code != 201) {
		fprintf(stderr, "dsbench: create sentinel: HTTP %ld: %s\n",
			code, setup.resp);
		goto out_watch;
	}
	deadline = now_ns() + (int64_t)ATTACH_TIMEOUT_MS * 1000000;
	while (!all_attached(&r) && now_ns() < deadline)
		sleep_ms(2);
	if (!all_attached(&r)) {
		fprintf(stderr, "dsbench: watchers did not attach\n");
		goto out_watch;
	}
	/* 2. the clients, held at the barrier until the main thread joins */
	cs = xcalloc((size_t)o->nclients, sizeof(*cs));
	pthread_barrier_init(&r.barrier, NULL, (unsigned)o->nclients + 1);
	for (int i = 0; i < o->nclients; i++) {
		cs[i].id = i;
		cs[i].run = &r;
		cs[i].fd = -1;
		cs[i].h = r.raw ? NULL : easy_new();
		cs[i].lat_create = xcalloc((size_t)o->nobjects, 4);
		cs[i].lat_patch = xcalloc((size_t)o->nobjects, 4);
		if (pthread_create(&cs[i].tid, NULL, client_main, &cs[i]) != 0)
			die("pthread_create failed");
	}
	/* 3. creates, then patches; wall time between barriers */
	if (srv.pid)
		cpu0 = bench_proc_cpu_s((long)srv.pid);
	self0 = bench_self_cpu_s();
	pthread_barrier_wait(&r.barrier);
	t0 = now_ns();
	pthread_barrier_wait(&r.barrier);
	t1 = now_ns();
	pthread_barrier_wait(&r.barrier);
	t2 = now_ns();
	pthread_barrier_wait(&r.barrier);
	t3 = now_ns();
	/* 4. every watcher must see every event */
	deadline = t3 + (int64_t)DRAIN_TIMEOUT_MS * 1000000;
	while (!all_drained(&r) && now_ns() < deadline)
		sleep_ms(1);
	if (srv.pid)
		cpu1 = bench_proc_cpu_s((long)srv.pid);
	self1 = bench_self_cpu_s();
	for (int i = 0; i < o->nclients; i++) {
		pthread_join(cs[i].tid, NULL);
		res->nerr += cs[i].nerr;
		if (cs[i].nerr)
			fprintf(stderr, "dsbench: client %d: %zu failed; "
				"first: %s\n", i, cs[i].nerr, cs[i].err);
	}
	res->create_s = (double)(t1 - t0) / 1e9;
	res->patch_s = (double)(t3 - t2) / 1e9;
	percentiles(cs, o->nclients, o->nobjects, false, &res->create_p50,
		    &res->create_p99);
	percentiles(cs, o->nclients, o->nobjects, true, &res->patch_p50,
		    &res->patch_p99);
	res->load_cpu_s = cpu1 - cpu0;
	res->client_cpu_s = self1 - self0;
	for (int i = 0; i < o->nclients; i++) {
		if (cs[i].h)
			curl_easy_cleanup(cs[i].h);
		raw_close(&cs[i]);
		free(cs[i].rbuf);
		free(cs[i].lat_create);
		free(cs[i].lat_patch);
	}
	free(cs);
	pthread_barrier_destroy(&r.barrier);
	rc = 0;
out_watch:
	atomic_store(&r.stop, true);
	curl_multi_wakeup(r.multi);
	pthread_join(wt, NULL);
	/* 5. the watchers' verdicts, read once their thread is gone */
	for (int i = 0; rc == 0 && i < nwatch; i++) {
		struct watcher *w = &r.w[i];
		uint64_t ne = atomic_load(&w->nevents);
		int64_t l = atomic_load(&w->last_ns);

		res->events += ne;
		if (l > last)
			last = l;
		if (ne == expected_events(o) && !atomic_load(&w->nbad))
			res->ncomplete++;
		else
			fprintf(stderr, "dsbench: watcher %d: %" PRIu64 " of "
				"%" PRIu64 " events, %" PRIu64 " problems%s%s\n",
				i, ne, expected_events(o),
				(uint64_t)atomic_load(&w->nbad),
				w->why[0] ? "; first: " : "", w->why);
	}
	if (rc == 0) {
		res->drain_s = last > t0 ? (double)(last - t0) / 1e9 : 0;
		res->lag_ms = last > t3 ? (double)(last - t3) / 1e6 : 0;
	}
	watchers_stop(&r);
out_server:
	curl_easy_cleanup(setup.h);
	server_stop(&srv);
	res->cpu_s = srv.cpu_s;
	res->maxrss_kb = srv.maxrss_kb;
	return rc;
}

/* ---- report ---- */

/* "12345.6" -> "12,346": thousands separators for rates. */
static const char *grouped(double v, char *buf, size_t n)
{
	char raw[32];
	size_t len, j = 0;

	snprintf(raw, sizeof(raw), "%.0f", v);
	len = strlen(raw);
	for (size_t i = 0; i < len && j + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = raw[i];
	}
	buf[j] = '\0';
	return buf;
}

/* "10,489 (9,812–10,702)": the median run's rate and the range. */
static const char *with_range(double v, double lo, double hi, char *buf,
			      size_t n)
{
	char a[32], b[32], c[32];

	if (lo >= hi)
		snprintf(buf, n, "%s", grouped(v, a, sizeof(a)));
	else
		snprintf(buf, n, "%s (%s–%s)", grouped(v, a, sizeof(a)),
			 grouped(lo, b, sizeof(b)), grouped(hi, c, sizeof(c)));
	return buf;
}

/* One ROW line; what is "devserver <mode>, W=<n>: <metric>". */
static void row(const char *prefix, const char *metric, const char *figure,
		const char *unit, const char *anchor, const char *ratio,
		const char *note)
{
	char what[192];

	snprintf(what, sizeof(what), "%s: %s", prefix, metric);
	bench_row(what, figure, unit, anchor, ratio, note);
}

static void report(const struct opts *o, bool disk, int nwatch,
		   const struct result *r)
{
	double nw = (double)o->nclients * (double)o->nobjects;
	double writes = 2.0 * nw / (r->create_s + r->patch_s);
	double wall = r->drain_s > 0 ? r->drain_s : r->create_s + r->patch_s;
	char pre[96], fig[192], note[256], ratio[32], a[32], b[32];
	const char *slo = "k8s SLO: p99 <= 1000 ms";
	const char *lat_note = "client-side time of each request, nearest "
		"rank over all requests of the phase; ratio = our p99 / the "
		"Kubernetes SLO for mutating single-object calls "
		"(kubernetes/community sig-scalability/slos/slos.md)";

	snprintf(pre, sizeof(pre), "devserver %s, W=%d",
		 o->server_url ? "external" : disk ? "--data-dir" :
		 "in memory", nwatch);

	snprintf(ratio, sizeof(ratio), "%.2f", writes / AIM_WRITES);
	snprintf(note, sizeof(note), "%d clients (threads, one keep-alive "
		 "connection each, %s) x %s ConfigMaps: all creates and merge "
		 "patches / the two phases' wall time; %s", o->nclients,
		 o->libcurl_clients ? "libcurl" : "raw HTTP/1.1 sockets",
		 grouped((double)o->nobjects, a, sizeof(a)),
		 o->repeat == 1 ? "one run" : "the run with the median rate "
		 "of the repeats (full run: 3)");
	row(pre, "small writes (creates + patches)",
	    grouped(writes, a, sizeof(a)), "writes/s",
	    "aim: >= 10,000 writes/s", ratio, note);

	row(pre, "creates", with_range(nw / r->create_s, r->create_lo,
				      r->create_hi, fig, sizeof(fig)),
	    "creates/s", "—", "—",
	    "POST of a ~90-byte ConfigMap, back to back on every client; "
	    "objects / wall time of the phase (range over the repeats)");

	row(pre, "merge patches", with_range(nw / r->patch_s, r->patch_lo,
					     r->patch_hi, fig, sizeof(fig)),
	    "patches/s", "—", "—",
	    "PATCH application/merge-patch+json {\"data\":{\"v\":\"1\"}} once "
	    "per object; objects / wall time of the phase (range over the "
	    "repeats)");

	snprintf(fig, sizeof(fig), "%.2f / %.2f", r->create_p50,
		 r->create_p99);
	snprintf(ratio, sizeof(ratio), "%.4f", r->create_p99 / SLO_P99_MS);
	row(pre, "create latency p50 / p99", fig, "ms", slo, ratio,
	    lat_note);

	snprintf(fig, sizeof(fig), "%.2f / %.2f", r->patch_p50, r->patch_p99);
	snprintf(ratio, sizeof(ratio), "%.4f", r->patch_p99 / SLO_P99_MS);
	row(pre, "patch latency p50 / p99", fig, "ms", slo, ratio, lat_note);

	row(pre, "watch events delivered",
	    grouped((double)r->events / wall, a, sizeof(a)), "events/s",
	    "—", "—",
	    "W watches (?watch=true from the namespace's resourceVersion, "
	    "one thread, curl multi); ADDED+MODIFIED events received, summed "
	    "over the watchers, / time from the first create to the last "
	    "event");

	snprintf(fig, sizeof(fig), "%s: %d/%d x %s events, last +%.0f ms",
		 r->ncomplete == nwatch ? "yes" : "NO", r->ncomplete, nwatch,
		 grouped((double)expected_events(o), a, sizeof(a)), r->lag_ms);
	row(pre, "every watcher got every event", fig, "check", "—", "—",
	    "each watcher tracks each object: exactly one ADDED then one "
	    "MODIFIED, resourceVersions strictly increasing, no ERROR event; "
	    "+N ms = the last event's arrival after the last write's answer");

	if (o->server_url)
		return;
	snprintf(fig, sizeof(fig), "%.0f (%.2f cores; load generator %.2f)",
		 r->load_cpu_s * 1e6 / (2.0 * nw), r->load_cpu_s / wall,
		 r->client_cpu_s / wall);
	row(pre, "devserver CPU per write", fig, "µs", "—", "—",
	    "the devserver's utime+stime (/proc/PID/stat) from the first "
	    "create to the last watch event, / writes; cores = CPU s / wall "
	    "s; the load generator's from getrusage");

	snprintf(fig, sizeof(fig), "%.1f (%s objects; %.1f CPU s in all)",
		 (double)r->maxrss_kb / 1024.0, grouped(nw, b, sizeof(b)),
		 r->cpu_s);
	row(pre, "devserver max RSS", fig, "MiB", "—", "—",
	    "ru_maxrss from wait4() after SIGTERM; CPU s in all covers the "
	    "devserver's whole life (start, load, shutdown)");
}

/* Combined write rate of one run: both phases' objects / their time. */
static double write_rate(const struct opts *o, const struct result *r)
{
	return 2.0 * o->nclients * o->nobjects / (r->create_s + r->patch_s);
}

static int cmp_rate(const void *a, const void *b)
{
	const struct result *x = a, *y = b;
	double dx = 1.0 / (x->create_s + x->patch_s);
	double dy = 1.0 / (y->create_s + y->patch_s);

	return dx < dy ? -1 : dx > dy;
}

/*
 * Runs one scenario o->repeat times and reports the run with the median
 * combined write rate, with the range of the rates. Returns 0, or -1 when
 * a run failed to start or a check failed (rows are still printed).
 */
static int run_repeats(const struct opts *o, bool disk, int nwatch)
{
	struct result *rs = xcalloc((size_t)o->repeat, sizeof(*rs)), med;
	double nw = (double)o->nclients * o->nobjects;
	int n = 0, rc = 0;

	for (int i = 0; i < o->repeat; i++) {
		struct result *r = &rs[n];
		int64_t t = now_ns();

		progress("%s, %d clients x %d objects, %d watcher%s, run "
			 "%d/%d...", disk ? "--data-dir" : "in memory",
			 o->nclients, o->nobjects, nwatch,
			 nwatch == 1 ? "" : "s", i + 1, o->repeat);
		if (scenario(o, disk, nwatch, r) < 0) {
			rc = -1;
			continue;
		}
		progress("  creates %.0f/s, patches %.0f/s, %d/%d watchers "
			 "complete (%.1f s)", nw / r->create_s,
			 nw / r->patch_s, r->ncomplete, nwatch,
			 (double)(now_ns() - t) / 1e9);
		if (r->nerr || r->ncomplete != nwatch)
			rc = -1;
		n++;
	}
	if (n) {
		qsort(rs, (size_t)n, sizeof(*rs), cmp_rate);
		med = rs[n / 2];
		med.create_lo = med.create_hi = nw / med.create_s;
		med.patch_lo = med.patch_hi = nw / med.patch_s;
		for (int i = 0; i < n; i++) {
			double c = nw / rs[i].create_s, p = nw / rs[i].patch_s;

			med.create_lo = c < med.create_lo ? c : med.create_lo;
			med.create_hi = c > med.create_hi ? c : med.create_hi;
			med.patch_lo = p < med.patch_lo ? p : med.patch_lo;
			med.patch_hi = p > med.patch_hi ? p : med.patch_hi;
		}
		report(o, disk, nwatch, &med);
		progress("  median run: %.0f writes/s", write_rate(o, &med));
	}
	free(rs);
	return rc;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fputs("usage: dsbench (--devserver PATH [--devserver-arg ARG]... | "
	      "--server URL)\n"
	      "         [--clients N] [--objects K] [--watchers 1,10]\n"
	      "         [--storage memory,disk] [--repeat R]"
	      " [--client raw|curl]\n"
	      "QUICK=1 in the environment: the reduced run "
	      "(fewer objects).\n", f);
}

static int parse_int(const char *s, int lo)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < lo || v > 1000000)
		die("bad number: %s", s);
	return (int)v;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	const char *q = getenv("QUICK");
	int objects = 0;

	o->quick = q && !strcmp(q, "1");
	o->nclients = 8;
	o->watchers[0] = 1;
	o->watchers[1] = 10;
	o->nwatchers = 2;
	o->storage[0] = o->storage[1] = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		}
		if (!v) {
			usage(stderr);
			exit(2);
		}
		i++;
		if (!strcmp(a, "--devserver")) {
			o->devserver = v;
		} else if (!strcmp(a, "--devserver-arg")) {
			if (o->nextra == 8)
				die("at most 8 --devserver-arg");
			o->extra[o->nextra++] = v;
		} else if (!strcmp(a, "--server")) {
			o->server_url = v;
		} else if (!strcmp(a, "--clients")) {
			o->nclients = parse_int(v, 1);
		} else if (!strcmp(a, "--objects")) {
			objects = parse_int(v, 1);
		} else if (!strcmp(a, "--watchers")) {
			char *copy = xstrdup(v), *save = NULL;

			o->nwatchers = 0;
			for (char *t = strtok_r(copy, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				if (o->nwatchers == 4)
					die("at most 4 watcher counts");
				o->watchers[o->nwatchers++] = parse_int(t, 0);
			}
			free(copy);
		} else if (!strcmp(a, "--client")) {
			if (strcmp(v, "raw") && strcmp(v, "curl"))
				die("--client is raw or curl");
			o->libcurl_clients = !strcmp(v, "curl");
		} else if (!strcmp(a, "--repeat")) {
			o->repeat = parse_int(v, 1);
		} else if (!strcmp(a, "--storage")) {
			o->storage[0] = strstr(v, "memory") != NULL;
			o->storage[1] = strstr(v, "disk") != NULL;
		} else {
			usage(stderr);
			exit(2);
		}
	}
	if (!o->devserver == !o->server_url) {
		usage(stderr);
		exit(2);
	}
	if (o->server_url)
		o->storage[1] = false, o->storage[0] = true;
	/* full: 8 x 5000 = 40,000 creates + 40,000 patches per scenario,
	 * three times; quick: 8 x 500, once */
	o->nobjects = objects ? objects : o->quick ? 500 : 5000;
	if (!o->repeat)
		o->repeat = o->quick ? 1 : 3;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	bool ok = true;

	parse_opts(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init_mem(CURL_GLOBAL_DEFAULT, xmalloc, free,
				 xrealloc, xstrdup, xcalloc) != CURLE_OK)
		die("curl_global_init failed");
	for (int d = 0; d < 2; d++) {
		if (!o.storage[d])
			continue;
		for (int wi = 0; wi < o.nwatchers; wi++) {
			if (run_repeats(&o, d == 1, o.watchers[wi]) < 0)
				ok = false;
		}
	}
	curl_global_cleanup();
	return ok ? 0 : 1;
}
