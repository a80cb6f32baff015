/*
 * Suite "metrics": the Prometheus registry (controller/metrics.h), the
 * process_* parsers (controller/procstat.h) and Kueue's families
 * (controller/kueue_metrics.h), without any network: children and their
 * lifetimes, escaping, Go's number forms, histogram buckets, a golden
 * exposition, the exact names/types/labels/buckets of Kueue v0.14, the
 * event functions' effects, and updates racing a renderer.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/kueue_metrics.h"
#include "controller/metrics.h"
#include "controller/procstat.h"
#include "suites.h"
#include "test/support/support.h"

/* ---- registry ---- */

START_TEST(children_and_lifetimes)
{
	struct metrics *m = metrics_new();
	struct metric_family *f = metrics_counter(m, "x_total", "X.",
		METRIC_LABELS("cq", "status"));
	struct metric *a, *b;

	ck_assert_uint_eq(metric_family_size(f), 0);
	a = metric_family_get(f, METRIC_VALUES("q1", "active"));
	b = metric_family_get(f, METRIC_VALUES("q1", "active"));
	ck_assert_ptr_eq(a, b);
	metric_inc(a);
	metric_add(a, 2.5);
	ck_assert(metric_value(a) == 3.5);
	ck_assert_ptr_null(metric_family_find(f, METRIC_VALUES("q2", "x")));
	metric_family_get(f, METRIC_VALUES("q2", "active"));
	metric_family_get(f, METRIC_VALUES("q2", "inadmissible"));
	metric_family_get(f, METRIC_VALUES("q1", "inadmissible"));
	ck_assert_uint_eq(metric_family_size(f), 4);
	ck_assert(metrics_check(m));
	ck_assert(metric_family_remove(f, METRIC_VALUES("q1", "active")));
	ck_assert(!metric_family_remove(f, METRIC_VALUES("q1", "active")));
	ck_assert_uint_eq(metric_family_remove_matching(f, "cq", "q2"), 2);
	ck_assert_uint_eq(metric_family_size(f), 1);
	ck_assert(metrics_check(m));
	/* a re-created child starts at zero */
	a = metric_family_get(f, METRIC_VALUES("q1", "active"));
	ck_assert(metric_value(a) == 0);
	metric_family_clear(f);
	ck_assert_uint_eq(metric_family_size(f), 0);
	ck_assert_ptr_eq(metrics_find(m, "x_total"), f);
	ck_assert_ptr_null(metrics_find(m, "y"));
	metrics_free(m);
}
END_TEST

START_TEST(unlabelled_family_has_its_child)
{
	struct metrics *m = metrics_new();
	struct metric_family *f = metrics_gauge(m, "g", "G.",
						METRIC_NO_LABELS);
	struct metric *c = metric_family_get(f, METRIC_NO_LABELS);

	ck_assert_uint_eq(metric_family_size(f), 1);
	metric_set(c, -4);
	metric_add(c, 1.5);
	ck_assert(metric_value(c) == -2.5);
	metric_family_clear(f);
	ck_assert_uint_eq(metric_family_size(f), 1);
	ck_assert(metric_value(c) == 0);
	metrics_free(m);
}
END_TEST

START_TEST(names)
{
	ck_assert(metrics_is_valid_name("kueue_pending_workloads"));
	ck_assert(metrics_is_valid_name("a:b_c9"));
	ck_assert(metrics_is_valid_name("_x"));
	ck_assert(!metrics_is_valid_name("9x"));
	ck_assert(!metrics_is_valid_name("a-b"));
	ck_assert(!metrics_is_valid_name(""));
	ck_assert(metrics_is_valid_label("cluster_queue"));
	ck_assert(!metrics_is_valid_label("__name"));
	ck_assert(!metrics_is_valid_label("a:b"));
	ck_assert(!metrics_is_valid_label("1a"));
}
END_TEST

/* A programmer error: a second family with the same name. */
START_TEST(duplicate_family_is_a_bug)
{
	struct metrics *m = metrics_new();

	metrics_gauge(m, "dup", "", METRIC_NO_LABELS);
	metrics_counter(m, "dup", "", METRIC_NO_LABELS);
}
END_TEST

START_TEST(wrong_value_count_is_a_bug)
{
	struct metrics *m = metrics_new();
	struct metric_family *f = metrics_gauge(m, "g", "",
		METRIC_LABELS("a", "b"));

	metric_family_get(f, METRIC_VALUES("only-one"));
}
END_TEST

START_TEST(histogram_le_label_is_a_bug)
{
	struct metrics *m = metrics_new();
	static const double b[] = { 1 };

	metrics_histogram(m, "h", "", METRIC_LABELS("le"), b, 1);
}
END_TEST

/* ---- format ---- */

START_TEST(escaping)
{
	char out[128];

	ck_assert_uint_eq(metrics_escape_label_value("a\\b\"c\nd", out,
						     sizeof(out)), 10);
	ck_assert_str_eq(out, "a\\\\b\\\"c\\nd");
	metrics_escape_help("say \"hi\"\\\nnow", out, sizeof(out));
	ck_assert_str_eq(out, "say \"hi\"\\\\\\nnow");
	/* invalid UTF-8 becomes U+FFFD; valid multibyte passes */
	metrics_escape_label_value("x\xff" "y\xc3\xa9", out, sizeof(out));
	ck_assert_str_eq(out, "x\xef\xbf\xbdy\xc3\xa9");
	metrics_escape_label_value("\xe2\x82", out, sizeof(out));
	ck_assert_str_eq(out, "\xef\xbf\xbd\xef\xbf\xbd");
	/* truncation still reports the full length */
	ck_assert_uint_eq(metrics_escape_label_value("abcdef", out, 3), 6);
	ck_assert_str_eq(out, "ab");
}
END_TEST

static const struct { double v; const char *s; } floats[] = {
	{ 0, "0" }, { 1, "1" }, { -1, "-1" }, { 2.5, "2.5" },
	{ 123456, "123456" }, { 999999, "999999" }, { 1e6, "1e+06" },
	{ 1234567, "1.234567e+06" }, { 0.005, "0.005" }, { 0.0001, "0.0001" },
	{ 1.5e-05, "1.5e-05" }, { 10240, "10240" }, { -0.25, "-0.25" },
	{ 2147483648.0, "2.147483648e+09" },
	{ 0.1 + 0.2, "0.30000000000000004" },
};

START_TEST(go_float_forms)
{
	char buf[METRICS_FLOAT_BUF];

	for (size_t i = 0; i < sizeof(floats) / sizeof(floats[0]); i++) {
		metrics_format_float(floats[i].v, buf);
		ck_assert_str_eq(buf, floats[i].s);
	}
	metrics_format_float(INFINITY, buf);
	ck_assert_str_eq(buf, "+Inf");
	metrics_format_float(-INFINITY, buf);
	ck_assert_str_eq(buf, "-Inf");
	metrics_format_float(NAN, buf);
	ck_assert_str_eq(buf, "NaN");
	metrics_format_float(-0.0, buf);
	ck_assert_str_eq(buf, "0");
}
END_TEST

START_TEST(histogram_buckets)
{
	struct metrics *m = metrics_new();
	static const double b[] = { 1, 2.5, 5 };
	struct metric_family *f = metrics_histogram(m, "h_seconds", "H.",
		METRIC_NO_LABELS, b, 3);
	struct metric *h = metric_family_get(f, METRIC_NO_LABELS);

	metric_observe(h, 0.5);  /* <= 1 */
	metric_observe(h, 1);    /* le is inclusive: <= 1 */
	metric_observe(h, 2.5);  /* <= 2.5 */
	metric_observe(h, 4);    /* <= 5 */
	metric_observe(h, 100);  /* +Inf only */
	metric_observe(h, -3);   /* <= 1 */
	ck_assert_uint_eq(metric_hist_bucket(h, 0), 3);
	ck_assert_uint_eq(metric_hist_bucket(h, 1), 4);
	ck_assert_uint_eq(metric_hist_bucket(h, 2), 5);
	ck_assert_uint_eq(metric_hist_bucket(h, 3), 6);
	ck_assert_uint_eq(metric_hist_count(h), 6);
	ck_assert(metric_hist_sum(h) == 105);
	metric_observe(h, NAN);
	ck_assert_uint_eq(metric_hist_bucket(h, 2), 5);
	ck_assert_uint_eq(metric_hist_count(h), 7);
	ck_assert(isnan(metric_hist_sum(h)));
	ck_assert_uint_eq(metric_family_nbounds(f), 3);
	ck_assert(metric_family_bound(f, 1) == 2.5);
	metrics_free(m);
}
END_TEST

static const char golden[] =
	"# HELP a_total Help with \\\\ and\\nnewline \"quoted\"\n"
	"# TYPE a_total counter\n"
	"a_total{alpha=\"a\\\"q\",zeta=\"z1\"} 1\n"
	"a_total{alpha=\"b\",zeta=\"z0\"} 2\n"
	"a_total{alpha=\"b\",zeta=\"z1\\n\"} 1e+06\n"
	"# HELP b_gauge A gauge.\n"
	"# TYPE b_gauge gauge\n"
	"b_gauge 2.5\n"
	"# HELP c_seconds A histogram.\n"
	"# TYPE c_seconds histogram\n"
	"c_seconds_bucket{cq=\"x\",le=\"1\"} 1\n"
	"c_seconds_bucket{cq=\"x\",le=\"2.5\"} 2\n"
	"c_seconds_bucket{cq=\"x\",le=\"+Inf\"} 3\n"
	"c_seconds_sum{cq=\"x\"} 6\n"
	"c_seconds_count{cq=\"x\"} 3\n"
	"c_seconds_bucket{cq=\"y\",le=\"1\"} 0\n"
	"c_seconds_bucket{cq=\"y\",le=\"2.5\"} 0\n"
	"c_seconds_bucket{cq=\"y\",le=\"+Inf\"} 0\n"
	"c_seconds_sum{cq=\"y\"} 0\n"
	"c_seconds_count{cq=\"y\"} 0\n"
	"# HELP e_info Unlabelled gauge at zero.\n"
	"# TYPE e_info gauge\n"
	"e_info 0\n";

static void collect_b(void *ud)
{
	metric_set(ud, 2.5);
}

START_TEST(golden_exposition)
{
	struct metrics *m = metrics_new();
	static const double b[] = { 1, 2.5 };
	struct metric_family *a, *c;
	struct metric *x;
	char *text;
	size_t len;

	/* registered out of order: output is sorted by name */
	metrics_gauge(m, "e_info", "Unlabelled gauge at zero.",
		      METRIC_NO_LABELS);
	c = metrics_histogram(m, "c_seconds", "A histogram.",
			      METRIC_LABELS("cq"), b, 2);
	metrics_gauge(m, "d_empty", "No children: not printed.",
		      METRIC_LABELS("cq"));
	a = metrics_counter(m, "a_total",
			    "Help with \\ and\nnewline \"quoted\"",
			    METRIC_LABELS("zeta", "alpha"));
	metrics_add_collector(m, collect_b, metric_family_get(
		metrics_gauge(m, "b_gauge", "A gauge.", METRIC_NO_LABELS),
		METRIC_NO_LABELS));
	metric_inc(metric_family_get(a, METRIC_VALUES("z1", "a\"q")));
	metric_add(metric_family_get(a, METRIC_VALUES("z0", "b")), 2);
	metric_add(metric_family_get(a, METRIC_VALUES("z1\n", "b")), 1e6);
	metric_family_get(c, METRIC_VALUES("y"));
	x = metric_family_get(c, METRIC_VALUES("x"));
	metric_observe(x, 0.5);
	metric_observe(x, 2.5);
	metric_observe(x, 3);
	text = metrics_render(m, &len);
	ck_assert_str_eq(text, golden);
	ck_assert_uint_eq(len, strlen(golden));
	free(text);
	metrics_free(m);
}
END_TEST

/* One thread creates, updates and removes children while another
 * renders: no crash (ASan/TSan runs), and the final numbers add up. */
struct race {
	struct metrics *m;
	struct metric_family *f, *h;
	atomic_int stop;
};

static void *renderer(void *ud)
{
	struct race *r = ud;
	size_t n = 0;

	while (!atomic_load(&r->stop)) {
		char *t = metrics_render(r->m, NULL);

		n += strlen(t) > 0;
		free(t);
	}
	return (void *)n;
}

START_TEST(updates_race_renders)
{
	struct race r = { 0 };
	static const double b[] = { 1, 10 };
	pthread_t th;
	char name[32];
	struct metric *keep;

	r.m = metrics_new();
	r.f = metrics_counter(r.m, "r_total", "R.", METRIC_LABELS("cq"));
	r.h = metrics_histogram(r.m, "r_seconds", "R.", METRIC_LABELS("cq"),
				b, 2);
	keep = metric_family_get(r.f, METRIC_VALUES("keep"));
	ck_assert_int_eq(pthread_create(&th, NULL, renderer, &r), 0);
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "cq-%d", i % 50);
		metric_inc(metric_family_get(r.f, METRIC_VALUES(name)));
		metric_observe(metric_family_get(r.h, METRIC_VALUES(name)),
			       i % 20);
		metric_inc(keep);
		if (i % 97 == 0)
			metric_family_remove_matching(r.f, "cq", name);
	}
	atomic_store(&r.stop, 1);
	pthread_join(th, NULL);
	ck_assert(metric_value(keep) == 20000);
	ck_assert(metrics_check(r.m));
	metrics_free(r.m);
}
END_TEST

/* ---- procstat ---- */

START_TEST(proc_stat_parsing)
{
	/* comm with a space and a ')' (fields counted after the last) */
	static const char stat[] =
		"4242 (cueue (mgr) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 "
		"250 150 0 0 20 0 3 0 12345 104857600 2560 18446744073709551615"
		" 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	struct procstat_sample s = { 0 };
	struct err err = { "" };
	double bt = 0;

	ck_assert_int_eq(procstat_parse_stat(stat, 100, 4096, 1.7e9, &s,
					     &err), 0);
	ck_assert(s.cpu_seconds == 4.0);          /* (250 + 150) / 100 */
	ck_assert(s.start_time_s == 1.7e9 + 123.45);
	ck_assert(s.vsize_bytes == 104857600);
	ck_assert(s.rss_bytes == 2560.0 * 4096);
	ck_assert_int_eq(procstat_parse_stat("1 (x) S 1 2", 100, 4096, 0,
					     &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "fields"));
	ck_assert_int_eq(procstat_parse_stat("no parens", 100, 4096, 0, &s,
					     &err), -1);
	ck_assert_int_eq(procstat_parse_btime("cpu 1 2 3\nintr 5\n"
					      "btime 1700000000\nprocs 9\n",
					      &bt, &err), 0);
	ck_assert(bt == 1700000000);
	ck_assert_int_eq(procstat_parse_btime("cpu 1\n", &bt, &err), -1);
}
END_TEST

START_TEST(proc_self)
{
	struct procstat_sample s = { 0 };
	struct err err = { "" };
	struct metrics *m = metrics_new();
	struct procstat *p;
	char *text;

	ck_assert_msg(procstat_read(&s, &err) == 0, "%s", err.msg);
	ck_assert(s.rss_bytes > 0 && s.vsize_bytes >= s.rss_bytes);
	ck_assert(s.open_fds >= 3 && s.max_fds >= s.open_fds);
	ck_assert(s.start_time_s > 1.5e9 && s.cpu_seconds >= 0);
	p = procstat_register(m);
	text = metrics_render(m, NULL);
	ck_assert_ptr_nonnull(strstr(text,
		"# TYPE process_cpu_seconds_total counter\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nprocess_resident_memory_bytes "));
	ck_assert_ptr_nonnull(strstr(text, "\nprocess_start_time_seconds "));
	ck_assert_ptr_nonnull(strstr(text, "\nprocess_open_fds "));
	ck_assert_ptr_nonnull(strstr(text, "\nprocess_max_fds "));
	ck_assert_ptr_nonnull(strstr(text, "\nprocess_virtual_memory_bytes "));
	ck_assert_ptr_nonnull(strstr(text,
		"\nprocess_virtual_memory_max_bytes "));
	ck_assert_ptr_null(strstr(text, "process_open_fds 0\n"));
	free(text);
	procstat_free(p);
	metrics_free(m);
}
END_TEST

/* ---- Kueue's families ---- */

struct fam_want {
	const char *name;
	enum metric_type type;
	const char *labels; /* comma-joined, registration order */
	int buckets;        /* 0, 14 (wait), 11 (default), 16 (cycle) */
};

static const struct fam_want kueue_fams[] = {
	{ "kueue_admission_attempts_total", METRIC_COUNTER, "result", 0 },
	{ "kueue_admission_attempt_duration_seconds", METRIC_HISTOGRAM,
	  "result", 11 },
	{ "kueue_admission_cycle_preemption_skips", METRIC_GAUGE,
	  "cluster_queue", 0 },
	{ "kueue_build_info", METRIC_GAUGE, "git_version,git_commit,"
	  "build_date,go_version,compiler,platform", 0 },
	{ "kueue_pending_workloads", METRIC_GAUGE, "cluster_queue,status", 0 },
	{ "kueue_quota_reserved_workloads_total", METRIC_COUNTER,
	  "cluster_queue,priority_class", 0 },
	{ "kueue_quota_reserved_wait_time_seconds", METRIC_HISTOGRAM,
	  "cluster_queue,priority_class", 14 },
	{ "kueue_admitted_workloads_total", METRIC_COUNTER,
	  "cluster_queue,priority_class", 0 },
	{ "kueue_admission_wait_time_seconds", METRIC_HISTOGRAM,
	  "cluster_queue,priority_class", 14 },
	{ "kueue_admission_checks_wait_time_seconds", METRIC_HISTOGRAM,
	  "cluster_queue,priority_class", 14 },
	{ "kueue_evicted_workloads_total", METRIC_COUNTER,
	  "cluster_queue,reason,underlying_cause,priority_class", 0 },
	{ "kueue_evicted_workloads_once_total", METRIC_COUNTER,
	  "cluster_queue,reason,detailed_reason,priority_class", 0 },
	{ "kueue_pods_ready_to_evicted_time_seconds", METRIC_HISTOGRAM,
	  "cluster_queue,reason,underlying_cause", 14 },
	{ "kueue_preempted_workloads_total", METRIC_COUNTER,
	  "preempting_cluster_queue,reason", 0 },
	{ "kueue_replaced_workload_slices_total", METRIC_COUNTER,
	  "cluster_queue", 0 },
	{ "kueue_reserving_active_workloads", METRIC_GAUGE, "cluster_queue",
	  0 },
	{ "kueue_admitted_active_workloads", METRIC_GAUGE, "cluster_queue",
	  0 },
	{ "kueue_cluster_queue_status", METRIC_GAUGE, "cluster_queue,status",
	  0 },
	{ "kueue_ready_wait_time_seconds", METRIC_HISTOGRAM,
	  "cluster_queue,priority_class", 14 },
	{ "kueue_admitted_until_ready_wait_time_seconds", METRIC_HISTOGRAM,
	  "cluster_queue,priority_class", 14 },
	{ "kueue_cluster_queue_weighted_share", METRIC_GAUGE, "cluster_queue",
	  0 },
	{ "kueue_cohort_weighted_share", METRIC_GAUGE, "cohort", 0 },
	{ "cueue_scheduling_cycle_duration_seconds", METRIC_HISTOGRAM, "",
	  16 },
	{ "cueue_api_requests_total", METRIC_COUNTER, "verb,code", 0 },
	{ "controller_runtime_webhook_latency_seconds", METRIC_HISTOGRAM,
	  "webhook", 11 },
	{ "controller_runtime_webhook_requests_total", METRIC_COUNTER,
	  "code,webhook", 0 },
};

static const char *const res_fams[] = {
	"kueue_cluster_queue_resource_reservation",
	"kueue_cluster_queue_resource_usage",
	"kueue_cluster_queue_nominal_quota",
	"kueue_cluster_queue_borrowing_limit",
	"kueue_cluster_queue_lending_limit",
};

static void ck_labels(struct metric_family *f, const char *want)
{
	char got[256] = "";

	for (size_t i = 0; i < metric_family_nlabels(f); i++) {
		if (i)
			strcat(got, ",");
		strcat(got, metric_family_label(f, i));
	}
	ck_assert_msg(!strcmp(got, want), "%s labels %s, want %s",
		      metric_family_name(f), got, want);
}

START_TEST(kueue_names_labels_buckets)
{
	struct metrics *m = metrics_new();
	struct kueue_metrics *km = kueue_metrics_new(m, NULL);
	static const double wait[] = { 1, 2.5, 5, 10, 20, 40, 80, 160, 320,
				       640, 1280, 2560, 5120, 10240 };

	for (size_t i = 0; i < sizeof(kueue_fams) / sizeof(kueue_fams[0]);
	     i++) {
		const struct fam_want *w = &kueue_fams[i];
		struct metric_family *f = metrics_find(m, w->name);

		ck_assert_msg(f != NULL, "%s missing", w->name);
		ck_assert_int_eq(metric_family_type(f), w->type);
		ck_labels(f, w->labels);
		ck_assert_uint_eq(metric_family_nbounds(f), w->buckets);
		if (w->buckets == 14)
			for (size_t k = 0; k < 14; k++)
				ck_assert(metric_family_bound(f, k) ==
					  wait[k]);
		if (w->buckets == 11)
			for (size_t k = 0; k < 11; k++)
				ck_assert(metric_family_bound(f, k) ==
					  metrics_default_buckets[k]);
	}
	/* optional resource gauges only with enableClusterQueueResources */
	for (size_t i = 0; i < 5; i++)
		ck_assert_ptr_null(metrics_find(m, res_fams[i]));
	kueue_metrics_cq_resources(km, "", "cq", "f", "cpu",
		&(struct kueue_resource_values){ 1, 2, 3, 4, 5 });
	kueue_metrics_free(km);
	metrics_free(m);

	m = metrics_new();
	km = kueue_metrics_new(m, &(struct kueue_metrics_opts){
		.cq_resources = true });
	for (size_t i = 0; i < 5; i++) {
		struct metric_family *f = metrics_find(m, res_fams[i]);

		ck_assert_msg(f != NULL, "%s missing", res_fams[i]);
		ck_assert_int_eq(metric_family_type(f), METRIC_GAUGE);
		ck_labels(f, "cohort,cluster_queue,flavor,resource");
	}
	kueue_metrics_free(km);
	metrics_free(m);
}
END_TEST

static double val(struct metrics *m, const char *fam,
		  const char *const *values)
{
	struct metric *c = metric_family_find(metrics_find(m, fam), values);

	ck_assert_msg(c != NULL, "%s: series missing", fam);
	return metric_value(c);
}

static const struct fam_want lq_fams[] = {
	{ "kueue_local_queue_pending_workloads", METRIC_GAUGE,
	  "name,namespace,status", 0 },
	{ "kueue_local_queue_quota_reserved_workloads_total", METRIC_COUNTER,
	  "name,namespace,priority_class", 0 },
	{ "kueue_local_queue_quota_reserved_wait_time_seconds",
	  METRIC_HISTOGRAM, "name,namespace,priority_class", 14 },
	{ "kueue_local_queue_admitted_workloads_total", METRIC_COUNTER,
	  "name,namespace,priority_class", 0 },
	{ "kueue_local_queue_admission_wait_time_seconds", METRIC_HISTOGRAM,
	  "name,namespace,priority_class", 14 },
	{ "kueue_local_queue_admission_checks_wait_time_seconds",
	  METRIC_HISTOGRAM, "name,namespace,priority_class", 14 },
	{ "kueue_local_queue_ready_wait_time_seconds", METRIC_HISTOGRAM,
	  "name,namespace,priority_class", 14 },
	{ "kueue_local_queue_admitted_until_ready_wait_time_seconds",
	  METRIC_HISTOGRAM, "name,namespace,priority_class", 14 },
	{ "kueue_local_queue_evicted_workloads_total", METRIC_COUNTER,
	  "name,namespace,reason,underlying_cause,priority_class", 0 },
	{ "kueue_local_queue_reserving_active_workloads", METRIC_GAUGE,
	  "name,namespace", 0 },
	{ "kueue_local_queue_admitted_active_workloads", METRIC_GAUGE,
	  "name,namespace", 0 },
	{ "kueue_local_queue_status", METRIC_GAUGE, "name,namespace,active",
	  0 },
	{ "kueue_local_queue_resource_reservation", METRIC_GAUGE,
	  "name,namespace,flavor,resource", 0 },
	{ "kueue_local_queue_resource_usage", METRIC_GAUGE,
	  "name,namespace,flavor,resource", 0 },
};
#define NLQ (sizeof(lq_fams) / sizeof(lq_fams[0]))

/* The LocalQueue families: only with the gate; v0.14 labels; removal by
 * (name, namespace) leaves same-named queues of other namespaces. */
START_TEST(kueue_local_queue)
{
	struct metrics *m = metrics_new();
	struct kueue_metrics *km = kueue_metrics_new(m, NULL);

	for (size_t i = 0; i < NLQ; i++)
		ck_assert_ptr_null(metrics_find(m, lq_fams[i].name));
	/* no-ops without the gate */
	kueue_metrics_lq_pending(km, "ns", "lq", 1, 2);
	kueue_metrics_lq_delete(km, "ns", "lq");
	kueue_metrics_free(km);
	metrics_free(m);

	m = metrics_new();
	km = kueue_metrics_new(m, &(struct kueue_metrics_opts){
		.lq_metrics = true });
	for (size_t i = 0; i < NLQ; i++) {
		struct metric_family *f = metrics_find(m, lq_fams[i].name);

		ck_assert_msg(f != NULL, "%s missing", lq_fams[i].name);
		ck_assert_int_eq(metric_family_type(f), lq_fams[i].type);
		ck_labels(f, lq_fams[i].labels);
		ck_assert_uint_eq(metric_family_nbounds(f),
				  lq_fams[i].buckets);
	}
	kueue_metrics_lq_pending(km, "team-a", "lq", 3, 1);
	kueue_metrics_lq_pending(km, "team-b", "lq", 5, 0);
	kueue_metrics_lq_workloads(km, "team-a", "lq", 2, 1);
	kueue_metrics_lq_status(km, "team-a", "lq", KUEUE_LQ_FALSE);
	kueue_metrics_lq_quota_reserved(km, "team-a", "lq", NULL, 2);
	kueue_metrics_lq_admitted(km, "team-a", "lq", "high", 2);
	kueue_metrics_lq_admitted(km, "team-a", "lq", "high", 20);
	kueue_metrics_lq_admission_checks_wait(km, "team-a", "lq", "high", 0);
	kueue_metrics_lq_ready(km, "team-a", "lq", "high", 5, 3);
	kueue_metrics_lq_evicted(km, "team-a", "lq", "Preempted", "", "high");
	kueue_metrics_lq_resources(km, "team-a", "lq", "default", "cpu",
				   1500, 500);
	ck_assert(val(m, "kueue_local_queue_pending_workloads",
		      METRIC_VALUES("lq", "team-a", "active")) == 3);
	ck_assert(val(m, "kueue_local_queue_pending_workloads",
		      METRIC_VALUES("lq", "team-a", "inadmissible")) == 1);
	ck_assert(val(m, "kueue_local_queue_status",
		      METRIC_VALUES("lq", "team-a", "False")) == 1);
	ck_assert(val(m, "kueue_local_queue_status",
		      METRIC_VALUES("lq", "team-a", "True")) == 0);
	ck_assert(val(m, "kueue_local_queue_quota_reserved_workloads_total",
		      METRIC_VALUES("lq", "team-a", "")) == 1);
	ck_assert(val(m, "kueue_local_queue_admitted_workloads_total",
		      METRIC_VALUES("lq", "team-a", "high")) == 2);
	ck_assert(val(m, "kueue_local_queue_admitted_active_workloads",
		      METRIC_VALUES("lq", "team-a")) == 1);
	ck_assert(val(m, "kueue_local_queue_resource_reservation",
		      METRIC_VALUES("lq", "team-a", "default", "cpu")) == 1.5);
	ck_assert(val(m, "kueue_local_queue_resource_usage",
		      METRIC_VALUES("lq", "team-a", "default", "cpu")) == 0.5);
	ck_assert(val(m, "kueue_local_queue_evicted_workloads_total",
		      METRIC_VALUES("lq", "team-a", "Preempted", "",
				    "high")) == 1);
	kueue_metrics_lq_resources_clear(km, "team-a", "lq");
	ck_assert_uint_eq(metric_family_size(metrics_find(m,
		"kueue_local_queue_resource_usage")), 0);
	kueue_metrics_lq_delete(km, "team-a", "lq");
	for (size_t i = 0; i < NLQ; i++) {
		size_t left = metric_family_size(metrics_find(m,
							      lq_fams[i].name));

		/* team-b/lq keeps its two pending series */
		ck_assert_msg(left == (i == 0 ? 2 : 0), "%s: %zu left",
			      lq_fams[i].name, left);
	}
	ck_assert(metrics_check(m));
	kueue_metrics_free(km);
	metrics_free(m);
}
END_TEST

START_TEST(kueue_events)
{
	struct metrics *m = metrics_new();
	struct kueue_metrics *km = kueue_metrics_new(m,
		&(struct kueue_metrics_opts){ .cq_resources = true,
					      .git_version = "v0.1.0" });
	struct metric *h;
	char *text;

	kueue_metrics_pending(km, "team-a", 3, 1);
	ck_assert(val(m, "kueue_pending_workloads",
		      METRIC_VALUES("team-a", "active")) == 3);
	ck_assert(val(m, "kueue_pending_workloads",
		      METRIC_VALUES("team-a", "inadmissible")) == 1);
	kueue_metrics_cq_status(km, "team-a", KUEUE_CQ_ACTIVE);
	kueue_metrics_cq_status(km, "team-a", KUEUE_CQ_TERMINATING);
	ck_assert(val(m, "kueue_cluster_queue_status",
		      METRIC_VALUES("team-a", "active")) == 0);
	ck_assert(val(m, "kueue_cluster_queue_status",
		      METRIC_VALUES("team-a", "terminating")) == 1);
	ck_assert(val(m, "kueue_cluster_queue_status",
		      METRIC_VALUES("team-a", "pending")) == 0);
	kueue_metrics_admitted(km, "team-a", "high", 3.0);
	kueue_metrics_admitted(km, "team-a", "high", 30.0);
	kueue_metrics_admitted(km, "team-a", NULL, 0.5);
	ck_assert(val(m, "kueue_admitted_workloads_total",
		      METRIC_VALUES("team-a", "high")) == 2);
	ck_assert(val(m, "kueue_admitted_workloads_total",
		      METRIC_VALUES("team-a", "")) == 1);
	h = metric_family_find(metrics_find(m,
		"kueue_admission_wait_time_seconds"),
		METRIC_VALUES("team-a", "high"));
	ck_assert_uint_eq(metric_hist_count(h), 2);
	ck_assert_uint_eq(metric_hist_bucket(h, 2), 1);  /* <= 5 */
	ck_assert_uint_eq(metric_hist_bucket(h, 4), 1);  /* <= 20 */
	ck_assert_uint_eq(metric_hist_bucket(h, 5), 2);  /* <= 40 */
	kueue_metrics_quota_reserved(km, "team-a", "high", 1);
	kueue_metrics_admission_checks_wait(km, "team-a", "high", 1);
	kueue_metrics_ready(km, "team-a", "high", 5, 2);
	kueue_metrics_evicted(km, "team-a", "Preempted", "", "high");
	kueue_metrics_evicted_once(km, "team-a", "Preempted", "", "high");
	kueue_metrics_pods_ready_to_evicted(km, "team-a", "Preempted", "",
					    60);
	kueue_metrics_preempted(km, "team-a", "InClusterQueue");
	kueue_metrics_preempted(km, "team-b", "InCohortReclamation");
	kueue_metrics_replaced_slice(km, "team-a");
	kueue_metrics_cq_workloads(km, "team-a", 4, 3);
	kueue_metrics_preemption_skips(km, "team-a", 2);
	kueue_metrics_cq_weighted_share(km, "team-a", 250);
	kueue_metrics_cohort_weighted_share(km, "org", 100);
	kueue_metrics_admission_attempt(km, true, 0.002);
	kueue_metrics_admission_attempt(km, false, 0.001);
	kueue_metrics_admission_attempt(km, false, 0.001);
	ck_assert(val(m, "kueue_admission_attempts_total",
		      METRIC_VALUES("inadmissible")) == 2);
	kueue_metrics_cycle(km, 0.0003);
	kueue_metrics_api_request(km, "PATCH", 200);
	kueue_metrics_api_request(km, "PATCH", 200);
	kueue_metrics_api_request(km, "GET", 0);
	kueue_metrics_api_request(km, "GET", 404);
	kueue_metrics_api_requests_set(km, "LIST", 200, 41);
	kueue_metrics_api_requests_set(km, "LIST", 200, 42);
	kueue_metrics_api_request(km, "PUT", 7);
	ck_assert(val(m, "cueue_api_requests_total",
		      METRIC_VALUES("LIST", "200")) == 42);
	ck_assert(val(m, "cueue_api_requests_total",
		      METRIC_VALUES("PUT", "7")) == 1);
	ck_assert(val(m, "cueue_api_requests_total",
		      METRIC_VALUES("PATCH", "200")) == 2);
	ck_assert(val(m, "cueue_api_requests_total",
		      METRIC_VALUES("GET", "<error>")) == 1);
	ck_assert(val(m, "cueue_api_requests_total",
		      METRIC_VALUES("GET", "404")) == 1);

	/* controller-runtime's webhook metrics, through the observe hook */
	kueue_metrics_webhook_observe(km, "/mutate-batch-v1-job", 200, 0.0004);
	kueue_metrics_webhook_observe(km, "/mutate-batch-v1-job", 200, 0.02);
	kueue_metrics_webhook_observe(km, "/convert", 400, 0.0001);
	ck_assert(val(m, "controller_runtime_webhook_requests_total",
		      METRIC_VALUES("200", "/mutate-batch-v1-job")) == 2);
	ck_assert(val(m, "controller_runtime_webhook_requests_total",
		      METRIC_VALUES("400", "/convert")) == 1);
	h = metric_family_find(metrics_find(m,
		"controller_runtime_webhook_latency_seconds"),
		METRIC_VALUES("/mutate-batch-v1-job"));
	ck_assert_uint_eq(metric_hist_count(h), 2);
	ck_assert_uint_eq(metric_hist_bucket(h, 0), 1);  /* <= 5 ms */
	ck_assert_uint_eq(metric_hist_bucket(h, 2), 2);  /* <= 25 ms */

	/* resources: milli-units to base units; a nil limit is 0 (v0.14) */
	kueue_metrics_cq_resources(km, "org", "team-a", "a100",
		"nvidia.com/gpu", &(struct kueue_resource_values){
			.nominal = 8000, .borrowing = KUEUE_METRICS_NO_LIMIT,
			.lending = 2000, .reservation = 4000, .usage = 3000 });
	kueue_metrics_cq_resources(km, "org", "team-a", "a100", "cpu",
		&(struct kueue_resource_values){ .nominal = 500,
		.borrowing = 0, .lending = KUEUE_METRICS_NO_LIMIT,
		.reservation = 250, .usage = 0 });
	ck_assert(val(m, "kueue_cluster_queue_nominal_quota",
		      METRIC_VALUES("org", "team-a", "a100",
				    "nvidia.com/gpu")) == 8);
	ck_assert(val(m, "kueue_cluster_queue_borrowing_limit",
		      METRIC_VALUES("org", "team-a", "a100",
				    "nvidia.com/gpu")) == 0);
	ck_assert(val(m, "kueue_cluster_queue_lending_limit",
		      METRIC_VALUES("org", "team-a", "a100",
				    "nvidia.com/gpu")) == 2);
	ck_assert(val(m, "kueue_cluster_queue_resource_reservation",
		      METRIC_VALUES("org", "team-a", "a100", "cpu")) == 0.25);
	ck_assert(val(m, "kueue_cluster_queue_resource_usage",
		      METRIC_VALUES("org", "team-a", "a100",
				    "nvidia.com/gpu")) == 3);
	kueue_metrics_cq_resource_remove(km, "org", "team-a", "a100", "cpu");
	ck_assert_uint_eq(metric_family_size(metrics_find(m,
		"kueue_cluster_queue_nominal_quota")), 1);

	text = metrics_render(m, NULL);
	ck_assert_ptr_nonnull(strstr(text,
		"kueue_build_info{build_date=\"\",compiler=\"gcc "));
	ck_assert_ptr_nonnull(strstr(text, "git_version=\"v0.1.0\",go_version="
				     "\"\",platform=\"linux/"));
	ck_assert_ptr_nonnull(strstr(text,
		"kueue_admission_wait_time_seconds_bucket{cluster_queue="
		"\"team-a\",priority_class=\"high\",le=\"10240\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(text,
		"kueue_cluster_queue_nominal_quota{cluster_queue=\"team-a\","
		"cohort=\"org\",flavor=\"a100\",resource=\"nvidia.com/gpu\"}"
		" 8\n"));
	ck_assert_ptr_nonnull(strstr(text,
		"cueue_scheduling_cycle_duration_seconds_bucket{le=\"0.0005\"}"
		" 1\n"));
	free(text);

	/* a deleted ClusterQueue leaves nothing behind */
	kueue_metrics_cq_delete(km, "team-a");
	text = metrics_render(m, NULL);
	ck_assert_msg(strstr(text, "\"team-a\"") == NULL,
		      "team-a left in:\n%s", text);
	ck_assert_ptr_nonnull(strstr(text,
		"kueue_preempted_workloads_total{preempting_cluster_queue="
		"\"team-b\",reason=\"InCohortReclamation\"} 1\n"));
	free(text);
	kueue_metrics_cohort_delete(km, "org");
	ck_assert_uint_eq(metric_family_size(metrics_find(m,
		"kueue_cohort_weighted_share")), 0);
	ck_assert(metrics_check(m));
	kueue_metrics_free(km);
	metrics_free(m);
}
END_TEST

Suite *metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("registry");

	tcase_add_test(tc, children_and_lifetimes);
	tcase_add_test(tc, unlabelled_family_has_its_child);
	tcase_add_test(tc, names);
	/* BUG() aborts: only where Check forks (not under CK_FORK=no) */
	if (!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no")) {
		tcase_add_test_raise_signal(tc, duplicate_family_is_a_bug,
					    SIGABRT);
		tcase_add_test_raise_signal(tc, wrong_value_count_is_a_bug,
					    SIGABRT);
		tcase_add_test_raise_signal(tc, histogram_le_label_is_a_bug,
					    SIGABRT);
	}
	suite_add_tcase(s, tc);

	tc = tcase_create("exposition");
	tcase_add_test(tc, escaping);
	tcase_add_test(tc, go_float_forms);
	tcase_add_test(tc, histogram_buckets);
	tcase_add_test(tc, golden_exposition);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, updates_race_renders);
	suite_add_tcase(s, tc);

	tc = tcase_create("procstat");
	tcase_add_test(tc, proc_stat_parsing);
	tcase_add_test(tc, proc_self);
	suite_add_tcase(s, tc);

	tc = tcase_create("kueue-families");
	tcase_add_test(tc, kueue_names_labels_buckets);
	tcase_add_test(tc, kueue_events);
	tcase_add_test(tc, kueue_local_queue);
	suite_add_tcase(s, tc);
	return s;
}
