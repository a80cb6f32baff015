/*
 * admit: what cueue's webhooks decide, as pure functions of one decoded
 * review, an immutable policy and the namespace view the controller
 * published (kueue-api.md §2-7, §12.2-12.3, §9).
 *
 *   mutating, CREATE only (kubebuilder registers them for create):
 *     Job            LocalQueue defaulting, WorkloadPriorityClass
 *                    defaulting (HEAD gate), suspend-on-create (§12.2)
 *     ClusterQueue   add the kueue.x-k8s.io/resource-in-use finalizer
 *     ResourceFlavor add the kueue.x-k8s.io/resource-in-use finalizer
 *     Workload       single pod set named "main"; minCount dropped when
 *                    the PartialAdmission gate is off
 *   validating, CREATE and UPDATE (DELETE and CONNECT are allowed):
 *     Job and every Kueue kind through model/validate.h, old object on
 *     update; all problems in one denial: code 403, reason Forbidden,
 *     message = the field errors joined as Go's ErrorList aggregate.
 *   conversion: every object of a ConversionReview through codec_convert.
 *
 * A mutation edits a deep copy of the object's JSON and answers the diff
 * (jsonpatch.h), so unknown fields pass through untouched. An object of
 * the wrong kind, or one that does not decode (a wrong JSON type), is
 * refused with code 400 (controller-runtime's admission.Errored(400)). A
 * Kueue object whose decode errors are all validation errors (an enum
 * value, a quantity, a length: what the API server's schema would have
 * reported) is validated all the same, and the denial (403) lists the
 * decoder's errors and the validators' together.
 *
 * Pure: no I/O, no clock, no globals; safe on any number of threads.
 */
#ifndef WEBHOOK_ADMIT_H
#define WEBHOOK_ADMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "model/codec.h"
#include "model/selector.h"
#include "webhook/nsview.h"
#include "webhook/review.h"

struct config;

/* An owner kind that makes a Job a child of another Kueue-managed job. */
struct admit_owner_kind {
	char *api_version; /* owned; "jobset.x-k8s.io/v1alpha2" */
	char *kind;        /* owned; "JobSet" */
};

/*
 * The configuration the handlers read (kueue-api.md §13). Copied into the
 * webhook at start and never changed (a new policy means a new server).
 */
struct admit_policy {
	bool manage_jobs_without_queue_name; /* manageJobsWithoutQueueName */
	bool has_ns_selector;   /* false: every namespace is managed */
	struct label_selector ns_selector; /* managedJobsNamespaceSelector */
	bool lq_defaulting;     /* gate LocalQueueDefaulting (v0.14: on) */
	bool lq_defaulting_needs_managed_ns; /* HEAD: defaulting only in
				 * namespaces the selector matches */
	bool partial_admission; /* gate PartialAdmission (on) */
	bool wpc_defaulting;    /* gate WorkloadPriorityClassDefaulting (HEAD,
				 * beta: on for v1beta2 configurations) */
	struct admit_owner_kind *owners; /* owned; the enabled frameworks'
				 * job kinds and the external ones */
	size_t nowners;
};

/* Sets p to Kueue's defaults with only batch/job enabled (selector:
 * kubernetes.io/metadata.name NotIn (kube-system, kueue-system)). */
void admit_policy_defaults(struct admit_policy *p);
/*
 * Fills p from a loaded configuration: the two job-management fields,
 * the gates (LocalQueueDefaulting, PartialAdmission,
 * WorkloadPriorityClassDefaulting (default on only for v1beta2); for v1beta2
 * configurations, and with ManagedJobsNamespaceSelectorAlwaysRespected,
 * LocalQueue defaulting also needs a matching namespace, as at HEAD),
 * and the owner kinds of integrations.frameworks and externalFrameworks.
 * p is overwritten (release it first).
 */
void admit_policy_from_config(struct admit_policy *p, const struct config *c);
void admit_policy_copy(struct admit_policy *dst, const struct admit_policy *src);
void admit_policy_release(struct admit_policy *p);

struct admit_ctx {
	const struct admit_policy *pol; /* borrowed; never NULL */
	const struct nsview *ns;        /* borrowed frozen view; NULL when
					 * nothing was published yet */
};

/*
 * A handler: reads req (borrowed), fills out (zeroed by the caller).
 * want is the kind the route serves (the object must be of it).
 */
typedef void admit_fn(const struct admit_ctx *ctx, enum kind want,
		      const struct review_request *req,
		      struct review_response *out);

admit_fn admit_mutate_job;
admit_fn admit_validate_job;
admit_fn admit_mutate_finalizer;  /* ClusterQueue, ResourceFlavor */
admit_fn admit_mutate_workload;
admit_fn admit_validate_kueue;    /* every Kueue kind, by want */

/*
 * Is namespace ns managed (managedJobsNamespaceSelector)? Its labels come
 * from the view; a namespace the view does not know is judged by
 * kubernetes.io/metadata.name alone, the one label every namespace has.
 */
bool admit_ns_is_managed(const struct admit_ctx *ctx, const char *ns);

/*
 * Converts every object of c to c->desired with codec_convert. Returns
 * the new ConversionReview answer: Success with the objects in order,
 * or Failure naming the first object that failed ("objects[2]
 * (ClusterQueue x): ...") and no objects.
 */
struct json_t *admit_convert(const struct review_conversion *c);

#endif
