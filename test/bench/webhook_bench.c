/*
 * webhook_bench: the admission webhook's throughput and latency (aim:
 * >= 1,000 AdmissionReviews/s, p99 <= 1 ms server-side), beside a bare
 * TLS libmicrohttpd responder measured in the same run. Built as
 * build/<cfg>/webhook-bench (mk/obs.mk); run by test/bench/run.sh; prints
 * ROW lines (run.sh's protocol) on stdout, progress on stderr.
 *
 *  1. Certificates as the manager makes them (webhook/certs.h, RSA 2048,
 *     127.0.0.1 in the SANs).
 *  2. Target "webhook": the real server in-process (webhook/webhook.h,
 *     Kueue's default policy, a published nsview where namespace "team"
 *     has a LocalQueue "default"), 2 server threads as in the manager.
 *     Target "bare": a libmicrohttpd daemon with the same TLS settings
 *     (GnuTLS priorities of webhook/server.c, same thread pool, same
 *     connection memory limit) that reads the body and answers one fixed
 *     AdmissionReview response.
 *  3. The same client load against each, one after the other: CLIENTS
 *     threads, each with one keep-alive TLS connection (libcurl easy
 *     handle, CA verified), alternating the two Job-create reviews of a
 *     `kubectl create` of a labelled Job: POST /mutate-batch-v1-job (the
 *     Job as submitted) then POST /validate-batch-v1-job (the Job as
 *     mutated: suspended), as kube-apiserver sends them. A warm-up, then
 *     a timed window.
 *
 * Figures per target: reviews/s over the window (wall time: the clients
 * keep the server busy; the machine is shared, so the load average is in
 * the notes), server-side latency p50/p99 (seconds from the request body
 * complete to the response queued, taken inside the server: the
 * webhook's observe hook, server.h; the same two clock reads in the bare
 * responder), client-side p99 (the whole request as curl sees it), and
 * process CPU microseconds per review (client and server together: both
 * run in this process).
 *
 * Checks: every answer is HTTP 200; the webhook's mutate answers allow
 * with a JSONPatch, its validate answers allow. Exit 0 when they held, 1
 * otherwise. QUICK=1: shorter windows (the whole run stays under ~10 s).
 *
 * Threads (this program only): main, CLIENTS client threads, and the
 * servers' own. Samples go into per-target arrays indexed by an atomic
 * counter; nothing else is shared.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "model/smap.h"
#include "test/bench/benchlib.h"
#include "webhook/certs.h"
#include "webhook/nsview.h"
#include "webhook/webhook.h"

#define CLIENTS 4
#define SERVER_THREADS 2u
#define MAX_SAMPLES (1u << 21)
#define PRIO_TLS12 "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* A Job as `kubectl create -f` sends it (kubectl adds nothing more):
 * labelled for LocalQueue "user-queue", 3 pods of 1 cpu / 512Mi. */
#define JOB_BODY(SUSPEND)                                                    \
	"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"       \
	"\"generateName\":\"sample-job-\",\"namespace\":\"team\","           \
	"\"labels\":{\"kueue.x-k8s.io/queue-name\":\"user-queue\"," \
	"\"app\":\"bench\"}},\"spec\":{\"parallelism\":3,\"completions\":3," \
	"\"backoffLimit\":6,\"completionMode\":\"NonIndexed\","              \
	"\"suspend\":" SUSPEND ",\"template\":{\"metadata\":{"               \
	"\"labels\":{\"app\":\"bench\"}},\"spec\":{\"containers\":[{"        \
	"\"name\":\"dummy-job\",\"image\":\"registry.k8s.io/e2e-test-images" \
	"/agnhost:2.53\",\"command\":[\"/bin/sh\"],\"args\":[\"-c\","        \
	"\"sleep 30\"],\"resources\":{\"requests\":{\"cpu\":\"1\","          \
	"\"memory\":\"512Mi\"}},\"terminationMessagePath\":\"/dev/"          \
	"termination-log\",\"terminationMessagePolicy\":\"File\","           \
	"\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":"          \
	"\"Never\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":"      \
	"\"ClusterFirst\",\"securityContext\":{},\"schedulerName\":"         \
	"\"default-scheduler\"}}},\"status\":{}}"

#define REVIEW(UID, OBJ)                                                     \
	"{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\"," \
	"\"request\":{\"uid\":\"" UID "\",\"kind\":{\"group\":\"batch\","    \
	"\"version\":\"v1\",\"kind\":\"Job\"},\"resource\":{\"group\":"      \
	"\"batch\",\"version\":\"v1\",\"resource\":\"jobs\"},"              \
	"\"requestKind\":{\"group\":\"batch\",\"version\":\"v1\",\"kind\":"  \
	"\"Job\"},\"requestResource\":{\"group\":\"batch\",\"version\":"     \
	"\"v1\",\"resource\":\"jobs\"},\"namespace\":\"team\","              \
	"\"operation\":\"CREATE\",\"userInfo\":{\"username\":"               \
	"\"kubernetes-admin\",\"groups\":[\"system:masters\","               \
	"\"system:authenticated\"]},\"object\":" OBJ ",\"oldObject\":null,"  \
	"\"dryRun\":false,\"options\":{\"kind\":\"CreateOptions\","          \
	"\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":"                \
	"\"kubectl-create\"}}}"

static const char mutate_body[] =
	REVIEW("705ab4f5-6393-11e8-b7cc-42010a800002", JOB_BODY("false"));
static const char validate_body[] =
	REVIEW("705ab4f5-6393-11e8-b7cc-42010a800003", JOB_BODY("true"));

/* What the bare responder answers: an allowed review, no patch. */
static const char bare_answer[] =
	"{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
	"\"response\":{\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
	"\"allowed\":true}}";

/* Latency samples of one target, in seconds; filled from many threads. */
struct samples {
	double *v;        /* MAX_SAMPLES slots */
	atomic_uint n;    /* slots claimed (may pass MAX_SAMPLES) */
	atomic_bool on;   /* record only inside the timed window */
};

static void samples_add(struct samples *s, double secs)
{
	unsigned i;

	if (!atomic_load_explicit(&s->on, memory_order_relaxed))
		return;
	i = atomic_fetch_add_explicit(&s->n, 1, memory_order_relaxed);
	if (i < MAX_SAMPLES)
		s->v[i] = secs;
}

static unsigned samples_count(struct samples *s)
{
	unsigned n = atomic_load(&s->n);

	return n < MAX_SAMPLES ? n : MAX_SAMPLES;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The pct-th percentile (nearest rank) in microseconds; sorts s. */
static double quantile_us(struct samples *s, unsigned pct)
{
	unsigned n = samples_count(s);

	if (!n)
		return 0;
	qsort(s->v, n, sizeof(double), cmp_double);
	return s->v[bench_rank(n, pct)] * 1e6;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s,
			       (long)((s - (double)(time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/* ---- the server-side observers ---- */

static struct samples server_lat; /* the target being measured */

static void on_observe(void *ud, const char *path, unsigned code,
		       double seconds)
{
	(void)ud;
	(void)path;
	(void)code;
	samples_add(&server_lat, seconds);
}

/* ---- the bare responder ---- */

struct bare_req {
	bool started;
};

static enum MHD_Result bare_request(void *cls, struct MHD_Connection *c,
				    const char *url, const char *method,
				    const char *version, const char *upload,
				    size_t *upload_size, void **con_cls)
{
	static bool marker;
	struct MHD_Response *r;
	enum MHD_Result ret;
	double t0;

	(void)cls;
	(void)url;
	(void)method;
	(void)version;
	(void)upload;
	if (!*con_cls) {
		*con_cls = &marker;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* read and dropped */
		return MHD_YES;
	}
	t0 = mono_s();
	r = MHD_create_response_from_buffer(sizeof(bare_answer) - 1,
					    (void *)bare_answer,
					    MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	samples_add(&server_lat, mono_s() - t0);
	return ret;
}

static struct MHD_Daemon *bare_start(const struct certs *c, unsigned *port)
{
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *i;

	d = MHD_start_daemon(MHD_USE_TLS | MHD_USE_ITC |
			     MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO,
			     0, NULL, NULL, bare_request, NULL,
			     MHD_OPTION_SOCK_ADDR, NULL,
			     MHD_OPTION_THREAD_POOL_SIZE, SERVER_THREADS,
			     MHD_OPTION_CONNECTION_TIMEOUT, 30u,
			     MHD_OPTION_CONNECTION_LIMIT, 512u,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			     (size_t)64 * 1024,
			     MHD_OPTION_HTTPS_MEM_KEY, c->key_pem,
			     MHD_OPTION_HTTPS_MEM_CERT, c->cert_pem,
			     MHD_OPTION_HTTPS_PRIORITIES, PRIO_TLS12,
			     MHD_OPTION_END);
	if (!d)
		return NULL;
	i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*port = i ? i->port : 0;
	return d;
}

/* ---- the clients ---- */

struct target {
	const char *name;
	unsigned port;
	bool check;             /* check the webhook's answers */
	const char *ca_pem;
	atomic_bool stop;
	atomic_bool measure;
	atomic_ulong done;      /* reviews answered in the window */
	atomic_ulong bad;       /* wrong answers (any time) */
	struct samples client;  /* client-side latency */
	char first_bad[256];
	pthread_mutex_t bad_lock;
};

struct buf {
	char *p;
	size_t n;
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct buf *b = ud;

	b->p = xrealloc(b->p, b->n + sz * n + 1);
	memcpy(b->p + b->n, p, sz * n);
	b->n += sz * n;
	b->p[b->n] = '\0';
	return sz * n;
}

static void note_bad(struct target *t, const char *what, const char *body)
{
	atomic_fetch_add(&t->bad, 1);
	pthread_mutex_lock(&t->bad_lock);
	if (!t->first_bad[0])
		snprintf(t->first_bad, sizeof(t->first_bad), "%s: %.160s",
			 what, body ? body : "");
	pthread_mutex_unlock(&t->bad_lock);
}

static void *client_main(void *ud)
{
	struct target *t = ud;
	CURL *h = curl_easy_init();
	struct curl_slist *hdr = NULL;
	struct curl_blob ca = { (void *)t->ca_pem, strlen(t->ca_pem),
				CURL_BLOB_COPY };
	char url[2][96];
	struct buf b = { NULL, 0 };
	unsigned k = 0;

	snprintf(url[0], sizeof(url[0]),
		 "https://127.0.0.1:%u/mutate-batch-v1-job", t->port);
	snprintf(url[1], sizeof(url[1]),
		 "https://127.0.0.1:%u/validate-batch-v1-job", t->port);
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, "Accept: application/json");
	hdr = curl_slist_append(hdr, "Expect:");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
	while (!atomic_load(&t->stop)) {
		bool mut = (k++ & 1) == 0;
		const char *body = mut ? mutate_body : validate_body;
		long code = 0;
		double t0 = mono_s(), dt;
		CURLcode rc;

		b.n = 0;
		curl_easy_setopt(h, CURLOPT_URL, url[!mut]);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
		rc = curl_easy_perform(h);
		dt = mono_s() - t0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
		if (rc != CURLE_OK || code != 200) {
			note_bad(t, rc != CURLE_OK ? curl_easy_strerror(rc)
						   : "HTTP status", b.p);
			continue;
		}
		if (t->check && (!strstr(b.p, "\"allowed\":true") ||
				 (mut && !strstr(b.p, "\"patchType\":"
						 "\"JSONPatch\"")))) {
			note_bad(t, mut ? "mutate answer" : "validate answer",
				 b.p);
			continue;
		}
		if (atomic_load_explicit(&t->measure, memory_order_relaxed)) {
			atomic_fetch_add(&t->done, 1);
			samples_add(&t->client, dt);
		}
	}
	free(b.p);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	return NULL;
}

struct result {
	double rps, p50, p99, cp99, cpu_us;
	unsigned long n;
};

/* Runs the client load against t: warm-up, then a window of secs. */
static void drive(struct target *t, double warm, double secs,
		  struct result *out)
{
	pthread_t th[CLIENTS];
	double t0, c0, wall;

	t->client.v = xcalloc(MAX_SAMPLES, sizeof(double));
	atomic_store(&t->client.n, 0);
	atomic_store(&t->client.on, true);
	atomic_store(&server_lat.n, 0);
	atomic_store(&server_lat.on, false);
	pthread_mutex_init(&t->bad_lock, NULL);
	for (int i = 0; i < CLIENTS; i++)
		if (pthread_create(&th[i], NULL, client_main, t))
			BUG("pthread_create");
	sleep_s(warm);
	c0 = bench_self_cpu_s();
	t0 = mono_s();
	atomic_store(&server_lat.on, true);
	atomic_store(&t->measure, true);
	sleep_s(secs);
	atomic_store(&t->measure, false);
	atomic_store(&server_lat.on, false);
	wall = mono_s() - t0;
	out->cpu_us = (bench_self_cpu_s() - c0) * 1e6;
	atomic_store(&t->stop, true);
	for (int i = 0; i < CLIENTS; i++)
		pthread_join(th[i], NULL);
	out->n = atomic_load(&t->done);
	out->rps = (double)out->n / wall;
	out->cpu_us = out->n ? out->cpu_us / (double)out->n : 0;
	out->p50 = quantile_us(&server_lat, 50);
	out->p99 = quantile_us(&server_lat, 99);
	out->cp99 = quantile_us(&t->client, 99);
	free(t->client.v);
	pthread_mutex_destroy(&t->bad_lock);
}

/* A row without an anchor; whole numbers from 100 up. */
static void row(const char *what, double v, const char *unit,
		const char *note)
{
	char f[32];

	bench_fmt(f, sizeof(f), v, v >= 100 ? 0 : 1);
	bench_row(what, f, unit, "—", "—", note);
}

int main(void)
{
	bool quick = getenv("QUICK") && !strcmp(getenv("QUICK"), "1");
	double warm = quick ? 0.5 : 2, secs = quick ? 2.5 : 10;
	struct certs c = CERTS_INIT;
	struct certs_opts co = { .service = "cueue-webhook-service",
				 .namespace = "cueue-system",
				 .now_s = (int64_t)time(NULL) };
	struct webhook_opts wo;
	struct webhook *wh;
	struct nsview *nv;
	struct smap labels = SMAP_INIT;
	struct MHD_Daemon *bare;
	struct err err = { "" };
	struct target tw = { .name = "webhook", .check = true };
	struct target tb = { .name = "bare" };
	struct result rw, rb;
	unsigned bare_port = 0;
	double load[3] = { 0, 0, 0 };
	char note[512];
	int rc = 0;

	bench_init("webhook-bench");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	server_lat.v = xcalloc(MAX_SAMPLES, sizeof(double));
	/* 1. certificates */
	if (certs_generate(&co, &c, &err) != 0) {
		bench_note("certificates: %s", err.msg);
		return 1;
	}
	/* 2. the servers */
	webhook_opts_init(&wo);
	wo.addr = "127.0.0.1";
	wo.port = 0;
	wo.cert_pem = c.cert_pem;
	wo.key_pem = c.key_pem;
	wo.threads = SERVER_THREADS;
	wo.observe = on_observe;
	wh = webhook_new(&wo, &err);
	webhook_opts_release(&wo);
	if (!wh) {
		bench_note("webhook: %s", err.msg);
		return 1;
	}
	nv = nsview_new();
	smap_set(&labels, "kubernetes.io/metadata.name", "team");
	nsview_set_labels(nv, "team", &labels);
	nsview_set_default_lq(nv, "team");
	webhook_publish_snapshot(wh, nv);
	smap_release(&labels);
	bare = bare_start(&c, &bare_port);
	if (!bare || !bare_port) {
		bench_note("cannot start the bare responder");
		webhook_free(wh);
		return 1;
	}
	tw.port = webhook_port(wh);
	tw.ca_pem = tb.ca_pem = c.ca_pem;
	tb.port = bare_port;
	/* 3. the same load on each */
	bench_note("%d keep-alive TLS clients, %.1f s warm-up + %.1f s per "
		   "target", CLIENTS, warm, secs);
	drive(&tw, warm, secs, &rw);
	bench_note("webhook %.0f reviews/s, server p50 %.0f us p99 %.0f us, "
		   "client p99 %.0f us", rw.rps, rw.p50, rw.p99, rw.cp99);
	drive(&tb, warm, secs, &rb);
	bench_note("bare    %.0f reviews/s, server p50 %.0f us p99 %.0f us, "
		   "client p99 %.0f us", rb.rps, rb.p50, rb.p99, rb.cp99);
	MHD_stop_daemon(bare);
	webhook_free(wh);
	if (getloadavg(load, 3) < 0)
		load[0] = 0;

	snprintf(note, sizeof(note), "Job-create reviews alternating "
		 "/mutate-batch-v1-job and /validate-batch-v1-job, %d "
		 "keep-alive TLS clients in-process, %.1f s window, 2 "
		 "server threads, load avg %.1f; goal >= 1,000/s", CLIENTS,
		 secs, load[0]);
	row("webhook: AdmissionReviews/s (cueue webhook)", rw.rps,
	    "reviews/s", note);
	row("webhook: AdmissionReviews/s (bare TLS libmicrohttpd responder, "
	    "same run)", rb.rps, "reviews/s",
	    "same TLS settings and load; reads the body, answers a fixed "
	    "allowed review");
	row("webhook: server-side latency p50 (cueue webhook)", rw.p50, "µs",
	    "body complete -> response queued, inside the server (observe "
	    "hook)");
	row("webhook: server-side latency p99 (cueue webhook)", rw.p99, "µs",
	    "same; goal <= 1,000 µs");
	row("webhook: server-side latency p50 (bare responder)", rb.p50, "µs",
	    "same two clock reads around the fixed answer");
	row("webhook: server-side latency p99 (bare responder)", rb.p99, "µs",
	    "same");
	row("webhook: client-side latency p99 (cueue webhook)", rw.cp99, "µs",
	    "whole request as libcurl sees it (TLS, loopback, queueing)");
	row("webhook: client-side latency p99 (bare responder)", rb.cp99,
	    "µs", "same");
	row("webhook: process CPU per review (cueue webhook)", rw.cpu_us,
	    "µs", "client and server together (one process), rusage");
	row("webhook: process CPU per review (bare responder)", rb.cpu_us,
	    "µs", "same");
	if (atomic_load(&tw.bad) || atomic_load(&tb.bad) || !rw.n || !rb.n) {
		bench_note("FAILED: webhook %lu bad (%s), bare %lu bad (%s), "
			   "answered %lu / %lu", atomic_load(&tw.bad),
			   tw.first_bad, atomic_load(&tb.bad), tb.first_bad,
			   rw.n, rb.n);
		rc = 1;
	}
	certs_release(&c);
	free(server_lat.v);
	curl_global_cleanup();
	return rc;
}
