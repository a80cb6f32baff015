/*
 * Suite "tree": the cohort forest and its quota arithmetic
 * (flavors/tree.h, kueue-scheduler.md §3). Plain structs and numbers;
 * tree_check after every change. The randomized case compares every
 * query with a naive recursive re-derivation of §3 (the "oracle").
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flavors/tree.h"
#include "suites.h"
#include "test/support/support.h"

#define UNL TREE_UNLIMITED
#define NOPE (-1)

/* T_ASSERT_MSG (support.h): the randomized case checks a million times */
#define CHECK(t) \
	T_ASSERT_MSG(tree_check(t), "tree_check failed at line %d", __LINE__)

static int mk_cohort(struct tree *t, const char *name, int parent)
{
	int id = tree_node(t, NODE_COHORT, name);

	tree_set_parent(t, id, parent);
	CHECK(t);
	return id;
}

static int mk_cq(struct tree *t, const char *name, int cohort)
{
	int id = tree_node(t, NODE_CQ, name);

	tree_set_parent(t, id, cohort);
	CHECK(t);
	return id;
}

static void quota(struct tree *t, int node, int fr, int64_t nominal,
		  int64_t borrowing, int64_t lending)
{
	tree_set_quota(t, node, fr, nominal, borrowing, lending);
	CHECK(t);
	ck_assert_int_eq(tree_nominal(t, node, fr), nominal);
	ck_assert_int_eq(tree_borrowing_limit(t, node, fr), borrowing);
	ck_assert_int_eq(tree_lending_limit(t, node, fr), lending);
}

static void add(struct tree *t, int cq, int fr, int64_t v)
{
	tree_add_usage(t, cq, fr, v);
	CHECK(t);
}

static void rem(struct tree *t, int cq, int fr, int64_t v)
{
	tree_remove_usage(t, cq, fr, v);
	CHECK(t);
}

static bool fits1(const struct tree *t, int cq, int fr, int64_t v)
{
	struct fr_val u = { fr, v };

	return tree_fits(t, cq, &u, 1);
}

/* Every usage and subtree value of the given nodes, for exact compares. */
struct snap {
	size_t n;
	int64_t v[512];
};

static void take(const struct tree *t, const int *ids, size_t n,
		 struct snap *s)
{
	s->n = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t fr = 0; fr < tree_nfr(t); fr++) {
			ck_assert_uint_lt(s->n + 2,
					  sizeof(s->v) / sizeof(s->v[0]));
			s->v[s->n++] = tree_usage(t, ids[i], (int)fr);
			s->v[s->n++] = tree_subtree_quota(t, ids[i], (int)fr);
		}
	}
}

static void same(const struct snap *a, const struct snap *b)
{
	ck_assert_uint_eq(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		ck_assert_msg(a->v[i] == b->v[i],
			      "value %zu: %" PRId64 " != %" PRId64, i,
			      a->v[i], b->v[i]);
}

/* ------------------------------------------------------------------ */

START_TEST(interning)
{
	struct tree *t = tree_new();
	char f[16], r[16];
	int a, b, n;

	ck_assert_uint_eq(tree_nfr(t), 0);
	ck_assert_int_eq(tree_fr_find(t, "default", "cpu"), -1);
	a = tree_fr(t, "default", "cpu");
	b = tree_fr(t, "default", "memory");
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(tree_fr(t, "default", "cpu"), 0);
	ck_assert_int_eq(tree_fr_find(t, "default", "memory"), 1);
	/* The separator is not ambiguous: "a"+"bc" is not "ab"+"c". */
	ck_assert_int_ne(tree_fr(t, "a", "bc"), tree_fr(t, "ab", "c"));
	ck_assert_str_eq(tree_fr_flavor(t, b), "default");
	ck_assert_str_eq(tree_fr_resource(t, b), "memory");
	/* Growing past the cell stride keeps quotas and usage. */
	n = tree_node(t, NODE_CQ, "q");
	quota(t, n, a, 7, UNL, UNL);
	add(t, n, a, 3);
	for (int i = 0; i < 40; i++) {
		snprintf(f, sizeof(f), "f%d", i);
		snprintf(r, sizeof(r), "r%d", i % 3);
		ck_assert_int_eq(tree_fr(t, f, r), 4 + i);
		CHECK(t);
	}
	ck_assert_uint_eq(tree_nfr(t), 44);
	ck_assert_int_eq(tree_nominal(t, n, a), 7);
	ck_assert_int_eq(tree_usage(t, n, a), 3);
	ck_assert_int_eq(tree_nominal(t, n, 43), 0);
	ck_assert_int_eq(tree_borrowing_limit(t, n, 43), UNL);
	ck_assert_str_eq(tree_fr_flavor(t, 43), "f39");
	ck_assert_str_eq(tree_fr_resource(t, 43), "r0");
	tree_free(t);
	tree_free(NULL);
}
END_TEST

START_TEST(nodes_and_names)
{
	struct tree *t = tree_new();
	int cq = tree_node(t, NODE_CQ, "eng");
	int co = tree_node(t, NODE_COHORT, "eng");
	int kids[4];

	/* Separate namespaces for CQs and cohorts, as in Kueue. */
	ck_assert_int_ne(cq, co);
	ck_assert_int_eq(tree_node(t, NODE_CQ, "eng"), cq);
	ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "eng"), co);
	ck_assert_int_eq(tree_node_find(t, NODE_CQ, "nope"), -1);
	ck_assert_int_eq(tree_node_kind(t, cq), NODE_CQ);
	ck_assert_int_eq(tree_node_kind(t, co), NODE_COHORT);
	ck_assert_str_eq(tree_node_name(t, co), "eng");
	ck_assert_int_eq(tree_parent(t, cq), -1);
	ck_assert_int_eq(tree_root(t, cq), cq);
	tree_set_parent(t, cq, co);
	CHECK(t);
	ck_assert_int_eq(tree_parent(t, cq), co);
	ck_assert_int_eq(tree_root(t, cq), co);
	ck_assert_uint_eq(tree_children(t, co, kids, 4), 1);
	ck_assert_int_eq(kids[0], cq);
	ck_assert_uint_eq(tree_children(t, co, NULL, 0), 1);
	ck_assert_uint_eq(tree_children(t, cq, kids, 4), 0);
	ck_assert_int_eq(tree_height(t, cq), 0);
	ck_assert_int_eq(tree_height(t, co), 1);
	tree_free(t);
}
END_TEST

/* Hundreds of nodes: index growth, deletion, slot reuse, name arena
 * compaction. */
START_TEST(many_nodes)
{
	struct tree *t = tree_new();
	int cpu = tree_fr(t, "default", "cpu");
	int co[10];
	char name[32];
	const char *cqfmt = "cq-%d-with-a-long-name";

	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "cohort-%d", i);
		co[i] = mk_cohort(t, name, i ? co[0] : NOPE);
	}
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 300; i++) {
			int q;

			snprintf(name, sizeof(name), cqfmt, i);
			q = tree_node(t, NODE_CQ, name);
			tree_set_parent(t, q, co[i % 10]);
			tree_set_quota(t, q, cpu, 10, UNL, 5);
			tree_add_usage(t, q, cpu, (int64_t)(i % 13));
		}
		CHECK(t);
		ck_assert_int_eq(tree_subtree_quota(t, co[0], cpu), 300 * 5);
		for (int i = 0; i < 300; i += 1 + (round == 2)) {
			snprintf(name, sizeof(name), cqfmt, i);
			tree_node_remove(t, tree_node_find(t, NODE_CQ, name));
		}
		CHECK(t);
		for (int i = 0; i < 300; i++) {
			snprintf(name, sizeof(name), cqfmt, i);
			ck_assert_int_eq(tree_node_find(t, NODE_CQ, name) >= 0,
					 round == 2 && (i % 2));
		}
	}
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "cohort-%d", i);
		ck_assert_int_eq(tree_node_find(t, NODE_COHORT, name), co[i]);
		ck_assert_str_eq(tree_node_name(t, co[i]), name);
	}
	tree_free(t);
}
END_TEST

/* A CQ without a cohort: available = nominal - usage, never borrowing. */
START_TEST(no_cohort)
{
	struct tree *t = tree_new();
	int cpu = tree_fr(t, "default", "cpu");
	int a = tree_node(t, NODE_CQ, "a");
	bool mr = true;

	quota(t, a, cpu, 10000, UNL, UNL);
	ck_assert_int_eq(tree_available(t, a, cpu), 10000);
	ck_assert_int_eq(tree_potential_available(t, a, cpu), 10000);
	ck_assert_int_eq(tree_subtree_quota(t, a, cpu), 10000);
	add(t, a, cpu, 4000);
	ck_assert_int_eq(tree_available(t, a, cpu), 6000);
	ck_assert_int_eq(tree_borrowed(t, a, cpu), 0);
	ck_assert_int_eq(tree_borrow_level(t, a, cpu, 9000, &mr), 0);
	ck_assert(!mr);
	ck_assert(fits1(t, a, cpu, 6000));
	ck_assert(!fits1(t, a, cpu, 6001));
	add(t, a, cpu, 6000);
	ck_assert_int_eq(tree_available(t, a, cpu), 0);
	ck_assert(fits1(t, a, cpu, 0));
	ck_assert(!fits1(t, a, cpu, 1));
	/* Over-admission (quota lowered under running work): clamped. */
	add(t, a, cpu, 3000);
	ck_assert_int_eq(tree_available(t, a, cpu), 0);
	ck_assert_int_eq(tree_usage(t, a, cpu), 13000);
	ck_assert_int_eq(tree_borrowed(t, a, cpu), 0);
	ck_assert_int_eq(tree_potential_available(t, a, cpu), 10000);
	tree_free(t);
}
END_TEST

/*
 * Flat cohort (kueue-api.md §3.2, kueue-scheduler.md §3 "Flat-cohort
 * interpretation"): a = 10 (borrowing unlimited), b = 10 with
 * borrowingLimit 5, c = 10 with lendingLimit 4. The cohort holds
 * 10 + 10 + 4 = 24; c keeps 6 for itself.
 */
static const struct flat_step {
	const char *what;
	int cq;          /* 0 a, 1 b, 2 c; -1: initial state */
	int64_t v;       /* > 0 add, < 0 remove */
	int64_t avail[3];
	int64_t cohort_usage;
	int64_t borrowed[3];
} flat_steps[] = {
	{ "initial", -1, 0, { 24, 15, 30 }, 0, { 0, 0, 0 } },
	{ "a borrows 10", 0, 20, { 4, 4, 10 }, 20, { 10, 0, 0 } },
	{ "c uses its own 6 only", 2, 6, { 4, 4, 4 }, 20, { 10, 0, 0 } },
	{ "c takes its lent 4 back", 2, 4, { 0, 0, 0 }, 24, { 10, 0, 0 } },
	{ "a releases 15", 0, -15, { 15, 15, 15 }, 9, { 0, 0, 0 } },
	{ "b borrows 4 of 5", 1, 14, { 1, 1, 1 }, 23, { 0, 4, 0 } },
	{ "c releases all", 2, -10, { 5, 1, 11 }, 19, { 0, 4, 0 } },
	{ "b at its limit", 1, 1, { 4, 0, 10 }, 20, { 0, 5, 0 } },
};

START_TEST(flat_cohort)
{
	struct tree *t = tree_new();
	int cpu = tree_fr(t, "default", "cpu");
	int co = mk_cohort(t, "eng", NOPE);
	int q[3];

	q[0] = mk_cq(t, "a", co);
	q[1] = mk_cq(t, "b", co);
	q[2] = mk_cq(t, "c", co);
	quota(t, q[0], cpu, 10, UNL, UNL);
	quota(t, q[1], cpu, 10, 5, UNL);
	quota(t, q[2], cpu, 10, UNL, 4);
	ck_assert_int_eq(tree_subtree_quota(t, co, cpu), 24);
	for (size_t s = 0; s < sizeof(flat_steps) / sizeof(flat_steps[0]);
	     s++) {
		const struct flat_step *st = &flat_steps[s];

		if (st->cq >= 0 && st->v > 0)
			add(t, q[st->cq], cpu, st->v);
		else if (st->cq >= 0)
			rem(t, q[st->cq], cpu, -st->v);
		for (int i = 0; i < 3; i++) {
			ck_assert_msg(tree_available(t, q[i], cpu) ==
					      st->avail[i],
				      "%s: available(%d) = %" PRId64
				      ", want %" PRId64, st->what, i,
				      tree_available(t, q[i], cpu),
				      st->avail[i]);
			ck_assert_msg(tree_borrowed(t, q[i], cpu) ==
					      st->borrowed[i],
				      "%s: borrowed(%d)", st->what, i);
			ck_assert(fits1(t, q[i], cpu, st->avail[i]));
			ck_assert(!fits1(t, q[i], cpu, st->avail[i] + 1));
		}
		ck_assert_msg(tree_usage(t, co, cpu) == st->cohort_usage,
			      "%s: cohort usage %" PRId64, st->what,
			      tree_usage(t, co, cpu));
		/* Maximum capacity ignores usage. */
		ck_assert_int_eq(tree_potential_available(t, q[0], cpu), 24);
		ck_assert_int_eq(tree_potential_available(t, q[1], cpu), 15);
		ck_assert_int_eq(tree_potential_available(t, q[2], cpu), 30);
	}
	tree_free(t);
}
END_TEST

/*
 * Kueue's TestAddRemoveWorkloadWithLendingLimit: lend-a 10 lending 4
 * (keeps 6), lend-b 10 lending 6 (keeps 4); the cohort holds 4 + 6.
 * Workloads a1 = 1, a2 = 9, a3 = 6 in lend-a, b1 = 4 in lend-b.
 */
static const struct lend_case {
	const char *name;
	int64_t a, b;        /* CQ usages after the operations */
	int64_t cohort;      /* expected cohort usage */
} lend_cases[] = {
	{ "all admitted", 16, 4, 10 },
	{ "remove a2: still over localQuota", 7, 4, 1 },
	{ "remove a1 a2: exactly localQuota", 6, 4, 0 },
	{ "remove a2 a3: under localQuota", 1, 4, 0 },
	{ "only a1", 1, 0, 0 },
	{ "only a3", 6, 0, 0 },
	{ "only a2", 9, 0, 3 },
	{ "none", 0, 0, 0 },
};

START_TEST(lending_limit_usage)
{
	const struct lend_case *c = &lend_cases[_i];
	struct tree *t = tree_new();
	int cpu = tree_fr(t, "default", "cpu");
	int co = mk_cohort(t, "lend", NOPE);
	int a = mk_cq(t, "lend-a", co), b = mk_cq(t, "lend-b", co);

	quota(t, a, cpu, 10, UNL, 4);
	quota(t, b, cpu, 10, UNL, 6);
	ck_assert_int_eq(tree_subtree_quota(t, co, cpu), 10);
	/* Admit everything, then remove down to the case's usages, as the
	 * Kueue test does (remove, then add back). */
	add(t, a, cpu, 1);
	add(t, a, cpu, 9);
	add(t, a, cpu, 6);
	add(t, b, cpu, 4);
	ck_assert_int_eq(tree_usage(t, co, cpu), 10);
	rem(t, a, cpu, 16);
	rem(t, b, cpu, 4);
	ck_assert_int_eq(tree_usage(t, co, cpu), 0);
	add(t, a, cpu, c->a);
	add(t, b, cpu, c->b);
	ck_assert_msg(tree_usage(t, co, cpu) == c->cohort, "%s: %" PRId64,
		      c->name, tree_usage(t, co, cpu));
	/* And the other way: from all admitted, remove to the same point. */
	rem(t, a, cpu, c->a);
	rem(t, b, cpu, c->b);
	ck_assert_int_eq(tree_usage(t, co, cpu), 0);
	add(t, a, cpu, 16);
	add(t, b, cpu, 4);
	rem(t, a, cpu, 16 - c->a);
	rem(t, b, cpu, 4 - c->b);
	ck_assert_int_eq(tree_usage(t, co, cpu), c->cohort);
	tree_free(t);
}
END_TEST

/*
 * Two levels of lending limits and cohort-owned quota:
 *
 *   R (Cohort object: own 5)
 *   |- M (Cohort object: own 2, lendingLimit 3, borrowingLimit 1)
 *   |  |- x (nominal 10, lendingLimit 4: keeps 6)
 *   |  `- y (nominal 0)
 *   `- z (nominal 6)
 *
 * subtree(M) = 2 + 4 + 0 = 6, M keeps 6 - 3 = 3; subtree(R) = 5 + 3 + 6.
 */
struct hier {
	struct tree *t;
	int cpu, r, m, x, y, z;
};

static void hier_build(struct hier *h)
{
	struct tree *t = tree_new();

	h->t = t;
	h->cpu = tree_fr(t, "default", "cpu");
	h->r = mk_cohort(t, "root", NOPE);
	h->m = mk_cohort(t, "mid", h->r);
	h->x = mk_cq(t, "x", h->m);
	h->y = mk_cq(t, "y", h->m);
	h->z = mk_cq(t, "z", h->r);
	quota(t, h->r, h->cpu, 5, UNL, UNL);
	quota(t, h->m, h->cpu, 2, 1, 3);
	quota(t, h->x, h->cpu, 10, UNL, 4);
	quota(t, h->y, h->cpu, 0, UNL, UNL);
	quota(t, h->z, h->cpu, 6, UNL, UNL);
}

static void expect_avail(const struct hier *h, int64_t x, int64_t y,
			 int64_t z)
{
	ck_assert_int_eq(tree_available(h->t, h->x, h->cpu), x);
	ck_assert_int_eq(tree_available(h->t, h->y, h->cpu), y);
	ck_assert_int_eq(tree_available(h->t, h->z, h->cpu), z);
}

START_TEST(hierarchical_lending)
{
	struct hier h;
	struct tree *t;

	hier_build(&h);
	t = h.t;
	ck_assert_int_eq(tree_subtree_quota(t, h.m, h.cpu), 6);
	ck_assert_int_eq(tree_subtree_quota(t, h.r, h.cpu), 14);
	ck_assert_int_eq(tree_height(t, h.m), 1);
	ck_assert_int_eq(tree_height(t, h.r), 2);
	/* y: M's pool (6) + 1 borrowed from R; x adds its own 6. */
	expect_avail(&h, 13, 7, 14);
	ck_assert_int_eq(tree_potential_available(t, h.x, h.cpu), 13);
	ck_assert_int_eq(tree_potential_available(t, h.y, h.cpu), 7);
	ck_assert_int_eq(tree_potential_available(t, h.z, h.cpu), 14);

	/* y takes M's pool and M's borrowing limit: M stores 3 in R and
	 * borrows 1, so R's usage is 4. */
	add(t, h.y, h.cpu, 7);
	ck_assert_int_eq(tree_usage(t, h.m, h.cpu), 7);
	ck_assert_int_eq(tree_usage(t, h.r, h.cpu), 4);
	ck_assert_int_eq(tree_borrowed(t, h.y, h.cpu), 7);
	expect_avail(&h, 6, 0, 10);
	/* z fills R: x keeps exactly its exclusive 6. */
	add(t, h.z, h.cpu, 10);
	ck_assert_int_eq(tree_usage(t, h.r, h.cpu), 14);
	expect_avail(&h, 6, 0, 0);
	add(t, h.x, h.cpu, 6);
	ck_assert_int_eq(tree_usage(t, h.m, h.cpu), 7);
	expect_avail(&h, 0, 0, 0);
	rem(t, h.x, h.cpu, 6);
	/* y releases: M stops borrowing, R gets back M's 4. */
	rem(t, h.y, h.cpu, 7);
	ck_assert_int_eq(tree_usage(t, h.m, h.cpu), 0);
	ck_assert_int_eq(tree_usage(t, h.r, h.cpu), 10);
	expect_avail(&h, 13, 7, 4);
	rem(t, h.z, h.cpu, 10);
	ck_assert_int_eq(tree_usage(t, h.r, h.cpu), 0);

	/* A Cohort spec update: M loses its own quota and limits. */
	tree_clear_quotas(t, h.m);
	CHECK(t);
	ck_assert_int_eq(tree_subtree_quota(t, h.m, h.cpu), 4);
	ck_assert_int_eq(tree_subtree_quota(t, h.r, h.cpu), 15);
	expect_avail(&h, 21, 15, 15);
	quota(t, h.m, h.cpu, 2, 1, 3);
	expect_avail(&h, 13, 7, 14);
	/* A lending limit above the subtree keeps nothing local. */
	quota(t, h.m, h.cpu, 2, 1, 100);
	ck_assert_int_eq(tree_subtree_quota(t, h.r, h.cpu), 17);
	expect_avail(&h, 13, 7, 17);
	tree_free(t);
}
END_TEST

static const struct level_case {
	const char *name;
	int which;        /* 0 x, 1 y, 2 z */
	int64_t val;
	int64_t pre_y;    /* usage added to y first */
	int level;
	bool may_reclaim;
} level_cases[] = {
	{ "x within nominal", 0, 8, 0, 0, true },
	{ "x borrows inside M", 0, 12, 0, 1, true },
	{ "y fits M", 1, 5, 0, 1, true },
	{ "y needs R", 1, 7, 0, 2, false },
	{ "y past every level", 1, 30, 0, 2, false },
	{ "z within nominal", 2, 6, 0, 0, true },
	{ "z borrows from R", 2, 7, 0, 2, false },
	{ "x within nominal, M busy", 0, 7, 7, 0, true },
	{ "x over nominal, M busy", 0, 11, 7, 2, false },
};

START_TEST(borrow_level_hier)
{
	const struct level_case *c = &level_cases[_i];
	struct hier h;
	int who[3];
	bool mr = !c->may_reclaim;

	hier_build(&h);
	who[0] = h.x;
	who[1] = h.y;
	who[2] = h.z;
	if (c->pre_y)
		add(h.t, h.y, h.cpu, c->pre_y);
	ck_assert_msg(tree_borrow_level(h.t, who[c->which], h.cpu, c->val,
					&mr) == c->level,
		      "%s: level %d", c->name,
		      tree_borrow_level(h.t, who[c->which], h.cpu, c->val,
					NULL));
	ck_assert_msg(mr == c->may_reclaim, "%s: may_reclaim", c->name);
	tree_free(h.t);
}
END_TEST

/* Heights 1..3 on a chain R > A > B > q, plus r directly in R. */
START_TEST(borrow_level_three_levels)
{
	struct tree *t = tree_new();
	int cpu = tree_fr(t, "default", "cpu");
	int r = mk_cohort(t, "r", NOPE), a = mk_cohort(t, "a", r);
	int b = mk_cohort(t, "b", a);
	int q = mk_cq(t, "q", b), rq = mk_cq(t, "rq", r);
	static const struct {
		int64_t val;
		int level;
		bool mr;
	} want[] = {
		{ 2, 0, true }, { 3, 1, true }, { 4, 1, true }, { 5, 2, true },
		{ 6, 2, true }, { 7, 3, false }, { 8, 3, false },
		{ 9, 3, false },
	};

	quota(t, q, cpu, 2, UNL, UNL);
	quota(t, b, cpu, 2, UNL, UNL);
	quota(t, a, cpu, 2, UNL, UNL);
	quota(t, r, cpu, 2, UNL, UNL);
	ck_assert_int_eq(tree_height(t, b), 1);
	ck_assert_int_eq(tree_height(t, a), 2);
	ck_assert_int_eq(tree_height(t, r), 3);
	ck_assert_int_eq(tree_height(t, rq), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		bool mr;

		ck_assert_int_eq(tree_borrow_level(t, q, cpu, want[i].val, &mr),
				 want[i].level);
		ck_assert_int_eq(mr, want[i].mr);
	}
	/* Usage elsewhere pushes the fitting level up. */
	add(t, rq, cpu, 2);
	ck_assert_int_eq(tree_borrow_level(t, q, cpu, 7, NULL), 3);
	ck_assert_int_eq(tree_borrow_level(t, q, cpu, 6, NULL), 2);
	/* Moving q up one level shrinks the heights. */
	tree_set_parent(t, q, a);
	CHECK(t);
	ck_assert_int_eq(tree_height(t, b), 0);
	ck_assert_int_eq(tree_height(t, a), 1);
	ck_assert_int_eq(tree_height(t, r), 2);
	ck_assert_int_eq(tree_borrow_level(t, q, cpu, 3, NULL), 1);
	tree_free(t);
}
END_TEST

/* Usage travels up and comes back exactly, at every level. */
START_TEST(propagation_roundtrip)
{
	struct hier h;
	int ids[5];
	struct snap before, after;
	static const int64_t vs[] = { 0, 1, 3, 6, 7, 10, 25 };

	hier_build(&h);
	ids[0] = h.r, ids[1] = h.m, ids[2] = h.x, ids[3] = h.y, ids[4] = h.z;
	add(h.t, h.x, h.cpu, 4);
	add(h.t, h.z, h.cpu, 8);
	for (int w = 2; w < 5; w++) {
		for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
			take(h.t, ids, 5, &before);
			add(h.t, ids[w], h.cpu, vs[i]);
			rem(h.t, ids[w], h.cpu, vs[i]);
			take(h.t, ids, 5, &after);
			same(&before, &after);
		}
	}
	tree_free(h.t);
}
END_TEST

START_TEST(remove_clamps)
{
	struct hier h;

	hier_build(&h);
	add(h.t, h.y, h.cpu, 3);
	ck_assert_int_eq(tree_usage(h.t, h.m, h.cpu), 3);
	rem(h.t, h.y, h.cpu, 10);
	ck_assert_int_eq(tree_usage(h.t, h.y, h.cpu), 0);
	ck_assert_int_eq(tree_usage(h.t, h.m, h.cpu), 0);
	ck_assert_int_eq(tree_usage(h.t, h.r, h.cpu), 0);
	rem(h.t, h.y, h.cpu, 1);
	ck_assert_int_eq(tree_usage(h.t, h.y, h.cpu), 0);
	tree_free(h.t);
}
END_TEST

/* A 2-cycle and a self-loop disable their members and everything below,
 * and clear when the link is fixed. */
START_TEST(cycles)
{
	struct tree *t = tree_new();
	int cpu = tree_fr(t, "default", "cpu");
	int a = mk_cohort(t, "a", NOPE), b = mk_cohort(t, "b", NOPE);
	int d = mk_cohort(t, "d", a);
	int q = mk_cq(t, "q", a), p = mk_cq(t, "p", d);
	bool mr = true;

	quota(t, q, cpu, 5, UNL, UNL);
	quota(t, p, cpu, 2, UNL, UNL);
	quota(t, b, cpu, 1, UNL, UNL);
	add(t, q, cpu, 3);
	tree_set_parent(t, a, b);
	CHECK(t);
	ck_assert_int_eq(tree_subtree_quota(t, b, cpu), 8);
	ck_assert_int_eq(tree_usage(t, b, cpu), 3);
	ck_assert_int_eq(tree_available(t, q, cpu), 5);

	/* b -> a closes a -> b -> a. */
	tree_set_parent(t, b, a);
	CHECK(t);
	ck_assert(tree_in_cycle(t, a));
	ck_assert(tree_in_cycle(t, b));
	ck_assert(tree_in_cycle(t, d)); /* below the cycle */
	ck_assert(tree_in_cycle(t, q));
	ck_assert(tree_in_cycle(t, p));
	ck_assert_int_eq(tree_root(t, q), -1);
	ck_assert_int_eq(tree_available(t, q, cpu), 0);
	ck_assert_int_eq(tree_available(t, p, cpu), 0);
	ck_assert_int_eq(tree_potential_available(t, q, cpu), 0);
	ck_assert(!fits1(t, q, cpu, 0));
	ck_assert_int_eq(tree_borrow_level(t, q, cpu, 10, &mr), 0);
	ck_assert(!mr);
	/* Usage is still accounted while disabled. */
	add(t, q, cpu, 1);
	ck_assert_int_eq(tree_usage(t, a, cpu), 4);
	rem(t, q, cpu, 1);
	/* Quotas may change while disabled, too. */
	quota(t, p, cpu, 4, UNL, UNL);

	/* Break it on the other link: a becomes a root again. */
	tree_set_parent(t, a, NOPE);
	CHECK(t);
	ck_assert(!tree_in_cycle(t, a) && !tree_in_cycle(t, b));
	ck_assert(!tree_in_cycle(t, q) && !tree_in_cycle(t, p));
	ck_assert_int_eq(tree_root(t, b), a);
	ck_assert_int_eq(tree_subtree_quota(t, a, cpu), 10);
	ck_assert_int_eq(tree_usage(t, a, cpu), 3);
	ck_assert_int_eq(tree_available(t, q, cpu), 7);
	ck_assert_int_eq(tree_height(t, a), 2);

	/* A self-loop. */
	tree_set_parent(t, d, d);
	CHECK(t);
	ck_assert(tree_in_cycle(t, d) && tree_in_cycle(t, p));
	ck_assert(!tree_in_cycle(t, q));
	ck_assert_int_eq(tree_available(t, p, cpu), 0);
	ck_assert_int_eq(tree_subtree_quota(t, a, cpu), 6);
	ck_assert_int_eq(tree_height(t, a), 1);
	tree_set_parent(t, d, a);
	CHECK(t);
	ck_assert(!tree_in_cycle(t, p));
	ck_assert_int_eq(tree_available(t, p, cpu), 7);

	/* Removing a self-looped cohort: its only other child keeps it. */
	{
		int e = mk_cohort(t, "e", NOPE);

		tree_set_parent(t, e, e);
		CHECK(t);
		tree_node_remove(t, e); /* its only child was itself */
		CHECK(t);
		ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "e"), -1);
		tree_set_parent(t, d, d);
		tree_node_remove(t, d); /* p remains: implicit */
		CHECK(t);
		ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "d"), d);
		ck_assert(!tree_in_cycle(t, p));
		ck_assert_int_eq(tree_available(t, p, cpu), 4);
		tree_set_parent(t, p, a);
		CHECK(t);
		ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "d"), -1);
		ck_assert_int_eq(tree_available(t, p, cpu), 7);
	}

	/* A 3-cycle, re-formed by moving one member onto another. */
	{
		int c1 = mk_cohort(t, "c1", NOPE), c2 = mk_cohort(t, "c2", c1);
		int c3 = mk_cohort(t, "c3", c2), s = mk_cq(t, "s", c3);

		quota(t, s, cpu, 3, UNL, UNL);
		add(t, s, cpu, 2);
		tree_set_parent(t, c1, c3);
		CHECK(t);
		ck_assert(tree_in_cycle(t, c1) && tree_in_cycle(t, s));
		tree_set_parent(t, c1, c2); /* now c1 <-> c2; c3 hangs below */
		CHECK(t);
		ck_assert(tree_in_cycle(t, c3) && tree_in_cycle(t, s));
		tree_set_parent(t, c2, NOPE);
		CHECK(t);
		ck_assert(!tree_in_cycle(t, s));
		ck_assert_int_eq(tree_root(t, s), c2);
		ck_assert_int_eq(tree_usage(t, c2, cpu), 2);
		ck_assert_int_eq(tree_subtree_quota(t, c2, cpu), 3);
		ck_assert_int_eq(tree_height(t, c2), 2);
	}
	tree_free(t);
}
END_TEST

START_TEST(node_removal)
{
	struct tree *t = tree_new();
	int cpu = tree_fr(t, "default", "cpu");
	int f = mk_cohort(t, "f", NOPE), e = mk_cohort(t, "e", f);
	int e1 = mk_cq(t, "e1", e), e2 = mk_cq(t, "e2", e);
	int g, kids[2];

	quota(t, e, cpu, 4, UNL, 1);
	quota(t, e1, cpu, 3, UNL, UNL);
	quota(t, e2, cpu, 2, UNL, UNL);
	add(t, e1, cpu, 2);
	add(t, e2, cpu, 5);
	/* e holds 4 + 3 + 2 = 9, keeps 8, lends 1; usage 7 stays local. */
	ck_assert_int_eq(tree_subtree_quota(t, e, cpu), 9);
	ck_assert_int_eq(tree_subtree_quota(t, f, cpu), 1);
	ck_assert_int_eq(tree_usage(t, e, cpu), 7);
	ck_assert_int_eq(tree_usage(t, f, cpu), 0);

	/* A CQ leaves with its usage. */
	tree_node_remove(t, e1);
	CHECK(t);
	ck_assert_int_eq(tree_node_find(t, NODE_CQ, "e1"), -1);
	ck_assert_int_eq(tree_usage(t, e, cpu), 5);
	ck_assert_int_eq(tree_subtree_quota(t, e, cpu), 6);

	/* The Cohort object goes: e stays, implicit, for e2. */
	tree_node_remove(t, e);
	CHECK(t);
	ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "e"), e);
	ck_assert_int_eq(tree_parent(t, e), -1);
	ck_assert_int_eq(tree_nominal(t, e, cpu), 0);
	ck_assert_int_eq(tree_subtree_quota(t, e, cpu), 2);
	ck_assert_int_eq(tree_subtree_quota(t, f, cpu), 0);
	ck_assert_uint_eq(tree_children(t, f, kids, 2), 0);
	ck_assert_int_eq(tree_available(t, e2, cpu), 0);
	/* Its last child leaves: it goes. */
	tree_set_parent(t, e2, f);
	CHECK(t);
	ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "e"), -1);
	ck_assert_int_eq(tree_usage(t, f, cpu), 5);

	/* An explicit cohort outlives its children. */
	g = mk_cohort(t, "g", NOPE);
	tree_set_parent(t, e2, g);
	CHECK(t);
	tree_set_parent(t, e2, NOPE);
	CHECK(t);
	ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "g"), g);
	/* Removing a childless cohort (with a parent) frees it. */
	tree_set_parent(t, g, f);
	quota(t, g, cpu, 3, UNL, UNL);
	ck_assert_int_eq(tree_subtree_quota(t, f, cpu), 3); /* e2 left */
	tree_node_remove(t, g);
	CHECK(t);
	ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "g"), -1);
	ck_assert_int_eq(tree_subtree_quota(t, f, cpu), 0);
	/* Slots are reused, names stay right. */
	ck_assert_int_ge(mk_cq(t, "new", f), 0);
	ck_assert_str_eq(tree_node_name(t, tree_node_find(t, NODE_CQ, "new")),
			 "new");
	tree_free(t);
}
END_TEST

/* A CQ naming a cohort with no Cohort object, and a Cohort whose
 * parentName does not exist. */
START_TEST(implicit_cohorts)
{
	struct tree *t = tree_new();
	int cpu = tree_fr(t, "default", "cpu");
	int eng = tree_node(t, NODE_COHORT, "eng");
	int a = mk_cq(t, "a", eng), b, ml, ghost;

	tree_node_remove(t, eng); /* no object: implicit */
	CHECK(t);
	b = mk_cq(t, "b", eng);
	quota(t, a, cpu, 4, UNL, UNL);
	quota(t, b, cpu, 6, 3, UNL);
	ck_assert_int_eq(tree_subtree_quota(t, eng, cpu), 10);
	ck_assert_int_eq(tree_available(t, a, cpu), 10);
	ck_assert_int_eq(tree_available(t, b, cpu), 9);
	add(t, a, cpu, 7);
	ck_assert_int_eq(tree_borrowed(t, a, cpu), 3);
	ck_assert_int_eq(tree_available(t, b, cpu), 3);
	tree_set_parent(t, a, NOPE);
	CHECK(t);
	ck_assert_int_eq(tree_borrowed(t, a, cpu), 0);
	ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "eng"), eng);
	tree_node_remove(t, b);
	CHECK(t);
	ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "eng"), -1);

	/* Cohort ml names parent "ghost", which has no object. */
	ml = tree_node(t, NODE_COHORT, "ml");
	ghost = tree_node(t, NODE_COHORT, "ghost");
	tree_set_parent(t, ml, ghost);
	tree_node_remove(t, ghost);
	CHECK(t);
	quota(t, ml, cpu, 5, 2, 1);
	b = mk_cq(t, "b", ml);
	ck_assert_int_eq(tree_subtree_quota(t, ghost, cpu), 1);
	ck_assert_int_eq(tree_available(t, b, cpu), 5);
	ck_assert_int_eq(tree_root(t, b), ghost);
	/* Then the ghost's object is created: explicit again. */
	quota(t, ghost, cpu, 2, UNL, UNL);
	ck_assert_int_eq(tree_available(t, b, cpu), 7);
	tree_set_parent(t, ml, NOPE);
	CHECK(t);
	ck_assert_int_eq(tree_node_find(t, NODE_COHORT, "ghost"), ghost);
	ck_assert_int_eq(tree_available(t, b, cpu), 5);
	tree_free(t);
}
END_TEST

START_TEST(copy_independence)
{
	struct hier h;
	struct tree *c;
	int ids[5], n;
	struct snap before, now;
	const char *fl, *rs;

	hier_build(&h);
	ids[0] = h.r, ids[1] = h.m, ids[2] = h.x, ids[3] = h.y, ids[4] = h.z;
	add(h.t, h.x, h.cpu, 9);
	add(h.t, h.y, h.cpu, 2);
	take(h.t, ids, 5, &before);
	c = tree_copy(h.t);
	CHECK(c);
	take(c, ids, 5, &now);
	same(&before, &now);
	ck_assert_int_eq(tree_available(c, h.y, h.cpu),
			 tree_available(h.t, h.y, h.cpu));
	ck_assert_int_eq(tree_node_find(c, NODE_CQ, "x"), h.x);

	/* Change the copy every way possible. */
	add(c, h.z, h.cpu, 5);
	rem(c, h.x, h.cpu, 9);
	quota(c, h.m, h.cpu, 0, UNL, UNL);
	tree_set_parent(c, h.z, h.m);
	CHECK(c);
	ck_assert_int_eq(tree_fr(c, "default", "gpu"), 1);
	n = tree_node(c, NODE_CQ, "only-in-copy");
	tree_set_parent(c, n, h.r);
	tree_node_remove(c, h.y);
	CHECK(c);
	take(h.t, ids, 5, &now);
	same(&before, &now);
	CHECK(h.t);
	ck_assert_uint_eq(tree_nfr(h.t), 1);
	ck_assert_int_eq(tree_fr_find(h.t, "default", "gpu"), -1);
	ck_assert_int_eq(tree_node_find(h.t, NODE_CQ, "only-in-copy"), -1);
	ck_assert_int_eq(tree_parent(h.t, h.z), h.r);

	/* The original interns its own pair under the same id. */
	ck_assert_int_eq(tree_fr(h.t, "spot", "memory"), 1);
	ck_assert_str_eq(tree_fr_resource(c, 1), "gpu");
	ck_assert_str_eq(tree_fr_resource(h.t, 1), "memory");
	/* Names of either stay valid when the other goes. */
	fl = tree_fr_flavor(c, 0);
	rs = tree_fr_resource(c, 1);
	tree_free(h.t);
	ck_assert_str_eq(fl, "default");
	ck_assert_str_eq(rs, "gpu");
	CHECK(c);
	/* A copy of a copy, freed in creation order. */
	h.t = tree_copy(c);
	tree_free(c);
	CHECK(h.t);
	ck_assert_str_eq(tree_fr_resource(h.t, 1), "gpu");
	tree_free(h.t);
}
END_TEST

/* A savepoint rolls back only what came after it. */
START_TEST(undo_savepoint)
{
	struct hier h;
	struct tree_undo u = { 0 };
	int ids[5];
	struct snap base, mid, now;
	size_t sp;

	hier_build(&h);
	ids[0] = h.r, ids[1] = h.m, ids[2] = h.x, ids[3] = h.y, ids[4] = h.z;
	add(h.t, h.x, h.cpu, 3);
	take(h.t, ids, 5, &base);
	{
		struct fr_val w1[] = { { h.cpu, 5 } };
		struct fr_val w2[] = { { h.cpu, 2 } };

		tree_add_usage_undo(h.t, h.y, w1, 1, &u);
		take(h.t, ids, 5, &mid);
		sp = tree_undo_savepoint(&u);
		ck_assert_uint_eq(sp, 1);
		/* a simulated removal and another reservation */
		tree_remove_usage_undo(h.t, h.x, w2, 1, &u);
		tree_add_usage_undo(h.t, h.z, w1, 1, &u);
		CHECK(h.t);
		ck_assert_int_eq(tree_usage(h.t, h.x, h.cpu), 1);
	}
	tree_undo_to(h.t, &u, sp);
	CHECK(h.t);
	ck_assert_uint_eq(u.n, 1);
	take(h.t, ids, 5, &now);
	same(&mid, &now);
	tree_undo_to(h.t, &u, sp); /* nothing after it: nothing */
	take(h.t, ids, 5, &now);
	same(&mid, &now);
	tree_undo(h.t, &u);
	take(h.t, ids, 5, &now);
	same(&base, &now);
	tree_undo_release(&u);
	tree_free(h.t);
}
END_TEST

START_TEST(undo_restores)
{
	struct hier h;
	struct tree_undo u = { 0 };
	int ids[5];
	struct snap before, now;
	int mem;

	hier_build(&h);
	mem = tree_fr(h.t, "default", "memory");
	quota(h.t, h.x, mem, 100, UNL, 50);
	ids[0] = h.r, ids[1] = h.m, ids[2] = h.x, ids[3] = h.y, ids[4] = h.z;
	add(h.t, h.x, h.cpu, 3);
	add(h.t, h.z, h.cpu, 4);
	add(h.t, h.x, mem, 60);
	take(h.t, ids, 5, &before);
	{
		struct fr_val w1[] = { { h.cpu, 7 }, { mem, 30 } };
		struct fr_val w2[] = { { h.cpu, 20 } };
		struct fr_val w3[] = { { h.cpu, 100 }, { mem, 1000 } };

		tree_add_usage_undo(h.t, h.y, w1, 2, &u);
		CHECK(h.t);
		tree_remove_usage_undo(h.t, h.z, w2, 1, &u); /* clamps */
		CHECK(h.t);
		tree_add_usage_undo(h.t, h.x, w1, 2, &u);
		tree_remove_usage_undo(h.t, h.x, w3, 2, &u); /* clamps */
		CHECK(h.t);
		ck_assert_int_eq(tree_usage(h.t, h.x, mem), 0);
		ck_assert_uint_eq(u.n, 7);
	}
	tree_undo(h.t, &u);
	CHECK(h.t);
	ck_assert_uint_eq(u.n, 0);
	take(h.t, ids, 5, &now);
	same(&before, &now);
	tree_undo(h.t, &u); /* empty: nothing */
	take(h.t, ids, 5, &now);
	same(&before, &now);
	tree_undo_release(&u);
	ck_assert_ptr_null(u.ops);
	tree_undo_release(&u);
	tree_free(h.t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Randomized: random trees, quotas and operations against an oracle. */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static int64_t rndn(int64_t n) /* [0, n) */
{
	return n > 0 ? (int64_t)(rnd() % (uint64_t)n) : 0;
}

#define MAXN 48

struct world {
	struct tree *t;
	int nfr;
	int nnames;
	char names[MAXN][16];
	enum node_kind kinds[MAXN];
	int serial;
};

static int w_id(const struct world *w, int i)
{
	return tree_node_find(w->t, w->kinds[i], w->names[i]);
}

/* A random live node of kind (or of any kind when kind < 0); -1: none. */
static int w_pick(const struct world *w, int kind)
{
	int ids[MAXN], n = 0;

	for (int i = 0; i < w->nnames; i++) {
		int id = w_id(w, i);

		if (id >= 0 && (kind < 0 || (int)w->kinds[i] == kind))
			ids[n++] = id;
	}
	return n ? ids[rndn(n)] : -1;
}

static int w_new(struct world *w, enum node_kind kind)
{
	int i;

	if (w->nnames == MAXN)
		return -1;
	i = w->nnames++;
	snprintf(w->names[i], sizeof(w->names[i]), "%s%d",
		 kind == NODE_CQ ? "cq" : "co", w->serial++);
	w->kinds[i] = kind;
	return tree_node(w->t, kind, w->names[i]);
}

static void w_quota(struct world *w, int id, int fr)
{
	int64_t nom = rndn(21);
	int64_t bl = rndn(2) ? UNL : rndn(11);
	int64_t ll = rndn(2) ? UNL :
		tree_node_kind(w->t, id) == NODE_CQ ? rndn(nom + 1) : rndn(26);

	tree_set_quota(w->t, id, fr, nom, bl, ll);
}

/* Oracle: §3 re-derived recursively from the public structure. */
static bool o_in_cycle(const struct tree *t, int x)
{
	for (int i = 0; i <= MAXN + 1; i++) {
		if (x < 0)
			return false;
		x = tree_parent(t, x);
	}
	return true;
}

static int64_t o_sub(const struct tree *t, int x, int fr);

static int64_t o_local(const struct tree *t, int x, int fr)
{
	int64_t l = tree_lending_limit(t, x, fr), s;

	if (l == UNL)
		return 0;
	s = o_sub(t, x, fr) - l;
	return s > 0 ? s : 0;
}

static int64_t o_sub(const struct tree *t, int x, int fr)
{
	int kids[MAXN];
	size_t n = tree_children(t, x, kids, MAXN);
	int64_t s = tree_nominal(t, x, fr);

	for (size_t i = 0; i < n; i++)
		s += o_sub(t, kids[i], fr) - o_local(t, kids[i], fr);
	return s;
}

static int64_t o_use(const struct tree *t, int x, int fr)
{
	int kids[MAXN];
	size_t n;
	int64_t u = 0;

	if (tree_node_kind(t, x) == NODE_CQ)
		return tree_usage(t, x, fr);
	n = tree_children(t, x, kids, MAXN);
	for (size_t i = 0; i < n; i++) {
		int64_t d = o_use(t, kids[i], fr) - o_local(t, kids[i], fr);

		u += d > 0 ? d : 0;
	}
	return u;
}

static int64_t o_avail(const struct tree *t, int x, int fr)
{
	int p = tree_parent(t, x);
	int64_t pa, bl = tree_borrowing_limit(t, x, fr), l, la;

	if (p < 0)
		return o_sub(t, x, fr) - o_use(t, x, fr);
	pa = o_avail(t, p, fr);
	l = o_local(t, x, fr);
	if (bl != UNL) {
		int64_t used = o_use(t, x, fr) - l;
		int64_t cap = o_sub(t, x, fr) - l - (used > 0 ? used : 0) + bl;

		pa = pa < cap ? pa : cap;
	}
	la = l - o_use(t, x, fr);
	return (la > 0 ? la : 0) + pa;
}

static int64_t o_pot(const struct tree *t, int x, int fr)
{
	int p = tree_parent(t, x);
	int64_t a, bl = tree_borrowing_limit(t, x, fr);

	if (p < 0)
		return o_sub(t, x, fr);
	a = o_local(t, x, fr) + o_pot(t, p, fr);
	if (bl != UNL && o_sub(t, x, fr) + bl < a)
		a = o_sub(t, x, fr) + bl;
	return a;
}

static int o_height(const struct tree *t, int x)
{
	int kids[MAXN], h = 0;
	size_t n = tree_children(t, x, kids, MAXN);

	for (size_t i = 0; i < n; i++) {
		int k = o_height(t, kids[i]) + 1;

		h = k > h ? k : h;
	}
	return h;
}

static int o_level(const struct tree *t, int cq, int fr, int64_t val,
		   bool *mr)
{
	int p = tree_parent(t, cq), y, last = -1;
	int64_t rem, la;

	if (p < 0 || tree_usage(t, cq, fr) + val <= tree_nominal(t, cq, fr)) {
		*mr = p >= 0;
		return 0;
	}
	la = o_local(t, cq, fr) - tree_usage(t, cq, fr);
	rem = val - (la > 0 ? la : 0);
	for (y = p; y >= 0; y = tree_parent(t, y)) {
		if (o_use(t, y, fr) + rem <= o_sub(t, y, fr)) {
			*mr = tree_parent(t, y) >= 0;
			return o_height(t, y);
		}
		la = o_local(t, y, fr) - o_use(t, y, fr);
		rem -= la > 0 ? la : 0;
		last = y;
	}
	*mr = false;
	return o_height(t, last);
}

static void w_verify(const struct world *w, const struct tree *t)
{
	CHECK(t);
	for (int i = 0; i < w->nnames; i++) {
		int id = tree_node_find(t, w->kinds[i], w->names[i]);

		if (id < 0)
			continue;
		if (o_in_cycle(t, id)) {
			T_ASSERT(tree_in_cycle(t, id));
			T_ASSERT_INT(tree_root(t, id), ==, -1);
			if (w->kinds[i] == NODE_CQ) {
				T_ASSERT_INT(tree_available(t, id, 0), ==, 0);
				T_ASSERT_INT(tree_potential_available(t, id, 0),
					     ==, 0);
			}
			continue;
		}
		T_ASSERT(!tree_in_cycle(t, id));
		T_ASSERT_INT(tree_height(t, id), ==, o_height(t, id));
		for (int fr = 0; fr < w->nfr; fr++) {
			T_ASSERT_INT(tree_subtree_quota(t, id, fr), ==,
				     o_sub(t, id, fr));
			T_ASSERT_INT(tree_usage(t, id, fr), ==,
				     o_use(t, id, fr));
			if (w->kinds[i] == NODE_CQ) {
				int64_t oa = o_avail(t, id, fr);
				int64_t a = tree_available(t, id, fr);
				int64_t pa =
					tree_potential_available(t, id, fr);
				int64_t val = rndn(30);
				bool mr1, mr2;

				T_ASSERT_INT(a, ==, oa > 0 ? oa : 0);
				T_ASSERT_INT(pa, ==, o_pot(t, id, fr));
				T_ASSERT_INT(a, <=, pa);
				T_ASSERT_INT(
					tree_borrow_level(t, id, fr, val, &mr1),
					==, o_level(t, id, fr, val, &mr2));
				T_ASSERT_INT(mr1, ==, mr2);
			}
		}
	}
}

/* Every node's usage and quotas, for exact before/after compares. */
struct wsnap {
	size_t n;
	int64_t v[MAXN * 4 * 8];
};

static void w_take(const struct world *w, const struct tree *t,
		   struct wsnap *s)
{
	s->n = 0;
	for (int i = 0; i < w->nnames; i++) {
		int id = tree_node_find(t, w->kinds[i], w->names[i]);

		s->v[s->n++] = id;
		if (id < 0)
			continue;
		s->v[s->n++] = tree_parent(t, id);
		for (int fr = 0; fr < w->nfr; fr++) {
			s->v[s->n++] = tree_usage(t, id, fr);
			s->v[s->n++] = tree_subtree_quota(t, id, fr);
			s->v[s->n++] = tree_nominal(t, id, fr);
			s->v[s->n++] = tree_borrowing_limit(t, id, fr);
			s->v[s->n++] = tree_lending_limit(t, id, fr);
		}
	}
}

static void w_same(const struct wsnap *a, const struct wsnap *b)
{
	ck_assert_uint_eq(a->n, b->n);
	ck_assert(!memcmp(a->v, b->v, a->n * sizeof(a->v[0])));
}

static void w_build(struct world *w)
{
	int roots = 1 + (int)rndn(2), mids = (int)rndn(4);
	int cqs = 2 + (int)rndn(8);
	int co[8], nco = 0;

	memset(w, 0, sizeof(*w));
	w->t = tree_new();
	w->nfr = 2 + (int)rndn(2);
	for (int f = 0; f < w->nfr; f++) {
		char fl[16];

		snprintf(fl, sizeof(fl), "f%d", f);
		ck_assert_int_eq(tree_fr(w->t, fl, "cpu"), f);
	}
	for (int i = 0; i < roots; i++)
		co[nco++] = w_new(w, NODE_COHORT);
	for (int i = 0; i < mids; i++) {
		int id = w_new(w, NODE_COHORT);

		tree_set_parent(w->t, id, co[rndn(roots)]);
		co[nco++] = id;
	}
	for (int i = 0; i < cqs; i++) {
		int id = w_new(w, NODE_CQ);

		if (rndn(10))
			tree_set_parent(w->t, id, co[rndn(nco)]);
	}
	for (int i = 0; i < w->nnames; i++)
		for (int fr = 0; fr < w->nfr; fr++)
			if (w->kinds[i] == NODE_CQ || rndn(3) == 0)
				w_quota(w, w_id(w, i), fr);
	CHECK(w->t);
}

/* One random mutation of t (usage, quota or structure). */
static void w_mutate(struct world *w, struct tree *t)
{
	int op = (int)rndn(100), fr = (int)rndn(w->nfr);
	struct tree *saved = w->t;
	int id;

	w->t = t;
	if (op < 35) {
		/* Admit what fits; it must respect every borrowing limit. */
		int64_t a, lim[MAXN], u[MAXN];
		int path[MAXN], np = 0;

		id = w_pick(w, NODE_CQ);
		if (id < 0)
			goto out;
		a = tree_available(t, id, fr);
		if (tree_in_cycle(t, id)) {
			ck_assert(a == 0 && !fits1(t, id, fr, 0));
			goto out;
		}
		ck_assert(fits1(t, id, fr, a));
		ck_assert(!fits1(t, id, fr, a + 1));
		if (a == 0)
			goto out;
		for (int y = id; y >= 0 && np < MAXN; y = tree_parent(t, y)) {
			path[np] = y;
			lim[np] = tree_subtree_quota(t, y, fr) +
				  (tree_parent(t, y) < 0 ? 0 :
				   tree_borrowing_limit(t, y, fr) == UNL ?
				   1000000 : tree_borrowing_limit(t, y, fr));
			u[np] = tree_usage(t, y, fr);
			np++;
		}
		tree_add_usage(t, id, fr, 1 + rndn(a));
		if (tree_parent(t, id) >= 0 &&
		    tree_borrowing_limit(t, id, fr) != UNL)
			ck_assert_int_le(tree_usage(t, id, fr),
					 tree_nominal(t, id, fr) +
					 tree_borrowing_limit(t, id, fr));
		if (tree_parent(t, id) < 0)
			ck_assert_int_le(tree_usage(t, id, fr),
					 tree_nominal(t, id, fr));
		for (int k = 0; k < np; k++)
			if (u[k] <= lim[k])
				ck_assert_int_le(tree_usage(t, path[k], fr),
						 lim[k]);
	} else if (op < 50) {
		id = w_pick(w, NODE_CQ);
		if (id >= 0)
			tree_remove_usage(t, id, fr,
					  rndn(tree_usage(t, id, fr) + 6));
	} else if (op < 58) {
		/* Over-admission, as after a quota decrease. */
		id = w_pick(w, NODE_CQ);
		if (id >= 0)
			tree_add_usage(t, id, fr, rndn(8));
	} else if (op < 68) {
		id = w_pick(w, -1);
		if (id >= 0) {
			if (rndn(5))
				w_quota(w, id, fr);
			else
				tree_clear_quotas(t, id);
		}
	} else if (op < 82) {
		/* Re-parent anything; cycles welcome. */
		int p = rndn(4) ? w_pick(w, NODE_COHORT) : -1;

		id = w_pick(w, -1);
		if (id >= 0)
			tree_set_parent(t, id, p);
	} else if (op < 90) {
		id = w_pick(w, -1);
		if (id >= 0)
			tree_node_remove(t, id);
	} else {
		int p = w_pick(w, NODE_COHORT);

		id = w_new(w, rndn(3) ? NODE_CQ : NODE_COHORT);
		if (id >= 0) {
			if (p >= 0 && rndn(5))
				tree_set_parent(t, id, p);
			w_quota(w, id, fr);
		}
	}
out:
	w->t = saved;
}

START_TEST(randomized)
{
	rng_state = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 40; round++) {
		struct world w;

		w_build(&w);
		w_verify(&w, w.t);
		for (int step = 0; step < 300; step++) {
			int kind = (int)rndn(10);

			if (kind < 7) {
				w_mutate(&w, w.t);
			} else if (kind == 7) {
				/* Undo restores exactly. */
				struct tree_undo u = { 0 };
				struct wsnap a, b;
				int n = 1 + (int)rndn(4);

				w_take(&w, w.t, &a);
				for (int k = 0; k < n; k++) {
					int id = w_pick(&w, NODE_CQ);
					struct fr_val v[2] = {
						{ (int)rndn(w.nfr), rndn(15) },
						{ (int)rndn(w.nfr), rndn(15) },
					};

					if (id < 0)
						break;
					if (rndn(2))
						tree_add_usage_undo(
							w.t, id, v, 2, &u);
					else
						tree_remove_usage_undo(
							w.t, id, v, 2, &u);
					CHECK(w.t);
				}
				tree_undo(w.t, &u);
				tree_undo_release(&u);
				w_take(&w, w.t, &b);
				w_same(&a, &b);
			} else if (kind == 8) {
				/* A copy behaves the same, and changing it
				 * leaves the original alone. */
				struct tree *c = tree_copy(w.t);
				struct wsnap a, b;
				int saved = w.nnames, serial = w.serial;

				w_verify(&w, c);
				w_take(&w, w.t, &a);
				for (int k = 0; k < 5; k++) {
					w_mutate(&w, c);
					CHECK(c);
				}
				w.nnames = saved;
				w.serial = serial;
				w_take(&w, w.t, &b);
				w_same(&a, &b);
				tree_free(c);
			} else {
				/* Add then remove: every node comes back. */
				struct wsnap a, b;
				int id = w_pick(&w, NODE_CQ);
				int fr = (int)rndn(w.nfr);
				int64_t v = rndn(40);

				if (id < 0)
					continue;
				w_take(&w, w.t, &a);
				tree_add_usage(w.t, id, fr, v);
				CHECK(w.t);
				tree_remove_usage(w.t, id, fr, v);
				w_take(&w, w.t, &b);
				w_same(&a, &b);
			}
			w_verify(&w, w.t);
		}
		tree_free(w.t);
	}
}
END_TEST

Suite *tree_suite(void)
{
	Suite *s = suite_create("tree");
	TCase *tc;

	tc = tcase_create("interning-and-nodes");
	tcase_add_test(tc, interning);
	tcase_add_test(tc, nodes_and_names);
	tcase_add_test(tc, many_nodes);
	suite_add_tcase(s, tc);

	tc = tcase_create("quota");
	tcase_add_test(tc, no_cohort);
	tcase_add_test(tc, flat_cohort);
	tcase_add_loop_test(tc, lending_limit_usage, 0,
			    sizeof(lend_cases) / sizeof(lend_cases[0]));
	tcase_add_test(tc, hierarchical_lending);
	suite_add_tcase(s, tc);

	tc = tcase_create("borrowing-level");
	tcase_add_loop_test(tc, borrow_level_hier, 0,
			    sizeof(level_cases) / sizeof(level_cases[0]));
	tcase_add_test(tc, borrow_level_three_levels);
	suite_add_tcase(s, tc);

	tc = tcase_create("usage");
	tcase_add_test(tc, propagation_roundtrip);
	tcase_add_test(tc, remove_clamps);
	tcase_add_test(tc, undo_restores);
	tcase_add_test(tc, undo_savepoint);
	suite_add_tcase(s, tc);

	tc = tcase_create("structure");
	tcase_add_test(tc, cycles);
	tcase_add_test(tc, node_removal);
	tcase_add_test(tc, implicit_cohorts);
	tcase_add_test(tc, copy_independence);
	suite_add_tcase(s, tc);

	tc = tcase_create("randomized");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, randomized);
	suite_add_tcase(s, tc);
	return s;
}
