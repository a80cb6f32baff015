/*
 * Suite "examples": the real Kueue example files users copy
 * (test/fixtures/upstream/, see its README) must go through cueue the way
 * Kueue takes them. Every *.yaml under that directory is found with
 * opendir/readdir when the suite is built, so a dropped-in example is
 * tested with no edit here.
 *
 * Per document, dispatched on codec_kind_of():
 *  - Kueue kinds: decode, validate as a create (old = NULL) with no field
 *    errors; convert to the other API version, which must decode and
 *    validate too, and back, which must equal the original (json_equal)
 *    but for the v1beta2 fields v1beta1 has no counterpart for, which
 *    Kueue's conversion drops (lost_in_v1beta1).
 *  - batch/v1 Job: decode, validate_job (no default LocalQueue), then
 *    jobwl_build with every priority lookup failing (no example names a
 *    priority class; one that did would fail here, loudly) into a
 *    Workload with the single pod set "main" of the count Kueue computes,
 *    which must validate.
 *  - anything else (Namespace, Deployment) is counted as skipped.
 * Each file's problems are collected and reported together, so one run
 * shows everything that is wrong.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yamljson.h"
#include "model/codec.h"
#include "model/jobwl.h"
#include "model/objects.h"
#include "model/svec.h"
#include "model/validate.h"
#include "suites.h"
#include "test/support/support.h"

#define UPSTREAM_DIR TOP_SRCDIR "/test/fixtures/upstream"
/* The examples hold 34 Kueue objects today; fewer than this means the
 * walk or the dispatch silently lost some. */
#define MIN_KUEUE_OBJECTS 20

/* The example files, relative to UPSTREAM_DIR, sorted; found once by
 * examples_suite() and kept for the life of the process. */
static char **files;
static size_t nfiles, capfiles;

struct tally {
	size_t kueue;   /* Kueue objects checked */
	size_t jobs;    /* batch/v1 Jobs checked */
	size_t skipped; /* other kinds */
};

/* Problems found in one file: one line each. */
struct report {
	char *text; /* owned; NUL-terminated */
	size_t len;
};

static void report_add(struct report *r, const char *fmt, ...)
	PRINTF_LIKE(2, 3);

static void report_add(struct report *r, const char *fmt, ...)
{
	va_list ap;
	char line[4096];
	size_t n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	r->text = xrealloc(r->text, r->len + n + 2);
	memcpy(r->text + r->len, line, n);
	r->len += n;
	r->text[r->len++] = '\n';
	r->text[r->len] = '\0';
}

/* Check's messages are capped (CK_MAX_MSG_SIZE, 8 KiB by default); keep
 * the head of a long report and say how much was cut. */
#define REPORT_SHOWN 3000

static const char *report_head(const struct report *r)
{
	static char buf[REPORT_SHOWN + 64];

	if (r->len <= REPORT_SHOWN)
		return r->text ? r->text : "";
	snprintf(buf, sizeof(buf), "%.*s... (%zu more bytes)", REPORT_SHOWN,
		 r->text, r->len - REPORT_SHOWN);
	return buf;
}

static size_t report_lines(const struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->len; i++)
		n += r->text[i] == '\n';
	return n;
}

/* ------------------------------------------------------------------ */
/* Finding the files */

static bool has_yaml_suffix(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, ".yaml");
}

static void walk(const char *rel)
{
	char *path = *rel ? xasprintf("%s/%s", UPSTREAM_DIR, rel)
			  : xstrdup(UPSTREAM_DIR);
	DIR *d = opendir(path);
	struct dirent *e;

	free(path);
	if (!d)
		return;
	for (;;) {
		char *sub;
		DIR *probe;

		e = readdir(d);
		if (!e)
			break;
		if (e->d_name[0] == '.')
			continue;
		sub = *rel ? xasprintf("%s/%s", rel, e->d_name)
			   : xstrdup(e->d_name);
		path = xasprintf("%s/%s", UPSTREAM_DIR, sub);
		probe = opendir(path);
		free(path);
		if (probe) {
			closedir(probe);
			walk(sub);
			free(sub);
		} else if (has_yaml_suffix(e->d_name)) {
			XGROW(files, capfiles, nfiles + 1);
			files[nfiles++] = sub;
		} else {
			free(sub);
		}
	}
	closedir(d);
}

/* ------------------------------------------------------------------ */
/* Checking one object */

static const char *obj_name(const json_t *doc)
{
	const json_t *meta = json_object_get(doc, "metadata");
	const char *n = json_string_value(json_object_get(meta, "name"));

	if (!n)
		n = json_string_value(json_object_get(meta, "generateName"));
	return n ? n : "(no name)";
}

/* Decodes obj as kind k and validates it as a create; adds what goes
 * wrong to r under the label where. */
static void decode_and_validate(enum kind k, const json_t *obj,
				const char *where, struct report *r)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	int rc = 0;

	switch (k) {
	case KIND_RESOURCE_FLAVOR: {
		struct resource_flavor o = { 0 };

		rc = codec_decode_resource_flavor(obj, &o, &fe);
		if (rc == 0)
			validate_resource_flavor(&o, NULL, &fe);
		resource_flavor_release(&o);
		break;
	}
	case KIND_CLUSTER_QUEUE: {
		struct cluster_queue o = { 0 };

		rc = codec_decode_cluster_queue(obj, &o, &fe);
		if (rc == 0)
			validate_cluster_queue(&o, NULL, &fe);
		cluster_queue_release(&o);
		break;
	}
	case KIND_LOCAL_QUEUE: {
		struct local_queue o = { 0 };

		rc = codec_decode_local_queue(obj, &o, &fe);
		if (rc == 0)
			validate_local_queue(&o, NULL, &fe);
		local_queue_release(&o);
		break;
	}
	case KIND_COHORT: {
		struct cohort o = { 0 };

		rc = codec_decode_cohort(obj, &o, &fe);
		if (rc == 0)
			validate_cohort(&o, NULL, &fe);
		cohort_release(&o);
		break;
	}
	case KIND_WORKLOAD_PRIORITY_CLASS: {
		struct workload_priority_class o = { 0 };

		rc = codec_decode_workload_priority_class(obj, &o, &fe);
		if (rc == 0)
			validate_workload_priority_class(&o, NULL, &fe);
		workload_priority_class_release(&o);
		break;
	}
	case KIND_WORKLOAD: {
		struct workload o = { 0 };

		rc = codec_decode_workload(obj, &o, &fe);
		if (rc == 0)
			validate_workload(&o, NULL, &fe);
		workload_release(&o);
		break;
	}
	default:
		report_add(r, "%s: not a Kueue kind", where);
		return;
	}
	if (rc != 0 || fe.n > 0)
		report_add(r, "%s: %s %s", where,
			   rc != 0 ? "decode failed:" : "validation failed:",
			   t_fe_text(&fe));
	field_errors_release(&fe);
}

static const char *other_version(const char *av)
{
	switch (api_version_parse(av)) {
	case API_V1BETA1:
		return api_version_name(API_V1BETA2);
	case API_V1BETA2:
		return api_version_name(API_V1BETA1);
	default:
		return NULL;
	}
}

/* spec fields of v1beta2 that v1beta1 lacks: Kueue's conversion drops
 * them, so a round trip through v1beta1 loses them (codec_convert.c). */
static const char *const lost_in_v1beta1[] = {
	"concurrentAdmissionPolicy", "preemptionGates", "wallTimePolicy",
};

/* True when back is doc (v1beta2) without the fields above. */
static bool same_but_lost(const json_t *doc, const json_t *back)
{
	json_t *want = json_deep_copy(doc);
	json_t *spec = json_object_get(want, "spec");
	bool same;

	for (size_t i = 0; i < sizeof(lost_in_v1beta1) /
			       sizeof(lost_in_v1beta1[0]); i++)
		json_object_del(spec, lost_in_v1beta1[i]);
	same = json_equal(want, back);
	json_decref(want);
	return same;
}

/* v1beta1 <-> v1beta2 both ways: the far side must be a valid object of
 * that version, and the way back must give the original exactly, or
 * without what v1beta1 cannot hold (same_but_lost). */
static void check_conversion(enum kind k, const json_t *doc, const char *where,
			     struct report *r)
{
	const char *av = json_string_value(json_object_get(doc, "apiVersion"));
	const char *to = other_version(av);
	struct err err = { "" };
	json_t *conv = NULL, *back = NULL;
	const char *conv_av;
	char *label;

	if (!to) {
		report_add(r, "%s: unknown apiVersion %s", where, av);
		return;
	}
	if (codec_convert(doc, to, &conv, &err) != 0) {
		report_add(r, "%s: convert to %s failed: %s", where, to,
			   err.msg);
		return;
	}
	conv_av = json_string_value(json_object_get(conv, "apiVersion"));
	if (!conv_av || strcmp(conv_av, to)) {
		report_add(r, "%s: convert to %s gave apiVersion %s", where,
			   to, conv_av ? conv_av : "(none)");
		goto out;
	}
	label = xasprintf("%s as %s", where, to);
	decode_and_validate(k, conv, label, r);
	free(label);
	if (codec_convert(conv, av, &back, &err) != 0) {
		report_add(r, "%s: convert back from %s failed: %s", where, to,
			   err.msg);
		goto out;
	}
	if (!json_equal(back, doc) && !same_but_lost(doc, back)) {
		char *a = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
		char *b = json_dumps(back, JSON_COMPACT | JSON_SORT_KEYS);

		report_add(r, "%s: round trip through %s changed it:\n"
			   "  was %s\n  now %s", where, to, a, b);
		free(a);
		free(b);
	}
out:
	json_decref(conv);
	json_decref(back);
}

/* Kueue's podsCount: parallelism (defaulted to 1), capped by completions;
 * read from the JSON so the expectation does not come from jobwl itself. */
static int32_t expected_count(const json_t *doc)
{
	const json_t *spec = json_object_get(doc, "spec");
	const json_t *p = json_object_get(spec, "parallelism");
	const json_t *c = json_object_get(spec, "completions");
	int32_t n = p ? (int32_t)json_integer_value(p) : 1;

	if (c && json_integer_value(c) < n)
		n = (int32_t)json_integer_value(c);
	return n;
}

static const char *min_parallelism(const json_t *doc)
{
	return json_string_value(json_object_get(json_object_get(
		json_object_get(doc, "metadata"), "annotations"),
		ANNOT_MIN_PARALLELISM));
}

static void check_job(const json_t *doc, const char *where, struct report *r)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct jobwl_opts opts = { .prio = NULL };
	struct job job = { 0 };
	struct workload wl = { 0 };
	struct err err = { "" };
	const char *minp = min_parallelism(doc);
	int32_t want = expected_count(doc);

	if (codec_decode_job(doc, &job, &fe) != 0) {
		report_add(r, "%s: decode failed: %s", where, t_fe_text(&fe));
		goto out;
	}
	/* The API server names a generateName object and gives every object
	 * a uid before validating webhooks see it; do the same. */
	if (!job.meta.name && job.meta.generate_name)
		job.meta.name = xasprintf("%sx7k2p", job.meta.generate_name);
	if (!job.meta.uid)
		job.meta.uid = xstrdup("0b6f6a3e-5d1c-4c4e-9a43-2b7f7a1c9e01");
	validate_job(&job, NULL, false, &fe);
	if (fe.n > 0) {
		report_add(r, "%s: validate_job: %s", where, t_fe_text(&fe));
		goto out;
	}
	if (jobwl_build(&job, &opts, &wl, &err) != 0) {
		report_add(r, "%s: jobwl_build: %s", where, err.msg);
		goto out;
	}
	if (wl.npod_sets != 1 ||
	    strcmp(wl.pod_sets[0].name, DEFAULT_PODSET_NAME)) {
		report_add(r, "%s: workload has %zu pod sets, first \"%s\"",
			   where, wl.npod_sets,
			   wl.npod_sets ? wl.pod_sets[0].name : "");
		goto out;
	}
	if (wl.pod_sets[0].count != want)
		report_add(r, "%s: pod set count %d, want %d", where,
			   (int)wl.pod_sets[0].count, (int)want);
	if (minp && (!wl.pod_sets[0].has_min_count ||
		     wl.pod_sets[0].min_count != atoi(minp)))
		report_add(r, "%s: minCount %d (set %d), want %s", where,
			   (int)wl.pod_sets[0].min_count,
			   (int)wl.pod_sets[0].has_min_count, minp);
	if (!minp && wl.pod_sets[0].has_min_count)
		report_add(r, "%s: unexpected minCount %d", where,
			   (int)wl.pod_sets[0].min_count);
	validate_workload(&wl, NULL, &fe);
	if (fe.n > 0)
		report_add(r, "%s: validate_workload: %s", where,
			   t_fe_text(&fe));
out:
	field_errors_release(&fe);
	job_release(&job);
	workload_release(&wl);
}

/* Checks every document of one file; problems go to r, counts to t. */
static void check_file(const char *rel, struct tally *t, struct report *r)
{
	char *path = xasprintf("%s/%s", UPSTREAM_DIR, rel);
	struct err err = { "" };
	json_t *docs = NULL;
	size_t *lines = NULL;

	if (yamljson_load_file_lines(path, &docs, &lines, &err) != 0) {
		report_add(r, "%s", err.msg);
		free(path);
		return;
	}
	if (json_array_size(docs) == 0)
		report_add(r, "%s: no documents", rel);
	for (size_t i = 0; i < json_array_size(docs); i++) {
		const json_t *doc = json_array_get(docs, i);
		enum kind k = codec_kind_of(doc);
		const json_t *jav = json_object_get(doc, "apiVersion");
		const char *av = json_string_value(jav);
		const json_t *jkind = json_object_get(doc, "kind");
		const char *kind = json_string_value(jkind);
		char *where = xasprintf("%s:%zu %s %s", rel, lines[i],
					kind ? kind : "?", obj_name(doc));

		if (k == KIND_JOB) {
			t->jobs++;
			check_job(doc, where, r);
		} else if (k != KIND_UNKNOWN) {
			t->kueue++;
			decode_and_validate(k, doc, where, r);
			check_conversion(k, doc, where, r);
		} else if (av && !strncmp(av, KUEUE_GROUP "/",
					  strlen(KUEUE_GROUP) + 1)) {
			report_add(r, "%s: Kueue kind the codec does not know",
				   where);
		} else {
			t->skipped++;
		}
		free(where);
	}
	free(lines);
	json_decref(docs);
	free(path);
}

/* ------------------------------------------------------------------ */

START_TEST(example_file)
{
	struct tally t = { 0 };
	struct report r = { NULL, 0 };

	check_file(files[_i], &t, &r);
	ck_assert_msg(r.len == 0, "%s:\n%s", files[_i], report_head(&r));
	ck_assert_uint_gt(t.kueue + t.jobs + t.skipped, 0);
	free(r.text);
}
END_TEST

/* Everything together: enough objects were really checked, and the
 * skipped ones are only the kinds cueue leaves alone. */
START_TEST(all_examples)
{
	struct tally t = { 0 };
	struct report r = { NULL, 0 };

	ck_assert_msg(nfiles > 0, "no *.yaml found under %s", UPSTREAM_DIR);
	for (size_t i = 0; i < nfiles; i++)
		check_file(files[i], &t, &r);
	ck_assert_msg(t.kueue >= MIN_KUEUE_OBJECTS,
		      "only %zu Kueue objects checked (want >= %d)", t.kueue,
		      MIN_KUEUE_OBJECTS);
	ck_assert_uint_ge(t.jobs, 1);
	/* sample-hami.yaml's Namespace and Deployment. */
	ck_assert_uint_eq(t.skipped, 2);
	ck_assert_msg(r.len == 0, "%zu problems in the examples (each file's "
		      "own test has them all); first:\n%s", report_lines(&r),
		      report_head(&r));
	free(r.text);
}
END_TEST

Suite *examples_suite(void)
{
	Suite *s = suite_create("examples");
	TCase *tc = tcase_create("upstream");

	if (!files) {
		walk("");
		if (nfiles)
			qsort(files, nfiles, sizeof(*files), svec_cmp);
	}
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, example_file, 0, (int)nfiles);
	tcase_add_test(tc, all_examples);
	suite_add_tcase(s, tc);
	return s;
}
