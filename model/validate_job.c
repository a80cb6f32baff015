/*
 * validate_job: the rules of Kueue's batch/v1 Job validating webhook
 * (vjob.kb.io, kueue-api.md §12.3) as v0.14 has them: the Kueue labels and
 * annotations a user may put on a Job, and which of them may change while
 * the Job runs. The Job's own batch/v1 validation is the apiserver's.
 *
 * Numbers in labels and annotations are parsed as Go's strconv does, and
 * its errors are quoted verbatim ("strconv.Atoi: parsing \"x\": invalid
 * syntax"), because that is what Kueue prints.
 *
 * Pure: no I/O; whether the namespace has a default LocalQueue is asked of
 * the caller.
 */
#include "model/validate.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/goparse.h"
#include "model/jobwl.h"
#include "model/names.h"
#include "model/validate_int.h"

#define LABEL_PATH(key) "metadata.labels[" key "]"
#define ANNOT_PATH(key) "metadata.annotations[" key "]"

#define QUEUE_LABEL_PATH LABEL_PATH(LABEL_QUEUE_NAME)
#define QUEUE_ANNOT_PATH ANNOT_PATH(LABEL_QUEUE_NAME)
#define PREBUILT_PATH LABEL_PATH(LABEL_PREBUILT_WORKLOAD)
#define MAX_EXEC_PATH LABEL_PATH(LABEL_MAX_EXEC_TIME)
#define PRIORITY_PATH LABEL_PATH(LABEL_PRIORITY_CLASS)
#define MIN_PAR_PATH ANNOT_PATH(ANNOT_MIN_PARALLELISM)
#define SYNC_PATH ANNOT_PATH(ANNOT_COMPLETIONS_EQUAL_PARALLELISM)

static const char *label(const struct job *j, const char *key)
{
	return smap_get(&j->meta.labels, key);
}

static const char *annotation(const struct job *j, const char *key)
{
	return smap_get(&j->meta.annotations, key);
}

/* Go's m[key] on a string map: absent reads as "". */
static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* ValidateLabelAsCRDName / ValidateAnnotationAsCRDName: "" gets the
 * pattern message, as Kueue runs the check on whatever the label holds. */
static void check_crd_name(struct field_errors *fe, const char *path,
			   const char *value)
{
	if (value)
		check_dns1123_subdomain_value(fe, path, value);
}

/*
 * strconv.Atoi: returns NULL and sets *v, or the error text (new string)
 * Go would give.
 */
static char *go_atoi(const char *s, int64_t *v)
{
	enum goparse_rc rc = goparse_int(s, 64, v);
	char *q, *msg;

	if (rc == GOPARSE_OK)
		return NULL;
	q = go_quote(s);
	msg = xasprintf("strconv.Atoi: parsing %s: %s", q,
			rc == GOPARSE_RANGE ? "value out of range"
					    : "invalid syntax");
	free(q);
	return msg;
}

/* syncCompletionWithParallelism(): the annotation parses as true. */
static bool sync_completions(const struct job *j)
{
	const char *s = annotation(j, ANNOT_COMPLETIONS_EQUAL_PARALLELISM);
	bool on;

	return s && goparse_bool(s, &on) && on;
}

static int32_t parallelism(const struct job *j)
{
	return j->has_parallelism ? j->parallelism : 1;
}

/* QueueName(): the label, else the deprecated annotation (v0.14). */
static const char *queue_name(const struct job *j)
{
	const char *q = label(j, LABEL_QUEUE_NAME);

	return q && *q ? q : or_empty(annotation(j, LABEL_QUEUE_NAME));
}

/* ValidateJobOnCreate: queue name, prebuilt workload, max exec time. */
static void check_labels(const struct job *j, struct field_errors *fe)
{
	const char *s = label(j, LABEL_MAX_EXEC_TIME);
	int64_t v;
	char *err;

	check_crd_name(fe, QUEUE_LABEL_PATH, label(j, LABEL_QUEUE_NAME));
	check_crd_name(fe, QUEUE_ANNOT_PATH, annotation(j, LABEL_QUEUE_NAME));
	check_crd_name(fe, PREBUILT_PATH, label(j, LABEL_PREBUILT_WORKLOAD));
	if (!s)
		return;
	err = go_atoi(s, &v);
	if (err)
		fe_invalid(fe, MAX_EXEC_PATH, s, err);
	else if (v <= 0)
		fe_invalid_num(fe, MAX_EXEC_PATH, v, "should be greater than 0");
	free(err);
}

static void check_min_parallelism(const struct job *j, struct field_errors *fe)
{
	const char *s = annotation(j, ANNOT_MIN_PARALLELISM);
	int32_t pods = jobwl_pod_count(j);
	int64_t v;
	char *err;

	if (!s)
		return;
	err = go_atoi(s, &v);
	if (err) {
		fe_invalid(fe, MIN_PAR_PATH, s, err);
		free(err);
		return;
	}
	/* Kueue compares int32(v): the cast wraps as Go's does. */
	if ((int32_t)(uint32_t)(uint64_t)v >= pods || v <= 0) {
		char detail[48];

		/* In 64 bits: pods may be INT32_MIN on hostile input. */
		snprintf(detail, sizeof(detail), "should be between 0 and %lld",
			 (long long)pods - 1);
		fe_invalid_num(fe, MIN_PAR_PATH, v, detail);
	}
}

static void check_sync_completions(const struct job *j,
				   struct field_errors *fe)
{
	const char *s = annotation(j, ANNOT_COMPLETIONS_EQUAL_PARALLELISM);
	bool on = false;

	if (!s)
		return;
	if (!goparse_bool(s, &on)) {
		char *q = go_quote(s);
		char *err = xasprintf("strconv.ParseBool: parsing %s: invalid syntax",
				      q);

		fe_invalid(fe, SYNC_PATH, s, err);
		free(err);
		free(q);
	}
	if (!on)
		return;
	if (!j->indexed)
		fe_invalid(fe, SYNC_PATH, s, "should not be enabled for NonIndexed jobs");
	if (parallelism(j) != (j->has_completions ? j->completions : 1)) {
		char buf[16];

		if (j->has_completions)
			snprintf(buf, sizeof(buf), "%d", (int)j->completions);
		fe_add(fe, FE_INVALID, "spec.completions",
		       j->has_completions ? buf : "null", false,
		       "should be equal to parallelism when %s is annotation is true",
		       ANNOT_COMPLETIONS_EQUAL_PARALLELISM);
	}
}

/* A label whose value may not change (absent reads as ""). */
static void check_label_unchanged(const struct job *j, const struct job *old,
				  const char *key, const char *path,
				  struct field_errors *fe)
{
	const char *n = or_empty(label(j, key)), *o = or_empty(label(old, key));

	if (strcmp(n, o))
		validate_immutable(fe, path, n, true);
}

/* ValidateJobOnUpdate and validatePartialAdmissionUpdate. */
static void check_update(const struct job *j, const struct job *old,
			 bool ns_has_default_lq, struct field_errors *fe)
{
	const char *qn = queue_name(j), *qo = queue_name(old);

	if (!j->suspend && strcmp(qn, qo))
		validate_immutable(fe, QUEUE_LABEL_PATH, qn, true);
	if (!*qn && *qo && ns_has_default_lq)
		fe_invalid(fe, QUEUE_LABEL_PATH, "",
			   "queue-name must not be empty in namespace with default queue");
	/* While suspended Kueue re-runs the create check, which
	 * check_labels has already done; no second copy of its errors. */
	if (!j->suspend)
		check_label_unchanged(j, old, LABEL_PREBUILT_WORKLOAD,
				      PREBUILT_PATH, fe);
	if (!j->suspend || !old->suspend)
		check_label_unchanged(j, old, LABEL_MAX_EXEC_TIME,
				      MAX_EXEC_PATH, fe);
	/* v0.14: the class may change only while suspended, and never be
	 * removed. */
	if (!j->suspend || !*or_empty(label(j, LABEL_PRIORITY_CLASS)))
		check_label_unchanged(j, old, LABEL_PRIORITY_CLASS,
				      PRIORITY_PATH, fe);
	if (annotation(old, ANNOT_MIN_PARALLELISM) && !old->suspend &&
	    parallelism(old) != parallelism(j))
		fe_forbidden(fe, "spec.parallelism",
			     "cannot change when partial admission is enabled and the job is not suspended");
	if (old->suspend == j->suspend && !j->suspend &&
	    sync_completions(old) != sync_completions(j))
		fe_forbidden(fe, SYNC_PATH,
			     "field is immutable while the job is not suspended");
}

void validate_job(const struct job *j, const struct job *old,
		  bool ns_has_default_lq, struct field_errors *fe)
{
	check_labels(j, fe);
	if (!old || !validate_str_eq(annotation(j, ANNOT_MIN_PARALLELISM),
				     annotation(old, ANNOT_MIN_PARALLELISM)))
		check_min_parallelism(j, fe);
	check_sync_completions(j, fe);
	if (old)
		check_update(j, old, ns_has_default_lq, fe);
}
