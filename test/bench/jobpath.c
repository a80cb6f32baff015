/*
 * jobpath-bench: the batch/v1 Job path end to end (issue 7, row 4),
 * against a running devcluster with its webhook on (test/e2e/devcluster:
 * cueue-devserver + cueue-manager serving its TLS webhook), as rows for
 * test/bench/run.sh. test/bench/jobpath.sh starts and stops the cluster.
 *
 *   jobpath-bench --cluster DIR [--jobs N] [--window K] [--threads T]
 *                 [--runtime MS] [--timeout S]
 *
 * DIR/kubeconfig gives the server, CA and token; DIR/manager.pid the
 * process whose CPU time (/proc/<pid>/stat utime + stime) is read before
 * the first create and after the last Job completes.
 *
 *  1. Setup: ResourceFlavor jobpath-rf, ClusterQueue jobpath-cq with
 *     K cpu of nominal quota, namespace jobpath, LocalQueue jobpath-lq
 *     (kept when a run before this one made them: Jobs are named
 *     jp-<pid>-<i> and labelled with the run, so runs can repeat on one
 *     cluster when K stays the same).
 *  2. T client threads POST N Jobs (1 pod, 1 cpu, label
 *     kueue.x-k8s.io/queue-name: jobpath-lq, annotation
 *     cueue.dev/runtime: MS so the devserver's job runner completes each
 *     MS after it is unsuspended) to /apis/batch/v1, as `kubectl create`
 *     does: every create goes through the manager's mutating and
 *     validating webhooks over TLS. A window keeps at most K Jobs
 *     unfinished, so every Job fits the quota when created and the
 *     latency below is the path's own, not time spent queueing behind
 *     quota. The answer of each create must say spec.suspend=true (the
 *     mutating webhook suspended it).
 *  3. One watch on the namespace's Jobs sees each Job unsuspended (the
 *     manager admitted its Workload and started it) and Complete.
 *  4. Figures: jobs/s = N / (first create -> last Complete seen); create
 *     -> unsuspended p50 and p99 (create = just before the POST, as
 *     kubectl's user would see it); the manager's CPU per Job.
 *
 * Clocks: CLOCK_MONOTONIC in this program; events are timed when read.
 * Output: ROW lines (run.sh's protocol) on stdout, progress on stderr.
 * QUICK=1: N 60, K 20 (under ~15 s with the cluster's start). Exit 0
 * when every Job completed and every create was suspended by the
 * webhook, 1 otherwise, 2 on bad usage.
 *
 * Threads (this program only): main (setup, wait, report), T creators
 * and one watcher, sharing struct run under one mutex.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/alloc.h"

#define NS "jobpath"
#define LQ "jobpath-lq"
#define CQ "jobpath-cq"
#define RF "jobpath-rf"
#define ID_LABEL "bench.cueue.dev/id"
#define RUN_LABEL "bench.cueue.dev/run"
#define KAPI "/apis/kueue.x-k8s.io/v1beta2"
#define JOBS_PATH "/apis/batch/v1/namespaces/" NS "/jobs"
#define LINE_CAP (4u << 20)
#define MAX_TRIES 12

struct job {
	bool created;      /* POST answered 201 */
	bool unsuspended;  /* seen with spec.suspend false */
	bool complete;     /* seen with Complete=True */
	int64_t t_create;  /* us */
	int64_t t_start;   /* us; unsuspended seen */
};

struct run {
	char *server;       /* owned */
	char *auth;         /* owned "Authorization: Bearer ..." or NULL */
	unsigned char *ca;  /* owned PEM or NULL */
	size_t ca_len;
	int n, window, threads, runtime_ms;
	char run_id[16];    /* this run's RUN_LABEL value (Job names too) */

	pthread_mutex_t mu;
	pthread_cond_t cv;  /* a slot in the window, or progress */
	struct job *jobs;   /* owned, n */
	int next;           /* next index to create */
	int ncreated, nstarted, ncomplete, nfailed, nnot_suspended, nretries;
	bool stop;
	int64_t t_first, t_last; /* us: first create, last Complete */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("jobpath-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("jobpath-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- the devcluster's files ---- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len = 0, got;

	if (!f)
		return NULL;
	do {
		XGROW(buf, cap, len + 4096 + 1);
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* The scalar after "key:" on the first line holding it (kubeconfig). */
static char *kc_value(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = text; p && *p;) {
		const char *q = p, *eol = strchr(p, '\n');
		size_t len;

		while (*q == ' ' || *q == '-')
			q++;
		if (!strncmp(q, key, klen) && q[klen] == ':') {
			q += klen + 1;
			while (*q == ' ')
				q++;
			len = eol ? (size_t)(eol - q) : strlen(q);
			while (len > 0 && (q[len - 1] == ' ' || q[len - 1] == '\r'))
				len--;
			if (len >= 2 && (q[0] == '"' || q[0] == '\'')) {
				q++;
				len -= 2;
			}
			return xstrndup(q, len);
		}
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

static void load_kubeconfig(struct run *r, const char *dir)
{
	char *path = xasprintf("%s/kubeconfig", dir);
	char *text = slurp(path), *token, *cad;

	if (!text)
		die("cannot read %s: %s", path, strerror(errno));
	r->server = kc_value(text, "server");
	if (!r->server)
		die("%s: no server", path);
	token = kc_value(text, "token");
	if (token)
		r->auth = xasprintf("Authorization: Bearer %s", token);
	cad = kc_value(text, "certificate-authority-data");
	if (cad) {
		size_t len = strlen(cad);
		int got;

		r->ca = xmalloc(len / 4 * 3 + 4);
		got = EVP_DecodeBlock(r->ca, (unsigned char *)cad, (int)len);
		if (got < 0)
			die("%s: bad certificate-authority-data", path);
		r->ca_len = (size_t)got;
		while (r->ca_len > 0 && r->ca[r->ca_len - 1] == '\0')
			r->ca_len--;
	}
	free(cad);
	free(token);
	free(text);
	free(path);
}

static long pid_of(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s.pid", dir, name);
	char *text = slurp(path);
	long pid = text ? strtol(text, NULL, 10) : 0;

	free(text);
	free(path);
	return pid;
}

/* utime + stime of pid, seconds; -1 when unreadable. */
static double cpu_s(long pid)
{
	char path[64], *text, *p;
	unsigned long ut = 0, st = 0;
	int got;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	text = slurp(path);
	if (!text)
		return -1;
	p = strrchr(text, ')');
	got = p ? sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
			 "%*u %lu %lu", &ut, &st) : 0;
	free(text);
	if (got != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ---- HTTP ---- */

struct conn {
	CURL *h;
	char *buf;
	size_t len, cap;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	struct conn *c = ud;
	size_t n = size * nmemb;

	XGROW(c->buf, c->cap, c->len + n + 1);
	memcpy(c->buf + c->len, data, n);
	c->len += n;
	c->buf[c->len] = '\0';
	return n;
}

static void set_ca(const struct run *r, CURL *h)
{
	if (r->ca) {
		struct curl_blob blob = { r->ca, r->ca_len, CURL_BLOB_COPY };

		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
}

static void conn_open(const struct run *r, struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->h = curl_easy_init();
	if (!c->h)
		die("curl_easy_init failed");
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, 30000L);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	set_ca(r, c->h);
}

static void conn_close(struct conn *c)
{
	curl_easy_cleanup(c->h);
	free(c->buf);
}

/* POST body (JSON) to path; the HTTP status, 0 on a transport error. */
static long post(const struct run *r, struct conn *c, const char *path,
		 const char *body)
{
	struct curl_slist *hdrs = NULL;
	char *url = xasprintf("%s%s", r->server, path);
	long code = 0;
	CURLcode rc;

	c->len = 0;
	if (c->buf)
		c->buf[0] = '\0';
	if (r->auth)
		hdrs = curl_slist_append(hdrs, r->auth);
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(c->h, CURLOPT_URL, url);
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	rc = curl_easy_perform(c->h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
	else
		note("POST %s: %s", path, curl_easy_strerror(rc));
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	free(url);
	return code;
}

/* Setup objects must be created (201); obj is consumed. */
static void must_create(const struct run *r, struct conn *c, const char *path,
			json_t *obj)
{
	char *body = json_dumps(obj, JSON_COMPACT);
	long code = post(r, c, path, body);

	if (code != 201 && code != 409) /* 409: a run before this one */
		die("POST %s: HTTP %ld: %.300s", path, code, c->buf ? c->buf : "");
	free(body);
	json_decref(obj);
}

static void setup(const struct run *r)
{
	struct conn c;
	char quota[16];

	snprintf(quota, sizeof(quota), "%d", r->window);
	conn_open(r, &c);
	must_create(r, &c, "/api/v1/namespaces",
		    json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind",
			      "Namespace", "metadata", "name", NS));
	must_create(r, &c, KAPI "/resourceflavors",
		    json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
			      "kueue.x-k8s.io/v1beta2", "kind", "ResourceFlavor",
			      "metadata", "name", RF));
	must_create(r, &c, KAPI "/clusterqueues",
		    json_pack("{s:s, s:s, s:{s:s}, s:{s:{}, s:[{s:[s], "
			      "s:[{s:s, s:[{s:s, s:s}]}]}]}}",
			      "apiVersion", "kueue.x-k8s.io/v1beta2",
			      "kind", "ClusterQueue", "metadata", "name", CQ,
			      "spec", "namespaceSelector", "resourceGroups",
			      "coveredResources", "cpu", "flavors", "name", RF,
			      "resources", "name", "cpu", "nominalQuota", quota));
	must_create(r, &c, KAPI "/namespaces/" NS "/localqueues",
		    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}",
			      "apiVersion", "kueue.x-k8s.io/v1beta2",
			      "kind", "LocalQueue", "metadata", "name", LQ,
			      "namespace", NS, "spec", "clusterQueue", CQ));
	conn_close(&c);
}

/* ---- creators ---- */

static bool retryable(long code)
{
	return code == 0 || code == 429 || code == 500 || code == 503 ||
	       code == 504;
}

static void create_job(struct run *r, struct conn *c, int idx)
{
	char name[32], id[16], rt[32], *body;
	json_t *o, *ans;
	long code = 0;
	int64_t t = 0;
	bool suspended = false;

	snprintf(name, sizeof(name), "jp-%s-%d", r->run_id, idx);
	snprintf(id, sizeof(id), "%d", idx);
	snprintf(rt, sizeof(rt), "%dms", r->runtime_ms);
	o = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}}, "
		      "s:{s:{s:{s:s, s:[{s:s, s:s, s:{s:{s:s}}}]}}}}",
		      "apiVersion", "batch/v1", "kind", "Job",
		      "metadata", "name", name, "namespace", NS,
		      "labels", "kueue.x-k8s.io/queue-name", LQ, ID_LABEL, id,
		      RUN_LABEL, r->run_id,
		      "annotations", "cueue.dev/runtime", rt,
		      "spec", "template", "spec", "restartPolicy", "Never",
		      "containers", "name", "c", "image", "pause",
		      "resources", "requests", "cpu", "1");
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	for (int tries = 0; tries < MAX_TRIES; tries++) {
		if (tries) {
			pthread_mutex_lock(&r->mu);
			r->nretries++;
			pthread_mutex_unlock(&r->mu);
			usleep((useconds_t)(100000 << (tries < 3 ? tries : 3)));
		}
		t = now_us();
		pthread_mutex_lock(&r->mu);
		r->jobs[idx].t_create = t;
		if (!r->t_first)
			r->t_first = t;
		pthread_mutex_unlock(&r->mu);
		code = post(r, c, JOBS_PATH, body);
		if (!retryable(code))
			break;
	}
	free(body);
	ans = code == 201 ? json_loads(c->buf, 0, NULL) : NULL;
	suspended = json_is_true(json_object_get(json_object_get(ans, "spec"),
						 "suspend"));
	json_decref(ans);
	pthread_mutex_lock(&r->mu);
	if (code == 201) {
		r->jobs[idx].created = true;
		r->ncreated++;
		if (!suspended)
			r->nnot_suspended++;
	} else {
		note("create %s: HTTP %ld: %.300s", name, code,
		     c->buf ? c->buf : "");
		r->nfailed++;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

static void *creator_main(void *arg)
{
	struct run *r = arg;
	struct conn c;

	conn_open(r, &c);
	pthread_mutex_lock(&r->mu);
	for (;;) {
		int idx;

		/* the window: at most K created and not complete */
		while (!r->stop && r->next < r->n &&
		       r->next - r->ncomplete - r->nfailed >= r->window)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop || r->next >= r->n)
			break;
		idx = r->next++;
		pthread_mutex_unlock(&r->mu);
		create_job(r, &c, idx);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	conn_close(&c);
	return NULL;
}

/* ---- the watch ---- */

struct watch {
	struct run *r;
	char *line;
	size_t len, cap;
	bool overflow;
	char *rv;          /* owned; last resourceVersion seen */
};

static bool complete(const json_t *job)
{
	const json_t *conds = json_object_get(json_object_get(job, "status"),
					      "conditions");
	const json_t *cd;
	size_t i;

	json_array_foreach(conds, i, cd) {
		const char *t = json_string_value(json_object_get(cd, "type"));
		const char *s = json_string_value(json_object_get(cd, "status"));

		if (t && s && !strcmp(t, "Complete") && !strcmp(s, "True"))
			return true;
	}
	return false;
}

static void on_event(struct watch *w, const char *p, size_t n)
{
	struct run *r = w->r;
	json_t *ev = json_loadb(p, n, 0, NULL), *obj, *meta;
	const char *type, *id, *rv;
	int64_t now = now_us();
	long idx;
	bool running, done;

	if (!ev)
		return;
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	meta = json_object_get(obj, "metadata");
	rv = json_string_value(json_object_get(meta, "resourceVersion"));
	if (rv) {
		free(w->rv);
		w->rv = xstrdup(rv);
	}
	id = json_string_value(json_object_get(json_object_get(meta, "labels"),
					       ID_LABEL));
	idx = id ? strtol(id, NULL, 10) : -1;
	running = json_is_false(json_object_get(json_object_get(obj, "spec"),
						"suspend"));
	done = complete(obj);
	pthread_mutex_lock(&r->mu);
	if (type && !strcmp(type, "ERROR"))
		note("watch: ERROR event");
	if (idx >= 0 && idx < r->n && type && strcmp(type, "DELETED")) {
		struct job *j = &r->jobs[idx];

		if ((running || done) && !j->unsuspended) {
			j->unsuspended = true;
			j->t_start = now;
			r->nstarted++;
		}
		if (done && !j->complete) {
			j->complete = true;
			r->ncomplete++;
			r->t_last = now;
			pthread_cond_broadcast(&r->cv);
		}
	}
	pthread_mutex_unlock(&r->mu);
	json_decref(ev);
}

static size_t on_stream(char *data, size_t size, size_t nmemb, void *ud)
{
	struct watch *w = ud;
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
			if (w->len)
				on_event(w, w->line, w->len);
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

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c,
		       curl_off_t d)
{
	struct run *r = ud;
	bool stop;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	pthread_mutex_lock(&r->mu);
	stop = r->stop;
	pthread_mutex_unlock(&r->mu);
	return stop ? 1 : 0;
}

static void *watch_main(void *arg)
{
	struct run *r = arg;
	struct watch w = { .r = r };
	CURL *h = curl_easy_init();
	struct curl_slist *hdrs = NULL;

	if (!h)
		die("curl_easy_init failed");
	if (r->auth)
		hdrs = curl_slist_append(hdrs, r->auth);
	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &w);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, r);
	set_ca(r, h);
	for (;;) {
		/* resourceVersion 0: the Jobs already there as ADDED first */
		char *url = xasprintf("%s" JOBS_PATH "?watch=1&labelSelector="
				      RUN_LABEL "%%3D%s&resourceVersion=%s",
				      r->server, r->run_id, w.rv ? w.rv : "0");
		CURLcode rc;
		bool stop;

		w.len = 0;
		w.overflow = false;
		curl_easy_setopt(h, CURLOPT_URL, url);
		rc = curl_easy_perform(h);
		free(url);
		pthread_mutex_lock(&r->mu);
		stop = r->stop;
		pthread_mutex_unlock(&r->mu);
		if (stop)
			break;
		if (rc != CURLE_OK)
			note("watch: %s; reconnecting", curl_easy_strerror(rc));
		usleep(100000);
	}
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	free(w.line);
	free(w.rv);
	return NULL;
}

/* ---- report ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (nearest rank) of sorted v[n], in ms; -1 when empty. */
static double quantile_ms(const int64_t *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return -1;
	k = (size_t)(q * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1] / 1000.0;
}

static void row(const char *what, double fig, int prec, const char *unit,
		const char *note_text)
{
	char f[32];

	if (fig < 0)
		snprintf(f, sizeof(f), "—");
	else
		snprintf(f, sizeof(f), "%.*f", prec, fig);
	printf("ROW\t%s\t%s\t%s\t—\t—\t%s\n", what, f, unit, note_text);
}

static void usage(void)
{
	fprintf(stderr, "usage: jobpath-bench --cluster DIR [--jobs N] "
		"[--window K] [--threads T] [--runtime MS] [--timeout S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool quick = getenv("QUICK") && !strcmp(getenv("QUICK"), "1");
	struct run r = { .n = quick ? 60 : 2000, .window = quick ? 20 : 50,
			 .threads = 4, .runtime_ms = 200 };
	const char *dir = NULL;
	int timeout_s = quick ? 40 : 300, i;
	pthread_t *creators, watcher;
	long mpid;
	double cpu0, cpu1, wall_s, jps;
	int64_t *lat, end;
	size_t nlat = 0;
	char what[128], note_text[512];
	int rc = 0, noted = 0;

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(argv[i], "--cluster"))
			dir = v;
		else if (!strcmp(argv[i], "--jobs"))
			r.n = atoi(v);
		else if (!strcmp(argv[i], "--window"))
			r.window = atoi(v);
		else if (!strcmp(argv[i], "--threads"))
			r.threads = atoi(v);
		else if (!strcmp(argv[i], "--runtime"))
			r.runtime_ms = atoi(v);
		else if (!strcmp(argv[i], "--timeout"))
			timeout_s = atoi(v);
		else
			usage();
		i++;
	}
	if (!dir || r.n <= 0 || r.window <= 0 || r.threads <= 0 ||
	    r.runtime_ms <= 0 || timeout_s <= 0)
		usage();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	snprintf(r.run_id, sizeof(r.run_id), "%ld", (long)getpid());
	load_kubeconfig(&r, dir);
	mpid = pid_of(dir, "manager");
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	r.jobs = xcalloc((size_t)r.n, sizeof(*r.jobs));
	setup(&r);
	note("%d Jobs, window %d, %d client threads, runtime %d ms", r.n,
	     r.window, r.threads, r.runtime_ms);
	if (pthread_create(&watcher, NULL, watch_main, &r))
		die("pthread_create failed");
	usleep(200000); /* let the watch connect before the first create */
	cpu0 = cpu_s(mpid);
	creators = xcalloc((size_t)r.threads, sizeof(*creators));
	for (i = 0; i < r.threads; i++)
		if (pthread_create(&creators[i], NULL, creator_main, &r))
			die("pthread_create failed");
	end = now_us() + (int64_t)timeout_s * 1000000;
	pthread_mutex_lock(&r.mu);
	while (r.ncomplete + r.nfailed < r.n && now_us() < end) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 2;
		pthread_cond_timedwait(&r.cv, &r.mu, &ts);
		if (r.ncomplete - noted >= 500) {
			noted = r.ncomplete;
			note("%d of %d complete", r.ncomplete, r.n);
		}
	}
	if (r.ncomplete + r.nfailed < r.n) {
		note("timeout after %d s: %d created, %d started, %d complete",
		     timeout_s, r.ncreated, r.nstarted, r.ncomplete);
		rc = 1;
	}
	r.stop = true;
	pthread_cond_broadcast(&r.cv);
	pthread_mutex_unlock(&r.mu);
	cpu1 = cpu_s(mpid);
	for (i = 0; i < r.threads; i++)
		pthread_join(creators[i], NULL);
	pthread_join(watcher, NULL);
	free(creators);
	if (r.nfailed || r.nnot_suspended) {
		note("%d creates failed, %d Jobs not suspended by the webhook",
		     r.nfailed, r.nnot_suspended);
		rc = 1;
	}
	lat = xcalloc((size_t)r.n, sizeof(*lat));
	for (i = 0; i < r.n; i++)
		if (r.jobs[i].created && r.jobs[i].unsuspended)
			lat[nlat++] = r.jobs[i].t_start - r.jobs[i].t_create;
	qsort(lat, nlat, sizeof(*lat), cmp_i64);
	wall_s = r.t_last > r.t_first ? (double)(r.t_last - r.t_first) / 1e6
				      : -1;
	jps = rc == 0 && wall_s > 0 ? r.ncomplete / wall_s : -1;
	snprintf(what, sizeof(what), "Job path (%d Jobs, %d at a time)", r.n,
		 r.window);
	snprintf(note_text, sizeof(note_text),
		 "batch/v1 Jobs POSTed from %d threads through the TLS "
		 "webhooks (mutate + validate) to Complete, runtime %d ms, at "
		 "most %d unfinished (quota %d cpu); first create to last "
		 "Complete seen on a watch; %d retries",
		 r.threads, r.runtime_ms, r.window, r.window, r.nretries);
	{
		char w2[192];

		snprintf(w2, sizeof(w2), "%s: end to end", what);
		row(w2, jps, 1, "jobs/s", note_text);
		snprintf(note_text, sizeof(note_text),
			 "from just before the Job's POST to the watch event "
			 "with spec.suspend=false (webhook, Workload, "
			 "admission, Job patch); %zu Jobs", nlat);
		snprintf(w2, sizeof(w2), "%s: create → admitted p50", what);
		row(w2, quantile_ms(lat, nlat, 0.50), 1, "ms", note_text);
		snprintf(w2, sizeof(w2), "%s: create → admitted p99", what);
		row(w2, quantile_ms(lat, nlat, 0.99), 1, "ms", note_text);
		snprintf(note_text, sizeof(note_text),
			 "cueue-manager utime+stime (/proc/pid/stat) over the "
			 "run divided by the Jobs (webhook TLS serving "
			 "included); %.2f s CPU in %.1f s wall",
			 cpu1 - cpu0, wall_s);
		snprintf(w2, sizeof(w2), "%s: manager CPU per Job", what);
		row(w2, cpu0 >= 0 && cpu1 >= 0 && r.ncomplete > 0
			? (cpu1 - cpu0) * 1e6 / r.ncomplete : -1, 0,
		    "µs", note_text);
	}
	note("%d created, %d started, %d complete in %.2f s", r.ncreated,
	     r.nstarted, r.ncomplete, wall_s);
	free(lat);
	free(r.jobs);
	free(r.server);
	free(r.auth);
	free(r.ca);
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
	curl_global_cleanup();
	return rc;
}
