/*
 * Suite "wiring": controller/wiring.h, what cueue-manager runs around
 * the manager, in-process against the in-process devserver (the CRDs,
 * manifests/00-namespace.yaml and manifests/webhooks.yaml preloaded; the
 * Service cueue-system/cueue-webhook-service resolving to the manager's
 * webhook port, as devserver --service-endpoint does):
 *  - /readyz fails until the informers synced, the certificates and
 *    caBundles are in place and the webhook serves its first namespace
 *    view; /healthz is 200 from the start;
 *  - after a few workloads, /metrics shows kueue_pending_workloads,
 *    kueue_admitted_workloads_total, the active workload gauges, the
 *    ClusterQueue status and the resource gauges matching the state;
 *  - a Job created through the devserver comes back suspended with
 *    the queue-name label "default" when its namespace has a LocalQueue
 *    "default" (the manager's caches -> the webhook's namespace view),
 *    and is left alone elsewhere;
 *  - manifests/: the files the devserver serves are applied with the real
 *    kubectl (server-side apply); every path webhook_paths() serves but
 *    /convert is referenced; the ConfigMap holds the shipped
 *    Configuration, and names, ports and probes agree with it.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"
#include "config/config.h"
#include "config/yamljson.h"
#include "controller/certmgr.h"
#include "controller/kube.h"
#include "controller/loop.h"
#include "controller/manager.h"
#include "controller/wiring.h"
#include "inproc.h"
#include "suites.h"
#include "test/support/support.h"
#include "webhook/webhook.h"

#define NS "cueue-system"
#define SVC "cueue-webhook-service"
#define QL "kueue.x-k8s.io/queue-name"

static const char config_text[] =
	"apiVersion: config.kueue.x-k8s.io/v1beta2\n"
	"kind: Configuration\n"
	"namespace: " NS "\n"
	"metrics:\n"
	"  enableClusterQueueResources: true\n"
	"internalCertManagement:\n"
	"  webhookServiceName: " SVC "\n"
	"  webhookSecretName: cueue-webhook-server-cert\n";

static struct {
	struct config cfg;
	struct wiring *w;
	struct manager *m;
	unsigned wh_port;
	char mbase[64], hbase[64];
} S;

/* A free loopback port (closed again; the webhook binds it next). */
static unsigned free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* The devserver, its Service cueue-webhook-service resolving to a free
 * port the webhook binds next (S.wh_port). */
static void ds_start(bool manifests)
{
	struct api_endpoint ep = { NS, SVC, "127.0.0.1", 0 };

	memset(&S, 0, sizeof(S));
	S.wh_port = ep.port = free_port();
	inp_start(&(struct inp_opts){ .manifests = manifests,
				      .endpoint = &ep });
}

static void setup(void)
{
	struct err err = { "" };
	struct config_opts co = { "", "wiring-test" };
	char wb[64];
	struct wiring_opts wo = {
		.metrics_bind = "127.0.0.1:0",
		.health_bind = "127.0.0.1:0",
		.webhook_bind = wb,
		.key_type = CERTS_EC_P256,
		.tick_ms = 20,
	};

	ds_start(true);
	ck_assert_msg(config_load_string(config_text, strlen(config_text),
					 &co, &S.cfg, &err) == 0, "%s",
		      err.msg);
	snprintf(wb, sizeof(wb), "127.0.0.1:%u", S.wh_port);
	wo.cfg = &S.cfg;
	S.w = wiring_new(inp_kube(), &wo, &err);
	ck_assert_msg(S.w != NULL, "wiring_new: %s", err.msg);
	ck_assert_uint_ne(wiring_metrics_port(S.w), 0);
	ck_assert_uint_ne(wiring_health_port(S.w), 0);
	ck_assert_uint_ne(wiring_metrics_port(S.w), wiring_health_port(S.w));
	snprintf(S.mbase, sizeof(S.mbase), "http://127.0.0.1:%u",
		 wiring_metrics_port(S.w));
	snprintf(S.hbase, sizeof(S.hbase), "http://127.0.0.1:%u",
		 wiring_health_port(S.w));
}

static void mgr_start(void)
{
	struct manager_opts mo = { .status_interval_ms = 20 };

	mo.metrics = wiring_metrics(S.w);
	S.m = manager_new(inp_kube(), &mo);
	wiring_attach(S.w, S.m);
}

static void teardown(void)
{
	manager_free(S.m);
	wiring_free(S.w);
	config_release(&S.cfg);
	inp_stop();
	memset(&S, 0, sizeof(S));
}

/* ---- HTTP ---- */

struct buf {
	char *p;
	size_t n;
};

static size_t on_body(char *d, size_t sz, size_t nm, void *ud)
{
	struct buf *b = ud;

	b->p = xrealloc(b->p, b->n + sz * nm + 1);
	memcpy(b->p + b->n, d, sz * nm);
	b->n += sz * nm;
	b->p[b->n] = '\0';
	return sz * nm;
}

/* GET base+path: the status (0 on transport failure); *body (may be
 * NULL) gets the text (caller frees). */
static long http_get(const char *base, const char *path, char **body)
{
	CURL *c = curl_easy_init();
	struct buf b = { xstrdup(""), 0 };
	char url[256];
	long code = 0;

	snprintf(url, sizeof(url), "%s%s", base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	if (body)
		*body = b.p;
	else
		free(b.p);
	return code;
}

/* The value of the series line starting with series (name{labels}) in a
 * scrape; -1 when absent. */
static double series(const char *text, const char *s)
{
	size_t n = strlen(s);

	for (const char *p = text; p && *p;) {
		if (!strncmp(p, s, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* Whether a scrape shows series s with value v. */
static bool scrape_has(const char *s, double v)
{
	char *text = NULL;
	bool ok = http_get(S.mbase, "/metrics", &text) == 200 &&
		  series(text, s) == v;

	free(text);
	return ok;
}

static void mk_queues(const char *lq_ns, const char *lq_name)
{
	inp_create_take("resourceflavors", NULL, t_flavor_json("default"));
	inp_create_take("clusterqueues", NULL, t_cq_json("cq", "default", "2"));
	inp_create_take("localqueues", lq_ns, t_lq_json(lq_ns, lq_name, "cq"));
}

static void mk_wl(const char *name, const char *lq, const char *cpu)
{
	inp_create_take("workloads", "default",
			t_wl_json("default", name, lq, cpu, 0));
}

static void wait_ready(void)
{
	WAIT_FOR(wiring_ready(S.w), 15000);
	ck_assert_int_eq(http_get(S.hbase, "/readyz", NULL), 200);
}

/* ---- tests ---- */

START_TEST(readiness_waits_for_everything)
{
	char *body = NULL;

	ck_assert_int_eq(http_get(S.hbase, "/healthz", NULL), 200);
	ck_assert_int_eq(http_get(S.hbase, "/readyz", NULL), 500);
	/* certificates and the webhook come first; no manager yet */
	WAIT_FOR(certmgr_ready(wiring_certmgr(S.w)) &&
		 wiring_webhook_port(S.w) != 0, 15000);
	inp_spin(100);
	ck_assert_uint_eq(wiring_webhook_port(S.w), S.wh_port);
	ck_assert_int_eq(http_get(S.hbase, "/readyz/certs", NULL), 200);
	ck_assert_int_eq(http_get(S.hbase, "/readyz/informers-synced", NULL),
			 500);
	/* no namespace view published yet */
	ck_assert_int_eq(http_get(S.hbase, "/readyz/webhook", NULL), 500);
	ck_assert_int_eq(http_get(S.hbase, "/readyz?verbose", &body), 500);
	ck_assert_ptr_nonnull(strstr(body, "[+]certs ok"));
	ck_assert_ptr_nonnull(strstr(body, "[-]informers-synced failed"));
	free(body);
	ck_assert(!wiring_ready(S.w));
	mgr_start();
	wait_ready();
	ck_assert(manager_synced(S.m));
	ck_assert(webhook_has_snapshot(wiring_webhook(S.w)));
	/* metrics live on the other server */
	ck_assert_int_eq(http_get(S.mbase, "/readyz", NULL), 404);
	ck_assert_int_eq(http_get(S.mbase, "/metrics", NULL), 200);
}
END_TEST

START_TEST(metrics_follow_the_state)
{
	char *text = NULL;

	mgr_start();
	wait_ready();
	/* through the webhooks (ClusterQueue finalizer, validation) */
	mk_queues("default", "lq");
	mk_wl("a", "lq", "1");
	mk_wl("b", "lq", "1");
	mk_wl("c", "lq", "1");
	WAIT_FOR(manager_stats(S.m)->admitted == 2, 10000);
	for (int quiet = 0; quiet < 10;) {
		inp_spin(30);
		quiet = manager_idle(S.m) ? quiet + 1 : 0;
	}
	ck_assert_int_eq(http_get(S.mbase, "/metrics", &text), 200);
#define CQL "cluster_queue=\"cq\""
	ck_assert(series(text, "kueue_admitted_workloads_total{" CQL
			       ",priority_class=\"\"}") == 2);
	ck_assert(series(text, "kueue_quota_reserved_workloads_total{" CQL
			       ",priority_class=\"\"}") == 2);
	ck_assert(series(text, "kueue_pending_workloads{" CQL
			       ",status=\"active\"}") +
		  series(text, "kueue_pending_workloads{" CQL
			       ",status=\"inadmissible\"}") == 1);
	ck_assert(series(text, "kueue_admitted_active_workloads{" CQL "}") ==
		  2);
	ck_assert(series(text, "kueue_reserving_active_workloads{" CQL "}") ==
		  2);
	ck_assert(series(text, "kueue_cluster_queue_status{" CQL
			       ",status=\"active\"}") == 1);
	ck_assert(series(text, "kueue_cluster_queue_status{" CQL
			       ",status=\"pending\"}") == 0);
#define RL CQL ",cohort=\"\",flavor=\"default\",resource=\"cpu\"}"
	ck_assert(series(text, "kueue_cluster_queue_nominal_quota{" RL) == 2);
	ck_assert(series(text, "kueue_cluster_queue_resource_reservation{"
			       RL) == 2);
	ck_assert(series(text, "kueue_cluster_queue_resource_usage{" RL) ==
		  2);
	/* the LocalQueue's (LocalQueueMetrics: on for a v1beta2 file) */
#define LQL "name=\"lq\",namespace=\"default\""
	ck_assert(series(text, "kueue_local_queue_admitted_workloads_total{"
			       LQL ",priority_class=\"\"}") == 2);
	ck_assert(series(text, "kueue_local_queue_quota_reserved_workloads_"
			       "total{" LQL ",priority_class=\"\"}") == 2);
	ck_assert(series(text, "kueue_local_queue_admission_wait_time_"
			       "seconds_count{" LQL ",priority_class=\"\"}")
		  == 2);
	/* c does not fit: tried once, then parked (inadmissible) */
	ck_assert(series(text, "kueue_local_queue_pending_workloads{" LQL
			       ",status=\"active\"}") == 0);
	ck_assert(series(text, "kueue_local_queue_pending_workloads{" LQL
			       ",status=\"inadmissible\"}") == 1);
	ck_assert(series(text, "kueue_local_queue_reserving_active_workloads{"
			       LQL "}") == 2);
	ck_assert(series(text, "kueue_local_queue_admitted_active_workloads{"
			       LQL "}") == 2);
	ck_assert(series(text, "kueue_local_queue_status{active=\"True\","
			       LQL "}") == 1);
	ck_assert(series(text, "kueue_local_queue_status{active=\"False\","
			       LQL "}") == 0);
	ck_assert(series(text, "kueue_local_queue_resource_reservation{"
			       "flavor=\"default\"," LQL ",resource=\"cpu\"}") == 2);
	ck_assert(series(text, "kueue_local_queue_resource_usage{"
			       "flavor=\"default\"," LQL ",resource=\"cpu\"}") == 2);
	ck_assert_ptr_nonnull(strstr(text, "\nprocess_cpu_seconds_total "));
	ck_assert_ptr_nonnull(strstr(text,
		"cueue_scheduling_cycle_duration_seconds_count"));
	free(text);

	/* a stopped LocalQueue: Active False */
	{
		json_t *p = json_pack("{s:{s:s}}", "spec", "stopPolicy",
				      "Hold");

		inp_patch("localqueues", "default", "lq", NULL, p);
		json_decref(p);
	}
	WAIT_FOR(scrape_has("kueue_local_queue_status{active=\"False\","
			    LQL "}", 1), 10000);
	/* the LocalQueue goes: its series go */
	inp_del("localqueues", "default", "lq", NULL);
	WAIT_FOR(scrape_has("kueue_local_queue_status{active=\"False\","
			    LQL "}", -1), 10000);
	ck_assert(scrape_has("kueue_local_queue_admitted_workloads_total{"
			     LQL ",priority_class=\"\"}", -1));

	/* the ClusterQueue goes: its series go */
	inp_del("clusterqueues", NULL, "cq", NULL);
	/* the finalizer stays while workloads hold quota: Terminating */
	WAIT_FOR(scrape_has("kueue_cluster_queue_status{" CQL
			    ",status=\"terminating\"}", 1), 10000);
#undef LQL
#undef RL
#undef CQL
}
END_TEST

static json_t *job(const char *ns, const char *name)
{
	char *t = xasprintf(
		"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
		"{\"name\":\"%s\",\"namespace\":\"%s\"},\"spec\":{"
		"\"template\":{\"spec\":{\"restartPolicy\":\"Never\","
		"\"containers\":[{\"name\":\"c\",\"image\":\"busybox\","
		"\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
		name, ns);
	json_t *out = inp_create_obj("jobs", ns, t);

	free(t);
	return out;
}

static const char *label(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(json_object_get(
		json_object_get(o, "metadata"), "labels"), k));
}

static bool suspended(const json_t *o)
{
	return json_is_true(json_object_get(json_object_get(o, "spec"),
					    "suspend"));
}

START_TEST(job_gets_default_queue)
{
	json_t *j;
	uint64_t gen;

	mgr_start();
	wait_ready();
	inp_create("namespaces", NULL, "{\"apiVersion\":\"v1\",\"kind\":"
		   "\"Namespace\",\"metadata\":{\"name\":\"other\"}}");
	/* no LocalQueue "default" yet: left alone */
	j = job("default", "before");
	ck_assert(!suspended(j));
	ck_assert_ptr_null(label(j, QL));
	json_decref(j);

	gen = manager_nsview_gen(S.m);
	mk_queues("default", "default");
	WAIT_FOR(manager_nsview_gen(S.m) != gen, 5000);
	inp_spin(100); /* a few ticks: the view is published */
	j = job("default", "after");
	ck_assert(suspended(j));
	ck_assert_str_eq(label(j, QL), "default");
	json_decref(j);

	/* a namespace without one is left alone */
	j = job("other", "elsewhere");
	ck_assert(!suspended(j));
	ck_assert_ptr_null(label(j, QL));
	json_decref(j);
}
END_TEST

/* internalCertManagement off: the certificates come from webhook.certDir,
 * and appear there after the start (as a mounted Secret would). */
START_TEST(cert_dir_without_internal_management)
{
	char dir[] = "/tmp/cueue-certdir-XXXXXX";
	char *text, *cmd, wb[64];
	struct config cfg;
	struct config_opts co = { "", "certdir" };
	struct err err = { "" };
	struct certs c = CERTS_INIT;
	struct certs_opts go = { .service = SVC, .namespace = NS,
				 .key_type = CERTS_EC_P256,
				 .now_s = time(NULL) };
	struct wiring_opts wo = { .metrics_bind = "0",
				  .health_bind = "127.0.0.1:0",
				  .webhook_bind = wb, .tick_ms = 20 };
	struct wiring *w;
	int64_t end;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	text = xasprintf("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
			 "kind: Configuration\nnamespace: " NS "\n"
			 "webhook:\n  certDir: %s\n"
			 "internalCertManagement:\n  enable: false\n", dir);
	ck_assert_msg(config_load_string(text, strlen(text), &co, &cfg,
					 &err) == 0, "%s", err.msg);
	snprintf(wb, sizeof(wb), "127.0.0.1:0");
	wo.cfg = &cfg;
	w = wiring_new(inp_kube(), &wo, &err);
	ck_assert_msg(w != NULL, "%s", err.msg);
	ck_assert_ptr_null(wiring_certmgr(w));
	ck_assert_uint_eq(wiring_metrics_port(w), 0);
	inp_spin(100);
	ck_assert_uint_eq(wiring_webhook_port(w), 0); /* no files yet */
	ck_assert_msg(certs_generate(&go, &c, &err) == 0, "%s", err.msg);
	ck_assert_msg(certs_write_dir(dir, &c, &err) == 0, "%s", err.msg);
	/* retried every 5 s */
	end = t_mono_ms() + 8000;
	while (!wiring_webhook_port(w) && t_mono_ms() < end)
		inp_spin(50);
	ck_assert_uint_ne(wiring_webhook_port(w), 0);
	wiring_free(w);
	certs_release(&c);
	config_release(&cfg);
	free(text);
	cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

/* ---- manifests/ ---- */

static json_t *load_docs(const char *rel)
{
	char *p = t_src_path(rel);
	json_t *docs = NULL;
	struct err err = { "" };

	ck_assert_msg(yamljson_load_file(p, &docs, &err) == 0, "%s: %s", rel,
		      err.msg);
	free(p);
	return docs;
}

static const json_t *find_doc(const json_t *docs, const char *kind,
			      const char *name)
{
	const json_t *d;
	size_t i;

	json_array_foreach(docs, i, d) {
		const char *k = json_string_value(json_object_get(d, "kind"));
		const char *n = json_string_value(json_object_get(
			json_object_get(d, "metadata"), "name"));

		if (k && n && !strcmp(k, kind) && !strcmp(n, name))
			return d;
	}
	return NULL;
}

static bool served_kind(const char *kind)
{
	static const char *const kinds[] = {
		"Namespace", "ConfigMap", "Secret", "Service",
		"MutatingWebhookConfiguration",
		"ValidatingWebhookConfiguration", NULL,
	};

	for (size_t i = 0; kinds[i]; i++)
		if (!strcmp(kind, kinds[i]))
			return true;
	return false;
}

/* Applies docs (the served kinds) with kubectl --server-side. */
static void kubectl_apply(const char *dir, const char *file,
			  const json_t *docs, size_t *napplied)
{
	char *path = xasprintf("%s/%s.yaml", dir, file), *cmd;
	FILE *f = fopen(path, "w");
	const json_t *d;
	size_t i, n = 0;
	int rc;

	ck_assert_ptr_nonnull(f);
	json_array_foreach(docs, i, d) {
		if (!served_kind(json_string_value(json_object_get(d,
								   "kind"))))
			continue;
		/* a JSON stream: kubectl reads one object after another */
		n++;
		json_dumpf(d, f, JSON_INDENT(1));
		fputc('\n', f);
	}
	fclose(f);
	if (n) {
		cmd = xasprintf("kubectl --kubeconfig %s/kubeconfig apply "
				"--server-side --field-manager cueue-test "
				"-f %s >%s/out 2>&1", dir, path, dir);
		rc = system(cmd);
		if (rc != 0) {
			char *out = xasprintf("cat %s/out >&2", dir);

			ck_assert(system(out) >= 0);
			free(out);
		}
		ck_assert_msg(rc == 0, "kubectl apply %s failed", file);
		free(cmd);
	}
	*napplied += n;
	free(path);
}

START_TEST(manifests_apply_and_agree)
{
	static const char *const files[] = { "00-namespace", "manager",
					     "rbac", "webhooks" };
	char dir[] = "/tmp/cueue-wiring-XXXXXX";
	char *kcpath, *cfgpath, *cfgtext, *cmd;
	json_t *docs[4];
	struct config cfg;
	struct err err = { "" };
	struct config_opts co = { "", "configmap" };
	size_t n = 0, npaths;
	const struct webhook_path *paths = webhook_paths(&npaths);
	const json_t *d, *c;
	FILE *f;

	ds_start(false);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	kcpath = xasprintf("%s/kubeconfig", dir);
	f = fopen(kcpath, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: ds\n"
		"  cluster:\n    server: %s\ncontexts:\n- name: ds\n"
		"  context:\n    cluster: ds\n    user: u\n"
		"current-context: ds\nusers:\n- name: u\n  user: {}\n",
		inp_url());
	fclose(f);
	for (size_t i = 0; i < 4; i++) {
		char *rel = xasprintf("manifests/%s.yaml", files[i]);

		docs[i] = load_docs(rel);
		free(rel);
	}
	if (system("kubectl version --client >/dev/null 2>&1") == 0) {
		for (size_t i = 0; i < 4; i++)
			kubectl_apply(dir, files[i], docs[i], &n);
		ck_assert_uint_eq(n, 1 + 4 + 0 + 2);
	} else {
		fprintf(stderr, "wiring: no kubectl on PATH; apply skipped\n");
	}

	/* the ConfigMap holds the shipped Configuration, byte for byte */
	d = find_doc(docs[1], "ConfigMap", "cueue-manager-config");
	ck_assert_ptr_nonnull(d);
	cfgtext = xstrdup(json_string_value(json_object_get(json_object_get(
		d, "data"), "controller_manager_config.yaml")));
	cfgpath = t_src_path("manifests/config/controller_manager_config."
			     "yaml");
	{
		FILE *cf = fopen(cfgpath, "r");
		char *file = xmalloc(65536);
		size_t len = fread(file, 1, 65535, cf);

		fclose(cf);
		file[len] = '\0';
		ck_assert_str_eq(cfgtext, file);
		free(file);
	}
	ck_assert_msg(config_load_string(cfgtext, strlen(cfgtext), &co, &cfg,
					 &err) == 0, "%s", err.msg);
	ck_assert_str_eq(cfg.namespace, NS);
	ck_assert_str_eq(cfg.icm_webhook_service_name, SVC);
	ck_assert(find_doc(docs[0], "Namespace", NS));
	ck_assert(find_doc(docs[1], "Secret", cfg.icm_webhook_secret_name));

	/* the webhook Service: 443 -> webhook.port */
	d = find_doc(docs[1], "Service", SVC);
	ck_assert_ptr_nonnull(d);
	c = json_array_get(json_object_get(json_object_get(d, "spec"),
					   "ports"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(c, "port")), 443);
	ck_assert_int_eq(json_integer_value(json_object_get(c, "targetPort")),
			 cfg.webhook_port);

	/* the Deployment: probes on the health port, the config mounted */
	d = find_doc(docs[1], "Deployment", "cueue-controller-manager");
	ck_assert_ptr_nonnull(d);
	c = json_array_get(json_object_get(json_object_get(json_object_get(
		json_object_get(d, "spec"), "template"), "spec"),
		"containers"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
		json_object_get(c, "livenessProbe"), "httpGet"), "path")),
		"/healthz");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
		json_object_get(c, "readinessProbe"), "httpGet"), "path")),
		"/readyz");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		json_object_get(c, "readinessProbe"), "httpGet"), "port")),
		atoi(strrchr(cfg.health_probe_bind_address, ':') + 1));
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(c,
		"args"), 0)), "--config=/controller_manager_config.yaml");
	c = json_object_get(json_object_get(json_object_get(d, "spec"),
					    "template"), "spec");
	ck_assert_str_eq(json_string_value(json_object_get(c,
		"serviceAccountName")), "cueue-controller-manager");
	ck_assert(find_doc(docs[2], "ServiceAccount",
			   "cueue-controller-manager"));
	ck_assert(find_doc(docs[2], "ClusterRole", "cueue-manager-role"));

	/* every served path but /convert is called, on our Service, once
	 * per configuration; names are unique per configuration */
	for (size_t i = 0; i < npaths; i++) {
		const char *want = paths[i].path;
		const json_t *cfgdoc = find_doc(docs[3], paths[i].mutating
			? "MutatingWebhookConfiguration"
			: "ValidatingWebhookConfiguration", paths[i].mutating
			? "cueue-mutating-webhook-configuration"
			: "cueue-validating-webhook-configuration");
		const json_t *h;
		size_t j, hits = 0;

		if (!strcmp(want, "/convert"))
			continue;
		ck_assert_ptr_nonnull(cfgdoc);
		json_array_foreach(json_object_get(cfgdoc, "webhooks"), j, h) {
			const json_t *svc = json_object_get(json_object_get(h,
				"clientConfig"), "service");

			if (strcmp(json_string_value(json_object_get(svc,
				"path")), want))
				continue;
			hits++;
			ck_assert_str_eq(json_string_value(json_object_get(
				svc, "name")), SVC);
			ck_assert_str_eq(json_string_value(json_object_get(
				svc, "namespace")), NS);
			ck_assert_str_eq(json_string_value(json_object_get(h,
				"failurePolicy")), "Fail");
			if (strstr(want, "v1beta2") || strstr(want, "-job"))
				ck_assert_str_eq(json_string_value(
					json_object_get(h, "name")),
					paths[i].name);
		}
		ck_assert_msg(hits == 1, "%s referenced %zu times", want,
			      hits);
	}
	for (size_t i = 0; i < 2; i++) {
		const json_t *cd = json_array_get(docs[3], i), *h, *h2;
		size_t j, k;

		json_array_foreach(json_object_get(cd, "webhooks"), j, h)
			json_array_foreach(json_object_get(cd, "webhooks"), k,
					   h2)
				ck_assert(j == k || strcmp(
					json_string_value(json_object_get(h,
						"name")),
					json_string_value(json_object_get(h2,
						"name"))));
	}
	{
		char *ca = certmgr_webhook_config_name(SVC, true);

		ck_assert(find_doc(docs[3], "MutatingWebhookConfiguration",
				   ca));
		free(ca);
	}

	config_release(&cfg);
	for (size_t i = 0; i < 4; i++)
		json_decref(docs[i]);
	cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(cfgtext);
	free(cfgpath);
	free(kcpath);
	inp_stop();
}
END_TEST

Suite *wiring_suite(void)
{
	Suite *s = suite_create("wiring");
	TCase *tc = tcase_create("manager");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, readiness_waits_for_everything);
	tcase_add_test(tc, metrics_follow_the_state);
	tcase_add_test(tc, job_gets_default_queue);
	tcase_add_test(tc, cert_dir_without_internal_management);
	suite_add_tcase(s, tc);

	tc = tcase_create("manifests");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, manifests_apply_and_agree);
	suite_add_tcase(s, tc);
	return s;
}
