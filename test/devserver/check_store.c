/*
 * Suite "store": the devserver's object store. Return codes, the RV
 * counter, no-op updates, list order and pages, the event log and 410,
 * the write-ahead log (reopen, kill -9, torn tails, compaction, crash
 * leftovers) and a threaded writers-and-watchers run.
 *
 * Data dirs are mkdtemp()s under /tmp, one per test inside one per TCase;
 * the TCase's is removed by an unchecked fixture even when a test fails.
 *
 * Under ThreadSanitizer (SANITIZE=thread) the threaded cases report races
 * inside jansson.h itself: json_incref/json_decref read `refcount` with a
 * plain load next to their atomic add/sub. Run them with
 * TSAN_OPTIONS=suppressions=FILE where FILE holds the two lines
 * `race:json_incref` and `race:json_decref`; the store's own accesses are
 * clean.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "devserver/store.h"
#include "suites.h"
#include "test/support/support.h"

#define PODS "/pods"
#define JOBS "batch/jobs"

static char g_root[64]; /* per TCase, made in the runner's process */
static char g_dir[96];  /* per test, under g_root */

/* rm -rf path (best effort) */
static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (d) {
		for (e = readdir(d); e; e = readdir(d)) {
			char *p;

			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			p = xasprintf("%s/%s", path, e->d_name);
			remove_tree(p);
			free(p);
		}
		closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* Unchecked fixture: runs in the runner's process even when a test dies,
 * so nothing is left in /tmp. */
static void root_setup(void)
{
	snprintf(g_root, sizeof(g_root), "/tmp/cueue-store-XXXXXX");
	if (!mkdtemp(g_root))
		abort();
}

static void root_teardown(void)
{
	remove_tree(g_root);
}

static void dir_setup(void)
{
	snprintf(g_dir, sizeof(g_dir), "%s/t-XXXXXX", g_root);
	ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static void dir_teardown(void)
{
	remove_tree(g_dir);
}

static char *dpath(const char *file)
{
	return xasprintf("%s/%s", g_dir, file);
}

static bool file_exists(const char *file)
{
	char *p = dpath(file);
	struct stat st;
	bool ok = stat(p, &st) == 0;

	free(p);
	return ok;
}

static off_t file_size(const char *file)
{
	char *p = dpath(file);
	struct stat st;

	ck_assert_int_eq(stat(p, &st), 0);
	free(p);
	return st.st_size;
}

static void file_append_n(const char *file, const char *bytes, size_t n)
{
	char *p = dpath(file);
	FILE *f = fopen(p, "a");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
	fclose(f);
	free(p);
}

static void file_append(const char *file, const char *text)
{
	file_append_n(file, text, strlen(text));
}

static struct store *open_mem(size_t history)
{
	struct store_opts o = { .data_dir = NULL, .watch_history = history };
	struct err err = { "" };
	struct store *s = store_new(&o, &err);

	ck_assert_msg(s != NULL, "store_new: %s", err.msg);
	return s;
}

static struct store *open_dir(size_t history)
{
	struct store_opts o = { .data_dir = g_dir, .watch_history = history };
	struct err err = { "" };
	struct store *s = store_new(&o, &err);

	ck_assert_msg(s != NULL, "store_new(%s): %s", g_dir, err.msg);
	return s;
}

/* A new ConfigMap-like object with data.v = v. */
static json_t *mk(const char *ns, const char *name, int v)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i}}",
			      "apiVersion", "v1", "kind", "ConfigMap",
			      "metadata", "name", name, "namespace", ns,
			      "data", "v", v);

	ck_assert_ptr_nonnull(o);
	return o;
}

static uint64_t rv_of(const json_t *obj)
{
	const char *s = json_string_value(json_object_get(
		json_object_get(obj, "metadata"), "resourceVersion"));

	ck_assert_ptr_nonnull(s);
	return strtoull(s, NULL, 10);
}

static uint64_t create(struct store *s, const char *res, const char *ns,
		       const char *name, int v)
{
	json_t *out = NULL;
	uint64_t rv;

	ck_assert_int_eq(store_create(s, res, ns, name, mk(ns, name, v), &out),
			 STORE_OK);
	rv = rv_of(out);
	json_decref(out);
	return rv;
}

static uint64_t update(struct store *s, const char *res, const char *ns,
		       const char *name, int v)
{
	json_t *out = NULL;
	uint64_t rv;

	ck_assert_int_eq(store_update(s, res, ns, name, 0, mk(ns, name, v),
				      &out), STORE_OK);
	rv = rv_of(out);
	json_decref(out);
	return rv;
}

/* Every object of res in key order, as one JSON array (new). */
static json_t *dump(struct store *s, const char *res)
{
	struct store_list_result r;
	json_t *items;

	store_list(s, res, NULL, &r);
	items = json_incref(r.items);
	store_list_result_release(&r);
	return items;
}

/* ---- crud ---- */

START_TEST(crud_codes)
{
	struct store *s = open_mem(16);
	json_t *out = NULL, *got;
	uint64_t rv1, rv2;

	ck_assert_uint_eq(store_rv(s), 0);
	ck_assert_ptr_null(store_get(s, PODS, "d", "a"));
	rv1 = create(s, PODS, "d", "a", 1);
	ck_assert_uint_eq(rv1, 1);
	ck_assert_uint_eq(store_rv(s), 1);
	ck_assert_int_eq(store_create(s, PODS, "d", "a", mk("d", "a", 9), &out),
			 STORE_EXISTS);
	ck_assert_ptr_null(out);
	/* same name, other namespace / other resource: distinct keys */
	ck_assert_uint_eq(create(s, PODS, "e", "a", 1), 2);
	ck_assert_uint_eq(create(s, JOBS, "d", "a", 1), 3);

	got = store_get(s, PODS, "d", "a");
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(rv_of(got), rv1);
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_object_get(got, "data"), "v")), 1);
	json_decref(got);

	ck_assert_int_eq(store_update(s, PODS, "d", "nope", 0, mk("d", "x", 1),
				      &out), STORE_NOT_FOUND);
	ck_assert_int_eq(store_update(s, PODS, "d", "a", rv1 + 100,
				      mk("d", "a", 2), &out), STORE_CONFLICT);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(store_update(s, PODS, "d", "a", rv1, mk("d", "a", 2),
				      &out), STORE_OK);
	rv2 = rv_of(out);
	ck_assert_uint_eq(rv2, 4);
	json_decref(out);
	/* the old RV is stale now */
	ck_assert_int_eq(store_update(s, PODS, "d", "a", rv1, mk("d", "a", 3),
				      NULL), STORE_CONFLICT);
	ck_assert_uint_eq(update(s, PODS, "d", "a", 5), 5);

	ck_assert_int_eq(store_delete(s, PODS, "d", "nope", 0, NULL),
			 STORE_NOT_FOUND);
	ck_assert_int_eq(store_delete(s, PODS, "d", "a", 1, NULL),
			 STORE_CONFLICT);
	ck_assert_int_eq(store_delete(s, PODS, "d", "a", 5, &out), STORE_OK);
	ck_assert_uint_eq(rv_of(out), 6); /* the deletion's RV */
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_object_get(out, "data"), "v")), 5);
	json_decref(out);
	ck_assert_ptr_null(store_get(s, PODS, "d", "a"));
	ck_assert_int_eq(store_delete(s, PODS, "d", "a", 0, NULL),
			 STORE_NOT_FOUND);
	ck_assert_uint_eq(store_rv(s), 6);
	ck_assert_uint_eq(store_count(s, PODS), 1);
	ck_assert_uint_eq(store_count(s, JOBS), 1);
	ck_assert_uint_eq(store_count(s, "nosuch/things"), 0);
	/* re-create after delete */
	ck_assert_uint_eq(create(s, PODS, "d", "a", 1), 7);
	store_free(s);
	store_free(NULL);
}
END_TEST

START_TEST(crud_rv_monotonic)
{
	struct store *s = open_mem(8);
	uint64_t last = 0;

	for (int i = 0; i < 200; i++) {
		char name[16];
		uint64_t rv;

		snprintf(name, sizeof(name), "o%d", i % 17);
		if (i < 17)
			rv = create(s, PODS, "d", name, i);
		else if (i % 5 == 0 &&
			 store_delete(s, PODS, "d", name, 0, NULL) == STORE_OK)
			rv = store_rv(s);
		else if (store_count(s, PODS) < 17 &&
			 store_create(s, PODS, "d", name, mk("d", name, i),
				      NULL) == STORE_OK)
			rv = store_rv(s);
		else
			rv = update(s, PODS, "d", name, i);
		ck_assert_uint_gt(rv, last);
		last = rv;
		ck_assert_uint_eq(store_rv(s), rv);
	}
	store_free(s);
}
END_TEST

START_TEST(crud_noop_update)
{
	struct store *s = open_mem(16);
	uint64_t cursor, rv = create(s, PODS, "d", "a", 1);
	struct store_event ev;
	json_t *out = NULL, *cur, *same;

	cursor = store_rv(s);
	/* the caller's stale or missing resourceVersion does not matter */
	same = mk("d", "a", 1);
	json_object_set_new(json_object_get(same, "metadata"),
			    "resourceVersion", json_string("12345"));
	ck_assert_int_eq(store_update(s, PODS, "d", "a", 0, same, &out),
			 STORE_OK);
	ck_assert_uint_eq(rv_of(out), rv);
	cur = store_get(s, PODS, "d", "a");
	ck_assert_ptr_eq(out, cur); /* the stored object itself */
	json_decref(out);
	json_decref(cur);
	ck_assert_int_eq(store_update(s, PODS, "d", "a", rv, mk("d", "a", 1),
				      NULL), STORE_OK);
	ck_assert_uint_eq(store_rv(s), rv);
	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 0, &ev),
			 STORE_TIMEOUT);
	/* a no-op still checks expect_rv */
	ck_assert_int_eq(store_update(s, PODS, "d", "a", rv + 1,
				      mk("d", "a", 1), NULL), STORE_CONFLICT);
	/* a real change moves it */
	ck_assert_uint_eq(update(s, PODS, "d", "a", 2), rv + 1);
	store_free(s);
}
END_TEST

/* An update built as a shallow copy of the stored object (as a patch may
 * be) shares its metadata: the store must not write into it. */
START_TEST(crud_shared_metadata)
{
	struct store *s = open_mem(16);
	uint64_t rv = create(s, PODS, "d", "a", 1);
	json_t *pub = store_get(s, PODS, "d", "a"), *next, *out = NULL;

	next = json_copy(pub);
	json_object_set_new(next, "data", json_pack("{s:i}", "v", 2));
	ck_assert_int_eq(store_update(s, PODS, "d", "a", rv, next, &out),
			 STORE_OK);
	ck_assert_uint_eq(rv_of(out), rv + 1);
	ck_assert_uint_eq(rv_of(pub), rv); /* untouched */
	json_decref(out);
	/* handing in the published object itself is survivable too */
	ck_assert_int_eq(store_update(s, PODS, "d", "a", 0, json_incref(pub),
				      &out), STORE_OK);
	ck_assert_uint_eq(rv_of(out), rv + 2);
	ck_assert_uint_eq(rv_of(pub), rv);
	json_decref(out);
	json_decref(pub);
	store_free(s);
}
END_TEST

START_TEST(crud_bad_keys)
{
	struct store *s = open_mem(4);

	ck_assert_int_eq(store_create(s, PODS, "a/b", "c", mk("a", "c", 1),
				      NULL), STORE_IO);
	ck_assert_int_eq(store_create(s, PODS, "d", "\xff\xfe",
				      mk("d", "x", 1), NULL), STORE_IO);
	ck_assert_uint_eq(store_rv(s), 0);
	ck_assert_uint_eq(store_count(s, PODS), 0);
	store_free(s);
}
END_TEST

/* ---- list ---- */

static bool keep_filter(void *ctx, const json_t *obj)
{
	int *calls = ctx;

	(*calls)++;
	return json_integer_value(json_object_get(json_object_get(obj, "data"),
						  "v")) == 1;
}

static void list_names(struct store *s, const char *res,
		       const struct store_list_opts *o, const char *want,
		       size_t remaining, const char *next)
{
	struct store_list_result r;
	char got[256] = "";
	size_t i;
	json_t *it;

	store_list(s, res, o, &r);
	json_array_foreach(r.items, i, it) {
		json_t *md = json_object_get(it, "metadata");

		if (i)
			strcat(got, " ");
		strcat(got, json_string_value(json_object_get(md, "namespace")));
		strcat(got, "/");
		strcat(got, json_string_value(json_object_get(md, "name")));
	}
	ck_assert_str_eq(got, want);
	ck_assert_uint_eq(r.remaining, remaining);
	if (next)
		ck_assert_str_eq(r.next, next);
	else
		ck_assert_ptr_null(r.next);
	ck_assert_uint_eq(r.rv, store_rv(s));
	store_list_result_release(&r);
}

static void visit_cb(void *ctx, const char *ns, const char *name,
		     const json_t *obj)
{
	char *acc = ctx;

	(void)obj;
	if (*acc)
		strcat(acc, " ");
	strcat(acc, ns);
	strcat(acc, "/");
	strcat(acc, name);
}

START_TEST(list_pages)
{
	struct store *s = open_mem(64);
	struct store_list_opts o = { 0 };
	char seen[256] = "";
	int calls = 0;

	/* keep = data.v == 1: a/x, b/p, b/r */
	create(s, PODS, "b", "r", 1);
	create(s, PODS, "a", "y", 0);
	create(s, PODS, "b", "p", 1);
	create(s, PODS, "a-b", "z", 0);
	create(s, PODS, "a", "x", 1);
	create(s, PODS, "b", "q", 0);
	create(s, JOBS, "a", "j", 1);

	/* etcd key order: bytes of "ns/name"; '-' sorts before '/' */
	list_names(s, PODS, NULL, "a-b/z a/x a/y b/p b/q b/r", 0, NULL);
	store_visit(s, PODS, visit_cb, seen);
	ck_assert_str_eq(seen, "a-b/z a/x a/y b/p b/q b/r");
	list_names(s, "nosuch/things", NULL, "", 0, NULL);

	o.limit = 2;
	list_names(s, PODS, &o, "a-b/z a/x", 4, "a/x");
	o.after = "a/x";
	list_names(s, PODS, &o, "a/y b/p", 2, "b/p");
	o.after = "b/p";
	list_names(s, PODS, &o, "b/q b/r", 0, NULL);
	o.after = "b/r";
	list_names(s, PODS, &o, "", 0, NULL);
	o.limit = 6;
	o.after = NULL;
	list_names(s, PODS, &o, "a-b/z a/x a/y b/p b/q b/r", 0, NULL);

	/* one namespace */
	memset(&o, 0, sizeof(o));
	o.ns = "a";
	list_names(s, PODS, &o, "a/x a/y", 0, NULL);
	o.limit = 1;
	list_names(s, PODS, &o, "a/x", 1, "a/x");
	o.after = "a/x";
	list_names(s, PODS, &o, "a/y", 0, NULL);
	o.ns = "b";
	o.after = "a-b/z"; /* before the namespace: start at its first key */
	list_names(s, PODS, &o, "b/p", 2, "b/p");
	o.ns = "a-b";
	o.after = NULL;
	list_names(s, PODS, &o, "a-b/z", 0, NULL);
	o.ns = "";
	list_names(s, PODS, &o, "a-b/z", 5, "a-b/z");

	/* filters: exact remaining counts only matching objects */
	memset(&o, 0, sizeof(o));
	o.filter = keep_filter;
	o.ctx = &calls;
	list_names(s, PODS, &o, "a/x b/p b/r", 0, NULL);
	ck_assert_int_eq(calls, 6);
	o.limit = 1;
	list_names(s, PODS, &o, "a/x", 2, "a/x");
	o.after = "a/x";
	list_names(s, PODS, &o, "b/p", 1, "b/p");
	o.after = "b/p";
	list_names(s, PODS, &o, "b/r", 0, NULL);
	o.ns = "a";
	o.after = NULL;
	list_names(s, PODS, &o, "a/x", 0, NULL);
	store_free(s);
}
END_TEST

START_TEST(list_cluster_scoped)
{
	struct store *s = open_mem(64);
	struct store_list_opts o = { .limit = 1 };

	create(s, "kueue.x-k8s.io/clusterqueues", "", "n2", 0);
	create(s, "kueue.x-k8s.io/clusterqueues", "", "n1", 0);
	create(s, "kueue.x-k8s.io/clusterqueues", "", "n3", 0);
	list_names(s, "kueue.x-k8s.io/clusterqueues", &o, "/n1", 2, "/n1");
	o.after = "/n1";
	list_names(s, "kueue.x-k8s.io/clusterqueues", &o, "/n2", 1, "/n2");
	o.after = "n2"; /* a bare name is a cluster-scoped key */
	list_names(s, "kueue.x-k8s.io/clusterqueues", &o, "/n3", 0, NULL);
	store_free(s);
}
END_TEST

/* Large enough that list pages must not rescan from the start. */
START_TEST(list_many)
{
	struct store *s = open_mem(4);
	struct store_list_opts o = { .limit = 500 };
	struct store_list_result r;
	size_t total = 0, pages = 0;
	char *after = NULL;

	for (int i = 0; i < 20000; i++) {
		char ns[16], name[16];

		snprintf(ns, sizeof(ns), "ns%d", i % 7);
		snprintf(name, sizeof(name), "w%05d", (i * 7919) % 20000);
		ck_assert_int_eq(store_create(s, PODS, ns, name,
					      mk(ns, name, i), NULL),
				 STORE_OK);
	}
	for (int i = 0; i < 20000; i += 3) {
		char ns[16], name[16];

		snprintf(ns, sizeof(ns), "ns%d", i % 7);
		snprintf(name, sizeof(name), "w%05d", (i * 7919) % 20000);
		ck_assert_int_eq(store_delete(s, PODS, ns, name, 0, NULL),
				 STORE_OK);
	}
	ck_assert_uint_eq(store_count(s, PODS), 20000 - 6667);
	do {
		o.after = after;
		store_list(s, PODS, &o, &r);
		total += json_array_size(r.items);
		pages++;
		ck_assert_uint_eq(total + r.remaining, 20000 - 6667);
		free(after);
		after = r.next ? xstrdup(r.next) : NULL;
		store_list_result_release(&r);
	} while (after);
	ck_assert_uint_eq(total, 20000 - 6667);
	ck_assert_uint_eq(pages, (20000 - 6667 + 499) / 500);
	store_free(s);
}
END_TEST

/* ---- watch ---- */

static void expect_event(struct store *s, uint64_t *cursor, const char *res,
			 enum store_event_type type, uint64_t rv,
			 const char *eres, const char *name, uint64_t prev_rv)
{
	struct store_event ev;

	ck_assert_int_eq(store_next_event(s, cursor, res, 0, &ev), STORE_OK);
	ck_assert_int_eq(ev.type, type);
	ck_assert_uint_eq(ev.rv, rv);
	ck_assert_uint_eq(*cursor, rv);
	ck_assert_str_eq(ev.res, eres);
	ck_assert_str_eq(ev.ns, "d");
	ck_assert_str_eq(ev.name, name);
	ck_assert_uint_eq(rv_of(ev.obj), rv);
	if (prev_rv) {
		ck_assert_ptr_nonnull(ev.prev);
		ck_assert_uint_eq(rv_of(ev.prev), prev_rv);
	} else {
		ck_assert_ptr_null(ev.prev);
	}
	store_event_release(&ev);
	ck_assert_ptr_null(ev.obj);
}

START_TEST(watch_order)
{
	struct store *s = open_mem(100);
	struct store_event ev;
	uint64_t cursor = 0;

	create(s, PODS, "d", "a", 1);                              /* 1 */
	create(s, JOBS, "d", "b", 1);                              /* 2 */
	update(s, PODS, "d", "a", 2);                              /* 3 */
	ck_assert_int_eq(store_delete(s, JOBS, "d", "b", 0, NULL), /* 4 */
			 STORE_OK);
	expect_event(s, &cursor, NULL, STORE_ADDED, 1, PODS, "a", 0);
	expect_event(s, &cursor, NULL, STORE_ADDED, 2, JOBS, "b", 0);
	expect_event(s, &cursor, NULL, STORE_MODIFIED, 3, PODS, "a", 1);
	expect_event(s, &cursor, NULL, STORE_DELETED, 4, JOBS, "b", 2);
	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 0, &ev),
			 STORE_TIMEOUT);

	/* resource filter: other resources' events advance the cursor */
	cursor = 0;
	expect_event(s, &cursor, PODS, STORE_ADDED, 1, PODS, "a", 0);
	expect_event(s, &cursor, PODS, STORE_MODIFIED, 3, PODS, "a", 1);
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 0, &ev),
			 STORE_TIMEOUT);
	ck_assert_uint_eq(cursor, 4);
	cursor = 1;
	expect_event(s, &cursor, JOBS, STORE_ADDED, 2, JOBS, "b", 0);
	expect_event(s, &cursor, JOBS, STORE_DELETED, 4, JOBS, "b", 2);
	/* a cursor from the future just waits */
	cursor = 50;
	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 0, &ev),
			 STORE_TIMEOUT);
	ck_assert_uint_eq(cursor, 50);
	store_free(s);
}
END_TEST

START_TEST(watch_timeout)
{
	struct store *s = open_mem(4);
	struct store_event ev;
	uint64_t cursor = 0;
	int64_t t0 = t_mono_ms();

	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 150, &ev),
			 STORE_TIMEOUT);
	ck_assert_int_ge(t_mono_ms() - t0, 140);
	ck_assert_int_lt(t_mono_ms() - t0, 3000);
	store_free(s);
}
END_TEST

struct later {
	struct store *s;
	int delay_ms;
	bool wake; /* store_wake_all instead of a write */
};

static void *later_main(void *arg)
{
	struct later *l = arg;

	t_sleep_ms(l->delay_ms);
	if (l->wake)
		store_wake_all(l->s);
	else
		create(l->s, PODS, "d", "late", 1);
	return NULL;
}

START_TEST(watch_blocks_until_write)
{
	struct store *s = open_mem(4);
	struct later l = { s, 50, false };
	struct store_event ev;
	uint64_t cursor = 0;
	pthread_t t;
	int64_t t0 = t_mono_ms();

	pthread_create(&t, NULL, later_main, &l);
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 10000, &ev),
			 STORE_OK);
	ck_assert_str_eq(ev.name, "late");
	ck_assert_int_lt(t_mono_ms() - t0, 5000);
	store_event_release(&ev);
	pthread_join(t, NULL);
	store_free(s);
}
END_TEST

START_TEST(watch_wake_all)
{
	struct store *s = open_mem(4);
	struct later l = { s, 50, true };
	struct store_event ev;
	uint64_t cursor = 0;
	pthread_t t;
	int64_t t0 = t_mono_ms();

	pthread_create(&t, NULL, later_main, &l);
	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 10000, &ev),
			 STORE_TIMEOUT);
	ck_assert_int_lt(t_mono_ms() - t0, 5000);
	pthread_join(t, NULL);
	store_free(s);
}
END_TEST

START_TEST(watch_gone)
{
	struct store *s = open_mem(3);
	struct store_event ev;
	uint64_t cursor;

	for (int i = 0; i < 10; i++) {
		char name[16];

		snprintf(name, sizeof(name), "o%d", i);
		create(s, PODS, "d", name, i);
	}
	/* kept: 8, 9, 10; resuming after 7 still works */
	cursor = 0;
	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 0, &ev),
			 STORE_GONE);
	cursor = 6;
	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 0, &ev),
			 STORE_GONE);
	cursor = 7;
	expect_event(s, &cursor, NULL, STORE_ADDED, 8, PODS, "o7", 0);
	/* a watch filtered on a resource that lost nothing is never
	 * GONE, however far behind: it just moves to the end */
	cursor = 0;
	ck_assert_int_eq(store_next_event(s, &cursor, JOBS, 0, &ev),
			 STORE_TIMEOUT);
	ck_assert_uint_eq(cursor, 10);
	/* one filtered on the resource that lost events is */
	cursor = 6;
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 0, &ev),
			 STORE_GONE);
	cursor = 7;
	expect_event(s, &cursor, PODS, STORE_ADDED, 8, PODS, "o7", 0);
	store_free(s);
}
END_TEST

static void create_n(struct store *s, const char *res, const char *prefix,
		     int n)
{
	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "%s%d", prefix, i);
		create(s, res, "d", name, i);
	}
}

static enum store_rc next_rc(struct store *s, uint64_t cursor,
			     const char *res)
{
	struct store_event ev;
	enum store_rc rc = store_next_event(s, &cursor, res, 0, &ev);

	if (rc == STORE_OK)
		store_event_release(&ev);
	return rc;
}

/* Retention is per resource: a busy resource never pushes another's
 * history out; unfiltered readers get everything after their cursor or
 * GONE. */
START_TEST(hist_isolation)
{
	struct store *s = open_mem(3);
	struct store_event evs[8];
	uint64_t cursor;
	size_t n;

	create(s, JOBS, "d", "j0", 0);             /* 1 */
	create_n(s, PODS, "p", 20);                 /* 2..21 */
	/* JOBS lost nothing: rv 1 is still there after 20 other writes */
	cursor = 0;
	expect_event(s, &cursor, JOBS, STORE_ADDED, 1, JOBS, "j0", 0);
	ck_assert_int_eq(next_rc(s, 1, JOBS), STORE_TIMEOUT);
	/* PODS keeps its last 3: 19, 20, 21 */
	ck_assert_int_eq(next_rc(s, 17, PODS), STORE_GONE);
	cursor = 18;
	expect_event(s, &cursor, PODS, STORE_ADDED, 19, PODS, "p17", 0);
	/* unfiltered: GONE iff an event after the cursor was dropped
	 * (PODS dropped up to 18) */
	ck_assert_int_eq(next_rc(s, 0, NULL), STORE_GONE);
	ck_assert_int_eq(next_rc(s, 17, NULL), STORE_GONE);
	cursor = 18;
	expect_event(s, &cursor, NULL, STORE_ADDED, 19, PODS, "p17", 0);
	/* JOBS now drops its rv 1: its own watchers from 0 are GONE, the
	 * unfiltered base does not move back (18 > 1) */
	create_n(s, JOBS, "k", 3);                  /* 22, 23, 24 */
	ck_assert_int_eq(next_rc(s, 0, JOBS), STORE_GONE);
	cursor = 1;
	expect_event(s, &cursor, JOBS, STORE_ADDED, 22, JOBS, "k0", 0);
	ck_assert_int_eq(next_rc(s, 17, NULL), STORE_GONE);
	/* a batch from 18 gets every event, in RV order, both resources */
	cursor = 18;
	ck_assert_int_eq(store_next_events(s, &cursor, NULL, 0, evs, 8, &n),
			 STORE_OK);
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(evs[i].rv, 19 + i);
		ck_assert_str_eq(evs[i].res, i < 3 ? PODS : JOBS);
		store_event_release(&evs[i]);
	}
	ck_assert_uint_eq(cursor, 24);
	/* a filtered batch skips the other resource and stops at the end */
	cursor = 1;
	ck_assert_int_eq(store_next_events(s, &cursor, JOBS, 0, evs, 8, &n),
			 STORE_OK);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(evs[i].rv, 22 + i);
		store_event_release(&evs[i]);
	}
	ck_assert_uint_eq(cursor, 24);
	/* PODS' cursor after its last kept event moves to the end */
	cursor = 21;
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 0, evs),
			 STORE_TIMEOUT);
	ck_assert_uint_eq(cursor, 24);
	store_free(s);
}
END_TEST

struct fake_clock {
	uint64_t ms;
};

static uint64_t fake_now(void *ctx)
{
	return ((struct fake_clock *)ctx)->ms;
}

/* The time window keeps young events past the count, up to the cap;
 * aged-out ones drain at most two per write. */
START_TEST(hist_window_and_cap)
{
	struct fake_clock clk = { 5000 };
	struct store_opts o = { .watch_history = 2,
				.watch_history_ms = 1000,
				.watch_history_max = 5,
				.clock = fake_now, .clock_ctx = &clk };
	struct err err = { "" };
	struct store *s = store_new(&o, &err);
	uint64_t cursor;

	ck_assert_ptr_nonnull(s);
	create_n(s, PODS, "a", 5);                  /* 1..5 at t=5000 */
	/* all young: 5 kept although the count is 2 */
	cursor = 0;
	expect_event(s, &cursor, PODS, STORE_ADDED, 1, PODS, "a0", 0);
	/* the cap: a 6th young event drops the oldest */
	create(s, PODS, "d", "a5", 5);              /* 6 */
	ck_assert_int_eq(next_rc(s, 0, PODS), STORE_GONE);
	cursor = 1;
	expect_event(s, &cursor, PODS, STORE_ADDED, 2, PODS, "a1", 0);
	/* 2..6 age out: each write drops at most two of them */
	clk.ms = 6000;
	create(s, PODS, "d", "b0", 0);              /* 7: drops 2, 3 */
	ck_assert_int_eq(next_rc(s, 2, PODS), STORE_GONE);
	cursor = 3;
	expect_event(s, &cursor, PODS, STORE_ADDED, 4, PODS, "a3", 0);
	create(s, PODS, "d", "b1", 1);              /* 8: drops 4, 5 */
	ck_assert_int_eq(next_rc(s, 4, PODS), STORE_GONE);
	ck_assert_int_eq(next_rc(s, 5, PODS), STORE_OK);
	clk.ms = 6999;
	create(s, PODS, "d", "b2", 2);              /* 9: drops 6 only */
	ck_assert_int_eq(next_rc(s, 5, PODS), STORE_GONE);
	cursor = 6;
	expect_event(s, &cursor, PODS, STORE_ADDED, 7, PODS, "b0", 0);
	/* 7, 8 (t=6000) are still young at 6999: past the count, kept */
	create(s, PODS, "d", "b3", 3);              /* 10 */
	ck_assert_int_eq(next_rc(s, 6, PODS), STORE_OK);
	/* the unfiltered history follows: 6 was the highest dropped */
	ck_assert_int_eq(next_rc(s, 5, NULL), STORE_GONE);
	ck_assert_int_eq(next_rc(s, 6, NULL), STORE_OK);
	/* another resource's window is its own */
	create(s, JOBS, "d", "j", 0);               /* 11 */
	cursor = 0;
	ck_assert_int_eq(next_rc(s, 0, JOBS), STORE_OK);
	store_free(s);
}
END_TEST

/* Without a window the count alone rules, whatever the clock says. */
START_TEST(hist_count_only)
{
	struct fake_clock clk = { 0 };
	struct store_opts o = { .watch_history = 2,
				.watch_history_max = 100,
				.clock = fake_now, .clock_ctx = &clk };
	struct err err = { "" };
	struct store *s = store_new(&o, &err);

	ck_assert_ptr_nonnull(s);
	create_n(s, PODS, "a", 4);                  /* keeps 3, 4 */
	ck_assert_int_eq(next_rc(s, 1, PODS), STORE_GONE);
	ck_assert_int_eq(next_rc(s, 2, PODS), STORE_OK);
	store_free(s);
}
END_TEST

/* A status update of a kept object shares its unchanged subtrees with
 * the version before, so history costs the changes, not copies. */
START_TEST(hist_shares_versions)
{
	struct store *s = open_mem(100);
	json_t *o = mk("d", "w", 1), *spec;
	struct store_event ev;
	uint64_t cursor = 1;

	spec = json_pack("{s:[s,s,s], s:{s:i}}", "podSets", "a", "b", "c",
			 "limits", "cpu", 4);
	json_object_set_new(o, "spec", spec);
	ck_assert_int_eq(store_create(s, PODS, "d", "w", o, NULL), STORE_OK);
	/* a patch-like update: a deep copy with one field changed */
	o = store_get(s, PODS, "d", "w");
	spec = json_deep_copy(o);
	json_decref(o);
	json_object_set_new(json_object_get(spec, "data"), "v",
			    json_integer(2));
	ck_assert_int_eq(store_update(s, PODS, "d", "w", 0, spec, NULL),
			 STORE_OK);
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 0, &ev), STORE_OK);
	ck_assert_uint_eq(ev.rv, 2);
	ck_assert_ptr_eq(json_object_get(ev.obj, "spec"),
			 json_object_get(ev.prev, "spec"));
	ck_assert_ptr_eq(json_object_get(ev.obj, "kind"),
			 json_object_get(ev.prev, "kind"));
	ck_assert_ptr_eq(json_object_get(json_object_get(ev.obj, "metadata"),
					 "name"),
			 json_object_get(json_object_get(ev.prev, "metadata"),
					 "name"));
	/* what changed is not shared, and each version reads right */
	ck_assert_ptr_ne(json_object_get(ev.obj, "data"),
			 json_object_get(ev.prev, "data"));
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_object_get(ev.obj, "data"), "v")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(
				 json_object_get(ev.prev, "data"), "v")), 1);
	ck_assert_uint_eq(rv_of(ev.prev), 1);
	ck_assert_uint_eq(rv_of(ev.obj), 2);
	store_event_release(&ev);
	store_free(s);
}
END_TEST

/* Memo bytes of events far behind the newest are dropped when no reader
 * holds them; a held event keeps them. */
START_TEST(hist_memo_trim)
{
	struct store *s = open_mem(5000);
	struct store_event held, ev;
	uint64_t cursor = 0;
	size_t len;

	create_n(s, PODS, "a", 2);                  /* 1, 2 */
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 0, &held),
			 STORE_OK);
	(void)store_event_memo_set(&held, 0, "one", 3, &len);
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 0, &ev),
			 STORE_OK);
	(void)store_event_memo_set(&ev, 0, "two", 3, &len);
	store_event_release(&ev);
	create_n(s, PODS, "b", 1100);
	ck_assert_ptr_nonnull(store_event_memo(&held, 0, &len));
	ck_assert_uint_eq(len, 3);
	store_event_release(&held);
	cursor = 1;
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 0, &ev),
			 STORE_OK);
	ck_assert_uint_eq(ev.rv, 2);
	ck_assert_ptr_null(store_event_memo(&ev, 0, &len));
	store_event_release(&ev);
	store_free(s);
}
END_TEST

/* ---- persistence ---- */

START_TEST(persist_reopen)
{
	struct store *s = open_dir(16);
	json_t *pods, *jobs, *again, *got;
	struct store_event ev;
	uint64_t rv, cursor;

	for (int i = 0; i < 50; i++) {
		char name[16];

		snprintf(name, sizeof(name), "o%02d", i);
		create(s, i % 2 ? PODS : JOBS, "d", name, i);
	}
	for (int i = 0; i < 20; i++) {
		char name[16];

		snprintf(name, sizeof(name), "o%02d", i);
		update(s, i % 2 ? PODS : JOBS, "d", name, 1000 + i);
	}
	for (int i = 40; i < 50; i++) {
		char name[16];

		snprintf(name, sizeof(name), "o%02d", i);
		ck_assert_int_eq(store_delete(s, i % 2 ? PODS : JOBS, "d",
					      name, 0, NULL), STORE_OK);
	}
	/* awkward content: quotes, backslashes, NUL, non-ASCII */
	got = mk("d", "we\"ird\\name", 1);
	json_object_set_new(got, "blob", json_stringn("a\0b\n\xc3\xa9", 6));
	ck_assert_int_eq(store_create(s, PODS, "d", "we\"ird\\name", got,
				      NULL), STORE_OK);
	pods = dump(s, PODS);
	jobs = dump(s, JOBS);
	rv = store_rv(s);
	ck_assert_uint_eq(rv, 81);
	store_free(s);

	s = open_dir(16);
	ck_assert_uint_eq(store_rv(s), rv);
	again = dump(s, PODS);
	ck_assert(json_equal(again, pods));
	json_decref(again);
	again = dump(s, JOBS);
	ck_assert(json_equal(again, jobs));
	json_decref(again);
	got = store_get(s, PODS, "d", "we\"ird\\name");
	ck_assert_ptr_nonnull(got);
	ck_assert_uint_eq(json_string_length(json_object_get(got, "blob")), 6);
	json_decref(got);
	/* the previous process's history is gone; the present is not */
	cursor = rv - 1;
	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 0, &ev),
			 STORE_GONE);
	cursor = rv - 1;
	ck_assert_int_eq(store_next_event(s, &cursor, PODS, 0, &ev),
			 STORE_GONE);
	cursor = rv - 1;
	ck_assert_int_eq(store_next_event(s, &cursor, "x/never", 0, &ev),
			 STORE_GONE);
	cursor = rv;
	ck_assert_int_eq(store_next_event(s, &cursor, NULL, 0, &ev),
			 STORE_TIMEOUT);
	ck_assert_uint_eq(create(s, PODS, "d", "new", 1), rv + 1);
	expect_event(s, &cursor, NULL, STORE_ADDED, rv + 1, PODS, "new", 0);
	/* a deletion as the last write still moves the counter for good */
	ck_assert_int_eq(store_delete(s, PODS, "d", "new", 0, NULL), STORE_OK);
	store_free(s);
	s = open_dir(16);
	ck_assert_uint_eq(store_rv(s), rv + 2);
	store_free(s);
	json_decref(pods);
	json_decref(jobs);
}
END_TEST

START_TEST(persist_dir_created_and_locked)
{
	char *sub = dpath("a/b");
	struct store_opts o = { .data_dir = sub, .watch_history = 4 };
	struct err err = { "" };
	struct store *s = store_new(&o, &err), *s2;

	ck_assert_msg(s != NULL, "%s", err.msg);
	create(s, PODS, "d", "x", 1);
	s2 = store_new(&o, &err);
	ck_assert_ptr_null(s2);
	ck_assert_msg(strstr(err.msg, "in use"), "%s", err.msg);
	store_free(s);
	s = store_new(&o, &err);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(store_count(s, PODS), 1);
	store_free(s);
	free(sub);
	o.data_dir = "";
	ck_assert_ptr_null(store_new(&o, &err));
}
END_TEST

START_TEST(persist_torn_tail)
{
	struct store *s = open_dir(16);
	uint64_t rv;

	for (int i = 0; i < 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "o%d", i);
		create(s, PODS, "d", name, i);
	}
	rv = store_rv(s);
	store_free(s);

	/* a write cut short by the kill: no newline */
	file_append("wal", "{\"rv\":999,\"op\":\"put\",\"res\":\"/pods\",\"ns\"");
	s = open_dir(16);
	ck_assert_uint_eq(store_rv(s), rv);
	ck_assert_uint_eq(store_count(s, PODS), 5);
	/* the torn bytes were cut, so this line does not glue onto them */
	ck_assert_uint_eq(create(s, PODS, "d", "after", 1), rv + 1);
	store_free(s);
	s = open_dir(16);
	ck_assert_uint_eq(store_rv(s), rv + 1);
	ck_assert_uint_eq(store_count(s, PODS), 6);
	store_free(s);

	/* garbage lines at the end (power loss) are dropped too */
	file_append_n("wal", "\0\0\0garbage\n{\"rv\":12,\"op\n", 24);
	s = open_dir(16);
	ck_assert_uint_eq(store_rv(s), rv + 1);
	ck_assert_uint_eq(store_count(s, PODS), 6);
	store_free(s);
}
END_TEST

START_TEST(persist_corrupt_middle)
{
	struct store *s = open_dir(16);
	struct store_opts o = { .data_dir = g_dir, .watch_history = 4 };
	struct err err = { "" };
	char line[160];

	create(s, PODS, "d", "a", 1);
	store_free(s);
	file_append("wal", "this is not a record\n");
	snprintf(line, sizeof(line),
		 "{\"rv\":2,\"op\":\"del\",\"res\":\"/pods\",\"ns\":\"d\","
		 "\"name\":\"a\"}\n");
	file_append("wal", line);
	ck_assert_ptr_null(store_new(&o, &err));
	ck_assert_msg(strstr(err.msg, "corrupt"), "%s", err.msg);
}
END_TEST

/*
 * A child writes as fast as it can and reports each acknowledged write
 * (object index, RV) through a pipe; it is SIGKILLed mid-stream. Every
 * acknowledged write must be there after reopening.
 */
struct ack {
	uint32_t idx;
	uint64_t rv;
};

#define KILL_OBJS 64

static _Noreturn void kill_child(int fd)
{
	struct store_opts o = { .data_dir = g_dir, .watch_history = 16 };
	struct err err = { "" };
	struct store *s = store_new(&o, &err);

	if (!s)
		_exit(2);
	for (uint32_t i = 0; i < 10000000; i++) {
		uint32_t idx = i % KILL_OBJS;
		char name[16];
		json_t *out = NULL;
		enum store_rc rc;
		struct ack a;

		snprintf(name, sizeof(name), "o%u", idx);
		if (i < KILL_OBJS)
			rc = store_create(s, PODS, "d", name,
					  mk("d", name, (int)i), &out);
		else
			rc = store_update(s, PODS, "d", name, 0,
					  mk("d", name, (int)i), &out);
		if (rc != STORE_OK)
			_exit(3);
		a.idx = idx;
		a.rv = rv_of(out);
		json_decref(out);
		if (write(fd, &a, sizeof(a)) != (ssize_t)sizeof(a))
			_exit(4);
	}
	_exit(0);
}

START_TEST(persist_kill9)
{
	uint64_t want[KILL_OBJS] = { 0 }, maxrv = 0;
	size_t nacks = 0;
	struct store *s;
	struct ack a;
	int pfd[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pfd[0]);
		kill_child(pfd[1]);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n = read(pfd[0], &a, sizeof(a));

		if (n == 0)
			break;
		ck_assert_int_eq(n, sizeof(a));
		ck_assert_uint_lt(a.idx, KILL_OBJS);
		want[a.idx] = a.rv;
		if (a.rv > maxrv)
			maxrv = a.rv;
		if (++nacks == 3000)
			kill(pid, SIGKILL);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	close(pfd[0]);
	ck_assert_uint_ge(nacks, 3000);

	s = open_dir(16);
	ck_assert_uint_ge(store_rv(s), maxrv);
	for (uint32_t i = 0; i < KILL_OBJS; i++) {
		char name[16];
		json_t *o;

		snprintf(name, sizeof(name), "o%u", i);
		o = store_get(s, PODS, "d", name);
		ck_assert_msg(o != NULL, "%s lost", name);
		/* never older than what was acknowledged (a write that
		 * reached the log but not the pipe may be newer) */
		ck_assert_uint_ge(rv_of(o), want[i]);
		json_decref(o);
	}
	/* and the counter carries on */
	ck_assert_uint_gt(update(s, PODS, "d", "o0", -1), maxrv);
	store_free(s);
}
END_TEST

START_TEST(persist_compaction)
{
	struct store *s;
	json_t *before, *after;
	uint64_t rv;

	setenv("CUEUE_STORE_COMPACT_BYTES", "8192", 1);
	s = open_dir(16);
	for (int i = 0; i < 10; i++) {
		char name[16];

		snprintf(name, sizeof(name), "o%d", i);
		create(s, PODS, "d", name, 0);
	}
	for (int k = 1; k <= 300; k++)
		for (int i = 0; i < 10; i++) {
			char name[16];

			snprintf(name, sizeof(name), "o%d", i);
			update(s, PODS, "d", name, k);
		}
	ck_assert_int_eq(store_delete(s, PODS, "d", "o3", 0, NULL), STORE_OK);
	ck_assert(file_exists("snapshot"));
	ck_assert(!file_exists("snapshot.tmp"));
	ck_assert(!file_exists("wal.old"));
	/* ~3000 lines of ~120 bytes went in; the WAL stayed small */
	ck_assert_int_lt(file_size("wal"), 64 * 1024);
	before = dump(s, PODS);
	rv = store_rv(s);
	store_free(s);

	unsetenv("CUEUE_STORE_COMPACT_BYTES");
	s = open_dir(16);
	ck_assert_uint_eq(store_rv(s), rv);
	after = dump(s, PODS);
	ck_assert(json_equal(before, after));
	ck_assert_uint_eq(json_array_size(after), 9);
	json_decref(before);
	json_decref(after);
	store_free(s);
}
END_TEST

/* The files a crash between compaction steps leaves behind. */
START_TEST(persist_crash_leftovers)
{
	struct store *s;
	json_t *before, *after;
	char *wal, *old;
	uint64_t rv;

	setenv("CUEUE_STORE_COMPACT_BYTES", "4096", 1);
	s = open_dir(16);
	for (int k = 0; k < 200; k++) {
		char name[16];

		snprintf(name, sizeof(name), "o%d", k % 7);
		if (k < 7)
			create(s, PODS, "d", name, k);
		else
			update(s, PODS, "d", name, k);
	}
	unsetenv("CUEUE_STORE_COMPACT_BYTES");
	ck_assert(file_exists("snapshot"));
	before = dump(s, PODS);
	rv = store_rv(s);
	store_free(s);

	/* crash after the rotation's first rename, before the snapshot */
	wal = dpath("wal");
	old = dpath("wal.old");
	ck_assert_int_eq(rename(wal, old), 0);
	file_append("wal.new", "");
	file_append("snapshot.tmp", "{\"snapshot\":1,\"rv\":");
	s = open_dir(16);
	ck_assert_uint_eq(store_rv(s), rv);
	after = dump(s, PODS);
	ck_assert(json_equal(before, after));
	json_decref(after);
	/* folded at open */
	ck_assert(!file_exists("wal.old"));
	ck_assert(!file_exists("wal.new"));
	ck_assert(!file_exists("snapshot.tmp"));
	ck_assert_uint_eq(update(s, PODS, "d", "o1", -5), rv + 1);
	store_free(s);
	s = open_dir(16);
	ck_assert_uint_eq(store_rv(s), rv + 1);
	ck_assert_uint_eq(store_count(s, PODS), 7);
	store_free(s);
	json_decref(before);
	free(wal);
	free(old);
}
END_TEST

START_TEST(persist_fsync_mode)
{
	struct store *s;

	setenv("CUEUE_DEVSERVER_FSYNC", "1", 1);
	s = open_dir(16);
	for (int i = 0; i < 20; i++) {
		char name[16];

		snprintf(name, sizeof(name), "o%d", i);
		create(s, PODS, "d", name, i);
	}
	store_free(s);
	unsetenv("CUEUE_DEVSERVER_FSYNC");
	s = open_dir(16);
	ck_assert_uint_eq(store_count(s, PODS), 20);
	ck_assert_uint_eq(store_rv(s), 20);
	store_free(s);
}
END_TEST

/* ---- threads ---- */

#define WRITERS 4
#define WATCHERS 2
#define WRITES 1500  /* per writer */
#define PER_WRITER_OBJS 20
#define TOTAL (WRITERS * WRITES)

struct writer {
	struct store *s;
	int id;
};

static char write_failed[] = "write failed";

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (int k = 0; k < WRITES; k++) {
		char name[32];
		int j = k % PER_WRITER_OBJS;
		enum store_rc rc;

		snprintf(name, sizeof(name), "w%d-%d", w->id, j);
		/* each writer owns its keys: every write is a real change */
		if (k < PER_WRITER_OBJS || k % 97 == 0)
			rc = store_create(w->s, w->id % 2 ? PODS : JOBS, "d",
					  name, mk("d", name, k), NULL);
		else if (k % 89 == 0)
			rc = store_delete(w->s, w->id % 2 ? PODS : JOBS, "d",
					  name, 0, NULL);
		else
			rc = store_update(w->s, w->id % 2 ? PODS : JOBS, "d",
					  name, 0, mk("d", name, k), NULL);
		if (rc == STORE_EXISTS)
			rc = store_update(w->s, w->id % 2 ? PODS : JOBS, "d",
					  name, 0, mk("d", name, k), NULL);
		else if (rc == STORE_NOT_FOUND)
			rc = store_create(w->s, w->id % 2 ? PODS : JOBS, "d",
					  name, mk("d", name, k), NULL);
		if (rc != STORE_OK)
			return write_failed;
	}
	return NULL;
}

struct watcher {
	struct store *s;
	uint8_t *seen;  /* TOTAL + 1 counters */
	const char *fail;
};

static void *watcher_main(void *arg)
{
	struct watcher *w = arg;
	uint64_t cursor = 0, got = 0;

	while (got < TOTAL) {
		struct store_event ev;
		enum store_rc rc = store_next_event(w->s, &cursor, NULL, 10000,
						    &ev);

		if (rc != STORE_OK) {
			w->fail = rc == STORE_GONE ? "gone" : "timeout";
			return NULL;
		}
		if (ev.rv != got + 1 || ev.rv > TOTAL)
			w->fail = "out of order";
		else if (rv_of(ev.obj) != ev.rv)
			w->fail = "object RV differs from the event's";
		else if ((ev.type == STORE_ADDED) != !ev.prev)
			w->fail = "prev does not match the type";
		else
			w->seen[ev.rv]++;
		got = ev.rv;
		store_event_release(&ev);
		if (w->fail)
			return NULL;
	}
	return NULL;
}

START_TEST(threads_writers_watchers)
{
	struct store *s;
	struct writer wr[WRITERS];
	struct watcher wa[WATCHERS];
	pthread_t tw[WRITERS], ta[WATCHERS];
	size_t objs;

	/* persistence and frequent compactions run under the same load */
	setenv("CUEUE_STORE_COMPACT_BYTES", "65536", 1);
	s = open_dir(TOTAL);
	for (int i = 0; i < WATCHERS; i++) {
		wa[i].s = s;
		wa[i].seen = xcalloc(TOTAL + 1, 1);
		wa[i].fail = NULL;
		pthread_create(&ta[i], NULL, watcher_main, &wa[i]);
	}
	for (int i = 0; i < WRITERS; i++) {
		wr[i].s = s;
		wr[i].id = i;
		pthread_create(&tw[i], NULL, writer_main, &wr[i]);
	}
	for (int i = 0; i < WRITERS; i++) {
		void *rc;

		pthread_join(tw[i], &rc);
		ck_assert_msg(rc == NULL, "writer %d: %s", i, (char *)rc);
	}
	for (int i = 0; i < WATCHERS; i++) {
		pthread_join(ta[i], NULL);
		ck_assert_msg(!wa[i].fail, "watcher %d: %s", i, wa[i].fail);
		for (size_t rv = 1; rv <= TOTAL; rv++)
			ck_assert_msg(wa[i].seen[rv] == 1,
				      "watcher %d saw rv %zu %d times", i, rv,
				      wa[i].seen[rv]);
		free(wa[i].seen);
	}
	ck_assert_uint_eq(store_rv(s), TOTAL);
	objs = store_count(s, PODS) + store_count(s, JOBS);
	ck_assert(file_exists("snapshot")); /* compactions did run */
	store_free(s);
	unsetenv("CUEUE_STORE_COMPACT_BYTES");
	s = open_dir(4);
	ck_assert_uint_eq(store_rv(s), TOTAL);
	ck_assert_uint_eq(store_count(s, PODS) + store_count(s, JOBS), objs);
	store_free(s);
}
END_TEST

Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("crud");

	tcase_add_test(tc, crud_codes);
	tcase_add_test(tc, crud_rv_monotonic);
	tcase_add_test(tc, crud_noop_update);
	tcase_add_test(tc, crud_shared_metadata);
	tcase_add_test(tc, crud_bad_keys);
	suite_add_tcase(s, tc);

	tc = tcase_create("list");
	tcase_add_test(tc, list_pages);
	tcase_add_test(tc, list_cluster_scoped);
	tcase_add_test(tc, list_many);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("watch");
	tcase_add_test(tc, watch_order);
	tcase_add_test(tc, watch_timeout);
	tcase_add_test(tc, watch_blocks_until_write);
	tcase_add_test(tc, watch_wake_all);
	tcase_add_test(tc, watch_gone);
	tcase_add_test(tc, hist_isolation);
	tcase_add_test(tc, hist_window_and_cap);
	tcase_add_test(tc, hist_count_only);
	tcase_add_test(tc, hist_shares_versions);
	tcase_add_test(tc, hist_memo_trim);
	suite_add_tcase(s, tc);

	tc = tcase_create("persistence");
	tcase_add_unchecked_fixture(tc, root_setup, root_teardown);
	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, persist_reopen);
	tcase_add_test(tc, persist_dir_created_and_locked);
	tcase_add_test(tc, persist_torn_tail);
	tcase_add_test(tc, persist_corrupt_middle);
	tcase_add_test(tc, persist_kill9);
	tcase_add_test(tc, persist_compaction);
	tcase_add_test(tc, persist_crash_leftovers);
	tcase_add_test(tc, persist_fsync_mode);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_unchecked_fixture(tc, root_setup, root_teardown);
	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, threads_writers_watchers);
	tcase_set_timeout(tc, 300);
	suite_add_tcase(s, tc);
	return s;
}
