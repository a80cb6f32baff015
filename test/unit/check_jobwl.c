/*
 * Suite "jobwl": Job -> Workload construction. Workload names are checked
 * against SHA-1 vectors computed outside this code base, with
 *   printf 'Job\nbatch\n<name>\n<uid>' | sha1sum
 * Jobs are plain structs built here; no JSON codec involved.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/jobwl.h"
#include "model/objects.h"
#include "suites.h"
#include "test/support/support.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define IDX "\"podIndexLabel\":\"batch.kubernetes.io/job-completion-index\""

/* ---- names ------------------------------------------------------- */

struct name_case {
	const char *kind, *group, *name, *uid;
	const char *want;
};

static const struct name_case names[] = {
	{ "Job", "batch", "my-job", "123e4567-e89b-12d3-a456-426614174000",
	  "job-my-job-94388" },
	{ "Job", "batch", "pi", "a1b2c3", "job-pi-9f8bc" },
	{ "Job", "batch", "my-job", "uid-1", "job-my-job-8a2f1" },
	/* NULL uid hashes as "" (trailing newline kept) */
	{ "Job", "batch", "sample-job", NULL, "job-sample-job-4b8c4" },
	{ "Job", "batch", "sample-job", "", "job-sample-job-4b8c4" },
	/* prefix lowercases the kind; the hash takes it as spelt
	 * ("JobSet\njobset.x-k8s.io\ntrainer\nu-1") */
	{ "JobSet", "jobset.x-k8s.io", "trainer", "u-1",
	  "jobset-trainer-01965" },
};

START_TEST(workload_names)
{
	const struct name_case *c = &names[_i];
	char *got = jobwl_workload_name(c->kind, c->group, c->name, c->uid);

	ck_assert_str_eq(got, c->want);
	free(got);
}
END_TEST

struct long_case {
	char ch;
	size_t len;        /* job name is ch repeated len times */
	const char *uid;
	const char *hash;
	size_t prefix_len; /* of "job-<name>" after the cut */
};

static const struct long_case long_names[] = {
	{ 'a', 300, "uid-long", "efe62", 247 }, /* cut */
	{ 'b', 243, "u", "b1ba7", 247 },        /* exactly fits */
	{ 'b', 244, "u", "23b25", 247 },        /* one byte over */
};

START_TEST(long_workload_names)
{
	const struct long_case *c = &long_names[_i];
	char *name = xmalloc(c->len + 1);
	char *want_prefix, *got;
	size_t n;

	memset(name, c->ch, c->len);
	name[c->len] = '\0';
	got = jobwl_workload_name("Job", "batch", name, c->uid);
	n = strlen(got);
	ck_assert_uint_eq(n, c->prefix_len + 1 + 5);
	ck_assert_uint_le(n, 253);
	want_prefix = xasprintf("job-%s", name);
	want_prefix[c->prefix_len] = '\0';
	ck_assert_int_eq(strncmp(got, want_prefix, c->prefix_len), 0);
	ck_assert_int_eq(got[c->prefix_len], '-');
	ck_assert_str_eq(got + c->prefix_len + 1, c->hash);
	free(want_prefix);
	free(got);
	free(name);
}
END_TEST

/* ---- pod count --------------------------------------------------- */

struct count_case {
	bool has_p;
	int32_t p;
	bool has_c;
	int32_t c;
	int32_t want;
};

static const struct count_case counts[] = {
	{ false, 0, false, 0, 1 }, /* both nil: parallelism defaults to 1 */
	{ true, 3, false, 0, 3 },  /* completions nil => parallelism */
	{ true, 3, true, 5, 3 },
	{ true, 5, true, 2, 2 },
	{ false, 0, true, 4, 1 },
	{ true, 4, true, 4, 4 },
	{ true, 0, true, 3, 0 },
	{ false, 0, true, 0, 0 },
};

START_TEST(pod_count)
{
	const struct count_case *c = &counts[_i];
	struct job j;

	memset(&j, 0, sizeof(j));
	j.has_parallelism = c->has_p;
	j.parallelism = c->p;
	j.has_completions = c->has_c;
	j.completions = c->c;
	ck_assert_int_eq(jobwl_pod_count(&j), c->want);
}
END_TEST

/* ---- a Job to build from ----------------------------------------- */

static void make_job(struct job *j)
{
	memset(j, 0, sizeof(*j));
	j->meta.name = xstrdup("my-job");
	j->meta.namespace = xstrdup("team-a");
	j->meta.uid = xstrdup("uid-1");
	smap_set(&j->meta.labels, LABEL_QUEUE_NAME, "lq-a");
	smap_set(&j->meta.labels, "team", "ml");
	smap_set(&j->meta.labels, "other", "x");
	smap_set(&j->meta.annotations,
		 "provreq.kueue.x-k8s.io/maxRunDurationSeconds", "600");
	smap_set(&j->meta.annotations,
		 "provreq.kueue.x-k8s.io/ValidUntilSeconds", "0");
	smap_set(&j->meta.annotations, "provreq.example.com/x", "no");
	smap_set(&j->meta.annotations, "unrelated", "no");
	j->has_parallelism = true;
	j->parallelism = 3;
	j->has_completions = true;
	j->completions = 6;
	smap_set(&j->tmpl.labels, "app", "pi");
	smap_set(&j->tmpl.labels, "controller-uid", "uid-1");
	smap_set(&j->tmpl.labels, "job-name", "my-job");
	smap_set(&j->tmpl.labels, "batch.kubernetes.io/controller-uid",
		 "uid-1");
	smap_set(&j->tmpl.labels, "batch.kubernetes.io/job-name", "my-job");
	smap_set(&j->tmpl.annotations, "note", "kept");
	j->tmpl.containers = xcalloc(1, sizeof(*j->tmpl.containers));
	j->tmpl.ncontainers = 1;
	j->tmpl.containers[0].name = xstrdup("main");
	reslist_set(&j->tmpl.containers[0].requests, "cpu", 1000);
}

/* ---- fake priority classes --------------------------------------- */

struct fake_classes {
	bool has_default;
};

static bool fake_wpc(void *ctx, const char *name, int32_t *value)
{
	(void)ctx;
	if (!strcmp(name, "high")) {
		*value = 1000;
		return true;
	}
	if (!strcmp(name, "low")) {
		*value = -10;
		return true;
	}
	return false;
}

static bool fake_pc(void *ctx, const char *name, int32_t *value)
{
	(void)ctx;
	if (!strcmp(name, "pc-a")) {
		*value = 50;
		return true;
	}
	return false;
}

static bool fake_default(void *ctx, const char **name, int32_t *value)
{
	const struct fake_classes *f = ctx;

	if (!f->has_default)
		return false;
	*name = "cluster-default";
	*value = 7;
	return true;
}

/* ---- whole Workload ---------------------------------------------- */

START_TEST(build_all_fields)
{
	static const char *const copy[] = { "team", "absent-key" };
	struct fake_classes fc = { false };
	const struct priority_lookup prio = { fake_wpc, fake_pc, fake_default,
					      &fc };
	const struct jobwl_opts opts = { &prio, copy, 2 };
	struct job j;
	struct workload wl;
	struct err err = { "" };
	const struct pod_set *ps;
	const struct owner_ref *o;

	make_job(&j);
	memset(&wl, 0, sizeof(wl));
	wl.meta.name = xstrdup("stale"); /* out is released first */
	ck_assert_msg(jobwl_build(&j, &opts, &wl, &err) == 0, "%s", err.msg);

	ck_assert_str_eq(wl.meta.name, "job-my-job-8a2f1");
	ck_assert_str_eq(wl.meta.namespace, "team-a");
	ck_assert_uint_eq(wl.meta.nowners, 1);
	o = &wl.meta.owners[0];
	ck_assert_str_eq(o->api_version, "batch/v1");
	ck_assert_str_eq(o->kind, "Job");
	ck_assert_str_eq(o->name, "my-job");
	ck_assert_str_eq(o->uid, "uid-1");
	ck_assert(o->controller);
	ck_assert(o->block_owner_deletion);
	ck_assert_uint_eq(wl.meta.nfinalizers, 1);
	ck_assert_str_eq(wl.meta.finalizers[0],
			 "kueue.x-k8s.io/resource-in-use");

	/* labels: job-uid + the configured keys present on the Job */
	ck_assert_uint_eq(wl.meta.labels.n, 2);
	ck_assert_str_eq(smap_get(&wl.meta.labels, LABEL_JOB_UID), "uid-1");
	ck_assert_str_eq(smap_get(&wl.meta.labels, "team"), "ml");
	ck_assert_ptr_null(smap_get(&wl.meta.labels, "other"));
	ck_assert_ptr_null(smap_get(&wl.meta.labels, LABEL_QUEUE_NAME));

	/* annotations: only provreq.kueue.x-k8s.io/ ones */
	ck_assert_uint_eq(wl.meta.annotations.n, 2);
	ck_assert_str_eq(smap_get(&wl.meta.annotations,
				  "provreq.kueue.x-k8s.io/maxRunDurationSeconds"),
			 "600");
	ck_assert_str_eq(smap_get(&wl.meta.annotations,
				  "provreq.kueue.x-k8s.io/ValidUntilSeconds"),
			 "0");

	ck_assert_str_eq(wl.queue_name, "lq-a");
	ck_assert(!wl.has_max_exec);
	ck_assert(wl.active);
	ck_assert(wl.has_priority);
	ck_assert_int_eq(wl.priority, 0);
	ck_assert_ptr_null(wl.priority_class_name);
	ck_assert_int_eq(wl.priority_source, PSRC_NONE);

	ck_assert_uint_eq(wl.npod_sets, 1);
	ps = &wl.pod_sets[0];
	ck_assert_str_eq(ps->name, "main");
	ck_assert_int_eq(ps->count, 3);
	ck_assert(!ps->has_min_count);
	ck_assert_str_eq(ps->topology_request, "{" IDX "}");

	/* template: Job-controller labels gone, but for
	 * batch.kubernetes.io/job-name */
	ck_assert_uint_eq(ps->tmpl.labels.n, 2);
	ck_assert_str_eq(smap_get(&ps->tmpl.labels, "app"), "pi");
	ck_assert_str_eq(smap_get(&ps->tmpl.labels,
				  "batch.kubernetes.io/job-name"), "my-job");
	ck_assert_str_eq(smap_get(&ps->tmpl.annotations, "note"), "kept");
	ck_assert_uint_eq(ps->tmpl.ncontainers, 1);
	ck_assert_int_eq(reslist_get(&ps->tmpl.containers[0].requests, "cpu"),
			 1000);
	/* the Job's own template is untouched */
	ck_assert_uint_eq(j.tmpl.labels.n, 5);
	ck_assert_str_eq(err.msg, "");

	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* NULL opts: no lookups, no labels copied; still a valid Workload. */
START_TEST(build_without_opts)
{
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };

	make_job(&j);
	ck_assert_int_eq(jobwl_build(&j, NULL, &wl, &err), 0);
	ck_assert_uint_eq(wl.meta.labels.n, 1);
	ck_assert(wl.has_priority);
	ck_assert_int_eq(wl.priority, 0);
	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* A Job without a name (never true once the API server stored it). */
START_TEST(build_nameless)
{
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };

	make_job(&j);
	FREE_AND_NULL(j.meta.name);
	ck_assert_int_eq(jobwl_build(&j, NULL, &wl, &err), -1);
	ck_assert(err.msg[0] != '\0');
	ck_assert_ptr_null(wl.meta.name);
	job_release(&j);
}
END_TEST

/* ---- job-uid label ----------------------------------------------- */

struct uid_case {
	const char *uid; /* NULL: 'u' repeated len times */
	size_t len;
	bool labelled;
};

static const struct uid_case uids[] = {
	{ "123e4567-e89b-12d3-a456-426614174000", 0, true },
	{ NULL, 63, true },
	{ NULL, 64, false }, /* too long for a label value */
	{ "has/slash", 0, false },
	{ "-leading-dash", 0, false },
};

START_TEST(job_uid_label)
{
	const struct uid_case *c = &uids[_i];
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };

	make_job(&j);
	free(j.meta.uid);
	if (c->uid) {
		j.meta.uid = xstrdup(c->uid);
	} else {
		j.meta.uid = xmalloc(c->len + 1);
		memset(j.meta.uid, 'u', c->len);
		j.meta.uid[c->len] = '\0';
	}
	ck_assert_int_eq(jobwl_build(&j, NULL, &wl, &err), 0);
	if (c->labelled)
		ck_assert_str_eq(smap_get(&wl.meta.labels, LABEL_JOB_UID),
				 j.meta.uid);
	else
		ck_assert_ptr_null(smap_get(&wl.meta.labels, LABEL_JOB_UID));
	/* the owner reference carries the uid either way */
	ck_assert_str_eq(wl.meta.owners[0].uid, j.meta.uid);
	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* ---- labelKeysToCopy --------------------------------------------- */

START_TEST(label_copy)
{
	static const char *const copy[] = { "team", "other", "missing",
					    LABEL_QUEUE_NAME };
	const struct jobwl_opts opts = { NULL, copy, 4 };
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };

	make_job(&j);
	ck_assert_int_eq(jobwl_build(&j, &opts, &wl, &err), 0);
	ck_assert_uint_eq(wl.meta.labels.n, 4);
	ck_assert_str_eq(smap_get(&wl.meta.labels, "team"), "ml");
	ck_assert_str_eq(smap_get(&wl.meta.labels, "other"), "x");
	ck_assert_str_eq(smap_get(&wl.meta.labels, LABEL_QUEUE_NAME), "lq-a");
	ck_assert_str_eq(smap_get(&wl.meta.labels, LABEL_JOB_UID), "uid-1");
	ck_assert_ptr_null(smap_get(&wl.meta.labels, "missing"));
	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* ---- queue name -------------------------------------------------- */

struct queue_case {
	const char *label, *annotation, *want;
};

static const struct queue_case queues[] = {
	{ "lq", "ann", "lq" },
	{ NULL, "ann", "ann" }, /* deprecated annotation fallback (v0.14) */
	{ "", "ann", "ann" },   /* an empty label counts as absent */
	{ NULL, NULL, NULL },
	{ "", "", NULL },
};

START_TEST(queue_name)
{
	const struct queue_case *c = &queues[_i];
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };

	make_job(&j);
	smap_del(&j.meta.labels, LABEL_QUEUE_NAME);
	if (c->label)
		smap_set(&j.meta.labels, LABEL_QUEUE_NAME, c->label);
	if (c->annotation)
		smap_set(&j.meta.annotations, LABEL_QUEUE_NAME,
			 c->annotation);
	ck_assert_int_eq(jobwl_build(&j, NULL, &wl, &err), 0);
	if (c->want)
		ck_assert_str_eq(wl.queue_name, c->want);
	else
		ck_assert_ptr_null(wl.queue_name);
	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* ---- maximum execution time -------------------------------------- */

struct exec_case {
	const char *label;
	bool has;
	int32_t want;
};

static const struct exec_case execs[] = {
	{ "60", true, 60 },
	{ "+60", true, 60 },
	{ "2147483647", true, INT32_MAX },
	{ "2147483648", false, 0 },
	{ "0", false, 0 },
	{ "-5", false, 0 },
	{ "abc", false, 0 },
	{ "1m", false, 0 },
	{ " 60", false, 0 },
	{ "", false, 0 },
};

START_TEST(max_exec)
{
	const struct exec_case *c = &execs[_i];
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };

	make_job(&j);
	smap_set(&j.meta.labels, LABEL_MAX_EXEC_TIME, c->label);
	ck_assert_int_eq(jobwl_build(&j, NULL, &wl, &err), 0);
	ck_assert_msg(wl.has_max_exec == c->has, "label \"%s\"", c->label);
	if (c->has)
		ck_assert_int_eq(wl.max_exec_seconds, c->want);
	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* ---- minCount from job-min-parallelism --------------------------- */

struct min_case {
	int32_t parallelism;
	int32_t completions; /* 0 = nil */
	const char *annotation; /* NULL = absent */
	int rc;
	int32_t want;
};

static const struct min_case mins[] = {
	{ 5, 0, NULL, 0, -1 },  /* no annotation: no minCount */
	{ 5, 0, "2", 0, 2 },
	{ 5, 0, "1", 0, 1 },
	{ 5, 0, "4", 0, 4 },    /* count - 1 */
	{ 5, 0, "+3", 0, 3 },   /* strconv.Atoi accepts a sign */
	{ 5, 0, "5", -1, 0 },   /* = count */
	{ 5, 0, "6", -1, 0 },
	{ 5, 0, "0", -1, 0 },
	{ 5, 0, "-1", -1, 0 },
	{ 5, 0, "abc", -1, 0 },
	{ 5, 0, "", -1, 0 },
	{ 5, 0, " 3", -1, 0 },
	{ 5, 0, "3.0", -1, 0 },
	{ 5, 0, "99999999999", -1, 0 },
	{ 1, 0, "1", -1, 0 },   /* count 1 leaves no valid value */
	{ 5, 3, "2", 0, 2 },    /* count = min(5, 3) = 3 */
	{ 5, 3, "3", -1, 0 },
	{ INT32_MIN, 0, "1", -1, 0 }, /* message bound: no int32 overflow */
};

START_TEST(min_parallelism)
{
	const struct min_case *c = &mins[_i];
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };
	int rc;

	make_job(&j);
	j.parallelism = c->parallelism;
	j.has_completions = c->completions != 0;
	j.completions = c->completions;
	if (c->annotation)
		smap_set(&j.meta.annotations, ANNOT_MIN_PARALLELISM,
			 c->annotation);
	rc = jobwl_build(&j, NULL, &wl, &err);
	ck_assert_msg(rc == c->rc, "annotation \"%s\": rc %d (%s)",
		      c->annotation ? c->annotation : "(none)", rc, err.msg);
	if (rc == 0) {
		ck_assert_str_eq(err.msg, "");
		ck_assert(wl.pod_sets[0].has_min_count == (c->want >= 0));
		if (c->want >= 0)
			ck_assert_int_eq(wl.pod_sets[0].min_count, c->want);
	} else {
		ck_assert(strstr(err.msg, ANNOT_MIN_PARALLELISM) != NULL);
		ck_assert_ptr_null(wl.meta.name);
		ck_assert_uint_eq(wl.npod_sets, 0);
	}
	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* ---- topology request -------------------------------------------- */

struct topo_case {
	const char *key, *value; /* template annotation, or NULL */
	const char *want;        /* NULL: build fails */
};

static const struct topo_case topos[] = {
	{ NULL, NULL, "{" IDX "}" },
	{ "kueue.x-k8s.io/podset-required-topology", "cloud.com/block",
	  "{\"required\":\"cloud.com/block\"," IDX "}" },
	{ "kueue.x-k8s.io/podset-preferred-topology", "cloud.com/rack",
	  "{\"preferred\":\"cloud.com/rack\"," IDX "}" },
	{ "kueue.x-k8s.io/podset-unconstrained-topology", "true",
	  "{\"unconstrained\":true," IDX "}" },
	{ "kueue.x-k8s.io/podset-unconstrained-topology", "F",
	  "{\"unconstrained\":false," IDX "}" },
	{ "kueue.x-k8s.io/podset-unconstrained-topology", "yes", NULL },
	{ "kueue.x-k8s.io/podset-required-topology", "a\"b\\c\n",
	  "{\"required\":\"a\\\"b\\\\c\\u000a\"," IDX "}" },
};

START_TEST(topology)
{
	const struct topo_case *c = &topos[_i];
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };
	int rc;

	make_job(&j);
	if (c->key)
		smap_set(&j.tmpl.annotations, c->key, c->value);
	rc = jobwl_build(&j, NULL, &wl, &err);
	if (c->want) {
		ck_assert_msg(rc == 0, "%s", err.msg);
		ck_assert_str_eq(wl.pod_sets[0].topology_request, c->want);
		/* an annotation asks for a placement; podIndexLabel alone
		 * does not */
		ck_assert(wl.pod_sets[0].tas_requested == (c->key != NULL));
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert(err.msg[0] != '\0');
	}
	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* Required wins over preferred when both are set (Kueue's switch order). */
START_TEST(topology_required_first)
{
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };

	make_job(&j);
	smap_set(&j.tmpl.annotations,
		 "kueue.x-k8s.io/podset-preferred-topology", "p");
	smap_set(&j.tmpl.annotations,
		 "kueue.x-k8s.io/podset-required-topology", "r");
	ck_assert_int_eq(jobwl_build(&j, NULL, &wl, &err), 0);
	ck_assert_str_eq(wl.pod_sets[0].topology_request,
			 "{\"required\":\"r\"," IDX "}");
	workload_release(&wl);
	job_release(&j);
}
END_TEST

/* ---- priority resolution ----------------------------------------- */

struct prio_case {
	const char *name;
	const char *label;   /* kueue.x-k8s.io/priority-class, NULL = absent */
	const char *tmpl_pc; /* template priorityClassName */
	bool has_default;    /* a globalDefault PriorityClass exists */
	bool no_lookup;      /* opts->prio == NULL */
	int rc;
	int32_t want;
	const char *want_class;
	enum priority_source want_src;
	const char *want_err;
};

static const struct prio_case prios[] = {
	{ "WPC label wins over everything", "high", "pc-a", true, false, 0,
	  1000, "high", PSRC_WPC, NULL },
	{ "negative WPC value", "low", NULL, false, false, 0, -10, "low",
	  PSRC_WPC, NULL },
	{ "missing WPC fails, no fallback to the pod class", "nope", "pc-a",
	  true, false, -1, 0, NULL, PSRC_NONE,
	  "workloadpriorityclasses.kueue.x-k8s.io \"nope\" not found" },
	{ "WPC label without lookups fails", "high", NULL, false, true, -1, 0,
	  NULL, PSRC_NONE,
	  "workloadpriorityclasses.kueue.x-k8s.io \"high\" not found" },
	{ "empty WPC label reads as absent", "", "pc-a", false, false, 0, 50,
	  "pc-a", PSRC_POD, NULL },
	{ "template PriorityClass", NULL, "pc-a", true, false, 0, 50, "pc-a",
	  PSRC_POD, NULL },
	{ "missing PriorityClass fails, no fallback to the default", NULL,
	  "gone", true, false, -1, 0, NULL, PSRC_NONE,
	  "priorityclasses.scheduling.k8s.io \"gone\" not found" },
	{ "empty template class reads as absent", NULL, "", true, false, 0, 7,
	  "cluster-default", PSRC_POD, NULL },
	{ "globalDefault PriorityClass", NULL, NULL, true, false, 0, 7,
	  "cluster-default", PSRC_POD, NULL },
	{ "nothing: priority 0, no class", NULL, NULL, false, false, 0, 0,
	  NULL, PSRC_NONE, NULL },
	{ "nothing and no lookups", NULL, NULL, false, true, 0, 0, NULL,
	  PSRC_NONE, NULL },
};

START_TEST(priority)
{
	const struct prio_case *c = &prios[_i];
	struct fake_classes fc = { c->has_default };
	const struct priority_lookup prio = { fake_wpc, fake_pc, fake_default,
					      &fc };
	const struct jobwl_opts opts = { c->no_lookup ? NULL : &prio, NULL, 0 };
	struct job j;
	struct workload wl = { 0 };
	struct err err = { "" };
	int rc;

	make_job(&j);
	if (c->label)
		smap_set(&j.meta.labels, LABEL_PRIORITY_CLASS, c->label);
	if (c->tmpl_pc)
		j.tmpl.priority_class_name = xstrdup(c->tmpl_pc);
	wl.queue_name = xstrdup("stale");
	rc = jobwl_build(&j, &opts, &wl, &err);
	ck_assert_msg(rc == c->rc, "%s: rc %d (%s)", c->name, rc, err.msg);
	if (rc == 0) {
		ck_assert_msg(wl.has_priority, "%s", c->name);
		ck_assert_msg(wl.priority == c->want, "%s: priority %d",
			      c->name, (int)wl.priority);
		ck_assert_msg(wl.priority_source == c->want_src, "%s: source",
			      c->name);
		if (c->want_class)
			ck_assert_str_eq(wl.priority_class_name, c->want_class);
		else
			ck_assert_ptr_null(wl.priority_class_name);
		/* the template keeps its own priorityClassName */
		if (c->tmpl_pc)
			ck_assert_str_eq(wl.pod_sets[0].tmpl.priority_class_name,
					 c->tmpl_pc);
	} else {
		ck_assert_str_eq(err.msg, c->want_err);
		/* failure leaves out released */
		ck_assert_ptr_null(wl.queue_name);
		ck_assert_ptr_null(wl.meta.name);
		ck_assert_uint_eq(wl.npod_sets, 0);
	}
	workload_release(&wl);
	job_release(&j);
}
END_TEST

Suite *jobwl_suite(void)
{
	Suite *s = suite_create("jobwl");
	TCase *tc = tcase_create("workload-name");

	tcase_add_loop_test(tc, workload_names, 0, N(names));
	tcase_add_loop_test(tc, long_workload_names, 0, N(long_names));
	suite_add_tcase(s, tc);

	tc = tcase_create("pod-count");
	tcase_add_loop_test(tc, pod_count, 0, N(counts));
	tcase_add_loop_test(tc, min_parallelism, 0, N(mins));
	suite_add_tcase(s, tc);

	tc = tcase_create("construction");
	tcase_add_test(tc, build_all_fields);
	tcase_add_test(tc, build_without_opts);
	tcase_add_test(tc, build_nameless);
	tcase_add_loop_test(tc, job_uid_label, 0, N(uids));
	tcase_add_test(tc, label_copy);
	tcase_add_loop_test(tc, queue_name, 0, N(queues));
	tcase_add_loop_test(tc, max_exec, 0, N(execs));
	tcase_add_loop_test(tc, topology, 0, N(topos));
	tcase_add_test(tc, topology_required_first);
	suite_add_tcase(s, tc);

	tc = tcase_create("priority-order");
	tcase_add_loop_test(tc, priority, 0, N(prios));
	suite_add_tcase(s, tc);
	return s;
}
