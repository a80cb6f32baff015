/*
 * sched_afs: admission fair sharing (Kueue's UsageBasedAdmissionFairSharing,
 * KEP 4136): inside a ClusterQueue with admissionScope.admissionMode
 * UsageBasedAdmissionFairSharing, pending workloads are ordered first by
 * their LocalQueue's decayed past usage, scaled by resource weights and
 * divided by the LocalQueue's weight (the lower first), then as usual.
 *
 * DESIGN
 * Each LocalQueue record keeps, per resource, its consumed history
 * (milli-units, decayed: c' = c (1 - a) + u a with a = 1 - 0.5^(t / half
 * life), u the admitted usage now, t the time since the last update) and
 * the entry penalties of workloads admitted since (requests x a(sampling
 * interval)), which stand in for their usage until the next settlement,
 * so a burst of admissions from one LocalQueue cannot all jump the queue
 * before the history shows them. A penalty is settled (the history
 * decayed, the penalty added) when its workload is seen Admitted, and
 * dropped when the workload leaves without that. sched_afs_sample decays
 * every such LocalQueue with its live usage (the manager calls it every
 * usageSamplingInterval and writes the result to the LocalQueue's
 * status.fairSharing.admissionFairSharingStatus); a restarted manager
 * seeds the history back from that status (sched_lq_afs_seed).
 *
 * Queue keys: a change of a LocalQueue's usage marks its ClusterQueue
 * stale; the next round re-keys that queue's items and re-heaps it, O(n)
 * for n pending there (Kueue rebuilds its heap the same way).
 *
 * Time is what the caller says (s->now, or the argument): pure.
 */
#include "flavors/sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "flavors/sched_int.h"

static double alpha(double elapsed_ms, int64_t half_life_ms)
{
	if (half_life_ms <= 0)
		return 0;
	if (elapsed_ms < 0)
		elapsed_ms = 0;
	return 1.0 - pow(0.5, elapsed_ms / (double)half_life_ms);
}

static void lq_grow(struct slq *l, size_t n)
{
	if (l->nafs >= n)
		return;
	l->afs_cons = xrealloc(l->afs_cons, n * sizeof(*l->afs_cons));
	l->afs_pen = xrealloc(l->afs_pen, n * sizeof(*l->afs_pen));
	for (size_t i = l->nafs; i < n; i++)
		l->afs_cons[i] = l->afs_pen[i] = 0;
	l->nafs = n;
}

/* resourceWeights[res] (1 when not listed). */
static double res_weight(const struct sched *s, int32_t res)
{
	const char *name = s->res_idx.key[res];

	for (size_t i = 0; name && i < s->nafs_w; i++)
		if (!strcmp(s->afs_wname[i], name))
			return s->afs_w[i];
	return 1;
}

static int32_t res_of_fr(struct sched *s, int fr)
{
	return sched_res_id(s, tree_fr_resource(s->t, fr));
}

double sched_afs_usage(const struct sched *s, const struct slq *l)
{
	double u = 0;
	int64_t w = l->fs_weight_set ? l->fs_weight : 1000;


	for (size_t r = 0; r < l->nafs; r++) {
		double v = l->afs_cons[r] + l->afs_pen[r];

		if (v != 0)
			u += res_weight(s, (int32_t)r) * v / 1000.0;
	}
	if (w <= 0)
		return INFINITY;
	return u * 1000.0 / (double)w;
}

/* The ClusterQueue of l uses admission fair sharing. */
static bool lq_afs(const struct sched *s, const struct slq *l)
{
	return l->name && l->cq >= 0 && (size_t)l->cq < s->ncq &&
	       s->cqs[l->cq].afs;
}

static void mark(struct sched *s, int32_t lq)
{
	struct slq *l = &s->lqs[lq];

	if (l->cq >= 0)
		s->cqs[l->cq].afs_stale = true;
	sched_dirty_lq(s, lq);
}

/* Decays l's history with its admitted usage now. */
static void decay(struct sched *s, struct slq *l, int64_t now)
{
	double a;

	lq_grow(l, s->res_idx.n);
	if (s->o.afs_half_life_ms <= 0) {
		for (size_t r = 0; r < l->nafs; r++)
			l->afs_cons[r] = 0;
		l->afs_last = now;
		return;
	}
	a = alpha(l->afs_last ? (double)(now - l->afs_last) : 0,
		  s->o.afs_half_life_ms);
	for (size_t r = 0; r < l->nafs; r++)
		l->afs_cons[r] *= 1 - a;
	for (size_t fr = 0; fr < l->nusage; fr++)
		if (l->adm_usage[fr])
			l->afs_cons[res_of_fr(s, (int)fr)] +=
				(double)l->adm_usage[fr] * a;
	if (now > l->afs_last)
		l->afs_last = now;
}

void sched_afs_push(struct sched *s, struct swl *r)
{
	struct slq *l;
	double a;

	if (r->lq < 0 || !s->cqs[r->hold_cq].afs)
		return;
	sched_afs_drop(s, r);
	l = &s->lqs[r->lq];
	a = alpha((double)s->o.afs_sampling_ms, s->o.afs_half_life_ms);
	if (a <= 0)
		return;
	lq_grow(l, s->res_idx.n);
	r->afs_pen = xcalloc(r->nusage ? r->nusage : 1, sizeof(*r->afs_pen));
	for (size_t i = 0; i < r->nusage; i++) {
		int32_t res = res_of_fr(s, r->usage[i].fr);
		double v = (double)r->usage[i].v * a;

		lq_grow(l, (size_t)res + 1);
		r->afs_pen[r->nafs_pen++] = (struct afs_pen){ res, v };
		l->afs_pen[res] += v;
	}
	mark(s, r->lq);
}

void sched_afs_drop(struct sched *s, struct swl *r)
{
	if (!r->afs_pen)
		return;
	if (r->lq >= 0) {
		struct slq *l = &s->lqs[r->lq];

		for (size_t i = 0; i < r->nafs_pen; i++) {
			int32_t res = r->afs_pen[i].res;

			if ((size_t)res < l->nafs) {
				l->afs_pen[res] -= r->afs_pen[i].v;
				if (l->afs_pen[res] < 1e-9)
					l->afs_pen[res] = 0;
			}
		}
		mark(s, r->lq);
	}
	FREE_AND_NULL(r->afs_pen);
	r->nafs_pen = 0;
}

void sched_afs_settle(struct sched *s, struct swl *r)
{
	struct slq *l;

	if (r->lq < 0 || !s->cqs[r->hold_cq].afs)
		return;
	l = &s->lqs[r->lq];
	decay(s, l, s->now);
	for (size_t i = 0; i < r->nafs_pen; i++)
		l->afs_cons[r->afs_pen[i].res] += r->afs_pen[i].v;
	sched_afs_drop(s, r);
	mark(s, r->lq);
}

void sched_afs_sample(struct sched *s, int64_t now_ms)
{
	if (now_ms > s->now)
		s->now = now_ms;
	for (size_t i = 0; i < s->nlq; i++) {
		struct slq *l = &s->lqs[i];

		if (!lq_afs(s, l))
			continue;
		decay(s, l, now_ms);
		mark(s, (int32_t)i);
	}
}

static void rekey(void *ctx, struct qitem *it)
{
	struct sched *s = ctx;
	const struct swl *r = SWL_OF(it);

	it->afs = r->lq >= 0 ? sched_afs_usage(s, &s->lqs[r->lq]) : 0;
}

void sched_afs_refresh(struct sched *s)
{
	for (size_t i = 0; i < s->ncq; i++) {
		struct scq *c = &s->cqs[i];

		if (!c->afs_stale)
			continue;
		c->afs_stale = false;
		if (!c->afs)
			continue;
		queue_visit(&c->q, rekey, s);
		queue_reheap(&c->q);
	}
}

void sched_afs_key(struct sched *s, struct swl *r)
{
	r->qi.afs = r->lq >= 0 && r->cq >= 0 && s->cqs[r->cq].afs
			    ? sched_afs_usage(s, &s->lqs[r->lq])
			    : 0;
}

bool sched_afs_keep(const struct slq *l)
{
	if (l->fs_weight_set || l->fs_bound)
		return true;
	for (size_t r = 0; r < l->nafs; r++)
		if (l->afs_cons[r] >= 0.5 || l->afs_pen[r] > 0)
			return true;
	return false;
}

/* ---- the public part (sched.h) ---- */

bool sched_lq_set_fs(struct sched *s, const char *lq, const char *cq,
		     int64_t milli)
{
	bool keep = (cq && s->o.afs) || milli != 1000;
	int32_t id = sched_lq_find_or_add(s, lq, keep);
	int32_t c = cq ? sched_cq_id(s, cq) : -1;
	struct slq *l;

	if (id < 0)
		return false;
	l = &s->lqs[id];
	if (l->fs_bound == (cq && s->o.afs) &&
	    l->fs_weight_set == (milli != 1000) &&
	    (!l->fs_weight_set || l->fs_weight == milli) &&
	    (c < 0 || l->cq == c))
		return false;
	l->fs_bound = cq && s->o.afs;
	l->fs_weight_set = milli != 1000;
	l->fs_weight = milli;
	if (c >= 0)
		l->cq = c;
	if (l->cq >= 0)
		s->cqs[l->cq].afs_stale = true;
	s->state++;
	sched_dirty_lq(s, id);
	return true;
}

bool sched_lq_afs_seed(struct sched *s, const char *lq,
		       const struct reslist *consumed, int64_t now_ms)
{
	int32_t id = sched_lq_find_or_add(s, lq, true);
	struct slq *l = &s->lqs[id];

	if (l->afs_seeded)
		return false;
	l->afs_seeded = true;
	l->afs_last = now_ms; /* Kueue: the history counts from now */
	for (size_t i = 0; i < consumed->n; i++) {
		int32_t res = sched_res_id(s, consumed->v[i].name);

		lq_grow(l, (size_t)res + 1);
		l->afs_cons[res] += (double)consumed->v[i].milli;
	}
	if (l->cq >= 0)
		s->cqs[l->cq].afs_stale = true;
	s->state++;
	sched_lq_reap(s, id);
	return true;
}

bool sched_lq_afs_status(const struct sched *s, const char *lq,
			 struct reslist *out, int64_t *last_ms)
{
	int32_t id = sched_find_lq(s, lq);
	const struct slq *l;

	reslist_release(out);
	if (id < 0 || !s->o.afs)
		return false;
	l = &s->lqs[id];
	if (!lq_afs(s, l))
		return false;
	for (size_t r = 0; r < l->nafs; r++)
		if (l->afs_cons[r] > 0)
			reslist_set(out, s->res_idx.key[r],
				    (int64_t)llround(l->afs_cons[r]));
	*last_ms = l->afs_last;
	return true;
}

double sched_lq_afs_usage(const struct sched *s, const char *lq)
{
	int32_t id = sched_find_lq(s, lq);

	return id < 0 ? 0 : sched_afs_usage(s, &s->lqs[id]);
}
