/*
 * validate: every rule Kueue's CRD schemas (OpenAPI + CEL) and validating
 * webhooks enforce on its objects (kueue-api.md §2-7, §12.3), given the
 * decoded struct and, for updates, the old one (NULL on create).
 *
 * Each validator appends all problems to fe in Kubernetes' wording and
 * paths, using the field names of the object's own API version. Type and
 * enum errors are found by the codec while decoding; these functions check
 * the rest: names and patterns, lengths and counts, quantities >= 0, quota
 * rules, list-map uniqueness, immutability. Pure: no I/O, no clock.
 */
#ifndef MODEL_VALIDATE_H
#define MODEL_VALIDATE_H

#include <stdbool.h>

#include "model/errors.h"
#include "model/objects.h"

/*
 * Each validator reads the object and old (borrowed; old NULL on create)
 * and appends one field error per problem to fe; fe's earlier entries
 * are kept, and nothing else is changed.
 */
void validate_resource_flavor(const struct resource_flavor *rf,
			      const struct resource_flavor *old,
			      struct field_errors *fe);
void validate_cluster_queue(const struct cluster_queue *cq,
			    const struct cluster_queue *old,
			    struct field_errors *fe);
void validate_cohort(const struct cohort *c, const struct cohort *old,
		     struct field_errors *fe);
void validate_local_queue(const struct local_queue *lq,
			  const struct local_queue *old,
			  struct field_errors *fe);
void validate_workload_priority_class(const struct workload_priority_class *w,
				      const struct workload_priority_class *old,
				      struct field_errors *fe);
/* Spec and status rules, including status-update rules (admission
 * immutable once set, reclaimablePods monotonic while reserved). */
void validate_workload(const struct workload *w, const struct workload *old,
		       struct field_errors *fe);

/*
 * The Job rules of §12.3. ns_has_default_lq tells whether the Job's
 * namespace has a LocalQueue named "default".
 */
void validate_job(const struct job *j, const struct job *old,
		  bool ns_has_default_lq, struct field_errors *fe);

#endif
