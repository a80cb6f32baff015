/*
 * Tests of flavors/sched's memory over a long run (issue 15 §3): the
 * record of a removed workload is freed and its id reused, LocalQueue
 * and namespace records go once nothing refers to them, and a record on
 * a reused id (or a workload recreated under the same name) never
 * inherits its predecessor's state: eviction decision already sent,
 * pending report, backoff, equivalence class, namespace selector cache.
 * Record counts come from sched_stats; sched_check runs after every step.
 *
 * The fixture keeps the current struct workload of each name and frees
 * the one it replaces right after the _set (or _remove) call returns, as
 * the controller does: sched must not touch a replaced object.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "flavors/sched.h"
#include "model/objects.h"
#include "model/selector.h"
#include "suites.h"
#include "test/support/support.h"

#define T0 INT64_C(1767225600000)
#define SEC INT64_C(1000)

#define CHECK() \
	ck_assert_msg(sched_check(F.s), "sched_check failed at line %d", \
		      __LINE__)

/* ---- fixture ---- */

struct live {
	struct workload *w; /* the object sched borrows now */
	char *cq, *lq;      /* owned; as last set (NULL: none) */
};

static struct {
	struct sched *s;
	struct resource_flavor *rf;
	struct cluster_queue *cq[4];
	size_t ncq;
	struct live *v;
	size_t n, cap;
	struct sched_decisions out;
	int64_t now;
} F;

static void fx_begin(void)
{
	memset(&F, 0, sizeof(F));
	F.s = sched_new(NULL);
	F.now = T0;
	F.rf = xcalloc(1, sizeof(*F.rf));
	F.rf->meta.name = xstrdup("f");
	F.rf->meta.generation = 1;
	sched_flavor_set(F.s, F.rf);
	CHECK();
}

static void live_drop(size_t i)
{
	workload_release(F.v[i].w);
	free(F.v[i].w);
	free(F.v[i].cq);
	free(F.v[i].lq);
	F.v[i] = F.v[--F.n];
}

static void fx_end(void)
{
	sched_decisions_release(&F.out);
	sched_free(F.s);
	while (F.n)
		live_drop(F.n - 1);
	free(F.v);
	for (size_t i = 0; i < F.ncq; i++) {
		cluster_queue_release(F.cq[i]);
		free(F.cq[i]);
	}
	resource_flavor_release(F.rf);
	free(F.rf);
}

/* A ClusterQueue covering cpu on flavor f with nominal cpu_m millicores. */
static struct cluster_queue *add_cq(const char *name, int64_t cpu_m)
{
	struct cluster_queue *cq = xcalloc(1, sizeof(*cq));
	struct resource_group *g;

	cq->meta.name = xstrdup(name);
	cq->meta.generation = 1;
	cq->strategy = QS_BEST_EFFORT_FIFO;
	cq->has_ns_selector = true;
	label_selector_init(&cq->ns_selector);
	cq->when_can_borrow = FUNG_MAY_STOP_SEARCH;
	cq->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
	cq->groups = xcalloc(1, sizeof(*cq->groups));
	cq->ngroups = 1;
	g = &cq->groups[0];
	g->covered = xcalloc(1, sizeof(char *));
	g->covered[0] = xstrdup("cpu");
	g->ncovered = 1;
	g->flavors = xcalloc(1, sizeof(*g->flavors));
	g->nflavors = 1;
	g->flavors[0].name = xstrdup("f");
	g->flavors[0].res = xcalloc(1, sizeof(*g->flavors[0].res));
	g->flavors[0].nres = 1;
	g->flavors[0].res[0].name = xstrdup("cpu");
	g->flavors[0].res[0].nominal = cpu_m;
	F.cq[F.ncq++] = cq;
	sched_cq_set(F.s, cq, NULL);
	CHECK();
	return cq;
}

static struct live *live_find(const char *name)
{
	for (size_t i = 0; i < F.n; i++)
		if (!strcmp(F.v[i].w->meta.name, name))
			return &F.v[i];
	return NULL;
}

/* Hands w (taken) to sched for ClusterQueue cq and LocalQueue
 * "<namespace>/lq", then frees the object it replaced. */
static void put(struct workload *w, const char *cq)
{
	struct live *l = live_find(w->meta.name);
	struct workload *old = NULL;
	char *lq = xasprintf("%s/lq", w->meta.namespace);

	if (!l) {
		XGROW(F.v, F.cap, F.n + 1);
		l = &F.v[F.n++];
		memset(l, 0, sizeof(*l));
	}
	old = l->w;
	sched_wl_set(F.s, w, cq, lq);
	CHECK();
	l->w = w;
	{
		char *c = xstrdup_or_null(cq); /* cq may be l->cq */

		free(l->cq);
		l->cq = c;
	}
	free(l->lq);
	l->lq = lq;
	if (old) {
		workload_release(old);
		free(old);
	}
}

static void put_new(const char *ns, const char *name, int64_t cpu_m,
		    const char *cq)
{
	put(t_workload(ns, name, 0, F.now, 1, cpu_m), cq);
}

/* A new copy of name's current object (to change and put). */
static struct workload *copy_of(const char *name)
{
	struct live *l = live_find(name);
	struct workload *w = xcalloc(1, sizeof(*w));

	ck_assert_msg(l, "%s unknown", name);
	workload_copy(w, l->w);
	return w;
}

static void put_copy(struct workload *w)
{
	put(w, live_find(w->meta.name)->cq);
}

static void remove_wl(const char *name)
{
	struct live *l = live_find(name);

	ck_assert_msg(l, "%s unknown", name);
	sched_wl_remove(F.s, l->w->meta.namespace, name);
	CHECK();
	live_drop((size_t)(l - F.v));
}

/* One sched_cycle; F.out holds its decisions. */
static size_t cycle(void)
{
	size_t n;

	sched_decisions_clear(&F.out);
	n = sched_cycle(F.s, F.now, &F.out);
	F.now += SEC;
	CHECK();
	return n;
}

static const struct sched_decision *dec_of(const char *name)
{
	for (size_t i = 0; i < F.out.n; i++)
		if (!strcmp(F.out.v[i].wl->meta.name, name))
			return &F.out.v[i];
	return NULL;
}

static void expect_dec_at(int line, const char *name,
			  enum sched_dec_kind kind, const char *reason)
{
	const struct sched_decision *d = dec_of(name);

	ck_assert_msg(d, "line %d: no decision for %s", line, name);
	ck_assert_msg(d->kind == kind, "line %d: %s: kind %d, expected %d",
		      line, name, (int)d->kind, (int)kind);
	if (reason)
		ck_assert_msg(d->reason && !strcmp(d->reason, reason),
			      "line %d: %s: reason %s, expected %s", line,
			      name, d->reason ? d->reason : "(null)", reason);
}
#define expect_dec(name, kind, reason) \
	expect_dec_at(__LINE__, name, kind, reason)

/* The admit decision d written back: admission, QuotaReserved and
 * Admitted, as the controller confirms it. */
static void confirm(const struct sched_decision *d)
{
	struct workload *w = copy_of(d->wl->meta.name);

	sched_decision_admission(F.s, d, &w->admission);
	w->has_admission = true;
	conditions_set(&w->conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       "Quota reserved", 1, F.now);
	conditions_set(&w->conds, "Admitted", COND_TRUE, "Admitted",
		       "The workload is admitted", 1, F.now);
	put_copy(w);
}

/* Admits name (pending alone in a queue with room) and confirms it. */
static void admit(const char *name)
{
	cycle();
	expect_dec(name, DEC_ADMIT, NULL);
	confirm(dec_of(name));
	ck_assert(sched_wl_holds_quota(F.s, live_find(name)->w->meta.namespace,
				       name));
}

static void finish(const char *name)
{
	struct workload *w = copy_of(name);

	conditions_set(&w->conds, "Finished", COND_TRUE, "Succeeded",
		       "Job finished successfully", 1, F.now);
	put_copy(w);
}

static struct sched_stats stats(void)
{
	struct sched_stats st;

	sched_stats(F.s, &st);
	return st;
}

static void ignore_name(void *ud, const char *name)
{
	(void)ud;
	(void)name;
}

/* ---- records are freed, ids reused ---- */

struct churn {
	char *run[16]; /* running, oldest first (owned names) */
	size_t nrun, made, pending, admitted, done;
};

/* A cycle; its admissions are confirmed and join the running ones. */
static void churn_cycle(struct churn *c)
{
	cycle();
	for (size_t i = 0; i < F.out.n; i++) {
		if (F.out.v[i].kind != DEC_ADMIT)
			continue;
		ck_assert_uint_lt(c->nrun, 16);
		c->run[c->nrun++] = xstrdup(F.out.v[i].wl->meta.name);
		confirm(&F.out.v[i]);
		c->pending--;
		c->admitted++;
	}
}

/*
 * Thousands of workloads through one ClusterQueue (4 running, up to 6
 * pending): created, admitted, confirmed, finished, removed. Every other
 * finished workload is removed before the next cycle (its record is
 * still in the check list, so the cycle frees it), the others after one.
 * Records and ids stay at what exists at once.
 */
START_TEST(churn_bounded)
{
	enum { TOTAL = 3000, PENDING = 6, RUNNING = 4 };
	struct churn c = { .nrun = 0 };
	size_t max_ids = 0;

	fx_begin();
	add_cq("q", RUNNING * 1000);
	while (c.done < TOTAL) {
		struct sched_stats st;

		while (c.pending < PENDING && c.made < TOTAL) {
			char name[32];

			snprintf(name, sizeof(name), "job-%zu", c.made++);
			put_new("ns", name, 1000, "q");
			c.pending++;
		}
		churn_cycle(&c);
		ck_assert_uint_gt(c.nrun, 0);
		/* The two oldest running ones finish and are removed. */
		for (int k = 0; k < 2 && c.nrun; k++) {
			finish(c.run[0]);
			if (c.done % 2)
				churn_cycle(&c);
			remove_wl(c.run[0]);
			free(c.run[0]);
			memmove(c.run, c.run + 1, --c.nrun * sizeof(*c.run));
			c.done++;
		}
		st = stats();
		ck_assert_uint_le(st.workloads, PENDING + RUNNING);
		ck_assert_uint_le(st.wl_records, PENDING + RUNNING + 2);
		ck_assert_uint_le(st.wl_ids, PENDING + RUNNING + 2);
		ck_assert_uint_le(st.local_queues, 1);
		ck_assert_uint_le(st.namespaces, 1);
		if (st.wl_ids > max_ids)
			max_ids = st.wl_ids;
	}
	ck_assert_uint_eq(c.admitted, TOTAL);
	ck_assert_uint_eq(c.nrun, 0);
	cycle();
	sched_take_dirty(F.s, ignore_name, ignore_name, NULL);
	CHECK();
	{
		struct sched_stats st = stats();

		ck_assert_uint_eq(st.workloads, 0);
		ck_assert_uint_eq(st.wl_records, 0);
		ck_assert_uint_eq(st.wl_ids, max_ids);
		/* The LocalQueue's last status write was taken: gone. */
		ck_assert_uint_eq(st.local_queues, 0);
		ck_assert_uint_eq(st.namespaces, 0);
		ck_assert_uint_eq(st.cluster_queues, 1);
	}
	fx_end();
}
END_TEST

/* A workload removed while flagged for the eviction check stays as a
 * dead record until the next cycle, which decides nothing about it. */
START_TEST(removed_while_flagged)
{
	struct sched_stats st;
	struct workload *w;

	fx_begin();
	add_cq("q", 4000);
	put_new("ns", "a", 1000, "q");
	admit("a");
	cycle();
	/* Deactivated (an eviction would be due), then deleted at once. */
	w = copy_of("a");
	w->active = false;
	put_copy(w);
	remove_wl("a");
	st = stats();
	ck_assert_uint_eq(st.workloads, 0);
	ck_assert_uint_eq(st.wl_records, 1);
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "a"));
	cycle();
	ck_assert_uint_eq(F.out.n, 0);
	st = stats();
	ck_assert_uint_eq(st.wl_records, 0);
	ck_assert_uint_eq(st.wl_ids, 1);
	/* The id is free: the next workload takes it. */
	put_new("ns", "b", 1000, "q");
	admit("b");
	ck_assert_uint_eq(stats().wl_ids, 1);
	fx_end();
}
END_TEST

/* ---- nothing is inherited ---- */

/* An object that holds quota in q and is inactive: its eviction is due. */
static struct workload *inactive_holder(const char *like, const char *name)
{
	struct workload *w = copy_of(like);

	free(w->meta.name);
	w->meta.name = xstrdup(name);
	free(w->meta.uid);
	w->meta.uid = xasprintf("uid-%s", name);
	w->active = false;
	return w;
}

/*
 * The eviction decision is sent once per workload version. A workload
 * deleted after its eviction and created again with the very same
 * status (same name, or another name on the freed id) is a new workload:
 * it gets its own DEC_EVICT.
 */
START_TEST(recreated_gets_evicted)
{
	struct workload *a, *again, *b;

	fx_begin();
	add_cq("q", 4000);
	put_new("ns", "a", 1000, "q");
	admit("a");
	a = copy_of("a");
	a->active = false;
	again = xcalloc(1, sizeof(*again));
	workload_copy(again, a);
	put_copy(a);
	cycle();
	expect_dec("a", DEC_EVICT, "Deactivated");
	cycle();
	ck_assert_ptr_null(dec_of("a"));
	b = inactive_holder("a", "b");
	remove_wl("a");
	ck_assert_uint_eq(stats().wl_records, 0);

	/* Same name, same status. */
	put(again, "q");
	ck_assert_uint_eq(stats().wl_ids, 1);
	cycle();
	expect_dec("a", DEC_EVICT, "Deactivated");
	remove_wl("a");

	/* Another name on the same id. */
	put(b, "q");
	ck_assert_uint_eq(stats().wl_ids, 1);
	cycle();
	expect_dec("b", DEC_EVICT, "Deactivated");
	fx_end();
}
END_TEST

/* A pending workload on a reused id is reported, though its predecessor
 * got the very same verdict. */
START_TEST(reused_id_reports_pending)
{
	const struct sched_decision *d;
	char *msg;

	fx_begin();
	add_cq("q", 1000);
	put_new("ns", "holder", 1000, "q");
	admit("holder");
	put_new("ns", "w1", 1000, "q");
	cycle();
	expect_dec("w1", DEC_PENDING, "Pending");
	msg = xstrdup(dec_of("w1")->message);
	remove_wl("w1");
	put_new("ns", "w2", 1000, "q");
	ck_assert_uint_eq(stats().wl_ids, 2);
	cycle();
	expect_dec("w2", DEC_PENDING, "Pending");
	d = dec_of("w2");
	ck_assert_str_eq(d->message, msg);
	free(msg);
	fx_end();
}
END_TEST

/* A workload on the id of one that waited out a backoff has none. */
START_TEST(reused_id_has_no_backoff)
{
	struct workload *w;

	fx_begin();
	add_cq("q", 4000);
	w = t_workload("ns", "w1", 0, F.now, 1, 1000);
	w->requeue_at_ms = F.now + 60 * SEC;
	put(w, "q");
	cycle();
	ck_assert_ptr_null(dec_of("w1"));
	ck_assert_int_eq(sched_next_wakeup(F.s), T0 + 60 * SEC);
	remove_wl("w1");
	ck_assert_int_eq(sched_next_wakeup(F.s), 0);
	put_new("ns", "w2", 1000, "q");
	ck_assert_uint_eq(stats().wl_ids, 1);
	cycle();
	expect_dec("w2", DEC_ADMIT, NULL);
	ck_assert_int_eq(sched_next_wakeup(F.s), 0);
	fx_end();
}
END_TEST

/*
 * Equivalent workloads parked as a class, all removed; new ones of the
 * same shape on their ids are a new class: tried (and reported) on their
 * own, and admitted once quota frees.
 */
START_TEST(reused_id_not_in_class)
{
	fx_begin();
	add_cq("q", 1000);
	put_new("ns", "holder", 1000, "q");
	admit("holder");
	put_new("ns", "w1", 1000, "q");
	put_new("ns", "w2", 1000, "q");
	cycle();
	expect_dec("w1", DEC_PENDING, "Pending");
	expect_dec("w2", DEC_PENDING, "Pending");
	remove_wl("w1");
	remove_wl("w2");
	ck_assert_uint_eq(stats().wl_records, 1);
	F.now += SEC;
	put_new("ns", "w3", 1000, "q");
	F.now += SEC;
	put_new("ns", "w4", 1000, "q");
	ck_assert_uint_eq(stats().wl_ids, 3);
	cycle();
	expect_dec("w3", DEC_PENDING, "Pending");
	expect_dec("w4", DEC_PENDING, "Pending");
	finish("holder");
	cycle();
	expect_dec("w3", DEC_ADMIT, NULL);
	ck_assert(!dec_of("w4") || dec_of("w4")->kind == DEC_PENDING);
	confirm(dec_of("w3"));
	remove_wl("holder");
	remove_wl("w3");
	cycle();
	expect_dec("w4", DEC_ADMIT, NULL);
	fx_end();
}
END_TEST

/* ---- LocalQueues and namespaces ---- */

struct seen {
	char names[8][32];
	size_t n;
};

static void seen_lq(void *ud, const char *name)
{
	struct seen *s = ud;

	if (s->n < 8)
		snprintf(s->names[s->n++], sizeof(s->names[0]), "%s", name);
}

static bool seen_has(const struct seen *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return true;
	return false;
}

/*
 * A namespace and LocalQueue per run (a CI pipeline's): each gets one
 * workload, which runs and is deleted, then the namespace and the
 * LocalQueue are deleted too. The LocalQueue's record lasts until its
 * final status write (its counts back to zero) was taken; the
 * namespace's until it has neither workloads nor labels.
 */
START_TEST(lq_ns_freed)
{
	fx_begin();
	add_cq("q", 4000);
	for (int k = 0; k < 40; k++) {
		char ns[16], name[16], lq[24];
		struct smap labels;
		struct seen seen = { .n = 0 };
		struct sched_lq_status lst;
		struct sched_stats st;

		snprintf(ns, sizeof(ns), "ns-%d", k);
		snprintf(name, sizeof(name), "w-%d", k);
		snprintf(lq, sizeof(lq), "%s/lq", ns);
		smap_init(&labels);
		smap_set(&labels, "run", ns);
		sched_namespace_set(F.s, ns, &labels);
		smap_release(&labels);
		CHECK();
		put_new(ns, name, 1000, "q");
		admit(name);
		finish(name);
		remove_wl(name);
		cycle();
		st = stats();
		ck_assert_uint_eq(st.local_queues, 1); /* a write is owed */
		ck_assert_uint_eq(st.namespaces, 1);   /* it has labels */
		sched_take_dirty(F.s, NULL, seen_lq, &seen);
		CHECK();
		ck_assert(seen_has(&seen, lq));
		ck_assert_uint_eq(stats().local_queues, 0);
		sched_lq_status(F.s, lq, &lst);
		ck_assert_int_eq(lst.pending + lst.reserving + lst.admitted, 0);
		sched_lq_set(F.s, lq, STOP_NONE); /* deleted: nothing made */
		sched_namespace_remove(F.s, ns);
		CHECK();
		st = stats();
		ck_assert_uint_eq(st.local_queues, 0);
		ck_assert_uint_eq(st.namespaces, 0);
		ck_assert_uint_le(st.lq_ids, 1);
		ck_assert_uint_le(st.ns_ids, 1);
	}
	fx_end();
}
END_TEST

/* A LocalQueue's stopPolicy is kept with no workload in it: one that
 * arrives holding quota is evicted. */
START_TEST(lq_stop_kept)
{
	struct workload *w;

	fx_begin();
	add_cq("q", 4000);
	sched_lq_set(F.s, "other/lq", STOP_NONE);
	ck_assert_uint_eq(stats().local_queues, 0);
	sched_lq_set(F.s, "ns/lq", STOP_HOLD_AND_DRAIN);
	sched_take_dirty(F.s, ignore_name, ignore_name, NULL);
	ck_assert_uint_eq(stats().local_queues, 1);
	put_new("tmp", "a", 1000, "q");
	admit("a");
	/* The same workload as seen in namespace ns, LocalQueue ns/lq. */
	w = copy_of("a");
	free(w->meta.namespace);
	w->meta.namespace = xstrdup("ns");
	remove_wl("a");
	put(w, "q");
	cycle();
	expect_dec("a", DEC_EVICT, "LocalQueueStopped");
	sched_lq_set(F.s, "ns/lq", STOP_NONE);
	remove_wl("a");
	sched_take_dirty(F.s, ignore_name, ignore_name, NULL);
	CHECK();
	ck_assert_uint_eq(stats().local_queues, 0);
	fx_end();
}
END_TEST

/*
 * A namespace's labels are kept with no workload in it; a namespace on
 * a freed namespace id starts without labels (and the workload on the
 * freed workload id without its predecessor's selector verdict).
 */
START_TEST(ns_labels_kept_not_inherited)
{
	struct cluster_queue *cq;
	const char *team_a[1] = { "a" };
	struct smap labels;

	fx_begin();
	cq = add_cq("q", 4000);
	label_selector_add(&cq->ns_selector, "team", SEL_IN, team_a, 1);
	sched_cq_set(F.s, cq, NULL);
	smap_init(&labels);
	smap_set(&labels, "team", "a");
	sched_namespace_set(F.s, "a", &labels);
	smap_release(&labels);
	ck_assert_uint_eq(stats().namespaces, 1);
	put_new("a", "w1", 1000, "q");
	admit("w1");
	finish("w1");
	remove_wl("w1");
	cycle(); /* frees w1's record: its finish was still to check */
	sched_namespace_remove(F.s, "a");
	CHECK();
	ck_assert_uint_eq(stats().namespaces, 0);
	put_new("b", "w2", 1000, "q");
	ck_assert_uint_eq(stats().ns_ids, 1);
	ck_assert_uint_eq(stats().wl_ids, 1);
	cycle();
	expect_dec("w2", DEC_PENDING, "Pending");
	ck_assert_str_eq(dec_of("w2")->message,
			 "Workload namespace doesn't match ClusterQueue "
			 "selector");
	fx_end();
}
END_TEST

Suite *sched_mem_suite(void)
{
	Suite *s = suite_create("sched_mem");
	TCase *records = tcase_create("records-reused");
	TCase *inherit = tcase_create("nothing-inherited");
	TCase *queues = tcase_create("localqueues-namespaces");

	tcase_set_timeout(records, 60);
	tcase_add_test(records, churn_bounded);
	tcase_add_test(records, removed_while_flagged);
	suite_add_tcase(s, records);
	tcase_add_test(inherit, recreated_gets_evicted);
	tcase_add_test(inherit, reused_id_reports_pending);
	tcase_add_test(inherit, reused_id_has_no_backoff);
	tcase_add_test(inherit, reused_id_not_in_class);
	suite_add_tcase(s, inherit);
	tcase_add_test(queues, lq_ns_freed);
	tcase_add_test(queues, lq_stop_kept);
	tcase_add_test(queues, ns_labels_kept_not_inherited);
	suite_add_tcase(s, queues);
	return s;
}
