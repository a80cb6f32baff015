/*
 * jobval: the update rules of kube-apiserver 1.32's batch/v1 Job
 * strategy (ValidateJobSpecUpdate with the options validationOptionsForJob
 * picks), so tests cannot reach a Job no real cluster shows:
 *
 *   spec.completions    immutable, except on an Indexed Job when the new
 *                       value equals spec.parallelism (elastic Indexed
 *                       Jobs, GA since 1.31)
 *   spec.selector       immutable
 *   spec.template       immutable, except nodeSelector, tolerations,
 *                       schedulingGates, node affinity, labels and
 *                       annotations while the stored Job is suspended
 *                       and status.startTime is unset
 *   spec.completionMode, podFailurePolicy, backoffLimitPerIndex,
 *   managedBy, successPolicy   immutable
 *
 * Values are compared as equality.Semantic compares the Go structs the
 * JSON decodes into (null, absent and empty lists or maps are equal;
 * quantities compare by value), and errors carry kube's wording.
 *
 * Pure functions over caller-owned JSON; no I/O, no state, any thread.
 */
#ifndef DEVSERVER_JOBVAL_H
#define DEVSERVER_JOBVAL_H

#include <jansson.h>
#include <stdbool.h>

#include "model/errors.h"

/*
 * Appends to fe every error of an update of the Job old (stored, borrowed)
 * into obj (borrowed, defaulted and prepared), in kube's order
 * (completions, selector, template, completionMode, podFailurePolicy,
 * backoffLimitPerIndex, managedBy, successPolicy).
 */
void jobval_update(const json_t *obj, const json_t *old,
		   struct field_errors *fe);

/*
 * Whether a and b (either may be NULL: absent) decode to semantically
 * equal Go values of the pod template / Job spec field named key (NULL at
 * the root). The key decides how emptiness counts: a map ("nodeSelector")
 * or a plain struct is equal to nothing when empty, a pointer field
 * ("affinity", "activeDeadlineSeconds") is not.
 */
bool jobval_equal(const char *key, const json_t *a, const json_t *b);

/*
 * The value kube prints for a Job's pod template in "spec.template:
 * Invalid value: <value>: field is immutable": Go's %#v of the internal
 * core.PodTemplateSpec. ObjectMeta is rendered field for field as 1.32
 * prints it; the PodSpec lists only the fields the template sets (kube
 * lists every field, with pointer addresses no one can reproduce). New
 * string.
 */
char *jobval_template_value(const json_t *tmpl);

#endif
