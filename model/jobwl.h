/*
 * jobwl: batch/v1 Job -> Workload, as Kueue's job integration builds it
 * (kueue-api.md §12.4-12.5): the name job-<name>-<5 hex of SHA-1>, owner
 * reference, labels, the single pod set "main" with count and minCount,
 * priority resolution. Pure apart from hashing (OpenSSL's SHA-1, no I/O);
 * the priority classes the Job names are looked up through callbacks so
 * this module never sees the cache.
 */
#ifndef MODEL_JOBWL_H
#define MODEL_JOBWL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/errors.h"
#include "model/objects.h"

/*
 * Returns the new Workload name for an owner: "<prefix>-<h>" where prefix
 * is lowercase(kind) + "-" + name cut to 247 bytes, and h the first 5 hex
 * digits of SHA-1(kind "\n" group "\n" name "\n" uid).
 */
char *jobwl_workload_name(const char *kind, const char *group,
			  const char *name, const char *uid);

/* Priority class lookups; each returns true and sets *value when found. */
struct priority_lookup {
	bool (*wpc)(void *ctx, const char *name, int32_t *value);
	bool (*pc)(void *ctx, const char *name, int32_t *value);
	/* The globalDefault PriorityClass (lowest value when several). */
	bool (*global_default)(void *ctx, const char **name, int32_t *value);
	void *ctx;
};

struct jobwl_opts {
	const struct priority_lookup *prio; /* NULL: every lookup fails */
	const char *const *label_keys_to_copy; /* integrations.labelKeysToCopy */
	size_t nlabel_keys_to_copy;
};

/*
 * Builds the Workload for job into out (released first; left empty on
 * failure). Fails with err when the Job has no name, names a
 * WorkloadPriorityClass or PriorityClass that does not exist (the API's
 * NotFound text, as Kueue reports it), or carries an unusable
 * job-min-parallelism or podset-unconstrained-topology annotation. The
 * Workload's version is left API_UNKNOWN: the writer picks one.
 */
int jobwl_build(const struct job *job, const struct jobwl_opts *opts,
		struct workload *out, struct err *err) MUST_CHECK;

/* count of the pod set: min(parallelism, completions), defaults applied. */
int32_t jobwl_pod_count(const struct job *job);

/*
 * Kueue's equivalentToWorkload for one pod set: whether wl (a Workload's
 * pod set) still describes built (the pod set jobwl_build makes of the
 * Job now). Compared: the name, the count (against count, which the
 * caller picks: the admitted count of a running partially admitted Job,
 * else built's), minCount, every container's and init container's
 * requests and limits, overhead and pod-level resources; with
 * directives also the node selector and tolerations (not for a running
 * Job, whose template carries its flavors' additions). Required node
 * affinity is compared by presence only.
 */
bool jobwl_pod_set_matches(const struct pod_set *built,
			   const struct pod_set *wl, int32_t count,
			   bool directives);

#endif
