/*
 * podreq: the request of one pod of a template, the number Kueue charges
 * against quota per pod (kueue-api.md §12.5 steps 3-4).
 *
 * Follows Kubernetes' component-helpers PodRequests with default options,
 * applied to the template as Kueue's UseLimitsAsMissingRequestsInPod
 * leaves it:
 *   1. each container's requests, with its limits standing in for missing
 *      requests (per container, before any summing);
 *   2. sum of the regular containers plus every sidecar (restartable init
 *      container);
 *   3. for each init container in order, its need while it runs: a sidecar
 *      needs the sum of all sidecars so far (itself included), a regular one
 *      its own request plus the sidecars started before it; take the
 *      per-resource max of these with step 2;
 *   4. pod-level spec.resources.requests replace the result for the
 *      resources they list (only cpu, memory and hugepages-*, the ones
 *      Kubernetes accepts at pod level);
 *   5. + spec.overhead.
 * Pod-level limits do not stand in for pod-level requests here: Kubernetes
 * does that defaulting only on Pods, never on templates, and Kueue reads
 * the template. Pure arithmetic; never logs.
 */
#include "model/podreq.h"

#include <string.h>

/* Kubernetes' IsSupportedPodLevelResource. */
static bool is_pod_level_resource(const char *name)
{
	return !strcmp(name, "cpu") || !strcmp(name, "memory") ||
	       !strncmp(name, "hugepages-", strlen("hugepages-"));
}

/* out = c's requests, plus its limits for resources it does not request. */
static void container_requests(const struct container_res *c,
			       struct reslist *out)
{
	reslist_copy(out, &c->requests);
	for (size_t i = 0; i < c->limits.n; i++) {
		const struct resource *l = &c->limits.v[i];

		if (!reslist_has(out, l->name))
			reslist_set(out, l->name, l->milli);
	}
}

int pod_requests(const struct pod_template *t, struct reslist *out,
		 struct err *err)
{
	struct reslist sum = RESLIST_INIT;      /* step 2, then the result */
	struct reslist sidecars = RESLIST_INIT; /* sidecars started so far */
	struct reslist init_max = RESLIST_INIT; /* step 3 */
	struct reslist c = RESLIST_INIT;
	struct reslist need = RESLIST_INIT;
	int rc = -1;

	reslist_release(out);

	/* 1-2. Regular containers. */
	for (size_t i = 0; i < t->ncontainers; i++) {
		container_requests(&t->containers[i], &c);
		if (reslist_add_all(&sum, &c, err) < 0)
			goto out;
	}

	/* 2-3. Init containers, sidecars accumulating in start order. */
	for (size_t i = 0; i < t->ninit_containers; i++) {
		container_requests(&t->init_containers[i], &c);
		if (t->init_containers[i].sidecar) {
			if (reslist_add_all(&sum, &c, err) < 0 ||
			    reslist_add_all(&sidecars, &c, err) < 0)
				goto out;
			reslist_max_all(&init_max, &sidecars);
		} else {
			reslist_copy(&need, &c);
			if (reslist_add_all(&need, &sidecars, err) < 0)
				goto out;
			reslist_max_all(&init_max, &need);
		}
	}
	reslist_max_all(&sum, &init_max);

	/* 4. Pod-level requests win for the resources they name. */
	if (t->has_pod_resources) {
		for (size_t i = 0; i < t->pod_requests.n; i++) {
			const struct resource *r = &t->pod_requests.v[i];

			if (is_pod_level_resource(r->name))
				reslist_set(&sum, r->name, r->milli);
		}
	}

	/* 5. Overhead. */
	if (reslist_add_all(&sum, &t->overhead, err) < 0)
		goto out;

	*out = sum;
	reslist_init(&sum);
	rc = 0;
out:
	reslist_release(&sum);
	reslist_release(&sidecars);
	reslist_release(&init_max);
	reslist_release(&c);
	reslist_release(&need);
	return rc;
}
