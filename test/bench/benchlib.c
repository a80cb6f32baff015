/*
 * benchlib: the bench programs' shared client code (see benchlib.h).
 *
 * It owns nothing beyond the objects its callers hand it, and one
 * program name written once before any thread starts. It never decides
 * what a figure is: timing, retries and backoff stay with the programs,
 * so moving code here changed no row.
 */
#include "test/bench/benchlib.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/b64.h"
#include "model/errors.h"

#define LINE_CAP (4u << 20) /* one watch event line */

static const char *prog = "bench"; /* set by bench_init */

void bench_init(const char *name)
{
	prog = name;
}

static void vnote(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void bench_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(fmt, ap);
	va_end(ap);
	exit(1);
}

void bench_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(fmt, ap);
	va_end(ap);
}

int64_t bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- files and processes ---- */

char *bench_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	if (!f)
		return NULL;
	do {
		XGROW(buf, cap, len + 4096 + 1);
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

long bench_read_pid(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s.pid", dir, name);
	char *text = bench_read_file(path);
	long pid = text ? strtol(text, NULL, 10) : 0;

	free(text);
	free(path);
	return pid;
}

double bench_proc_cpu_s(long pid)
{
	char path[64];
	char *text, *p;
	unsigned long long ut = 0, st = 0;
	int got;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	text = bench_read_file(path);
	if (!text)
		return -1;
	/* fields after "(comm)", which may hold spaces: state is field 3,
	 * utime 14, stime 15 */
	p = strrchr(text, ')');
	got = p ? sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
			 "%*u %llu %llu", &ut, &st) : 0;
	free(text);
	if (got != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

double bench_self_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

double bench_proc_hwm_mib(long pid)
{
	char path[64];
	char *text, *p;
	double kib = -1;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	text = bench_read_file(path);
	if (!text)
		return -1;
	p = strstr(text, "\nVmHWM:");
	if (p)
		kib = strtod(p + 7, NULL);
	free(text);
	return kib < 0 ? -1 : kib / 1024.0;
}

char *bench_loadavg(void)
{
	char *t = bench_read_file("/proc/loadavg");
	char a[16], b[16], c[16];
	char *s;

	if (!t || sscanf(t, "%15s %15s %15s", a, b, c) != 3)
		s = xstrdup("?");
	else
		s = xasprintf("%s %s %s", a, b, c);
	free(t);
	return s;
}

char *bench_metrics_url(const char *dir)
{
	static const char key[] = "metrics server listening on ";
	char *path = xasprintf("%s/manager.log", dir);
	char *text = bench_read_file(path);
	const char *p = text, *hit = NULL;
	char *url = NULL;

	/* the last start's line: the log is appended across restarts */
	while (p && (p = strstr(p, key))) {
		hit = p + strlen(key);
		p++;
	}
	if (hit)
		url = xasprintf("%.*s/metrics", (int)strcspn(hit, "\" \n"),
				hit);
	free(text);
	free(path);
	return url;
}

/* ---- the API server ---- */

/* The scalar after "key:" on the first line holding it, unquoted and
 * trimmed, new; NULL when no line has it. Enough for the kubeconfig
 * devcluster writes, not a YAML parser. */
static char *kc_value(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = text; p && *p;) {
		const char *q = p, *eol = strchr(p, '\n');
		size_t n;

		while (*q == ' ' || *q == '-')
			q++;
		if (!strncmp(q, key, klen) && q[klen] == ':') {
			q += klen + 1;
			while (*q == ' ')
				q++;
			n = eol ? (size_t)(eol - q) : strlen(q);
			while (n > 0 && (q[n - 1] == ' ' || q[n - 1] == '\r'))
				n--;
			if (n >= 2 && (q[0] == '"' || q[0] == '\'')) {
				q++;
				n -= 2;
			}
			return xstrndup(q, n);
		}
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

int bench_kube_load(struct bench_kube *k, const char *dir, struct err *err)
{
	char *path = xasprintf("%s/kubeconfig", dir);
	char *text = bench_read_file(path);
	char *token = NULL, *cad = NULL;
	int rc = -1;

	if (!text) {
		err_set(err, "cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	k->server = kc_value(text, "server");
	if (!k->server) {
		err_set(err, "%s: no server", path);
		goto out;
	}
	token = kc_value(text, "token");
	if (token)
		k->auth = xasprintf("Authorization: Bearer %s", token);
	cad = kc_value(text, "certificate-authority-data");
	if (cad) {
		k->ca = b64_decode(cad, strlen(cad), B64_SKIP_SPACE |
				   B64_PAD_OPTIONAL, &k->ca_len, NULL);
		if (!k->ca) {
			err_set(err, "%s: bad certificate-authority-data",
				path);
			goto out;
		}
	}
	rc = 0;
out:
	if (rc)
		bench_kube_release(k);
	free(cad);
	free(token);
	free(text);
	free(path);
	return rc;
}

void bench_kube_release(struct bench_kube *k)
{
	free(k->server);
	free(k->auth);
	free(k->ca);
	memset(k, 0, sizeof(*k));
}

static void set_ca(const struct bench_kube *k, CURL *h)
{
	if (k && k->ca) {
		struct curl_blob blob = { k->ca, k->ca_len, CURL_BLOB_COPY };

		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
}

static size_t conn_data(char *data, size_t size, size_t nmemb, void *ud)
{
	struct bench_conn *c = ud;
	size_t n = size * nmemb;

	XGROW(c->buf, c->cap, c->len + n + 1);
	memcpy(c->buf + c->len, data, n);
	c->len += n;
	c->buf[c->len] = '\0';
	return n;
}

void bench_conn_init(struct bench_conn *c, const struct bench_kube *kube)
{
	memset(c, 0, sizeof(*c));
	c->kube = kube;
	c->h = curl_easy_init();
	if (!c->h)
		bench_die("curl_easy_init failed");
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, conn_data);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	set_ca(kube, c->h);
}

void bench_conn_release(struct bench_conn *c)
{
	curl_easy_cleanup(c->h);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

long bench_request(struct bench_conn *c, const char *method,
		   const char *path, const char *ctype, const char *body)
{
	const struct bench_kube *k = c->kube;
	struct curl_slist *hdrs = NULL;
	char *url = xasprintf("%s%s", k->server, path);
	char *ct = NULL;
	long code = 0;
	CURLcode rc;

	c->len = 0;
	if (c->buf)
		c->buf[0] = '\0';
	if (k->auth)
		hdrs = curl_slist_append(hdrs, k->auth);
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (ctype) {
		ct = xasprintf("Content-Type: %s", ctype);
		hdrs = curl_slist_append(hdrs, ct);
	}
	curl_easy_setopt(c->h, CURLOPT_URL, url);
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdrs);
	if (body) {
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE,
				 (long)strlen(body));
	} else {
		curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
	rc = curl_easy_perform(c->h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
	else
		bench_note("%s %s: %s", method, path, curl_easy_strerror(rc));
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	free(ct);
	free(url);
	return code;
}

void bench_create_take(struct bench_conn *c, const char *path,
		       struct json_t *obj, bool exist_ok)
{
	char *body = json_dumps(obj, JSON_COMPACT);
	long code = bench_request(c, "POST", path, "application/json", body);

	if (code != 201 && !(exist_ok && code == 409))
		bench_die("POST %s: HTTP %ld: %.300s", path, code,
			  c->buf ? c->buf : "");
	free(body);
	json_decref(obj);
}

bool bench_has_condition(const struct json_t *obj, const char *type)
{
	const json_t *conds = json_object_get(json_object_get(obj, "status"),
					      "conditions");
	const json_t *cd;
	size_t i;

	json_array_foreach(conds, i, cd) {
		const char *t = json_string_value(json_object_get(cd, "type"));
		const char *s = json_string_value(json_object_get(cd, "status"));

		if (t && s && !strcmp(t, type) && !strcmp(s, "True"))
			return true;
	}
	return false;
}

bool bench_is_retryable(long code)
{
	return code == 0 || code == 429 || code == 500 || code == 503 ||
	       code == 504;
}

/* ---- watch streams ---- */

/* curl write callback: cut the stream into lines, each capped. */
static size_t watch_data(char *data, size_t size, size_t nmemb, void *ud)
{
	struct bench_watch *w = ud;
	size_t n = size * nmemb, start = 0;

	for (size_t i = 0; i < n; i++) {
		if (data[i] != '\n')
			continue;
		if (w->len + (i - start) > LINE_CAP)
			w->overflow = true;
		if (!w->overflow) {
			XGROW(w->line, w->cap, w->len + (i - start) + 1);
			memcpy(w->line + w->len, data + start, i - start);
			w->len += i - start;
			if (w->len > 0)
				w->on_line(w->ud, w->line, w->len);
		} else {
			bench_note("watch: event line over %u bytes dropped",
				   LINE_CAP);
		}
		w->len = 0;
		w->overflow = false;
		start = i + 1;
	}
	if (start < n && !w->overflow) {
		if (w->len + (n - start) > LINE_CAP) {
			w->overflow = true;
		} else {
			XGROW(w->line, w->cap, w->len + (n - start) + 1);
			memcpy(w->line + w->len, data + start, n - start);
			w->len += n - start;
		}
	}
	return n;
}

/* curl progress callback: non-zero aborts the transfer. */
static int watch_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c,
			  curl_off_t d)
{
	struct bench_watch *w = ud;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	return w->stopped(w->ud) ? 1 : 0;
}

void bench_watch_init(struct bench_watch *w, const struct bench_kube *kube,
		      bench_line_fn *on_line, bench_stop_fn *stopped,
		      void *ud)
{
	memset(w, 0, sizeof(*w));
	w->on_line = on_line;
	w->stopped = stopped;
	w->ud = ud;
	w->h = curl_easy_init();
	if (!w->h)
		bench_die("curl_easy_init failed");
	if (kube->auth)
		w->hdrs = curl_slist_append(w->hdrs, kube->auth);
	w->hdrs = curl_slist_append(w->hdrs, "Accept: application/json");
	curl_easy_setopt(w->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(w->h, CURLOPT_HTTPHEADER, w->hdrs);
	curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, watch_data);
	curl_easy_setopt(w->h, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(w->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(w->h, CURLOPT_XFERINFOFUNCTION, watch_progress);
	curl_easy_setopt(w->h, CURLOPT_XFERINFODATA, w);
	set_ca(kube, w->h);
}

int bench_watch_run(struct bench_watch *w, const char *url, struct err *err)
{
	CURLcode rc;

	w->len = 0;
	w->overflow = false;
	curl_easy_setopt(w->h, CURLOPT_URL, url);
	rc = curl_easy_perform(w->h);
	if (rc != CURLE_OK)
		return err_set(err, "%s", curl_easy_strerror(rc));
	return 0;
}

void bench_watch_release(struct bench_watch *w)
{
	curl_slist_free_all(w->hdrs);
	curl_easy_cleanup(w->h);
	free(w->line);
	memset(w, 0, sizeof(*w));
}

/* ---- figures ---- */

int bench_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

size_t bench_rank(size_t n, unsigned pct)
{
	size_t k = (n * pct + 99) / 100;

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return k - 1;
}

void bench_fmt(char *buf, size_t cap, double v, int prec)
{
	if (v < 0)
		snprintf(buf, cap, "—");
	else
		snprintf(buf, cap, "%.*f", prec, v);
}

void bench_row(const char *what, const char *figure, const char *unit,
	       const char *anchor, const char *ratio, const char *note)
{
	printf("ROW\t%s\t%s\t%s\t%s\t%s\t%s\n", what, figure, unit, anchor,
	       ratio, note);
	fflush(stdout);
}
