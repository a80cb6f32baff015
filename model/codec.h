/*
 * codec: the one place in model/ that touches JSON (jansson).
 *
 * Decoders turn a Kubernetes object (kueue.x-k8s.io v1beta1 or v1beta2, or
 * batch/v1 Job) into the structs of objects.h, parsing every quantity
 * once; encoders write objects or their status back in the version asked
 * for. Conversion between v1beta1 and v1beta2 works on the JSON tree
 * itself, so fields cueue does not model pass through unchanged.
 *
 * This header is the quarantine boundary: it forward-declares struct
 * json_t (jansson's typedef tag) and is never included from flavors/.
 * Ownership follows STYLE P3: json_t parameters are borrowed; returned
 * json_t are new references. Every string the structs hold is a copy, so
 * no jansson pointer outlives its tree.
 *
 * Decoders report every problem (wrong JSON type, unknown enum value, bad
 * quantity, bad timestamp, too deep, too long) as field errors with the
 * field's path, and return -1 if they added any; the struct is always
 * left in a releasable state, filled as far as it could be. A decoder
 * zeroes *out first: pass an empty (or uninitialised) struct, never a
 * filled one, which would leak. JSON null counts as absent, as the API
 * server prunes it.
 */
#ifndef MODEL_CODEC_H
#define MODEL_CODEC_H

#include "model/errors.h"
#include "model/objects.h"

struct json_t;

/* Kinds the codec knows, for dispatch on "kind". */
enum kind {
	KIND_UNKNOWN = 0,
	KIND_RESOURCE_FLAVOR,
	KIND_CLUSTER_QUEUE,
	KIND_LOCAL_QUEUE,
	KIND_COHORT,
	KIND_WORKLOAD_PRIORITY_CLASS,
	KIND_WORKLOAD,
	KIND_JOB,
};

/* Kind of obj from its apiVersion + kind; KIND_UNKNOWN otherwise. */
enum kind codec_kind_of(const struct json_t *obj);
const char *kind_name(enum kind k); /* "ClusterQueue", ... */

/*
 * Decoders: obj is borrowed; *out is zeroed, then filled with new copies
 * (release it with its _release() whatever the result); every problem is
 * appended to fe. Returns 0, or -1 when the decode added any field error.
 */
int codec_decode_resource_flavor(const struct json_t *obj,
				 struct resource_flavor *out,
				 struct field_errors *fe) MUST_CHECK;
int codec_decode_cluster_queue(const struct json_t *obj,
			       struct cluster_queue *out,
			       struct field_errors *fe) MUST_CHECK;
int codec_decode_local_queue(const struct json_t *obj, struct local_queue *out,
			     struct field_errors *fe) MUST_CHECK;
int codec_decode_cohort(const struct json_t *obj, struct cohort *out,
			struct field_errors *fe) MUST_CHECK;
int codec_decode_workload_priority_class(const struct json_t *obj,
					 struct workload_priority_class *out,
					 struct field_errors *fe) MUST_CHECK;
int codec_decode_workload(const struct json_t *obj, struct workload *out,
			  struct field_errors *fe) MUST_CHECK;
int codec_decode_job(const struct json_t *obj, struct job *out,
		     struct field_errors *fe) MUST_CHECK;
/* Decodes only the scheduling view of a PodTemplateSpec; path prefixes
 * the error paths ("spec.template"). Also stores the raw JSON. */
int codec_decode_pod_template(const struct json_t *tmpl, const char *path,
			      struct pod_template *out,
			      struct field_errors *fe) MUST_CHECK;

/*
 * Encoders: each returns a new object. The full encoders write apiVersion,
 * kind, metadata, spec and status; the status encoders return just the
 * "status" object (what a merge patch of /status carries), with Kueue's
 * rendering of quantities (resource_format) and v1beta1's non-omitempty
 * counters.
 */
struct json_t *codec_encode_workload(const struct workload *w,
				     enum api_version v);
struct json_t *codec_encode_workload_status(const struct workload *w,
					    enum api_version v);
struct json_t *codec_encode_cluster_queue_status(const struct cluster_queue *cq,
						 enum api_version v);
/* Cohort status (fairSharing) in Kueue's shape; a new object. */
struct json_t *codec_encode_cohort_status(const struct cohort *co);
struct json_t *codec_encode_local_queue_status(const struct local_queue *lq,
					       enum api_version v);
struct json_t *codec_encode_object_meta(const struct object_meta *m);
struct json_t *codec_encode_pod_template(const struct pod_template *t);

/*
 * Converts a Kueue object between kueue.x-k8s.io/v1beta1 and v1beta2
 * (kueue-api.md §9) as Kueue's conversion webhook does, field by field:
 * renames (cohort <-> cohortName, flavorUsage <-> flavorsUsage,
 * accumulatedPastExexcution... <-> accumulatedPastExecution...), v1beta1's
 * admissionChecks list -> admissionChecksStrategy, Borrow/Preempt ->
 * MayStopSearch, priorityClassName+Source <-> priorityClassRef, topology
 * domains <-> slices; fields without a counterpart are dropped (details in
 * codec_convert.c). obj is borrowed and untouched; to is the full
 * apiVersion. Returns 0 and a new object in *out, or -1, *out NULL and
 * err (unknown kind or version, or a topology assignment that cannot be
 * converted, named by its field path).
 */
int codec_convert(const struct json_t *obj, const char *to,
		  struct json_t **out, struct err *err) MUST_CHECK;

#endif
