/*
 * Suite "config": the manager's Configuration file (config/config.h).
 * Every default of kueue-api.md §13 per API version, the shipped file,
 * documentation-shaped samples of both versions, each class of error with
 * its exact line and column, Go's durations and quantities, feature gates,
 * keys of the other version, the managedJobsNamespaceSelector rule, the
 * size limit and malformed YAML. Fixtures: test/fixtures/config/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "config/config.h"
#include "config/config_int.h"
#include "model/selector.h"
#include "suites.h"
#include "test/support/support.h"

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))
#define V1 "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
#define V2 "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"

/* No service-account file: the namespace default is kueue-system. */
static const struct config_opts no_sa = { "", "t.yaml" };

/* Reads test/fixtures/config/<name> into a new buffer. */
static char *fixture(const char *name, size_t *len)
{
	char *rel = xasprintf("test/fixtures/config/%s", name);
	char *path = t_src_path(rel);
	FILE *f = fopen(path, "rb");
	char *buf = xmalloc(CONFIG_MAX_BYTES + 2);

	ck_assert_msg(f != NULL, "cannot open %s", path);
	*len = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
	buf[*len] = '\0';
	fclose(f);
	free(path);
	free(rel);
	return buf;
}

/* Loads text as "t.yaml"; every problem lands in fe. */
static int load(const char *text, struct config *c, struct field_errors *fe,
		struct err *e)
{
	return config_load_string2(text, strlen(text), &no_sa, c, fe, e);
}

/* Loads text that must be clean. */
static void load_ok(const char *text, struct config *c)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct err e = { "" };
	int rc = load(text, c, &fe, &e);

	ck_assert_msg(rc == 0, "load failed: %s", t_fe_text(&fe));
	field_errors_release(&fe);
}

/* Loads text that must fail with exactly the lines want[0..n). */
static void load_fails(const char *text, const char *const *want, size_t n)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct err e = { "" };
	struct config c;

	ck_assert_int_eq(load(text, &c, &fe, &e), -1);
	for (size_t i = 0; i < fe.n && i < n; i++)
		ck_assert_str_eq(fe.v[i].text, want[i]);
	ck_assert_msg(fe.n == n, "%zu problems, want %zu: %s", fe.n, n,
		      t_fe_text(&fe));
	ck_assert_str_eq(c.namespace ? "set" : "NULL", "NULL");
	field_errors_release(&fe);
}

/* The one problem of a failing load, as its full line. */
static void load_fails1(const char *text, const char *want)
{
	load_fails(text, &want, 1);
}

static char *sel_string(const struct config_selector *s)
{
	ck_assert(s->set);
	return label_selector_string(&s->sel);
}

#define ck_assert_sel(s, want) do { \
		char *str_ = sel_string(s); \
		ck_assert_str_eq(str_, want); \
		free(str_); \
	} while (0)

/* ------------------------------------------------------------------ */
/* defaults */

/* What both versions share: every §13.1 default but the five below. */
static void assert_common_defaults(const struct config *c)
{
	ck_assert_str_eq(c->namespace, "kueue-system");
	ck_assert(!c->manage_jobs_without_queue_name);
	ck_assert_sel(&c->managed_jobs_ns_selector,
		      "kubernetes.io/metadata.name notin "
		      "(kube-system,kueue-system)");
	ck_assert_uint_eq(c->feature_gates.n, 0);
	ck_assert_str_eq(c->pprof_bind_address, "");
	ck_assert_int_eq(c->webhook_port, 9443);
	ck_assert_str_eq(c->webhook_host, "");
	ck_assert_str_eq(c->webhook_cert_dir,
			 "/tmp/k8s-webhook-server/serving-certs");
	ck_assert(c->le_leader_elect);
	ck_assert_int_eq(c->le_lease_duration_ms, 15000);
	ck_assert_int_eq(c->le_renew_deadline_ms, 10000);
	ck_assert_int_eq(c->le_retry_period_ms, 2000);
	ck_assert_str_eq(c->le_resource_lock, "leases");
	ck_assert_str_eq(c->le_resource_name, "c1f6bfd2.kueue.x-k8s.io");
	ck_assert_str_eq(c->le_resource_namespace, "");
	ck_assert_str_eq(c->metrics_bind_address, ":8443");
	ck_assert(!c->metrics_enable_cq_resources);
	ck_assert(!c->metrics_lq_selector.set);
	ck_assert_uint_eq(c->metrics_custom_labels.n, 0);
	ck_assert_str_eq(c->health_probe_bind_address, ":8081");
	ck_assert_str_eq(c->health_readiness_endpoint, "readyz");
	ck_assert_str_eq(c->health_liveness_endpoint, "healthz");
	ck_assert_uint_eq(c->controller_gk_concurrency.n, 0);
	ck_assert_int_eq(c->controller_cache_sync_timeout_ms, 120000);
	ck_assert(c->icm_enable);
	ck_assert_str_eq(c->icm_webhook_service_name, "kueue-webhook-service");
	ck_assert_str_eq(c->icm_webhook_secret_name,
			 "kueue-webhook-server-cert");
	ck_assert_int_eq(c->wfpr_requeue_timestamp, CONFIG_REQUEUE_EVICTION);
	ck_assert_int_eq(c->wfpr_backoff_limit_count, CONFIG_UNSET);
	ck_assert_int_eq(c->wfpr_backoff_base_seconds, 60);
	ck_assert_int_eq(c->wfpr_backoff_max_seconds, 3600);
	ck_assert_uint_eq(c->int_frameworks.n, 1);
	ck_assert_str_eq(c->int_frameworks.v[0], "batch/job");
	ck_assert_uint_eq(c->int_external_frameworks.n, 0);
	ck_assert_uint_eq(c->int_label_keys_to_copy.n, 0);
	ck_assert(!c->int_pod_ns_selector.set);
	ck_assert(!c->int_pod_selector.set);
	ck_assert_int_eq(c->qv_max_count, 10);
	ck_assert_int_eq(c->qv_update_interval_seconds, 5);
	ck_assert_int_eq(c->mk_gc_interval_ms, 60000);
	ck_assert_str_eq(c->mk_origin, "multikueue");
	ck_assert_int_eq(c->mk_worker_lost_timeout_ms, 900000);
	ck_assert_str_eq(c->mk_dispatcher_name,
			 "kueue.x-k8s.io/multikueue-dispatcher-all-at-once");
	ck_assert_uint_eq(c->mk_external_frameworks.n, 0);
	ck_assert_int_eq(c->mk_incremental_step_size, 3);
	ck_assert_uint_eq(c->mk_credentials_providers.n, 0);
	ck_assert(!c->fs_enable);
	ck_assert_uint_eq(c->fs_preemption_strategies.n, 0);
	ck_assert(!c->afs_enable);
	ck_assert_int_eq(c->afs_usage_half_life_ms, 0);
	ck_assert_int_eq(c->afs_usage_sampling_ms, 300000);
	ck_assert_uint_eq(c->afs_resource_weights.n, 0);
	ck_assert_uint_eq(c->res_exclude_prefixes.n, 0);
	ck_assert_uint_eq(c->res_transformations.n, 0);
	ck_assert_uint_eq(c->res_device_class_mappings.n, 0);
	ck_assert_int_eq(c->res_quota_check, CONFIG_QUOTA_BLOCK_UNDECLARED);
	ck_assert_int_eq(c->orp_after_finished_ms, CONFIG_UNSET);
	ck_assert_int_eq(c->orp_after_deactivated_ms, CONFIG_UNSET);
	ck_assert_int_eq(c->tls_min_version, CONFIG_TLS_DEFAULT);
	ck_assert_uint_eq(c->tls_cipher_suites.n, 0);
	ck_assert_uint_eq(c->tls_curve_preferences.n, 0);
	ck_assert_str_eq(c->vis_bind_address, "");
	ck_assert_int_eq(c->vis_bind_port, 8082);
}

static void assert_v1beta1_defaults(const struct config *c)
{
	ck_assert_int_eq(c->api, CONFIG_API_V1BETA1);
	assert_common_defaults(c);
	ck_assert(!c->metrics_lq_enable);
	ck_assert(c->client_qps == 20);
	ck_assert_int_eq(c->client_burst, 30);
	ck_assert(!c->wfpr_enable);
	ck_assert_int_eq(c->wfpr_timeout_ms, 5 * 60000);
	ck_assert(!c->wfpr_block_admission);
	ck_assert_int_eq(c->wfpr_recovery_timeout_ms, CONFIG_UNSET);
}

static void assert_v1beta2_defaults(const struct config *c)
{
	ck_assert_int_eq(c->api, CONFIG_API_V1BETA2);
	assert_common_defaults(c);
	ck_assert(c->metrics_lq_enable);
	ck_assert(c->client_qps == 300);
	ck_assert_int_eq(c->client_burst, 500);
	ck_assert(c->wfpr_enable);
	ck_assert_int_eq(c->wfpr_timeout_ms, 30 * 60000);
	ck_assert(!c->wfpr_block_admission);
	ck_assert_int_eq(c->wfpr_recovery_timeout_ms, 30 * 60000);
}

START_TEST(defaults_v1beta1)
{
	struct config c;
	struct field_errors fe = FIELD_ERRORS_INIT;

	config_defaults(&c, CONFIG_API_V1BETA1, &no_sa);
	assert_v1beta1_defaults(&c);
	ck_assert_int_eq(config_validate(&c, &fe), 0);
	config_release(&c);
	/* an empty file of the version is the same */
	load_ok(V1, &c);
	assert_v1beta1_defaults(&c);
	config_release(&c);
	config_release(&c); /* zeroed: a no-op */
}
END_TEST

START_TEST(defaults_v1beta2)
{
	struct config c;
	struct field_errors fe = FIELD_ERRORS_INIT;

	config_defaults(&c, CONFIG_API_V1BETA2, &no_sa);
	assert_v1beta2_defaults(&c);
	ck_assert_int_eq(config_validate(&c, &fe), 0);
	config_release(&c);
	load_ok(V2, &c);
	assert_v1beta2_defaults(&c);
	config_release(&c);
}
END_TEST

/* The namespace comes from the service-account file, trimmed, and the
 * default selector names it. */
START_TEST(namespace_from_file)
{
	char *path = t_src_path("test/fixtures/config/namespace");
	struct config_opts o = { path, "t.yaml" };
	struct config c;
	struct err e = { "" };

	ck_assert_int_eq(config_load_string(V2, strlen(V2), &o, &c, &e), 0);
	ck_assert_str_eq(c.namespace, "team-a");
	ck_assert_sel(&c.managed_jobs_ns_selector,
		      "kubernetes.io/metadata.name notin (kube-system,team-a)");
	config_release(&c);
	config_defaults(&c, CONFIG_API_V1BETA1, &o);
	ck_assert_str_eq(c.namespace, "team-a");
	config_release(&c);
	/* a missing file gives kueue-system, as Kueue */
	o.namespace_file = "/nonexistent/namespace";
	config_defaults(&c, CONFIG_API_V1BETA2, &o);
	ck_assert_str_eq(c.namespace, "kueue-system");
	config_release(&c);
	free(path);
}
END_TEST

/* Go's cmp.Or: zero values take the default where Kueue's field is not a
 * pointer, and stay where it is. */
START_TEST(zero_values)
{
	struct config c;

	load_ok(V2 "metrics:\n  bindAddress: \"\"\n"
		"leaderElection:\n  leaseDuration: 0s\n  resourceLock: \"\"\n"
		"waitForPodsReady:\n  timeout: 0s\n"
		"integrations:\n  frameworks: []\n"
		"admissionFairSharing:\n  usageSamplingInterval: 0s\n"
		"controller:\n  cacheSyncTimeout: 0\n"
		"webhook:\n  host: \"\"\n", &c);
	ck_assert_str_eq(c.metrics_bind_address, ":8443");
	ck_assert_int_eq(c.le_lease_duration_ms, 15000);
	ck_assert_str_eq(c.le_resource_lock, "leases");
	ck_assert_int_eq(c.wfpr_timeout_ms, 30 * 60000); /* v1beta2 only */
	ck_assert_int_eq(c.wfpr_recovery_timeout_ms, 30 * 60000);
	ck_assert_uint_eq(c.int_frameworks.n, 1);
	ck_assert(c.afs_enable);
	ck_assert_int_eq(c.afs_usage_sampling_ms, 300000);
	ck_assert_int_eq(c.controller_cache_sync_timeout_ms, 120000);
	config_release(&c);
	/* v1beta1's timeout is a pointer: 0s stays */
	load_ok(V1 "waitForPodsReady:\n  enable: true\n  timeout: 0s\n"
		"namespace: \"\"\n", &c);
	ck_assert_int_eq(c.wfpr_timeout_ms, 0);
	ck_assert(c.wfpr_block_admission); /* = enable */
	ck_assert_str_eq(c.namespace, "");
	ck_assert_sel(&c.managed_jobs_ns_selector,
		      "kubernetes.io/metadata.name notin (,kube-system)");
	config_release(&c);
	/* null is "not given" */
	load_ok(V2 "webhook:\nnamespace: ~\nclientConnection:\n  qps: null\n",
		&c);
	ck_assert_int_eq(c.webhook_port, 9443);
	ck_assert_str_eq(c.namespace, "kueue-system");
	ck_assert(c.client_qps == 300);
	config_release(&c);
}
END_TEST

START_TEST(field_table)
{
	/* 92 top-level rows, 12 in the element tables */
	ck_assert_uint_eq(config_field_count(), 104);
	ck_assert_str_eq(config_api_version(CONFIG_API_V1BETA1),
			 "config.kueue.x-k8s.io/v1beta1");
	ck_assert_str_eq(config_api_version(CONFIG_API_V1BETA2),
			 "config.kueue.x-k8s.io/v1beta2");
}
END_TEST

/* ------------------------------------------------------------------ */
/* samples */

START_TEST(shipped_file_loads_clean)
{
	char *path = t_src_path("manifests/config/controller_manager_config."
				"yaml");
	struct config_opts o = { "", NULL };
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };

	ck_assert_msg(config_load_file2(path, &o, &c, &fe, &e) == 0,
		      "shipped file: %s", t_fe_text(&fe));
	ck_assert_int_eq(c.api, CONFIG_API_V1BETA2);
	ck_assert(c.client_qps == 50);
	ck_assert_int_eq(c.client_burst, 100);
	ck_assert_uint_eq(c.controller_gk_concurrency.n, 7);
	ck_assert_str_eq(c.controller_gk_concurrency.v[0].key, "Job.batch");
	ck_assert_int_eq(c.controller_gk_concurrency.v[0].value, 5);
	ck_assert_uint_eq(c.int_frameworks.n, 1);
	ck_assert(c.wfpr_enable);
	ck_assert(c.le_leader_elect);
	config_release(&c);
	/* and through the one-call loader (reads the real SA path) */
	ck_assert_int_eq(config_load_file(path, &c, &e), 0);
	config_release(&c);
	free(path);
}
END_TEST

START_TEST(v1beta1_sample)
{
	size_t len;
	char *text = fixture("v1beta1-sample.yaml", &len);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };

	ck_assert_msg(config_load_string2(text, len, &no_sa, &c, &fe, &e) == 0,
		      "%s", t_fe_text(&fe));
	ck_assert_int_eq(c.api, CONFIG_API_V1BETA1);
	ck_assert(c.manage_jobs_without_queue_name);
	ck_assert(c.metrics_enable_cq_resources);
	ck_assert(!c.metrics_lq_enable);
	ck_assert(c.wfpr_enable);
	ck_assert(c.wfpr_block_admission); /* v1beta1: = enable */
	ck_assert_int_eq(c.wfpr_timeout_ms, 600000);
	ck_assert_int_eq(c.wfpr_recovery_timeout_ms, 180000);
	ck_assert_int_eq(c.wfpr_requeue_timestamp, CONFIG_REQUEUE_CREATION);
	ck_assert_int_eq(c.wfpr_backoff_limit_count, 5);
	ck_assert_int_eq(c.wfpr_backoff_base_seconds, 30);
	ck_assert_int_eq(c.wfpr_backoff_max_seconds, 1800);
	ck_assert_uint_eq(c.int_frameworks.n, 7);
	ck_assert_str_eq(c.int_frameworks.v[6], "pod");
	ck_assert_str_eq(c.int_external_frameworks.v[0], "Foo.v1.example.com");
	ck_assert_sel(&c.int_pod_ns_selector,
		      "kubernetes.io/metadata.name notin "
		      "(kube-system,kueue-system)");
	ck_assert_str_eq(c.int_label_keys_to_copy.v[0], "team");
	ck_assert_int_eq(c.qv_max_count, 20);
	ck_assert_int_eq(c.qv_update_interval_seconds, 10);
	ck_assert(c.fs_enable);
	ck_assert_uint_eq(c.fs_preemption_strategies.n, 2);
	ck_assert_str_eq(c.fs_preemption_strategies.v[0],
			 "LessThanOrEqualToFinalShare");
	ck_assert_str_eq(c.fs_preemption_strategies.v[1],
			 "LessThanInitialShare");
	ck_assert_int_eq(c.mk_gc_interval_ms, 120000);
	ck_assert_str_eq(c.mk_origin, "mk-manager-1");
	ck_assert_int_eq(c.mk_worker_lost_timeout_ms, 600000);
	ck_assert_uint_eq(c.res_transformations.n, 1);
	ck_assert_int_eq(c.res_transformations.v[0].strategy,
			 CONFIG_TRANSFORM_REPLACE);
	ck_assert_uint_eq(c.res_transformations.v[0].outputs.n, 2);
	ck_assert_int_eq(c.res_transformations.v[0].outputs.v[0].value.milli,
			 5LL * 1024 * 1024 * 1024 * 1000);
	ck_assert_int_eq(c.res_transformations.v[0].outputs.v[1].value.milli,
			 1000);
	ck_assert_int_eq(c.orp_after_finished_ms, 3600000);
	ck_assert_int_eq(c.orp_after_deactivated_ms, 1800000);
	ck_assert(config_feature_gate(&c, "PartialAdmission", false));
	ck_assert(!config_feature_gate(&c, "LocalQueueMetrics", true));
	ck_assert(config_feature_gate(&c, "Unset", true));
	config_release(&c);
	free(text);
}
END_TEST

/* The tls section as GnuTLS priorities (config_tls.c): defaults,
 * minVersion, suites by their parts, groups in order, the ML-KEM group
 * left out (X25519 instead when nothing else is left), and the errors
 * Kueue gives for unknown names and IDs. */
START_TEST(tls_priorities)
{
	static const struct {
		const char *tls;
		const char *want;
	} cases[] = {
		{ "", "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2" },
		{ "  minVersion: VersionTLS13\n",
		  "NORMAL:-VERS-ALL:+VERS-TLS1.3" },
		{ "  cipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, "
		  "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, "
		  "TLS_AES_128_GCM_SHA256]\n",
		  "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:"
		  "-CIPHER-ALL:-MAC-ALL:+AES-128-GCM:+AES-256-GCM:"
		  "+CHACHA20-POLY1305:+AEAD:+ECDHE-RSA:+AES-128-CBC:+SHA1:"
		  "+ECDHE-ECDSA" },
		{ "  curvePreferences: [24, 29, 4588, 23]\n",
		  "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-GROUP-ALL:"
		  "+GROUP-SECP384R1:+GROUP-X25519:+GROUP-SECP256R1" },
		{ "  curvePreferences: [4588]\n",
		  "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-GROUP-ALL:"
		  "+GROUP-X25519" },
	};
	static const struct {
		const char *text;
		const char *want;
	} bad[] = {
		{ V2 "tls:\n  curvePreferences: [99]\n",
		  "tls.curvePreferences[0]: Invalid value: 99: not a TLS "
		  "supported group Go offers (23 CurveP256, 24 CurveP384, 25 "
		  "CurveP521, 29 X25519, 4588 X25519MLKEM768)" },
		{ V2 "tls:\n  curvePreferences: [P256]\n",
		  "tls.curvePreferences[0]: Invalid value: \"P256\": "
		  "tls.curvePreferences[0] in body must be of type integer" },
		{ V2 "tls:\n  minVersion: VersionTLS13\n"
		  "  cipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA]\n",
		  "tls.cipherSuites: Invalid value: []string{"
		  "\"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA\"}: may not be "
		  "specified when `minVersion` is 'VersionTLS13'" },
		{ V2 "tls:\n  cipherSuites: [TLS_FANCY]\n",
		  "tls.cipherSuites[0]: Invalid value: \"TLS_FANCY\": not a "
		  "TLS cipher suite Go supports" },
	};

	for (size_t i = 0; i < NCASES(cases); i++) {
		char *text = xasprintf("apiVersion: config.kueue.x-k8s.io/"
				       "v1beta2\nkind: Configuration\n%s%s",
				       *cases[i].tls ? "tls:\n" : "",
				       cases[i].tls);
		struct field_errors fe = FIELD_ERRORS_INIT;
		struct err e = { "" };
		struct config c;
		char *got;

		ck_assert_msg(load(text, &c, &fe, &e) == 0, "%s", e.msg);
		got = config_tls_priorities(&c);
		ck_assert_str_eq(got, cases[i].want);
		free(got);
		config_release(&c);
		field_errors_release(&fe);
		free(text);
	}
	for (size_t i = 0; i < NCASES(bad); i++) {
		struct field_errors fe = FIELD_ERRORS_INIT;
		struct err e = { "" };
		struct config c;
		char *all;

		ck_assert_int_eq(load(bad[i].text, &c, &fe, &e), -1);
		all = field_errors_aggregate(&fe);
		ck_assert_msg(strstr(all, bad[i].want), "%s\nwant %s", all,
			      bad[i].want);
		free(all);
		field_errors_release(&fe);
	}
}
END_TEST

START_TEST(v1beta2_sample)
{
	size_t len;
	char *text = fixture("v1beta2-sample.yaml", &len);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };

	ck_assert_msg(config_load_string2(text, len, &no_sa, &c, &fe, &e) == 0,
		      "%s", t_fe_text(&fe));
	ck_assert_int_eq(c.api, CONFIG_API_V1BETA2);
	ck_assert_str_eq(c.health_readiness_endpoint, "ready");
	ck_assert_str_eq(c.health_liveness_endpoint, "alive");
	ck_assert(c.metrics_lq_enable);
	ck_assert_sel(&c.metrics_lq_selector, "team=ml");
	ck_assert_uint_eq(c.metrics_custom_labels.n, 2);
	ck_assert_str_eq(c.metrics_custom_labels.v[0].source_label_key,
			 "example.com/team");
	ck_assert_ptr_null(c.metrics_custom_labels.v[0].source_annotation_key);
	ck_assert_str_eq(c.metrics_custom_labels.v[1].name, "cost_center");
	ck_assert_str_eq(c.webhook_cert_dir, "/etc/cueue/certs");
	ck_assert(!c.le_leader_elect);
	ck_assert_int_eq(c.controller_cache_sync_timeout_ms, 300000);
	ck_assert(c.client_qps == 100.5);
	ck_assert(!c.icm_enable);
	ck_assert(c.wfpr_enable);
	ck_assert(c.wfpr_block_admission);
	ck_assert_int_eq(c.wfpr_timeout_ms, 600000);
	ck_assert_int_eq(c.wfpr_recovery_timeout_ms, 600000); /* = timeout */
	ck_assert_int_eq(c.wfpr_backoff_limit_count, 3);
	ck_assert_str_eq(c.int_frameworks.v[1],
			 "trainer.kubeflow.org/trainjob");
	ck_assert_int_eq(c.mk_incremental_step_size, 2);
	ck_assert_str_eq(c.mk_external_frameworks.v[0].name,
			 "Foo.v1.example.com");
	ck_assert_uint_eq(c.mk_credentials_providers.n, 1);
	ck_assert_str_eq(c.mk_credentials_providers.v[0].name, "gke");
	ck_assert(c.mk_credentials_providers.v[0].has_exec_config);
	ck_assert(c.fs_enable); /* presence */
	ck_assert_uint_eq(c.fs_preemption_strategies.n, 1);
	ck_assert(c.afs_enable);
	ck_assert_int_eq(c.afs_usage_half_life_ms, 168LL * 3600000);
	ck_assert_uint_eq(c.afs_resource_weights.n, 2);
	ck_assert(c.afs_resource_weights.v[0].value == 1.5);
	ck_assert(c.afs_resource_weights.v[1].value == 10);
	ck_assert_int_eq(c.res_quota_check, CONFIG_QUOTA_IGNORE_UNDECLARED);
	ck_assert_str_eq(c.res_transformations.v[0].multiply_by,
			 "example.com/slices");
	ck_assert_int_eq(c.res_transformations.v[0].strategy,
			 CONFIG_TRANSFORM_RETAIN);
	ck_assert_int_eq(c.res_transformations.v[0].outputs.v[0].value.milli,
			 500);
	ck_assert_uint_eq(c.res_device_class_mappings.v[0].device_classes.n, 2);
	ck_assert_int_eq(c.tls_min_version, CONFIG_TLS_12);
	ck_assert_str_eq(c.tls_cipher_suites.v[0],
			 "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
	ck_assert_int_eq(c.tls_curve_preferences.v[1], 23);
	ck_assert_str_eq(c.vis_bind_address, "0.0.0.0");
	ck_assert_int_eq(c.vis_bind_port, 8443);
	config_release(&c);
	free(text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* errors */

/*
 * Checks err against fe (the same load's entries): its lines are fe's
 * first texts, in order, and when they are fewer than total its last
 * line is "(and N more)" counting the rest. Returns the lines shown.
 */
static size_t assert_err_lines(const struct err *e,
			       const struct field_errors *fe, size_t total)
{
	char *msg = xstrdup(e->msg), *line = msg, *nl;
	size_t shown = 0;

	ck_assert_uint_lt(strlen(e->msg), ERR_MAX);
	for (;;) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (shown < total && shown < fe->n &&
		    !strcmp(line, fe->v[shown].text)) {
			shown++;
		} else {
			char *more = xasprintf("(and %zu more)", total - shown);

			ck_assert_msg(!nl, "line %zu of err is not the "
				      "last: %s", shown, line);
			ck_assert_str_eq(line, more);
			free(more);
			break;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	ck_assert_uint_ge(shown, 1);
	free(msg);
	return shown;
}

/* A negative waitForPodsReady.timeout makes the recoveryTimeout it
 * defaults to negative too: both are reported, the timeout the user
 * wrote first, though the derived one sits at the section's first
 * column, before it. */
START_TEST(written_value_before_derived)
{
	static const char *const want[] = {
		"t.yaml:4:12: waitForPodsReady.timeout: Invalid value: -5m0s: "
		"must be greater than or equal to 0",
		"t.yaml:4:3: waitForPodsReady.recoveryTimeout: Invalid value: "
		"-5m0s: must be greater than or equal to 0",
	};
	const char *text = V2 "waitForPodsReady:\n  timeout: -5m\n";
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };
	char *all;

	ck_assert_int_eq(load(text, &c, &fe, &e), -1);
	ck_assert_uint_eq(fe.n, NCASES(want));
	for (size_t i = 0; i < NCASES(want); i++)
		ck_assert_str_eq(fe.v[i].text, want[i]);
	all = xasprintf("%s\n%s", want[0], want[1]);
	ck_assert_str_eq(e.msg, all);
	free(all);
	field_errors_release(&fe);
}
END_TEST

/* Three problems (test/fixtures/config/three-errors.yaml): two written
 * values in file order, then the value derived from one of them; err
 * holds all three lines and no count. */
START_TEST(three_errors_all_reported)
{
	static const char *const want[] = {
		"three-errors.yaml:8:9: webhook.port: Invalid value: 70000: "
		"must be between 1 and 65535, inclusive",
		"three-errors.yaml:10:12: waitForPodsReady.timeout: Invalid "
		"value: -5m0s: must be greater than or equal to 0",
		"three-errors.yaml:10:3: waitForPodsReady.recoveryTimeout: "
		"Invalid value: -5m0s: must be greater than or equal to 0",
	};
	size_t len;
	char *text = fixture("three-errors.yaml", &len), *all;
	struct config_opts o = { "", "three-errors.yaml" };
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };

	ck_assert_int_eq(config_load_string2(text, len, &o, &c, &fe, &e), -1);
	ck_assert_uint_eq(fe.n, NCASES(want));
	for (size_t i = 0; i < NCASES(want); i++)
		ck_assert_str_eq(fe.v[i].text, want[i]);
	all = xasprintf("%s\n%s\n%s", want[0], want[1], want[2]);
	ck_assert_str_eq(e.msg, all);
	ck_assert_uint_eq(assert_err_lines(&e, &fe, 3), 3);
	free(all);
	field_errors_release(&fe);
	free(text);
}
END_TEST

/* A single problem too long for err alone still leads it, cut short,
 * and the count of the others follows. */
START_TEST(long_first_line_cut)
{
	struct sbuf b = SBUF_INIT;
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };
	const char *nl;

	sbuf_adds(&b, V2);
	for (int i = 0; i < 600; i++)
		sbuf_addch(&b, 'x');
	sbuf_adds(&b, ": 1\nwebhook:\n  port: 0\n");
	ck_assert_int_eq(load(sbuf_cstr(&b), &c, &fe, &e), -1);
	ck_assert_uint_eq(fe.n, 2);
	ck_assert_uint_eq(strlen(e.msg), ERR_MAX - 1);
	nl = strchr(e.msg, '\n');
	ck_assert_ptr_nonnull(nl);
	ck_assert_str_eq(nl + 1, "(and 1 more)");
	ck_assert(!strncmp(e.msg, fe.v[0].text, (size_t)(nl - e.msg)));
	field_errors_release(&fe);
	sbuf_release(&b);
}
END_TEST

/* Every class of problem in one file, each with its line and column,
 * all reported at once: the written values' problems in file order, then
 * those of values the file did not write. */
START_TEST(every_error_with_its_position)
{
	static const char *const want[] = {
		"errors.yaml:6:9: webhook.port: Invalid value: \"9443\": "
		"webhook.port in body must be of type integer",
		"errors.yaml:7:3: webhook.hots: unknown field \"webhook.hots\"",
		"errors.yaml:9:16: leaderElection.leaderElect: Invalid value: "
		"\"true\": leaderElection.leaderElect in body must be of type "
		"boolean",
		"errors.yaml:10:18: leaderElection.leaseDuration: Invalid "
		"value: 15: leaderElection.leaseDuration in body must be of "
		"type string",
		"errors.yaml:11:18: leaderElection.renewDeadline: Invalid "
		"value: \"5x\": time: unknown unit \"x\" in duration \"5x\"",
		"errors.yaml:13:3: leaderElection.retryPeriod: Duplicate "
		"value: \"retryPeriod\"",
		"errors.yaml:15:16: metrics.bindAddress: Invalid value: "
		"\"array\": metrics.bindAddress in body must be of type string",
		"errors.yaml:17:10: clientConnection.burst: Invalid value: "
		"2147483648: must be between -2147483648 and 2147483647, "
		"inclusive",
		"errors.yaml:18:8: clientConnection.qps: Invalid value: 1e39: "
		"must fit in a 32-bit float (at most 3.40282e+38)",
		"errors.yaml:20:3: waitForPodsReady.enable: unknown field "
		"\"waitForPodsReady.enable\" (v1beta1 only: in v1beta2 "
		"waitForPodsReady is on unless the DisableWaitForPodsReady "
		"feature gate is set)",
		"errors.yaml:21:12: waitForPodsReady.timeout: Invalid value: "
		"-1s: must be greater than or equal to 0",
		"errors.yaml:23:16: waitForPodsReady.requeuingStrategy."
		"timestamp: Unsupported value: \"Admission\": supported values: "
		"\"Creation\", \"Eviction\"",
		"errors.yaml:25:27: integrations.frameworks[1]: Unsupported "
		"value: \"kubeflow.org/mxjob\": supported values: \"batch/job\", "
		"\"deployment\", \"jobset.x-k8s.io/jobset\", "
		"\"kubeflow.org/jaxjob\", \"kubeflow.org/mpijob\", "
		"\"kubeflow.org/paddlejob\", \"kubeflow.org/pytorchjob\", "
		"\"kubeflow.org/tfjob\", \"kubeflow.org/xgboostjob\", "
		"\"leaderworkerset.x-k8s.io/leaderworkerset\", \"pod\", "
		"\"ray.io/raycluster\", \"ray.io/rayjob\", \"ray.io/rayservice\", "
		"\"sparkoperator.k8s.io/sparkapplication\", \"statefulset\", "
		"\"trainer.kubeflow.org/trainjob\", "
		"\"workload.codeflare.dev/appwrapper\"",
		"errors.yaml:25:47: integrations.frameworks[2]: Duplicate "
		"value: \"batch/job\"",
		"errors.yaml:26:3: integrations.podOptions: unknown field "
		"\"integrations.podOptions\" (v1beta1 only: use "
		"managedJobsNamespaceSelector)",
		"errors.yaml:27:1: queueVisibility: unknown field "
		"\"queueVisibility\" (v1beta1 only: deprecated; use "
		"VisibilityOnDemand)",
		"errors.yaml:30:3: managedJobsNamespaceSelector: Invalid value: "
		"\"kubernetes.io/metadata.name=kube-system\": should not match "
		"the \"kube-system\" namespace",
		"errors.yaml:38:30: resources.transformations[0].outputs"
		"[example.com/cpu-units]: Invalid value: \"1Q\": invalid "
		"quantity \"1Q\": invalid suffix",
		"errors.yaml:39:15: resources.transformations[1].strategy: "
		"Unsupported value: \"Keep\": supported values: \"Retain\", "
		"\"Replace\"",
		"errors.yaml:42:11: featureGates[Broken]: Invalid value: "
		"\"maybe\": featureGates[Broken] in body must be of type "
		"boolean",
		"errors.yaml:45:20: objectRetentionPolicies.workloads."
		"afterFinished: Invalid value: -5m0s: must be greater than or "
		"equal to 0",
		/* then the values the file did not write, at their nearest
		 * written ancestor, in file order: recoveryTimeout defaults
		 * to the timeout, as in Kueue */
		"errors.yaml:20:3: waitForPodsReady.recoveryTimeout: Invalid "
		"value: -1s: must be greater than or equal to 0",
		"errors.yaml:39:5: resources.transformations[1].input: "
		"Required value",
	};
	size_t len;
	char *text = fixture("errors.yaml", &len);
	struct config_opts o = { "", "errors.yaml" };
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" }, e2;
	size_t shown;

	ck_assert_int_eq(config_load_string2(text, len, &o, &c, &fe, &e), -1);
	for (size_t i = 0; i < fe.n && i < NCASES(want); i++)
		ck_assert_str_eq(fe.v[i].text, want[i]);
	ck_assert_uint_eq(fe.n, NCASES(want));
	ck_assert_str_eq(fe.v[1].path, "webhook.hots");
	ck_assert_str_eq(fe.v[12].path, "integrations.frameworks[1]");
	ck_assert_str_eq(fe.v[19].path, "featureGates[Broken]");
	/* err: the same lines, as many as it holds, then the count */
	shown = assert_err_lines(&e, &fe, NCASES(want));
	ck_assert_uint_ge(shown, 3);
	/* failure leaves out zeroed */
	ck_assert_ptr_null(c.namespace);
	ck_assert_int_eq(c.api, 0);
	/* without fe, err alone says the same */
	memset(&e2, 0, sizeof(e2));
	ck_assert_int_eq(config_load_string(text, len, &o, &c, &e2), -1);
	ck_assert_str_eq(e2.msg, e.msg);
	field_errors_release(&fe);
	free(text);
}
END_TEST

/* More problems than CONFIG_MAX_ERRORS: fe gets the first 100; err the
 * lines it holds and the count of all the others. */
START_TEST(error_cap)
{
	char *text = xstrdup(V2 "featureGates:\n");
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };

	for (int i = 0; i < 150; i++) {
		char *t = xasprintf("%s  G%d: maybe\n", text, i);

		free(text);
		text = t;
	}
	ck_assert_int_eq(load(text, &c, &fe, &e), -1);
	ck_assert_uint_eq(fe.n, CONFIG_MAX_ERRORS);
	ck_assert_str_eq(fe.v[0].text, "t.yaml:4:7: featureGates[G0]: Invalid "
			 "value: \"maybe\": featureGates[G0] in body must be of "
			 "type boolean");
	ck_assert_uint_ge(assert_err_lines(&e, &fe, 150), 3);
	field_errors_release(&fe);
	free(text);
}
END_TEST

struct fail_case {
	const char *name;
	const char *text;
	const char *want; /* the one problem */
};

static const struct fail_case type_cases[] = {
	{ "string for int", V2 "webhook:\n  port: nine\n",
	  "t.yaml:4:9: webhook.port: Invalid value: \"nine\": webhook.port in "
	  "body must be of type integer" },
	{ "fraction for int", V2 "webhook:\n  port: 9443.5\n",
	  "t.yaml:4:9: webhook.port: Invalid value: 9443.5: webhook.port in "
	  "body must be of type integer" },
	{ "uint64 for int", V2 "webhook:\n  port: 18446744073709551615\n",
	  "t.yaml:4:9: webhook.port: Invalid value: 18446744073709551615: "
	  "must be between -9223372036854775808 and 9223372036854775807, "
	  "inclusive" },
	{ "int for string", V2 "namespace: 42\n",
	  "t.yaml:3:12: namespace: Invalid value: 42: namespace in body must "
	  "be of type string" },
	{ "YAML 1.1 bool for string", V2 "leaderElection:\n"
	  "  resourceName: yes\n",
	  "t.yaml:4:17: leaderElection.resourceName: Invalid value: true: "
	  "leaderElection.resourceName in body must be of type string" },
	{ "map for list", V2 "integrations:\n  frameworks: {a: b}\n",
	  "t.yaml:4:15: integrations.frameworks: Invalid value: \"object\": "
	  "integrations.frameworks in body must be of type array" },
	{ "list item not a string", V2 "integrations:\n"
	  "  frameworks: [batch/job, [pod]]\n",
	  "t.yaml:4:27: integrations.frameworks[1]: Invalid value: \"array\": "
	  "integrations.frameworks[1] in body must be of type string" },
	{ "scalar for section", V2 "webhook: 9443\n",
	  "t.yaml:3:10: webhook: Invalid value: 9443: webhook in body must be "
	  "of type object" },
	{ "number for duration", V2 "multiKueue:\n  gcInterval: 60\n",
	  "t.yaml:4:15: multiKueue.gcInterval: Invalid value: 60: "
	  "multiKueue.gcInterval in body must be of type string" },
	{ "string for time.Duration", V2 "controller:\n"
	  "  cacheSyncTimeout: 2m\n",
	  "t.yaml:4:21: controller.cacheSyncTimeout: Invalid value: \"2m\": "
	  "controller.cacheSyncTimeout in body must be of type integer" },
	{ "tag contradicts text", V2 "webhook:\n  port: !!int abc\n",
	  "t.yaml:4:9: webhook.port: Invalid value: \"abc\": cannot decode "
	  "!!str as a !!int" },
	{ "quoted bool", V2 "manageJobsWithoutQueueName: \"true\"\n",
	  "t.yaml:3:29: manageJobsWithoutQueueName: Invalid value: \"true\": "
	  "manageJobsWithoutQueueName in body must be of type boolean" },
	{ "infinite float", V2 "clientConnection:\n  qps: .inf\n",
	  "t.yaml:4:8: clientConnection.qps: Invalid value: .inf: must be a "
	  "finite number" },
	/* out of float64's range: a string to go-yaml, as in a manifest
	 * (yamlplain.h), not an infinity */
	{ "float out of range", V2 "clientConnection:\n  qps: 1e400\n",
	  "t.yaml:4:8: clientConnection.qps: Invalid value: \"1e400\": "
	  "clientConnection.qps in body must be of type number" },
	{ "int32 underflow", V2 "visibilityServer:\n  bindPort: -2147483649\n",
	  "t.yaml:4:13: visibilityServer.bindPort: Invalid value: "
	  "-2147483649: must be between -2147483648 and 2147483647, "
	  "inclusive" },
	{ "unknown top-level key", V2 "webhooks:\n  port: 1\n",
	  "t.yaml:3:1: webhooks: unknown field \"webhooks\"" },
	{ "unknown key in a list element", V2 "resources:\n"
	  "  transformations:\n  - input: cpu\n    output: {}\n",
	  "t.yaml:6:5: resources.transformations[0].output: unknown field "
	  "\"resources.transformations[0].output\"" },
	{ "unknown key in a selector", V2 "managedJobsNamespaceSelector:\n"
	  "  matchLabel: {a: b}\n",
	  "t.yaml:4:3: managedJobsNamespaceSelector.matchLabel: unknown field "
	  "\"managedJobsNamespaceSelector.matchLabel\"" },
	{ "duplicate through a merge", V2 "webhook:\n  <<: {port: 1}\n"
	  "  port: 2\n",
	  "t.yaml:5:3: webhook.port: Duplicate value: \"port\"" },
	{ "null key", V2 "featureGates:\n  ~: true\n",
	  "t.yaml:4:3: featureGates: Invalid value: \"~\": a mapping key must "
	  "be a string" },
	{ "NUL in a string", V2 "webhook:\n  host: \"a\\0b\"\n",
	  "t.yaml:4:9: webhook.host: Invalid value: \"a\": must not contain "
	  "NUL characters" },
	{ "bad enum for tls", V2 "tls:\n  minVersion: VersionTLS14\n",
	  "t.yaml:4:15: tls.minVersion: Unsupported value: \"VersionTLS14\": "
	  "supported values: \"VersionTLS10\", \"VersionTLS11\", "
	  "\"VersionTLS12\", \"VersionTLS13\"" },
	{ "wrong apiVersion", "apiVersion: config.kueue.x-k8s.io/v1\n"
	  "kind: Configuration\n",
	  "t.yaml:1:13: apiVersion: Unsupported value: "
	  "\"config.kueue.x-k8s.io/v1\": supported values: "
	  "\"config.kueue.x-k8s.io/v1beta1\", "
	  "\"config.kueue.x-k8s.io/v1beta2\"" },
	{ "wrong kind", "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
	  "kind: Config\n",
	  "t.yaml:2:7: kind: Unsupported value: \"Config\": supported values: "
	  "\"Configuration\"" },
	{ "missing kind", "apiVersion: config.kueue.x-k8s.io/v1beta2\n",
	  "t.yaml:1:1: kind: Required value: must be Configuration" },
};

START_TEST(type_table)
{
	load_fails1(type_cases[_i].text, type_cases[_i].want);
}
END_TEST

START_TEST(validation_rules)
{
	struct config c;
	struct field_errors fe = FIELD_ERRORS_INIT;

	/* leader election: cueue's own rules, only with leaderElect */
	load_fails1(V2 "leaderElection:\n  renewDeadline: 2s\n",
		    "t.yaml:4:18: leaderElection.renewDeadline: Invalid value: "
		    "2s: renewDeadline must be greater than retryPeriod*"
		    "JitterFactor (1.2)");
	load_fails1(V2 "leaderElection:\n  resourceLock: configmaps\n",
		    "t.yaml:4:17: leaderElection.resourceLock: Unsupported "
		    "value: \"configmaps\": supported values: \"leases\"");
	load_ok(V2 "leaderElection:\n  leaderElect: false\n"
		"  renewDeadline: 1s\n", &c);
	config_release(&c);
	/* v1beta1 waitForPodsReady is only checked when enabled */
	load_ok(V1 "waitForPodsReady:\n  timeout: -1s\n", &c);
	config_release(&c);
	load_fails1(V1 "waitForPodsReady:\n  enable: true\n"
		    "  requeuingStrategy:\n    backoffMaxSeconds: -1\n",
		    "t.yaml:6:24: waitForPodsReady.requeuingStrategy."
		    "backoffMaxSeconds: Invalid value: -1: must be greater "
		    "than or equal to 0");
	/* v1beta2 turns it off with the gate */
	load_ok(V2 "featureGates: {DisableWaitForPodsReady: true}\n"
		"waitForPodsReady:\n  timeout: -1s\n", &c);
	ck_assert(!c.wfpr_enable);
	config_release(&c);
	/* queueVisibility bounds (v1beta1), Kueue's words */
	load_fails1(V1 "queueVisibility:\n  clusterQueues:\n"
		    "    maxCount: 4001\n",
		    "t.yaml:5:15: queueVisibility.clusterQueues.maxCount: "
		    "Invalid value: 4001: must be less than 4000");
	load_fails1(V1 "queueVisibility:\n  updateIntervalSeconds: -1\n",
		    "t.yaml:4:26: queueVisibility.updateIntervalSeconds: "
		    "Invalid value: -1: greater than or equal to 1");
	/* clusterQueues given without maxCount: Go's zero */
	load_ok(V1 "queueVisibility:\n  clusterQueues: {}\n", &c);
	ck_assert_int_eq(c.qv_max_count, 0);
	config_release(&c);
	/* internal certs: names checked only when enabled */
	load_fails1(V2 "internalCertManagement:\n"
		    "  webhookServiceName: 1-svc\n",
		    "t.yaml:4:23: internalCertManagement.webhookServiceName: "
		    "Invalid value: \"1-svc\": a DNS-1035 label must consist of "
		    "lower case alphanumeric characters or '-', start with an "
		    "alphabetic character, and end with an alphanumeric "
		    "character (e.g. 'my-name',  or 'abc-123', regex used for "
		    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
	load_ok(V2 "internalCertManagement:\n  enable: false\n"
		"  webhookSecretName: Not_A_Name\n", &c);
	config_release(&c);
	/* fair sharing: only the three lists */
	load_fails1(V1 "fairSharing:\n  enable: true\n"
		    "  preemptionStrategies: [LessThanInitialShare, "
		    "LessThanInitialShare]\n",
		    "t.yaml:5:25: fairSharing.preemptionStrategies: "
		    "Unsupported value: \"LessThanInitialShare,"
		    "LessThanInitialShare\": supported values: "
		    "\"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\", "
		    "\"LessThanOrEqualToFinalShare,LessThanInitialShare\"");
	/* admission fair sharing */
	load_fails1(V2 "admissionFairSharing:\n  usageHalfLifeTime: -1h\n",
		    "t.yaml:4:22: admissionFairSharing.usageHalfLifeTime: "
		    "Invalid value: -1h0m0s: must be greater than or equal to 0");
	load_fails1(V2 "admissionFairSharing:\n  resourceWeights: {cpu: -2}\n",
		    "t.yaml:4:26: admissionFairSharing.resourceWeights[cpu]: "
		    "Invalid value: -2: must be greater than or equal to 0");
	/* multiKueue */
	load_fails1(V2 "multiKueue:\n  origin: not a label\n",
		    "t.yaml:4:11: multiKueue.origin: Invalid value: \"not a "
		    "label\": a valid label must be an empty string or consist "
		    "of alphanumeric characters, '-', '_' or '.', and must "
		    "start and end with an alphanumeric character (e.g. "
		    "'MyValue',  or 'my_value',  or '12345', regex used for "
		    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?"
		    "[A-Za-z0-9])?')");
	load_fails1(V2 "multiKueue:\n  incrementalDispatcherConfig:\n"
		    "    stepSize: 0\n",
		    "t.yaml:5:15: multiKueue.incrementalDispatcherConfig."
		    "stepSize: Invalid value: 0: must be greater than or equal "
		    "to 1");
	load_fails1(V2 "multiKueue:\n  clusterProfile:\n"
		    "    credentialsProviders:\n    - execConfig: {}\n",
		    "t.yaml:6:7: multiKueue.clusterProfile.credentialsProviders"
		    "[0].name: Required value");
	/* controller and client */
	load_fails1(V2 "controller:\n  groupKindConcurrency:\n"
		    "    Job.batch: 0\n",
		    "t.yaml:5:16: controller.groupKindConcurrency[Job.batch]: "
		    "Invalid value: 0: must be greater than or equal to 1");
	load_fails1(V2 "clientConnection:\n  burst: 0\n",
		    "t.yaml:4:10: clientConnection.burst: Invalid value: 0: "
		    "must be greater than 0 when qps is greater than 0");
	load_ok(V2 "clientConnection:\n  qps: -1\n  burst: 0\n", &c);
	ck_assert(c.client_qps == -1);
	config_release(&c);
	/* custom metric labels */
	load_fails1(V2 "metrics:\n  customLabels:\n  - {name: a}\n  - {name: b}\n"
		    "  - {name: c}\n  - {name: d}\n  - {name: e}\n  - {name: f}\n"
		    "  - {name: g}\n  - {name: h}\n  - {name: i}\n",
		    "t.yaml:5:3: metrics.customLabels: Too many: 9: must have at "
		    "most 8 items");
	load_fails1(V2 "metrics:\n  customLabels:\n  - {name: a}\n  - {name: a}\n",
		    "t.yaml:6:12: metrics.customLabels[1].name: Duplicate value: "
		    "\"a\"");
	/* DRA device classes */
	load_fails1(V2 "resources:\n  deviceClassMappings:\n"
		    "  - {name: gpu, deviceClassNames: [a.example.com]}\n"
		    "  - {name: gpu2, deviceClassNames: [a.example.com]}\n",
		    "t.yaml:6:37: resources.deviceClassMappings[1]."
		    "deviceClassNames[0]: Duplicate value: \"a.example.com\"");
	load_fails1(V2 "resources:\n  deviceClassMappings:\n  - name: gpu\n",
		    "t.yaml:5:5: resources.deviceClassMappings[0]."
		    "deviceClassNames: Required value");
	/* external frameworks and ports */
	load_fails1(V2 "integrations:\n  externalFrameworks: [JobSet.v1alpha2."
		    "jobset.x-k8s.io]\n  frameworks: [jobset.x-k8s.io/jobset]\n",
		    "t.yaml:4:24: integrations.externalFrameworks[0]: Duplicate "
		    "value: \"JobSet.v1alpha2.jobset.x-k8s.io\"");
	load_fails1(V2 "webhook:\n  port: 65536\n",
		    "t.yaml:4:9: webhook.port: Invalid value: 65536: must be "
		    "between 1 and 65535, inclusive");
	/* config_validate on a config changed after loading */
	config_defaults(&c, CONFIG_API_V1BETA2, &no_sa);
	c.webhook_port = 0;
	c.wfpr_timeout_ms = -1000;
	ck_assert_int_eq(config_validate(&c, &fe), -1);
	ck_assert_uint_eq(fe.n, 2);
	ck_assert_str_eq(fe.v[0].text, "waitForPodsReady.timeout: Invalid "
			 "value: -1s: must be greater than or equal to 0");
	ck_assert_str_eq(fe.v[1].text, "webhook.port: Invalid value: 0: must "
			 "be between 1 and 65535, inclusive");
	field_errors_release(&fe);
	config_release(&c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* durations and quantities */

struct dur_case {
	const char *text;
	int64_t ns;       /* when ok */
	const char *msg;  /* Go's error, or NULL */
};

static const struct dur_case dur_cases[] = {
	{ "0", 0, NULL },
	{ "+0", 0, NULL },
	{ "0s", 0, NULL },
	{ "1ns", 1, NULL },
	{ "1.5h", 5400000000000LL, NULL },
	{ "-1.5s", -1500000000LL, NULL },
	{ "+5m", 300000000000LL, NULL },
	{ ".5s", 500000000LL, NULL },
	{ "5.s", 5000000000LL, NULL },
	{ "1h2m3s4ms5us6ns", 3723004005006LL, NULL },
	{ "1\xc2\xb5s", 1000, NULL },   /* U+00B5 micro sign */
	{ "1\xce\xbcs", 1000, NULL },   /* U+03BC mu */
	{ "9223372036854775807ns", INT64_MAX, NULL },
	{ "-9223372036854775808ns", INT64_MIN, NULL },
	{ "0.000000001s", 1, NULL },
	{ "", 0, "time: invalid duration \"\"" },
	{ "-", 0, "time: invalid duration \"-\"" },
	{ "s", 0, "time: invalid duration \"s\"" },
	{ ".s", 0, "time: invalid duration \".s\"" },
	{ "5", 0, "time: missing unit in duration \"5\"" },
	{ "5x", 0, "time: unknown unit \"x\" in duration \"5x\"" },
	{ "1e3s", 0, "time: unknown unit \"e\" in duration \"1e3s\"" },
	{ "5 m", 0, "time: unknown unit \" m\" in duration \"5 m\"" },
	{ "1d", 0, "time: unknown unit \"d\" in duration \"1d\"" },
	{ "3\xc3\xa9s", 0, "time: unknown unit \"\\xc3\\xa9s\" in duration "
	  "\"3\\xc3\\xa9s\"" },
	{ "9223372036854775808ns", 0,
	  "time: invalid duration \"9223372036854775808ns\"" },
	{ "2562048h", 0, "time: invalid duration \"2562048h\"" },
};

START_TEST(go_durations)
{
	const struct dur_case *t = &dur_cases[_i];
	char msg[256] = "";
	int64_t ns = -42;
	int rc = config_parse_go_duration(t->text, &ns, msg, sizeof(msg));

	if (!t->msg) {
		ck_assert_msg(rc == 0, "%s: %s", t->text, msg);
		ck_assert_int_eq(ns, t->ns);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_str_eq(msg, t->msg);
	}
}
END_TEST

START_TEST(duration_units)
{
	char buf[48];
	struct config c;

	/* nanoseconds round away from zero into milliseconds */
	ck_assert_int_eq(config_ns_to_ms(1), 1);
	ck_assert_int_eq(config_ns_to_ms(-1), -1);
	ck_assert_int_eq(config_ns_to_ms(1000000), 1);
	ck_assert_int_eq(config_ns_to_ms(1000001), 2);
	ck_assert_int_eq(config_ns_to_ms(0), 0);
	/* Go's Duration.String */
	ck_assert_str_eq(config_ms_string(0, buf, sizeof(buf)), "0s");
	ck_assert_str_eq(config_ms_string(1, buf, sizeof(buf)), "1ms");
	ck_assert_str_eq(config_ms_string(1500, buf, sizeof(buf)), "1.5s");
	ck_assert_str_eq(config_ms_string(60000, buf, sizeof(buf)), "1m0s");
	ck_assert_str_eq(config_ms_string(5400000, buf, sizeof(buf)),
			 "1h30m0s");
	ck_assert_str_eq(config_ms_string(-1000, buf, sizeof(buf)), "-1s");
	ck_assert_str_eq(config_ms_string(INT64_MAX / 1000000 + 1, buf,
					  sizeof(buf)), "2562047h47m16.855s");
	/* through the loader: 1ns stays non-zero; quoted is a string too */
	load_ok(V2 "waitForPodsReady:\n  timeout: 1ns\n"
		"  recoveryTimeout: \"90s\"\n"
		"multiKueue:\n  gcInterval: 0s\n"
		"controller:\n  cacheSyncTimeout: 1500000\n", &c);
	ck_assert_int_eq(c.wfpr_timeout_ms, 1);
	ck_assert_int_eq(c.wfpr_recovery_timeout_ms, 90000);
	ck_assert_int_eq(c.mk_gc_interval_ms, 0); /* a pointer: 0 disables */
	ck_assert_int_eq(c.controller_cache_sync_timeout_ms, 2);
	config_release(&c);
	load_fails1(V2 "objectRetentionPolicies:\n  workloads:\n"
		    "    afterDeactivatedByKueue: 10 minutes\n",
		    "t.yaml:5:30: objectRetentionPolicies.workloads."
		    "afterDeactivatedByKueue: Invalid value: \"10 minutes\": "
		    "time: unknown unit \" minutes\" in duration \"10 minutes\"");
}
END_TEST

START_TEST(quantities)
{
	struct config c;
	const struct config_quantity_map *o;
	static const char *const bad[] = {
		"t.yaml:7:10: resources.transformations[0].outputs[a]: Invalid "
		"value: \"-1\": must be greater than or equal to 0",
		"t.yaml:8:10: resources.transformations[0].outputs[b]: Invalid "
		"value: \"1Qi\": invalid quantity \"1Qi\": invalid suffix",
		"t.yaml:9:10: resources.transformations[0].outputs[c]: Invalid "
		"value: true: resources.transformations[0].outputs[c] in body "
		"must be of type string",
		"t.yaml:10:10: resources.transformations[0].outputs[d]: Invalid "
		"value: \"object\": resources.transformations[0].outputs[d] in "
		"body must be of type string",
		"t.yaml:11:10: resources.transformations[0].outputs[e]: Invalid "
		"value: .nan: must be a finite number",
	};

	load_ok(V2 "resources:\n  transformations:\n  - input: x\n"
		"    outputs:\n      a: 1\n      b: 0.5\n      c: \"500m\"\n"
		"      d: 2Gi\n      e: 1e3\n      f: ~\n      g: 1_000\n"
		"      h: 0x10\n      i: .5\n      j: 1n\n", &c);
	o = &c.res_transformations.v[0].outputs;
	ck_assert_uint_eq(o->n, 10);
	ck_assert_int_eq(o->v[0].value.milli, 1000);
	ck_assert_int_eq(o->v[1].value.milli, 500);
	ck_assert_int_eq(o->v[2].value.milli, 500);
	ck_assert_int_eq(o->v[3].value.milli, 2LL * 1024 * 1024 * 1024 * 1000);
	ck_assert_int_eq(o->v[4].value.milli, 1000000);
	ck_assert_int_eq(o->v[5].value.milli, 0);       /* null: zero */
	ck_assert_int_eq(o->v[6].value.milli, 1000000); /* 1_000 */
	ck_assert_int_eq(o->v[7].value.milli, 16000);   /* 0x10 */
	ck_assert_int_eq(o->v[8].value.milli, 500);
	ck_assert_int_eq(o->v[9].value.milli, 1);       /* rounds up */
	config_release(&c);
	load_fails(V2 "resources:\n  transformations:\n  - input: x\n"
		   "    outputs:\n      a: -1\n      b: 1Qi\n      c: on\n"
		   "      d: {}\n      e: .nan\n", bad, NCASES(bad));
}
END_TEST

/* ------------------------------------------------------------------ */
/* feature gates */

START_TEST(feature_gates)
{
	struct config c;

	load_ok(V2 "featureGates:\n  A: true\n  B: false\n  C: yes\n  D: Off\n"
		"  E: !!bool true\n  F: ~\n  1: true\n", &c);
	ck_assert_uint_eq(c.feature_gates.n, 7);
	ck_assert(config_feature_gate(&c, "A", false));
	ck_assert(!config_feature_gate(&c, "B", true));
	ck_assert(config_feature_gate(&c, "C", false));
	ck_assert(!config_feature_gate(&c, "D", true));
	ck_assert(config_feature_gate(&c, "E", false));
	ck_assert(!config_feature_gate(&c, "F", true)); /* null: false */
	ck_assert(config_feature_gate(&c, "1", false)); /* key as a string */
	ck_assert(config_feature_gate(&c, "Z", true));
	ck_assert(!config_feature_gate(&c, "Z", false));
	ck_assert_str_eq(c.feature_gates.v[0].key, "A"); /* file order */
	ck_assert(c.wfpr_enable);
	config_release(&c);
	load_fails1(V2 "featureGates:\n  A: true\n  A: false\n",
		    "t.yaml:5:3: featureGates[A]: Duplicate value: \"A\"");
	load_fails1(V2 "featureGates:\n  A: 1\n",
		    "t.yaml:4:6: featureGates[A]: Invalid value: 1: "
		    "featureGates[A] in body must be of type boolean");
	load_fails1(V2 "featureGates: [A]\n",
		    "t.yaml:3:15: featureGates: Invalid value: \"array\": "
		    "featureGates in body must be of type object");
	/* DisableWaitForPodsReady turns v1beta2's waitForPodsReady off */
	load_ok(V2 "featureGates: {DisableWaitForPodsReady: true}\n", &c);
	ck_assert(!c.wfpr_enable);
	config_release(&c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* versions */

START_TEST(v1beta1_only_keys)
{
	static const char *const want[] = {
		"t.yaml:4:3: waitForPodsReady.enable: unknown field "
		"\"waitForPodsReady.enable\" (v1beta1 only: in v1beta2 "
		"waitForPodsReady is on unless the DisableWaitForPodsReady "
		"feature gate is set)",
		"t.yaml:6:3: fairSharing.enable: unknown field "
		"\"fairSharing.enable\" (v1beta1 only: in v1beta2 the "
		"fairSharing section's presence enables fair sharing)",
		"t.yaml:8:3: integrations.podOptions: unknown field "
		"\"integrations.podOptions\" (v1beta1 only: use "
		"managedJobsNamespaceSelector)",
		"t.yaml:9:1: queueVisibility: unknown field \"queueVisibility\" "
		"(v1beta1 only: deprecated; use VisibilityOnDemand)",
	};

	load_fails(V2 "waitForPodsReady:\n  enable: true\n"
		   "fairSharing:\n  enable: true\n"
		   "integrations:\n  podOptions: {}\n"
		   "queueVisibility:\n  updateIntervalSeconds: 5\n",
		   want, NCASES(want));
}
END_TEST

START_TEST(v1beta2_only_keys)
{
	static const char *const want[] = {
		"t.yaml:3:1: visibilityServer: unknown field "
		"\"visibilityServer\" (v1beta2 only)",
		"t.yaml:6:3: resources.quotaCheckStrategy: unknown field "
		"\"resources.quotaCheckStrategy\" (v1beta2 only)",
		"t.yaml:8:3: multiKueue.clusterProfile: unknown field "
		"\"multiKueue.clusterProfile\" (v1beta2 only)",
		"t.yaml:9:3: multiKueue.incrementalDispatcherConfig: unknown "
		"field \"multiKueue.incrementalDispatcherConfig\" (v1beta2 "
		"only)",
	};

	load_fails(V1 "visibilityServer:\n  bindPort: 8082\n"
		   "resources:\n  quotaCheckStrategy: BlockUndeclared\n"
		   "multiKueue:\n  clusterProfile: {}\n"
		   "  incrementalDispatcherConfig: {stepSize: 3}\n",
		   want, NCASES(want));
}
END_TEST

/* The rest of a file is still read when apiVersion is wrong, with keys
 * of both versions allowed; defaults and rules wait for a version. */
START_TEST(unknown_version_still_reads)
{
	static const char *const want[] = {
		"t.yaml:1:13: apiVersion: Unsupported value: \"v1\": supported "
		"values: \"config.kueue.x-k8s.io/v1beta1\", "
		"\"config.kueue.x-k8s.io/v1beta2\"",
		"t.yaml:4:9: webhook.port: Invalid value: \"x\": webhook.port in "
		"body must be of type integer",
		"t.yaml:5:1: nope: unknown field \"nope\"",
	};

	load_fails("apiVersion: v1\nkind: Configuration\nwebhook:\n"
		   "  port: x\nnope: 1\nqueueVisibility: {}\n"
		   "visibilityServer: {}\n", want, NCASES(want));
}
END_TEST

/* ------------------------------------------------------------------ */
/* managedJobsNamespaceSelector */

START_TEST(namespace_selector_rule)
{
	static const char *const everything[] = {
		"t.yaml:3:31: managedJobsNamespaceSelector: Invalid value: {}: "
		"should not match the \"kube-system\" namespace",
		"t.yaml:3:31: managedJobsNamespaceSelector: Invalid value: {}: "
		"should not match the \"kueue-system\" namespace",
	};
	static const char *const syntax[] = {
		"t.yaml:6:15: managedJobsNamespaceSelector.matchExpressions[0]."
		"operator: Invalid value: \"Equals\": not a valid selector "
		"operator",
		"t.yaml:8:5: managedJobsNamespaceSelector.matchLabels: Invalid "
		"value: \"bad key!\": name part must consist of alphanumeric "
		"characters, '-', '_' or '.', and must start and end with an "
		"alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
		"'123-abc', regex used for validation is "
		"'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
	};
	static const char *const values[] = {
		"t.yaml:5:40: managedJobsNamespaceSelector.matchExpressions[0]."
		"values: Forbidden: may not be specified when `operator` is "
		"'Exists' or 'DoesNotExist'",
		"t.yaml:6:5: managedJobsNamespaceSelector.matchExpressions[1]."
		"values: Required value: must be specified when `operator` is "
		"'In' or 'NotIn'",
		"t.yaml:7:11: managedJobsNamespaceSelector.matchExpressions[2]."
		"key: Invalid value: \"\": name part must be non-empty; name "
		"part must consist of alphanumeric characters, '-', '_' or '.', "
		"and must start and end with an alphanumeric character (e.g. "
		"'MyName',  or 'my.name',  or '123-abc', regex used for "
		"validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		"t.yaml:7:38: managedJobsNamespaceSelector.matchExpressions[2]."
		"values[0]: Invalid value: \"a b\": a valid label must be an "
		"empty string or consist of alphanumeric characters, '-', '_' "
		"or '.', and must start and end with an alphanumeric character "
		"(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
		"validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
	};
	static const char *const pod_ns[] = {
		"t.yaml:6:24: integrations.podOptions.namespaceSelector: "
		"Invalid value: {}: should not match the \"kube-system\" "
		"namespace",
		"t.yaml:6:24: integrations.podOptions.namespaceSelector: "
		"Invalid value: {}: should not match the \"kueue-system\" "
		"namespace",
	};
	struct config c;

	/* {} matches every namespace: both prohibited ones */
	load_fails(V2 "managedJobsNamespaceSelector: {}\n", everything,
		   NCASES(everything));
	/* v1beta1 checks it unconditionally too (v0.14) */
	load_fails1(V1 "managedJobsNamespaceSelector:\n  matchLabels:\n"
		    "    kubernetes.io/metadata.name: kube-system\n",
		    "t.yaml:4:3: managedJobsNamespaceSelector: Invalid value: "
		    "\"kubernetes.io/metadata.name=kube-system\": should not "
		    "match the \"kube-system\" namespace");
	/* excluding kube-system alone still matches Kueue's namespace */
	load_fails1(V2 "namespace: cueue\nmanagedJobsNamespaceSelector:\n"
		    "  matchExpressions:\n  - key: kubernetes.io/metadata.name\n"
		    "    operator: NotIn\n    values: [kube-system]\n",
		    "t.yaml:5:3: managedJobsNamespaceSelector: Invalid value: "
		    "\"kubernetes.io/metadata.name!=kube-system\": should "
		    "not match the \"cueue\" namespace");
	/* a selector on another label is fine when it excludes both */
	load_ok(V2 "managedJobsNamespaceSelector:\n  matchExpressions:\n"
		"  - {key: kubernetes.io/metadata.name, operator: NotIn,\n"
		"     values: [kube-system, kueue-system]}\n"
		"  - {key: team, operator: Exists}\n", &c);
	ck_assert_sel(&c.managed_jobs_ns_selector,
		      "kubernetes.io/metadata.name notin (kube-system,"
		      "kueue-system),team");
	config_release(&c);
	/* an opt-in selector (matchLabels): only labelled namespaces */
	load_ok(V2 "managedJobsNamespaceSelector:\n  matchLabels:\n"
		"    cueue.dev/managed: \"true\"\n", &c);
	ck_assert_sel(&c.managed_jobs_ns_selector, "cueue.dev/managed=true");
	{
		struct smap l = SMAP_INIT;

		smap_set(&l, "kubernetes.io/metadata.name", "team-a");
		ck_assert(!label_selector_matches(
			&c.managed_jobs_ns_selector.sel, &l));
		smap_set(&l, "cueue.dev/managed", "true");
		ck_assert(label_selector_matches(
			&c.managed_jobs_ns_selector.sel, &l));
		smap_release(&l);
	}
	config_release(&c);
	/* syntax errors are reported, and the match rule is skipped */
	load_fails(V2 "managedJobsNamespaceSelector:\n  matchExpressions:\n"
		   "  - key: kubernetes.io/metadata.name\n    operator: Equals\n"
		   "  matchLabels:\n    bad key!: x\n", syntax, NCASES(syntax));
	/* v1beta1 with the pod integration: podOptions' selector too */
	load_fails(V1 "integrations:\n  frameworks: [pod]\n  podOptions:\n"
		   "    namespaceSelector: {}\n", pod_ns, NCASES(pod_ns));
	/* values required for In, forbidden for Exists */
	load_fails(V2 "managedJobsNamespaceSelector:\n  matchExpressions:\n"
		   "  - {key: a, operator: Exists, values: [x]}\n"
		   "  - {key: kubernetes.io/metadata.name, operator: In}\n"
		   "  - {key: \"\", operator: In, values: [\"a b\"]}\n",
		   values, NCASES(values));
}
END_TEST

/* ------------------------------------------------------------------ */
/* limits and YAML */

START_TEST(too_big)
{
	size_t n = CONFIG_MAX_BYTES + 1;
	char *text = xmalloc(n + 1);
	char tmpl[] = "/tmp/cueue-config-XXXXXX";
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };
	char *want;
	FILE *f;
	int fd;

	/* a valid file padded with a comment to exactly the limit loads */
	memset(text, '#', n);
	memcpy(text, V2, strlen(V2));
	text[n - 1] = '\n';
	ck_assert_int_eq(config_load_string2(text, n - 1, &no_sa, &c, &fe, &e),
			 0);
	config_release(&c);
	/* one byte more is refused, as a string and as a file */
	ck_assert_int_eq(config_load_string2(text, n, &no_sa, &c, &fe, &e), -1);
	ck_assert_str_eq(e.msg, "t.yaml: file is larger than 1048576 bytes");
	ck_assert_str_eq(fe.v[0].text, e.msg);
	ck_assert_str_eq(fe.v[0].path, "");
	field_errors_release(&fe);
	fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "wb");
	ck_assert_uint_eq(fwrite(text, 1, n, f), n);
	fclose(f);
	ck_assert_int_eq(config_load_file(tmpl, &c, &e), -1);
	want = xasprintf("%s: file is larger than 1048576 bytes", tmpl);
	ck_assert_str_eq(e.msg, want);
	free(want);
	unlink(tmpl);
	/* and a file that is not there */
	ck_assert_int_eq(config_load_file2("/nonexistent/cueue.yaml", NULL, &c,
					   &fe, &e), -1);
	ck_assert_str_eq(e.msg, "/nonexistent/cueue.yaml: cannot read: No "
			 "such file or directory");
	ck_assert_uint_eq(fe.n, 1);
	field_errors_release(&fe);
	free(text);
}
END_TEST

static const struct fail_case bad_yaml_cases[] = {
	{ "unclosed flow", V2 "webhook: {port: 1\n",
	  "t.yaml:4:1: invalid YAML: did not find expected ',' or '}' (while "
	  "parsing a flow mapping at line 3, column 10)" },
	{ "tab indentation", V2 "webhook:\n\tport: 1\n",
	  "t.yaml:4:1: invalid YAML: found character that cannot start any "
	  "token (while scanning for the next token at line 4, column 1)" },
	{ "bad indentation", V2 "webhook:\n  port: 1\n host: x\n",
	  "t.yaml:5:2: invalid YAML: did not find expected key (while "
	  "parsing a block mapping at line 1, column 1)" },
	{ "invalid UTF-8", V2 "namespace: \xff\n",
	  "t.yaml:3:12: invalid YAML: invalid leading UTF-8 octet" },
	{ "two documents", V2 "---\n" V2,
	  "t.yaml:4:1: more than one YAML document: a configuration file "
	  "holds one" },
	{ "unknown anchor", V2 "integrations:\n  frameworks: *fw\n",
	  "t.yaml:4:15: unknown anchor 'fw' referenced" },
	{ "self-containing anchor", V2 "integrations:\n"
	  "  frameworks: &a [*a]\n",
	  "t.yaml:4:19: anchor 'a' value contains itself" },
	{ "empty file", "",
	  "t.yaml:1:1: apiVersion: Required value: the file holds no "
	  "configuration" },
	{ "only comments", "# nothing\n",
	  "t.yaml:1:1: apiVersion: Required value: the file holds no "
	  "configuration" },
	{ "root is a list", "- a\n- b\n",
	  "t.yaml:1:1: the configuration must be a mapping of fields (an "
	  "object)" },
};

START_TEST(bad_yaml_table)
{
	load_fails1(bad_yaml_cases[_i].text, bad_yaml_cases[_i].want);
}
END_TEST

/* YAML 1.1 as go-yaml v2 reads it, anchors, merges, empty documents. */
START_TEST(loaded_yaml_semantics)
{
	struct config c;

	load_ok("---\n# leading empty document\n---\n" V2
		"leaderElection:\n  leaderElect: no\n"
		"webhook:\n  port: 0x24c3\n"
		"clientConnection:\n  burst: 1e3\n  qps: 0.5\n"
		"integrations:\n  frameworks: &fw [batch/job, pod]\n"
		"  labelKeysToCopy: *fw\n"
		"managedJobsNamespaceSelector:\n  <<: {matchLabels: {env: prod}}\n"
		"...\n---\n", &c);
	ck_assert(!c.le_leader_elect);
	ck_assert_int_eq(c.webhook_port, 9411);
	ck_assert_int_eq(c.client_burst, 1000);
	ck_assert(c.client_qps == 0.5);
	ck_assert_uint_eq(c.int_label_keys_to_copy.n, 2);
	ck_assert_str_eq(c.int_label_keys_to_copy.v[1], "pod");
	ck_assert_sel(&c.managed_jobs_ns_selector, "env=prod");
	config_release(&c);
	/* a plain `y` key is the boolean true, as in Kueue */
	load_fails1(V2 "webhook:\n  y: 1\n",
		    "t.yaml:4:3: webhook.true: unknown field \"webhook.true\"");
}
END_TEST

/* Aliases cannot make the walk quadratic: 300 selector requirements,
 * each the same 5000-value alias, would be 1.5 million visits. */
START_TEST(alias_bomb)
{
	char *vals = xstrdup("");
	char *text;
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct config c;
	struct err e = { "" };

	for (int i = 0; i < 5000; i++) {
		char *t = xasprintf("%sv%d, ", vals, i);

		free(vals);
		vals = t;
	}
	text = xasprintf(V2 "managedJobsNamespaceSelector:\n"
			 "  matchExpressions:\n"
			 "  - &e {key: a, operator: In, values: [%s]}\n", vals);
	free(vals);
	for (int i = 0; i < 300; i++) {
		char *t = xasprintf("%s  - *e\n", text);

		free(text);
		text = t;
	}
	ck_assert_int_eq(load(text, &c, &fe, &e), -1);
	ck_assert_msg(fe.n == 1, "%s", t_fe_text(&fe));
	ck_assert(strstr(fe.v[0].text, ": Forbidden: more than 1048576 nodes "
			 "to read after alias expansion") != NULL);
	field_errors_release(&fe);
	free(text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* warnings: settings accepted and not honoured (config_warnings.c) */

/* Loads text as name and collects its warnings into w. */
static void load_warnings(const char *text, size_t len, const char *name,
			  struct config *c, struct config_warnings *w)
{
	struct config_opts o = { "", name };
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct err e = { "" };

	ck_assert_msg(config_load_string2(text, len, &o, c, &fe, &e) == 0,
		      "%s: %s", name, t_fe_text(&fe));
	ck_assert_uint_eq(config_warnings_collect(c, w), w->n);
}

/* Every warning as one text, for messages. */
static char *warnings_text(const struct config_warnings *w)
{
	char *all = xstrdup("");

	for (size_t i = 0; i < w->n; i++) {
		char *next = xasprintf("%s\n  %s", all, w->v[i].text);

		free(all);
		all = next;
	}
	return all;
}

/* The v1beta2 file sets each key once: exactly one warning each, in
 * the table's order, each with where the key is and the full text. */
START_TEST(warnings_every_key_v1beta2)
{
	static const char *const want[] = {
		"u2.yaml:8:1: pprofBindAddress: profiling is not implemented; "
		"nothing listens on this address",
		"u2.yaml:12:3: metrics.localQueueMetrics: not read yet; "
		"LocalQueue metrics follow the LocalQueueMetrics feature gate "
		"(on by default in a v1beta2 file) and cover every LocalQueue",
		"u2.yaml:14:3: metrics.customLabels: not implemented yet; "
		"metrics carry only Kueue's standard labels",
		"u2.yaml:18:3: controller.groupKindConcurrency: not used; this "
		"manager reconciles every kind on its one event-loop thread",
		"u2.yaml:20:3: controller.cacheSyncTimeout: not used; this "
		"manager waits for its first lists without a deadline, and "
		"/readyz fails until they are done",
		"u2.yaml:23:1: multiKueue: MultiKueue is not implemented yet; "
		"no Workload is dispatched to a worker cluster, and a "
		"ClusterQueue naming an admission check stays inactive",
		"u2.yaml:44:3: tls.minVersion: TLS 1.0 and 1.1 are never "
		"offered; the webhook serves TLS 1.2 and 1.3",
		"u2.yaml:46:3: tls.curvePreferences: 4588 (X25519MLKEM768) is "
		"not offered: the GnuTLS this manager is built with has no "
		"ML-KEM; the other groups listed are, or X25519 when none is "
		"left",
	};
	size_t len;
	char *text = fixture("unhonoured-v1beta2.yaml", &len), *all;
	struct config_warnings w = CONFIG_WARNINGS_INIT;
	struct config c;

	load_warnings(text, len, "u2.yaml", &c, &w);
	all = warnings_text(&w);
	ck_assert_msg(w.n == NCASES(want), "%zu warnings, want %zu:%s", w.n,
		      NCASES(want), all);
	for (size_t i = 0; i < w.n; i++) {
		ck_assert_str_eq(w.v[i].text, want[i]);
		/* the key is the one the text names, and it was given */
		ck_assert_ptr_nonnull(strstr(w.v[i].text, w.v[i].key));
		ck_assert(config_is_given(&c, w.v[i].key));
	}
	/* a second collection appends the same again: no hidden state */
	ck_assert_uint_eq(config_warnings_collect(&c, &w), NCASES(want));
	ck_assert_str_eq(w.v[NCASES(want)].text, want[0]);
	/* waitForPodsReady warns for the section the file gives, although
	 * v1beta2 turns it on by default too */
	ck_assert(c.wfpr_enable);
	free(all);
	config_warnings_release(&w);
	ck_assert_uint_eq(w.n, 0);
	config_release(&c);
	free(text);
}
END_TEST

/* The v1beta1 shape: podOptions instead of visibilityServer,
 * waitForPodsReady through enable, leaderElection through
 * its default leaderElect. Texts after the key are those of the v1beta2
 * file, so only keys and positions are listed (and podOptions' text). */
START_TEST(warnings_every_key_v1beta1)
{
	static const struct {
		const char *key;
		const char *pos;
	} want[] = {
		{ "pprofBindAddress", "7:1" },
		{ "metrics.localQueueMetrics", "11:3" },
		{ "metrics.customLabels", "13:3" },
		{ "controller.groupKindConcurrency", "17:3" },
		{ "controller.cacheSyncTimeout", "19:3" },
		{ "integrations.podOptions", "23:3" },
		{ "multiKueue", "27:1" },
		{ "tls.minVersion", "47:3" },
		{ "tls.curvePreferences", "49:3" },
	};
	size_t len1, len2;
	char *t1 = fixture("unhonoured-v1beta1.yaml", &len1);
	char *t2 = fixture("unhonoured-v1beta2.yaml", &len2), *all;
	struct config_warnings w1 = CONFIG_WARNINGS_INIT;
	struct config_warnings w2 = CONFIG_WARNINGS_INIT;
	struct config c1, c2;

	load_warnings(t1, len1, "u1.yaml", &c1, &w1);
	load_warnings(t2, len2, "u2.yaml", &c2, &w2);
	all = warnings_text(&w1);
	ck_assert_msg(w1.n == NCASES(want), "%zu warnings, want %zu:%s",
		      w1.n, NCASES(want), all);
	for (size_t i = 0; i < w1.n; i++) {
		const char *rest = "integrations.podOptions: not read; it "
			"scopes the pod integration, and this manager "
			"reconciles batch/v1 Jobs only";
		char *text;

		ck_assert_str_eq(w1.v[i].key, want[i].key);
		for (size_t j = 0; j < w2.n; j++)
			if (!strcmp(w2.v[j].key, want[i].key))
				rest = strstr(w2.v[j].text, want[i].key);
		text = xasprintf("u1.yaml:%s: %s", want[i].pos, rest);
		ck_assert_str_eq(w1.v[i].text, text);
		free(text);
	}
	ck_assert(!c1.fs_enable && c1.le_leader_elect);
	ck_assert(config_is_given(&c1, "leaderElection"));
	ck_assert(!config_is_given(&c1, "leaderElection.leaderElect"));
	free(all);
	config_warnings_release(&w1);
	config_warnings_release(&w2);
	config_release(&c1);
	config_release(&c2);
	free(t1);
	free(t2);
}
END_TEST

/* The 1-based number of the first line of file path that starts with
 * prefix (the test fails when there is none). */
static size_t line_of(const char *path, const char *prefix)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t n = 0;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (!strncmp(line, prefix, strlen(prefix))) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	ck_abort_msg("%s: no line starts with %s", path, prefix);
	return 0;
}

/* No warning without a file, for a minimal file, or for keys the file
 * does not set: defaults never warn, though v1beta2 turns
 * waitForPodsReady on and both versions turn leaderElect on. The
 * shipped file warns for exactly the two it sets. */
START_TEST(warnings_none_for_defaults)
{
	struct config_warnings w = CONFIG_WARNINGS_INIT;
	struct config c;
	char *path, *want;
	struct config_opts o = { "", NULL };
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct err e = { "" };

	config_defaults(&c, CONFIG_API_V1BETA2, &no_sa);
	ck_assert(c.wfpr_enable && c.le_leader_elect);
	ck_assert_uint_eq(c.ngiven, 0);
	ck_assert(!config_is_given(&c, "waitForPodsReady"));
	ck_assert_uint_eq(config_warnings_collect(&c, &w), 0);
	config_release(&c);
	config_defaults(&c, CONFIG_API_V1BETA1, &no_sa);
	ck_assert_uint_eq(config_warnings_collect(&c, &w), 0);
	config_release(&c);
	load_warnings(V2, strlen(V2), "t.yaml", &c, &w);
	ck_assert(c.wfpr_enable && c.le_leader_elect);
	ck_assert_uint_eq(c.ngiven, 0);
	config_release(&c);
	load_warnings(V1, strlen(V1), "t.yaml", &c, &w);
	config_release(&c);
	ck_assert_uint_eq(w.n, 0);

	path = t_src_path("manifests/config/controller_manager_config.yaml");
	ck_assert_msg(config_load_file2(path, &o, &c, &fe, &e) == 0, "%s",
		      e.msg);
	/* leaderElection is honoured (controller/election.h) */
	ck_assert_uint_eq(config_warnings_collect(&c, &w), 1);
	ck_assert_str_eq(w.v[0].key, "controller.groupKindConcurrency");
	want = xasprintf("%s:%zu:3: controller.groupKindConcurrency: not "
			 "used;", path,
			 line_of(path, "  groupKindConcurrency:"));
	ck_assert_msg(!strncmp(w.v[0].text, want, strlen(want)), "%s",
		      w.v[0].text);
	free(want);
	config_warnings_release(&w);
	config_release(&c);
	free(path);
}
END_TEST

/* One key at a time: the value decides. Set to what the manager does
 * anyway (off, empty, null, a TLS version it serves), no warning; set to
 * something it would have to act on, exactly one, for that key. */
static const struct {
	const char *text;
	const char *key; /* the one warning; NULL: none */
} when_cases[] = {
	{ V2 "leaderElection:\n  leaderElect: false\n  leaseDuration: 30s\n",
	  NULL },
	{ V2 "leaderElection:\n  leaseDuration: 30s\n", NULL }, /* honoured */
	{ V1 "leaderElection:\n  leaderElect: true\n", NULL },
	{ V1 "waitForPodsReady:\n  enable: false\n  timeout: 5m\n", NULL },
	{ V1 "waitForPodsReady:\n  enable: true\n", NULL }, /* honoured */
	{ V2 "featureGates: {DisableWaitForPodsReady: true}\n"
	  "waitForPodsReady:\n  timeout: 10m\n", NULL },
	{ V2 "waitForPodsReady: {}\n", NULL },
	{ V1 "fairSharing:\n  enable: false\n", NULL },
	{ V2 "fairSharing: {}\n", NULL }, /* honoured */
	{ V2 "pprofBindAddress: \"0\"\n", NULL },
	{ V2 "pprofBindAddress: \"\"\n", NULL },
	{ V2 "pprofBindAddress: :6060\n", "pprofBindAddress" },
	{ V2 "controller:\n  groupKindConcurrency: {}\n", NULL },
	{ V2 "resources:\n  excludeResourcePrefixes: []\n"
	  "  transformations: []\n  deviceClassMappings: []\n", NULL },
	{ V2 "metrics:\n  customLabels: []\n", NULL },
	{ V2 "objectRetentionPolicies:\n  workloads: {}\n", NULL },
	{ V2 "tls:\n  minVersion: VersionTLS12\n  cipherSuites: []\n"
	  "  curvePreferences: []\n", NULL },
	{ V2 "tls:\n  minVersion: VersionTLS13\n", NULL },
	{ V2 "tls:\n  minVersion: \"\"\n", NULL },
	{ V2 "tls:\n  minVersion: VersionTLS10\n", "tls.minVersion" },
	/* null is Go's nil: not set */
	{ V2 "leaderElection: ~\nwaitForPodsReady:\nmultiKueue: null\n"
	  "visibilityServer:\nadmissionFairSharing: ~\n", NULL },
	{ V2 "multiKueue: {}\n", "multiKueue" },
	{ V2 "admissionFairSharing: {}\n", NULL }, /* honoured */
	{ V2 "visibilityServer: {}\n", NULL }, /* honoured */
	{ V2 "controller:\n  cacheSyncTimeout: 0\n",
	  "controller.cacheSyncTimeout" },
	{ V2 "objectRetentionPolicies:\n  workloads:\n    afterFinished: 0s\n",
	  NULL }, /* honoured */
	/* honoured keys never warn */
	{ V2 "namespace: ns\nmanageJobsWithoutQueueName: true\n"
	  "clientConnection: {qps: 5, burst: 10}\nwebhook: {port: 9444}\n"
	  "metrics: {bindAddress: \":8080\", enableClusterQueueResources: "
	  "true}\nhealth: {healthProbeBindAddress: \":8082\"}\n"
	  "internalCertManagement: {enable: false}\n"
	  "integrations: {frameworks: [batch/job], labelKeysToCopy: [a]}\n"
	  "resources: {quotaCheckStrategy: IgnoreUndeclared}\n"
	  "featureGates: {PartialAdmission: false}\n", NULL },
};

START_TEST(warnings_when)
{
	struct config_warnings w = CONFIG_WARNINGS_INIT;
	struct config c;
	char *all;

	load_warnings(when_cases[_i].text, strlen(when_cases[_i].text),
		      "t.yaml", &c, &w);
	all = warnings_text(&w);
	if (!when_cases[_i].key) {
		ck_assert_msg(w.n == 0, "case %d: want none:%s", _i, all);
	} else {
		ck_assert_msg(w.n == 1, "case %d: want %s:%s", _i,
			      when_cases[_i].key, all);
		ck_assert_str_eq(w.v[0].key, when_cases[_i].key);
	}
	free(all);
	config_warnings_release(&w);
	config_release(&c);
}
END_TEST

Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = tcase_create("defaults");
	tcase_add_test(tc, defaults_v1beta1);
	tcase_add_test(tc, defaults_v1beta2);
	tcase_add_test(tc, namespace_from_file);
	tcase_add_test(tc, zero_values);
	tcase_add_test(tc, field_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("samples");
	tcase_add_test(tc, shipped_file_loads_clean);
	tcase_add_test(tc, v1beta1_sample);
	tcase_add_test(tc, v1beta2_sample);
	tcase_add_test(tc, tls_priorities);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, every_error_with_its_position);
	tcase_add_test(tc, error_cap);
	tcase_add_test(tc, written_value_before_derived);
	tcase_add_test(tc, three_errors_all_reported);
	tcase_add_test(tc, long_first_line_cut);
	tcase_add_loop_test(tc, type_table, 0, NCASES(type_cases));
	tcase_add_test(tc, validation_rules);
	suite_add_tcase(s, tc);

	tc = tcase_create("durations-quantities");
	tcase_add_loop_test(tc, go_durations, 0, NCASES(dur_cases));
	tcase_add_test(tc, duration_units);
	tcase_add_test(tc, quantities);
	suite_add_tcase(s, tc);

	tc = tcase_create("feature-gates");
	tcase_add_test(tc, feature_gates);
	suite_add_tcase(s, tc);

	tc = tcase_create("versions");
	tcase_add_test(tc, v1beta1_only_keys);
	tcase_add_test(tc, v1beta2_only_keys);
	tcase_add_test(tc, unknown_version_still_reads);
	suite_add_tcase(s, tc);

	tc = tcase_create("namespace-selector");
	tcase_add_test(tc, namespace_selector_rule);
	suite_add_tcase(s, tc);

	tc = tcase_create("warnings");
	tcase_add_test(tc, warnings_every_key_v1beta2);
	tcase_add_test(tc, warnings_every_key_v1beta1);
	tcase_add_test(tc, warnings_none_for_defaults);
	tcase_add_loop_test(tc, warnings_when, 0, NCASES(when_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("limits-yaml");
	tcase_add_test(tc, too_big);
	tcase_add_loop_test(tc, bad_yaml_table, 0, NCASES(bad_yaml_cases));
	tcase_add_test(tc, loaded_yaml_semantics);
	tcase_add_test(tc, alias_bomb);
	tcase_set_timeout(tc, 120); /* sanitizers on a busy machine */
	suite_add_tcase(s, tc);
	return s;
}
