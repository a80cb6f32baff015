/*
 * cueue-invariants: checks the quota invariants of one observed cluster
 * state, independently of the scheduling core (it never uses
 * flavors/tree.h: its arithmetic is written again here, from
 * kueue-scheduler.md §3, so that a bug in the core cannot hide itself).
 *
 *   cueue-invariants [--status] [--counts] [--config FILE] [FILE]
 *   (stdin without FILE; --config: the manager's Configuration, whose
 *   resources.excludeResourcePrefixes and transformations (c) applies to
 *   the pods' requests, with model/respolicy.h)
 *
 * Input: a JSON List, as `kubectl get clusterqueues,cohorts,workloads,
 * resourceflavors,localqueues -A -o json` prints (a single object works
 * too). Objects of other kinds are ignored.
 *
 * Checks, per (flavor, resource):
 *  (a) a ClusterQueue's usage (the admissions' resourceUsage of its
 *      workloads that hold an active quota reservation: QuotaReserved=True,
 *      not Finished, spec.active not false) is at most nominal when it has
 *      no cohort, at most nominal + borrowingLimit when one is set, and
 *      only on flavor/resources its resourceGroups list;
 *  (b) every cohort (implicit ones named by spec.cohortName or parentName,
 *      and Cohort objects with their own quota) uses at most its subtree
 *      quota: own nominal + each child's lendable part (min(subtree,
 *      lendingLimit)); a child's usage reaches its parent only beyond the
 *      part it never lends; a cohort with a parent and a borrowingLimit
 *      uses at most subtree + borrowingLimit. Trees with a cycle are not
 *      checked (a note on stderr says so);
 *  (c) every reservation is well formed: status.admission present, a known
 *      ClusterQueue, one assignment per pod set, a flavor for every
 *      resource, and resourceUsage == count x the pod set's per-pod
 *      requests (model/podreq.h);
 *  (e) every managed batch/v1 Job that can run pods (unsuspended and
 *      not ended, or with active pods, in every copy of it the input
 *      holds) owns a Workload that holds quota, admitted for at least
 *      the pods the Job runs: a Job never runs on a Workload that does
 *      not describe it (see check_jobs);
 *  --status, for a quiet cluster only (the manager has written everything):
 *  (d) each ClusterQueue's status (reservingWorkloads, admittedWorkloads,
 *      flavorsReservation / flavorsUsage totals and borrowed) and, when
 *      LocalQueues are in the input, pendingWorkloads and each
 *      LocalQueue's counts agree with the workloads.
 *
 * --counts first prints two lines for the e2e suites' polling:
 *   counts: workloads=N holding=H admitted=A finished=F pending=P unmarked=U
 *   holding: NAME...   (the workloads holding quota, by name)
 * where pending have QuotaReserved=False and unmarked no QuotaReserved
 * condition yet (neither holding nor finished).
 *
 * Prints "invariants: ok (N clusterqueues, M workloads)" and exits 0, or
 * one line per violation naming the object, flavor, resource and figures
 * and exits 1; exit 2 on unreadable input.
 *
 * This test tool holds json_t (STYLE P3(c) lists only the codec, webhook
 * and kube client): it only splits the List into items and hands each to
 * the codec's decoders.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "base/text.h"
#include "config/config.h"
#include "model/codec.h"
#include "model/errors.h"
#include "model/objects.h"
#include "model/podreq.h"
#include "model/respolicy.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "model/smap.h"

#define UNLIMITED INT64_MAX

/* One (flavor, resource) pair: the unit of quota accounting. */
struct fr {
	const char *flavor;   /* borrowed from a decoded object */
	const char *resource; /* borrowed from a decoded object */
};

/* A node's quota on one fr. */
struct quota {
	bool declared;   /* the node's resourceGroups list this fr */
	int64_t nominal; /* milli-units */
	int64_t borrow;  /* milli-units; UNLIMITED when unset */
	int64_t lend;    /* milli-units; UNLIMITED when unset */
};

/* A ClusterQueue or a cohort (a Cohort object or an implicit one). */
struct node {
	const char *name;  /* borrowed, or implicit_name */
	char *implicit_name; /* owned; cohorts without an object */
	const char *kind;  /* "ClusterQueue" / "Cohort" */
	const char *parent_name; /* borrowed or NULL */
	int parent;        /* node index or -1 */
	bool cyclic;       /* in a cohort cycle or below one */
	int depth;         /* steps to the root */
	struct quota *q;   /* owned; nfr entries */
	int64_t *usage;    /* owned; nfr entries; reservations */
	int64_t *admitted; /* owned; nfr entries; Admitted=True subset */
	int64_t *subtree;  /* owned; nfr entries */
	int64_t *local;    /* owned; nfr entries; never lent */
	int nreserving, nadmitted, npending;
	const struct cluster_queue *cq; /* borrowed; ClusterQueues only */
};

struct state {
	struct cluster_queue *cqs; size_t ncq, capcq;
	struct cohort *cohorts; size_t ncoh, capcoh;
	struct workload *wls; size_t nwl, capwl;
	struct local_queue *lqs; size_t nlq, caplq;
	struct job *jobs; size_t njob, capjob;
	struct fr *frs; size_t nfr, capfr;
	struct node *nodes; size_t nnode, capnode;
	bool frozen;         /* per-node arrays sized: no new fr */
	size_t nviolations;
	bool check_status;
	bool counts;
	struct res_policy policy; /* --config: the manager's resources.* */
	struct smap dra_map;      /* --config: deviceClassMappings, class ->
				     resource */
	json_t *rcts;             /* ResourceClaimTemplates by "ns/name" */
};

static void violation(struct state *st, const char *fmt, ...)
	PRINTF_LIKE(2, 3);

static void violation(struct state *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	st->nviolations++;
}

static const char *fmtq(const char *resource, int64_t milli, char *buf)
{
	if (milli == UNLIMITED)
		return "unlimited";
	return resource_format(resource, milli, buf, QUANTITY_BUF);
}

static int64_t add_sat(int64_t a, int64_t b)
{
	if (a == UNLIMITED || b == UNLIMITED)
		return UNLIMITED;
	if (b > 0 && a > INT64_MAX - b)
		return UNLIMITED;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int64_t max0(int64_t v)
{
	return v > 0 ? v : 0;
}

/* Index of (flavor, resource), added when absent. */
static size_t fr_index(struct state *st, const char *flavor,
		       const char *resource)
{
	for (size_t i = 0; i < st->nfr; i++)
		if (!strcmp(st->frs[i].flavor, flavor) &&
		    !strcmp(st->frs[i].resource, resource))
			return i;
	if (st->frozen)
		BUG("fr %s/%s appeared after the arrays were sized", flavor,
		    resource);
	XGROW(st->frs, st->capfr, st->nfr + 1);
	st->frs[st->nfr].flavor = flavor;
	st->frs[st->nfr].resource = resource;
	return st->nfr++;
}

static int node_find(const struct state *st, const char *kind,
		     const char *name)
{
	for (size_t i = 0; i < st->nnode; i++)
		if (!strcmp(st->nodes[i].kind, kind) &&
		    !strcmp(st->nodes[i].name, name))
			return (int)i;
	return -1;
}

static struct node *node_add(struct state *st, const char *kind,
			     const char *name)
{
	struct node *n;

	XGROW(st->nodes, st->capnode, st->nnode + 1);
	n = &st->nodes[st->nnode++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->name = name;
	n->parent = -1;
	return n;
}

/* ------------------------------------------------------------------ */
/* Input */

static int load(struct state *st, const char *path)
{
	json_error_t jerr;
	json_t *root, *items;
	size_t i;
	int rc = 0;

	root = path ? json_load_file(path, 0, &jerr) :
		      json_loadf(stdin, 0, &jerr);
	if (!root) {
		fprintf(stderr, "cueue-invariants: %s:%d: %s\n",
			path ? path : "<stdin>", jerr.line, jerr.text);
		return -1;
	}
	items = json_object_get(root, "items");
	if (!json_is_array(items)) {
		items = json_array();
		json_array_append(items, root);
	} else {
		json_incref(items);
	}
	for (i = 0; i < json_array_size(items); i++) {
		json_t *obj = json_array_get(items, i);
		struct field_errors fe = FIELD_ERRORS_INIT;
		int r = 0;

		switch (codec_kind_of(obj)) {
		case KIND_CLUSTER_QUEUE:
			XGROW(st->cqs, st->capcq, st->ncq + 1);
			r = codec_decode_cluster_queue(obj, &st->cqs[st->ncq++],
						       &fe);
			break;
		case KIND_COHORT:
			XGROW(st->cohorts, st->capcoh, st->ncoh + 1);
			r = codec_decode_cohort(obj, &st->cohorts[st->ncoh++],
						&fe);
			break;
		case KIND_WORKLOAD:
			XGROW(st->wls, st->capwl, st->nwl + 1);
			r = codec_decode_workload(obj, &st->wls[st->nwl++],
						  &fe);
			break;
		case KIND_JOB:
			XGROW(st->jobs, st->capjob, st->njob + 1);
			r = codec_decode_job(obj, &st->jobs[st->njob++], &fe);
			break;
		case KIND_LOCAL_QUEUE:
			XGROW(st->lqs, st->caplq, st->nlq + 1);
			r = codec_decode_local_queue(obj, &st->lqs[st->nlq++],
						     &fe);
			break;
		default:
			if (text_same(json_string_value(json_object_get(obj,
				"kind")), "ResourceClaimTemplate") &&
			    jx_namespace(obj) && jx_name(obj)) {
				char *key = xasprintf("%s/%s",
						      jx_namespace(obj),
						      jx_name(obj));

				json_object_set(st->rcts, key, obj);
				free(key);
			}
			break;
		}
		if (r < 0) {
			char *all = field_errors_aggregate(&fe);
			const char *k = json_string_value(
				json_object_get(obj, "kind"));
			const char *n = json_string_value(json_object_get(
				json_object_get(obj, "metadata"), "name"));

			fprintf(stderr, "cueue-invariants: %s %s: %s\n",
				k ? k : "?", n ? n : "?", all);
			free(all);
			rc = -1;
		}
		field_errors_release(&fe);
	}
	json_decref(items);
	json_decref(root);
	return rc;
}

/* Counts toward usage: QuotaReserved, not Finished. An inactive or
 * evicted workload still counts until its reservation is cleared (its
 * Job may run until then; Kueue's cache drops inactive ones at once). */
static bool holds_quota(const struct workload *w)
{
	return conditions_is_true(&w->conds, "QuotaReserved") &&
	       !conditions_is_true(&w->conds, "Finished");
}

/* ------------------------------------------------------------------ */
/* The tree */

static void add_groups(struct state *st, struct node *n,
		       const struct resource_group *g, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		for (size_t f = 0; f < g[i].nflavors; f++)
			for (size_t r = 0; r < g[i].flavors[f].nres; r++) {
				const struct resource_quota *rq =
					&g[i].flavors[f].res[r];
				size_t k = fr_index(st, g[i].flavors[f].name,
						    rq->name);
				struct quota *q = &n->q[k];

				q->declared = true;
				q->nominal = add_sat(q->nominal, rq->nominal);
				q->borrow = rq->has_borrowing ? rq->borrowing :
								UNLIMITED;
				q->lend = rq->has_lending ? rq->lending :
							    UNLIMITED;
			}
}

static void groups_frs(struct state *st, const struct resource_group *g,
		       size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		for (size_t f = 0; f < g[i].nflavors; f++)
			for (size_t r = 0; r < g[i].flavors[f].nres; r++)
				(void)fr_index(st, g[i].flavors[f].name,
					       g[i].flavors[f].res[r].name);
}

/* Registers every fr first, so the per-node arrays have their size. */
static void collect_frs(struct state *st)
{
	for (size_t i = 0; i < st->ncq; i++)
		groups_frs(st, st->cqs[i].groups, st->cqs[i].ngroups);
	for (size_t i = 0; i < st->ncoh; i++)
		groups_frs(st, st->cohorts[i].groups, st->cohorts[i].ngroups);
	for (size_t i = 0; i < st->nwl; i++) {
		const struct admission *a = &st->wls[i].admission;

		if (!st->wls[i].has_admission)
			continue;
		for (size_t p = 0; p < a->npsa; p++) {
			const struct pod_set_assignment *psa = &a->psa[p];

			for (size_t r = 0; r < psa->usage.n; r++) {
				const char *res = psa->usage.v[r].name;
				const char *fl = smap_get(&psa->flavors, res);

				if (fl)
					(void)fr_index(st, fl, res);
			}
		}
	}
}

static void alloc_arrays(struct state *st)
{
	for (size_t i = 0; i < st->nnode; i++) {
		struct node *n = &st->nodes[i];

		n->q = xcalloc(st->nfr ? st->nfr : 1, sizeof(*n->q));
		n->usage = xcalloc(st->nfr ? st->nfr : 1, sizeof(int64_t));
		n->admitted = xcalloc(st->nfr ? st->nfr : 1, sizeof(int64_t));
		n->subtree = xcalloc(st->nfr ? st->nfr : 1, sizeof(int64_t));
		n->local = xcalloc(st->nfr ? st->nfr : 1, sizeof(int64_t));
		for (size_t k = 0; k < st->nfr; k++)
			n->q[k].borrow = n->q[k].lend = UNLIMITED;
	}
}

/* Steps 1-3: nodes, parents, cycles and depths. */
static void build_tree(struct state *st)
{
	size_t ncq = st->ncq;

	/* 1. ClusterQueues first (index == st->cqs index), then Cohorts,
	 *    then the implicit cohorts that only a name refers to. */
	for (size_t i = 0; i < ncq; i++) {
		struct node *n = node_add(st, "ClusterQueue",
					  st->cqs[i].meta.name);

		n->cq = &st->cqs[i];
		n->parent_name = st->cqs[i].cohort;
	}
	for (size_t i = 0; i < st->ncoh; i++)
		node_add(st, "Cohort", st->cohorts[i].meta.name)->parent_name =
			st->cohorts[i].parent;
	for (size_t i = 0; i < st->nnode; i++) {
		const char *pn = st->nodes[i].parent_name;
		struct node *n;

		if (!pn || !*pn || node_find(st, "Cohort", pn) >= 0)
			continue;
		n = node_add(st, "Cohort", NULL);
		n->implicit_name = xstrdup(pn);
		n->name = n->implicit_name;
	}
	collect_frs(st);
	alloc_arrays(st);
	st->frozen = true;
	for (size_t i = 0; i < ncq; i++)
		add_groups(st, &st->nodes[i], st->cqs[i].groups,
			   st->cqs[i].ngroups);
	for (size_t i = 0; i < st->ncoh; i++)
		add_groups(st, &st->nodes[ncq + i], st->cohorts[i].groups,
			   st->cohorts[i].ngroups);

	/* 2. Parents. */
	for (size_t i = 0; i < st->nnode; i++) {
		const char *pn = st->nodes[i].parent_name;

		if (pn && *pn)
			st->nodes[i].parent = node_find(st, "Cohort", pn);
	}

	/* 3. A chain longer than the node count never reaches a root: the
	 *    node is in a cycle or below one (Kueue disables all of them). */
	for (size_t i = 0; i < st->nnode; i++) {
		int p = st->nodes[i].parent, d = 0;

		while (p >= 0 && (size_t)d <= st->nnode) {
			p = st->nodes[p].parent;
			d++;
		}
		st->nodes[i].depth = d;
		st->nodes[i].cyclic = p >= 0;
		if (st->nodes[i].cyclic && !st->nodes[i].cq)
			fprintf(stderr, "cueue-invariants: note: cohort %s is "
				"in a cycle or below one: its tree is not "
				"checked\n", st->nodes[i].name);
	}
}

/*
 * DRA: each pod's claim templates' devices, as the mapped quota resources
 * (the manager's resources.deviceClassMappings, --config). An admitted
 * pod set whose claims cannot be counted (a claim by name, a missing
 * template, an unmapped class, allocationMode All, firstAvailable) is
 * itself a violation: such a workload must never be admitted. Written
 * apart from controller/manager_dra.c, so that a bug there shows here.
 */
static int add_claims(struct state *st, const struct workload *w,
		      const struct pod_set *ps, struct reslist *want,
		      struct err *err)
{
	for (size_t j = 0; j < ps->tmpl.nclaims; j++) {
		const struct pod_claim *c = &ps->tmpl.claims[j];
		const json_t *t, *reqs, *r;
		char *key;
		size_t i;

		if (c->claim_name)
			return err_set(err, "admitted with a claim by name "
				       "(%s)", c->claim_name);
		if (!c->template_name)
			continue;
		key = xasprintf("%s/%s", w->meta.namespace ? w->meta.namespace
							   : "",
				c->template_name);
		t = json_object_get(st->rcts, key);
		free(key);
		if (!t)
			return err_set(err, "admitted with claim template %s, "
				       "which does not exist",
				       c->template_name);
		reqs = json_object_get(json_object_get(json_object_get(
			json_object_get(t, "spec"), "spec"), "devices"),
			"requests");
		json_array_foreach(reqs, i, r) {
			const json_t *ex = json_object_get(r, "exactly");
			const char *cls, *res, *mode;
			json_int_t n = 1;

			if (!json_is_object(ex))
				return err_set(err, "admitted with claim "
					       "template %s: request %zu has "
					       "no exactly", c->template_name,
					       i);
			if (json_is_true(json_object_get(ex, "adminAccess")))
				continue;
			mode = json_string_value(json_object_get(
				ex, "allocationMode"));
			if (mode && strcmp(mode, "ExactCount"))
				return err_set(err, "admitted with claim "
					       "template %s: allocationMode "
					       "%s", c->template_name, mode);
			if (json_is_integer(json_object_get(ex, "count")))
				n = json_integer_value(json_object_get(ex,
								      "count"));
			cls = json_string_value(json_object_get(
				ex, "deviceClassName"));
			if (!cls || !*cls || n <= 0)
				continue;
			res = smap_get(&st->dra_map, cls);
			if (!res)
				return err_set(err, "admitted with claim "
					       "template %s: class %s is not "
					       "mapped", c->template_name, cls);
			if (n > INT64_MAX / 1000 ||
			    reslist_add(want, res, (int64_t)n * 1000, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* (c) for one assignment: resourceUsage == count x per-pod requests. */
static void check_assignment(struct state *st, const struct workload *w,
			     const struct pod_set_assignment *psa)
{
	const char *ns = w->meta.namespace ? w->meta.namespace : "";
	const char *name = w->meta.name ? w->meta.name : "?";
	const struct pod_set *ps = NULL;
	struct reslist want = RESLIST_INIT;
	struct err err = { "" };
	char b1[QUANTITY_BUF], b2[QUANTITY_BUF];

	for (size_t s = 0; s < w->npod_sets; s++)
		if (psa->name && w->pod_sets[s].name &&
		    !strcmp(psa->name, w->pod_sets[s].name))
			ps = &w->pod_sets[s];
	if (!ps) {
		violation(st, "Workload %s/%s: podSetAssignment %s names no "
			  "pod set", ns, name, psa->name ? psa->name : "?");
		return;
	}
	if (pod_requests(&ps->tmpl, &want, &err) < 0 ||
	    (res_policy_apply(&st->policy, &want), 0) ||
	    add_claims(st, w, ps, &want, &err) < 0 ||
	    reslist_scale(&want, psa->has_count ? psa->count : ps->count,
			  &err) < 0) {
		violation(st, "Workload %s/%s: pod set %s: %s", ns, name,
			  ps->name, err.msg);
		goto out;
	}
	/* both lists are sorted by name: walk them together */
	for (size_t i = 0, j = 0; i < want.n || j < psa->usage.n;) {
		int c = i == want.n ? 1 : j == psa->usage.n ? -1 :
			strcmp(want.v[i].name, psa->usage.v[j].name);
		const char *rn = c <= 0 ? want.v[i].name :
					  psa->usage.v[j].name;
		int64_t x = c <= 0 ? want.v[i++].milli : 0;
		int64_t y = c >= 0 ? psa->usage.v[j++].milli : 0;

		if (x != y)
			violation(st, "Workload %s/%s: pod set %s: "
				  "resourceUsage %s is %s, count x requests "
				  "is %s", ns, name, ps->name, rn,
				  fmtq(rn, y, b1), fmtq(rn, x, b2));
	}
out:
	reslist_release(&want);
}

/* Adds one assignment's usage to ClusterQueue node cq. */
static void charge_assignment(struct state *st, const struct workload *w,
			      const struct pod_set_assignment *psa,
			      struct node *cq, bool admitted)
{
	const char *ns = w->meta.namespace ? w->meta.namespace : "";
	const char *name = w->meta.name ? w->meta.name : "?";

	for (size_t r = 0; r < psa->usage.n; r++) {
		const char *rn = psa->usage.v[r].name;
		const char *fl = smap_get(&psa->flavors, rn);
		size_t k;

		if (!fl) {
			if (psa->usage.v[r].milli)
				violation(st, "Workload %s/%s: pod set %s: no "
					  "flavor for %s", ns, name,
					  psa->name ? psa->name : "?", rn);
			continue;
		}
		k = fr_index(st, fl, rn);
		cq->usage[k] = add_sat(cq->usage[k], psa->usage.v[r].milli);
		if (admitted)
			cq->admitted[k] = add_sat(cq->admitted[k],
						  psa->usage.v[r].milli);
	}
}

/* Step 4: every reservation's usage onto its ClusterQueue, with check (c). */
static void add_workloads(struct state *st)
{
	for (size_t i = 0; i < st->nwl; i++) {
		const struct workload *w = &st->wls[i];
		const char *ns = w->meta.namespace ? w->meta.namespace : "";
		const char *name = w->meta.name ? w->meta.name : "?";
		const struct admission *a = &w->admission;
		bool adm = conditions_is_true(&w->conds, "Admitted");
		int cq;

		if (adm && !conditions_is_true(&w->conds, "QuotaReserved"))
			violation(st, "Workload %s/%s: Admitted=True without "
				  "QuotaReserved=True", ns, name);
		if (!holds_quota(w))
			continue;
		if (!w->has_admission || !a->cluster_queue) {
			violation(st, "Workload %s/%s: QuotaReserved=True "
				  "without status.admission", ns, name);
			continue;
		}
		cq = node_find(st, "ClusterQueue", a->cluster_queue);
		if (cq < 0) {
			violation(st, "Workload %s/%s: admitted to "
				  "ClusterQueue %s, which does not exist", ns,
				  name,
				  a->cluster_queue);
			continue;
		}
		st->nodes[cq].nreserving++;
		if (adm)
			st->nodes[cq].nadmitted++;
		if (a->npsa != w->npod_sets)
			violation(st, "Workload %s/%s: %zu podSetAssignments "
				  "for %zu pod sets", ns, name, a->npsa,
				  w->npod_sets);
		for (size_t p = 0; p < a->npsa; p++) {
			check_assignment(st, w, &a->psa[p]);
			charge_assignment(st, w, &a->psa[p], &st->nodes[cq],
					  adm);
		}
	}
}

/* Step 5: subtree quotas and cohort usage, deepest nodes first. */
static void propagate(struct state *st)
{
	int maxd = 0;

	for (size_t i = 0; i < st->nnode; i++)
		if (!st->nodes[i].cyclic && st->nodes[i].depth > maxd)
			maxd = st->nodes[i].depth;
	for (size_t i = 0; i < st->nnode; i++)
		for (size_t k = 0; k < st->nfr; k++)
			st->nodes[i].subtree[k] = st->nodes[i].q[k].nominal;
	for (int d = maxd; d >= 0; d--)
		for (size_t i = 0; i < st->nnode; i++) {
			struct node *n = &st->nodes[i], *p;

			if (n->cyclic || n->depth != d)
				continue;
			for (size_t k = 0; k < st->nfr; k++) {
				int64_t lend = n->q[k].lend;

				/* never lent: what the lending limit
				 * keeps back (nothing at a root) */
				n->local[k] = lend == UNLIMITED ||
					n->parent < 0 ? 0 :
					max0(n->subtree[k] - lend);
			}
			if (n->parent < 0)
				continue;
			p = &st->nodes[n->parent];
			for (size_t k = 0; k < st->nfr; k++) {
				p->subtree[k] = add_sat(p->subtree[k],
					n->subtree[k] - n->local[k]);
				p->usage[k] = add_sat(p->usage[k],
					max0(n->usage[k] - n->local[k]));
			}
		}
}

/* Step 6: checks (a) and (b) for node n on fr k. */
static void check_node(struct state *st, const struct node *n, size_t k)
{
	char b1[QUANTITY_BUF], b2[QUANTITY_BUF], b3[QUANTITY_BUF];
	char b4[QUANTITY_BUF];
	const char *fl = st->frs[k].flavor, *rn = st->frs[k].resource;
	bool is_cq = n->cq != NULL;
	bool has_parent = n->parent_name && *n->parent_name;
	int64_t u = n->usage[k], s = n->subtree[k], b = n->q[k].borrow;

	if (u == 0)
		return;
	if (is_cq && !n->q[k].declared) {
		violation(st, "ClusterQueue %s: flavor %s resource %s: usage "
			  "%s, but the ClusterQueue has no quota for it",
			  n->name, fl, rn, fmtq(rn, u, b1));
		return;
	}
	/* a cohort in a cycle has no meaningful subtree; a ClusterQueue
	 * below one still has its own nominal and borrowingLimit */
	if (n->cyclic && !is_cq)
		return;
	if (!has_parent && u > s)
		violation(st, "%s %s: flavor %s resource %s: usage %s exceeds "
			  "%s %s", n->kind, n->name, fl, rn, fmtq(rn, u, b1),
			  is_cq ? "nominal quota" : "subtree quota",
			  fmtq(rn, s, b2));
	else if (has_parent && b != UNLIMITED && u > add_sat(s, b))
		violation(st, "%s %s: flavor %s resource %s: usage %s exceeds "
			  "%s %s + borrowingLimit %s = %s", n->kind, n->name,
			  fl, rn, fmtq(rn, u, b1),
			  is_cq ? "nominal" : "subtree quota", fmtq(rn, s, b2),
			  fmtq(rn, b, b3), fmtq(rn, add_sat(s, b), b4));
}

static void check_quotas(struct state *st)
{
	for (size_t i = 0; i < st->nnode; i++)
		for (size_t k = 0; k < st->nfr; k++)
			check_node(st, &st->nodes[i], k);
}

/* --counts: what the e2e polling loop reads. */
static void print_counts(const struct state *st)
{
	size_t hold = 0, adm = 0, fin = 0, pend = 0, unmarked = 0;
	for (size_t i = 0; i < st->nwl; i++) {
		const struct workload *w = &st->wls[i];

		if (conditions_is_true(&w->conds, "Finished"))
			fin++;
		else if (holds_quota(w))
			hold++;
		else if (conditions_find(&w->conds, "QuotaReserved"))
			pend++;
		else
			unmarked++;
		if (holds_quota(w) && conditions_is_true(&w->conds, "Admitted"))
			adm++;
	}
	printf("counts: workloads=%zu holding=%zu admitted=%zu finished=%zu "
	       "pending=%zu unmarked=%zu\n", st->nwl, hold, adm, fin, pend,
	       unmarked);
	printf("holding:");
	for (size_t i = 0; i < st->nwl; i++)
		if (holds_quota(&st->wls[i])) {
			printf(" %s", st->wls[i].meta.name);
		}
	printf("\n");
}

/* ------------------------------------------------------------------ */
/* (d) status, for a quiet cluster */

static int64_t status_total(const struct flavor_usage *u, size_t n,
			    const char *flavor, const char *resource,
			    int64_t *borrowed)
{
	*borrowed = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(u[i].name, flavor) != 0)
			continue;
		for (size_t r = 0; r < u[i].nres; r++)
			if (!strcmp(u[i].res[r].name, resource)) {
				*borrowed = u[i].res[r].borrowed;
				return u[i].res[r].total;
			}
	}
	return 0;
}

static void check_counts(struct state *st, const char *what,
			 const char *field, int32_t have, int want)
{
	if (have != want)
		violation(st, "%s: status.%s is %" PRId32 ", the workloads "
			  "say %d", what, field, have, want);
}

/* One ClusterQueue status list (u, nu) against the workloads' totals. */
static void check_usage_list(struct state *st, const char *what,
			     const char *field, const struct flavor_usage *u,
			     size_t nu, const struct node *n,
			     const int64_t *want)
{
	char b1[QUANTITY_BUF], b2[QUANTITY_BUF];

	for (size_t k = 0; k < st->nfr; k++) {
		const char *fl = st->frs[k].flavor;
		const char *rn = st->frs[k].resource;
		int64_t bor, total = status_total(u, nu, fl, rn, &bor);
		/* borrowed: forced to 0 without a cohort (kueue-api.md) */
		int64_t wb = n->parent < 0 ? 0 :
			max0(want[k] - n->q[k].nominal);

		if (total != want[k])
			violation(st, "%s: status.%s %s/%s total is %s, the "
				  "workloads say %s", what, field, fl, rn,
				  fmtq(rn, total, b1), fmtq(rn, want[k], b2));
		else if (bor != wb)
			violation(st, "%s: status.%s %s/%s borrowed is %s, "
				  "want %s", what, field, fl, rn,
				  fmtq(rn, bor, b1), fmtq(rn, wb, b2));
	}
}

static void check_status(struct state *st)
{
	int *lq_pending = xcalloc(st->nlq + 1, sizeof(int));
	int *lq_res = xcalloc(st->nlq + 1, sizeof(int));
	int *lq_adm = xcalloc(st->nlq + 1, sizeof(int));

	/* pending / per-LocalQueue counts through spec.queueName */
	for (size_t i = 0; i < st->nwl; i++) {
		const struct workload *w = &st->wls[i];
		const struct local_queue *lq = NULL;
		size_t l;
		int cq;

		if (!w->queue_name || conditions_is_true(&w->conds, "Finished"))
			continue;
		for (l = 0; l < st->nlq; l++)
			if (st->lqs[l].meta.name && w->meta.namespace &&
			    st->lqs[l].meta.namespace &&
			    !strcmp(st->lqs[l].meta.name, w->queue_name) &&
			    !strcmp(st->lqs[l].meta.namespace,
				    w->meta.namespace)) {
				lq = &st->lqs[l];
				break;
			}
		if (!lq)
			continue;
		if (holds_quota(w)) {
			lq_res[l]++;
			if (conditions_is_true(&w->conds, "Admitted"))
				lq_adm[l]++;
			continue;
		}
		if (!w->active ||
		    conditions_is_true(&w->conds, "QuotaReserved"))
			continue;
		lq_pending[l]++;
		cq = lq->cluster_queue ?
			node_find(st, "ClusterQueue", lq->cluster_queue) : -1;
		if (cq >= 0)
			st->nodes[cq].npending++;
	}
	for (size_t i = 0; i < st->ncq; i++) {
		const struct cluster_queue *cq = &st->cqs[i];
		const struct node *n = &st->nodes[i];
		char *what = xasprintf("ClusterQueue %s", n->name);

		check_counts(st, what, "reservingWorkloads", cq->reserving,
			     n->nreserving);
		check_counts(st, what, "admittedWorkloads", cq->admitted,
			     n->nadmitted);
		if (st->nlq)
			check_counts(st, what, "pendingWorkloads", cq->pending,
				     n->npending);
		check_usage_list(st, what, "flavorsReservation",
				 cq->reservation, cq->nreservation, n,
				 n->usage);
		check_usage_list(st, what, "flavorsUsage", cq->usage,
				 cq->nusage, n, n->admitted);
		free(what);
	}
	for (size_t l = 0; l < st->nlq; l++) {
		const struct local_queue *lq = &st->lqs[l];
		const char *ns = lq->meta.namespace ? lq->meta.namespace : "";
		char *what = xasprintf("LocalQueue %s/%s", ns,
				       lq->meta.name ? lq->meta.name : "?");

		check_counts(st, what, "pendingWorkloads", lq->pending,
			     lq_pending[l]);
		check_counts(st, what, "reservingWorkloads", lq->reserving,
			     lq_res[l]);
		check_counts(st, what, "admittedWorkloads", lq->admitted,
			     lq_adm[l]);
		free(what);
	}
	free(lq_pending);
	free(lq_res);
	free(lq_adm);
}

/* Whether this copy of a Job can run pods: pods active, or unsuspended
 * and not Complete or Failed. */
static bool job_copy_runs(const struct job *j)
{
	if (j->active > 0)
		return true;
	return !j->suspend && !conditions_is_true(&j->conds, "Complete") &&
	       !conditions_is_true(&j->conds, "Failed");
}

/* The admitted pod count of w's first pod set, or -1. */
static int32_t admitted_count(const struct workload *w)
{
	if (!w->has_admission || !w->admission.npsa)
		return -1;
	if (w->admission.psa[0].has_count)
		return w->admission.psa[0].count;
	return w->npod_sets ? w->pod_sets[0].count : -1;
}

/*
 * (e) Jobs: a managed batch/v1 Job that runs (in every copy the input
 * holds of it, all of one metadata.generation: list the Jobs before and
 * after the other kinds, so a Job caught between its Workload's change
 * and its own, or stopped and started again in between, is not taken
 * for running) has a Workload it owns that holds quota in a known
 * ClusterQueue, admitted for at least the pods it runs: max(active
 * pods, min(parallelism, completions)) when unsuspended.
 */
static void check_jobs(struct state *st)
{
	for (size_t i = 0; i < st->njob; i++) {
		const struct job *j = &st->jobs[i];
		const struct workload *found = NULL;
		bool runs = true, seen = false;
		int32_t want = 0, have;

		if (!smap_get(&j->meta.labels, "kueue.x-k8s.io/queue-name"))
			continue;
		/* only the first copy of each uid is checked */
		for (size_t k = 0; k < i && !seen; k++)
			seen = j->meta.uid && st->jobs[k].meta.uid &&
			       !strcmp(st->jobs[k].meta.uid, j->meta.uid);
		if (seen)
			continue;
		for (size_t k = i; k < st->njob; k++) {
			const struct job *c = &st->jobs[k];
			int32_t n = c->active;

			if (k != i && (!c->meta.uid || !j->meta.uid ||
				       strcmp(c->meta.uid, j->meta.uid)))
				continue;
			/* a copy of another generation: the Job's spec
			 * moved between the lists (suspended and started
			 * again, say), so it did not run throughout */
			runs = runs && job_copy_runs(c) &&
			       c->meta.generation == j->meta.generation;
			if (!c->suspend) {
				int32_t p = c->has_parallelism ?
					    c->parallelism : 1;

				if (c->has_completions && c->completions < p)
					p = c->completions;
				if (p > n)
					n = p;
			}
			if (n > want)
				want = n;
		}
		if (!runs)
			continue;
		for (size_t w = 0; w < st->nwl && !found; w++) {
			const struct object_meta *m = &st->wls[w].meta;

			for (size_t o = 0; o < m->nowners; o++)
				if (m->owners[o].uid && j->meta.uid &&
				    !strcmp(m->owners[o].uid, j->meta.uid) &&
				    holds_quota(&st->wls[w]))
					found = &st->wls[w];
		}
		if (!found) {
			violation(st, "Job %s/%s runs without a Workload "
				  "holding quota", j->meta.namespace,
				  j->meta.name);
			continue;
		}
		have = admitted_count(found);
		if (have < want)
			violation(st, "Job %s/%s runs %d pods on Workload %s "
				  "admitted for %d", j->meta.namespace,
				  j->meta.name, want, found->meta.name, have);
	}
}

static void state_release(struct state *st)
{
	for (size_t i = 0; i < st->ncq; i++)
		cluster_queue_release(&st->cqs[i]);
	for (size_t i = 0; i < st->ncoh; i++)
		cohort_release(&st->cohorts[i]);
	for (size_t i = 0; i < st->nwl; i++)
		workload_release(&st->wls[i]);
	for (size_t i = 0; i < st->nlq; i++)
		local_queue_release(&st->lqs[i]);
	for (size_t i = 0; i < st->njob; i++)
		job_release(&st->jobs[i]);
	for (size_t i = 0; i < st->nnode; i++) {
		struct node *n = &st->nodes[i];

		free(n->implicit_name);
		free(n->q);
		free(n->usage);
		free(n->admitted);
		free(n->subtree);
		free(n->local);
	}
	free(st->cqs);
	free(st->cohorts);
	free(st->wls);
	free(st->lqs);
	free(st->jobs);
	free(st->frs);
	free(st->nodes);
	res_policy_release(&st->policy);
	smap_release(&st->dra_map);
	json_decref(st->rcts);
}

int main(int argc, char **argv)
{
	struct state st;
	const char *path = NULL;
	int rc;

	memset(&st, 0, sizeof(st));
	json_set_alloc_funcs(xmalloc, free);
	st.rcts = json_object();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--status")) {
			st.check_status = true;
		} else if (!strcmp(argv[i], "--counts")) {
			st.counts = true;
		} else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			struct config c;
			struct err err = { "" };

			if (config_load_file(argv[++i], &c, &err) < 0) {
				fprintf(stderr, "cueue-invariants: %s\n",
					err.msg);
				return 2;
			}
			config_res_policy(&c, &st.policy);
			for (size_t k = 0;
			     k < c.res_device_class_mappings.n; k++) {
				const struct config_device_class_mapping *d =
					&c.res_device_class_mappings.v[k];

				for (size_t x = 0; x < d->device_classes.n;
				     x++)
					if (!smap_get(&st.dra_map,
						      d->device_classes.v[x]))
						smap_set(&st.dra_map,
							 d->device_classes.v[x],
							 d->name);
			}
			config_release(&c);
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "usage: cueue-invariants [--status] "
				"[--counts] [--config FILE] [FILE]\n");
			return 2;
		} else if (strcmp(argv[i], "-") != 0) {
			path = argv[i];
		}
	}
	if (load(&st, path) < 0) {
		state_release(&st);
		return 2;
	}
	if (st.counts)
		print_counts(&st);
	build_tree(&st);
	add_workloads(&st);
	propagate(&st);
	check_quotas(&st);
	check_jobs(&st);
	if (st.check_status)
		check_status(&st);
	if (st.nviolations) {
		printf("invariants: %zu violation%s (%zu clusterqueues, %zu "
		       "workloads)\n", st.nviolations,
		       st.nviolations == 1 ? "" : "s", st.ncq, st.nwl);
		rc = 1;
	} else {
		printf("invariants: ok (%zu clusterqueues, %zu workloads)\n",
		       st.ncq, st.nwl);
		rc = 0;
	}
	state_release(&st);
	return rc;
}
