/*
 * Suite "kube": the controller's I/O layer against the devserver run
 * in-process (plain HTTP, or TLS with a token) and against a tiny
 * libmicrohttpd fake for what the devserver never does (429, 5xx, huge
 * answers, oversized watch events), all driven through the one event
 * loop (controller/loop.h):
 *  - kubeconfig files (test/fixtures/kubeconfig/) and the in-cluster
 *    config from a fake service-account directory;
 *  - REST verbs, resourceVersion preconditions (409 handed back), Status
 *    parsing (404, 422), DeleteOptions, counters;
 *  - credentials: CA, bearer token over TLS, insecure, tls-server-name;
 *  - rate limiting, Retry-After, backoff, retry budgets, answer ceilings,
 *    cancellation;
 *  - informers: paged list, ordered events, bookmarks, resume after the
 *    server ends a watch, 410 -> re-list with a resync, reconnect after a
 *    server restart, the per-event ceiling.
 * Timing asserts are lower bounds only (a token bucket can never be
 * faster than its rate), never tight windows.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "base/jx.h"
#include "controller/kube.h"
#include "controller/kube_watch.h"
#include "controller/kubeconfig.h"
#include "controller/loop.h"
#include "devserver/api.h"
#include "devserver/http.h"
#include "devserver/tls.h"
#include "suites.h"
#include "test/support/support.h"

#define CMS "/api/v1/namespaces/default/configmaps"
#define KS_CMS "/api/v1/namespaces/kube-system/configmaps"

/* ---- the devserver, in-process ---- */

static struct {
	struct api *api;
	struct http_server *http;
	struct tls_material tm;
	unsigned port;
} S;

struct srv_opts {
	bool tls;
	const char *token;
	size_t history;       /* 0: 1000 */
	const char *data_dir;
	unsigned port;        /* 0: any */
	unsigned idle_s;      /* http idle_timeout_s; 0: its default */
};

static void srv_start(const struct srv_opts *o)
{
	static const struct srv_opts plain;
	struct err err = { "" };
	struct api_opts ao = { .bookmark_ms = 300 };
	struct http_opts ho = { .addr = "127.0.0.1",
				.max_body = (size_t)3 << 20 };
	static const char *const dns[] = { "localhost", NULL };
	static const char *const ips[] = { "127.0.0.1", NULL };

	if (!o)
		o = &plain;
	ao.watch_history = o->history ? o->history : 1000;
	ao.data_dir = o->data_dir;
	ho.token = o->token;
	ho.port = o->port;
	ho.idle_timeout_s = o->idle_s;
	memset(&S, 0, sizeof(S));
	S.api = api_new(&ao, &err);
	ck_assert_msg(S.api != NULL, "api_new: %s", err.msg);
	if (o->tls) {
		ck_assert_int_eq(tls_generate(dns, ips, &S.tm, &err), 0);
		ho.cert_pem = S.tm.cert_pem;
		ho.key_pem = S.tm.key_pem;
	}
	S.http = http_server_start(&ho, api_serve, S.api, &err);
	ck_assert_msg(S.http != NULL, "http: %s", err.msg);
	S.port = http_server_port(S.http);
}

static void srv_stop(void)
{
	if (!S.api)
		return;
	api_shutdown(S.api);
	http_server_stop(S.http);
	api_free(S.api);
	tls_material_release(&S.tm);
	memset(&S, 0, sizeof(S));
}

/* Writes through the internal API (not the client under test). */
static char *cm_create(const char *ns, const char *name, const char *val)
{
	struct api_ref ref = { .resource = "configmaps", .ns = ns,
			       .name = name };
	struct api_status st = API_STATUS_INIT;
	json_t *obj = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion",
				"v1", "kind", "ConfigMap", "metadata", "name",
				name, "data", "k", val), *out = NULL;
	char *rv;

	ck_assert_msg(api_internal_create(S.api, &ref, obj, &out, &st) == 0,
		      "create %s: %s", name, st.message);
	rv = xstrdup(json_string_value(json_object_get(
		json_object_get(out, "metadata"), "resourceVersion")));
	json_decref(obj);
	json_decref(out);
	return rv;
}

static void cm_patch(const char *ns, const char *name, const char *val)
{
	struct api_ref ref = { .resource = "configmaps", .ns = ns,
			       .name = name };
	struct api_status st = API_STATUS_INIT;
	json_t *p = json_pack("{s:{s:s}}", "data", "k", val);

	ck_assert_msg(api_internal_patch(S.api, &ref, NULL, API_PATCH_MERGE,
					 p, NULL, &st) == 0,
		      "patch %s: %s", name, st.message);
	json_decref(p);
}

static void cm_delete(const char *ns, const char *name)
{
	struct api_ref ref = { .resource = "configmaps", .ns = ns,
			       .name = name };
	struct api_status st = API_STATUS_INIT;

	ck_assert_msg(api_internal_delete(S.api, &ref, "Background", NULL,
					  &st) == 0,
		      "delete %s: %s", name, st.message);
}

/* ---- the client under test ---- */

static struct loop *L;
static struct kube *K;

static void loop_start(void)
{
	struct err err = { "" };

	L = loop_new(NULL, &err);
	ck_assert_msg(L != NULL, "loop_new: %s", err.msg);
}

/* A client for url with the given credentials (any may be NULL). */
static struct kube *client_for(const char *url, const char *ca,
			       const char *token, const struct kube_opts *o)
{
	struct kubeconfig kc = KUBECONFIG_INIT;
	struct err err = { "" };
	struct kube *k;

	kc.server = xstrdup(url);
	kc.ca_pem = xstrdup_or_null(ca);
	kc.token = xstrdup_or_null(token);
	k = kube_new(L, &kc, o, &err);
	ck_assert_msg(k != NULL, "kube_new: %s", err.msg);
	kubeconfig_release(&kc);
	return k;
}

static void client_start(const struct kube_opts *o)
{
	if (!L)
		loop_start();
	K = client_for(http_server_url(S.http), S.tm.ca_pem, NULL, o);
}

static void client_stop(void)
{
	kube_free(K);
	K = NULL;
	loop_free(L);
	L = NULL;
}

/* Runs the loop for about ms. */
static void spin(int64_t ms)
{
	int64_t end = t_mono_ms() + ms;
	struct err e = { "" };

	while (t_mono_ms() < end)
		ck_assert_msg(loop_run_once(L, 20, &e) == 0, "%s", e.msg);
}

struct res {
	bool done;
	enum kube_outcome outcome;
	long code;
	char reason[64];
	char message[1024];
	unsigned attempts;
	int64_t retry_after_ms;
	json_t *body;         /* taken from the callback */
	int64_t done_ms;      /* real clock */
};

static void on_res(void *ud, const struct kube_reply *r, json_t *body)
{
	struct res *x = ud;

	ck_assert(!x->done);
	x->done = true;
	x->outcome = r->outcome;
	x->code = r->code;
	snprintf(x->reason, sizeof(x->reason), "%s", r->reason);
	snprintf(x->message, sizeof(x->message), "%s", r->message);
	x->attempts = r->attempts;
	x->retry_after_ms = r->retry_after_ms;
	x->body = body;
	x->done_ms = t_mono_ms();
}

static void res_release(struct res *x)
{
	json_decref(x->body);
	memset(x, 0, sizeof(*x));
}

static struct kube_call *submit(struct kube *k, struct res *x,
				enum kube_verb v, const char *path,
				const char *body)
{
	json_t *b = body ? t_json(body) : NULL;
	struct kube_req r = { .verb = v, .path = path, .body = b,
			      .done = on_res, .ud = x };
	struct kube_call *c;

	memset(x, 0, sizeof(*x));
	c = kube_submit(k, &r);
	json_decref(b);
	return c;
}

/* One request to completion through the loop. */
static void call(struct res *x, enum kube_verb v, const char *path,
		 const char *body)
{
	submit(K, x, v, path, body);
	T_LOOP_UNTIL(L, x->done, 15000);
}

#define ck_outcome(x, o, c) \
	ck_assert_msg((x).outcome == (o) && (x).code == (c), \
		      "want outcome %d code %d, got %d %ld: %s %s", (o), (c), \
		      (x).outcome, (x).code, (x).reason, (x).message)

/* ---- kubeconfig ---- */

static char *fixture_path(const char *name)
{
	char *rel = xasprintf("test/fixtures/kubeconfig/%s", name);
	char *p = t_src_path(rel);

	free(rel);
	return p;
}

START_TEST(kubeconfig_inline_data)
{
	struct kubeconfig c = KUBECONFIG_INIT;
	struct err err = { "" };
	char *p = fixture_path("full.yaml");

	ck_assert_msg(kubeconfig_load(p, NULL, &c, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.server, "https://10.0.0.1:6443");
	ck_assert_str_eq(c.tls_server_name, "api.dev.example");
	ck_assert(!c.insecure);
	ck_assert_ptr_nonnull(strstr(c.ca_pem, "ZmFrZSBjYQ=="));
	ck_assert_ptr_nonnull(strstr(c.cert_pem, "BEGIN CERTIFICATE"));
	ck_assert_ptr_nonnull(strstr(c.key_pem, "BEGIN PRIVATE KEY"));
	/* token wins over tokenFile, trimmed, and is not re-read */
	ck_assert_str_eq(c.token, "inline-token");
	ck_assert_ptr_null(c.token_file);
	ck_assert_str_eq(c.ns, "team-a");
	ck_assert_str_eq(c.source, p);
	kubeconfig_release(&c);
	ck_assert_ptr_null(c.server);
	kubeconfig_release(&c); /* twice is fine */
	free(p);
}
END_TEST

START_TEST(kubeconfig_relative_files)
{
	struct kubeconfig c = KUBECONFIG_INIT;
	struct err err = { "" };
	char *p = fixture_path("full.yaml"), *tok = fixture_path("token");

	ck_assert_msg(kubeconfig_load(p, "ops", &c, &err) == 0, "%s",
		      err.msg);
	ck_assert_str_eq(c.server, "https://10.0.0.2:443");
	ck_assert_ptr_null(c.tls_server_name);
	ck_assert_ptr_nonnull(strstr(c.ca_pem, "ZmFrZSBjYQ=="));
	ck_assert_ptr_nonnull(strstr(c.cert_pem, "ZmFrZSBjbGllbnQ="));
	ck_assert_ptr_nonnull(strstr(c.key_pem, "ZmFrZSBrZXk="));
	ck_assert_str_eq(c.token, "file-token-123");
	ck_assert_str_eq(c.token_file, tok);
	ck_assert_str_eq(c.ns, "default");
	kubeconfig_release(&c);
	free(tok);
	free(p);
}
END_TEST

START_TEST(kubeconfig_insecure_and_parse)
{
	struct kubeconfig c = KUBECONFIG_INIT;
	struct err err = { "" };
	char *p = fixture_path("insecure.yaml");
	static const char text[] =
		"clusters: [{name: c, cluster: {server: 'http://h:1'}}]\n"
		"contexts: [{name: x, context: {cluster: c, namespace: team-n}}]\n"
		"current-context: x\n";

	ck_assert_msg(kubeconfig_load(p, NULL, &c, &err) == 0, "%s", err.msg);
	ck_assert(c.insecure);
	ck_assert_ptr_null(c.ca_pem);
	ck_assert_ptr_null(c.token);
	ck_assert_ptr_null(c.cert_pem);
	ck_assert_msg(kubeconfig_parse(text, strlen(text), NULL, NULL, "mem",
				       &c, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(c.server, "http://h:1");
	ck_assert(!c.insecure);
	ck_assert_str_eq(c.ns, "team-n");
	ck_assert_str_eq(c.source, "mem");
	kubeconfig_release(&c);
	free(p);
}
END_TEST

static const struct {
	const char *file;
	const char *context;
	const char *msg; /* substring of the error */
} bad_configs[] = {
	{ "no-current-context.yaml", NULL, "no current-context is set" },
	{ "full.yaml", "nosuch", "context \"nosuch\" does not exist" },
	{ "missing-user.yaml", NULL, "user \"nobody\" does not exist" },
	{ "missing-cluster.yaml", NULL, "cluster \"gone\" does not exist" },
	{ "no-server.yaml", NULL, "cluster \"c\" has no server" },
	{ "exec-user.yaml", NULL, "exec and auth-provider credentials are "
				  "not supported" },
	{ "insecure-with-ca.yaml", NULL, "with the insecure flag is not "
					 "allowed" },
	{ "cert-without-key.yaml", NULL, "a client certificate needs its "
					 "key" },
	{ "missing-file.yaml", NULL, "certificate-authority: " },
	{ "bad-base64.yaml", NULL, "illegal base64 data" },
	{ "nosuch.yaml", NULL, "No such file or directory" },
};

START_TEST(kubeconfig_errors)
{
	struct kubeconfig c = KUBECONFIG_INIT;
	struct err err = { "" };
	char *p = fixture_path(bad_configs[_i].file);

	ck_assert_int_eq(kubeconfig_load(p, bad_configs[_i].context, &c,
					 &err), -1);
	ck_assert_msg(strstr(err.msg, bad_configs[_i].msg) != NULL,
		      "%s: '%s' lacks '%s'", bad_configs[_i].file, err.msg,
		      bad_configs[_i].msg);
	/* messages name the file */
	ck_assert_msg(strstr(err.msg, bad_configs[_i].file) != NULL, "%s",
		      err.msg);
	ck_assert_ptr_null(c.server);
	free(p);
}
END_TEST

static void write_file(const char *dir, const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

START_TEST(kubeconfig_in_cluster_fake_dir)
{
	char dir[] = "/tmp/cueue-sa-XXXXXX";
	struct kubeconfig c = KUBECONFIG_INIT;
	struct err err = { "" };
	char *cmd, *tok;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	ck_assert_int_eq(kubeconfig_in_cluster(dir, &c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "KUBERNETES_SERVICE_HOST and "
				     "KUBERNETES_SERVICE_PORT must be "
				     "defined"));
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	/* no token: an error naming the file */
	ck_assert_int_eq(kubeconfig_in_cluster(dir, &c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "/token"));
	write_file(dir, "token", "sa-token\n");
	/* no ca.crt, no namespace: system CAs, "default" */
	ck_assert_msg(kubeconfig_in_cluster(dir, &c, &err) == 0, "%s",
		      err.msg);
	ck_assert_str_eq(c.server, "https://10.96.0.1:443");
	ck_assert_str_eq(c.token, "sa-token");
	ck_assert_ptr_null(c.ca_pem);
	ck_assert_str_eq(c.ns, "default");
	ck_assert_str_eq(c.source, "in-cluster");
	tok = xasprintf("%s/token", dir);
	ck_assert_str_eq(c.token_file, tok);
	free(tok);
	write_file(dir, "ca.crt", "-----BEGIN CERTIFICATE-----\n");
	write_file(dir, "namespace", "kueue-system");
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	ck_assert_msg(kubeconfig_in_cluster(dir, &c, &err) == 0, "%s",
		      err.msg);
	ck_assert_str_eq(c.server, "https://[fd00::1]:443");
	ck_assert_str_eq(c.ca_pem, "-----BEGIN CERTIFICATE-----\n");
	ck_assert_str_eq(c.ns, "kueue-system");
	/* discover: no path, no KUBECONFIG, in a cluster */
	unsetenv("KUBECONFIG");
	ck_assert_msg(kubeconfig_discover(NULL, dir, &c, &err) == 0, "%s",
		      err.msg);
	ck_assert_str_eq(c.source, "in-cluster");
	kubeconfig_release(&c);
	cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

START_TEST(kubeconfig_discover_order)
{
	struct kubeconfig c = KUBECONFIG_INIT;
	struct err err = { "" };
	char *full = fixture_path("full.yaml"), *ins = fixture_path("insecure.yaml");
	char *env = xasprintf("/nonexistent/config:%s", ins);
	char home[] = "/tmp/cueue-home-XXXXXX";
	char *cmd;

	ck_assert_ptr_nonnull(mkdtemp(home));
	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("HOME", home, 1);
	setenv("KUBECONFIG", env, 1);
	/* the flag wins */
	ck_assert_int_eq(kubeconfig_discover(full, NULL, &c, &err), 0);
	ck_assert_str_eq(c.source, full);
	/* then the first existing file of $KUBECONFIG */
	ck_assert_int_eq(kubeconfig_discover(NULL, NULL, &c, &err), 0);
	ck_assert_str_eq(c.source, ins);
	/* nothing at all */
	unsetenv("KUBECONFIG");
	ck_assert_int_eq(kubeconfig_discover(NULL, NULL, &c, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "no kubeconfig"));
	/* then ~/.kube/config */
	cmd = xasprintf("mkdir -p %s/.kube && cp %s %s/.kube/config", home,
			ins, home);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	ck_assert_int_eq(kubeconfig_discover(NULL, NULL, &c, &err), 0);
	ck_assert(c.insecure);
	kubeconfig_release(&c);
	cmd = xasprintf("rm -rf %s", home);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	free(env);
	free(full);
	free(ins);
}
END_TEST

/* ---- REST ---- */

START_TEST(paths)
{
	struct kube_ref a = { .version = "v1", .resource = "configmaps" };
	struct kube_ref b = { .group = "kueue.x-k8s.io", .version = "v1beta2",
			      .resource = "workloads", .ns = "team-a",
			      .name = "w", .subresource = "status" };
	struct kube_ref c = { .group = "kueue.x-k8s.io", .version = "v1beta2",
			      .resource = "clusterqueues", .name = "cq" };
	char *p;

	p = kube_path(&a);
	ck_assert_str_eq(p, "/api/v1/configmaps");
	free(p);
	p = kube_path(&b);
	ck_assert_str_eq(p, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/"
			 "workloads/w/status");
	free(p);
	p = kube_path(&c);
	ck_assert_str_eq(p, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq");
	free(p);
	p = kube_escape("app in (a,b),!x=y ~z");
	ck_assert_str_eq(p, "app%20in%20%28a%2Cb%29%2C%21x%3Dy%20~z");
	free(p);
}
END_TEST

START_TEST(verbs_and_conflicts)
{
	struct res x;
	const struct kube_stats *st;
	char *rv1, *rv2, *body, *path;

	srv_start(NULL);
	client_start(NULL);
	call(&x, KUBE_POST, CMS, "{\"apiVersion\":\"v1\",\"kind\":"
	     "\"ConfigMap\",\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":"
	     "\"v1\"}}");
	ck_outcome(x, KUBE_OK, 201);
	ck_assert_refcount(x.body, 1);
	ck_assert_str_eq(x.reason, "");
	ck_assert_uint_eq(x.attempts, 1);
	rv1 = xstrdup(JX_STR(x.body, "metadata", "resourceVersion"));
	res_release(&x);

	call(&x, KUBE_GET, CMS "/a", NULL);
	ck_outcome(x, KUBE_OK, 200);
	ck_assert_str_eq(JX_STR(x.body, "data", "k"), "v1");
	res_release(&x);

	/* a merge patch with the current RV applies */
	body = xasprintf("{\"metadata\":{\"resourceVersion\":\"%s\"},"
			 "\"data\":{\"k\":\"v2\"}}", rv1);
	call(&x, KUBE_PATCH_MERGE, CMS "/a", body);
	ck_outcome(x, KUBE_OK, 200);
	rv2 = xstrdup(JX_STR(x.body, "metadata", "resourceVersion"));
	ck_assert_str_ne(rv1, rv2);
	res_release(&x);
	/* the same patch again: the RV is stale, 409 comes back at once */
	call(&x, KUBE_PATCH_MERGE, CMS "/a", body);
	ck_outcome(x, KUBE_HTTP, 409);
	ck_assert_str_eq(x.reason, "Conflict");
	ck_assert_ptr_nonnull(strstr(x.message, "the object has been "
				     "modified"));
	ck_assert_uint_eq(x.attempts, 1);
	ck_assert_str_eq(JX_STR(x.body, "kind"), "Status");
	res_release(&x);
	free(body);

	/* discard_answer: a 2xx answer is neither kept nor parsed, a
	 * failure still carries its Status */
	{
		json_t *p = t_json("{\"data\":{\"k\":\"v2b\"}}");
		struct kube_req r = { .verb = KUBE_PATCH_MERGE,
				      .path = CMS "/a", .body = p,
				      .discard_answer = true,
				      .done = on_res, .ud = &x };

		memset(&x, 0, sizeof(x));
		kube_submit(K, &r);
		T_LOOP_UNTIL(L, x.done, 10000);
		ck_outcome(x, KUBE_OK, 200);
		ck_assert_ptr_null(x.body);
		res_release(&x);
		r.path = CMS "/missing";
		kube_submit(K, &r);
		T_LOOP_UNTIL(L, x.done, 10000);
		ck_outcome(x, KUBE_HTTP, 404);
		ck_assert_str_eq(x.reason, "NotFound");
		ck_assert_str_eq(JX_STR(x.body, "kind"), "Status");
		res_release(&x);
		json_decref(p);
	}

	/* JSON patch; PUT with a stale RV */
	call(&x, KUBE_PATCH_JSON, CMS "/a", "[{\"op\":\"replace\",\"path\":"
	     "\"/data/k\",\"value\":\"v3\"}]");
	ck_outcome(x, KUBE_OK, 200);
	ck_assert_str_eq(JX_STR(x.body, "data", "k"), "v3");
	res_release(&x);
	body = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			 "\"metadata\":{\"name\":\"a\",\"resourceVersion\":"
			 "\"%s\"},\"data\":{\"k\":\"v4\"}}", rv2);
	call(&x, KUBE_PUT, CMS "/a", body);
	ck_outcome(x, KUBE_HTTP, 409);
	res_release(&x);
	free(body);

	/* DELETE with a stale precondition, then with propagation */
	{
		struct kube_req r = { .verb = KUBE_DELETE, .path = CMS "/a",
				      .precondition_rv = rv1,
				      .propagation = "Background",
				      .done = on_res, .ud = &x };

		memset(&x, 0, sizeof(x));
		kube_submit(K, &r);
		T_LOOP_UNTIL(L, x.done, 10000);
		ck_outcome(x, KUBE_HTTP, 409);
		res_release(&x);
		r.precondition_rv = NULL;
		kube_submit(K, &r);
		T_LOOP_UNTIL(L, x.done, 10000);
		ck_outcome(x, KUBE_OK, 200);
		ck_assert_str_eq(JX_STR(x.body, "status"), "Success");
		res_release(&x);
	}

	/* 404 and 422 Statuses */
	call(&x, KUBE_GET, CMS "/a", NULL);
	ck_outcome(x, KUBE_HTTP, 404);
	ck_assert_str_eq(x.reason, "NotFound");
	ck_assert_str_eq(x.message, "configmaps \"a\" not found");
	ck_assert_refcount(x.body, 1);
	res_release(&x);
	call(&x, KUBE_POST, CMS, "{\"apiVersion\":\"v1\",\"kind\":"
	     "\"ConfigMap\",\"metadata\":{\"name\":\"Bad_Name\"}}");
	ck_outcome(x, KUBE_HTTP, 422);
	ck_assert_str_eq(x.reason, "Invalid");
	ck_assert_ptr_nonnull(strstr(x.message, "metadata.name"));
	ck_assert(json_is_array(json_object_get(json_object_get(x.body,
		"details"), "causes")));
	res_release(&x);

	/* a list */
	free(cm_create("default", "b", "1"));
	path = xasprintf("%s?limit=10", CMS);
	call(&x, KUBE_LIST, path, NULL);
	ck_outcome(x, KUBE_OK, 200);
	ck_assert_str_eq(JX_STR(x.body, "kind"), "ConfigMapList");
	ck_assert_uint_ge(json_array_size(json_object_get(x.body, "items")),
			  1);
	res_release(&x);
	free(path);

	st = kube_stats(K);
	ck_assert_uint_eq(kube_stats_count(st, KUBE_POST, 201), 1);
	ck_assert_uint_eq(kube_stats_count(st, KUBE_POST, 422), 1);
	ck_assert_uint_eq(kube_stats_count(st, KUBE_PATCH_MERGE, 409), 1);
	ck_assert_uint_eq(kube_stats_count(st, KUBE_DELETE, 200), 1);
	ck_assert_uint_eq(kube_stats_count(st, KUBE_GET, 404), 1);
	ck_assert_uint_eq(kube_stats_count(st, KUBE_LIST, 200), 1);
	ck_assert_uint_eq(st->retries, 0);
	ck_assert_str_eq(kube_verb_name(KUBE_PATCH_JSON), "PATCH");
	ck_assert_uint_eq(kube_pending(K), 0);
	free(rv1);
	free(rv2);
	client_stop();
	srv_stop();
}
END_TEST

/* The kubeconfig the devserver's --kubeconfig-out writes, by hand. */
static char *write_kubeconfig(const char *dir, const char *extra_cluster,
			      const char *token, bool with_ca)
{
	char *p = xasprintf("%s/kubeconfig", dir);
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "apiVersion: v1\nkind: Config\nclusters:\n- name: d\n"
		"  cluster:\n    server: %s\n", http_server_url(S.http));
	if (with_ca) {
		char *b = b64_encode(S.tm.ca_pem, strlen(S.tm.ca_pem),
				     B64_STD);

		fprintf(f, "    certificate-authority-data: %s\n", b);
		free(b);
	}
	if (extra_cluster)
		fprintf(f, "    %s\n", extra_cluster);
	fprintf(f, "users:\n- name: u\n  user:\n");
	if (token)
		fprintf(f, "    token: %s\n", token);
	else
		fprintf(f, "    {}\n");
	fprintf(f, "contexts:\n- name: x\n  context: {cluster: d, user: u}\n"
		"current-context: x\n");
	fclose(f);
	return p;
}

/* GET /api/v1/namespaces with the kubeconfig in dir; fills x. */
static void get_namespaces_with(const char *path, struct res *x)
{
	struct kubeconfig c = KUBECONFIG_INIT;
	struct err err = { "" };
	struct kube_opts o = { .max_retries = 1, .backoff_base_ms = 10 };
	struct kube *k;

	ck_assert_msg(kubeconfig_load(path, NULL, &c, &err) == 0, "%s",
		      err.msg);
	k = kube_new(L, &c, &o, &err);
	ck_assert_msg(k != NULL, "%s", err.msg);
	kubeconfig_release(&c);
	submit(k, x, KUBE_LIST, "/api/v1/namespaces", NULL);
	T_LOOP_UNTIL(L, x->done, 15000);
	kube_free(k);
}

START_TEST(tls_credentials)
{
	char dir[] = "/tmp/cueue-kc-XXXXXX";
	struct srv_opts so = { .tls = true, .token = "s3cret" };
	struct res x;
	char *p, *cmd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	srv_start(&so);
	loop_start();
	ck_assert(!strncmp(http_server_url(S.http), "https://", 8));

	/* CA + token, as --kubeconfig-out writes them */
	p = write_kubeconfig(dir, NULL, "s3cret", true);
	get_namespaces_with(p, &x);
	ck_outcome(x, KUBE_OK, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(x.body, "items")),
			  4);
	res_release(&x);
	free(p);

	/* a wrong token: 401 with its Status, not retried */
	p = write_kubeconfig(dir, NULL, "wrong", true);
	get_namespaces_with(p, &x);
	ck_outcome(x, KUBE_HTTP, 401);
	ck_assert_str_eq(x.reason, "Unauthorized");
	ck_assert_uint_eq(x.attempts, 1);
	res_release(&x);
	free(p);

	/* no CA: verification fails, and that is never retried */
	p = write_kubeconfig(dir, NULL, "s3cret", false);
	get_namespaces_with(p, &x);
	ck_assert_int_eq(x.outcome, KUBE_TRANSPORT);
	ck_assert_int_eq(x.code, 0);
	ck_assert_uint_eq(x.attempts, 1);
	res_release(&x);
	free(p);

	/* ... unless insecure */
	p = write_kubeconfig(dir, "insecure-skip-tls-verify: true", "s3cret",
			     false);
	get_namespaces_with(p, &x);
	ck_outcome(x, KUBE_OK, 200);
	res_release(&x);
	free(p);

	/* tls-server-name is what the certificate is checked against */
	p = write_kubeconfig(dir, "tls-server-name: localhost", "s3cret",
			     true);
	get_namespaces_with(p, &x);
	ck_outcome(x, KUBE_OK, 200);
	res_release(&x);
	free(p);
	p = write_kubeconfig(dir, "tls-server-name: wrong.example", "s3cret",
			     true);
	get_namespaces_with(p, &x);
	ck_assert_int_eq(x.outcome, KUBE_TRANSPORT);
	ck_assert_uint_eq(x.attempts, 1);
	res_release(&x);
	free(p);

	client_stop();
	srv_stop();
	cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

/* N requests at qps Q with burst B take at least (N - B) / Q seconds. */
/* The write fence: queued and later writes end with "write fenced" from
 * the loop, never inside the call; reads and control requests go on. */
START_TEST(write_fence)
{
	struct res q1, q2, w, r, ctl;
	struct kube_opts ko = { .qps = 1, .burst = 1 };
	json_t *b = t_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			   "\"metadata\":{\"name\":\"c\"}}");
	struct kube_req cr = { .verb = KUBE_POST, .path = CMS, .body = b,
			       .control = true, .done = on_res, .ud = &ctl };

	srv_start(NULL);
	client_start(&ko);
	/* the bucket's one token goes to q1; q2 waits in the queue */
	submit(K, &q1, KUBE_POST, CMS, "{\"apiVersion\":\"v1\",\"kind\":"
	       "\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}");
	submit(K, &q2, KUBE_POST, CMS, "{\"apiVersion\":\"v1\",\"kind\":"
	       "\"ConfigMap\",\"metadata\":{\"name\":\"b\"}}");
	ck_assert_uint_eq(kube_writes_pending(K), 2);
	T_LOOP_UNTIL(L, q1.done, 10000);
	ck_outcome(q1, KUBE_OK, 201);
	ck_assert(!q2.done);
	kube_fence(K);
	ck_assert(kube_fenced(K));
	ck_assert(!q2.done); /* never from inside kube_fence */
	submit(K, &w, KUBE_DELETE, CMS "/a", NULL);
	ck_assert(!w.done);  /* nor from inside kube_submit */
	T_LOOP_UNTIL(L, q2.done && w.done, 10000);
	ck_outcome(q2, KUBE_TRANSPORT, 0);
	ck_assert_ptr_nonnull(strstr(q2.message, "write fenced"));
	ck_outcome(w, KUBE_TRANSPORT, 0);
	ck_assert_uint_eq(kube_writes_pending(K), 0);
	/* reads go on (through the rate limiter), control requests too */
	call(&r, KUBE_GET, CMS "/a", NULL);
	ck_outcome(r, KUBE_OK, 200);
	res_release(&r);
	memset(&ctl, 0, sizeof(ctl));
	kube_submit(K, &cr);
	T_LOOP_UNTIL(L, ctl.done, 10000);
	ck_outcome(ctl, KUBE_OK, 201);
	ck_assert_uint_eq(kube_writes_pending(K), 0);
	/* what was fenced never reached the server */
	call(&r, KUBE_GET, CMS "/b", NULL);
	ck_outcome(r, KUBE_HTTP, 404);
	res_release(&q1);
	res_release(&q2);
	res_release(&w);
	res_release(&r);
	res_release(&ctl);
	json_decref(b);
	client_stop();
	srv_stop();
}
END_TEST

START_TEST(rate_limit)
{
	struct kube_opts o = { .qps = 10, .burst = 2 };
	struct res x[8];
	int64_t t0;
	const struct kube_stats *st;

	srv_start(NULL);
	client_start(&o);
	/* the limiter's clock: the loop's now, cached per iteration (the
	 * same CLOCK_MONOTONIC as mono_ms) */
	t0 = loop_now_ms(L);
	ck_assert(!kube_saturated(K));
	for (int i = 0; i < 8; i++)
		submit(K, &x[i], KUBE_GET, "/version", NULL);
	ck_assert_uint_eq(kube_pending(K), 8);
	ck_assert(kube_saturated(K)); /* 6 wait for a token */
	T_LOOP_UNTIL(L, x[0].done && x[1].done && x[2].done && x[3].done &&
		     x[4].done && x[5].done && x[6].done && x[7].done, 15000);
	ck_assert(!kube_saturated(K));
	for (int i = 0; i < 8; i++) {
		ck_outcome(x[i], KUBE_OK, 200);
		res_release(&x[i]);
	}
	ck_assert_int_ge(t_mono_ms() - t0, 595);
	st = kube_stats(K);
	ck_assert_uint_eq(st->throttled, 6);
	ck_assert_uint_ge(st->throttle_wait_ms, 6 * 100);
	client_stop();

	/* qps < 0: no limit */
	o.qps = -1;
	client_start(&o);
	for (int i = 0; i < 8; i++)
		submit(K, &x[i], KUBE_GET, "/version", NULL);
	T_LOOP_UNTIL(L, x[0].done && x[1].done && x[2].done && x[3].done &&
		     x[4].done && x[5].done && x[6].done && x[7].done, 15000);
	for (int i = 0; i < 8; i++)
		res_release(&x[i]);
	ck_assert_uint_eq(kube_stats(K)->throttled, 0);
	client_stop();
	srv_stop();
}
END_TEST

/* ---- a fake server for what the devserver never does ---- */

enum fake_mode {
	FAKE_429_ONCE,  /* 429 Retry-After: 1, then 200 */
	FAKE_503_TWICE, /* 503 (not a Status, no Retry-After) twice, then 200 */
	FAKE_503,       /* always 503, Retry-After: 0 */
	FAKE_BIG,       /* 200 with a 4 MiB JSON object */
	FAKE_NOT_JSON,  /* 200 "hello" */
	FAKE_BIG_EVENT, /* a list, then a watch whose first event is 2 MiB */
	FAKE_RECORD,    /* 200; the path (+auth when an Authorization
			   header came) is appended to F.log */
};

static struct {
	struct MHD_Daemon *d;
	enum fake_mode mode;
	atomic_int hits;
	atomic_int watches;
	char *url;
	pthread_mutex_t lock;
	char log[1024];   /* FAKE_RECORD: "path path ..."; under lock */
} F = { .lock = PTHREAD_MUTEX_INITIALIZER };

static enum MHD_Result fake_reply(struct MHD_Connection *c, unsigned code,
				  char *body, const char *retry_after)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		strlen(body), body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	MHD_add_response_header(r, "Content-Type", "application/json");
	if (retry_after)
		MHD_add_response_header(r, "Retry-After", retry_after);
	rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return rc;
}

static char *big_object(size_t n, const char *prefix, const char *suffix)
{
	size_t lp = strlen(prefix), ls = strlen(suffix);
	char *s = xmalloc(lp + n + ls + 1);

	memcpy(s, prefix, lp);
	memset(s + lp, 'x', n);
	memcpy(s + lp + n, suffix, ls + 1);
	return s;
}

static enum MHD_Result fake_handler(void *cls, struct MHD_Connection *c,
				    const char *url, const char *method,
				    const char *version, const char *upload,
				    size_t *upload_size, void **con_cls)
{
	int hit = atomic_fetch_add(&F.hits, 1) + 1;
	static const char ok[] = "{\"kind\":\"ConfigMap\",\"apiVersion\":"
				 "\"v1\",\"metadata\":{\"name\":\"x\"}}";

	(void)cls;
	(void)method;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	switch (F.mode) {
	case FAKE_429_ONCE:
		if (hit == 1)
			return fake_reply(c, 429, xstrdup(
				"{\"kind\":\"Status\",\"apiVersion\":\"v1\","
				"\"status\":\"Failure\",\"reason\":"
				"\"TooManyRequests\",\"message\":\"slow "
				"down\",\"code\":429}"), "1");
		return fake_reply(c, 200, xstrdup(ok), NULL);
	case FAKE_503_TWICE:
		if (hit <= 2)
			return fake_reply(c, 503, xstrdup("oops\n"), NULL);
		return fake_reply(c, 200, xstrdup(ok), NULL);
	case FAKE_503:
		return fake_reply(c, 503, xstrdup("busy"), "0");
	case FAKE_BIG:
		return fake_reply(c, 200, big_object((size_t)4 << 20,
			"{\"data\":\"", "\"}"), NULL);
	case FAKE_NOT_JSON:
		return fake_reply(c, 200, xstrdup("hello"), NULL);
	case FAKE_RECORD:
		pthread_mutex_lock(&F.lock);
		if (strlen(F.log) + strlen(url) + 7 < sizeof(F.log)) {
			strcat(F.log, url);
			if (MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							"Authorization"))
				strcat(F.log, "+auth");
			strcat(F.log, " ");
		}
		pthread_mutex_unlock(&F.lock);
		return fake_reply(c, 200, xstrdup(ok), NULL);
	case FAKE_BIG_EVENT:
		if (!MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						 "watch"))
			return fake_reply(c, 200, xstrdup(
				"{\"kind\":\"ConfigMapList\",\"apiVersion\":"
				"\"v1\",\"metadata\":{\"resourceVersion\":"
				"\"5\"},\"items\":[]}"), NULL);
		atomic_fetch_add(&F.watches, 1);
		return fake_reply(c, 200, big_object((size_t)2 << 20,
			"{\"type\":\"ADDED\",\"object\":{\"kind\":"
			"\"ConfigMap\",\"metadata\":{\"name\":\"big\","
			"\"resourceVersion\":\"6\"},\"data\":{\"k\":\"",
			"\"}}}\n"), NULL);
	}
	return MHD_NO;
}

static void fake_start(enum fake_mode mode)
{
	const union MHD_DaemonInfo *info;

	F.mode = mode;
	atomic_store(&F.hits, 0);
	atomic_store(&F.watches, 0);
	F.log[0] = '\0';
	F.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
			       MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL,
			       0, NULL, NULL, fake_handler, NULL,
			       MHD_OPTION_LISTENING_ADDRESS_REUSE, 1U,
			       MHD_OPTION_END);
	ck_assert_ptr_nonnull(F.d);
	info = MHD_get_daemon_info(F.d, MHD_DAEMON_INFO_BIND_PORT);
	ck_assert_ptr_nonnull(info);
	F.url = xasprintf("http://127.0.0.1:%u", (unsigned)info->port);
}

static void fake_stop(void)
{
	MHD_stop_daemon(F.d);
	F.d = NULL;
	FREE_AND_NULL(F.url);
}

/* Throttled requests go out in submission order (FIFO), 100 ms apart;
 * and, as client-go, no bearer token over plain http. */
START_TEST(rate_limit_order)
{
	struct kube_opts o = { .qps = 10, .burst = 1 };
	struct res x[5];
	char path[32];

	fake_start(FAKE_RECORD);
	loop_start();
	K = client_for(F.url, NULL, "tok", &o);
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "/r%d", i);
		submit(K, &x[i], KUBE_GET, path, NULL);
	}
	T_LOOP_UNTIL(L, x[0].done && x[1].done && x[2].done && x[3].done &&
		     x[4].done, 15000);
	for (int i = 0; i < 5; i++)
		res_release(&x[i]);
	pthread_mutex_lock(&F.lock);
	ck_assert_str_eq(F.log, "/r0 /r1 /r2 /r3 /r4 ");
	pthread_mutex_unlock(&F.lock);
	ck_assert_uint_eq(kube_stats(K)->throttled, 4);
	client_stop();
	fake_stop();
}
END_TEST

START_TEST(retry_after_429)
{
	struct res x;
	const struct kube_stats *st;
	int64_t t0;

	fake_start(FAKE_429_ONCE);
	loop_start();
	K = client_for(F.url, NULL, NULL, NULL);
	t0 = t_mono_ms();
	call(&x, KUBE_GET, CMS "/x", NULL);
	ck_outcome(x, KUBE_OK, 200);
	ck_assert_uint_eq(x.attempts, 2);
	ck_assert_int_ge(x.done_ms - t0, 950); /* Retry-After: 1 */
	res_release(&x);
	st = kube_stats(K);
	ck_assert_uint_eq(kube_stats_count(st, KUBE_GET, 429), 1);
	ck_assert_uint_eq(kube_stats_count(st, KUBE_GET, 200), 1);
	ck_assert_uint_eq(st->retries, 1);
	client_stop();
	fake_stop();
}
END_TEST

START_TEST(retry_5xx_backoff_and_budget)
{
	struct kube_opts o = { .backoff_base_ms = 20, .max_retries = 2 };
	struct res x;

	/* 503 twice without Retry-After: backoff, then success */
	fake_start(FAKE_503_TWICE);
	loop_start();
	K = client_for(F.url, NULL, NULL, &o);
	call(&x, KUBE_GET, CMS "/x", NULL);
	ck_outcome(x, KUBE_OK, 200);
	ck_assert_uint_eq(x.attempts, 3);
	res_release(&x);
	kube_free(K);
	fake_stop();

	/* always 503: the budget runs out and the last answer comes back,
	 * a non-Status body turned into a reason and a message */
	fake_start(FAKE_503);
	K = client_for(F.url, NULL, NULL, &o);
	call(&x, KUBE_POST, CMS, "{\"kind\":\"ConfigMap\"}");
	ck_outcome(x, KUBE_HTTP, 503);
	ck_assert_uint_eq(x.attempts, 3);
	ck_assert_int_eq(x.retry_after_ms, 0);
	ck_assert_str_eq(x.reason, "ServiceUnavailable");
	ck_assert_ptr_nonnull(strstr(x.message, "status 503: busy"));
	ck_assert_ptr_null(x.body);
	ck_assert_int_eq(atomic_load(&F.hits), 3);
	res_release(&x);
	/* no_retry: the first answer is final */
	{
		struct kube_req r = { .verb = KUBE_GET, .path = CMS "/x",
				      .no_retry = true, .done = on_res,
				      .ud = &x };

		memset(&x, 0, sizeof(x));
		kube_submit(K, &r);
		T_LOOP_UNTIL(L, x.done, 5000);
		ck_assert_uint_eq(x.attempts, 1);
		res_release(&x);
	}
	client_stop();
	fake_stop();
}
END_TEST

START_TEST(connection_refused)
{
	struct kube_opts o = { .backoff_base_ms = 10, .max_retries = 2 };
	struct res x;

	loop_start();
	/* port 1: nothing listens, the connection is refused at once */
	K = client_for("http://127.0.0.1:1", NULL, NULL, &o);
	call(&x, KUBE_GET, CMS "/x", NULL);
	ck_assert_int_eq(x.outcome, KUBE_TRANSPORT);
	ck_assert_int_eq(x.code, 0);
	ck_assert_uint_eq(x.attempts, 3);
	ck_assert_ptr_nonnull(strstr(x.message, "onnect"));
	ck_assert_uint_eq(kube_stats_count(kube_stats(K), KUBE_GET, 0), 3);
	res_release(&x);
	client_stop();
}
END_TEST

START_TEST(answer_ceilings)
{
	struct kube_opts o = { .max_object_bytes = (size_t)1 << 20 };
	struct res x;

	fake_start(FAKE_BIG);
	loop_start();
	K = client_for(F.url, NULL, NULL, &o);
	/* an object over the object ceiling: an error, not a crash */
	call(&x, KUBE_GET, CMS "/x", NULL);
	ck_outcome(x, KUBE_TOO_LARGE, 200);
	ck_assert_ptr_null(x.body);
	ck_assert_ptr_nonnull(strstr(x.message, "larger than 1048576"));
	ck_assert_uint_eq(x.attempts, 1);
	res_release(&x);
	ck_assert_uint_eq(kube_stats(K)->too_large, 1);
	/* the same size is fine under the list ceiling (64 MiB) */
	call(&x, KUBE_LIST, CMS, NULL);
	ck_outcome(x, KUBE_OK, 200);
	ck_assert_uint_eq(strlen(JX_STR(x.body, "data")), (size_t)4 << 20);
	res_release(&x);
	/* and under an explicit one */
	{
		struct kube_req r = { .verb = KUBE_GET, .path = CMS "/x",
				      .max_bytes = 1000, .done = on_res,
				      .ud = &x };

		memset(&x, 0, sizeof(x));
		kube_submit(K, &r);
		T_LOOP_UNTIL(L, x.done, 5000);
		ck_assert_int_eq(x.outcome, KUBE_TOO_LARGE);
		res_release(&x);
	}
	kube_free(K);
	fake_stop();

	fake_start(FAKE_NOT_JSON);
	K = client_for(F.url, NULL, NULL, &o);
	call(&x, KUBE_GET, CMS "/x", NULL);
	ck_outcome(x, KUBE_BAD_BODY, 200);
	ck_assert_ptr_null(x.body);
	res_release(&x);
	client_stop();
	fake_stop();
}
END_TEST

static int g_unexpected;

static void on_unexpected(void *ud, const struct kube_reply *r, json_t *body)
{
	(void)ud;
	(void)r;
	json_decref(body);
	g_unexpected++;
}

/*
 * A small answer over TLS comes in one record, as kube-apiserver sends
 * it: one SSL_read (which never returns more than one record) holds the
 * status line, the headers and the whole body. libmicrohttpd alone sent
 * the head and the body as two records (http.c, cork). Several requests
 * on one connection, so the corked keep-alive path is covered; a big
 * answer (over the cork limit) still arrives whole.
 */
/* A raw TLS client connection to the test server (no verification). */
struct raw {
	SSL_CTX *ctx;
	SSL *ssl;
	int fd;
};

/* Connects; rcvbuf > 0 sets the socket's SO_RCVBUF first. */
static struct raw raw_open(int rcvbuf)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct raw r;

	r.ctx = SSL_CTX_new(TLS_client_method());
	ck_assert_ptr_nonnull(r.ctx);
	r.fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(r.fd, 0);
	if (rcvbuf)
		ck_assert_int_eq(setsockopt(r.fd, SOL_SOCKET, SO_RCVBUF,
					    &rcvbuf, sizeof(rcvbuf)), 0);
	a.sin_port = htons((uint16_t)S.port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(r.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	r.ssl = SSL_new(r.ctx);
	SSL_set_fd(r.ssl, r.fd);
	ck_assert_int_eq(SSL_connect(r.ssl), 1);
	return r;
}

static void raw_close(struct raw *r)
{
	SSL_free(r->ssl);
	close(r->fd);
	SSL_CTX_free(r->ctx);
}

/* n ConfigMaps big-0.. in default, each with a value of size - 1 bytes. */
static void big_configmaps(int n, size_t size)
{
	char *v = xmalloc(size);

	memset(v, 'x', size - 1);
	v[size - 1] = '\0';
	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "big-%d", i);
		free(cm_create("default", name, v));
	}
	free(v);
}

/* Sends one request; returns the bytes of the first SSL_read. */
static int first_read(SSL *ssl, const char *method, const char *path,
		      const char *body, char *buf, int cap)
{
	char req[1024];
	int n;

	n = snprintf(req, sizeof(req),
		     "%s %s HTTP/1.1\r\nHost: localhost\r\n"
		     "Authorization: Bearer s3cret\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n%s",
		     method, path, body ? strlen(body) : 0, body ? body : "");
	ck_assert_int_eq(SSL_write(ssl, req, n), n);
	n = SSL_read(ssl, buf, cap - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	return n;
}

/* The length of the body the head of buf announces. */
static long announced(const char *buf)
{
	const char *cl = strstr(buf, "\r\nContent-Length: ");

	ck_assert_ptr_nonnull(cl);
	return strtol(cl + 18, NULL, 10);
}

static void ck_whole(const char *buf, int n, const char *status)
{
	const char *end = strstr(buf, "\r\n\r\n");

	ck_assert_msg(!strncmp(buf, status, strlen(status)), "%.40s", buf);
	ck_assert_ptr_nonnull(end);
	ck_assert_int_eq((long)(buf + n - (end + 4)), announced(buf));
}

/* The connection answers a GET of a namespace whole, in one record. */
static void ck_answers(SSL *ssl)
{
	char buf[4096];
	int n = first_read(ssl, "GET", "/api/v1/namespaces/default", NULL,
			   buf, sizeof(buf));

	ck_whole(buf, n, "HTTP/1.1 200");
}

START_TEST(tls_small_answer_one_record)
{
	struct srv_opts so = { .tls = true, .token = "s3cret" };
	static char buf[1 << 20];
	struct raw r;
	int n;
	long want, got;

	srv_start(&so);
	r = raw_open(0);
	for (int i = 0; i < 3; i++) {
		ck_answers(r.ssl);
		n = first_read(r.ssl, "GET",
			       "/api/v1/namespaces/default/configmaps/nope",
			       NULL, buf, sizeof(buf));
		ck_whole(buf, n, "HTTP/1.1 404");
	}
	n = first_read(r.ssl, "POST", "/api/v1/namespaces/default/configmaps",
		       "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		       "\"metadata\":{\"name\":\"one\"},"
		       "\"data\":{\"k\":\"v\"}}", buf, sizeof(buf));
	ck_whole(buf, n, "HTTP/1.1 201");
	/* a big answer: more than one record, read to its end */
	big_configmaps(40, 1024);
	n = first_read(r.ssl, "GET", "/api/v1/namespaces/default/configmaps",
		       NULL, buf, sizeof(buf));
	ck_assert(!strncmp(buf, "HTTP/1.1 200", 12));
	want = announced(buf);
	ck_assert_int_gt(want, 40 * 1024);
	got = (long)(buf + n - (strstr(buf, "\r\n\r\n") + 4));
	while (got < want) {
		n = SSL_read(r.ssl, buf, sizeof(buf));
		ck_assert_int_gt(n, 0);
		got += n;
	}
	ck_assert_int_eq(got, want);
	ck_answers(r.ssl); /* and the connection still answers */
	raw_close(&r);
	srv_stop();
}
END_TEST

/*
 * A client that sends many requests and reads nothing: the answers fill
 * its socket, and the server holds on only as long as its idle timeout
 * (1 s here), then drops the connection; reading afterwards ends before
 * all the answers came. Meanwhile and after, others are served.
 */
START_TEST(tls_client_that_does_not_read)
{
	struct srv_opts so = { .tls = true, .token = "s3cret", .idle_s = 1 };
	struct timeval tv = { .tv_sec = 5 };
	enum { N = 1000 };
	static char reqs[N * 128], buf[1 << 16];
	size_t len = 0;
	long got = 0, one;
	struct raw r;
	int n;

	signal(SIGPIPE, SIG_IGN);
	srv_start(&so);
	/* answers of about 12 KB (still corked): 12 MB for all of them,
	 * more than the two sockets hold */
	big_configmaps(10, 1000);
	/* the size of one answer, from a client that reads */
	r = raw_open(0);
	one = first_read(r.ssl, "GET", "/api/v1/namespaces/default/configmaps",
			 NULL, buf, sizeof(buf));
	ck_whole(buf, (int)one, "HTTP/1.1 200"); /* one record: corked */
	raw_close(&r);

	r = raw_open(4096);
	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(reqs + len, sizeof(reqs) - len,
					"GET /api/v1/namespaces/default/"
					"configmaps HTTP/1.1\r\n"
					"Host: localhost\r\n"
					"Authorization: Bearer s3cret\r\n\r\n");
	ck_assert_int_eq(SSL_write(r.ssl, reqs, (int)len), (int)len);
	sleep(3); /* > the idle timeout, reading nothing */
	ck_assert_int_eq(setsockopt(r.fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
	while ((n = SSL_read(r.ssl, buf, sizeof(buf))) > 0)
		got += n;
	/* some answers may come before the end, or none (a reset drops
	 * what the client's kernel held) */
	ck_assert_int_lt(got, (long)N * one);
	raw_close(&r);
	/* the server still answers others */
	r = raw_open(0);
	ck_answers(r.ssl);
	raw_close(&r);
	srv_stop();
}
END_TEST

START_TEST(cancel_in_every_state)
{
	struct kube_opts o = { .qps = 1, .burst = 1,
			       .backoff_base_ms = 5000 };
	struct kube_req r = { .verb = KUBE_GET, .path = "/version",
			      .done = on_unexpected };
	struct kube_call *a, *b;
	struct kube *k2;
	struct res x;

	srv_start(NULL);
	client_start(&o);
	g_unexpected = 0;
	a = kube_submit(K, &r);         /* running: the token was there */
	b = kube_submit(K, &r);         /* throttled */
	ck_assert_uint_eq(loop_transfer_count(L), 1);
	kube_cancel(K, b);
	kube_cancel(K, a);
	ck_assert_uint_eq(kube_pending(K), 0);
	ck_assert_uint_eq(loop_transfer_count(L), 0);
	/* backing off: a refused connection waits 5 s before its retry */
	k2 = client_for("http://127.0.0.1:1", NULL, NULL, &o);
	a = kube_submit(k2, &r);
	spin(300);
	ck_assert_uint_eq(kube_pending(k2), 1);
	kube_cancel(k2, a);
	spin(100);
	ck_assert_int_eq(g_unexpected, 0);
	ck_assert_uint_eq(loop_transfer_count(L), 0);
	/* kube_free with requests in flight frees them silently */
	kube_submit(k2, &r);
	kube_free(k2);
	/* the client still works afterwards */
	call(&x, KUBE_GET, "/version", NULL);
	ck_outcome(x, KUBE_OK, 200);
	res_release(&x);
	ck_assert_int_eq(g_unexpected, 0);
	client_stop();
	srv_stop();
}
END_TEST

/* ---- informers ---- */

/* A consumer: its view (name -> RV) and a log of what it was told. */
struct rec {
	json_t *view;       /* name -> rv */
	char log[8192];     /* "A:name:rv M:name:rv D:name:rv R:n " */
	int replaces;
	int resyncs;
	int synced;
	int errors;
	char last_error[512];
	uint64_t last_rv;
	bool rv_backwards;  /* an event RV not above the one before */
};

static void rec_log(struct rec *r, const char *fmt, const char *a,
		    const char *b)
{
	size_t n = strlen(r->log);

	snprintf(r->log + n, sizeof(r->log) - n, fmt, a, b);
}

static void rec_event(void *ud, enum kube_event_type t, json_t *obj)
{
	struct rec *r = ud;
	const char *name = JX_STR(obj, "metadata", "name");
	const char *rv = JX_STR(obj, "metadata", "resourceVersion");
	static const char *const tag[] = { "A", "M", "D" };
	size_t len = strlen(r->log);
	uint64_t n = strtoull(rv, NULL, 10);

	ck_assert_ptr_nonnull(name);
	ck_assert_ptr_nonnull(rv);
	if (n <= r->last_rv)
		r->rv_backwards = true;
	r->last_rv = n;
	snprintf(r->log + len, sizeof(r->log) - len, "%s:%s:%s ", tag[t],
		 name, rv);
	if (t == KUBE_DELETED)
		json_object_del(r->view, name);
	else
		json_object_set_new(r->view, name, json_string(rv));
	json_decref(obj);
}

static void rec_replace(void *ud, json_t *items, bool initial)
{
	struct rec *r = ud;
	json_t *it;
	size_t i;
	char n[32];

	ck_assert_refcount(items, 1);
	ck_assert(initial == (r->replaces == 0));
	r->replaces++;
	if (!initial)
		r->resyncs++;
	json_object_clear(r->view);
	json_array_foreach(items, i, it)
		json_object_set_new(r->view, JX_STR(it, "metadata", "name"),
				    json_string(JX_STR(it, "metadata",
						       "resourceVersion")));
	snprintf(n, sizeof(n), "%zu", json_array_size(items));
	rec_log(r, "R:%s%s ", n, "");
	r->last_rv = 0;
	json_decref(items);
}

static void rec_synced(void *ud)
{
	struct rec *r = ud;

	ck_assert_int_eq(r->replaces, 1);
	r->synced++;
}

static void rec_error(void *ud, const char *m)
{
	struct rec *r = ud;

	r->errors++;
	snprintf(r->last_error, sizeof(r->last_error), "%s", m);
}

static const struct kube_watch_ops rec_ops = {
	.event = rec_event, .replace = rec_replace, .synced = rec_synced,
	.error = rec_error,
};

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->view = json_object();
}

static void rec_release(struct rec *r)
{
	json_decref(r->view);
}

static bool has(const struct rec *r, const char *name)
{
	return json_object_get(r->view, name) != NULL;
}

START_TEST(informer_list_then_events)
{
	struct rec r;
	struct kube_watch_opts wo = { .path = CMS, .page_size = 2,
				      .ops = &rec_ops, .ud = &r };
	struct kube_watch *w;
	const struct kube_watch_stats *ws;
	char *rvs[3], *expect;

	srv_start(NULL);
	client_start(NULL);
	rec_init(&r);
	free(cm_create("default", "a", "1"));
	free(cm_create("default", "b", "1"));
	free(cm_create("default", "c", "1"));
	w = kube_watch_new(K, &wo);
	ck_assert(!kube_watch_has_synced(w));
	ck_assert_str_eq(kube_watch_rv(w), "");
	T_LOOP_UNTIL(L, r.synced, 10000);
	ws = kube_watch_stats(w);
	ck_assert(kube_watch_has_synced(w));
	ck_assert_uint_eq(ws->pages, 2);
	ck_assert_uint_eq(ws->lists, 1);
	ck_assert(has(&r, "a") && has(&r, "b") && has(&r, "c"));
	ck_assert_str_eq(r.log, "R:3 ");
	/* wait for the watch to be on the wire, then change things */
	T_LOOP_UNTIL(L, ws->watches == 1 && loop_transfer_count(L) == 1, 5000);
	spin(100);
	rvs[0] = cm_create("default", "d", "1");
	cm_patch("default", "a", "2");
	cm_delete("default", "b");
	T_LOOP_UNTIL(L, ws->events == 3, 10000);
	cm_patch("default", "d", "2");
	T_LOOP_UNTIL(L, ws->events == 4, 10000);
	ck_assert(!r.rv_backwards);
	rvs[1] = xstrdup(json_string_value(json_object_get(r.view, "a")));
	rvs[2] = xstrdup(json_string_value(json_object_get(r.view, "d")));
	expect = xasprintf("R:3 A:d:%s M:a:%s D:b:", rvs[0], rvs[1]);
	ck_assert_msg(!strncmp(r.log, expect, strlen(expect)), "log %s",
		      r.log);
	ck_assert_str_eq(kube_watch_rv(w), rvs[2]);
	ck_assert(!has(&r, "b"));
	ck_assert_uint_eq(ws->expired, 0);
	ck_assert_uint_eq(ws->failures, 0);
	ck_assert_int_eq(r.errors, 0);
	ck_assert_uint_ge(kube_stats_count(kube_stats(K), KUBE_LIST, 200), 2);
	free(expect);
	for (int i = 0; i < 3; i++)
		free(rvs[i]);
	kube_watch_free(w);
	ck_assert_uint_eq(kube_pending(K), 0);
	rec_release(&r);
	client_stop();
	srv_stop();
}
END_TEST

START_TEST(informer_bookmarks)
{
	struct rec r;
	struct kube_watch_opts wo = { .path = CMS, .timeout_min_s = 5,
				      .timeout_max_s = 5, .ops = &rec_ops,
				      .ud = &r };
	struct kube_watch *w;
	const struct kube_watch_stats *ws;
	uint64_t noise;
	char *rv;

	srv_start(NULL); /* bookmarks every 300 ms */
	client_start(NULL);
	rec_init(&r);
	w = kube_watch_new(K, &wo);
	ws = kube_watch_stats(w);
	T_LOOP_UNTIL(L, r.synced && ws->watches == 1, 10000);
	/* a change the watch does not show (another namespace) */
	rv = cm_create("kube-system", "noise", "1");
	noise = strtoull(rv, NULL, 10);
	free(rv);
	T_LOOP_UNTIL(L, ws->bookmarks >= 1 &&
		     strtoull(kube_watch_rv(w), NULL, 10) >= noise, 5000);
	ck_assert_uint_eq(ws->events, 0);
	ck_assert_str_eq(r.log, "R:0 ");
	kube_watch_free(w);
	rec_release(&r);
	client_stop();
	srv_stop();
}
END_TEST

START_TEST(informer_resumes_after_timeout)
{
	struct rec r;
	struct kube_watch_opts wo = { .path = CMS, .timeout_min_s = 1,
				      .timeout_max_s = 1, .ops = &rec_ops,
				      .ud = &r };
	struct kube_watch *w;
	const struct kube_watch_stats *ws;
	char name[16];

	srv_start(NULL);
	client_start(NULL);
	rec_init(&r);
	w = kube_watch_new(K, &wo);
	ws = kube_watch_stats(w);
	T_LOOP_UNTIL(L, r.synced, 10000);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		free(cm_create("default", name, "1"));
		spin(600);
	}
	T_LOOP_UNTIL(L, ws->events == 5, 10000);
	/* several watches, each from the last RV: no re-list, no loss */
	ck_assert_uint_ge(ws->watches, 3);
	ck_assert_uint_eq(ws->lists, 1);
	ck_assert_uint_eq(ws->expired, 0);
	ck_assert_uint_eq(ws->failures, 0);
	ck_assert(!r.rv_backwards);
	for (int i = 0; i < 5; i++) {
		char pat[16];

		snprintf(pat, sizeof(pat), "A:r%d:", i);
		ck_assert_msg(strstr(r.log, pat) != NULL, "%s", r.log);
		if (i)
			ck_assert(strstr(r.log, pat) > strstr(r.log, "A:r0:"));
	}
	kube_watch_free(w);
	rec_release(&r);
	client_stop();
	srv_stop();
}
END_TEST

/*
 * 410: the server keeps 4 events. While its HTTP front end is down (the
 * store stays), more than 4 changes happen, one of them deleting an
 * object the informer holds; its next watch, from the old RV, gets ERROR
 * 410, and the informer must re-list and hand over a resync without the
 * deleted object.
 */
START_TEST(informer_relists_on_410)
{
	struct srv_opts so = { .history = 4 };
	struct rec r;
	struct kube_watch_opts wo = { .path = CMS, .backoff_min_ms = 50,
				      .backoff_max_ms = 200, .ops = &rec_ops,
				      .ud = &r };
	struct http_opts ho = { .addr = "127.0.0.1",
				.max_body = (size_t)3 << 20 };
	struct err err = { "" };
	struct kube_watch *w;
	const struct kube_watch_stats *ws;

	srv_start(&so);
	client_start(NULL);
	rec_init(&r);
	w = kube_watch_new(K, &wo);
	ws = kube_watch_stats(w);
	T_LOOP_UNTIL(L, r.synced && ws->watches == 1, 10000);
	free(cm_create("default", "x1", "1"));
	T_LOOP_UNTIL(L, has(&r, "x1"), 5000);
	/* the front end goes (its watch streams end), the store stays */
	http_server_stop(S.http);
	cm_delete("default", "x1");
	free(cm_create("default", "x2", "1"));
	for (int i = 0; i < 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i);
		free(cm_create("kube-system", name, "1"));
	}
	ho.port = S.port;
	S.http = http_server_start(&ho, api_serve, S.api, &err);
	ck_assert_msg(S.http != NULL, "http: %s", err.msg);
	T_LOOP_UNTIL(L, r.resyncs == 1, 15000);
	ck_assert_uint_ge(ws->expired, 1);
	ck_assert_uint_eq(ws->lists, 2);
	ck_assert(!has(&r, "x1"));
	ck_assert(has(&r, "x2"));
	/* and it watches on from the new list */
	free(cm_create("default", "x3", "1"));
	T_LOOP_UNTIL(L, has(&r, "x3"), 5000);
	kube_watch_free(w);
	rec_release(&r);
	client_stop();
	srv_stop();
}
END_TEST

START_TEST(informer_survives_server_restart)
{
	char dir[] = "/tmp/cueue-kube-XXXXXX";
	struct srv_opts so = { .data_dir = dir };
	struct rec r;
	struct kube_watch_opts wo = { .path = CMS, .backoff_min_ms = 50,
				      .backoff_max_ms = 400, .ops = &rec_ops,
				      .ud = &r };
	struct kube_watch *w;
	const struct kube_watch_stats *ws;
	char *cmd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	srv_start(&so);
	client_start(NULL);
	rec_init(&r);
	w = kube_watch_new(K, &wo);
	ws = kube_watch_stats(w);
	T_LOOP_UNTIL(L, r.synced && ws->watches == 1, 10000);
	spin(100);
	free(cm_create("default", "a", "1"));
	T_LOOP_UNTIL(L, has(&r, "a"), 5000);
	so.port = S.port;
	srv_stop();
	/* the stream ends, then every reconnect is refused */
	T_LOOP_UNTIL(L, ws->failures >= 2, 10000);
	ck_assert_int_ge(r.errors, 1);
	ck_assert_ptr_nonnull(strstr(r.last_error, "watch: "));
	srv_start(&so);
	free(cm_create("default", "b", "1"));
	T_LOOP_UNTIL(L, has(&r, "b"), 10000);
	ck_assert(has(&r, "a"));
	ck_assert_uint_ge(ws->watches, 2);
	kube_watch_free(w);
	rec_release(&r);
	client_stop();
	srv_stop();
	cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

START_TEST(informer_event_ceiling)
{
	struct rec r;
	struct kube_watch_opts wo = { .path = CMS, .backoff_min_ms = 20,
				      .backoff_max_ms = 50,
				      .max_event_bytes = (size_t)1 << 20,
				      .ops = &rec_ops, .ud = &r };
	struct kube_watch *w;
	const struct kube_watch_stats *ws;

	fake_start(FAKE_BIG_EVENT);
	loop_start();
	K = client_for(F.url, NULL, NULL, NULL);
	rec_init(&r);
	w = kube_watch_new(K, &wo);
	ws = kube_watch_stats(w);
	/* the oversized event is refused; the informer re-lists */
	T_LOOP_UNTIL(L, ws->lists >= 2 && atomic_load(&F.watches) >= 2, 10000);
	ck_assert_uint_eq(ws->events, 0);
	ck_assert_uint_ge(ws->failures, 1);
	ck_assert_ptr_nonnull(strstr(r.last_error, "over 1048576 bytes"));
	ck_assert(!has(&r, "big"));
	kube_watch_free(w);
	rec_release(&r);
	client_stop();
	fake_stop();
}
END_TEST

/* Freeing an informer from another informer's event callback, while
 * both streams are live inside libcurl's callbacks. */
struct pair {
	struct rec r;
	struct kube_watch *other;
};

static void pair_event(void *ud, enum kube_event_type t, json_t *obj)
{
	struct pair *p = ud;

	rec_event(&p->r, t, obj);
	if (p->other) {
		kube_watch_free(p->other);
		p->other = NULL;
	}
}

static void pair_replace(void *ud, json_t *items, bool initial)
{
	struct pair *p = ud;

	rec_replace(&p->r, items, initial);
}

START_TEST(informer_freed_from_a_callback)
{
	static const struct kube_watch_ops ops = { .event = pair_event,
						   .replace = pair_replace };
	struct pair p;
	struct rec r2;
	struct kube_watch_opts wo = { .path = CMS, .ops = &ops, .ud = &p };
	struct kube_watch_opts wo2 = { .path = CMS, .ops = &rec_ops,
				       .ud = &r2 };
	struct kube_watch *w;

	srv_start(NULL);
	client_start(NULL);
	rec_init(&p.r);
	rec_init(&r2);
	w = kube_watch_new(K, &wo);
	p.other = kube_watch_new(K, &wo2);
	T_LOOP_UNTIL(L, r2.synced && kube_watch_stats(w)->watches == 1 &&
		     loop_transfer_count(L) == 2, 10000);
	spin(100);
	free(cm_create("default", "a", "1"));
	T_LOOP_UNTIL(L, has(&p.r, "a"), 5000);
	ck_assert_ptr_null(p.other);
	spin(200);
	ck_assert_uint_eq(loop_transfer_count(L), 1);
	kube_watch_free(w);
	rec_release(&p.r);
	rec_release(&r2);
	client_stop();
	srv_stop();
}
END_TEST

Suite *kube_suite(void)
{
	Suite *s = suite_create("kube");
	TCase *tc;

	tc = tcase_create("kubeconfig");
	tcase_add_test(tc, kubeconfig_inline_data);
	tcase_add_test(tc, kubeconfig_relative_files);
	tcase_add_test(tc, kubeconfig_insecure_and_parse);
	tcase_add_loop_test(tc, kubeconfig_errors, 0,
			    sizeof(bad_configs) / sizeof(bad_configs[0]));
	tcase_add_test(tc, kubeconfig_in_cluster_fake_dir);
	tcase_add_test(tc, kubeconfig_discover_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("rest");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, paths);
	tcase_add_test(tc, verbs_and_conflicts);
	tcase_add_test(tc, tls_credentials);
	tcase_add_test(tc, tls_small_answer_one_record);
	tcase_add_test(tc, tls_client_that_does_not_read);
	tcase_add_test(tc, cancel_in_every_state);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, rate_limit);
	tcase_add_test(tc, write_fence);
	tcase_add_test(tc, rate_limit_order);
	tcase_add_test(tc, retry_after_429);
	tcase_add_test(tc, retry_5xx_backoff_and_budget);
	tcase_add_test(tc, connection_refused);
	tcase_add_test(tc, answer_ceilings);
	suite_add_tcase(s, tc);

	tc = tcase_create("informer");
	tcase_set_timeout(tc, 40);
	tcase_add_test(tc, informer_list_then_events);
	tcase_add_test(tc, informer_bookmarks);
	tcase_add_test(tc, informer_resumes_after_timeout);
	tcase_add_test(tc, informer_relists_on_410);
	tcase_add_test(tc, informer_survives_server_restart);
	tcase_add_test(tc, informer_event_ceiling);
	tcase_add_test(tc, informer_freed_from_a_callback);
	suite_add_tcase(s, tc);
	return s;
}
