/*
 * Suite "certmgr": controller/certmgr.h, the internal certificate
 * management of kueue-api.md §15.2, against the in-process devserver
 * (plain HTTP, the CRDs of manifests/crds, manifests/00-namespace.yaml
 * and manifests/webhooks.yaml preloaded):
 *  - a missing Secret is created (kubernetes.io/tls, four keys), its CA
 *    injected into every webhook of both configurations and into the
 *    conversion of every CRD of manifests/crds (all six convert through
 *    the webhook), and the PEMs handed over once;
 *  - a restart reuses the Secret: nothing generated, nothing written;
 *  - a serving certificate inside the 90-day window is renewed with the
 *    CA kept (caBundles untouched); an expiring CA means a new CA and
 *    the bundles rewritten;
 *  - a CRD using Webhook conversion gets the bundle in
 *    spec.conversion.webhook.clientConfig.caBundle, the others are left
 *    alone;
 *  - deleting the Secret (the watch) brings a new one;
 *  - an existing, empty Secret (as manifests/manager.yaml creates it) is
 *    filled by a merge patch;
 *  - repairs: a webhook configuration's caBundle set to garbage or
 *    removed, a CRD's conversion caBundle removed or replaced, a webhook
 *    configuration deleted and created again without bundles (what an
 *    API server restarted from its manifests does) are put right by the
 *    target watches within seconds, with one patch each and no write
 *    after that; a writer that keeps putting another bundle back meets
 *    doubling delays, not a write loop;
 *  - replicas: two certmgrs (two clients, as two manager processes)
 *    started together against no Secret end with one Secret (one write;
 *    the other's POST lost with 409 and it took the winner's), both
 *    serving the same certificate, every bundle that Secret's CA, and
 *    nothing written afterwards; a CA rotation by one reaches the other
 *    through its Secret watch.
 *  - generation runs off the loop thread: with RSA keys the loop turns
 *    while the work runs, and a certmgr freed meanwhile leaves the
 *    work to be reaped (cancelled) by loop_free, nothing leaked.
 * Keys are ECDSA P-256 (certs.h) so generation costs microseconds, but
 * for those two tests.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "config/yamljson.h"
#include "controller/certmgr.h"
#include "controller/kube.h"
#include "controller/kubeconfig.h"
#include "controller/loop.h"
#include "inproc.h"
#include "suites.h"
#include "test/support/support.h"
#include "webhook/certs.h"

#define NS "cueue-system"
#define SVC "cueue-webhook-service"
#define VIS_SVC "cueue-visibility-server"
#define SECRET "cueue-webhook-server-cert"
#define MWC "cueue-mutating-webhook-configuration"
#define VWC "cueue-validating-webhook-configuration"

/* What one certmgr handed over (on_certs's ud). */
struct seen {
	int handed;
	char *last_cert;
};

static struct {
	struct certmgr *cm;
	int handed;
	char *last_cert;
	struct certmgr *cm2;  /* a second replica */
	struct kube *k2;      /* its own client */
	struct seen seen2;
} S;

static void setup(void)
{
	memset(&S, 0, sizeof(S));
	inp_start(&(struct inp_opts){ .manifests = true });
}

static void teardown(void)
{
	certmgr_free(S.cm);
	certmgr_free(S.cm2);
	kube_free(S.k2);
	inp_stop();
	free(S.last_cert);
	free(S.seen2.last_cert);
	memset(&S, 0, sizeof(S));
}

static int on_certs(void *ud, const struct certs *c)
{
	(void)ud;
	ck_assert_ptr_nonnull(c->cert_pem);
	ck_assert_ptr_nonnull(c->key_pem);
	S.handed++;
	free(S.last_cert);
	S.last_cert = xstrdup(c->cert_pem);
	return 0;
}

static void cm_start_keys(enum certs_key_type kt)
{
	struct certmgr_opts o = {
		.namespace = NS,
		.secret_name = SECRET,
		.service_name = SVC,
		.key_type = kt,
		.retry_ms = 100,
		.on_certs = on_certs,
	};

	S.cm = certmgr_new(inp_kube(), &o);
}

static void cm_start(void)
{
	cm_start_keys(CERTS_EC_P256);
}

static int on_certs2(void *ud, const struct certs *c)
{
	struct seen *w = ud;

	w->handed++;
	free(w->last_cert);
	w->last_cert = xstrdup(c->cert_pem);
	return 0;
}

/* A second certmgr on a client of its own, as another replica. */
static struct certmgr *cm2_start(const struct certmgr_opts *extra)
{
	struct kubeconfig kc = KUBECONFIG_INIT;
	struct kube_opts ko = { .qps = -1 };
	struct err err = { "" };
	struct certmgr_opts o = {
		.namespace = NS,
		.secret_name = SECRET,
		.service_name = SVC,
		.key_type = CERTS_EC_P256,
		.retry_ms = 100,
		.on_certs = on_certs2,
		.ud = &S.seen2,
	};

	if (extra) {
		o.ca_validity_s = extra->ca_validity_s;
		o.serving_validity_s = extra->serving_validity_s;
		o.lookahead_s = extra->lookahead_s;
	}
	kc.server = xstrdup(inp_url());
	S.k2 = kube_new(inp_loop(), &kc, &ko, &err);
	kubeconfig_release(&kc);
	ck_assert_msg(S.k2 != NULL, "kube_new: %s", err.msg);
	S.cm2 = certmgr_new(S.k2, &o);
	return S.cm2;
}

static void cm_stop(void)
{
	certmgr_free(S.cm);
	S.cm = NULL;
}

static json_t *get_secret(void)
{
	return inp_get("secrets", NS, SECRET);
}

/* Every webhook of configuration name has caBundle ca (NULL: none). */
static void assert_bundles(const char *resource, const char *name,
			   const char *ca)
{
	json_t *o = inp_get(resource, NULL, name);
	const json_t *hooks = json_object_get(o, "webhooks"), *h;
	size_t i;

	ck_assert_ptr_nonnull(o);
	ck_assert_uint_gt(json_array_size(hooks), 1);
	json_array_foreach(hooks, i, h) {
		const char *b = json_string_value(json_object_get(
			json_object_get(h, "clientConfig"), "caBundle"));

		if (!ca)
			ck_assert_ptr_null(b);
		else
			ck_assert_msg(b && !strcmp(b, ca), "%s %s[%zu]",
				      name, resource, i);
		/* the rest of the entry is untouched */
		ck_assert_ptr_nonnull(json_object_get(json_object_get(
			json_object_get(h, "clientConfig"), "service"),
			"path"));
	}
	json_decref(o);
}

/* The six Kueue CRDs, as manifests/crds names them. */
static const char *const crd_names[] = {
	"clusterqueues.kueue.x-k8s.io", "cohorts.kueue.x-k8s.io",
	"localqueues.kueue.x-k8s.io", "resourceflavors.kueue.x-k8s.io",
	"workloadpriorityclasses.kueue.x-k8s.io", "workloads.kueue.x-k8s.io",
};
#define NCRD_NAMES (sizeof(crd_names) / sizeof(crd_names[0]))

/* The caBundle of CRD name's conversion webhook (new; NULL: none),
 * checking that the rest of its clientConfig is untouched. */
static char *crd_bundle(const char *name)
{
	json_t *crd = inp_get("customresourcedefinitions", NULL, name);
	const json_t *cc = json_object_get(json_object_get(json_object_get(
		json_object_get(crd, "spec"), "conversion"), "webhook"),
		"clientConfig");
	const char *b = json_string_value(json_object_get(cc, "caBundle"));
	char *out = b ? xstrdup(b) : NULL;

	ck_assert_ptr_nonnull(crd);
	if (cc)
		ck_assert_str_eq(json_string_value(json_object_get(
			json_object_get(cc, "service"), "path")), "/convert");
	json_decref(crd);
	return out;
}

static char *secret_ca_bundle(void)
{
	json_t *s = get_secret();
	struct certs c = CERTS_INIT;
	struct err err = { "" };
	char *b;

	ck_assert_ptr_nonnull(s);
	ck_assert_msg(certs_from_secret_data(json_object_get(s, "data"), &c,
					     &err) == 0, "%s", err.msg);
	b = certs_ca_bundle(&c);
	certs_release(&c);
	json_decref(s);
	return b;
}

START_TEST(creates_secret_and_injects)
{
	json_t *s;
	char *ca;
	const struct certmgr_stats *st;

	ck_assert_ptr_null(get_secret());
	cm_start();
	ck_assert(!certmgr_ready(S.cm));
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	st = certmgr_stats(S.cm);
	ck_assert_uint_eq(st->generated, 1);
	ck_assert_uint_eq(st->secret_writes, 1);
	ck_assert_uint_eq(st->injections, 2 + NCRD_NAMES);
	ck_assert_int_eq(S.handed, 1);
	s = get_secret();
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(json_string_value(json_object_get(s, "type")),
			 "kubernetes.io/tls");
	ck_assert_uint_eq(json_object_size(json_object_get(s, "data")), 4);
	json_decref(s);
	ca = secret_ca_bundle();
	assert_bundles("mutatingwebhookconfigurations", MWC, ca);
	assert_bundles("validatingwebhookconfigurations", VWC, ca);
	for (size_t i = 0; i < NCRD_NAMES; i++) {
		char *b = crd_bundle(crd_names[i]);

		ck_assert_msg(b && !strcmp(b, ca), "%s: caBundle",
			      crd_names[i]);
		free(b);
	}
	ck_assert_str_eq(certmgr_certs(S.cm)->cert_pem, S.last_cert);
	/* valid for the Service's name */
	ck_assert_int_eq(certs_check(certmgr_certs(S.cm), SVC "." NS ".svc",
				     time(NULL), 0, NULL), CERTS_OK);
	free(ca);
}
END_TEST

/* The RSA generation (tens of milliseconds at best) runs on a worker:
 * loop iterations return while it is running. */
START_TEST(rsa_generation_off_the_loop)
{
	bool seen_running = false;
	struct err err = { "" };
	int64_t t0 = t_mono_ms();

	cm_start_keys(CERTS_RSA_2048);
	while (!certmgr_ready(S.cm)) {
		ck_assert_int_lt(t_mono_ms() - t0, 60000);
		ck_assert_int_eq(loop_run_once(inp_loop(), 20, &err), 0);
		if (loop_work_running(inp_loop()))
			seen_running = true;
	}
	ck_assert(seen_running);
	ck_assert_uint_eq(certmgr_stats(S.cm)->generated, 1);
	ck_assert_int_eq(S.handed, 1);
	ck_assert_int_eq(certs_check(certmgr_certs(S.cm), SVC "." NS ".svc",
				     time(NULL), 0, NULL), CERTS_OK);
}
END_TEST

/* Freed while its generation runs: the work's end is cancelled. */
START_TEST(freed_while_generating)
{

	cm_start_keys(CERTS_RSA_2048);
	WAIT_FOR(loop_work_running(inp_loop()) > 0, 10000);
	certmgr_free(S.cm);
	S.cm = NULL;
	inp_spin(50);
	/* nothing was written, nothing handed over */
	ck_assert_int_eq(S.handed, 0);
	/* teardown's inp_stop frees the loop, which reaps the work */
}
END_TEST

START_TEST(restart_reuses_secret)
{
	char *cert, *rv;
	json_t *s;
	const struct certmgr_stats *st;

	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	cert = xstrdup(S.last_cert);
	s = get_secret();
	rv = xstrdup(json_string_value(json_object_get(
		json_object_get(s, "metadata"), "resourceVersion")));
	json_decref(s);
	cm_stop();

	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	st = certmgr_stats(S.cm);
	ck_assert_uint_eq(st->generated, 0);
	ck_assert_uint_eq(st->renewed, 0);
	ck_assert_uint_eq(st->secret_writes, 0);
	ck_assert_uint_eq(st->injections, 0);
	ck_assert_str_eq(S.last_cert, cert);
	s = get_secret();
	ck_assert_str_eq(json_string_value(json_object_get(
		json_object_get(s, "metadata"), "resourceVersion")), rv);
	json_decref(s);
	free(cert);
	free(rv);
}
END_TEST

/* Puts certificates made at now - age_days (serving valid serving_days,
 * CA ca_days) into the Secret. */
static void plant_secret(int64_t age_days, int64_t serving_days,
			 int64_t ca_days, struct certs *out)
{
	/* the visibility Service's name too, as certmgr makes them (a
	 * certificate without it is renewed) */
	static const char *const vis[] = { VIS_SVC "." NS ".svc", NULL };
	struct certs_opts co = {
		.service = SVC, .namespace = NS, .key_type = CERTS_EC_P256,
		.extra_dns = vis,
		.now_s = time(NULL) - age_days * 86400,
		.serving_validity_s = serving_days * 86400,
		.ca_validity_s = ca_days * 86400,
	};
	struct err err = { "" };
	struct api_ref r = inp_ref("secrets", NS, NULL);
	struct api_status st = API_STATUS_INIT;
	json_t *obj;

	ck_assert_msg(certs_generate(&co, out, &err) == 0, "%s", err.msg);
	obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:o}", "apiVersion",
			"v1", "kind", "Secret", "metadata", "name", SECRET,
			"namespace", NS, "type", "kubernetes.io/tls", "data",
			certs_to_secret_data(out));
	ck_assert_msg(api_internal_create(inp_api(), &r, obj, NULL, &st) == 0,
		      "%s", st.message);
	status_release(&st);
	json_decref(obj);
}

START_TEST(renews_serving_keeps_ca)
{
	struct certs old = CERTS_INIT;
	char *ca;

	/* serving certificate with 60 days left: inside the window */
	plant_secret(305, 365, 3650, &old);
	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->renewed, 1);
	ck_assert_uint_eq(certmgr_stats(S.cm)->generated, 0);
	ck_assert_uint_eq(certmgr_stats(S.cm)->secret_writes, 1);
	ck_assert_str_ne(certmgr_certs(S.cm)->cert_pem, old.cert_pem);
	ck_assert_str_eq(certmgr_certs(S.cm)->ca_pem, old.ca_pem);
	ca = certs_ca_bundle(&old);
	assert_bundles("mutatingwebhookconfigurations", MWC, ca);
	free(ca);
	ca = secret_ca_bundle();
	assert_bundles("validatingwebhookconfigurations", VWC, ca);
	free(ca);
	certs_release(&old);
}
END_TEST

START_TEST(expiring_ca_regenerates)
{
	struct certs old = CERTS_INIT;
	char *ca;

	plant_secret(1, 60, 80, &old);
	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->generated, 1);
	ck_assert_str_ne(certmgr_certs(S.cm)->ca_pem, old.ca_pem);
	ca = secret_ca_bundle();
	assert_bundles("mutatingwebhookconfigurations", MWC, ca);
	assert_bundles("validatingwebhookconfigurations", VWC, ca);
	free(ca);
	certs_release(&old);
}
END_TEST

/* Only CRDs whose conversion strategy is Webhook get the bundle: one
 * switched to None (its webhook stanza dropped) is left alone, a stale
 * bundle is replaced (restart_reuses_secret: a pass with every bundle in
 * place writes nothing). */
START_TEST(crd_conversion_bundle)
{
	static const char r0_name[] = "workloadpriorityclasses.kueue.x-k8s.io";
	json_t *none = t_json("{\"spec\":{\"conversion\":{\"strategy\":"
			      "\"None\",\"webhook\":null}}}");
	json_t *stale = t_json("{\"spec\":{\"conversion\":{\"webhook\":"
			       "{\"clientConfig\":{\"caBundle\":"
			       "\"c3RhbGU=\"}}}}}");
	char *ca, *b;

	inp_patch("customresourcedefinitions", NULL, r0_name, NULL, none);
	inp_patch("customresourcedefinitions", NULL, "cohorts.kueue.x-k8s.io",
		  NULL, stale);
	json_decref(none);
	json_decref(stale);
	b = crd_bundle("cohorts.kueue.x-k8s.io");
	ck_assert_str_eq(b, "c3RhbGU=");
	free(b);
	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->injections, 2 + NCRD_NAMES - 1);
	ca = secret_ca_bundle();
	for (size_t i = 0; i < NCRD_NAMES; i++) {
		b = crd_bundle(crd_names[i]);
		if (!strcmp(crd_names[i], r0_name))
			ck_assert_ptr_null(b);
		else
			ck_assert_msg(b && !strcmp(b, ca), "%s", crd_names[i]);
		free(b);
	}
	free(ca);
}
END_TEST

START_TEST(deleted_secret_comes_back)
{
	json_t *s;

	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	WAIT_FOR(certmgr_stats(S.cm)->passes >= 1, 5000);
	inp_del("secrets", NS, SECRET, NULL);
	WAIT_FOR((s = get_secret()) != NULL || 0, 10000);
	json_decref(s);
	WAIT_FOR(certmgr_stats(S.cm)->passes >= 2, 5000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->generated, 2);
	ck_assert_int_eq(S.handed, 2);
}
END_TEST

START_TEST(empty_secret_is_filled)
{
	char *ca;

	inp_create("secrets", NS,
		   "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
		   "\"metadata\":{\"name\":\"" SECRET "\","
		   "\"namespace\":\"" NS "\"}}");
	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->secret_writes, 1);
	ca = secret_ca_bundle();
	assert_bundles("mutatingwebhookconfigurations", MWC, ca);
	free(ca);
}
END_TEST

START_TEST(config_names)
{
	char *m = certmgr_webhook_config_name("kueue-webhook-service", true);
	char *v = certmgr_webhook_config_name("cueue-webhook-service", false);
	char *o = certmgr_webhook_config_name("other", true);

	ck_assert_str_eq(m, "kueue-mutating-webhook-configuration");
	ck_assert_str_eq(v, "cueue-validating-webhook-configuration");
	ck_assert_str_eq(o, "other-mutating-webhook-configuration");
	free(m);
	free(v);
	free(o);
}
END_TEST

/* ---- repairs ---- */

/* Does every webhook of the configuration carry ca? */
static bool bundles_are(const char *resource, const char *name,
			const char *ca)
{
	json_t *o = inp_get(resource, NULL, name);
	const json_t *h;
	size_t i;
	bool all = o && json_array_size(json_object_get(o, "webhooks")) > 0;

	json_array_foreach(json_object_get(o, "webhooks"), i, h) {
		const char *b = json_string_value(json_object_get(
			json_object_get(h, "clientConfig"), "caBundle"));

		all &= b && !strcmp(b, ca);
	}
	json_decref(o);
	return all;
}

static bool crd_bundle_is(const char *name, const char *ca)
{
	char *b = crd_bundle(name);
	bool same = b && !strcmp(b, ca);

	free(b);
	return same;
}

/* Sets webhooks[i].clientConfig.caBundle of a configuration to value
 * (NULL: removes it), for i in [from, to], in one JSON patch, as another
 * writer would. */
static void set_hook_bundles(const char *resource, const char *name,
			     size_t from, size_t to, const char *value)
{
	struct api_ref r = inp_ref(resource, NULL, name);
	struct api_status st = API_STATUS_INIT;
	json_t *ops = json_array();

	for (size_t i = from; i <= to; i++) {
		char path[96];

		snprintf(path, sizeof(path),
			 "/webhooks/%zu/clientConfig/caBundle", i);
		json_array_append_new(ops, value
			? json_pack("{s:s, s:s, s:s}", "op", "replace", "path",
				    path, "value", value)
			: json_pack("{s:s, s:s}", "op", "remove", "path",
				    path));
	}
	ck_assert_msg(api_internal_patch(inp_api(), &r, NULL, API_PATCH_JSON,
					 ops, NULL, &st) == 0, "%s",
		      st.message);
	status_release(&st);
	json_decref(ops);
}

static void set_hook_bundle(const char *resource, const char *name,
			    size_t i, const char *value)
{
	set_hook_bundles(resource, name, i, i, value);
}

/* Injections and repairs stay where they are for a second and a half:
 * nothing writes in a loop. */
static void assert_quiet(struct certmgr *cm)
{
	uint64_t inj = certmgr_stats(cm)->injections;
	uint64_t rep = certmgr_stats(cm)->repairs;
	uint64_t sw = certmgr_stats(cm)->secret_writes;

	inp_spin(1500);
	ck_assert_uint_eq(certmgr_stats(cm)->injections, inj);
	ck_assert_uint_eq(certmgr_stats(cm)->repairs, rep);
	ck_assert_uint_eq(certmgr_stats(cm)->secret_writes, sw);
}

START_TEST(repairs_webhook_bundles)
{
	char *ca;
	uint64_t inj;

	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ca = secret_ca_bundle();
	inj = certmgr_stats(S.cm)->injections;
	ck_assert_uint_eq(certmgr_stats(S.cm)->repairs, 0);

	/* garbage in one entry: repaired with one patch */
	set_hook_bundle("mutatingwebhookconfigurations", MWC, 0,
			"Z2FyYmFnZQ==");
	ck_assert(!bundles_are("mutatingwebhookconfigurations", MWC, ca));
	WAIT_FOR(bundles_are("mutatingwebhookconfigurations", MWC, ca), 10000);
	WAIT_FOR(certmgr_stats(S.cm)->passes >= 2, 5000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->injections, inj + 1);
	ck_assert_uint_ge(certmgr_stats(S.cm)->repairs, 1);
	assert_quiet(S.cm);

	/* removed from two entries of the other: one patch again */
	set_hook_bundles("validatingwebhookconfigurations", VWC, 0, 1, NULL);
	WAIT_FOR(bundles_are("validatingwebhookconfigurations", VWC, ca),
		 10000);
	WAIT_FOR(certmgr_stats(S.cm)->passes >= 3, 5000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->injections, inj + 2);
	assert_quiet(S.cm);
	assert_bundles("mutatingwebhookconfigurations", MWC, ca);
	free(ca);
}
END_TEST

START_TEST(repairs_crd_bundles)
{
	json_t *gone = t_json("{\"spec\":{\"conversion\":{\"webhook\":"
			      "{\"clientConfig\":{\"caBundle\":null}}}}}");
	json_t *other = t_json("{\"spec\":{\"conversion\":{\"webhook\":"
			       "{\"clientConfig\":{\"caBundle\":"
			       "\"b3RoZXI=\"}}}}}");
	char *ca;
	uint64_t inj;

	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ca = secret_ca_bundle();
	inj = certmgr_stats(S.cm)->injections;
	inp_patch("customresourcedefinitions", NULL, "workloads.kueue.x-k8s.io",
		  NULL, gone);
	inp_patch("customresourcedefinitions", NULL,
		  "clusterqueues.kueue.x-k8s.io", NULL, other);
	ck_assert(!crd_bundle_is("workloads.kueue.x-k8s.io", ca));
	WAIT_FOR(crd_bundle_is("workloads.kueue.x-k8s.io", ca) &&
		 crd_bundle_is("clusterqueues.kueue.x-k8s.io", ca), 10000);
	inp_spin(300);
	ck_assert_uint_eq(certmgr_stats(S.cm)->injections, inj + 2);
	assert_quiet(S.cm);
	for (size_t i = 0; i < NCRD_NAMES; i++)
		ck_assert_msg(crd_bundle_is(crd_names[i], ca), "%s",
			      crd_names[i]);
	json_decref(gone);
	json_decref(other);
	free(ca);
}
END_TEST

/* An API server restarted from its manifests: the configuration comes
 * back without bundles (deleted and created again). */
START_TEST(repairs_recreated_config)
{
	char *path = t_src_path("manifests/webhooks.yaml");
	json_t *docs = NULL;
	struct err err = { "" };
	char *ca;
	size_t i;
	json_t *d;

	ck_assert_msg(yamljson_load_file(path, &docs, &err) == 0, "%s",
		      err.msg);
	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ca = secret_ca_bundle();
	inp_del("mutatingwebhookconfigurations", NULL, MWC, NULL);
	json_array_foreach(docs, i, d) {
		struct api_ref r;
		struct api_status st = API_STATUS_INIT;

		if (strcmp(json_string_value(json_object_get(d, "kind")),
			   "MutatingWebhookConfiguration"))
			continue;
		r = inp_ref("mutatingwebhookconfigurations", NULL, NULL);
		ck_assert_msg(api_internal_create(inp_api(), &r, d, NULL,
						  &st) == 0, "%s", st.message);
		status_release(&st);
	}
	assert_bundles("mutatingwebhookconfigurations", MWC, NULL);
	WAIT_FOR(bundles_are("mutatingwebhookconfigurations", MWC, ca), 10000);
	inp_spin(300);
	assert_quiet(S.cm);
	json_decref(docs);
	free(path);
	free(ca);
}
END_TEST

/* Another writer puts its own bundle back each time ours lands (a
 * second manager with another Secret): each repair waits twice as long
 * as the one before (200, 400, 800, 1600 ms), instead of answering each
 * write at once. Timers never fire early, so the four repairs cannot
 * land in less than three seconds. */
START_TEST(fighting_writer_backs_off)
{
	char *ca;
	int64_t t0;
	uint64_t passes;

	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ca = secret_ca_bundle();
	passes = certmgr_stats(S.cm)->passes;
	t0 = t_mono_ms();
	for (int i = 0; i < 4; i++) {
		set_hook_bundle("mutatingwebhookconfigurations", MWC, 0,
				"b3RoZXI=");
		WAIT_FOR(bundles_are("mutatingwebhookconfigurations", MWC, ca),
			 40000);
	}
	ck_assert_int_ge(t_mono_ms() - t0, 200 + 400 + 800 + 1600);
	ck_assert_uint_eq(certmgr_stats(S.cm)->repairs, 4);
	/* each repaired by a pass of its own (no other pass came between) */
	WAIT_FOR(certmgr_stats(S.cm)->passes >= passes + 4, 5000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->passes, passes + 4);
	free(ca);
}
END_TEST

/* ---- replicas ---- */

static char *secret_rv(void)
{
	json_t *s = get_secret();
	char *rv;

	ck_assert_ptr_nonnull(s);
	rv = xstrdup(json_string_value(json_object_get(
		json_object_get(s, "metadata"), "resourceVersion")));
	json_decref(s);
	return rv;
}

static bool serve_ca_of_secret(const struct certmgr *cm, const char *ca)
{
	const struct certs *c = certmgr_certs(cm);
	char *b = c ? certs_ca_bundle(c) : NULL;
	bool same = b && !strcmp(b, ca);

	free(b);
	return same;
}

START_TEST(replicas_converge)
{
	const struct certmgr_stats *a, *b;
	char *ca, *rv;

	/* both start in the same loop turn: each GETs no Secret */
	cm_start();
	cm2_start(NULL);
	WAIT_FOR(certmgr_ready(S.cm) && certmgr_ready(S.cm2), 10000);
	a = certmgr_stats(S.cm);
	b = certmgr_stats(S.cm2);
	/* one Secret, written once; the loser (if both generated) took the
	 * winner's after its 409 */
	ck_assert_uint_eq(a->secret_writes + b->secret_writes, 1);
	ck_assert_uint_eq(a->generated + b->generated,
			  1 + a->conflicts + b->conflicts);
	ck_assert_int_eq(S.handed, 1);
	ck_assert_int_eq(S.seen2.handed, 1);
	ck_assert_str_eq(S.last_cert, S.seen2.last_cert);
	ca = secret_ca_bundle();
	ck_assert(serve_ca_of_secret(S.cm, ca));
	ck_assert(serve_ca_of_secret(S.cm2, ca));
	assert_bundles("mutatingwebhookconfigurations", MWC, ca);
	assert_bundles("validatingwebhookconfigurations", VWC, ca);
	for (size_t i = 0; i < NCRD_NAMES; i++)
		ck_assert_msg(crd_bundle_is(crd_names[i], ca), "%s",
			      crd_names[i]);
	/* and nobody writes afterwards */
	rv = secret_rv();
	assert_quiet(S.cm);
	assert_quiet(S.cm2);
	{
		char *rv2 = secret_rv();

		ck_assert_str_eq(rv, rv2);
		free(rv2);
	}
	/* a repair with two replicas: both see it, the bundle is the same
	 * Secret's, so they do not fight */
	set_hook_bundle("mutatingwebhookconfigurations", MWC, 1, NULL);
	WAIT_FOR(bundles_are("mutatingwebhookconfigurations", MWC, ca), 10000);
	inp_spin(300);
	assert_quiet(S.cm);
	assert_quiet(S.cm2);
	free(rv);
	free(ca);
}
END_TEST

/* A CA within its renewal window is replaced, and the Secret's ca.crt
 * (so every bundle) holds the new CA first and the old one after it,
 * while certificates the old one signed may still be served. */
START_TEST(ca_rotation_keeps_previous)
{
	struct certs old = CERTS_INIT, now = CERTS_INIT;
	struct err err = { "" };
	json_t *s;
	char *ca;
	const char *at;

	plant_secret(1, 60, 80, &old);
	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->generated, 1);
	s = get_secret();
	ck_assert_int_eq(certs_from_secret_data(json_object_get(s, "data"),
						&now, &err), 0);
	json_decref(s);
	ck_assert_uint_eq(certs_ca_count(&now), 2);
	at = strstr(now.ca_pem, old.ca_pem);
	ck_assert_ptr_nonnull(at);
	ck_assert_ptr_ne(at, now.ca_pem);
	ck_assert_str_eq(certmgr_certs(S.cm)->ca_pem, now.ca_pem);
	ck_assert_int_eq(certs_check(&now, SVC "." NS ".svc", time(NULL), 0,
				     NULL), CERTS_OK);
	ca = secret_ca_bundle();
	assert_bundles("mutatingwebhookconfigurations", MWC, ca);
	assert_bundles("validatingwebhookconfigurations", VWC, ca);
	free(ca);
	certs_release(&now);
	certs_release(&old);
}
END_TEST

/* One replica rotates the CA; the other follows through its Secret
 * watch (its own lookahead of a day would not have rotated it) and
 * serves the same certificate, without generating anything. */
START_TEST(replica_follows_ca_rotation)
{
	struct certs old = CERTS_INIT;
	char *ca;

	plant_secret(1, 60, 80, &old);
	cm2_start(&(struct certmgr_opts){ .lookahead_s = 86400 });
	WAIT_FOR(certmgr_ready(S.cm2), 10000);
	ck_assert_uint_eq(certmgr_stats(S.cm2)->generated, 0);
	ck_assert_int_eq(S.seen2.handed, 1);
	ck_assert_str_eq(S.seen2.last_cert, old.cert_pem);
	cm_start();
	WAIT_FOR(certmgr_ready(S.cm), 10000);
	ck_assert_uint_eq(certmgr_stats(S.cm)->generated, 1);
	WAIT_FOR(S.seen2.handed == 2, 10000);
	ck_assert_str_eq(S.seen2.last_cert, S.last_cert);
	ck_assert_uint_eq(certmgr_stats(S.cm2)->generated, 0);
	ck_assert_uint_eq(certmgr_stats(S.cm2)->secret_writes, 0);
	ca = secret_ca_bundle();
	ck_assert(serve_ca_of_secret(S.cm2, ca));
	assert_bundles("validatingwebhookconfigurations", VWC, ca);
	free(ca);
	certs_release(&old);
}
END_TEST

Suite *certmgr_suite(void)
{
	Suite *s = suite_create("certmgr");
	TCase *tc = tcase_create("secret");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, creates_secret_and_injects);
	tcase_add_test(tc, restart_reuses_secret);
	tcase_add_test(tc, renews_serving_keeps_ca);
	tcase_add_test(tc, expiring_ca_regenerates);
	tcase_add_test(tc, crd_conversion_bundle);
	tcase_add_test(tc, deleted_secret_comes_back);
	tcase_add_test(tc, empty_secret_is_filled);
	tcase_add_test(tc, rsa_generation_off_the_loop);
	tcase_add_test(tc, freed_while_generating);
	suite_add_tcase(s, tc);

	tc = tcase_create("repairs");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, repairs_webhook_bundles);
	tcase_add_test(tc, repairs_crd_bundles);
	tcase_add_test(tc, repairs_recreated_config);
	tcase_add_test(tc, fighting_writer_backs_off);
	suite_add_tcase(s, tc);

	tc = tcase_create("replicas");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, replicas_converge);
	tcase_add_test(tc, ca_rotation_keeps_previous);
	tcase_add_test(tc, replica_follows_ca_rotation);
	suite_add_tcase(s, tc);

	tc = tcase_create("names");
	tcase_add_test(tc, config_names);
	suite_add_tcase(s, tc);
	return s;
}
