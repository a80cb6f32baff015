/*
 * kueue_metrics: the table of Kueue's (v0.14) and cueue's metric
 * families, and the event functions the manager calls. The names, help
 * texts, label names and buckets follow Kueue's pkg/metrics/metrics.go
 * (v0.14 labels); kueue-api.md §14.2 lists them.
 */
#include "controller/kueue_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "controller/metrics.h"

/* Kueue's generateExponentialBuckets(14): 1, then 2.5 * 2^k. */
static const double wait_buckets[14] = {
	1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240,
};

/* kueue_build_info's compiler label (Go's says "gc"). */
#if defined(__clang__)
#define COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define COMPILER "gcc " __VERSION__
#else
#define COMPILER "cc"
#endif

/* cueue's scheduling cycle: 100 us .. 10 s. */
static const double cycle_buckets[16] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

enum fam {
	F_ATTEMPTS,
	F_ATTEMPT_DURATION,
	F_PREEMPTION_SKIPS,
	F_BUILD_INFO,
	F_PENDING,
	F_QR_TOTAL,
	F_QR_WAIT,
	F_ADMITTED_TOTAL,
	F_ADMISSION_WAIT,
	F_CHECKS_WAIT,
	F_READY_WAIT,
	F_ADMITTED_UNTIL_READY,
	F_EVICTED,
	F_EVICTED_ONCE,
	F_PODS_READY_TO_EVICTED,
	F_PREEMPTED,
	F_REPLACED_SLICES,
	F_RESERVING_ACTIVE,
	F_ADMITTED_ACTIVE,
	F_CQ_STATUS,
	F_CQ_WEIGHTED_SHARE,
	F_COHORT_WEIGHTED_SHARE,
	F_CYCLE,
	F_API_REQUESTS,
	F_WEBHOOK_LATENCY,
	F_WEBHOOK_REQUESTS,
	/* registered with enableClusterQueueResources only */
	F_RES_RESERVATION,
	F_RES_USAGE,
	F_RES_NOMINAL,
	F_RES_BORROWING,
	F_RES_LENDING,
	/* registered with the LocalQueueMetrics gate only */
	F_LQ_PENDING,
	F_LQ_QR_TOTAL,
	F_LQ_QR_WAIT,
	F_LQ_ADMITTED_TOTAL,
	F_LQ_ADMISSION_WAIT,
	F_LQ_CHECKS_WAIT,
	F_LQ_READY_WAIT,
	F_LQ_ADMITTED_UNTIL_READY,
	F_LQ_EVICTED,
	F_LQ_RESERVING_ACTIVE,
	F_LQ_ADMITTED_ACTIVE,
	F_LQ_STATUS,
	F_LQ_RES_RESERVATION,
	F_LQ_RES_USAGE,
	F_COUNT
};

/* Which option registers a family. */
enum gate { G_ALWAYS, G_CQ_RESOURCES, G_LQ_METRICS };

enum buckets { B_NONE, B_WAIT, B_DEFAULT, B_CYCLE };

struct fam_def {
	enum fam id;
	enum metric_type type;
	const char *name;
	const char *help;
	const char *const *labels;
	enum buckets buckets;
	enum gate gate;
};

#define CQ_PC METRIC_LABELS("cluster_queue", "priority_class")
#define RES_LABELS METRIC_LABELS("cohort", "cluster_queue", "flavor", \
				 "resource")
#define LQ_NN METRIC_LABELS("name", "namespace")
#define LQ_PC METRIC_LABELS("name", "namespace", "priority_class")
#define LQ_RES METRIC_LABELS("name", "namespace", "flavor", "resource")
#define RESULT_HELP \
	"The label 'result' can have the following values:\n" \
	"- 'success' means that at least one workload was admitted.,\n" \
	"- 'inadmissible' means that no workload was admitted."
#define REASON_HELP \
	"The label 'reason' can have the following values:\n" \
	"- \"Preempted\" means that the workload was evicted in order to " \
	"free resources for a workload with a higher priority or " \
	"reclamation of nominal quota.\n" \
	"- \"PodsReadyTimeout\" means that the eviction took place due to " \
	"a PodsReady timeout.\n" \
	"- \"AdmissionCheck\" means that the workload was evicted because " \
	"at least one admission check transitioned to False.\n" \
	"- \"ClusterQueueStopped\" means that the workload was evicted " \
	"because the ClusterQueue is stopped.\n" \
	"- \"LocalQueueStopped\" means that the workload was evicted " \
	"because the LocalQueue is stopped.\n" \
	"- \"NodeFailures\" means that the workload was evicted due to " \
	"node failures when using TopologyAwareScheduling.\n" \
	"- \"Deactivated\" means that the workload was evicted because " \
	"spec.active is set to false.\n"
#define CAUSE_HELP(label) \
	"The label '" label "' can have the following values:\n" \
	"- \"\" means that the value in 'reason' label is the root cause " \
	"for eviction.\n"
#define CAUSE_TAIL \
	"- \"AdmissionCheck\" means that the workload was evicted by Kueue " \
	"due to a rejected admission check.\n" \
	"- \"MaximumExecutionTimeExceeded\" means that the workload was " \
	"evicted by Kueue due to maximum execution time exceeded.\n" \
	"- \"RequeuingLimitExceeded\" means that the workload was evicted " \
	"by Kueue due to requeuing limit exceeded."
#define SHARE_HELP(who, where) \
	"Reports a value that representing the maximum of the ratios of " \
	"usage above nominal\nquota to the lendable resources in the " \
	where ", among all the resources provided by\nthe " who ", and " \
	"divided by the weight.\nIf zero, it means that the usage of the " \
	who " is below the nominal quota.\nIf the " who " has a weight of " \
	"zero and is borrowing, this will return 9223372036854775807,\n" \
	"the maximum possible share value."

static const struct fam_def defs[] = {
	{ F_ATTEMPTS, METRIC_COUNTER, "kueue_admission_attempts_total",
	  "The total number of attempts to admit workloads.\n"
	  "Each admission attempt might try to admit more than one "
	  "workload.\n" RESULT_HELP,
	  METRIC_LABELS("result"), B_NONE, G_ALWAYS },
	{ F_ATTEMPT_DURATION, METRIC_HISTOGRAM,
	  "kueue_admission_attempt_duration_seconds",
	  "The latency of an admission attempt.\n" RESULT_HELP,
	  METRIC_LABELS("result"), B_DEFAULT, G_ALWAYS },
	{ F_PREEMPTION_SKIPS, METRIC_GAUGE,
	  "kueue_admission_cycle_preemption_skips",
	  "The number of Workloads in the ClusterQueue that got preemption "
	  "candidates but had to be skipped because other ClusterQueues "
	  "needed the same resources in the same cycle",
	  METRIC_LABELS("cluster_queue"), B_NONE, G_ALWAYS },
	{ F_BUILD_INFO, METRIC_GAUGE, "kueue_build_info",
	  "Kueue build information. 1 labeled by git version, git commit, "
	  "build date, go version, compiler, platform",
	  METRIC_LABELS("git_version", "git_commit", "build_date",
			"go_version", "compiler", "platform"),
	  B_NONE, G_ALWAYS },
	{ F_PENDING, METRIC_GAUGE, "kueue_pending_workloads",
	  "The number of pending workloads, per 'cluster_queue' and "
	  "'status'.\n'status' can have the following values:\n"
	  "- \"active\" means that the workloads are in the admission "
	  "queue.\n- \"inadmissible\" means there was a failed admission "
	  "attempt for these workloads and they won't be retried until "
	  "cluster conditions, which could make this workload admissible, "
	  "change",
	  METRIC_LABELS("cluster_queue", "status"), B_NONE, G_ALWAYS },
	{ F_QR_TOTAL, METRIC_COUNTER, "kueue_quota_reserved_workloads_total",
	  "The total number of quota reserved workloads per 'cluster_queue'",
	  CQ_PC, B_NONE, G_ALWAYS },
	{ F_QR_WAIT, METRIC_HISTOGRAM,
	  "kueue_quota_reserved_wait_time_seconds",
	  "The time between a workload was created or requeued until it got "
	  "quota reservation, per 'cluster_queue'",
	  CQ_PC, B_WAIT, G_ALWAYS },
	{ F_ADMITTED_TOTAL, METRIC_COUNTER, "kueue_admitted_workloads_total",
	  "The total number of admitted workloads per 'cluster_queue'",
	  CQ_PC, B_NONE, G_ALWAYS },
	{ F_ADMISSION_WAIT, METRIC_HISTOGRAM,
	  "kueue_admission_wait_time_seconds",
	  "The time between a workload was created or requeued until "
	  "admission, per 'cluster_queue'",
	  CQ_PC, B_WAIT, G_ALWAYS },
	{ F_CHECKS_WAIT, METRIC_HISTOGRAM,
	  "kueue_admission_checks_wait_time_seconds",
	  "The time from when a workload got the quota reservation until "
	  "admission, per 'cluster_queue'",
	  CQ_PC, B_WAIT, G_ALWAYS },
	{ F_READY_WAIT, METRIC_HISTOGRAM, "kueue_ready_wait_time_seconds",
	  "The time between a workload was created or requeued until ready, "
	  "per 'cluster_queue'",
	  CQ_PC, B_WAIT, G_ALWAYS },
	{ F_ADMITTED_UNTIL_READY, METRIC_HISTOGRAM,
	  "kueue_admitted_until_ready_wait_time_seconds",
	  "The time between a workload was admitted until ready, per "
	  "'cluster_queue'",
	  CQ_PC, B_WAIT, G_ALWAYS },
	{ F_EVICTED, METRIC_COUNTER, "kueue_evicted_workloads_total",
	  "The number of evicted workloads per 'cluster_queue',\n"
	  REASON_HELP CAUSE_HELP("underlying_cause") CAUSE_TAIL,
	  METRIC_LABELS("cluster_queue", "reason", "underlying_cause",
			"priority_class"), B_NONE, G_ALWAYS },
	{ F_EVICTED_ONCE, METRIC_COUNTER, "kueue_evicted_workloads_once_total",
	  "The number of unique workload evictions per 'cluster_queue',\n"
	  REASON_HELP CAUSE_HELP("detailed_reason")
	  "- \"WaitForStart\" means that the pods have not been ready since "
	  "admission, or the workload is not admitted.\n"
	  "- \"WaitForRecovery\" means that the Pods were ready since the "
	  "workload admission, but some pod has failed.\n" CAUSE_TAIL,
	  METRIC_LABELS("cluster_queue", "reason", "detailed_reason",
			"priority_class"), B_NONE, G_ALWAYS },
	{ F_PODS_READY_TO_EVICTED, METRIC_HISTOGRAM,
	  "kueue_pods_ready_to_evicted_time_seconds",
	  "The number of seconds between a workload's pods being ready and "
	  "eviction workloads per 'cluster_queue',\n"
	  REASON_HELP CAUSE_HELP("underlying_cause") CAUSE_TAIL,
	  METRIC_LABELS("cluster_queue", "reason", "underlying_cause"),
	  B_WAIT, G_ALWAYS },
	{ F_PREEMPTED, METRIC_COUNTER, "kueue_preempted_workloads_total",
	  "The number of preempted workloads per "
	  "'preempting_cluster_queue',\n"
	  "The label 'reason' can have the following values:\n"
	  "- \"InClusterQueue\" means that the workload was preempted by a "
	  "workload in the same ClusterQueue.\n"
	  "- \"InCohortReclamation\" means that the workload was preempted "
	  "by a workload in the same cohort due to reclamation of nominal "
	  "quota.\n"
	  "- \"InCohortFairSharing\" means that the workload was preempted "
	  "by a workload in the same cohort Fair Sharing.\n"
	  "- \"InCohortReclaimWhileBorrowing\" means that the workload was "
	  "preempted by a workload in the same cohort due to reclamation of "
	  "nominal quota while borrowing.",
	  METRIC_LABELS("preempting_cluster_queue", "reason"), B_NONE,
	  G_ALWAYS },
	{ F_REPLACED_SLICES, METRIC_COUNTER,
	  "kueue_replaced_workload_slices_total",
	  "The number of replaced workload slices per 'cluster_queue'",
	  METRIC_LABELS("cluster_queue"), B_NONE, G_ALWAYS },
	{ F_RESERVING_ACTIVE, METRIC_GAUGE, "kueue_reserving_active_workloads",
	  "The number of Workloads that are reserving quota, per "
	  "'cluster_queue'",
	  METRIC_LABELS("cluster_queue"), B_NONE, G_ALWAYS },
	{ F_ADMITTED_ACTIVE, METRIC_GAUGE, "kueue_admitted_active_workloads",
	  "The number of admitted Workloads that are active (unsuspended and "
	  "not finished), per 'cluster_queue'",
	  METRIC_LABELS("cluster_queue"), B_NONE, G_ALWAYS },
	{ F_CQ_STATUS, METRIC_GAUGE, "kueue_cluster_queue_status",
	  "Reports 'cluster_queue' with its 'status' (with possible values "
	  "'pending', 'active' or 'terminated').\nFor a ClusterQueue, the "
	  "metric only reports a value of 1 for one of the statuses.",
	  METRIC_LABELS("cluster_queue", "status"), B_NONE, G_ALWAYS },
	{ F_CQ_WEIGHTED_SHARE, METRIC_GAUGE,
	  "kueue_cluster_queue_weighted_share",
	  SHARE_HELP("ClusterQueue", "cohort"),
	  METRIC_LABELS("cluster_queue"), B_NONE, G_ALWAYS },
	{ F_COHORT_WEIGHTED_SHARE, METRIC_GAUGE, "kueue_cohort_weighted_share",
	  SHARE_HELP("Cohort", "Cohort"),
	  METRIC_LABELS("cohort"), B_NONE, G_ALWAYS },
	{ F_CYCLE, METRIC_HISTOGRAM, "cueue_scheduling_cycle_duration_seconds",
	  "The duration of one scheduling cycle of cueue (every round it "
	  "ran), admitted or not.",
	  METRIC_NO_LABELS, B_CYCLE, G_ALWAYS },
	{ F_API_REQUESTS, METRIC_COUNTER, "cueue_api_requests_total",
	  "The number of finished requests cueue made to the Kubernetes API "
	  "server, per verb and HTTP status code ('<error>' when no answer "
	  "came).",
	  METRIC_LABELS("verb", "code"), B_NONE, G_ALWAYS },
	/* controller-runtime's webhook server metrics (pkg/webhook/internal/
	 * metrics), which Kueue's manager exposes too */
	{ F_WEBHOOK_LATENCY, METRIC_HISTOGRAM,
	  "controller_runtime_webhook_latency_seconds",
	  "Histogram of the latency of processing admission requests",
	  METRIC_LABELS("webhook"), B_DEFAULT, G_ALWAYS },
	{ F_WEBHOOK_REQUESTS, METRIC_COUNTER,
	  "controller_runtime_webhook_requests_total",
	  "Total number of admission requests by HTTP status code.",
	  METRIC_LABELS("code", "webhook"), B_NONE, G_ALWAYS },
	{ F_RES_RESERVATION, METRIC_GAUGE,
	  "kueue_cluster_queue_resource_reservation",
	  "Reports the cluster_queue's total resource reservation within all "
	  "the flavors", RES_LABELS, B_NONE, G_CQ_RESOURCES },
	{ F_RES_USAGE, METRIC_GAUGE, "kueue_cluster_queue_resource_usage",
	  "Reports the cluster_queue's total resource usage within all the "
	  "flavors", RES_LABELS, B_NONE, G_CQ_RESOURCES },
	{ F_RES_NOMINAL, METRIC_GAUGE, "kueue_cluster_queue_nominal_quota",
	  "Reports the cluster_queue's resource nominal quota within all the "
	  "flavors", RES_LABELS, B_NONE, G_CQ_RESOURCES },
	{ F_RES_BORROWING, METRIC_GAUGE, "kueue_cluster_queue_borrowing_limit",
	  "Reports the cluster_queue's resource borrowing limit within all "
	  "the flavors", RES_LABELS, B_NONE, G_CQ_RESOURCES },
	{ F_RES_LENDING, METRIC_GAUGE, "kueue_cluster_queue_lending_limit",
	  "Reports the cluster_queue's resource lending limit within all the "
	  "flavors", RES_LABELS, B_NONE, G_CQ_RESOURCES },
	/* LocalQueue metrics (feature gate LocalQueueMetrics; v0.14 labels:
	 * name, namespace, and priority_class on counters and histograms) */
	{ F_LQ_PENDING, METRIC_GAUGE, "kueue_local_queue_pending_workloads",
	  "The number of pending workloads, per 'local_queue' and "
	  "'status'.\n'status' can have the following values:\n"
	  "- \"active\" means that the workloads are in the admission "
	  "queue.\n- \"inadmissible\" means there was a failed admission "
	  "attempt for these workloads and they won't be retried until "
	  "cluster conditions, which could make this workload admissible, "
	  "change",
	  METRIC_LABELS("name", "namespace", "status"), B_NONE,
	  G_LQ_METRICS },
	{ F_LQ_QR_TOTAL, METRIC_COUNTER,
	  "kueue_local_queue_quota_reserved_workloads_total",
	  "The total number of quota reserved workloads per 'local_queue'",
	  LQ_PC, B_NONE, G_LQ_METRICS },
	{ F_LQ_QR_WAIT, METRIC_HISTOGRAM,
	  "kueue_local_queue_quota_reserved_wait_time_seconds",
	  "The time between a workload was created or requeued until it got "
	  "quota reservation, per 'local_queue'",
	  LQ_PC, B_WAIT, G_LQ_METRICS },
	{ F_LQ_ADMITTED_TOTAL, METRIC_COUNTER,
	  "kueue_local_queue_admitted_workloads_total",
	  "The total number of admitted workloads per 'local_queue'",
	  LQ_PC, B_NONE, G_LQ_METRICS },
	{ F_LQ_ADMISSION_WAIT, METRIC_HISTOGRAM,
	  "kueue_local_queue_admission_wait_time_seconds",
	  "The time between a workload was created or requeued until "
	  "admission, per 'local_queue'",
	  LQ_PC, B_WAIT, G_LQ_METRICS },
	{ F_LQ_CHECKS_WAIT, METRIC_HISTOGRAM,
	  "kueue_local_queue_admission_checks_wait_time_seconds",
	  "The time from when a workload got the quota reservation until "
	  "admission, per 'local_queue'",
	  LQ_PC, B_WAIT, G_LQ_METRICS },
	{ F_LQ_READY_WAIT, METRIC_HISTOGRAM,
	  "kueue_local_queue_ready_wait_time_seconds",
	  "The time between a workload was created or requeued until ready, "
	  "per 'local_queue'",
	  LQ_PC, B_WAIT, G_LQ_METRICS },
	{ F_LQ_ADMITTED_UNTIL_READY, METRIC_HISTOGRAM,
	  "kueue_local_queue_admitted_until_ready_wait_time_seconds",
	  "The time between a workload was admitted until ready, per "
	  "'local_queue'",
	  LQ_PC, B_WAIT, G_LQ_METRICS },
	{ F_LQ_EVICTED, METRIC_COUNTER,
	  "kueue_local_queue_evicted_workloads_total",
	  "The number of evicted workloads per 'local_queue',\n"
	  REASON_HELP CAUSE_HELP("underlying_cause") CAUSE_TAIL,
	  METRIC_LABELS("name", "namespace", "reason", "underlying_cause",
			"priority_class"), B_NONE, G_LQ_METRICS },
	{ F_LQ_RESERVING_ACTIVE, METRIC_GAUGE,
	  "kueue_local_queue_reserving_active_workloads",
	  "The number of Workloads that are reserving quota, per "
	  "'localQueue'",
	  LQ_NN, B_NONE, G_LQ_METRICS },
	{ F_LQ_ADMITTED_ACTIVE, METRIC_GAUGE,
	  "kueue_local_queue_admitted_active_workloads",
	  "The number of admitted Workloads that are active (unsuspended and "
	  "not finished), per 'localQueue'",
	  LQ_NN, B_NONE, G_LQ_METRICS },
	{ F_LQ_STATUS, METRIC_GAUGE, "kueue_local_queue_status",
	  "Reports 'localQueue' with its 'active' status (with possible "
	  "values 'True', 'False', or 'Unknown').\nFor a LocalQueue, the "
	  "metric only reports a value of 1 for one of the statuses.",
	  METRIC_LABELS("name", "namespace", "active"), B_NONE,
	  G_LQ_METRICS },
	{ F_LQ_RES_RESERVATION, METRIC_GAUGE,
	  "kueue_local_queue_resource_reservation",
	  "Reports the localQueue's total resource reservation within all "
	  "the flavors", LQ_RES, B_NONE, G_LQ_METRICS },
	{ F_LQ_RES_USAGE, METRIC_GAUGE, "kueue_local_queue_resource_usage",
	  "Reports the localQueue's total resource usage within all the "
	  "flavors", LQ_RES, B_NONE, G_LQ_METRICS },
};

struct kueue_metrics {
	struct metric_family *f[F_COUNT]; /* borrowed from the registry;
					     NULL when not registered */
	bool cq_resources;
	bool lq_metrics;
	/* Handles of fixed series, looked up once. */
	struct metric *attempts[2];        /* [success] */
	struct metric *attempt_duration[2];
	struct metric *cycle;
};

static const char *platform(void)
{
#if defined(__x86_64__)
	return "linux/amd64";
#elif defined(__aarch64__)
	return "linux/arm64";
#elif defined(__powerpc64__)
	return "linux/ppc64le";
#elif defined(__s390x__)
	return "linux/s390x";
#else
	return "linux/unknown";
#endif
}

struct kueue_metrics *kueue_metrics_new(struct metrics *reg,
					const struct kueue_metrics_opts *o)
{
	struct kueue_metrics *km = xcalloc(1, sizeof(*km));
	const char *none = "";

	km->cq_resources = o && o->cq_resources;
	km->lq_metrics = o && o->lq_metrics;
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		const struct fam_def *d = &defs[i];

		if ((d->gate == G_CQ_RESOURCES && !km->cq_resources) ||
		    (d->gate == G_LQ_METRICS && !km->lq_metrics))
			continue;
		switch (d->type) {
		case METRIC_COUNTER:
			km->f[d->id] = metrics_counter(reg, d->name, d->help,
						       d->labels);
			break;
		case METRIC_GAUGE:
			km->f[d->id] = metrics_gauge(reg, d->name, d->help,
						     d->labels);
			break;
		case METRIC_HISTOGRAM:
			km->f[d->id] = d->buckets == B_WAIT
				? metrics_histogram(reg, d->name, d->help,
					d->labels, wait_buckets, 14)
				: d->buckets == B_CYCLE
				? metrics_histogram(reg, d->name, d->help,
					d->labels, cycle_buckets, 16)
				: metrics_histogram(reg, d->name, d->help,
					d->labels, metrics_default_buckets,
					11);
			break;
		}
	}
	/* Kueue creates these series lazily too; cueue pre-creates the
	 * two results so rate() works from the first attempt. */
	km->attempts[0] = metric_family_get(km->f[F_ATTEMPTS],
					    METRIC_VALUES("inadmissible"));
	km->attempts[1] = metric_family_get(km->f[F_ATTEMPTS],
					    METRIC_VALUES("success"));
	km->attempt_duration[0] = metric_family_get(
		km->f[F_ATTEMPT_DURATION], METRIC_VALUES("inadmissible"));
	km->attempt_duration[1] = metric_family_get(
		km->f[F_ATTEMPT_DURATION], METRIC_VALUES("success"));
	km->cycle = metric_family_get(km->f[F_CYCLE], METRIC_NO_LABELS);
	metric_set(metric_family_get(km->f[F_BUILD_INFO], METRIC_VALUES(
		o && o->git_version ? o->git_version : none,
		o && o->git_commit ? o->git_commit : none,
		o && o->build_date ? o->build_date : none,
		none, /* go_version: cueue is not written in Go */
		COMPILER, platform())), 1);
	return km;
}

void kueue_metrics_free(struct kueue_metrics *km)
{
	free(km);
}

/* The child for values, created when absent. */
static struct metric *get(struct kueue_metrics *km, enum fam id,
			  const char *const *values)
{
	return metric_family_get(km->f[id], values);
}

static const char *s(const char *v)
{
	return v ? v : "";
}

void kueue_metrics_admission_attempt(struct kueue_metrics *km, bool success,
				     double seconds)
{
	metric_inc(km->attempts[success]);
	metric_observe(km->attempt_duration[success], seconds);
}

void kueue_metrics_cycle(struct kueue_metrics *km, double seconds)
{
	metric_observe(km->cycle, seconds);
}

void kueue_metrics_preemption_skips(struct kueue_metrics *km, const char *cq,
				    int64_t n)
{
	metric_set(get(km, F_PREEMPTION_SKIPS, METRIC_VALUES(cq)), (double)n);
}

void kueue_metrics_preempted(struct kueue_metrics *km, const char *cq,
			     const char *reason)
{
	metric_inc(get(km, F_PREEMPTED, METRIC_VALUES(cq, s(reason))));
}

void kueue_metrics_quota_reserved(struct kueue_metrics *km, const char *cq,
				  const char *priority_class, double wait_s)
{
	const char *const *v = METRIC_VALUES(cq, s(priority_class));

	metric_inc(get(km, F_QR_TOTAL, v));
	metric_observe(get(km, F_QR_WAIT, v), wait_s);
}

void kueue_metrics_admitted(struct kueue_metrics *km, const char *cq,
			    const char *priority_class, double wait_s)
{
	const char *const *v = METRIC_VALUES(cq, s(priority_class));

	metric_inc(get(km, F_ADMITTED_TOTAL, v));
	metric_observe(get(km, F_ADMISSION_WAIT, v), wait_s);
}

void kueue_metrics_admission_checks_wait(struct kueue_metrics *km,
					 const char *cq,
					 const char *priority_class,
					 double wait_s)
{
	metric_observe(get(km, F_CHECKS_WAIT,
			   METRIC_VALUES(cq, s(priority_class))), wait_s);
}

void kueue_metrics_ready(struct kueue_metrics *km, const char *cq,
			 const char *priority_class, double ready_wait_s,
			 double admitted_until_ready_s)
{
	const char *const *v = METRIC_VALUES(cq, s(priority_class));

	metric_observe(get(km, F_READY_WAIT, v), ready_wait_s);
	metric_observe(get(km, F_ADMITTED_UNTIL_READY, v),
		       admitted_until_ready_s);
}

void kueue_metrics_evicted(struct kueue_metrics *km, const char *cq,
			   const char *reason, const char *underlying_cause,
			   const char *priority_class)
{
	metric_inc(get(km, F_EVICTED, METRIC_VALUES(cq, s(reason),
		s(underlying_cause), s(priority_class))));
}

void kueue_metrics_evicted_once(struct kueue_metrics *km, const char *cq,
				const char *reason,
				const char *detailed_reason,
				const char *priority_class)
{
	metric_inc(get(km, F_EVICTED_ONCE, METRIC_VALUES(cq, s(reason),
		s(detailed_reason), s(priority_class))));
}

void kueue_metrics_pods_ready_to_evicted(struct kueue_metrics *km,
					 const char *cq, const char *reason,
					 const char *underlying_cause,
					 double seconds)
{
	metric_observe(get(km, F_PODS_READY_TO_EVICTED, METRIC_VALUES(cq,
		s(reason), s(underlying_cause))), seconds);
}

void kueue_metrics_replaced_slice(struct kueue_metrics *km, const char *cq)
{
	metric_inc(get(km, F_REPLACED_SLICES, METRIC_VALUES(cq)));
}

void kueue_metrics_pending(struct kueue_metrics *km, const char *cq,
			   int64_t active, int64_t inadmissible)
{
	metric_set(get(km, F_PENDING, METRIC_VALUES(cq, "active")),
		   (double)active);
	metric_set(get(km, F_PENDING, METRIC_VALUES(cq, "inadmissible")),
		   (double)inadmissible);
}

void kueue_metrics_cq_workloads(struct kueue_metrics *km, const char *cq,
				int64_t reserving, int64_t admitted)
{
	metric_set(get(km, F_RESERVING_ACTIVE, METRIC_VALUES(cq)),
		   (double)reserving);
	metric_set(get(km, F_ADMITTED_ACTIVE, METRIC_VALUES(cq)),
		   (double)admitted);
}

void kueue_metrics_cq_status(struct kueue_metrics *km, const char *cq,
			     enum kueue_cq_status st)
{
	static const char *const names[] = {
		[KUEUE_CQ_PENDING] = "pending",
		[KUEUE_CQ_ACTIVE] = "active",
		[KUEUE_CQ_TERMINATING] = "terminating",
	};

	for (int i = KUEUE_CQ_PENDING; i <= KUEUE_CQ_TERMINATING; i++)
		metric_set(get(km, F_CQ_STATUS, METRIC_VALUES(cq, names[i])),
			   i == (int)st ? 1 : 0);
}

/* Milli-units to Kueue's QuantityToFloat (base units); a nil limit is
 * 0 in v0.14. */
static double base_units(int64_t milli)
{
	if (milli == KUEUE_METRICS_NO_LIMIT)
		return 0;
	return (double)milli / 1000.0;
}

void kueue_metrics_cq_resources(struct kueue_metrics *km, const char *cohort,
				const char *cq, const char *flavor,
				const char *resource,
				const struct kueue_resource_values *v)
{
	const char *const *lv = METRIC_VALUES(s(cohort), cq, flavor,
					      resource);

	if (!km->cq_resources)
		return;
	metric_set(get(km, F_RES_NOMINAL, lv), base_units(v->nominal));
	metric_set(get(km, F_RES_BORROWING, lv), base_units(v->borrowing));
	metric_set(get(km, F_RES_LENDING, lv), base_units(v->lending));
	metric_set(get(km, F_RES_RESERVATION, lv),
		   base_units(v->reservation));
	metric_set(get(km, F_RES_USAGE, lv), base_units(v->usage));
}

void kueue_metrics_cq_resources_clear(struct kueue_metrics *km,
				      const char *cq)
{
	if (!km->cq_resources)
		return;
	for (int id = F_RES_RESERVATION; id <= F_RES_LENDING; id++)
		metric_family_remove_matching(km->f[id], "cluster_queue", cq);
}

void kueue_metrics_cq_resource_remove(struct kueue_metrics *km,
				      const char *cohort, const char *cq,
				      const char *flavor,
				      const char *resource)
{
	if (!km->cq_resources)
		return;
	for (int id = F_RES_RESERVATION; id <= F_RES_LENDING; id++)
		metric_family_remove(km->f[id], METRIC_VALUES(s(cohort), cq,
							      flavor,
							      resource));
}

void kueue_metrics_cq_weighted_share(struct kueue_metrics *km,
				     const char *cq, int64_t share)
{
	metric_set(get(km, F_CQ_WEIGHTED_SHARE, METRIC_VALUES(cq)),
		   (double)share);
}

void kueue_metrics_cohort_weighted_share(struct kueue_metrics *km,
					 const char *cohort, int64_t share)
{
	metric_set(get(km, F_COHORT_WEIGHTED_SHARE, METRIC_VALUES(cohort)),
		   (double)share);
}

void kueue_metrics_cq_delete(struct kueue_metrics *km, const char *cq)
{
	static const enum fam by_cq[] = {
		F_PREEMPTION_SKIPS, F_PENDING, F_QR_TOTAL, F_QR_WAIT,
		F_ADMITTED_TOTAL, F_ADMISSION_WAIT, F_CHECKS_WAIT,
		F_READY_WAIT, F_ADMITTED_UNTIL_READY, F_EVICTED,
		F_EVICTED_ONCE, F_PODS_READY_TO_EVICTED, F_REPLACED_SLICES,
		F_RESERVING_ACTIVE, F_ADMITTED_ACTIVE, F_CQ_STATUS,
		F_CQ_WEIGHTED_SHARE,
	};

	for (size_t i = 0; i < sizeof(by_cq) / sizeof(by_cq[0]); i++)
		metric_family_remove_matching(km->f[by_cq[i]],
					      "cluster_queue", cq);
	metric_family_remove_matching(km->f[F_PREEMPTED],
				      "preempting_cluster_queue", cq);
	kueue_metrics_cq_resources_clear(km, cq);
}

void kueue_metrics_cohort_delete(struct kueue_metrics *km,
				 const char *cohort)
{
	metric_family_remove(km->f[F_COHORT_WEIGHTED_SHARE],
			     METRIC_VALUES(cohort));
}

/* code as its decimal text, "<error>" for 0 (no answer), in buf. */
static const char *code_text(int code, char buf[4])
{
	if (code <= 0 || code > 999)
		return "<error>";
	buf[0] = (char)('0' + code / 100);
	buf[1] = (char)('0' + code / 10 % 10);
	buf[2] = (char)('0' + code % 10);
	buf[3] = '\0';
	return code >= 100 ? buf : buf + (code >= 10 ? 1 : 2);
}

void kueue_metrics_api_request(struct kueue_metrics *km, const char *verb,
			       int code)
{
	char buf[4];

	metric_inc(get(km, F_API_REQUESTS, METRIC_VALUES(s(verb),
		code_text(code, buf))));
}

void kueue_metrics_api_requests_set(struct kueue_metrics *km,
				    const char *verb, int code, uint64_t n)
{
	char buf[4];

	metric_set(get(km, F_API_REQUESTS, METRIC_VALUES(s(verb),
		code_text(code, buf))), (double)n);
}

void kueue_metrics_webhook_observe(void *km, const char *path, unsigned code,
				   double seconds)
{
	struct kueue_metrics *k = km;
	char buf[4];

	metric_observe(get(k, F_WEBHOOK_LATENCY, METRIC_VALUES(s(path))),
		       seconds);
	metric_inc(get(k, F_WEBHOOK_REQUESTS, METRIC_VALUES(
		code_text((int)code, buf), s(path))));
}

/* ---- LocalQueues (feature gate LocalQueueMetrics) ---- */

bool kueue_metrics_lq_enabled(const struct kueue_metrics *km)
{
	return km && km->lq_metrics;
}

void kueue_metrics_lq_pending(struct kueue_metrics *km, const char *ns,
			      const char *name, int64_t active,
			      int64_t inadmissible)
{
	if (!km->lq_metrics)
		return;
	metric_set(get(km, F_LQ_PENDING, METRIC_VALUES(name, ns, "active")),
		   (double)active);
	metric_set(get(km, F_LQ_PENDING, METRIC_VALUES(name, ns,
						       "inadmissible")),
		   (double)inadmissible);
}

void kueue_metrics_lq_workloads(struct kueue_metrics *km, const char *ns,
				const char *name, int64_t reserving,
				int64_t admitted)
{
	if (!km->lq_metrics)
		return;
	metric_set(get(km, F_LQ_RESERVING_ACTIVE, METRIC_VALUES(name, ns)),
		   (double)reserving);
	metric_set(get(km, F_LQ_ADMITTED_ACTIVE, METRIC_VALUES(name, ns)),
		   (double)admitted);
}

void kueue_metrics_lq_status(struct kueue_metrics *km, const char *ns,
			     const char *name, enum kueue_lq_active st)
{
	static const char *const names[] = {
		[KUEUE_LQ_TRUE] = "True",
		[KUEUE_LQ_FALSE] = "False",
		[KUEUE_LQ_UNKNOWN] = "Unknown",
	};

	if (!km->lq_metrics)
		return;
	for (int i = KUEUE_LQ_TRUE; i <= KUEUE_LQ_UNKNOWN; i++)
		metric_set(get(km, F_LQ_STATUS,
			       METRIC_VALUES(name, ns, names[i])),
			   i == (int)st ? 1 : 0);
}

void kueue_metrics_lq_quota_reserved(struct kueue_metrics *km,
				     const char *ns, const char *name,
				     const char *priority_class, double wait_s)
{
	const char *const *v = METRIC_VALUES(name, ns, s(priority_class));

	if (!km->lq_metrics)
		return;
	metric_inc(get(km, F_LQ_QR_TOTAL, v));
	metric_observe(get(km, F_LQ_QR_WAIT, v), wait_s);
}

void kueue_metrics_lq_admitted(struct kueue_metrics *km, const char *ns,
			       const char *name, const char *priority_class,
			       double wait_s)
{
	const char *const *v = METRIC_VALUES(name, ns, s(priority_class));

	if (!km->lq_metrics)
		return;
	metric_inc(get(km, F_LQ_ADMITTED_TOTAL, v));
	metric_observe(get(km, F_LQ_ADMISSION_WAIT, v), wait_s);
}

void kueue_metrics_lq_admission_checks_wait(struct kueue_metrics *km,
					    const char *ns, const char *name,
					    const char *priority_class,
					    double wait_s)
{
	if (!km->lq_metrics)
		return;
	metric_observe(get(km, F_LQ_CHECKS_WAIT,
			   METRIC_VALUES(name, ns, s(priority_class))), wait_s);
}

void kueue_metrics_lq_ready(struct kueue_metrics *km, const char *ns,
			    const char *name, const char *priority_class,
			    double ready_wait_s, double admitted_until_ready_s)
{
	const char *const *v = METRIC_VALUES(name, ns, s(priority_class));

	if (!km->lq_metrics)
		return;
	metric_observe(get(km, F_LQ_READY_WAIT, v), ready_wait_s);
	metric_observe(get(km, F_LQ_ADMITTED_UNTIL_READY, v),
		       admitted_until_ready_s);
}

void kueue_metrics_lq_evicted(struct kueue_metrics *km, const char *ns,
			      const char *name, const char *reason,
			      const char *underlying_cause,
			      const char *priority_class)
{
	if (!km->lq_metrics)
		return;
	metric_inc(get(km, F_LQ_EVICTED, METRIC_VALUES(name, ns, s(reason),
		s(underlying_cause), s(priority_class))));
}

void kueue_metrics_lq_resources(struct kueue_metrics *km, const char *ns,
				const char *name, const char *flavor,
				const char *resource, int64_t reservation,
				int64_t usage)
{
	const char *const *lv = METRIC_VALUES(name, ns, flavor, resource);

	if (!km->lq_metrics)
		return;
	metric_set(get(km, F_LQ_RES_RESERVATION, lv), base_units(reservation));
	metric_set(get(km, F_LQ_RES_USAGE, lv), base_units(usage));
}

void kueue_metrics_lq_resources_clear(struct kueue_metrics *km,
				      const char *ns, const char *name)
{
	if (!km->lq_metrics)
		return;
	for (int id = F_LQ_RES_RESERVATION; id <= F_LQ_RES_USAGE; id++)
		metric_family_remove_partial(km->f[id],
			METRIC_LABELS("name", "namespace"),
			METRIC_VALUES(name, ns));
}

void kueue_metrics_lq_delete(struct kueue_metrics *km, const char *ns,
			     const char *name)
{
	if (!km->lq_metrics)
		return;
	for (int id = F_LQ_PENDING; id <= F_LQ_RES_USAGE; id++)
		metric_family_remove_partial(km->f[id],
			METRIC_LABELS("name", "namespace"),
			METRIC_VALUES(name, ns));
}
