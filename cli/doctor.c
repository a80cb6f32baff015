/*
 * doctor: the queueing setup's silent misconfigurations (doctor.h).
 */
#include "cli/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "flavors/explain.h"
#include "flavors/sched.h"
#include "model/placement.h"
#include "model/selector.h"

static const char *const sev_names[] = { "info", "warning", "error" };

const char *doctor_sev_name(enum doctor_sev s)
{
	return (size_t)s < 3 ? sev_names[s] : "unknown";
}

void doctor_report_release(struct doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].object);
		free(r->v[i].message);
		free(r->v[i].fix);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

size_t doctor_count(const struct doctor_report *r, const char *check)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += !strcmp(r->v[i].check, check);
	return n;
}

static void add(struct doctor_report *r, enum doctor_sev sev,
		const char *check, char *object, char *message, char *fix)
{
	struct doctor_finding *f;

	if (r->n == r->cap)
		XGROW(r->v, r->cap, r->n + 1);
	f = &r->v[r->n++];
	f->sev = sev;
	f->check = check;
	f->object = object;
	f->message = message;
	f->fix = fix;
}

static bool has_rf(const struct doctor_input *in, const char *name)
{
	for (size_t i = 0; i < in->nrf; i++)
		if (in->rfs[i]->meta.name && !strcmp(in->rfs[i]->meta.name, name))
			return true;
	return false;
}

static const struct cluster_queue *find_cq(const struct doctor_input *in,
					   const char *name)
{
	for (size_t i = 0; i < in->ncq; i++)
		if (in->cqs[i]->meta.name && !strcmp(in->cqs[i]->meta.name, name))
			return in->cqs[i];
	return NULL;
}

static const struct cohort *find_cohort(const struct doctor_input *in,
					const char *name)
{
	for (size_t i = 0; i < in->ncohort; i++)
		if (in->cohorts[i]->meta.name &&
		    !strcmp(in->cohorts[i]->meta.name, name))
			return in->cohorts[i];
	return NULL;
}

/* Names in groups that are no ResourceFlavor, ", " separated; NULL. */
static char *missing_flavors(const struct doctor_input *in,
			     const struct resource_group *g, size_t ng)
{
	struct sbuf b = SBUF_INIT;
	char *out = NULL;

	for (size_t i = 0; i < ng; i++)
		for (size_t k = 0; k < g[i].nflavors; k++) {
			const char *n = g[i].flavors[k].name;

			if (!n || has_rf(in, n))
				continue;
			sbuf_addf(&b, "%s%s", b.len ? ", " : "", n);
		}
	if (b.len)
		out = xstrdup(b.buf);
	sbuf_release(&b);
	return out;
}

static void check_flavors(const struct doctor_input *in,
			  struct doctor_report *r)
{
	for (size_t i = 0; i < in->ncq; i++) {
		const struct cluster_queue *cq = in->cqs[i];
		char *m = missing_flavors(in, cq->groups, cq->ngroups);

		if (!m)
			continue;
		add(r, DOC_ERROR, "missing-flavor",
		    xasprintf("ClusterQueue/%s", cq->meta.name),
		    xasprintf("references missing ResourceFlavor(s) %s: the "
			      "queue is inactive and admits nothing", m),
		    xasprintf("create ResourceFlavor(s) %s, or remove them "
			      "from spec.resourceGroups", m));
		free(m);
	}
	for (size_t i = 0; i < in->ncohort; i++) {
		const struct cohort *co = in->cohorts[i];
		char *m = missing_flavors(in, co->groups, co->ngroups);

		if (!m)
			continue;
		add(r, DOC_ERROR, "missing-flavor",
		    xasprintf("Cohort/%s", co->meta.name),
		    xasprintf("references missing ResourceFlavor(s) %s", m),
		    xasprintf("create ResourceFlavor(s) %s, or remove them "
			      "from spec.resourceGroups", m));
		free(m);
	}
}

static void check_lq_targets(const struct doctor_input *in,
			     struct doctor_report *r)
{
	for (size_t i = 0; i < in->nlq; i++) {
		const struct local_queue *lq = in->lqs[i];

		if (!lq->cluster_queue || find_cq(in, lq->cluster_queue))
			continue;
		add(r, DOC_ERROR, "missing-clusterqueue",
		    xasprintf("LocalQueue/%s/%s", lq->meta.namespace,
			      lq->meta.name),
		    xasprintf("points at ClusterQueue %s, which does not "
			      "exist: its workloads wait as Inadmissible",
			      lq->cluster_queue),
		    xasprintf("create ClusterQueue %s, or set "
			      "spec.clusterQueue to an existing one",
			      lq->cluster_queue));
	}
}

static void check_cq_state(const struct doctor_input *in,
			   struct doctor_report *r)
{
	for (size_t i = 0; i < in->ncq; i++) {
		const struct cluster_queue *cq = in->cqs[i];
		struct sched_cq_status st;

		if (in->cq_invalid && in->cq_invalid[i]) {
			add(r, DOC_ERROR, "invalid-clusterqueue",
			    xasprintf("ClusterQueue/%s", cq->meta.name),
			    xasprintf("fails validation: %s",
				      in->cq_invalid[i]),
			    xstrdup("correct the fields named"));
			continue;
		}
		if (!in->s)
			continue;
		sched_cq_status(in->s, cq->meta.name, &st);
		if (!st.exists || st.active)
			continue;
		if (st.reason && !strcmp(st.reason, "Stopped")) {
			add(r, DOC_INFO, "stopped-clusterqueue",
			    xasprintf("ClusterQueue/%s", cq->meta.name),
			    xstrdup("spec.stopPolicy holds it: it admits "
				    "nothing"),
			    xstrdup("set spec.stopPolicy: None to resume"));
			continue;
		}
		if (st.reason && !strcmp(st.reason, "FlavorNotFound"))
			continue; /* missing-flavor says it */
		add(r, DOC_ERROR, "inactive-clusterqueue",
		    xasprintf("ClusterQueue/%s", cq->meta.name),
		    xasprintf("is inactive (%s): %s",
			      st.reason ? st.reason : "",
			      st.message ? st.message : ""),
		    xstrdup("fix what the message names"));
	}
}

static void check_cohort_cycles(const struct doctor_input *in,
				struct doctor_report *r)
{
	for (size_t i = 0; i < in->ncohort; i++) {
		const struct cohort *start = in->cohorts[i], *c = start;
		struct sbuf path = SBUF_INIT;
		bool cycle = false, smallest = true;

		sbuf_addf(&path, "%s", start->meta.name);
		for (size_t step = 0; step <= in->ncohort && c->parent; step++) {
			c = find_cohort(in, c->parent);
			if (!c)
				break;
			sbuf_addf(&path, " -> %s", c->meta.name);
			if (c == start) {
				cycle = true;
				break;
			}
			if (strcmp(c->meta.name, start->meta.name) < 0)
				smallest = false;
		}
		/* one finding per cycle: at its smallest member */
		if (cycle && smallest)
			add(r, DOC_ERROR, "cohort-cycle",
			    xasprintf("Cohort/%s", start->meta.name),
			    xasprintf("spec.parentName forms a cycle (%s): "
				      "the queues under it cannot borrow or "
				      "lend", path.buf),
			    xstrdup("break the cycle: one of these cohorts "
				    "must have another parent, or none"));
		sbuf_release(&path);
	}
}

struct nf_item {
	char *ns, *name;
};

struct nf_list {
	struct nf_item *v;
	size_t n, cap;
};

static bool collect_pending(void *ud, const struct workload *w,
			    const char *lq, int32_t priority, bool parked)
{
	struct nf_list *l = ud;

	(void)lq;
	(void)priority;
	(void)parked;
	if (l->n == l->cap)
		XGROW(l->v, l->cap, l->n + 1);
	l->v[l->n].ns = xstrdup(w->meta.namespace ? w->meta.namespace : "");
	l->v[l->n].name = xstrdup(w->meta.name ? w->meta.name : "");
	l->n++;
	return true;
}

static const char *never_fix(enum sched_xkind k)
{
	switch (k) {
	case SXK_TAINT:
		return "add the toleration to the jobs' pod templates, or give "
		       "the queue a flavor without the taint";
	case SXK_LABEL:
		return "correct the jobs' nodeSelector / node affinity, or the "
		       "flavor's nodeLabels";
	case SXK_NOT_FOUND:
		return "create the missing ResourceFlavor";
	case SXK_UNAVAILABLE:
		return "cover the resource in the queue's resourceGroups";
	case SXK_TOPOLOGY:
		return "cueue does not implement TopologyAwareScheduling yet: "
		       "drop the jobs' topology annotations, or give the "
		       "queue flavors without topologyName (and jobs none)";
	default:
		return "raise nominalQuota or borrowingLimit (or the cohort's "
		       "quota), or make the workloads smaller";
	}
}

static void check_never_fits(const struct doctor_input *in,
			     struct doctor_report *r)
{
	struct sched_explain x = { .position = -1 };

	if (!in->s)
		return;
	for (size_t i = 0; i < in->ncq; i++) {
		const char *cqn = in->cqs[i]->meta.name;
		struct nf_list l = { 0 };
		size_t never = 0;
		char *example = NULL;
		enum sched_xkind kind = SXK_MAX_CAPACITY;

		sched_cq_pending(in->s, cqn, collect_pending, &l);
		for (size_t k = 0; k < l.n; k++) {
			sched_explain_fit(in->s, l.v[k].ns, l.v[k].name,
					  in->now_ms, &x);
			if (x.never_fits) {
				never++;
				if (!example && x.nreasons)
					kind = x.reasons[0].kind;
				if (!example)
					example = xasprintf(
						"%s/%s: %s", l.v[k].ns,
						l.v[k].name,
						x.nreasons ? x.reasons[0].text
							   : x.message);
			}
			free(l.v[k].ns);
			free(l.v[k].name);
		}
		free(l.v);
		if (never)
			add(r, DOC_ERROR, "never-fits",
			    xasprintf("ClusterQueue/%s", cqn),
			    xasprintf("%zu of %zu pending workload(s) can never "
				      "be admitted as the queue is set up (e.g. "
				      "%s)", never, l.n, example),
			    xstrdup(never_fix(kind)));
		free(example);
	}
	sched_explain_release(&x);
}

static void check_selectors(const struct doctor_input *in,
			    struct doctor_report *r)
{
	for (size_t i = 0; i < in->ncq; i++) {
		const struct cluster_queue *cq = in->cqs[i];
		bool any = false;

		if (in->cq_invalid && in->cq_invalid[i])
			continue;
		if (!cq->has_ns_selector) {
			add(r, DOC_WARNING, "selector-matches-nothing",
			    xasprintf("ClusterQueue/%s", cq->meta.name),
			    xstrdup("spec.namespaceSelector is unset (nil): "
				    "it selects no namespace, so no workload "
				    "is ever admitted"),
			    xstrdup("set spec.namespaceSelector: {} for every "
				    "namespace, or a selector for yours"));
			continue;
		}
		if (!in->nns)
			continue; /* namespaces not readable: no verdict */
		for (size_t k = 0; k < in->nns && !any; k++)
			any = label_selector_matches(&cq->ns_selector,
						     in->nss[k].labels);
		if (!any)
			add(r, DOC_WARNING, "selector-matches-nothing",
			    xasprintf("ClusterQueue/%s", cq->meta.name),
			    xstrdup("spec.namespaceSelector selects none of "
				    "the cluster's namespaces: its workloads "
				    "wait with \"Workload namespace doesn't "
				    "match ClusterQueue selector\""),
			    xstrdup("label the teams' namespaces, or correct "
				    "the selector"));
	}
}

/* The ClusterQueue a workload waits in (by its LocalQueue), or NULL. */
static const char *pending_cq(const struct doctor_input *in,
			      const struct workload *w)
{
	if (!w->queue_name || !w->active || workload_holds_quota(w) ||
	    workload_is_finished(w))
		return NULL;
	for (size_t i = 0; i < in->nlq; i++) {
		const struct local_queue *lq = in->lqs[i];

		if (lq->meta.name && !strcmp(lq->meta.name, w->queue_name) &&
		    lq->meta.namespace && w->meta.namespace &&
		    !strcmp(lq->meta.namespace, w->meta.namespace))
			return lq->cluster_queue;
	}
	return NULL;
}

static bool cq_uses_flavor(const struct cluster_queue *cq, const char *rf)
{
	for (size_t g = 0; g < cq->ngroups; g++)
		for (size_t k = 0; k < cq->groups[g].nflavors; k++)
			if (cq->groups[g].flavors[k].name &&
			    !strcmp(cq->groups[g].flavors[k].name, rf))
				return true;
	return false;
}

static bool tolerates(const struct resource_flavor *rf,
		      const struct workload *w)
{
	for (size_t p = 0; p < w->npod_sets; p++) {
		const struct pod_template *t = &w->pod_sets[p].tmpl;

		if (taints_find_untolerated(rf->taints, rf->ntaints, t->tols,
					    t->ntols, rf->tols, rf->ntols))
			return false;
	}
	return true;
}

static void check_taints(const struct doctor_input *in,
			 struct doctor_report *r)
{
	for (size_t i = 0; i < in->nrf; i++) {
		const struct resource_flavor *rf = in->rfs[i];
		const struct taint *t;
		size_t npend = 0, ntol = 0;

		t = taints_find_untolerated(rf->taints, rf->ntaints, NULL, 0,
					    rf->tols, rf->ntols);
		if (!t)
			continue; /* no NoSchedule / NoExecute taint */
		for (size_t k = 0; k < in->nwl; k++) {
			const char *cqn = pending_cq(in, in->wls[k]);
			const struct cluster_queue *cq =
				cqn ? find_cq(in, cqn) : NULL;

			if (!cq || !cq_uses_flavor(cq, rf->meta.name))
				continue;
			npend++;
			ntol += tolerates(rf, in->wls[k]);
		}
		if (!npend || ntol)
			continue;
		add(r, DOC_WARNING, "untolerated-taint",
		    xasprintf("ResourceFlavor/%s", rf->meta.name),
		    xasprintf("none of the %zu pending workload(s) of the "
			      "queues using it tolerates its taint %s%s%s:%s, "
			      "so they can only use other flavors",
			      npend, t->key, *t->value ? "=" : "", t->value,
			      taint_effect_name(t->effect)),
		    xasprintf("add a toleration of %s to the jobs' pod "
			      "templates, or spec.tolerations to the "
			      "ResourceFlavor (Kueue adds them to admitted "
			      "pods)", t->key));
	}
}

/* Every quota of cq: (has, value) of borrowing (lend false) or lending. */
static bool all_limits_zero(const struct cluster_queue *cq, bool lend)
{
	size_t n = 0;

	for (size_t g = 0; g < cq->ngroups; g++)
		for (size_t f = 0; f < cq->groups[g].nflavors; f++)
			for (size_t k = 0; k < cq->groups[g].flavors[f].nres;
			     k++) {
				const struct resource_quota *q =
					&cq->groups[g].flavors[f].res[k];

				if (lend ? !(q->has_lending && q->lending == 0)
					 : !(q->has_borrowing &&
					     q->borrowing == 0))
					return false;
				n++;
			}
	return n > 0;
}

static void check_policies(const struct doctor_input *in,
			   struct doctor_report *r)
{
	for (size_t i = 0; i < in->ncq; i++) {
		const struct cluster_queue *cq = in->cqs[i];

		if (in->cq_invalid && in->cq_invalid[i])
			continue;
		if (!cq->cohort && (cq->reclaim != RWC_NEVER ||
				    cq->borrow_policy != BWC_NEVER)) {
			add(r, DOC_WARNING, "preemption-without-cohort",
			    xasprintf("ClusterQueue/%s", cq->meta.name),
			    xasprintf("spec.preemption.%s is set, but the "
				      "queue has no cohort: it can never "
				      "apply",
				      cq->reclaim != RWC_NEVER
					      ? "reclaimWithinCohort"
					      : "borrowWithinCohort"),
			    xstrdup("put the queue in a cohort "
				    "(spec.cohortName), or drop the policy"));
			continue;
		}
		if (cq->cohort && cq->borrow_policy != BWC_NEVER &&
		    all_limits_zero(cq, false))
			add(r, DOC_WARNING, "borrow-within-cohort-unusable",
			    xasprintf("ClusterQueue/%s", cq->meta.name),
			    xstrdup("spec.preemption.borrowWithinCohort is "
				    "set, but borrowingLimit is 0 on every "
				    "quota: the queue never borrows, so it "
				    "never applies"),
			    xstrdup("raise borrowingLimit, or drop "
				    "borrowWithinCohort"));
		if (cq->cohort && all_limits_zero(cq, true))
			add(r, DOC_WARNING, "nothing-lendable",
			    xasprintf("ClusterQueue/%s", cq->meta.name),
			    xasprintf("lendingLimit is 0 on every quota: it "
				      "lends nothing to cohort %s",
				      cq->cohort),
			    xstrdup("raise lendingLimit, or leave it unset to "
				    "lend all unused quota"));
	}
}

static void check_unused_lqs(const struct doctor_input *in,
			     struct doctor_report *r)
{
	for (size_t i = 0; i < in->nlq; i++) {
		const struct local_queue *lq = in->lqs[i];
		bool used = false;

		for (size_t k = 0; k < in->nwl && !used; k++) {
			const struct workload *w = in->wls[k];

			used = w->queue_name && w->meta.namespace &&
			       !strcmp(w->queue_name, lq->meta.name) &&
			       !strcmp(w->meta.namespace, lq->meta.namespace);
		}
		if (!used)
			add(r, DOC_INFO, "unused-localqueue",
			    xasprintf("LocalQueue/%s/%s", lq->meta.namespace,
				      lq->meta.name),
			    xstrdup("no workload uses it"),
			    xstrdup("label jobs with kueue.x-k8s.io/queue-name "
				    "to use it, or delete it"));
	}
}

static int cmp_finding(const void *pa, const void *pb)
{
	const struct doctor_finding *a = pa, *b = pb;
	int c;

	if (a->sev != b->sev)
		return a->sev > b->sev ? -1 : 1;
	c = strcmp(a->object, b->object);
	return c ? c : strcmp(a->check, b->check);
}

void doctor_run(const struct doctor_input *in, struct doctor_report *out)
{
	doctor_report_release(out);
	check_flavors(in, out);
	check_lq_targets(in, out);
	check_cq_state(in, out);
	check_cohort_cycles(in, out);
	check_never_fits(in, out);
	check_selectors(in, out);
	check_taints(in, out);
	check_policies(in, out);
	check_unused_lqs(in, out);
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_finding);
}
