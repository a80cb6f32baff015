/* libFuzzer harness for the codec: byte 0 picks the kind (0-6: RF, CQ,
 * LQ, Cohort, WPC, Workload, Job; 7: a bare pod template), the rest is
 * JSON. Decodes, validates (create, update against itself, and against a
 * second object when the input is a [new, old] array), encodes, copies,
 * builds Workloads from Jobs and converts. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/codec.h"
#include "model/jobwl.h"
#include "model/podreq.h"
#include "model/validate.h"

static bool lk(void *ctx, const char *name, int32_t *v)
{
	(void)ctx;
	*v = (int32_t)strlen(name);
	return name[0] != 'x';
}

static bool gd(void *ctx, const char **name, int32_t *v)
{
	(void)ctx;
	*name = "default";
	*v = 7;
	return true;
}

static void convert_all(const json_t *j)
{
	static const char *const vs[] = { "kueue.x-k8s.io/v1beta1",
					  "kueue.x-k8s.io/v1beta2", "bogus" };
	for (int i = 0; i < 3; i++) {
		json_t *o = NULL, *back = NULL;
		struct err e;

		if (codec_convert(j, vs[i], &o, &e) == 0) {
			(void)!codec_convert(o, vs[1 - (i & 1)], &back, &e);
			json_decref(back);
		}
		json_decref(o);
	}
}

#define DO(kind, dec, val, rel, ...)                                      \
	do {                                                                \
		struct kind a, b, self;                                     \
		struct field_errors fe = FIELD_ERRORS_INIT;                 \
		(void)!dec(n, &a, &fe);                                     \
		(void)!dec(n, &self, &fe);                                  \
		if (o) {                                                    \
			(void)!dec(o, &b, &fe);                             \
		} else {                                                    \
			memset(&b, 0, sizeof(b));                           \
		}                                                           \
		val(&a, NULL, &fe);                                         \
		val(&a, &self, &fe);                                        \
		if (o)                                                      \
			val(&a, &b, &fe);                                   \
		__VA_ARGS__;                                                    \
		free(field_errors_aggregate(&fe));                          \
		field_errors_release(&fe);                                  \
		rel(&a);                                                    \
		rel(&b);                                                    \
		rel(&self);                                                 \
	} while (0)

static void val_job(const struct job *j, const struct job *old,
		    struct field_errors *fe)
{
	validate_job(j, old, true, fe);
	validate_job(j, old, false, fe);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *root, *n, *o = NULL;
	unsigned sel;

	if (size < 1)
		return 0;
	sel = data[0] % 8;
	root = json_loadb((const char *)data + 1, size - 1, JSON_DECODE_ANY,
			  NULL);
	if (!root)
		return 0;
	n = root;
	if (json_is_array(root) && json_array_size(root) == 2) {
		n = json_array_get(root, 0);
		o = json_array_get(root, 1);
	}
	(void)codec_kind_of(n);
	switch (sel) {
	case 0:
		DO(resource_flavor, codec_decode_resource_flavor,
		   validate_resource_flavor, resource_flavor_release, ;);
		break;
	case 1:
		DO(cluster_queue, codec_decode_cluster_queue,
		   validate_cluster_queue, cluster_queue_release, {
			   json_decref(codec_encode_cluster_queue_status(&a, API_V1BETA1));
			   json_decref(codec_encode_cluster_queue_status(&a, API_V1BETA2));
		   });
		break;
	case 2:
		DO(local_queue, codec_decode_local_queue,
		   validate_local_queue, local_queue_release, {
			   json_decref(codec_encode_local_queue_status(&a, API_V1BETA1));
			   json_decref(codec_encode_local_queue_status(&a, API_V1BETA2));
		   });
		break;
	case 3:
		DO(cohort, codec_decode_cohort, validate_cohort, cohort_release,
		   ;);
		break;
	case 4:
		DO(workload_priority_class,
		   codec_decode_workload_priority_class,
		   validate_workload_priority_class,
		   workload_priority_class_release, ;);
		break;
	case 5:
		DO(workload, codec_decode_workload, validate_workload,
		   workload_release, {
			   struct workload c = { 0 };
			   json_t *e1 = codec_encode_workload(&a, API_V1BETA1);
			   json_t *e2 = codec_encode_workload(&a, API_V1BETA2);
			   struct field_errors fe2 = FIELD_ERRORS_INIT;
			   (void)!codec_decode_workload(e2, &c, &fe2);
			   workload_release(&c);
			   field_errors_release(&fe2);
			   json_decref(e1);
			   json_decref(e2);
			   json_decref(codec_encode_workload_status(&a, API_V1BETA1));
			   workload_copy(&c, &a);
			   workload_release(&c);
			   for (size_t i = 0; i < a.npod_sets; i++) {
				   struct reslist r = RESLIST_INIT;
				   struct err e;
				   (void)!pod_requests(&a.pod_sets[i].tmpl, &r, &e);
				   reslist_release(&r);
			   }
		   });
		break;
	case 6:
		DO(job, codec_decode_job, val_job, job_release, {
			struct priority_lookup pl = { lk, lk, gd, NULL };
			static const char *const keys[] = { "a", "b" };
			struct jobwl_opts opts = { &pl, keys, 2 };
			struct workload w = { 0 };
			struct err e;
			if (a.meta.name) {
				(void)!jobwl_build(&a, &opts, &w, &e);
				json_decref(codec_encode_workload(&w, API_V1BETA2));
				workload_release(&w);
				(void)!jobwl_build(&a, NULL, &w, &e);
				workload_release(&w);
			}
		});
		break;
	case 7: {
		struct pod_template t;
		struct field_errors fe = FIELD_ERRORS_INIT;
		struct reslist r = RESLIST_INIT;
		struct err e;

		(void)!codec_decode_pod_template(n, "spec.template", &t, &fe);
		(void)!pod_requests(&t, &r, &e);
		json_decref(codec_encode_pod_template(&t));
		reslist_release(&r);
		pod_template_release(&t);
		field_errors_release(&fe);
		break;
	}
	}
	convert_all(n);
	json_decref(root);
	return 0;
}
