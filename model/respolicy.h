/*
 * respolicy: what Kueue does to a pod's requests before it counts them
 * against quota (kueue-api.md §12.5 step 5; the Configuration's
 * resources.excludeResourcePrefixes and resources.transformations):
 * resources whose name starts with an excluded prefix are dropped; then
 * each transformation turns its input resource into its outputs (output
 * = input quantity x the output's quantity per unit, the input first
 * multiplied by the request of multiplyBy when that is set), keeping the
 * input (Retain, the default) or not (Replace). Outputs are summed with
 * what the pod asks under the same names. A platform maps MIG profiles
 * (nvidia.com/mig-1g.10gb) to quota resources this way.
 *
 * Pure: no I/O; the policy owns copies of everything it is given.
 */
#ifndef MODEL_RESPOLICY_H
#define MODEL_RESPOLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "model/resources.h"

struct res_transform {
	char *input;          /* owned */
	bool replace;         /* strategy Replace */
	char *multiply_by;    /* owned or NULL */
	struct reslist outputs; /* per unit of input, milli-units */
};

struct res_policy {
	char **exclude;       /* owned prefixes */
	size_t nexclude;
	struct res_transform *tr; /* owned; inputs unique */
	size_t ntr;
};

#define RES_POLICY_INIT { NULL, 0, NULL, 0 }

void res_policy_release(struct res_policy *p);
void res_policy_copy(struct res_policy *dst, const struct res_policy *src);
void res_policy_add_exclude(struct res_policy *p, const char *prefix);
/* outputs copied; a second transformation of the same input replaces the
 * first. */
void res_policy_add_transform(struct res_policy *p, const char *input,
			      bool replace, const char *multiply_by,
			      const struct reslist *outputs);
/* True when the policy changes nothing. */
bool res_policy_empty(const struct res_policy *p);
/* Applies p to the per-pod requests rl in place (p NULL: no-op).
 * Quantities saturate at INT64_MAX. */
void res_policy_apply(const struct res_policy *p, struct reslist *rl);

#endif
