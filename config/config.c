/*
 * config: the manager's Configuration file (see config.h), loaded the way
 * nginx loads its configuration (STYLE P11): one static table row per
 * field gives its dotted key, its type, offsetof its struct config member
 * and its default in each API version; generic setters (config_types.c)
 * parse each type while the YAML (config_yaml.c) is walked; defaults are
 * applied after the walk; validation (config_validate.c) runs last. Every
 * problem is collected with its line and column and all are reported: the
 * problems of values the file wrote first, then those of values it did
 * not (defaults, derived values), each group in file order.
 *
 * Rules of cueue's own, beside Kueue's pkg/config/validation.go (each is
 * a value Kueue's manager would fail on later, or one cueue cannot serve):
 *  1. webhook.port and visibilityServer.bindPort are 1..65535.
 *  2. With leaderElect: leaseDuration > renewDeadline > 1.2 x retryPeriod
 *     > 0 (client-go's leader elector refuses otherwise), resourceLock
 *     "leases" (the only lock client-go still has).
 *  3. controller.groupKindConcurrency values >= 1; cacheSyncTimeout >= 0
 *     (0 means the 2m default, as in controller-runtime).
 *  4. clientConnection: burst >= 1 when qps > 0 (client-go's rule).
 *  5. metrics.customLabels: <= 8 entries, Prometheus-safe unique names,
 *     at most one source, qualified source keys.
 *  6. resources: a transformation needs an input and non-negative
 *     outputs; deviceClassMappings use qualified, unique names and map
 *     each device class once.
 *  7. multiKueue: externalFrameworks[].name is "Kind.version.group",
 *     unique; incrementalDispatcherConfig.stepSize >= 1;
 *     credentialsProviders have unique, non-empty names.
 *  8. tls: a known minVersion and Go's cipher suite names.
 *  9. visibilityServer.bindAddress is "" or an IP address.
 * 10. namespace, when not "", is a DNS-1123 label (it names a namespace).
 * 11. One YAML document per file (Kueue reads the first and ignores the
 *     rest, which hides mistakes).
 */
#include "config/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "config/config_int.h"
#include "model/respolicy.h"

_Static_assert(sizeof(enum config_requeue_timestamp) == sizeof(int) &&
	       sizeof(enum config_transform_strategy) == sizeof(int) &&
	       sizeof(enum config_quota_check) == sizeof(int) &&
	       sizeof(enum config_tls_version) == sizeof(int),
	       "CFG_ENUM members are stored through int *");

/* ------------------------------------------------------------------ */
/* Enums */

static const char *const requeue_names[] = { "Creation", "Eviction", NULL };
static const int requeue_values[] = { CONFIG_REQUEUE_CREATION,
				      CONFIG_REQUEUE_EVICTION };
static const struct cfg_enum requeue_enum = { requeue_names, requeue_values,
					      false };

static const char *const transform_names[] = { "Retain", "Replace", NULL };
static const int transform_values[] = { CONFIG_TRANSFORM_RETAIN,
					CONFIG_TRANSFORM_REPLACE };
static const struct cfg_enum transform_enum = { transform_names,
						transform_values, false };

static const char *const quota_names[] = { "BlockUndeclared",
					   "IgnoreUndeclared", NULL };
static const int quota_values[] = { CONFIG_QUOTA_BLOCK_UNDECLARED,
				    CONFIG_QUOTA_IGNORE_UNDECLARED };
static const struct cfg_enum quota_enum = { quota_names, quota_values,
					    false };

static const char *const tls_names[] = { "VersionTLS10", "VersionTLS11",
					 "VersionTLS12", "VersionTLS13", NULL };
static const int tls_values[] = { CONFIG_TLS_10, CONFIG_TLS_11, CONFIG_TLS_12,
				  CONFIG_TLS_13 };
static const struct cfg_enum tls_enum = { tls_names, tls_values, true };

/* ------------------------------------------------------------------ */
/* Lists of structs: rows relative to one element */

#define LIST(rows, type) { rows, sizeof(rows) / sizeof(rows[0]), sizeof(type) }

#define TR(m) offsetof(struct config_transformation, m)
static const struct cfg_field transformation_rows[] = {
	{ "input", CFG_STRING, TR(input), NULL, NULL, CFG_BOTH, NULL, NULL },
	{ "strategy", CFG_ENUM, TR(strategy), NULL, NULL, CFG_BOTH,
	  &transform_enum, NULL },
	{ "multiplyBy", CFG_STRING, TR(multiply_by), NULL, NULL, CFG_BOTH,
	  NULL, NULL },
	{ "outputs", CFG_QUANTITYMAP, TR(outputs), NULL, NULL, CFG_BOTH, NULL,
	  NULL },
};
static const struct cfg_list transformation_list =
	LIST(transformation_rows, struct config_transformation);

#define DC(m) offsetof(struct config_device_class_mapping, m)
static const struct cfg_field device_class_rows[] = {
	{ "name", CFG_STRING, DC(name), NULL, NULL, CFG_BOTH, NULL, NULL },
	{ "deviceClassNames", CFG_STRLIST, DC(device_classes), NULL, NULL,
	  CFG_BOTH, NULL, NULL },
};
static const struct cfg_list device_class_list =
	LIST(device_class_rows, struct config_device_class_mapping);

#define CL(m) offsetof(struct config_custom_label, m)
static const struct cfg_field custom_label_rows[] = {
	{ "name", CFG_STRING, CL(name), NULL, NULL, CFG_BOTH, NULL, NULL },
	{ "sourceLabelKey", CFG_STRING, CL(source_label_key), NULL, NULL,
	  CFG_BOTH, NULL, NULL },
	{ "sourceAnnotationKey", CFG_STRING, CL(source_annotation_key), NULL,
	  NULL, CFG_BOTH, NULL, NULL },
};
static const struct cfg_list custom_label_list =
	LIST(custom_label_rows, struct config_custom_label);

static const struct cfg_field mk_framework_rows[] = {
	{ "name", CFG_STRING, offsetof(struct config_mk_framework, name), NULL,
	  NULL, CFG_BOTH, NULL, NULL },
};
static const struct cfg_list mk_framework_list =
	LIST(mk_framework_rows, struct config_mk_framework);

#define CP(m) offsetof(struct config_credentials_provider, m)
static const struct cfg_field credentials_rows[] = {
	{ "name", CFG_STRING, CP(name), NULL, NULL, CFG_BOTH, NULL, NULL },
	{ "execConfig", CFG_OPAQUE, CP(has_exec_config), NULL, NULL, CFG_BOTH,
	  NULL, NULL },
};
static const struct cfg_list credentials_list =
	LIST(credentials_rows, struct config_credentials_provider);

/* ------------------------------------------------------------------ */
/* The table: every key of both versions, parents before children */

#define M(m) offsetof(struct config, m)
#define V1 CFG_V1
#define V2 CFG_V2
#define BOTH CFG_BOTH
#define Z CFG_ZERO
#define HINT_WFPR_ENABLE "in v1beta2 waitForPodsReady is on unless the " \
	"DisableWaitForPodsReady feature gate is set"
#define HINT_FS_ENABLE "in v1beta2 the fairSharing section's presence " \
	"enables fair sharing"
#define HINT_PODOPTS "use managedJobsNamespaceSelector"
#define HINT_QV "deprecated; use VisibilityOnDemand"

static const struct cfg_field fields[] = {
/*        key                          type          member
 *        v1beta1 default, v1beta2 default, flags, aux, hint */
	{ "namespace", CFG_STRING, M(namespace), NULL, NULL, BOTH, NULL,
	  NULL }, /* default: the service-account file (apply_defaults) */
	{ "manageJobsWithoutQueueName", CFG_BOOL,
	  M(manage_jobs_without_queue_name), "false", "false", BOTH, NULL,
	  NULL },
	{ "managedJobsNamespaceSelector", CFG_SELECTOR,
	  M(managed_jobs_ns_selector), NULL, NULL, BOTH, NULL, NULL },
	{ "featureGates", CFG_BOOLMAP, M(feature_gates), NULL, NULL, BOTH,
	  NULL, NULL },
	{ "pprofBindAddress", CFG_STRING, M(pprof_bind_address), "", "", BOTH,
	  NULL, NULL },

	{ "webhook", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "webhook.port", CFG_INT, M(webhook_port), "9443", "9443", BOTH, NULL,
	  NULL },
	{ "webhook.host", CFG_STRING, M(webhook_host), "", "", BOTH, NULL,
	  NULL },
	{ "webhook.certDir", CFG_STRING, M(webhook_cert_dir),
	  "/tmp/k8s-webhook-server/serving-certs",
	  "/tmp/k8s-webhook-server/serving-certs", BOTH | Z, NULL, NULL },

	{ "leaderElection", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "leaderElection.leaderElect", CFG_BOOL, M(le_leader_elect), "true",
	  "true", BOTH, NULL, NULL },
	{ "leaderElection.leaseDuration", CFG_DURATION, M(le_lease_duration_ms),
	  "15s", "15s", BOTH | Z, NULL, NULL },
	{ "leaderElection.renewDeadline", CFG_DURATION, M(le_renew_deadline_ms),
	  "10s", "10s", BOTH | Z, NULL, NULL },
	{ "leaderElection.retryPeriod", CFG_DURATION, M(le_retry_period_ms),
	  "2s", "2s", BOTH | Z, NULL, NULL },
	{ "leaderElection.resourceLock", CFG_STRING, M(le_resource_lock),
	  "leases", "leases", BOTH | Z, NULL, NULL },
	{ "leaderElection.resourceName", CFG_STRING, M(le_resource_name),
	  "c1f6bfd2.kueue.x-k8s.io", "c1f6bfd2.kueue.x-k8s.io", BOTH | Z, NULL,
	  NULL },
	{ "leaderElection.resourceNamespace", CFG_STRING,
	  M(le_resource_namespace), "", "", BOTH, NULL, NULL },

	{ "metrics", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "metrics.bindAddress", CFG_STRING, M(metrics_bind_address), ":8443",
	  ":8443", BOTH | Z, NULL, NULL },
	{ "metrics.enableClusterQueueResources", CFG_BOOL,
	  M(metrics_enable_cq_resources), "false", "false", BOTH, NULL, NULL },
	{ "metrics.localQueueMetrics", CFG_SECTION, 0, NULL, NULL, BOTH, NULL,
	  NULL },
	{ "metrics.localQueueMetrics.enable", CFG_BOOL, M(metrics_lq_enable),
	  NULL, NULL, BOTH, NULL, NULL }, /* apply_defaults */
	{ "metrics.localQueueMetrics.localQueueSelector", CFG_SELECTOR,
	  M(metrics_lq_selector), NULL, NULL, BOTH, NULL, NULL },
	{ "metrics.customLabels", CFG_LIST, M(metrics_custom_labels), NULL,
	  NULL, BOTH, &custom_label_list, NULL },

	{ "health", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "health.healthProbeBindAddress", CFG_STRING,
	  M(health_probe_bind_address), ":8081", ":8081", BOTH | Z, NULL,
	  NULL },
	{ "health.readinessEndpointName", CFG_STRING,
	  M(health_readiness_endpoint), "readyz", "readyz", BOTH | Z, NULL,
	  NULL },
	{ "health.livenessEndpointName", CFG_STRING,
	  M(health_liveness_endpoint), "healthz", "healthz", BOTH | Z, NULL,
	  NULL },

	{ "controller", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "controller.groupKindConcurrency", CFG_INTMAP,
	  M(controller_gk_concurrency), NULL, NULL, BOTH, NULL, NULL },
	{ "controller.cacheSyncTimeout", CFG_NANOS,
	  M(controller_cache_sync_timeout_ms), "2m", "2m", BOTH | Z, NULL,
	  NULL },

	{ "clientConnection", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "clientConnection.qps", CFG_FLOAT32, M(client_qps), "20", "300",
	  BOTH, NULL, NULL },
	{ "clientConnection.burst", CFG_INT32, M(client_burst), "30", "500",
	  BOTH, NULL, NULL },

	{ "internalCertManagement", CFG_SECTION, 0, NULL, NULL, BOTH, NULL,
	  NULL },
	{ "internalCertManagement.enable", CFG_BOOL, M(icm_enable), "true",
	  "true", BOTH, NULL, NULL },
	{ "internalCertManagement.webhookServiceName", CFG_STRING,
	  M(icm_webhook_service_name), "kueue-webhook-service",
	  "kueue-webhook-service", BOTH, NULL, NULL },
	{ "internalCertManagement.webhookSecretName", CFG_STRING,
	  M(icm_webhook_secret_name), "kueue-webhook-server-cert",
	  "kueue-webhook-server-cert", BOTH, NULL, NULL },

	{ "waitForPodsReady", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "waitForPodsReady.enable", CFG_BOOL, M(wfpr_enable), "false", NULL,
	  V1, NULL, HINT_WFPR_ENABLE }, /* v1beta2: apply_defaults */
	{ "waitForPodsReady.timeout", CFG_DURATION, M(wfpr_timeout_ms), "5m",
	  "30m", BOTH | CFG_ZERO2, NULL, NULL },
	{ "waitForPodsReady.blockAdmission", CFG_BOOL, M(wfpr_block_admission),
	  NULL, "false", BOTH, NULL, NULL }, /* v1beta1: = enable */
	{ "waitForPodsReady.recoveryTimeout", CFG_DURATION,
	  M(wfpr_recovery_timeout_ms), NULL, NULL, BOTH, NULL,
	  NULL }, /* v1beta2: = timeout */
	{ "waitForPodsReady.requeuingStrategy", CFG_SECTION, 0, NULL, NULL,
	  BOTH, NULL, NULL },
	{ "waitForPodsReady.requeuingStrategy.timestamp", CFG_ENUM,
	  M(wfpr_requeue_timestamp), "Eviction", "Eviction", BOTH,
	  &requeue_enum, NULL },
	{ "waitForPodsReady.requeuingStrategy.backoffLimitCount", CFG_INT32,
	  M(wfpr_backoff_limit_count), NULL, NULL, BOTH, NULL, NULL },
	{ "waitForPodsReady.requeuingStrategy.backoffBaseSeconds", CFG_INT32,
	  M(wfpr_backoff_base_seconds), "60", "60", BOTH, NULL, NULL },
	{ "waitForPodsReady.requeuingStrategy.backoffMaxSeconds", CFG_INT32,
	  M(wfpr_backoff_max_seconds), "3600", "3600", BOTH, NULL, NULL },

	{ "integrations", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "integrations.frameworks", CFG_STRLIST, M(int_frameworks),
	  "batch/job", "batch/job", BOTH | Z, NULL, NULL },
	{ "integrations.externalFrameworks", CFG_STRLIST,
	  M(int_external_frameworks), NULL, NULL, BOTH, NULL, NULL },
	{ "integrations.labelKeysToCopy", CFG_STRLIST,
	  M(int_label_keys_to_copy), NULL, NULL, BOTH, NULL, NULL },
	{ "integrations.podOptions", CFG_SECTION, 0, NULL, NULL, V1, NULL,
	  HINT_PODOPTS },
	{ "integrations.podOptions.namespaceSelector", CFG_SELECTOR,
	  M(int_pod_ns_selector), NULL, NULL, V1, NULL, HINT_PODOPTS },
	{ "integrations.podOptions.podSelector", CFG_SELECTOR,
	  M(int_pod_selector), NULL, NULL, V1, NULL, HINT_PODOPTS },

	{ "queueVisibility", CFG_SECTION, 0, NULL, NULL, V1, NULL, HINT_QV },
	{ "queueVisibility.clusterQueues", CFG_SECTION, 0, NULL, NULL, V1,
	  NULL, HINT_QV },
	{ "queueVisibility.clusterQueues.maxCount", CFG_INT32, M(qv_max_count),
	  "10", "10", V1, NULL, HINT_QV },
	{ "queueVisibility.updateIntervalSeconds", CFG_INT32,
	  M(qv_update_interval_seconds), "5", "5", V1 | Z, NULL, HINT_QV },

	{ "multiKueue", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "multiKueue.gcInterval", CFG_DURATION, M(mk_gc_interval_ms), "1m",
	  "1m", BOTH, NULL, NULL },
	{ "multiKueue.origin", CFG_STRING, M(mk_origin), "multikueue",
	  "multikueue", BOTH | Z, NULL, NULL },
	{ "multiKueue.workerLostTimeout", CFG_DURATION,
	  M(mk_worker_lost_timeout_ms), "15m", "15m", BOTH, NULL, NULL },
	{ "multiKueue.dispatcherName", CFG_STRING, M(mk_dispatcher_name),
	  "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
	  "kueue.x-k8s.io/multikueue-dispatcher-all-at-once", BOTH, NULL,
	  NULL },
	{ "multiKueue.externalFrameworks", CFG_LIST, M(mk_external_frameworks),
	  NULL, NULL, BOTH, &mk_framework_list, NULL },
	{ "multiKueue.incrementalDispatcherConfig", CFG_SECTION, 0, NULL, NULL,
	  V2, NULL, NULL },
	{ "multiKueue.incrementalDispatcherConfig.stepSize", CFG_INT32,
	  M(mk_incremental_step_size), "3", "3", V2, NULL, NULL },
	{ "multiKueue.clusterProfile", CFG_SECTION, 0, NULL, NULL, V2, NULL,
	  NULL },
	{ "multiKueue.clusterProfile.credentialsProviders", CFG_LIST,
	  M(mk_credentials_providers), NULL, NULL, V2, &credentials_list,
	  NULL },

	{ "fairSharing", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "fairSharing.enable", CFG_BOOL, M(fs_enable), "false", NULL, V1,
	  NULL, HINT_FS_ENABLE }, /* v1beta2: the section's presence */
	{ "fairSharing.preemptionStrategies", CFG_STRLIST,
	  M(fs_preemption_strategies), NULL, NULL, BOTH, NULL,
	  NULL }, /* apply_defaults, when enabled */

	{ "admissionFairSharing", CFG_SECTION, 0, NULL, NULL, BOTH, NULL,
	  NULL },
	{ "admissionFairSharing.usageHalfLifeTime", CFG_DURATION,
	  M(afs_usage_half_life_ms), "0s", "0s", BOTH, NULL, NULL },
	{ "admissionFairSharing.usageSamplingInterval", CFG_DURATION,
	  M(afs_usage_sampling_ms), "5m", "5m", BOTH | Z, NULL, NULL },
	{ "admissionFairSharing.resourceWeights", CFG_FLOATMAP,
	  M(afs_resource_weights), NULL, NULL, BOTH, NULL, NULL },

	{ "resources", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "resources.excludeResourcePrefixes", CFG_STRLIST,
	  M(res_exclude_prefixes), NULL, NULL, BOTH, NULL, NULL },
	{ "resources.transformations", CFG_LIST, M(res_transformations), NULL,
	  NULL, BOTH, &transformation_list, NULL },
	{ "resources.deviceClassMappings", CFG_LIST,
	  M(res_device_class_mappings), NULL, NULL, BOTH, &device_class_list,
	  NULL },
	{ "resources.quotaCheckStrategy", CFG_ENUM, M(res_quota_check),
	  "BlockUndeclared", "BlockUndeclared", V2, &quota_enum, NULL },

	{ "objectRetentionPolicies", CFG_SECTION, 0, NULL, NULL, BOTH, NULL,
	  NULL },
	{ "objectRetentionPolicies.workloads", CFG_SECTION, 0, NULL, NULL, BOTH,
	  NULL, NULL },
	{ "objectRetentionPolicies.workloads.afterFinished", CFG_DURATION,
	  M(orp_after_finished_ms), NULL, NULL, BOTH, NULL, NULL },
	{ "objectRetentionPolicies.workloads.afterDeactivatedByKueue",
	  CFG_DURATION, M(orp_after_deactivated_ms), NULL, NULL, BOTH, NULL,
	  NULL },

	{ "tls", CFG_SECTION, 0, NULL, NULL, BOTH, NULL, NULL },
	{ "tls.minVersion", CFG_ENUM, M(tls_min_version), NULL, NULL, BOTH,
	  &tls_enum, NULL },
	{ "tls.cipherSuites", CFG_STRLIST, M(tls_cipher_suites), NULL, NULL,
	  BOTH, NULL, NULL },
	{ "tls.curvePreferences", CFG_INT32LIST, M(tls_curve_preferences), NULL,
	  NULL, BOTH, NULL, NULL },

	{ "visibilityServer", CFG_SECTION, 0, NULL, NULL, V2, NULL, NULL },
	{ "visibilityServer.bindAddress", CFG_STRING, M(vis_bind_address), "",
	  "", V2, NULL, NULL },
	{ "visibilityServer.bindPort", CFG_INT32, M(vis_bind_port), "8082",
	  "8082", V2, NULL, NULL },
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

size_t config_field_count(void)
{
	return NFIELDS + transformation_list.nrows + device_class_list.nrows +
	       custom_label_list.nrows + mk_framework_list.nrows +
	       credentials_list.nrows;
}

const struct cfg_field *config_row(const char *key)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (!strcmp(fields[i].key, key))
			return &fields[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The walk */

static unsigned version_bit(enum config_api api)
{
	return api == CONFIG_API_V1BETA1 ? CFG_V1
	       : api == CONFIG_API_V1BETA2 ? CFG_V2 : CFG_BOTH;
}

static void unknown_field(struct cfg_ctx *x, const struct cfg_node *k,
			  const char *path, const struct cfg_field *f)
{
	const char *only;

	if (!f) {
		config_add(x, k, FE_NOT_FOUND, path, "unknown field \"%s\"",
			   path);
		return;
	}
	only = f->flags & CFG_V1 ? "v1beta1 only" : "v1beta2 only";
	if (f->hint)
		config_add(x, k, FE_NOT_FOUND, path,
			   "unknown field \"%s\" (%s: %s)", path, only,
			   f->hint);
	else
		config_add(x, k, FE_NOT_FOUND, path,
			   "unknown field \"%s\" (%s)", path, only);
}

static const struct cfg_field *find_row(const struct cfg_field *rows,
					size_t nrows, const char *key)
{
	for (size_t i = 0; i < nrows; i++)
		if (!strcmp(rows[i].key, key))
			return &rows[i];
	return NULL;
}

static bool is_null_value(const struct cfg_node *n)
{
	struct cfg_scalar sc;

	return n->kind == CFG_N_SCALAR && n->style != CFG_S_QUOTED &&
	       config_resolve(NULL, n, "", &sc) == 0 && sc.type == CFG_SC_NULL;
}

void config_walk_map(struct cfg_ctx *x, size_t m, const struct cfg_field *rows,
		     size_t nrows, const char *prefix, const char *path,
		     char *base, bool *seen)
{
	const struct cfg_node *node = &x->doc.v[m];
	unsigned vbit = version_bit(x->api);
	bool root = rows == fields && !*prefix;
	size_t np = 0, *pairs = config_map_pairs(x, node, path, &np);
	char **keys = xcalloc(np ? np : 1, sizeof(*keys));
	bool *dup;

	for (size_t i = 0; i < np; i++)
		keys[i] = config_key_text(x, &x->doc.v[pairs[2 * i]], path);
	dup = config_find_dups(keys, np);
	for (size_t i = 0; i < np; i++) {
		const struct cfg_node *k = &x->doc.v[pairs[2 * i]];
		const struct cfg_node *v = &x->doc.v[pairs[2 * i + 1]];
		const struct cfg_field *f;
		char *rel, *p;
		size_t before;

		if (!keys[i])
			continue;
		if (!config_visit(x, k))
			break;
		rel = *prefix ? xasprintf("%s.%s", prefix, keys[i])
			      : xstrdup(keys[i]);
		p = *path ? xasprintf("%s.%s", path, keys[i])
			  : xstrdup(keys[i]);
		f = find_row(rows, nrows, rel);
		if (dup[i]) {
			fe_duplicate(&x->fe, p, keys[i]);
			config_mark(x, k, 0, 0);
		} else if (root && (!strcmp(rel, "apiVersion") ||
				    !strcmp(rel, "kind"))) {
			/* read by type_meta() */
		} else if (!f || !(f->flags & vbit)) {
			unknown_field(x, k, p, f);
		} else if (!is_null_value(v)) {
			config_note_pos(x, p, v);
			before = x->fe.n;
			if (f->type == CFG_SECTION && v->kind != CFG_N_MAP)
				config_type_error(x, pairs[2 * i + 1], p,
						  "object");
			else if (f->type == CFG_SECTION)
				config_walk_map(x, pairs[2 * i + 1], rows,
						nrows, rel, p, base, seen);
			else
				config_set(x, f, pairs[2 * i + 1], p,
					   base + f->off);
			/* A section is given even with bad values inside; a
			 * value that failed keeps its default. */
			if (seen && (f->type == CFG_SECTION ||
				     x->fe.n == before)) {
				size_t r = (size_t)(f - rows);

				seen[r] = true;
				if (x->seen_at) {
					x->seen_at[r].key = f->key;
					x->seen_at[r].line = k->line;
					x->seen_at[r].col = k->col;
				}
			}
		}
		free(rel);
		free(p);
	}
	for (size_t i = 0; i < np; i++)
		free(keys[i]);
	free(keys);
	free(dup);
	free(pairs);
}

/* ------------------------------------------------------------------ */
/* apiVersion and kind */

static const char *const api_versions[] = {
	CONFIG_GROUP "/v1beta1", CONFIG_GROUP "/v1beta2", NULL
};

const char *config_api_version(enum config_api api)
{
	return api == CONFIG_API_V1BETA1 ? api_versions[0] : api_versions[1];
}

/* Reads apiVersion and kind from the root mapping; sets x->api. */
static void type_meta(struct cfg_ctx *x, size_t root)
{
	const struct cfg_node *r = &x->doc.v[root];
	size_t np = 0, *pairs = config_map_pairs(x, r, "", &np);
	const struct cfg_node *av = NULL, *kv = NULL;
	static const char *const kinds[] = { CONFIG_KIND, NULL };

	for (size_t i = 0; i < np; i++) {
		const struct cfg_node *k = &x->doc.v[pairs[2 * i]];

		if (k->kind != CFG_N_SCALAR || k->style == CFG_S_TAGGED)
			continue;
		if (!strcmp(k->text, "apiVersion") && !av)
			av = &x->doc.v[pairs[2 * i + 1]];
		else if (!strcmp(k->text, "kind") && !kv)
			kv = &x->doc.v[pairs[2 * i + 1]];
	}
	if (!av || is_null_value(av)) {
		fe_required(&x->fe, "apiVersion", "the configuration's API "
			    "version, " CONFIG_GROUP "/v1beta1 or /v1beta2");
		config_mark(x, r, 0, 0);
	} else if (av->kind != CFG_N_SCALAR) {
		config_type_error(x, (size_t)(av - x->doc.v), "apiVersion",
				  "string");
	} else if (!strcmp(av->text, api_versions[0])) {
		x->api = CONFIG_API_V1BETA1;
	} else if (!strcmp(av->text, api_versions[1])) {
		x->api = CONFIG_API_V1BETA2;
	} else {
		fe_unsupported(&x->fe, "apiVersion", av->text, api_versions);
		config_mark(x, av, 0, 0);
	}
	if (!kv || is_null_value(kv)) {
		fe_required(&x->fe, "kind", "must be " CONFIG_KIND);
		config_mark(x, r, 0, 0);
	} else if (kv->kind != CFG_N_SCALAR || strcmp(kv->text, CONFIG_KIND)) {
		fe_unsupported(&x->fe, "kind", kv->kind == CFG_N_SCALAR
			       ? kv->text : "object", kinds);
		config_mark(x, kv, 0, 0);
	}
	free(pairs);
}

/* ------------------------------------------------------------------ */
/* Defaults */

/* Go's strings.TrimSpace of the service-account namespace file. */
static char *read_namespace(const struct config_opts *opts)
{
	const char *path = opts && opts->namespace_file ? opts->namespace_file
				: CONFIG_SA_NAMESPACE_FILE;
	char buf[4096];
	size_t n = 0, b = 0;
	FILE *f;

	if (!*path)
		return xstrdup(CONFIG_DEFAULT_NAMESPACE);
	f = fopen(path, "rb");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	while (n > 0 && strchr(" \t\n\r\v\f", buf[n - 1]))
		buf[--n] = '\0';
	while (b < n && strchr(" \t\n\r\v\f", buf[b]))
		b++;
	if (b == n || strlen(buf + b) != n - b)
		return xstrdup(CONFIG_DEFAULT_NAMESPACE);
	return xstrdup(buf + b);
}

static bool is_zero(const struct cfg_field *f, const void *dst)
{
	switch (f->type) {
	case CFG_STRING:
		return !*(char *const *)dst || !**(char *const *)dst;
	case CFG_INT:
	case CFG_INT32:
	case CFG_DURATION:
	case CFG_NANOS:
		return *(const int64_t *)dst == 0;
	case CFG_FLOAT32:
		return *(const double *)dst == 0;
	case CFG_STRLIST:
		return ((const struct config_strlist *)dst)->n == 0;
	case CFG_INT32LIST:
		return ((const struct config_int_list *)dst)->n == 0;
	default:
		return false;
	}
}

/* Every integer-like member starts as CONFIG_UNSET (Kueue's nil). */
static void init_config(struct config *c, enum config_api api)
{
	memset(c, 0, sizeof(*c));
	c->api = api;
	for (size_t i = 0; i < NFIELDS; i++) {
		enum cfg_type t = fields[i].type;

		if (t == CFG_INT || t == CFG_INT32 || t == CFG_DURATION ||
		    t == CFG_NANOS)
			*(int64_t *)((char *)c + fields[i].off) = CONFIG_UNSET;
	}
}

static bool was_seen(const bool *seen, const char *key)
{
	const struct cfg_field *f = config_row(key);

	if (!f)
		BUG("no row %s", key);
	return seen[f - fields];
}

/*
 * Kueue's SetDefaults_Configuration for api: the table's defaults for
 * what the file left out (or gave as a zero where Go's cmp.Or applies),
 * then the defaults that depend on other values.
 */
static void apply_defaults(struct config *c, enum config_api api,
			   const bool *seen, const struct config_opts *opts)
{
	unsigned zero = api == CONFIG_API_V1BETA1 ? CFG_ZERO1 : CFG_ZERO2;

	for (size_t i = 0; i < NFIELDS; i++) {
		const struct cfg_field *f = &fields[i];
		const char *d = api == CONFIG_API_V1BETA1 ? f->dflt1 : f->dflt2;
		void *dst = (char *)c + f->off;

		/* a list that failed half-way keeps what it read */
		if (f->type == CFG_STRLIST && !is_zero(f, dst))
			continue;
		if (d && (!seen[i] || ((f->flags & zero) && is_zero(f, dst))))
			config_set_default(f, d, dst);
	}
	/* 1. namespace, and the selector that names it */
	if (!was_seen(seen, "namespace"))
		c->namespace = read_namespace(opts);
	if (!c->managed_jobs_ns_selector.set) {
		const char *vals[2] = { "kube-system", c->namespace };

		label_selector_add(&c->managed_jobs_ns_selector.sel,
				   "kubernetes.io/metadata.name", SEL_NOT_IN,
				   vals, 2);
		c->managed_jobs_ns_selector.set = true;
	}
	/* 2. localQueueMetrics: v1beta2 enables them unless the section
	 * says otherwise */
	if (!was_seen(seen, "metrics.localQueueMetrics.enable"))
		c->metrics_lq_enable = api == CONFIG_API_V1BETA2 &&
			!was_seen(seen, "metrics.localQueueMetrics");
	/* 3. waitForPodsReady */
	if (api == CONFIG_API_V1BETA1) {
		if (!was_seen(seen, "waitForPodsReady.blockAdmission"))
			c->wfpr_block_admission = c->wfpr_enable;
	} else {
		c->wfpr_enable = !config_feature_gate(c,
						      "DisableWaitForPodsReady",
						      false);
		if (!was_seen(seen, "waitForPodsReady.recoveryTimeout"))
			c->wfpr_recovery_timeout_ms = c->wfpr_timeout_ms;
	}
	/* 4. queueVisibility.clusterQueues given without maxCount: Go's
	 * zero, not the default of an absent section */
	if (was_seen(seen, "queueVisibility.clusterQueues") &&
	    !was_seen(seen, "queueVisibility.clusterQueues.maxCount"))
		c->qv_max_count = 0;
	/* 5. fairSharing and admissionFairSharing: presence */
	if (api == CONFIG_API_V1BETA2)
		c->fs_enable = was_seen(seen, "fairSharing");
	if (c->fs_enable && !c->fs_preemption_strategies.n) {
		const struct cfg_field *ps =
			config_row("fairSharing.preemptionStrategies");

		config_set_default(ps, "LessThanOrEqualToFinalShare",
				   &c->fs_preemption_strategies);
		config_set_default(ps, "LessThanInitialShare",
				   &c->fs_preemption_strategies);
	}
	c->afs_enable = was_seen(seen, "admissionFairSharing");
}

void config_defaults(struct config *c, enum config_api api,
		     const struct config_opts *opts)
{
	bool seen[NFIELDS] = { false };

	if (api != CONFIG_API_V1BETA1 && api != CONFIG_API_V1BETA2)
		BUG("config_defaults: api %d", (int)api);
	init_config(c, api);
	apply_defaults(c, api, seen, opts);
}

/* ------------------------------------------------------------------ */
/* Small accessors */

bool config_feature_gate(const struct config *c, const char *name,
			 bool dflt)
{
	for (size_t i = 0; i < c->feature_gates.n; i++)
		if (!strcmp(c->feature_gates.v[i].key, name))
			return c->feature_gates.v[i].value;
	return dflt;
}

bool config_is_given(const struct config *c, const char *key)
{
	if (!config_row(key))
		BUG("config_is_given: no row %s", key);
	for (size_t i = 0; i < c->ngiven; i++)
		if (!strcmp(c->given[i].key, key))
			return true;
	return false;
}

void config_release(struct config *c)
{
	for (size_t i = 0; i < NFIELDS; i++)
		config_release_field(&fields[i], (char *)c + fields[i].off);
	free(c->file);
	free(c->given);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------------ */
/* Loading */

static int pos_cmp(const void *a, const void *b)
{
	const struct cfg_pos *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* Where path (or its nearest written ancestor) is in the file; 0:0 when
 * nothing on its way was written. Returns true when path itself was
 * written (the position is its own, not an ancestor's). */
static bool position_of(struct cfg_ctx *x, const char *path, size_t *line,
			size_t *col)
{
	char *p = xstrdup(path);
	size_t n = strlen(p);
	bool own = false;

	*line = *col = 0;
	while (n > 0 && x->npos) {
		struct cfg_pos key = { p, 0, 0 }, *hit;

		hit = bsearch(&key, x->pos, x->npos, sizeof(*x->pos), pos_cmp);
		if (hit) {
			*line = hit->line;
			*col = hit->col;
			own = n == strlen(path);
			break;
		}
		if (p[n - 1] == ']') {
			while (n > 0 && p[n - 1] != '[')
				n--;
			n = n > 0 ? n - 1 : 0;
		} else {
			while (n > 0 && p[n - 1] != '.' && p[n - 1] != ']')
				n--;
			if (n > 0 && p[n - 1] == '.')
				n--;
		}
		p[n] = '\0';
	}
	free(p);
	return own;
}

/* Runs the rules and gives each problem the position of its path. A
 * problem of a value the file did not write (a default, or one derived
 * from another field, as recoveryTimeout from timeout) takes the position
 * of its nearest written ancestor and is marked derived, so that the
 * report puts it after the problems of the values the user wrote. */
static void validate_loaded(struct cfg_ctx *x)
{
	struct cfg_vopts vo = { x->bad_selector[CFG_SEL_MJNS],
				x->bad_selector[CFG_SEL_POD_NS] };
	struct field_errors fe = FIELD_ERRORS_INIT;
	size_t root_line = 1, root_col = 1;

	if (x->doc.root) {
		root_line = x->doc.v[x->doc.root].line;
		root_col = x->doc.v[x->doc.root].col;
	}
	config_check(x->c, &vo, &fe);
	if (!fe.n)
		return;
	if (x->npos)
		qsort(x->pos, x->npos, sizeof(*x->pos), pos_cmp);
	/* the entries before these are the walk's, at their own nodes */
	x->fe_derived = xcalloc(x->fe.n + fe.n, sizeof(*x->fe_derived));
	for (size_t i = 0; i < fe.n; i++) {
		size_t line, col;
		bool own = position_of(x, fe.v[i].path, &line, &col);

		if (!line) {
			line = root_line;
			col = root_col;
		}
		XGROW(x->fe.v, x->fe.cap, x->fe.n + 1);
		x->fe_derived[x->fe.n] = !own;
		x->fe.v[x->fe.n++] = fe.v[i];
		config_mark(x, NULL, line, col);
	}
	free(fe.v); /* the entries moved to x->fe */
}

/* A problem's place in the report: the user's own values first, then the
 * derived ones; each group in file order, ties in the order found. */
struct order {
	bool derived;
	size_t line, col, idx;
};

static int order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->derived != y->derived)
		return x->derived ? 1 : -1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The tail line of an err that could not hold every problem. */
static char *more_line(size_t nmore)
{
	return xasprintf("(and %zu more)", nmore);
}

/*
 * Fills err with texts[0..n), one a line in that order: as many whole
 * lines as ERR_MAX holds, then "(and N more)" for the rest. The first
 * line is always there (cut short when it alone is too long), so err
 * names at least one problem with its position.
 */
static void report_err(struct err *err, char *const *texts, size_t n)
{
	struct sbuf msg = SBUF_INIT;
	size_t shown = 0;
	char *tail;

	if (!err || !n)
		return;
	for (; shown < n; shown++) {
		size_t need = msg.len + (shown ? 1 : 0) + strlen(texts[shown]);

		if (shown + 1 < n) {
			tail = more_line(n - shown - 1);
			need += 1 + strlen(tail);
			free(tail);
		}
		if (shown && need > ERR_MAX - 1)
			break;
		if (shown)
			sbuf_addch(&msg, '\n');
		sbuf_adds(&msg, texts[shown]);
	}
	if (shown < n) {
		tail = more_line(n - shown);
		if (msg.len + 1 + strlen(tail) > ERR_MAX - 1)
			sbuf_setlen(&msg, ERR_MAX - 2 - strlen(tail));
		sbuf_addch(&msg, '\n');
		sbuf_adds(&msg, tail);
		free(tail);
	}
	err_set(err, "%s", sbuf_cstr(&msg));
	sbuf_release(&msg);
}

/* Sorts the problems (struct order), hands up to CONFIG_MAX_ERRORS of
 * them to fe and as many as fit to err (report_err). Returns -1. */
static int report(struct cfg_ctx *x, struct field_errors *fe,
		  struct err *err)
{
	struct order *o = xmalloc(x->fe.n * sizeof(*o));
	char **texts = xmalloc(x->fe.n * sizeof(*texts));

	config_mark(x, NULL, 0, 0);
	for (size_t i = 0; i < x->fe.n; i++)
		o[i] = (struct order){ x->fe_derived && x->fe_derived[i],
				       x->fe_line[i], x->fe_col[i], i };
	qsort(o, x->fe.n, sizeof(*o), order_cmp);
	for (size_t i = 0; i < x->fe.n; i++) {
		const struct field_error *e = &x->fe.v[o[i].idx];

		texts[i] = o[i].line
			? xasprintf("%s:%zu:%zu: %s", x->file, o[i].line,
				    o[i].col, e->text)
			: xasprintf("%s: %s", x->file, e->text);
	}
	report_err(err, texts, x->fe.n);
	for (size_t i = 0; i < x->fe.n; i++) {
		const struct field_error *e = &x->fe.v[o[i].idx];

		if (fe && i < CONFIG_MAX_ERRORS) {
			XGROW(fe->v, fe->cap, fe->n + 1);
			fe->v[fe->n].kind = e->kind;
			fe->v[fe->n].path = xstrdup(e->path);
			fe->v[fe->n].text = texts[i];
			fe->n++;
		} else {
			free(texts[i]);
		}
	}
	free(texts);
	free(o);
	return -1;
}

static void ctx_release(struct cfg_ctx *x)
{
	config_doc_release(&x->doc);
	field_errors_release(&x->fe);
	free(x->fe_line);
	free(x->fe_col);
	free(x->fe_derived);
	for (size_t i = 0; i < x->npos; i++)
		free(x->pos[i].path);
	free(x->pos);
}

/* A problem of the whole file (path ""), at n or without a position. */
static void whole_file_error(struct cfg_ctx *x, const struct cfg_node *n,
			     const char *msg)
{
	XGROW(x->fe.v, x->fe.cap, x->fe.n + 1);
	x->fe.v[x->fe.n].kind = FE_INVALID;
	x->fe.v[x->fe.n].path = xstrdup("");
	x->fe.v[x->fe.n].text = xstrdup(msg);
	x->fe.n++;
	config_mark(x, n, 0, 0);
}

/* Keeps in c the file's name and the rows seen, with where their keys
 * are (table order), for config_is_given and the warnings. */
static void keep_given(struct config *c, const char *file, const bool *seen,
		       const struct config_given *seen_at)
{
	size_t n = 0;

	for (size_t i = 0; i < NFIELDS; i++)
		n += seen[i];
	c->file = xstrdup(file);
	c->given = n ? xmalloc(n * sizeof(*c->given)) : NULL;
	c->ngiven = 0;
	for (size_t i = 0; i < NFIELDS; i++)
		if (seen[i])
			c->given[c->ngiven++] = seen_at[i];
}

/* The steps of a load: 1. size, 2. YAML, 3. apiVersion and kind, 4. the
 * walk, 5. defaults (and what the file set), 6. validation, 7. the
 * verdict. */
static int load(const char *text, size_t len, const char *file,
		const struct config_opts *opts, struct config *out,
		struct field_errors *fe, struct err *err)
{
	struct cfg_ctx x;
	bool seen[NFIELDS] = { false };
	struct config_given seen_at[NFIELDS];
	int rc = 0;

	memset(&x, 0, sizeof(x));
	memset(seen_at, 0, sizeof(seen_at));
	x.file = file;
	x.c = out;
	x.seen = seen;
	x.seen_at = seen_at;
	init_config(out, 0);
	if (len > CONFIG_MAX_BYTES) {                               /* 1 */
		char msg[128];

		snprintf(msg, sizeof(msg), "file is larger than %zu bytes",
			 CONFIG_MAX_BYTES);
		whole_file_error(&x, NULL, msg);
	} else if (config_yaml_parse(&x, text, len) == 0) {         /* 2 */
		size_t root = x.doc.root;

		if (!root) {
			fe_required(&x.fe, "apiVersion", "the file holds no "
				    "configuration");
			config_mark(&x, NULL, 1, 1);
		} else if (x.doc.v[root].kind != CFG_N_MAP) {
			whole_file_error(&x, &x.doc.v[root],
					 "the configuration must be a mapping "
					 "of fields (an object)");
		} else {
			type_meta(&x, root);                        /* 3 */
			out->api = x.api;
			config_walk_map(&x, root, fields, NFIELDS, "", "",
					(char *)out, seen);         /* 4 */
			if (x.api) {
				apply_defaults(out, x.api, seen, opts); /* 5 */
				keep_given(out, file, seen, seen_at);
				/* an alias bomb is refused as it is */
				if (!x.too_many_visits)
					validate_loaded(&x);        /* 6 */
			}
		}
	}
	if (x.fe.n) {                                               /* 7 */
		rc = report(&x, fe, err);
		config_release(out);
	}
	ctx_release(&x);
	return rc;
}

int config_load_string2(const char *text, size_t len,
			const struct config_opts *opts, struct config *out,
			struct field_errors *fe, struct err *err)
{
	const char *name = opts && opts->source_name ? opts->source_name
						     : "<string>";

	return load(text, len, name, opts, out, fe, err);
}

int config_load_string(const char *text, size_t len,
		       const struct config_opts *opts, struct config *out,
		       struct err *err)
{
	return config_load_string2(text, len, opts, out, NULL, err);
}

/* A file that cannot be read: one problem without a position. */
static int file_error(const char *path, struct field_errors *fe,
		      struct err *err, int errnum)
{
	char *text = xasprintf("%s: cannot read: %s", path, strerror(errnum));

	err_set(err, "%s", text);
	if (fe) {
		XGROW(fe->v, fe->cap, fe->n + 1);
		fe->v[fe->n].kind = FE_INVALID;
		fe->v[fe->n].path = xstrdup("");
		fe->v[fe->n++].text = text;
	} else {
		free(text);
	}
	return -1;
}

int config_load_file2(const char *path, const struct config_opts *opts,
		      struct config *out, struct field_errors *fe,
		      struct err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;
	int rc, e;

	memset(out, 0, sizeof(*out));
	if (!f)
		return file_error(path, fe, err, errno);
	/* One byte more than the limit tells "too big" without a stat. */
	buf = xmalloc(CONFIG_MAX_BYTES + 1);
	n = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
	e = ferror(f) ? errno : 0;
	fclose(f);
	if (e) {
		free(buf);
		return file_error(path, fe, err, e);
	}
	rc = load(buf, n, path, opts, out, fe, err);
	free(buf);
	return rc;
}

int config_load_file(const char *path, struct config *out, struct err *err)
{
	return config_load_file2(path, NULL, out, NULL, err);
}

void config_res_policy(const struct config *c, struct res_policy *out)
{
	res_policy_release(out);
	for (size_t i = 0; i < c->res_exclude_prefixes.n; i++)
		res_policy_add_exclude(out, c->res_exclude_prefixes.v[i]);
	for (size_t i = 0; i < c->res_transformations.n; i++) {
		const struct config_transformation *t =
			&c->res_transformations.v[i];
		struct reslist o = RESLIST_INIT;

		for (size_t k = 0; k < t->outputs.n; k++)
			reslist_set(&o, t->outputs.v[k].key,
				    t->outputs.v[k].value.milli);
		res_policy_add_transform(out, t->input,
					 t->strategy == CONFIG_TRANSFORM_REPLACE,
					 t->multiply_by, &o);
		reslist_release(&o);
	}
}
