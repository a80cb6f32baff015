/*
 * fair: dominant resource shares (see fair.h).
 *
 * DESIGN
 * Flavor x resource ids are grouped by resource name into dense resource
 * indexes, learnt as tree_nfr grows. A share costs one pass over the
 * node's cells (O(nfr)) plus the parent's lendable capacity per
 * resource, which depends on quotas alone: it is computed once per node
 * and kept until tree_quota_gen moves. The struct is meant for one tree
 * (the cache is keyed by node id).
 */
#include "flavors/fair.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

struct fair {
	/* fr id -> resource index; resource names borrowed from the tree */
	int *res_of;
	size_t nfr, capfr;
	const char **rname;
	size_t nres, capres;
	/* lendable cache: lend[node * lstride + r] valid when lgen[node]
	 * is the tree's quota generation + 1 */
	int64_t *lend;
	uint64_t *lgen;
	size_t nnode, lstride;
	uint64_t tgen;
	/* scratch: borrowed per resource */
	int64_t *borrowed;
	size_t capb;
	/* shares by node, valid while (qgen, ustamp) are the tree's */
	struct fair_memo *memo;
	size_t nmemo;
};

struct fair_memo {
	uint64_t qgen;   /* tree_quota_gen + 1 (0: empty) */
	uint64_t ustamp; /* tree_usage_stamp of the node */
	struct fair_drs d;
};

struct fair *fair_new(void)
{
	return xcalloc(1, sizeof(struct fair));
}

void fair_free(struct fair *f)
{
	if (!f)
		return;
	free(f->res_of);
	free(f->rname);
	free(f->lend);
	free(f->lgen);
	free(f->borrowed);
	free(f->memo);
	free(f);
}

/* Learns the resource index of every fr id the tree has. */
static void learn(struct fair *f, const struct tree *t)
{
	size_t n = tree_nfr(t);

	if (n <= f->nfr)
		return;
	if (n > f->capfr)
		XGROW(f->res_of, f->capfr, n);
	for (size_t fr = f->nfr; fr < n; fr++) {
		const char *r = tree_fr_resource(t, (int)fr);
		size_t i;

		for (i = 0; i < f->nres && strcmp(f->rname[i], r); i++)
			;
		if (i == f->nres) {
			if (f->nres == f->capres)
				XGROW(f->rname, f->capres, f->nres + 1);
			f->rname[f->nres++] = r;
		}
		f->res_of[fr] = (int)i;
	}
	f->nfr = n;
	if (f->capb < f->nres) {
		f->borrowed = xrealloc(f->borrowed,
				       f->nres * sizeof(*f->borrowed));
		f->capb = f->nres;
	}
}

/* The lendable capacity per resource below parent p (calculateLendable:
 * PotentialAvailable of p summed over the flavors of each resource). */
static const int64_t *lendable(struct fair *f, const struct tree *t, int p)
{
	uint64_t gen = tree_quota_gen(t) + 1;
	int64_t *l;

	if (f->lstride < f->nres || (size_t)p >= f->nnode) {
		size_t nn = (size_t)p + 1 > f->nnode ? (size_t)p + 1 + 16
						     : f->nnode;
		size_t st = f->nres > f->lstride ? f->nres + 4 : f->lstride;

		free(f->lend);
		f->lend = xmalloc(nn * st * sizeof(*f->lend));
		f->lgen = xrealloc(f->lgen, nn * sizeof(*f->lgen));
		memset(f->lgen, 0, nn * sizeof(*f->lgen));
		f->nnode = nn;
		f->lstride = st;
	}
	l = f->lend + (size_t)p * f->lstride;
	if (f->lgen[p] == gen)
		return l;
	memset(l, 0, f->nres * sizeof(*l));
	for (size_t fr = 0; fr < f->nfr; fr++) {
		int64_t v = tree_node_potential(t, p, (int)fr);
		int r = f->res_of[fr];

		l[r] = l[r] > INT64_MAX - v ? INT64_MAX : l[r] + v;
	}
	f->lgen[p] = gen;
	return l;
}

static void compute(struct fair *f, const struct tree *t, int node,
		    struct fair_drs *out);

void fair_drs(struct fair *f, const struct tree *t, int node,
	      struct fair_drs *out)
{
	uint64_t q = tree_quota_gen(t) + 1, u = tree_usage_stamp(t, node);
	struct fair_memo *m;

	if ((size_t)node >= f->nmemo) {
		size_t n = tree_node_cap(t) > (size_t)node ? tree_node_cap(t)
							   : (size_t)node + 1;

		f->memo = xrealloc(f->memo, n * sizeof(*f->memo));
		memset(f->memo + f->nmemo, 0,
		       (n - f->nmemo) * sizeof(*f->memo));
		f->nmemo = n;
	}
	m = &f->memo[node];
	if (m->qgen != q || m->ustamp != u) {
		compute(f, t, node, &m->d);
		m->qgen = q;
		m->ustamp = u;
	}
	*out = m->d;
}

/* The share of node now (fair_drs without the memo). */
static void compute(struct fair *f, const struct tree *t, int node,
		    struct fair_drs *out)
{
	int parent = tree_parent(t, node);
	const int64_t *lend;
	bool any = false;

	memset(out, 0, sizeof(*out));
	out->weight = tree_weight(t, node);
	out->dominant = -1;
	if (parent < 0)
		return;
	learn(f, t);
	memset(f->borrowed, 0, f->nres * sizeof(*f->borrowed));
	for (size_t fr = 0; fr < f->nfr; fr++) {
		int64_t u = tree_usage(t, node, (int)fr);
		int64_t q = tree_subtree_quota(t, node, (int)fr);

		if (u > q) {
			f->borrowed[f->res_of[fr]] += u - q;
			any = true;
		}
	}
	if (!any)
		return;
	out->borrowing = true;
	lend = lendable(f, t, parent);
	for (size_t r = 0; r < f->nres; r++) {
		double ratio;

		if (!f->borrowed[r] || lend[r] <= 0)
			continue;
		ratio = (double)f->borrowed[r] * 1000.0 / (double)lend[r];
		/* ties: the alphabetically first resource, as Kueue */
		if (ratio > out->ratio ||
		    (ratio == out->ratio && out->dominant >= 0 &&
		     strcmp(f->rname[r],
			    f->rname[f->res_of[out->dominant]]) < 0)) {
			out->ratio = ratio;
			for (size_t fr = 0; fr < f->nfr; fr++)
				if (f->res_of[fr] == (int)r) {
					out->dominant = (int)fr;
					break;
				}
		}
	}
}

void fair_drs_negative(struct fair_drs *out)
{
	memset(out, 0, sizeof(*out));
	out->ratio = -1;
	out->weight = TREE_WEIGHT_DEFAULT;
	out->dominant = -1;
}

bool fair_borrowing_on(const struct tree *t, int node,
		       const struct fr_val *req, size_t n)
{
	if (tree_parent(t, node) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (req[i].v > 0 && tree_usage(t, node, req[i].fr) >
					    tree_subtree_quota(t, node, req[i].fr))
			return true;
	return false;
}

static bool zero_weight_borrows(const struct fair_drs *d)
{
	return d->weight == 0 && d->ratio != 0;
}

double fair_share(const struct fair_drs *d)
{
	if (d->ratio == 0)
		return 0;
	if (d->weight == 0)
		return INFINITY;
	return d->ratio / ((double)d->weight / 1000.0); /* as Kueue */
}

static int cmp_double(double a, double b)
{
	return a < b ? -1 : a > b;
}

int fair_cmp(const struct fair_drs *a, const struct fair_drs *b)
{
	bool za = zero_weight_borrows(a), zb = zero_weight_borrows(b);

	if (za && zb)
		return cmp_double(a->ratio, b->ratio);
	if (za)
		return 1;
	if (zb)
		return -1;
	return cmp_double(fair_share(a), fair_share(b));
}

int64_t fair_share_rounded(const struct fair_drs *d)
{
	double v;

	if (zero_weight_borrows(d))
		return INT64_MAX;
	v = ceil(fair_share(d));
	if (!(v < 9.2e18))
		return INT64_MAX;
	return v < 0 ? 0 : (int64_t)v;
}
