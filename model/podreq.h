/*
 * podreq: the effective per-pod resource request of a pod template, as
 * Kubernetes' resource helpers and Kueue (kueue-api.md §12.5) compute it:
 * limits stand in for missing requests; per pod = max(sum of containers
 * plus restartable sidecars, each init container plus the sidecars started
 * before it) + overhead; pod-level resources override when present.
 * No I/O.
 */
#ifndef MODEL_PODREQ_H
#define MODEL_PODREQ_H

#include "model/errors.h"
#include "model/objects.h"
#include "model/resources.h"

/* Fills out (released first) with the per-pod request. -1 + err on overflow. */
int pod_requests(const struct pod_template *t, struct reslist *out,
		 struct err *err) MUST_CHECK;

#endif
