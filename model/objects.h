/*
 * objects: the Kueue objects (and the slice of batch/v1 Job cueue reads) as
 * plain C structs.
 *
 * One internal shape serves both kueue.x-k8s.io/v1beta1 and v1beta2: the
 * codec maps each version's field names onto it (cohort / cohortName,
 * priorityClassName+Source / priorityClassRef, ...) and remembers the
 * version an object came in, so validators can name fields the way the
 * user wrote them. Quantities are already int64 milli-units here; no JSON,
 * no strings that need parsing reach the scheduling core.
 *
 * Every struct is transparent (callers build them on the stack in tests)
 * and owns everything it points to. Each has a _release() that frees its
 * contents and leaves it zeroed; a zeroed struct is a valid empty object.
 * Each _copy(dst, src) releases dst first and leaves it a deep copy that
 * shares nothing with src; copying a struct onto itself is a no-op.
 * "has_x" booleans mark optional scalars so nil and 0 stay distinct.
 */
#ifndef MODEL_OBJECTS_H
#define MODEL_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/placement.h"
#include "model/resources.h"
#include "model/selector.h"
#include "model/smap.h"

#define KUEUE_GROUP "kueue.x-k8s.io"
#define FINALIZER_RESOURCE_IN_USE "kueue.x-k8s.io/resource-in-use"
#define LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"
#define LABEL_PRIORITY_CLASS "kueue.x-k8s.io/priority-class"
#define LABEL_MAX_EXEC_TIME "kueue.x-k8s.io/max-exec-time-seconds"
#define LABEL_PREBUILT_WORKLOAD "kueue.x-k8s.io/prebuilt-workload-name"
#define LABEL_JOB_UID "kueue.x-k8s.io/job-uid"
#define LABEL_PODSET "kueue.x-k8s.io/podset"
#define ANNOT_MIN_PARALLELISM "kueue.x-k8s.io/job-min-parallelism"
#define ANNOT_COMPLETIONS_EQUAL_PARALLELISM \
	"kueue.x-k8s.io/job-completions-equal-parallelism"
#define ANNOT_STOPPING "kueue.x-k8s.io/stopping"
#define DEFAULT_PODSET_NAME "main"

enum api_version {
	API_UNKNOWN = 0,
	API_V1BETA1,
	API_V1BETA2,
};

/* "kueue.x-k8s.io/v1beta1" -> API_V1BETA1; API_UNKNOWN otherwise. */
enum api_version api_version_parse(const char *api_version);
/* The full apiVersion string of v ("kueue.x-k8s.io/v1beta2"). */
const char *api_version_name(enum api_version v);

struct owner_ref {
	char *api_version; /* owned */
	char *kind;        /* owned */
	char *name;        /* owned */
	char *uid;         /* owned */
	bool controller;
	bool block_owner_deletion;
};

struct object_meta {
	char *name;             /* owned; NULL only for generateName creates */
	char *namespace;        /* owned; NULL for cluster-scoped objects */
	char *generate_name;    /* owned or NULL */
	char *uid;              /* owned or NULL */
	char *resource_version; /* owned or NULL; opaque */
	int64_t generation;     /* 0 = unset */
	int64_t creation_ms;    /* creationTimestamp, epoch ms; 0 = unset */
	int64_t deletion_ms;    /* deletionTimestamp, epoch ms; 0 = not deleting */
	struct smap labels;
	struct smap annotations;
	char **finalizers;      /* owned array of owned strings */
	size_t nfinalizers;
	struct owner_ref *owners; /* owned */
	size_t nowners;
};

void object_meta_release(struct object_meta *m);
void object_meta_copy(struct object_meta *dst, const struct object_meta *src);
bool object_meta_has_finalizer(const struct object_meta *m, const char *f);
/* Adds a copy of f unless present. */
void object_meta_add_finalizer(struct object_meta *m, const char *f);

enum cond_status {
	COND_UNKNOWN = 0,
	COND_TRUE,
	COND_FALSE,
};

struct condition {
	char *type;    /* owned; unique within a list */
	enum cond_status status;
	char *reason;  /* owned; never NULL once set */
	char *message; /* owned; never NULL once set */
	int64_t last_transition_ms; /* epoch ms */
	int64_t observed_generation; /* 0 = unset */
};

struct conditions {
	struct condition *v; /* owned; in insertion order */
	size_t n;
	size_t cap;
};

void conditions_release(struct conditions *c);
void conditions_copy(struct conditions *dst, const struct conditions *src);
/* Borrowed pointer to the condition of that type, or NULL. */
const struct condition *conditions_find(const struct conditions *c,
					const char *type);
bool conditions_is_true(const struct conditions *c, const char *type);
/*
 * meta.SetStatusCondition: adds or updates type; lastTransitionTime moves to
 * now_ms only when the status changes. Returns true when anything changed.
 */
bool conditions_set(struct conditions *c, const char *type,
		    enum cond_status status, const char *reason,
		    const char *message, int64_t observed_generation,
		    int64_t now_ms);
bool conditions_remove(struct conditions *c, const char *type);
const char *cond_status_name(enum cond_status s); /* "True" ... */

/* ------------------------------------------------------------------ */
/* ResourceFlavor */

struct resource_flavor {
	struct object_meta meta;
	enum api_version version; /* as received */
	struct smap node_labels;
	struct taint *taints;     /* owned; nodeTaints */
	size_t ntaints;
	struct toleration *tols;  /* owned; tolerations */
	size_t ntols;
	char *topology_name;      /* owned or NULL */
};

void resource_flavor_release(struct resource_flavor *rf);

/* ------------------------------------------------------------------ */
/* Quota shared by ClusterQueue and Cohort */

struct resource_quota {
	char *name;           /* owned; resource name */
	int64_t nominal;      /* milli-units; required, >= 0 when valid */
	bool has_borrowing;
	int64_t borrowing;    /* milli-units; when has_borrowing */
	bool has_lending;
	int64_t lending;      /* milli-units; when has_lending */
};

struct flavor_quotas {
	char *name;                 /* owned; ResourceFlavor name */
	struct resource_quota *res; /* owned; same order as coveredResources */
	size_t nres;
};

struct resource_group {
	char **covered;                /* owned; coveredResources */
	size_t ncovered;
	struct flavor_quotas *flavors; /* owned; in preference order */
	size_t nflavors;
};

void resource_groups_release(struct resource_group *g, size_t n);

/* Status usage of one flavor: FlavorUsage / LocalQueueFlavorUsage. */
struct resource_usage {
	char *name;       /* owned; resource */
	int64_t total;    /* milli-units */
	int64_t borrowed; /* milli-units; ClusterQueue only */
};

struct flavor_usage {
	char *name;                 /* owned; flavor */
	struct resource_usage *res; /* owned; sorted by resource name */
	size_t nres;
};

void flavor_usages_release(struct flavor_usage *u, size_t n);

enum stop_policy {
	STOP_NONE = 0,
	STOP_HOLD,
	STOP_HOLD_AND_DRAIN,
};

/* ------------------------------------------------------------------ */
/* ClusterQueue */

enum queueing_strategy {
	QS_BEST_EFFORT_FIFO = 0, /* default */
	QS_STRICT_FIFO,
};

/* whenCanBorrow / whenCanPreempt. v1beta1 (v0.14) spells MAY_STOP_SEARCH
 * "Borrow" or "Preempt"; v1beta2 spells it "MayStopSearch". */
enum fungibility {
	FUNG_MAY_STOP_SEARCH = 0,
	FUNG_TRY_NEXT_FLAVOR,
};

enum fungibility_preference {
	FPREF_NONE = 0,
	FPREF_BORROWING_OVER_PREEMPTION,
	FPREF_PREEMPTION_OVER_BORROWING,
};

enum preempt_within_cq {
	WCQ_NEVER = 0,
	WCQ_LOWER_PRIORITY,
	WCQ_LOWER_OR_NEWER_EQUAL_PRIORITY,
};

enum reclaim_within_cohort {
	RWC_NEVER = 0,
	RWC_LOWER_PRIORITY,
	RWC_ANY,
};

enum borrow_within_cohort {
	BWC_NEVER = 0,
	BWC_LOWER_PRIORITY,
};

enum admission_mode {
	AM_UNSET = 0,
	AM_USAGE_BASED_FAIR_SHARING, /* UsageBasedAdmissionFairSharing */
	AM_NO_FAIR_SHARING,          /* NoAdmissionFairSharing */
};

enum migration_mode {
	MIG_UNSET = 0,
	MIG_TRY_PREFERRED_FLAVORS,
	MIG_RETAIN_FIRST_ADMISSION,
};

struct admission_check_rule {
	char *name;        /* owned; AdmissionCheck name */
	char **on_flavors; /* owned; empty = all flavors */
	size_t non_flavors;
};

struct cluster_queue {
	struct object_meta meta;
	enum api_version version;

	/* spec */
	struct resource_group *groups; /* owned; resourceGroups */
	size_t ngroups;
	char *cohort;                  /* owned or NULL; cohort / cohortName */
	enum queueing_strategy strategy;
	bool has_ns_selector;          /* false: nil selector matches nothing */
	struct label_selector ns_selector;
	enum fungibility when_can_borrow;  /* default MAY_STOP_SEARCH */
	enum fungibility when_can_preempt; /* default TRY_NEXT_FLAVOR */
	enum fungibility_preference fung_preference;
	enum preempt_within_cq within_cq;
	enum reclaim_within_cohort reclaim;
	enum borrow_within_cohort borrow_policy;
	bool has_borrow_threshold;
	int32_t borrow_threshold;      /* maxPriorityThreshold */
	char **admission_checks;       /* owned; v1beta1 admissionChecks */
	size_t nadmission_checks;
	bool has_ac_strategy;
	struct admission_check_rule *ac_rules; /* owned */
	size_t nac_rules;
	enum stop_policy stop;
	bool has_fs_weight;
	int64_t fs_weight;             /* fairSharing.weight, milli-units */
	enum admission_mode admission_mode;
	enum migration_mode migration;  /* concurrentAdmissionPolicy */
	char *last_acceptable_flavor;   /* owned or NULL */

	/* status */
	struct conditions conds;
	struct flavor_usage *reservation; /* owned; flavorsReservation */
	size_t nreservation;
	struct flavor_usage *usage;       /* owned; flavorsUsage */
	size_t nusage;
	int32_t pending;   /* pendingWorkloads */
	int32_t reserving; /* reservingWorkloads */
	int32_t admitted;  /* admittedWorkloads */
	bool has_fs_status;
	int64_t fs_weighted_share; /* fairSharing.weightedShare */
};

void cluster_queue_release(struct cluster_queue *cq);

/* ------------------------------------------------------------------ */
/* Cohort */

struct cohort {
	struct object_meta meta;
	enum api_version version;
	char *parent;                  /* owned or NULL; parentName */
	struct resource_group *groups; /* owned */
	size_t ngroups;
	bool has_fs_weight;
	int64_t fs_weight;             /* milli-units */
	/* status */
	bool has_fs_status;
	int64_t fs_weighted_share;     /* fairSharing.weightedShare */
};

void cohort_release(struct cohort *c);

/* ------------------------------------------------------------------ */
/* LocalQueue */

struct local_queue {
	struct object_meta meta;
	enum api_version version;
	char *cluster_queue; /* owned; spec.clusterQueue */
	enum stop_policy stop;
	bool has_fs_weight;
	int64_t fs_weight;   /* milli-units */

	/* status */
	struct conditions conds;
	struct flavor_usage *reservation; /* owned; borrowed fields unused */
	size_t nreservation;
	struct flavor_usage *usage;       /* flavorUsage (v1beta1) / flavorsUsage */
	size_t nusage;
	int32_t pending;
	int32_t reserving;
	int32_t admitted;
	/* fairSharing.admissionFairSharingStatus */
	bool has_afs_status;
	struct reslist afs_consumed; /* consumedResources, milli-units */
	int64_t afs_last_ms;         /* lastUpdate */
};

void local_queue_release(struct local_queue *lq);

/* ------------------------------------------------------------------ */
/* WorkloadPriorityClass */

struct workload_priority_class {
	struct object_meta meta;
	enum api_version version;
	bool has_value;    /* value is required */
	int32_t value;
	char *description; /* owned or NULL */
};

void workload_priority_class_release(struct workload_priority_class *w);

/* ------------------------------------------------------------------ */
/* Pod templates (the parts admission reads; the rest rides in raw) */

struct container_res {
	char *name;               /* owned */
	struct reslist requests;
	struct reslist limits;
	bool sidecar;             /* init container with restartPolicy Always */
};

/* spec.resourceClaims[] of a pod (dynamic resource allocation): by
 * template, each pod gets a claim of its own; by name, pods share one. */
struct pod_claim {
	char *name;           /* owned */
	char *template_name;  /* owned or NULL: resourceClaimTemplateName */
	char *claim_name;     /* owned or NULL: resourceClaimName */
};

struct pod_template {
	struct smap labels;      /* metadata.labels */
	struct smap annotations; /* metadata.annotations */
	struct container_res *containers;      /* owned */
	size_t ncontainers;
	struct container_res *init_containers; /* owned */
	size_t ninit_containers;
	struct reslist overhead;   /* spec.overhead */
	bool has_pod_resources;    /* spec.resources (pod-level) present */
	struct reslist pod_requests;
	struct reslist pod_limits;
	struct smap node_selector;
	struct node_affinity affinity; /* required node affinity */
	struct toleration *tols;   /* owned */
	size_t ntols;
	char *priority_class_name; /* owned or NULL */
	char *runtime_class_name;  /* owned or NULL */
	struct pod_claim *claims;  /* owned; spec.resourceClaims */
	size_t nclaims;
	/*
	 * Owned compact JSON of the whole PodTemplateSpec as received, or
	 * NULL. The codec writes it back with metadata.labels/annotations
	 * replaced by the maps above, so fields cueue does not model
	 * (images, volumes, ...) survive untouched.
	 */
	char *raw;
};

void pod_template_release(struct pod_template *t);
void pod_template_copy(struct pod_template *dst, const struct pod_template *src);

/* ------------------------------------------------------------------ */
/* Workload */

struct pod_set {
	char *name;            /* owned; default "main" */
	int32_t count;         /* default 1, >= 0 */
	bool has_min_count;
	int32_t min_count;     /* partial admission floor */
	struct pod_template tmpl;
	char *topology_request; /* owned compact JSON or NULL (TAS, opaque) */
	/* Dynamic resource allocation: per pod, the quota resources its
	 * claim templates' devices stand for (resources.deviceClassMappings).
	 * Not part of the object: the manager fills it from the
	 * ResourceClaimTemplates before the workload is queued (as Kueue's
	 * workload controller does), and the scheduler adds it to the pod's
	 * requests. */
	struct reslist dra;
	bool tas_requested;     /* topologyRequest asks for a placement
				   (required, preferred, unconstrained or a
				   podSetSlice* field: Kueue's
				   IsExplicitlyRequestingTAS), not only
				   podIndexLabel */
};

struct pod_set_assignment {
	char *name;            /* owned; pod set name */
	struct smap flavors; /* resource -> flavor */
	struct reslist usage;  /* resourceUsage: per-pod x count */
	bool has_count;
	int32_t count;
	char *topology_assignment; /* owned compact JSON or NULL (opaque) */
};

struct admission {
	char *cluster_queue;            /* owned */
	struct pod_set_assignment *psa; /* owned; podSetAssignments */
	size_t npsa;
};

void admission_release(struct admission *a);
void admission_copy(struct admission *dst, const struct admission *src);

enum priority_source {
	PSRC_NONE = 0,    /* "" */
	PSRC_WPC,         /* kueue.x-k8s.io/workloadpriorityclass */
	PSRC_POD,         /* scheduling.k8s.io/priorityclass */
};

enum check_state {
	CHECK_PENDING = 0,
	CHECK_READY,
	CHECK_RETRY,
	CHECK_REJECTED,
};

struct admission_check_state {
	char *name;                 /* owned */
	enum check_state state;
	int64_t last_transition_ms;
	char *message;              /* owned or NULL */
	char *pod_set_updates;      /* owned compact JSON or NULL (opaque) */
};

struct reclaimable_pods {
	char *name;    /* owned; pod set */
	int32_t count;
};

/* status.schedulingStats.evictions[]: evictions by reason and cause. */
struct eviction_count {
	char *reason;  /* owned */
	char *cause;   /* owned; underlyingCause, "" when none */
	int32_t count;
};

struct workload {
	struct object_meta meta;
	enum api_version version;

	/* spec */
	struct pod_set *pod_sets;  /* owned; 1..8 (v0.14) */
	size_t npod_sets;
	char *queue_name;          /* owned or NULL */
	char *priority_class_name; /* owned or NULL */
	enum priority_source priority_source;
	bool has_priority;
	int32_t priority;          /* nil treated as 0 */
	bool active;               /* default true */
	bool has_max_exec;
	int32_t max_exec_seconds;  /* maximumExecutionTimeSeconds */

	/* status */
	struct conditions conds;
	bool has_admission;
	struct admission admission;
	bool has_requeue_count;
	int32_t requeue_count;     /* requeueState.count */
	int64_t requeue_at_ms;     /* requeueState.requeueAt; 0 = unset */
	struct reclaimable_pods *reclaimable; /* owned */
	size_t nreclaimable;
	struct eviction_count *evictions; /* owned; schedulingStats */
	size_t nevictions;
	struct admission_check_state *checks; /* owned; admissionChecks */
	size_t nchecks;
	bool has_accumulated;
	int64_t accumulated_seconds; /* accumulatedPast(Exexc|Exec)utionTimeSeconds */
};

void workload_release(struct workload *w);
/* Deep copy; dst is released first. */
void workload_copy(struct workload *dst, const struct workload *src);
int32_t workload_priority(const struct workload *w); /* nil -> 0 */
bool workload_is_finished(const struct workload *w);
bool workload_is_admitted(const struct workload *w);
bool workload_has_quota_reservation(const struct workload *w);
/* Holds quota: QuotaReserved with an admission, not finished. An
 * inactive (spec.active false) or evicted workload keeps its quota until
 * its eviction completed and the reservation is cleared: its Job may
 * still run until then. */
bool workload_holds_quota(const struct workload *w);
/* The cache key "ns/name" (NULL parts as "") into buf when it fits,
 * else a new string: the caller frees the result when it is not buf. */
char *object_key_buf(char *buf, size_t size, const char *ns,
		     const char *name);

/* ------------------------------------------------------------------ */
/* batch/v1 Job: what the integration reads */

struct job {
	struct object_meta meta;
	bool suspend;             /* spec.suspend (nil = false) */
	bool has_parallelism;
	int32_t parallelism;      /* API default 1 */
	bool has_completions;
	int32_t completions;      /* nil = parallelism */
	bool indexed;             /* completionMode Indexed */
	struct pod_template tmpl;

	/* status */
	int32_t active;
	int32_t ready;
	int32_t succeeded;
	int32_t uncounted_succeeded; /* uncountedTerminatedPods.succeeded:
				       pods that succeeded, not yet in
				       succeeded */
	int32_t failed;
	int64_t start_ms;      /* status.startTime; 0 = unset */
	int64_t completion_ms; /* status.completionTime; 0 = unset */
	struct conditions conds;
};

void job_release(struct job *j);

#endif
