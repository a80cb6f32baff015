/* The codec suites' shared helpers (see codec_util.h). */
#include "codec_util.h"

#include <check.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "test/support/support.h"

/* Decodes obj as kind k into a throwaway struct; returns the decoder's
 * result. Every decoder must leave its struct releasable. */
int decode_any(enum kind k, const json_t *obj, struct field_errors *fe)
{
	int rc = -1;

	switch (k) {
	case KIND_RESOURCE_FLAVOR: {
		struct resource_flavor x;

		rc = codec_decode_resource_flavor(obj, &x, fe);
		resource_flavor_release(&x);
		break;
	}
	case KIND_CLUSTER_QUEUE: {
		struct cluster_queue x;

		rc = codec_decode_cluster_queue(obj, &x, fe);
		cluster_queue_release(&x);
		break;
	}
	case KIND_LOCAL_QUEUE: {
		struct local_queue x;

		rc = codec_decode_local_queue(obj, &x, fe);
		local_queue_release(&x);
		break;
	}
	case KIND_COHORT: {
		struct cohort x;

		rc = codec_decode_cohort(obj, &x, fe);
		cohort_release(&x);
		break;
	}
	case KIND_WORKLOAD_PRIORITY_CLASS: {
		struct workload_priority_class x;

		rc = codec_decode_workload_priority_class(obj, &x, fe);
		workload_priority_class_release(&x);
		break;
	}
	case KIND_WORKLOAD: {
		struct workload x;

		rc = codec_decode_workload(obj, &x, fe);
		workload_release(&x);
		break;
	}
	case KIND_JOB: {
		struct job x;

		rc = codec_decode_job(obj, &x, fe);
		job_release(&x);
		break;
	}
	case KIND_UNKNOWN:
		break;
	}
	return rc;
}

json_t *fixture(const char *name)
{
	char *path = xasprintf("codec/%s", name);
	json_t *j = t_fixture_json(path);

	free(path);
	return j;
}

/* o[key] as an integer (0 when absent). */
json_int_t int_at(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* Asserts j equals the inline JSON want, printing both when not. */
void assert_json(const json_t *j, const char *want)
{
	json_t *w = t_json(want);
	char *got = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	char *exp = json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS);

	ck_assert_msg(json_equal(j, w), "got  %s\nwant %s", got, exp);
	free(got);
	free(exp);
	json_decref(w);
}

