/*
 * jobs: the batch/v1 Job integration (kueue-api.md §12), as Kueue's
 * jobframework reconciler and job controller behave in v0.14. It owns
 * an informer on batch/v1 jobs, the decoded Job cache, a small record
 * of every Workload a Job controls (fed by the manager's workload
 * observer, manager.h), and every write the integration makes:
 *
 *  - the Workload of a managed Job (queue-name label, or
 *    manageJobsWithoutQueueName), built by model/jobwl.h and POSTed;
 *  - on admission, one merge patch of the Job (resourceVersion
 *    precondition): spec.suspend=false, the flavors' nodeLabels into the
 *    template's nodeSelector, their tolerations appended, the podset
 *    label, parallelism = the admitted count under partial admission;
 *  - on eviction or a run without admission, Kueue's three-step stop:
 *    suspend (+ the transient stopping annotation), clear
 *    status.startTime, restore the template from the Workload;
 *  - on Complete/Failed, Finished=True on the Workload (the manager
 *    then releases its quota); the resource-in-use finalizer of
 *    finished, deleted or orphaned Workloads is removed, and orphans
 *    (their Job gone) are deleted;
 *  - core/v1 Events on Jobs (CreatedWorkload, Started, Stopped,
 *    FinishedWorkload; Normal), each recorded when its write succeeds
 *    through one best-effort recorder (events.h, component
 *    "batch/job-kueue-controller"; bounded, held back while the kube
 *    client is saturated, never retried).
 * A second informer keeps the scheduling.k8s.io/v1 PriorityClasses (a
 * Job's pod priorityClassName, or the globalDefault class, gives the
 * Workload's priority when no WorkloadPriorityClass label does).
 * Nothing is written before the Job and PriorityClass informers and the
 * manager have synced, so a restart creates no duplicate Workload.
 *
 * Lifetimes: created after the manager on the same kube client; free it
 * before the manager (and so before the client: it owns the recorder). Threads: the loop thread only.
 */
#ifndef CONTROLLER_JOBS_H
#define CONTROLLER_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kube;
struct manager;
struct metrics;
struct jobs;
struct label_selector;

/*
 * managedJobsNamespaceSelector applies as in Kueue's ReconcileGenericJob:
 * with ns_selector_always (gate ManagedJobsNamespaceSelectorAlwaysRespected,
 * GA at HEAD, so on for v1beta2 Configurations) a Job in a namespace the
 * selector does not match is ignored whatever its labels; otherwise only
 * a Job without a queue name under manageJobsWithoutQueueName needs a
 * matching namespace. Namespace labels come from the manager's cache
 * (manager_foreach_namespace); a namespace it does not know yet is tried
 * again after retry_ms.
 */
struct jobs_opts {
	bool manage_without_queue_name; /* manageJobsWithoutQueueName */
	const struct label_selector *ns_selector; /* borrowed; copied;
				 * NULL: every namespace matches */
	bool ns_selector_always;        /* see above */
	bool no_partial_admission;      /* PartialAdmission gate off */
	bool wait_for_pods_ready;       /* waitForPodsReady on: the
				 * PodsReady condition follows the pods */
	const char *const *label_keys_to_copy; /* borrowed; copied */
	size_t nlabel_keys_to_copy;
	unsigned page_size;             /* informer list pages; 0: 500 */
	int64_t retry_ms;               /* after a failed write; 0: 1000 */
	struct metrics *registry;       /* borrowed; the recorder's
				 * cueue_events_total{component=
				 * "batch/job-kueue-controller"}; NULL: none */
};

struct jobs_stats {
	uint64_t created;      /* Workloads created (201) */
	uint64_t started;      /* Jobs unsuspended */
	uint64_t stopped;      /* Jobs suspended */
	uint64_t finished;     /* Workloads marked Finished */
	uint64_t finalizers;   /* finalizers removed */
	uint64_t deleted;      /* orphaned Workloads (and those of Jobs no
				  longer managed) deleted */
	uint64_t updated;      /* Workloads updated to match their Job */
	uint64_t replaced;     /* non-matching Workloads deleted */
	uint64_t conflicts;    /* 409 answers */
	uint64_t failures;     /* other failed writes */
	uint64_t events;       /* Events recorded (handed to the recorder;
				  it may still drop or fail them) */
};

/* Returns a new reconciler on k and m (both borrowed; they must outlive
 * it); its informer starts at once. o may be NULL (defaults). */
struct jobs *jobs_new(struct kube *k, struct manager *m,
		      const struct jobs_opts *o);
/* Stops the informer, cancels every write, detaches from the manager.
 * NULL-safe. */
void jobs_free(struct jobs *j);

/* True once the Job informer has synced. */
bool jobs_synced(const struct jobs *j);
/* Borrowed; valid until jobs_free. */
const struct jobs_stats *jobs_stats(const struct jobs *j);

#endif
