/* Suite "placement": taint effects, the toleration matrix, untolerated
 * taints, node affinity and Kueue's flavor/selector compatibility. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/placement.h"
#include "suites.h"
#include "test/support/support.h"

/* Builds a label map from "k=v,k2=v2" ("" is the empty map). */
static void t_labels(struct smap *m, const char *text)
{
	char *copy = xstrdup(text), *save = NULL;

	for (char *kv = strtok_r(copy, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		ck_assert_msg(eq != NULL, "bad labels '%s'", text);
		*eq = '\0';
		smap_set(m, kv, eq + 1);
	}
	free(copy);
}

#define ALL EFFECT_ALL
#define NS EFFECT_NO_SCHEDULE
#define PNS EFFECT_PREFER_NO_SCHEDULE
#define NE EFFECT_NO_EXECUTE

/* ---- effects ------------------------------------------------------- */

static const struct {
	const char *name;
	bool allow_all;
	int rc;
	enum taint_effect e;
} effect_cases[] = {
	{ "NoSchedule", false, 0, NS },
	{ "PreferNoSchedule", false, 0, PNS },
	{ "NoExecute", false, 0, NE },
	{ "", true, 0, ALL },
	{ "", false, -1, ALL },
	{ "noschedule", true, -1, ALL },
	{ "All", true, -1, ALL },
};

START_TEST(effects)
{
	enum taint_effect e = NE;
	int rc = taint_effect_parse(effect_cases[_i].name,
				    effect_cases[_i].allow_all, &e);

	ck_assert_int_eq(rc, effect_cases[_i].rc);
	if (rc == 0) {
		ck_assert_int_eq(e, effect_cases[_i].e);
		ck_assert_str_eq(taint_effect_name(e), effect_cases[_i].name);
	}
}
END_TEST

/* ---- tolerations --------------------------------------------------- */

struct ttol {
	const char *key;
	enum tol_op op;
	const char *value;
	enum taint_effect effect;
};

struct ttaint {
	const char *key;
	const char *value;
	enum taint_effect effect;
};

static struct toleration mk_tol(const struct ttol *t)
{
	struct toleration r = { (char *)t->key, t->op, (char *)t->value,
				t->effect, false, 0 };

	return r;
}

static struct taint mk_taint(const struct ttaint *t)
{
	struct taint r = { (char *)t->key, (char *)t->value, t->effect, NULL };

	return r;
}

static const struct {
	struct ttol tol;
	struct ttaint taint;
	bool want;
} tol_cases[] = {
	/* Equal: key and value must both match */
	{ { "k", TOL_EQUAL, "v", ALL }, { "k", "v", NS }, true },
	{ { "k", TOL_EQUAL, "w", ALL }, { "k", "v", NS }, false },
	{ { "k", TOL_EQUAL, "", ALL }, { "k", "", NE }, true },
	{ { "k", TOL_EQUAL, "", ALL }, { "k", "v", NE }, false },
	{ { "K", TOL_EQUAL, "v", ALL }, { "k", "v", NS }, false },
	{ { "k2", TOL_EQUAL, "v", ALL }, { "k", "v", NS }, false },
	/* effects: empty matches all, otherwise equal */
	{ { "k", TOL_EQUAL, "v", NS }, { "k", "v", NS }, true },
	{ { "k", TOL_EQUAL, "v", NE }, { "k", "v", NS }, false },
	{ { "k", TOL_EQUAL, "v", NS }, { "k", "v", NE }, false },
	{ { "k", TOL_EQUAL, "v", PNS }, { "k", "v", PNS }, true },
	{ { "k", TOL_EQUAL, "v", ALL }, { "k", "v", PNS }, true },
	{ { "k", TOL_EQUAL, "v", ALL }, { "k", "v", NE }, true },
	/* Exists: any value of the key */
	{ { "k", TOL_EXISTS, "", ALL }, { "k", "anything", NE }, true },
	{ { "k", TOL_EXISTS, "", ALL }, { "k", "", NS }, true },
	{ { "k", TOL_EXISTS, "", NS }, { "k", "x", NE }, false },
	{ { "k", TOL_EXISTS, "", NE }, { "k", "x", NE }, true },
	{ { "k2", TOL_EXISTS, "", ALL }, { "k", "x", NS }, false },
	/* empty key + Exists: every key */
	{ { "", TOL_EXISTS, "", ALL }, { "any", "x", NE }, true },
	{ { "", TOL_EXISTS, "", ALL }, { "other", "", PNS }, true },
	{ { "", TOL_EXISTS, "", NE }, { "any", "x", NS }, false },
	{ { "", TOL_EXISTS, "", NS }, { "any", "x", NS }, true },
	/* empty key + Equal (refused by API validation): ToleratesTaint
	 * still compares the value against any key */
	{ { "", TOL_EQUAL, "x", ALL }, { "any", "x", NS }, true },
	{ { "", TOL_EQUAL, "y", ALL }, { "any", "x", NS }, false },
};

START_TEST(tolerates)
{
	struct toleration tol = mk_tol(&tol_cases[_i].tol);
	struct taint t = mk_taint(&tol_cases[_i].taint);

	ck_assert_msg(toleration_tolerates(&tol, &t) == tol_cases[_i].want,
		      "toleration %s/%d/%s/%d vs taint %s=%s:%d",
		      tol.key, (int)tol.op, tol.value, (int)tol.effect,
		      t.key, t.value, (int)t.effect);
}
END_TEST

/* ---- untolerated taints -------------------------------------------- */

#define MAXN 3

static const struct {
	const char *name;
	struct ttaint taints[MAXN];
	size_t ntaints;
	struct ttol a[MAXN];
	size_t na;
	struct ttol b[MAXN];
	size_t nb;
	int want; /* index of the untolerated taint, -1 for none */
} untol_cases[] = {
	{ "no taints", { { 0 } }, 0, { { 0 } }, 0, { { 0 } }, 0, -1 },
	{ "NoSchedule untolerated",
	  { { "spot", "true", NS } }, 1, { { 0 } }, 0, { { 0 } }, 0, 0 },
	{ "NoExecute untolerated",
	  { { "spot", "true", NE } }, 1, { { 0 } }, 0, { { 0 } }, 0, 0 },
	{ "PreferNoSchedule is ignored",
	  { { "spot", "true", PNS } }, 1, { { 0 } }, 0, { { 0 } }, 0, -1 },
	{ "tolerated by the pod",
	  { { "spot", "true", NS } }, 1,
	  { { "spot", TOL_EQUAL, "true", NS } }, 1, { { 0 } }, 0, -1 },
	{ "tolerated by the flavor",
	  { { "spot", "true", NS } }, 1,
	  { { "other", TOL_EXISTS, "", ALL } }, 1,
	  { { "spot", TOL_EXISTS, "", ALL } }, 1, -1 },
	{ "one by each",
	  { { "spot", "true", NS }, { "gpu", "a100", NE } }, 2,
	  { { "spot", TOL_EQUAL, "true", ALL } }, 1,
	  { { "gpu", TOL_EXISTS, "", NE } }, 1, -1 },
	{ "second untolerated",
	  { { "spot", "true", NS }, { "gpu", "a100", NE } }, 2,
	  { { "spot", TOL_EQUAL, "true", ALL } }, 1,
	  { { "gpu", TOL_EXISTS, "", NS } }, 1, 1 },
	{ "first reported",
	  { { "a", "1", NS }, { "b", "2", NE } }, 2,
	  { { 0 } }, 0, { { 0 } }, 0, 0 },
	{ "ignored effect skipped",
	  { { "a", "1", PNS }, { "b", "2", NE }, { "c", "3", NS } }, 3,
	  { { "c", TOL_EXISTS, "", ALL } }, 1, { { 0 } }, 0, 1 },
	{ "wildcard in the flavor",
	  { { "a", "1", NS }, { "b", "2", NE } }, 2,
	  { { 0 } }, 0, { { "", TOL_EXISTS, "", ALL } }, 1, -1 },
	{ "wrong value",
	  { { "spot", "true", NS } }, 1,
	  { { "spot", TOL_EQUAL, "false", ALL } }, 1, { { 0 } }, 0, 0 },
};

START_TEST(untolerated)
{
	struct taint taints[MAXN];
	struct toleration a[MAXN], b[MAXN];
	const struct taint *got;
	int want = untol_cases[_i].want;

	for (size_t i = 0; i < untol_cases[_i].ntaints; i++)
		taints[i] = mk_taint(&untol_cases[_i].taints[i]);
	for (size_t i = 0; i < untol_cases[_i].na; i++)
		a[i] = mk_tol(&untol_cases[_i].a[i]);
	for (size_t i = 0; i < untol_cases[_i].nb; i++)
		b[i] = mk_tol(&untol_cases[_i].b[i]);
	got = taints_find_untolerated(taints, untol_cases[_i].ntaints,
				      a, untol_cases[_i].na,
				      b, untol_cases[_i].nb);
	if (want < 0)
		ck_assert_msg(got == NULL, "%s: got %s", untol_cases[_i].name,
			      got ? got->key : "");
	else
		ck_assert_msg(got == &taints[want], "%s", untol_cases[_i].name);
}
END_TEST

START_TEST(untolerated_empty_lists)
{
	ck_assert_ptr_null(taints_find_untolerated(NULL, 0, NULL, 0, NULL, 0));
}
END_TEST

/* ---- node affinity ------------------------------------------------- */

/* One nodeSelectorTerm: matchExpressions in the string form (which
 * parses Gt/Lt too) and a count of matchFields. */
struct tterm {
	const char *exprs;
	size_t nfields;
};

static void t_affinity(struct node_affinity *a, bool present,
		       const struct tterm *terms, size_t n)
{
	node_affinity_init(a);
	for (size_t i = 0; i < n; i++) {
		struct node_term *t = node_affinity_add_term(a);
		struct err err = { "" };

		ck_assert_msg(label_selector_parse(terms[i].exprs, &t->exprs,
						   &err) == 0,
			      "%s: %s", terms[i].exprs, err.msg);
		t->nfields = terms[i].nfields;
	}
	a->present = present;
}

static const struct {
	const char *name;
	bool present;
	struct tterm terms[MAXN];
	size_t n;
	const char *labels;
	bool want;
} aff_cases[] = {
	{ "absent", false, { { 0 } }, 0, "", true },
	{ "absent ignores terms", false, { { "zone=a", 0 } }, 1,
	  "zone=b", true },
	{ "no terms", true, { { 0 } }, 0, "zone=a", false },
	{ "empty term", true, { { "", 0 } }, 1, "zone=a", false },
	{ "fields only", true, { { "", 1 } }, 1, "zone=a", false },
	{ "In hit", true, { { "zone in (a,b)", 0 } }, 1, "zone=a", true },
	{ "In miss", true, { { "zone in (a,b)", 0 } }, 1, "zone=c", false },
	{ "In absent", true, { { "zone in (a,b)", 0 } }, 1, "", false },
	{ "terms ORed", true, { { "zone=a", 0 }, { "zone=b", 0 } }, 2,
	  "zone=b", true },
	{ "exprs ANDed", true, { { "zone=a,gpu", 0 } }, 1, "zone=a", false },
	{ "exprs ANDed hit", true, { { "zone=a,gpu", 0 } }, 1,
	  "zone=a,gpu=", true },
	{ "empty term skipped", true, { { "", 0 }, { "zone=a", 0 } }, 2,
	  "zone=a", true },
	{ "NotIn absent", true, { { "zone notin (a)", 0 } }, 1, "", true },
	{ "NotIn present", true, { { "zone notin (a)", 0 } }, 1,
	  "zone=a", false },
	{ "Exists", true, { { "gpu", 0 } }, 1, "gpu=t", true },
	{ "DoesNotExist", true, { { "!gpu", 0 } }, 1, "", true },
	{ "DoesNotExist present", true, { { "!gpu", 0 } }, 1, "gpu=t", false },
	{ "Gt", true, { { "cores>4", 0 } }, 1, "cores=8", true },
	{ "Gt equal", true, { { "cores>4", 0 } }, 1, "cores=4", false },
	{ "Gt not a number", true, { { "cores>4", 0 } }, 1, "cores=x", false },
	{ "Gt absent", true, { { "cores>4", 0 } }, 1, "", false },
	{ "Lt", true, { { "cores<4", 0 } }, 1, "cores=2", true },
	{ "Lt negative", true, { { "cores<4", 0 } }, 1, "cores=-2", true },
	{ "Lt miss", true, { { "cores<4", 0 } }, 1, "cores=40", false },
};

START_TEST(affinity)
{
	struct node_affinity a;
	struct smap labels = SMAP_INIT;

	t_affinity(&a, aff_cases[_i].present, aff_cases[_i].terms,
		   aff_cases[_i].n);
	t_labels(&labels, aff_cases[_i].labels);
	ck_assert_msg(node_affinity_matches(&a, &labels) == aff_cases[_i].want,
		      "%s", aff_cases[_i].name);
	node_affinity_release(&a);
	smap_release(&labels);
}
END_TEST

/* ---- flavors ------------------------------------------------------- */

static const struct {
	const char *name;
	const char *flavor;   /* the flavor's nodeLabels */
	const char *selector; /* the pod's nodeSelector */
	bool present;
	struct tterm terms[MAXN];
	size_t n;
	bool want;
} flavor_cases[] = {
	{ "nothing asked", "zone=a", "", false, { { 0 } }, 0, true },
	{ "flavor without labels", "", "zone=a,gpu=t", false,
	  { { 0 } }, 0, true },
	{ "selector equal", "zone=a", "zone=a", false, { { 0 } }, 0, true },
	{ "selector differs", "zone=a", "zone=b", false, { { 0 } }, 0, false },
	{ "selector key unknown to flavor", "zone=a", "zone=a,other=x", false,
	  { { 0 } }, 0, true },
	{ "one of two keys differs", "zone=a,arch=arm", "zone=a,arch=x86",
	  false, { { 0 } }, 0, false },
	{ "selector empty value", "zone=", "zone=", false, { { 0 } }, 0, true },
	{ "affinity In hit", "zone=a", "", true,
	  { { "zone in (a,b)", 0 } }, 1, true },
	{ "affinity In miss", "zone=c", "", true,
	  { { "zone in (a,b)", 0 } }, 1, false },
	{ "affinity keys unknown to flavor", "", "", true,
	  { { "zone in (b)", 0 } }, 1, true },
	{ "affinity other flavor's key", "zone=a", "", true,
	  { { "pool=x", 0 } }, 1, true },
	{ "a term emptied by the filter wins", "zone=a", "", true,
	  { { "zone in (b)", 0 }, { "gpu=t", 0 } }, 2, true },
	{ "emptied term wins in any position", "zone=a", "", true,
	  { { "gpu=t", 0 }, { "zone in (b)", 0 } }, 2, true },
	{ "filter keeps known keys", "zone=a", "", true,
	  { { "zone in (b),gpu=t", 0 } }, 1, false },
	{ "filter drops only unknown keys", "zone=a", "", true,
	  { { "zone in (a),gpu=t", 0 } }, 1, true },
	{ "terms ORed", "zone=a", "", true,
	  { { "zone in (b)", 0 }, { "zone in (a)", 0 } }, 2, true },
	{ "no term matches", "zone=a", "", true,
	  { { "zone in (b)", 0 }, { "zone in (c)", 0 } }, 2, false },
	{ "NotIn on flavor key", "zone=a", "", true,
	  { { "zone notin (a)", 0 } }, 1, false },
	{ "NotIn other value", "zone=a", "", true,
	  { { "zone notin (b)", 0 } }, 1, true },
	{ "Exists", "gpu=t", "", true, { { "gpu", 0 } }, 1, true },
	{ "DoesNotExist on flavor key", "gpu=t", "", true,
	  { { "!gpu", 0 } }, 1, false },
	{ "Gt hit", "cores=8", "", true, { { "cores>4", 0 } }, 1, true },
	{ "Gt miss", "cores=2", "", true, { { "cores>4", 0 } }, 1, false },
	{ "Lt hit", "cores=2", "", true, { { "cores<4", 0 } }, 1, true },
	{ "Gt non-integer label", "cores=many", "", true,
	  { { "cores>4", 0 } }, 1, false },
	{ "required affinity without terms", "zone=a", "", true,
	  { { 0 } }, 0, true },
	{ "fields-only term", "zone=a", "", true, { { "", 1 } }, 1, true },
	{ "fields ignored", "zone=a", "", true,
	  { { "zone in (b)", 2 } }, 1, false },
	{ "selector fails, affinity fits", "zone=a", "zone=b", true,
	  { { "zone in (a)", 0 } }, 1, false },
	{ "selector fits, affinity fails", "zone=a", "zone=a", true,
	  { { "zone in (b)", 0 } }, 1, false },
	{ "both fit", "zone=a,gpu=t", "gpu=t", true,
	  { { "zone in (a,b)", 0 } }, 1, true },
};

START_TEST(flavor)
{
	struct node_affinity a;
	struct smap fl = SMAP_INIT, sel = SMAP_INIT;

	t_affinity(&a, flavor_cases[_i].present, flavor_cases[_i].terms,
		   flavor_cases[_i].n);
	t_labels(&fl, flavor_cases[_i].flavor);
	t_labels(&sel, flavor_cases[_i].selector);
	ck_assert_msg(flavor_matches_selectors(&fl, &sel, &a) ==
		      flavor_cases[_i].want, "%s", flavor_cases[_i].name);
	node_affinity_release(&a);
	smap_release(&fl);
	smap_release(&sel);
}
END_TEST

START_TEST(flavor_null_parts)
{
	struct smap fl = SMAP_INIT;

	smap_set(&fl, "zone", "a");
	ck_assert(flavor_matches_selectors(&fl, NULL, NULL));
	smap_release(&fl);
}
END_TEST

/* ---- copies -------------------------------------------------------- */

START_TEST(copies)
{
	struct taint t = { xstrdup("k"), xstrdup(""), NE,
			   xstrdup("2026-01-01T00:00:00Z") }, tc;
	struct toleration o = { xstrdup("k"), TOL_EQUAL, xstrdup("v"), NE,
				true, 30 }, oc, other;
	struct node_affinity a, ac;
	static const struct tterm terms[] = { { "zone in (a,b)", 0 },
					      { "cores>4", 1 } };
	struct smap labels = SMAP_INIT;
	char *s;

	taint_copy(&tc, &t);
	taint_release(&t);
	ck_assert_str_eq(tc.key, "k");
	ck_assert_str_eq(tc.value, "");
	ck_assert_str_eq(tc.time_added, "2026-01-01T00:00:00Z");
	ck_assert_int_eq(tc.effect, NE);
	taint_release(&tc);
	taint_release(&tc); /* fields were NULLed */
	ck_assert_ptr_null(tc.key);

	toleration_copy(&oc, &o);
	ck_assert(toleration_equal(&oc, &o));
	toleration_copy(&other, &o);
	other.seconds = 31;
	ck_assert(!toleration_equal(&other, &o));
	other.has_seconds = false;
	ck_assert(!toleration_equal(&other, &o));
	o.has_seconds = false;
	o.seconds = 99;
	ck_assert(toleration_equal(&other, &o)); /* seconds unset: ignored */
	other.effect = ALL;
	ck_assert(!toleration_equal(&other, &o));
	toleration_release(&o);
	ck_assert_str_eq(oc.value, "v");
	toleration_release(&oc);
	toleration_release(&other);

	t_affinity(&a, true, terms, 2);
	node_affinity_init(&ac);
	node_affinity_add_term(&ac); /* replaced by the copy */
	node_affinity_copy(&ac, &a);
	node_affinity_copy(&ac, &ac); /* onto itself: a no-op, not a free */
	node_affinity_release(&a);
	ck_assert(ac.present);
	ck_assert_uint_eq(ac.n, 2);
	ck_assert_uint_eq(ac.terms[1].nfields, 1);
	s = label_selector_string(&ac.terms[0].exprs);
	ck_assert_str_eq(s, "zone in (a,b)");
	free(s);
	smap_set(&labels, "cores", "5");
	ck_assert(node_affinity_matches(&ac, &labels));
	node_affinity_release(&ac);
	ck_assert(!ac.present);
	ck_assert_uint_eq(ac.n, 0);
	smap_release(&labels);
}
END_TEST

Suite *placement_suite(void)
{
	Suite *s = suite_create("placement");
	TCase *tc = tcase_create("taints");

	tcase_add_loop_test(tc, effects, 0,
			    sizeof(effect_cases) / sizeof(effect_cases[0]));
	tcase_add_loop_test(tc, tolerates, 0,
			    sizeof(tol_cases) / sizeof(tol_cases[0]));
	tcase_add_loop_test(tc, untolerated, 0,
			    sizeof(untol_cases) / sizeof(untol_cases[0]));
	tcase_add_test(tc, untolerated_empty_lists);
	suite_add_tcase(s, tc);
	tc = tcase_create("node-affinity");
	tcase_add_loop_test(tc, affinity, 0,
			    sizeof(aff_cases) / sizeof(aff_cases[0]));
	suite_add_tcase(s, tc);
	tc = tcase_create("flavor-selectors");
	tcase_add_loop_test(tc, flavor, 0,
			    sizeof(flavor_cases) / sizeof(flavor_cases[0]));
	tcase_add_test(tc, flavor_null_parts);
	suite_add_tcase(s, tc);
	tc = tcase_create("copies");
	tcase_add_test(tc, copies);
	suite_add_tcase(s, tc);
	return s;
}
