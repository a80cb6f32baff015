/*
 * config: the manager's Configuration (`--config FILE`), Kueue's
 * config.kueue.x-k8s.io/v1beta1 and /v1beta2 kind Configuration, read
 * into one plain struct with every default of kueue-api.md §13 applied.
 *
 * Loading is table driven (STYLE P11): config.c holds one static row per
 * field ("waitForPodsReady.timeout", its type, offsetof the struct member,
 * its v1beta1 and v1beta2 defaults, the versions that know it). Generic
 * setters parse each type while the YAML is walked; defaults are applied
 * after the walk; validation runs last. Every problem of a file is
 * collected, each as one line naming where it is:
 *
 *   config.yaml:12:14: waitForPodsReady.timeout: Invalid value: "5x":
 *       time: unknown unit "x" in duration "5x"
 *
 * Unknown keys are errors, as Kueue's strict decoder makes them; keys of
 * the other API version are named as such ("v1beta1 only"). Every known
 * key is accepted, so one file serves Kueue and cueue; the keys no code
 * honours yet are listed in config_warnings.c, and the loaders keep which
 * keys the file set (config_is_given) so that the manager can warn about
 * exactly those it was given (config_warnings_collect).
 *
 * The module reads the config file and, for the namespace default only,
 * the service-account namespace file named in struct config_opts; it does
 * no other I/O, keeps no state between calls and never logs. A loaded
 * config is immutable by convention: the webhook thread reads it (P7).
 */
#ifndef CONFIG_CONFIG_H
#define CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/errors.h"
#include "model/quantity.h"
#include "model/selector.h"

/* The Configuration's apiVersion. */
enum config_api {
	CONFIG_API_V1BETA1 = 1, /* config.kueue.x-k8s.io/v1beta1 (v0.14 shape) */
	CONFIG_API_V1BETA2 = 2, /* config.kueue.x-k8s.io/v1beta2 (HEAD shape) */
};

#define CONFIG_GROUP "config.kueue.x-k8s.io"
#define CONFIG_KIND "Configuration"
/* Where Kueue reads its default namespace from. */
#define CONFIG_SA_NAMESPACE_FILE \
	"/var/run/secrets/kubernetes.io/serviceaccount/namespace"
#define CONFIG_DEFAULT_NAMESPACE "kueue-system"
/* A config file larger than this is refused: a ConfigMap holds 1 MiB. */
#define CONFIG_MAX_BYTES ((size_t)1 << 20)
/* At most this many problems are listed; the count covers all of them. */
#define CONFIG_MAX_ERRORS 100

/* "Not set" for the optional integer and duration fields, Kueue's nil. */
#define CONFIG_UNSET INT64_MIN

/* waitForPodsReady.requeuingStrategy.timestamp */
enum config_requeue_timestamp {
	CONFIG_REQUEUE_EVICTION, /* "Eviction" (default) */
	CONFIG_REQUEUE_CREATION, /* "Creation" */
};

/* resources.transformations[].strategy */
enum config_transform_strategy {
	CONFIG_TRANSFORM_RETAIN,  /* "Retain" (default) */
	CONFIG_TRANSFORM_REPLACE, /* "Replace" */
};

/* resources.quotaCheckStrategy (v1beta2) */
enum config_quota_check {
	CONFIG_QUOTA_BLOCK_UNDECLARED,  /* "BlockUndeclared" (default) */
	CONFIG_QUOTA_IGNORE_UNDECLARED, /* "IgnoreUndeclared" */
};

/* tls.minVersion */
enum config_tls_version {
	CONFIG_TLS_DEFAULT, /* "" or unset: the TLS library's default */
	CONFIG_TLS_10,      /* "VersionTLS10" */
	CONFIG_TLS_11,      /* "VersionTLS11" */
	CONFIG_TLS_12,      /* "VersionTLS12" */
	CONFIG_TLS_13,      /* "VersionTLS13" */
};

/* A []string. */
struct config_strlist {
	char **v; /* owned array of n owned strings, in file order */
	size_t n;
	size_t cap;
};

/* A list of Go int32s ([]int32), in file order. */
struct config_int_list {
	int64_t *v; /* owned array of n */
	size_t n;
	size_t cap;
};

/* The maps keep file order; a key appears once (duplicates are errors). */
struct config_bool_kv {
	char *key; /* owned */
	bool value;
};
struct config_bool_map {
	struct config_bool_kv *v; /* owned */
	size_t n;
	size_t cap;
};
struct config_int_kv {
	char *key; /* owned */
	int64_t value;
};
struct config_int_map {
	struct config_int_kv *v; /* owned */
	size_t n;
	size_t cap;
};
struct config_float_kv {
	char *key; /* owned */
	double value; /* finite */
};
struct config_float_map {
	struct config_float_kv *v; /* owned */
	size_t n;
	size_t cap;
};
struct config_quantity_kv {
	char *key; /* owned; a resource name */
	struct quantity value;
};
struct config_quantity_map {
	struct config_quantity_kv *v; /* owned */
	size_t n;
	size_t cap;
};

/* A *metav1.LabelSelector: nil (set false) differs from {} (matches all). */
struct config_selector {
	bool set;                  /* the field was given (or defaulted) */
	struct label_selector sel; /* owned; empty when !set */
};

/* resources.transformations[] */
struct config_transformation {
	char *input;                             /* owned; resource name; unique */
	enum config_transform_strategy strategy; /* default Retain */
	char *multiply_by;                       /* owned; resource name or NULL */
	struct config_quantity_map outputs;      /* per unit of input; >= 0 */
};
struct config_transformations {
	struct config_transformation *v; /* owned */
	size_t n;
	size_t cap;
};

/* resources.deviceClassMappings[] (DRA) */
struct config_device_class_mapping {
	char *name;                           /* owned; qualified name; unique */
	struct config_strlist device_classes; /* deviceClassNames; >= 1 */
};
struct config_device_class_mappings {
	struct config_device_class_mapping *v; /* owned */
	size_t n;
	size_t cap;
};

/* metrics.customLabels[] */
struct config_custom_label {
	char *name;                  /* owned; [a-zA-Z_][a-zA-Z0-9_]*; unique */
	char *source_label_key;      /* owned or NULL; qualified name */
	char *source_annotation_key; /* owned or NULL; exclusive with above */
};
struct config_custom_labels {
	struct config_custom_label *v; /* owned; at most 8 */
	size_t n;
	size_t cap;
};

/* multiKueue.externalFrameworks[] */
struct config_mk_framework {
	char *name; /* owned; "Kind.version.group" */
};
struct config_mk_frameworks {
	struct config_mk_framework *v; /* owned */
	size_t n;
	size_t cap;
};

/* multiKueue.clusterProfile.credentialsProviders[] (v1beta2). cueue has
 * no MultiKueue, so execConfig is accepted as written and not kept. */
struct config_credentials_provider {
	char *name;            /* owned; required */
	bool has_exec_config;  /* execConfig was given */
};
struct config_credentials_providers {
	struct config_credentials_provider *v; /* owned */
	size_t n;
	size_t cap;
};

/* A row of the field table (a value or a whole section) that the file
 * itself set, as opposed to one left to its default. */
struct config_given {
	const char *key;  /* static: the table's dotted key */
	size_t line, col; /* 1-based: where the file writes the key */
};

/*
 * The whole Configuration. Transparent, built by the loaders (or
 * config_defaults) and freed by config_release. After a successful load
 * every field holds its value or default; strings with a default are
 * never NULL. Durations are milliseconds (Go's nanoseconds rounded away
 * from zero, so "1ns" stays non-zero). Field names follow the YAML path,
 * with a prefix per section.
 */
struct config {
	enum config_api api; /* the file's apiVersion; decides defaults */

	/* top level */
	char *namespace; /* owned; default: the SA namespace file, else
			  * "kueue-system" */
	bool manage_jobs_without_queue_name; /* default false */
	struct config_selector managed_jobs_ns_selector; /* default
			  * kubernetes.io/metadata.name NotIn (kube-system,
			  * <namespace>); always set; must match neither */
	struct config_bool_map feature_gates; /* featureGates; default {} */
	char *pprof_bind_address; /* owned; "" (default) or "0" = off */

	/* webhook */
	int64_t webhook_port;    /* 1..65535; default 9443 */
	char *webhook_host;      /* owned; default "" (all interfaces) */
	char *webhook_cert_dir;  /* owned; default
				  * /tmp/k8s-webhook-server/serving-certs */

	/* leaderElection (component-base LeaderElectionConfiguration) */
	bool le_leader_elect;          /* default true */
	int64_t le_lease_duration_ms;  /* default 15s; > renew deadline */
	int64_t le_renew_deadline_ms;  /* default 10s; > 1.2 x retry period */
	int64_t le_retry_period_ms;    /* default 2s; > 0 */
	char *le_resource_lock;        /* owned; default "leases" (only one) */
	char *le_resource_name;        /* owned; default c1f6bfd2.kueue.x-k8s.io */
	char *le_resource_namespace;   /* owned; default "" = namespace */

	/* metrics */
	char *metrics_bind_address;        /* owned; default ":8443"; "0" off */
	bool metrics_enable_cq_resources;  /* enableClusterQueueResources;
					    * default false */
	bool metrics_lq_enable;            /* localQueueMetrics.enable; default
					    * v1beta2 true, v1beta1 false */
	struct config_selector metrics_lq_selector; /* localQueueSelector;
					    * unset = every LocalQueue */
	struct config_custom_labels metrics_custom_labels; /* <= 8 */

	/* health */
	char *health_probe_bind_address; /* owned; default ":8081"; "0" off */
	char *health_readiness_endpoint; /* owned; default "readyz" */
	char *health_liveness_endpoint;  /* owned; default "healthz" */

	/* controller */
	struct config_int_map controller_gk_concurrency; /* groupKind-
				 * Concurrency, "Kind.group" -> workers >= 1 */
	int64_t controller_cache_sync_timeout_ms; /* default 2m; >= 0 (0
				 * means 2m); a time.Duration in the file,
				 * so an integer of nanoseconds */

	/* clientConnection */
	double client_qps;    /* a float32; default v1beta1 20, v1beta2 300;
			       * < 0 turns client-side rate limiting off
			       * (Kueue's documented meaning, so accepted) */
	int64_t client_burst; /* an int32; default v1beta1 30, v1beta2 500;
			       * >= 1 when qps > 0 (client-go's rule) */

	/* internalCertManagement */
	bool icm_enable;                /* default true */
	char *icm_webhook_service_name; /* owned; default kueue-webhook-service;
					 * DNS-1035 label */
	char *icm_webhook_secret_name;  /* owned; default
					 * kueue-webhook-server-cert; DNS-1123
					 * subdomain */

	/* waitForPodsReady */
	bool wfpr_enable; /* v1beta1: `enable` (default false); v1beta2: true
			   * unless featureGates DisableWaitForPodsReady */
	int64_t wfpr_timeout_ms; /* >= 0; default v1beta1 5m, v1beta2 30m
				  * (v1beta2 turns 0 into 30m, as Kueue) */
	bool wfpr_block_admission; /* default v1beta1 = enable, v1beta2 false */
	int64_t wfpr_recovery_timeout_ms; /* >= 0; default v1beta1
				  * CONFIG_UNSET (none), v1beta2 = timeout;
				  * 0 disables */
	enum config_requeue_timestamp wfpr_requeue_timestamp; /* Eviction */
	int64_t wfpr_backoff_limit_count;  /* >= 0; CONFIG_UNSET (default) =
					    * requeue forever */
	int64_t wfpr_backoff_base_seconds; /* >= 0; default 60 */
	int64_t wfpr_backoff_max_seconds;  /* >= 0; default 3600 */

	/* integrations */
	struct config_strlist int_frameworks; /* known names, no duplicates;
					       * default ["batch/job"] */
	struct config_strlist int_external_frameworks; /* "Kind.version.group" */
	struct config_strlist int_label_keys_to_copy; /* label keys */
	struct config_selector int_pod_ns_selector; /* v1beta1 podOptions.
					   * namespaceSelector; unset default */
	struct config_selector int_pod_selector;    /* v1beta1 podOptions.
					   * podSelector; unset default */

	/* queueVisibility (v1beta1; deprecated, no effect) */
	int64_t qv_max_count; /* clusterQueues.maxCount; 0..4000; default 10
			       * (0 when clusterQueues is given without it) */
	int64_t qv_update_interval_seconds; /* >= 1; default 5 */

	/* multiKueue (cueue has no MultiKueue; kept for fidelity) */
	int64_t mk_gc_interval_ms;         /* >= 0; default 1m; 0 = no GC */
	char *mk_origin;                   /* owned; label value; default
					    * "multikueue" */
	int64_t mk_worker_lost_timeout_ms; /* >= 0; default 15m */
	char *mk_dispatcher_name;          /* owned; default kueue.x-k8s.io/
					    * multikueue-dispatcher-all-at-once */
	struct config_mk_frameworks mk_external_frameworks;
	int64_t mk_incremental_step_size;  /* v1beta2 incrementalDispatcher-
					    * Config.stepSize; >= 1; default 3 */
	struct config_credentials_providers mk_credentials_providers; /* v1beta2
					    * clusterProfile */

	/* fairSharing */
	bool fs_enable; /* v1beta1 `enable` (default false); v1beta2: the
			 * section is present */
	struct config_strlist fs_preemption_strategies; /* one of the three
			 * valid lists; default when enabled
			 * [LessThanOrEqualToFinalShare, LessThanInitialShare] */

	/* admissionFairSharing */
	bool afs_enable;                    /* the section is present */
	int64_t afs_usage_half_life_ms;     /* usageHalfLifeTime; >= 0; 0 */
	int64_t afs_usage_sampling_ms;      /* usageSamplingInterval; > 0;
					     * default 5m */
	struct config_float_map afs_resource_weights; /* >= 0 */

	/* resources */
	struct config_strlist res_exclude_prefixes; /* excludeResourcePrefixes */
	struct config_transformations res_transformations;
	struct config_device_class_mappings res_device_class_mappings;
	enum config_quota_check res_quota_check; /* v1beta2 quotaCheckStrategy;
						  * default BlockUndeclared */

	/* objectRetentionPolicies.workloads */
	int64_t orp_after_finished_ms;    /* >= 0; CONFIG_UNSET = keep */
	int64_t orp_after_deactivated_ms; /* afterDeactivatedByKueue; >= 0;
					   * CONFIG_UNSET = keep */

	/* tls */
	enum config_tls_version tls_min_version; /* default CONFIG_TLS_DEFAULT */
	struct config_strlist tls_cipher_suites;     /* IANA names, TLS_... */
	struct config_int_list tls_curve_preferences; /* IANA group IDs */

	/* visibilityServer (v1beta2) */
	char *vis_bind_address; /* owned; an IP or "" (default: all) */
	int64_t vis_bind_port;  /* 1..65535; default 8082 */

	/* What the file itself said, for config_is_given and
	 * config_warnings_collect (the loaders fill these; a config from
	 * config_defaults has none) */
	char *file;                 /* owned; the file's name in messages;
				     * NULL from config_defaults */
	struct config_given *given; /* owned; ngiven rows, in table order */
	size_t ngiven;
};

/* Options of a load; a NULL opts means all defaults. */
struct config_opts {
	const char *namespace_file; /* read for the namespace default; NULL =
				     * CONFIG_SA_NAMESPACE_FILE, "" = read
				     * nothing (always "kueue-system") */
	const char *source_name;    /* the file name in config_load_string*
				     * messages; NULL = "<string>" */
};

/*
 * Loads the Configuration YAML in the file at path into out, applying
 * every default and validating the result. out is overwritten: it must
 * not hold a loaded config (release it first). On success returns 0;
 * out is owned by the caller (config_release).
 *
 * On failure returns -1 and out is all zeroes (config_release is a
 * no-op). err gets every problem, one a line,
 * "<file>:<line>:<col>: <dotted.key>: <what is wrong>": first those of
 * the values the file wrote, in file order, then those of values it did
 * not write (defaults, and values derived from another field, such as
 * waitForPodsReady.recoveryTimeout from timeout), each at its nearest
 * written ancestor, in file order. err holds ERR_MAX bytes: when the lines
 * do not all fit, it keeps as many whole ones as do and ends with a line
 * "(and N more)" (config_load_file2's fe has them all, up to
 * CONFIG_MAX_ERRORS). Failures: an unreadable file or
 * one over CONFIG_MAX_BYTES, malformed YAML, more than one document, a
 * root that is not a mapping, a missing or unknown apiVersion or kind,
 * unknown keys (keys of the other API version included), values of the
 * wrong type, unparseable durations and quantities, and every validation
 * rule of Kueue's pkg/config/validation.go plus the few of cueue's own
 * listed at the top of config.c.
 *
 * Uses default options: reads CONFIG_SA_NAMESPACE_FILE for the namespace.
 */
int config_load_file(const char *path, struct config *out, struct err *err)
	MUST_CHECK;

/*
 * As config_load_file with options, and also appends every problem, in
 * err's order (the written values' problems, then the derived ones; each
 * in file order), to fe when fe is not NULL: each entry's
 * path is the dotted key ("integrations.frameworks[1]",
 * "featureGates[Foo]"; "" for whole-file problems) and its text the full
 * line "<file>:<line>:<col>: <path>: <problem>", in err's order. At most
 * CONFIG_MAX_ERRORS entries are added; err's last line counts those it
 * could not hold.
 */
int config_load_file2(const char *path, const struct config_opts *opts,
		      struct config *out, struct field_errors *fe,
		      struct err *err) MUST_CHECK;

/* As the two above for the len bytes at text (need not end in NUL);
 * messages name opts->source_name. */
int config_load_string(const char *text, size_t len,
		       const struct config_opts *opts, struct config *out,
		       struct err *err) MUST_CHECK;
int config_load_string2(const char *text, size_t len,
			const struct config_opts *opts, struct config *out,
			struct field_errors *fe, struct err *err) MUST_CHECK;

/*
 * Fills c (overwritten, as the loaders do) with the configuration an
 * empty file of version api would give: every default of kueue-api.md
 * §13 for that version. The namespace comes from opts->namespace_file as
 * in the loaders. Release with config_release.
 */
void config_defaults(struct config *c, enum config_api api,
		     const struct config_opts *opts);

/*
 * Checks c's values as the loaders' last step does and adds one field
 * error per problem to fe, with paths but no positions (for a config
 * changed after loading, e.g. by command-line flags). Label selector
 * syntax is checked while loading and not here. Returns 0 when fe got
 * nothing, else -1.
 */
int config_validate(const struct config *c, struct field_errors *fe)
	MUST_CHECK;

/* Frees everything c owns and zeroes it; c may be zeroed already. */
void config_release(struct config *c);

/* c's resources.excludeResourcePrefixes and transformations as a
 * model/respolicy.h policy, into out (released first). */
struct res_policy;
void config_res_policy(const struct config *c, struct res_policy *out);

/* The value of feature gate name in c->feature_gates, or dflt when the
 * file does not set it. */
bool config_feature_gate(const struct config *c, const char *name,
			 bool dflt);

/* True when c's file set key (a dotted key of the field table:
 * "leaderElection", "tls.cipherSuites"), whatever the value; false for
 * a key left to its default and for every key of a config from
 * config_defaults. BUG() for a key the table does not have. */
bool config_is_given(const struct config *c, const char *key);

/* One setting the file gives that the manager does not honour yet. */
struct config_warning {
	const char *key; /* static: the dotted key, as config_is_given takes */
	char *text;      /* owned; "<file>:<line>:<col>: <key>: <what the
			  * manager does instead>" */
};
struct config_warnings {
	struct config_warning *v; /* owned; n entries */
	size_t n;
	size_t cap;
};
#define CONFIG_WARNINGS_INIT { NULL, 0, 0 }

/*
 * Appends to out one warning for each key of config_warnings.c's table
 * that c's file sets to something the manager would have to act on
 * (leaderElection with leaderElect on, a non-empty tls.cipherSuites,
 * ...), in the table's order. Keys left to their defaults never warn, so
 * a config from config_defaults gives none. Pure: no I/O, no logging.
 * Returns the number appended.
 */
size_t config_warnings_collect(const struct config *c,
			       struct config_warnings *out);
/* Frees every entry and leaves w empty. */
void config_warnings_release(struct config_warnings *w);

/*
 * The GnuTLS priority string for the manager's TLS servers from c's tls
 * section (config_tls.c says how Go's settings map onto GnuTLS's). New
 * string. The names and IDs Kueue accepts, and the one ID (4588,
 * X25519MLKEM768) this build cannot offer.
 */
char *config_tls_priorities(const struct config *c);
bool config_tls_cipher_suite_known(const char *name);
bool config_tls_curve_known(int64_t id);
bool config_tls_curve_unavailable(int64_t id);

/* "config.kueue.x-k8s.io/v1beta1" or ".../v1beta2" (static). */
const char *config_api_version(enum config_api api);

/* Number of rows in the field table (for tests and documentation). */
size_t config_field_count(void);

#endif
