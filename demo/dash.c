/*
 * dash: the demo's state and its rendering (see dash.h).
 *
 * "Lent" needs a word: Kueue reports what a ClusterQueue borrows
 * (status.flavorsUsage[].resources[].borrowed) but not from whom, since
 * borrowed quota comes out of the cohort's pool. The dashboard attributes
 * each flavor's total borrowed GPUs to the lenders in proportion to the
 * idle quota each can lend right now, min(lendingLimit, nominal - used),
 * so the LENT column adds up to the BORROWED column.
 *
 * Preemptions come from the Workloads: Kueue counts each eviction in
 * status.schedulingStats.evictions, so a new count of reason Preempted
 * is one preemption even when the watch skips a version; its reason is
 * the Preempted condition's (or, once a new reservation flipped that to
 * False with "Previously: <message>", read from the message), and the
 * preemptor is the Workload whose UID the message names, resolved when
 * shown since its Workload may be seen later.
 *
 * Like feed.c, this file reads json_t outside STYLE P3(c)'s places:
 * the demo is a client, not the core, and reads a few fields only.
 */
#include "demo/dash.h"

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "demo/feed.h"
#include "model/quantity.h"

#define GPU "nvidia.com/gpu"
#define MAX_FLAVORS 4
#define MAX_QUEUES 8
#define LAST_N 8      /* admissions shown */
#define LAST_PRE 5    /* preemptions shown */
#define MAX_LINES 32  /* dashboard lines */

/* Kueue's Preempted reasons, in the summary's order, with the words of
 * its message for each; the last slot counts any other reason. */
static const struct {
	const char *reason;
	const char *due_to; /* "... due to <this>; preemptor path: ..." */
} preempt_reasons[] = {
	{ "InClusterQueue", "due to prioritization in the ClusterQueue" },
	{ "InCohortReclamation", "due to reclamation within the cohort" },
	{ "InCohortReclaimWhileBorrowing",
	  "due to reclamation within the cohort while borrowing" },
	{ "InCohortFairSharing", "due to Fair Sharing within the cohort" },
	{ "other", "" },
};

#define NREASON (sizeof(preempt_reasons) / sizeof(preempt_reasons[0]))

struct djob {
	int64_t created_ms;  /* POST answered; 0: not yet */
	int64_t admitted_ms; /* first seen unsuspended; 0: not yet */
	int64_t finished_ms; /* Complete or Failed seen; 0: not yet */
	int flavor;          /* index into d->f of its first admission;
				-1: unknown (read again from each version
				seen unsuspended until known) */
	int run_flavor;      /* flavor its GPUs count in now (in_use);
				-1: not running, or flavor unknown */
	bool failed;         /* Failed condition */
	bool create_failed;  /* the POST failed for good */
	bool up;             /* running in the last version seen */
	int runs;            /* times seen starting to run (a preempted
				Job runs again once re-admitted) */
	int preempted;       /* preemptions seen on its Workload */
	char *uid;           /* owned or NULL: the Job's metadata.uid */
	char *wl_uid;        /* owned or NULL: its Workload's uid */
};

/* One preemption, as its victim's Workload showed it. */
struct dpreempt {
	int64_t at_ms;       /* when the demo saw it */
	size_t victim;       /* planned Job index */
	char *by_uid;        /* owned: the preemptor Workload's UID, or
				NULL when the message names none */
	size_t reason;       /* index into preempt_reasons */
	int64_t gpus;        /* GPUs of the admission it lost */
};

struct dqueue {
	char *name;                  /* owned */
	bool active;                 /* condition Active=True */
	int64_t nominal[MAX_FLAVORS]; /* GPUs, per d->f index */
	int64_t lend_limit[MAX_FLAVORS]; /* GPUs; -1: none (all lendable) */
	int64_t used[MAX_FLAVORS];   /* GPUs, status.flavorsUsage total */
	int64_t borrowed[MAX_FLAVORS]; /* GPUs, ... borrowed */
	int pending, admitted;       /* status counts */
};

struct dflavor {
	char *name;       /* owned */
	json_t *labels;   /* the ResourceFlavor's nodeLabels (own ref) or
			     NULL: unseen, or it has none */
	bool seen;        /* its ResourceFlavor is known (listed or
			     watched, not deleted) */
	int64_t in_use;   /* GPUs of its running Jobs (admitted, not
			     finished): one watch stream, so never a
			     mix of old and new like the queues' status */
	int64_t peak;     /* most in_use at once */
	int rank;         /* earliest position in a queue's flavor list
			     (display order); INT_MAX: named by no queue */
};

struct dash {
	const struct feed *s;  /* borrowed plan */
	struct djob *jobs;       /* owned; s->n entries */
	struct dqueue q[MAX_QUEUES]; /* first nq used */
	int nq;                  /* sorted by name */
	struct dflavor f[MAX_FLAVORS]; /* first nf used */
	int nf;                  /* first seen first; display_order sorts */
	struct dpreempt *pre;    /* owned; npre in the order seen */
	size_t npre, cappre;
	size_t pre_shown;        /* preemptions printed as plain lines */
	size_t last[LAST_N];     /* ring of admitted job indexes */
	size_t nlast;            /* admissions so far (ring position) */
	int64_t start_ms;        /* stream start; 0: not started */
	int64_t peak_used;       /* most GPUs in use at once, all flavors */
	bool tty;                /* redrawn block, else plain lines */
	int width;               /* clip lines to this many columns */
	int drawn;               /* lines of the last frame; 0: none yet */
	bool cursor_hidden;      /* dash_end must show it again */
};

struct dash *dash_new(const struct feed *s, bool tty, int width)
{
	struct dash *d = xcalloc(1, sizeof(*d));

	d->s = s;
	d->jobs = xcalloc(s->n ? s->n : 1, sizeof(*d->jobs));
	for (size_t i = 0; i < s->n; i++)
		d->jobs[i].flavor = d->jobs[i].run_flavor = -1;
	d->tty = tty;
	d->width = width > 20 ? width : 100;
	return d;
}

void dash_free(struct dash *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->nq; i++)
		free(d->q[i].name);
	for (int i = 0; i < d->nf; i++) {
		free(d->f[i].name);
		json_decref(d->f[i].labels);
	}
	for (size_t i = 0; i < d->s->n; i++) {
		free(d->jobs[i].uid);
		free(d->jobs[i].wl_uid);
	}
	for (size_t i = 0; i < d->npre; i++)
		free(d->pre[i].by_uid);
	free(d->pre);
	free(d->jobs);
	free(d);
}

void dash_set_width(struct dash *d, int width)
{
	d->width = width > 20 ? width : 100;
}

void dash_start(struct dash *d, int64_t now_ms)
{
	d->start_ms = now_ms;
}

/* ---- small JSON readers ---- */

/* A quantity (string or number) in whole units; 0 when absent or bad. */
static int64_t units(const json_t *v)
{
	struct quantity q;
	struct err e;

	if (json_is_integer(v))
		return (int64_t)json_integer_value(v);
	if (!json_is_string(v) ||
	    quantity_parse(json_string_value(v), &q, &e) < 0)
		return 0;
	return quantity_value(q.milli);
}

static bool has_condition(const json_t *obj, const char *type)
{
	const json_t *conds =
		json_object_get(json_object_get(obj, "status"), "conditions");
	size_t i;
	const json_t *c;

	json_array_foreach(conds, i, c)
		if (!strcmp(jx_text(c, "type"), type) &&
		    !strcmp(jx_text(c, "status"), "True"))
			return true;
	return false;
}

static int flavor_index(struct dash *d, const char *name, bool add)
{
	for (int i = 0; i < d->nf; i++)
		if (!strcmp(d->f[i].name, name))
			return i;
	if (!add || d->nf == MAX_FLAVORS)
		return -1;
	d->f[d->nf].name = xstrdup(name);
	d->f[d->nf].rank = INT_MAX;
	return d->nf++;
}

/*
 * Peaks come from the Jobs, not from the ClusterQueues' status: each
 * queue writes its status on its own (at most once a second), so adding
 * the queues' flavorsUsage at one instant mixes a queue that has not yet
 * reported a release with one that already reports the admission the
 * release allowed, and can show more GPUs than exist. The Jobs arrive in
 * one watch stream in write order, so after each event a finish has
 * been seen before the admission it made room for; a relist is a
 * consistent snapshot once applied whole, not item by item. So peaks
 * are sampled (dash_sample) only after a whole event or a whole list.
 */
static int64_t in_use_total(const struct dash *d)
{
	int64_t total = 0;

	for (int f = 0; f < d->nf; f++)
		total += d->f[f].in_use;
	return total;
}

void dash_sample(struct dash *d)
{
	int64_t total = in_use_total(d);

	for (int f = 0; f < d->nf; f++)
		if (d->f[f].in_use > d->f[f].peak)
			d->f[f].peak = d->f[f].in_use;
	if (total > d->peak_used)
		d->peak_used = total;
}

/* ---- Jobs ---- */

static long job_index(const struct dash *d, const char *name)
{
	const char *dash_pos = strrchr(name, '-');
	char *end;
	long i;

	if (!dash_pos)
		return -1;
	i = strtol(dash_pos + 1, &end, 10) - 1;
	if (*end || i < 0 || (size_t)i >= d->s->n ||
	    strcmp(d->s->v[i].name, name))
		return -1;
	return i;
}

/* The flavor whose every nodeLabel the pod template's nodeSelector
 * carries (Kueue injects them on admission); -1 when none does. */
static int job_flavor(const struct dash *d, const json_t *job)
{
	const json_t *sel, *v;
	const char *k;

	sel = json_object_get(json_object_get(json_object_get(
		json_object_get(job, "spec"), "template"), "spec"),
		"nodeSelector");
	if (!json_is_object(sel))
		return -1;
	for (int f = 0; f < d->nf; f++) {
		bool all = json_object_size(d->f[f].labels) > 0;

		json_object_foreach((json_t *)d->f[f].labels, k, v)
			if (!json_equal(json_object_get(sel, k), (json_t *)v))
				all = false;
		if (all)
			return f;
	}
	return -1;
}

void dash_job(struct dash *d, const json_t *job, bool deleted,
	      int64_t now_ms)
{
	const json_t *meta = json_object_get(job, "metadata");
	long i = job_index(d, jx_text(meta, "name"));
	struct djob *j;
	bool unsuspended, ended, running;
	int64_t gpus;

	if (i < 0)
		return;
	j = &d->jobs[i];
	if (!j->uid && *jx_text(meta, "uid"))
		j->uid = xstrdup(jx_text(meta, "uid"));
	gpus = feed_job_gpus(&d->s->v[i]);
	unsuspended = json_is_false(
		json_object_get(json_object_get(job, "spec"), "suspend"));
	ended = has_condition(job, "Complete") || has_condition(job, "Failed");
	if (!j->admitted_ms && unsuspended && !deleted) {
		j->admitted_ms = now_ms;
		d->last[d->nlast % LAST_N] = (size_t)i;
		d->nlast++;
	}
	/* The flavor comes from a second informer (the ResourceFlavors'
	 * nodeLabels), in no order with this one: a Job seen unsuspended
	 * before its flavor is known gets it from a later version. */
	if (j->flavor < 0 && unsuspended && !deleted)
		j->flavor = job_flavor(d, job);
	if (!j->finished_ms && ended && !deleted) {
		j->finished_ms = now_ms;
		j->failed = has_condition(job, "Failed");
		if (!j->admitted_ms)
			j->admitted_ms = now_ms;
	}
	/* In use while unsuspended and not ended: an eviction suspends the
	 * Job again and releases, a re-admission counts on its new flavor,
	 * a deletion releases. */
	running = unsuspended && !ended && !deleted;
	j->runs += running && !j->up;
	j->up = running;
	if (j->run_flavor >= 0 && !running) {
		d->f[j->run_flavor].in_use -= gpus;
		j->run_flavor = -1;
	}
	if (j->run_flavor < 0 && running) {
		j->run_flavor = job_flavor(d, job);
		if (j->run_flavor >= 0)
			d->f[j->run_flavor].in_use += gpus;
	}
}

void dash_job_created(struct dash *d, size_t i, int64_t now_ms)
{
	if (i < d->s->n && !d->jobs[i].created_ms)
		d->jobs[i].created_ms = now_ms;
}

void dash_job_failed_create(struct dash *d, size_t i, const char *message)
{
	(void)message;
	if (i < d->s->n)
		d->jobs[i].create_failed = true;
}

/* ---- ClusterQueues and flavors ---- */

static struct dqueue *queue_get(struct dash *d, const char *name, bool add)
{
	int i;

	for (i = 0; i < d->nq; i++)
		if (!strcmp(d->q[i].name, name))
			return &d->q[i];
	if (!add || d->nq == MAX_QUEUES)
		return NULL;
	/* keep them sorted by name */
	for (i = d->nq; i > 0 && strcmp(d->q[i - 1].name, name) > 0; i--)
		d->q[i] = d->q[i - 1];
	memset(&d->q[i], 0, sizeof(d->q[i]));
	d->q[i].name = xstrdup(name);
	d->nq++;
	return &d->q[i];
}

void dash_cluster_queue(struct dash *d, const json_t *cq, bool deleted,
			int64_t now_ms)
{
	const char *name = jx_text(json_object_get(cq, "metadata"), "name");
	const json_t *spec = json_object_get(cq, "spec");
	const json_t *st = json_object_get(cq, "status");
	const json_t *rg, *fq, *rq, *fu;
	struct dqueue *q;
	size_t a, b, c;
	int pos = 0;

	(void)now_ms;
	if (deleted) {
		q = queue_get(d, name, false);
		if (q) {
			int i = (int)(q - d->q);

			free(q->name);
			memmove(&d->q[i], &d->q[i + 1],
				(size_t)(d->nq - i - 1) * sizeof(d->q[0]));
			d->nq--;
		}
		return;
	}
	q = queue_get(d, name, true);
	if (!q)
		return;
	for (int f = 0; f < MAX_FLAVORS; f++) {
		q->nominal[f] = q->used[f] = q->borrowed[f] = 0;
		q->lend_limit[f] = -1;
	}
	json_array_foreach(json_object_get(spec, "resourceGroups"), a, rg)
		json_array_foreach(json_object_get(rg, "flavors"), b, fq) {
			int f = flavor_index(d, jx_text(fq, "name"), true);

			if (f < 0)
				continue;
			if (pos < d->f[f].rank)
				d->f[f].rank = pos;
			pos++;
			json_array_foreach(json_object_get(fq, "resources"),
					   c, rq) {
				const json_t *ll;

				if (strcmp(jx_text(rq, "name"), GPU))
					continue;
				q->nominal[f] = units(
					json_object_get(rq, "nominalQuota"));
				ll = json_object_get(rq, "lendingLimit");
				q->lend_limit[f] = ll ? units(ll) : -1;
			}
		}
	json_array_foreach(json_object_get(st, "flavorsUsage"), a, fu) {
		int f = flavor_index(d, jx_text(fu, "name"), true);

		if (f < 0)
			continue;
		json_array_foreach(json_object_get(fu, "resources"), b, rq) {
			if (strcmp(jx_text(rq, "name"), GPU))
				continue;
			q->used[f] = units(json_object_get(rq, "total"));
			q->borrowed[f] = units(json_object_get(rq, "borrowed"));
		}
	}
	q->pending = (int)json_integer_value(
		json_object_get(st, "pendingWorkloads"));
	q->admitted = (int)json_integer_value(
		json_object_get(st, "admittedWorkloads"));
	q->active = has_condition(cq, "Active");
}

void dash_flavor(struct dash *d, const json_t *rf, bool deleted)
{
	const char *name = jx_text(json_object_get(rf, "metadata"), "name");
	int f = flavor_index(d, name, !deleted);
	json_t *labels;

	if (f < 0)
		return;
	json_decref(d->f[f].labels);
	d->f[f].labels = NULL;
	d->f[f].seen = !deleted;
	if (deleted)
		return;
	labels = json_object_get(json_object_get(rf, "spec"), "nodeLabels");
	if (json_is_object(labels))
		d->f[f].labels = json_incref(labels);
}

/* Preemptions counted in a Workload's schedulingStats.evictions. */
static int preempt_count(const json_t *wl)
{
	const json_t *ev = json_object_get(json_object_get(
		json_object_get(wl, "status"), "schedulingStats"), "evictions");
	size_t i;
	const json_t *e;
	int n = 0;

	json_array_foreach(ev, i, e)
		if (!strcmp(jx_text(e, "reason"), "Preempted"))
			n += (int)json_integer_value(json_object_get(e,
								     "count"));
	return n;
}

static const json_t *condition(const json_t *obj, const char *type)
{
	const json_t *conds =
		json_object_get(json_object_get(obj, "status"), "conditions");
	size_t i;
	const json_t *c;

	json_array_foreach(conds, i, c)
		if (!strcmp(jx_text(c, "type"), type))
			return c;
	return NULL;
}

/* GPUs of a Workload's admission (every pod set's resourceUsage), or
 * -1 when it has none. */
static int64_t admitted_gpus(const json_t *wl)
{
	const json_t *psa = json_object_get(json_object_get(
		json_object_get(wl, "status"), "admission"),
		"podSetAssignments");
	size_t i;
	const json_t *a;
	int64_t n = 0;

	if (!json_is_array(psa))
		return -1;
	json_array_foreach(psa, i, a)
		n += units(json_object_get(json_object_get(a,
							   "resourceUsage"),
					   GPU));
	return n;
}

/* The preemption of the Workload's Preempted condition: its reason
 * (from the condition while True, else the reason whose words the
 * message holds, the longest match since one starts another) and the
 * preemptor's UID; reason NREASON - 1 when unknown. */
static size_t preempt_of(const json_t *wl, char **by_uid)
{
	const json_t *c = condition(wl, "Preempted");
	const char *msg = c ? jx_text(c, "message") : "";
	const char *u = strstr(msg, "(UID: ");
	bool is_true = c && !strcmp(jx_text(c, "status"), "True");
	size_t best = NREASON - 1, best_len = 0;

	*by_uid = NULL;
	if (u) {
		u += strlen("(UID: ");
		*by_uid = xstrndup(u, strcspn(u, ",)"));
	}
	for (size_t r = 0; c && r + 1 < NREASON; r++) {
		size_t len = strlen(preempt_reasons[r].due_to);

		if (is_true && !strcmp(jx_text(c, "reason"),
				       preempt_reasons[r].reason))
			return r;
		if (!is_true && len > best_len &&
		    strstr(msg, preempt_reasons[r].due_to)) {
			best = r;
			best_len = len;
		}
	}
	return best;
}

void dash_workload(struct dash *d, const json_t *wl, bool deleted,
		   int64_t now_ms)
{
	const json_t *meta = json_object_get(wl, "metadata");
	const json_t *own = json_array_get(json_object_get(meta,
							   "ownerReferences"),
					   0);
	long i;
	struct djob *j;
	int n;
	int64_t gpus;

	if (deleted || !own || strcmp(jx_text(own, "kind"), "Job"))
		return;
	i = job_index(d, jx_text(own, "name"));
	if (i < 0)
		return;
	j = &d->jobs[i];
	/* a Job of another run with the same name */
	if (j->uid && strcmp(j->uid, jx_text(own, "uid")))
		return;
	if (!j->wl_uid && *jx_text(meta, "uid"))
		j->wl_uid = xstrdup(jx_text(meta, "uid"));
	n = preempt_count(wl);
	gpus = admitted_gpus(wl);
	if (gpus < 0)
		gpus = feed_job_gpus(&d->s->v[i]);
	for (; j->preempted < n; j->preempted++) {
		struct dpreempt *p;

		XGROW(d->pre, d->cappre, d->npre + 1);
		p = &d->pre[d->npre++];
		p->at_ms = now_ms;
		p->victim = (size_t)i;
		p->reason = preempt_of(wl, &p->by_uid);
		p->gpus = gpus;
	}
}

/* The planned Job whose Workload has uid, or -1. */
static long job_of_wl_uid(const struct dash *d, const char *uid)
{
	if (!uid)
		return -1;
	for (size_t i = 0; i < d->s->n; i++)
		if (d->jobs[i].wl_uid && !strcmp(d->jobs[i].wl_uid, uid))
			return (long)i;
	return -1;
}

/* "nlp-infer-017", or "workload 1a2b3c4d" while its Workload is unseen. */
static void preemptor_name(const struct dash *d, const struct dpreempt *p,
			   char *buf, size_t len)
{
	long k = job_of_wl_uid(d, p->by_uid);

	if (k >= 0)
		snprintf(buf, len, "%s", d->s->v[k].name);
	else if (p->by_uid)
		snprintf(buf, len, "workload %.8s", p->by_uid);
	else
		snprintf(buf, len, "?");
}

bool dash_ready(const struct dash *d)
{
	for (int f = 0; f < d->nf; f++)
		if (d->f[f].rank != INT_MAX && !d->f[f].seen)
			return false;
	for (int t = 0; t < FEED_NTEAM; t++) {
		char name[64];
		bool ok = false;

		snprintf(name, sizeof(name), "team-%s", feed_team_name(t));
		for (int i = 0; i < d->nq; i++)
			if (!strcmp(d->q[i].name, name))
				ok = d->q[i].active;
		if (!ok)
			return false;
	}
	return true;
}

bool dash_drained(const struct dash *d)
{
	for (size_t i = 0; i < d->s->n; i++)
		if (!d->jobs[i].create_failed && !d->jobs[i].finished_ms)
			return false;
	return true;
}

size_t dash_finished(const struct dash *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->s->n; i++)
		n += d->jobs[i].finished_ms != 0;
	return n;
}

/* ---- rendering ---- */

/* Fills ord with the flavor indexes in display order: as the queues list
 * them (h100 before a100), then by name. Returns d->nf. */
static int display_order(const struct dash *d, int *ord)
{
	for (int i = 0; i < d->nf; i++) {
		int j = i;

		while (j > 0) {
			const struct dflavor *p = &d->f[ord[j - 1]];
			const struct dflavor *f = &d->f[i];

			if (p->rank < f->rank ||
			    (p->rank == f->rank &&
			     strcmp(p->name, f->name) <= 0))
				break;
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = i;
	}
	return d->nf;
}

struct counts {
	size_t created, running, finished, failed, create_failed;
};

static struct counts count_jobs(const struct dash *d)
{
	struct counts c = { 0 };

	for (size_t i = 0; i < d->s->n; i++) {
		const struct djob *j = &d->jobs[i];

		c.created += j->created_ms != 0;
		c.create_failed += j->create_failed;
		c.finished += j->finished_ms != 0;
		c.failed += j->failed;
		c.running += j->admitted_ms && !j->finished_ms;
	}
	return c;
}

static int64_t sum4(const int64_t *v, int n)
{
	int64_t s = 0;

	for (int i = 0; i < n; i++)
		s += v[i];
	return s;
}

/* GPUs of flavor f that queue qi lends now (see the file comment): the
 * flavor's borrowed total shared out in proportion to idle lendable
 * quota, by largest remainder so the shares add up to the total. */
static int64_t lent(const struct dash *d, int qi, int f)
{
	int64_t borrowed = 0, idle_sum = 0, given = 0;
	int64_t idle[MAX_QUEUES], share[MAX_QUEUES], rem[MAX_QUEUES];

	for (int i = 0; i < d->nq; i++) {
		const struct dqueue *q = &d->q[i];
		int64_t free_q = q->nominal[f] - q->used[f];

		if (free_q < 0)
			free_q = 0;
		if (q->lend_limit[f] >= 0 && free_q > q->lend_limit[f])
			free_q = q->lend_limit[f];
		idle[i] = free_q;
		idle_sum += free_q;
		borrowed += q->borrowed[f];
	}
	if (!borrowed || !idle_sum)
		return 0;
	if (borrowed > idle_sum) /* status from different moments */
		borrowed = idle_sum;
	for (int i = 0; i < d->nq; i++) {
		share[i] = borrowed * idle[i] / idle_sum;
		rem[i] = borrowed * idle[i] % idle_sum;
		given += share[i];
	}
	for (; given < borrowed; given++) {
		int best = 0;

		for (int i = 1; i < d->nq; i++)
			if (rem[i] > rem[best])
				best = i;
		share[best]++;
		rem[best] = -1;
	}
	return share[qi];
}

static int64_t total_nominal(const struct dash *d, int f)
{
	int64_t n = 0;

	for (int i = 0; i < d->nq; i++)
		n += d->q[i].nominal[f];
	return n;
}

static double secs(int64_t ms)
{
	return (double)ms / 1000.0;
}

/* Appends one line (clipped to the width) to lines[*n]. */
static void add_line(struct dash *d, char lines[][256], int *n,
		     const char *fmt, ...) PRINTF_LIKE(4, 5);
static void add_line(struct dash *d, char lines[][256], int *n,
		     const char *fmt, ...)
{
	va_list ap;
	size_t w = (size_t)d->width - 1;

	if (*n >= MAX_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(lines[*n], 256, fmt, ap);
	va_end(ap);
	if (w < 255 && strlen(lines[*n]) > w)
		lines[*n][w] = '\0';
	(*n)++;
}

/* "N (InClusterQueue a, InCohortReclamation b, ...)": the reasons
 * Kueue's classical preemption gives always, any other when seen. */
static void preempt_counts(const struct dash *d, char *buf, size_t len)
{
	size_t by[NREASON] = { 0 };
	int w;

	for (size_t i = 0; i < d->npre; i++)
		by[d->pre[i].reason]++;
	w = snprintf(buf, len, "%zu (", d->npre);
	for (size_t r = 0; r < NREASON && w > 0 && (size_t)w < len; r++) {
		if (r >= 3 && !by[r])
			continue;
		w += snprintf(buf + w, len - (size_t)w, "%s%s %zu",
			      r ? ", " : "", preempt_reasons[r].reason, by[r]);
	}
	if (w > 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, ")");
}

static void render_tty(struct dash *d, int64_t now_ms, FILE *out)
{
	char lines[MAX_LINES][256];
	char cell[64], row[256];
	int n = 0, len, ord[MAX_FLAVORS];
	struct counts c = count_jobs(d);
	int64_t cap = 0, used = in_use_total(d);

	display_order(d, ord);

	for (int f = 0; f < d->nf; f++)
		cap += total_nominal(d, f);
	add_line(d, lines, &n,
		 "cueue demo   t+%5.1fs   jobs %zu/%zu created, %zu running, "
		 "%zu finished",
		 d->start_ms ? secs(now_ms - d->start_ms) : 0.0, c.created,
		 d->s->n, c.running, c.finished);
	add_line(d, lines, &n, "%s", "");
	len = snprintf(row, sizeof(row), "%-15s", "CLUSTERQUEUE");
	for (int f = 0; f < d->nf && len < 200; f++)
		len += snprintf(row + len, sizeof(row) - (size_t)len, " %7s",
				d->f[ord[f]].name);
	add_line(d, lines, &n, "%s   GPUS  BORROWED  LENT  PENDING  ADMITTED",
		 row);
	for (int i = 0; i < d->nq; i++) {
		const struct dqueue *q = &d->q[i];
		int64_t l = 0;

		len = snprintf(row, sizeof(row), "%-15s", q->name);
		for (int f = 0; f < d->nf && len < 200; f++) {
			snprintf(cell, sizeof(cell), "%lld/%lld",
				 (long long)q->used[ord[f]],
				 (long long)q->nominal[ord[f]]);
			len += snprintf(row + len, sizeof(row) - (size_t)len,
					" %7s", cell);
			l += lent(d, i, f);
		}
		snprintf(cell, sizeof(cell), "%lld/%lld",
			 (long long)sum4(q->used, d->nf),
			 (long long)sum4(q->nominal, d->nf));
		add_line(d, lines, &n, "%s %6s  %8lld  %4lld  %7d  %8d",
			 row, cell,
			 (long long)sum4(q->borrowed, d->nf), (long long)l,
			 q->pending, q->admitted);
	}
	add_line(d, lines, &n,
		 "GPUs in use: %lld/%lld (%.0f%%), peak %lld (%.0f%%)",
		 (long long)used, (long long)cap,
		 cap ? 100.0 * (double)used / (double)cap : 0.0,
		 (long long)d->peak_used,
		 cap ? 100.0 * (double)d->peak_used / (double)cap : 0.0);
	add_line(d, lines, &n, "%s", "");
	add_line(d, lines, &n, "%s", "LAST ADMISSIONS, newest first");
	add_line(d, lines, &n, "%7s %-18s %-13s %-14s %-7s %-6s %s", "at",
		 "job", "queue", "class", "GPUs", "flavor", "waited");
	for (size_t k = 0; k < LAST_N; k++) {
		const struct feed_job *sj;
		const struct djob *j;
		char shape[32], wait[32], qn[40];

		if (k >= d->nlast) {
			add_line(d, lines, &n, "%s", "");
			continue;
		}
		sj = &d->s->v[d->last[(d->nlast - 1 - k) % LAST_N]];
		j = &d->jobs[sj - d->s->v];
		if (sj->pods > 1)
			snprintf(shape, sizeof(shape), "%d (%dx%d)",
				 feed_job_gpus(sj), sj->pods,
				 sj->gpus_per_pod);
		else
			snprintf(shape, sizeof(shape), "%d",
				 feed_job_gpus(sj));
		if (j->created_ms)
			snprintf(wait, sizeof(wait), "%.2fs",
				 secs(j->admitted_ms > j->created_ms
					      ? j->admitted_ms - j->created_ms
					      : 0));
		else
			snprintf(wait, sizeof(wait), "-");
		snprintf(qn, sizeof(qn), "team-%s",
			 feed_team_name(sj->team));
		add_line(d, lines, &n, "%6.1fs %-18s %-13s %-14s %-7s %-6s %6s",
			 secs(j->admitted_ms - d->start_ms), sj->name, qn,
			 feed_class_name(sj->klass), shape,
			 j->flavor >= 0 ? d->f[j->flavor].name : "?", wait);
	}
	add_line(d, lines, &n, "%s", "");
	preempt_counts(d, row, sizeof(row));
	add_line(d, lines, &n, "PREEMPTIONS: %s", row);
	add_line(d, lines, &n, "%7s %-18s %-18s %-29s %s", "at", "victim",
		 "preemptor", "reason", "GPUs freed");
	for (size_t k = 0; k < LAST_PRE; k++) {
		const struct dpreempt *p;
		char by[40];

		if (k >= d->npre) {
			add_line(d, lines, &n, "%s", "");
			continue;
		}
		p = &d->pre[d->npre - 1 - k];
		preemptor_name(d, p, by, sizeof(by));
		add_line(d, lines, &n, "%6.1fs %-18s %-18s %-29s %lld",
			 secs(p->at_ms - d->start_ms), d->s->v[p->victim].name,
			 by, preempt_reasons[p->reason].reason,
			 (long long)p->gpus);
	}
	if (!d->cursor_hidden) {
		fputs("\033[?25l", out);
		d->cursor_hidden = true;
	}
	if (d->drawn)
		fprintf(out, "\033[%dF", d->drawn);
	for (int i = 0; i < n; i++)
		fprintf(out, "%s\033[K\n", lines[i]);
	d->drawn = n;
	fflush(out);
}

static void render_plain(struct dash *d, int64_t now_ms, FILE *out)
{
	struct counts c = count_jobs(d);

	for (; d->pre_shown < d->npre; d->pre_shown++) {
		const struct dpreempt *p = &d->pre[d->pre_shown];
		char by[40];

		preemptor_name(d, p, by, sizeof(by));
		fprintf(out, "[t+%5.1fs] preempted %s (%lld GPUs freed) for "
			"%s: %s\n", secs(p->at_ms - d->start_ms),
			d->s->v[p->victim].name, (long long)p->gpus, by,
			preempt_reasons[p->reason].reason);
	}

	fprintf(out, "[t+%5.1fs] jobs %zu/%zu created, %zu running, "
		"%zu finished",
		d->start_ms ? secs(now_ms - d->start_ms) : 0.0, c.created,
		d->s->n, c.running, c.finished);
	for (int i = 0; i < d->nq; i++) {
		const struct dqueue *q = &d->q[i];
		int64_t l = 0;

		for (int f = 0; f < d->nf; f++)
			l += lent(d, i, f);
		fprintf(out, " | %s gpus %lld/%lld borrowed %lld lent %lld "
			"pending %d admitted %d", q->name,
			(long long)sum4(q->used, d->nf),
			(long long)sum4(q->nominal, d->nf),
			(long long)sum4(q->borrowed, d->nf), (long long)l,
			q->pending, q->admitted);
	}
	fputc('\n', out);
	fflush(out);
}

void dash_render(struct dash *d, int64_t now_ms, FILE *out)
{
	if (d->tty)
		render_tty(d, now_ms, out);
	else
		render_plain(d, now_ms, out);
}

void dash_end(struct dash *d, FILE *out)
{
	if (d->cursor_hidden) {
		fputs("\033[?25h", out);
		fflush(out);
		d->cursor_hidden = false;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Whether the Workload of job i preempted another one. */
static bool is_preemptor(const struct dash *d, size_t i)
{
	const char *uid = d->jobs[i].wl_uid;

	for (size_t k = 0; uid && k < d->npre; k++)
		if (d->pre[k].by_uid && !strcmp(d->pre[k].by_uid, uid))
			return true;
	return false;
}

/*
 * The summary's preemption lines: the count by reason and the GPUs
 * freed; the victims, and how many ran again once re-admitted and
 * finished (Complete); the wait of the inference Jobs that got in by
 * preempting, beside the others'. waits is scratch of s->n entries.
 */
static void summary_preemptions(const struct dash *d, int64_t *waits,
				FILE *out)
{
	char buf[256];
	size_t victims = 0, back = 0, n = 0, nother = 0;
	int64_t freed = 0, sum = 0, max = 0, sum_other = 0;

	preempt_counts(d, buf, sizeof(buf));
	for (size_t k = 0; k < d->npre; k++)
		freed += d->pre[k].gpus;
	for (size_t i = 0; i < d->s->n; i++) {
		const struct djob *j = &d->jobs[i];

		if (!j->preempted)
			continue;
		victims++;
		back += j->runs > j->preempted && j->finished_ms &&
			!j->failed;
	}
	fprintf(out, "preemptions: %s, %lld GPUs freed\n", buf,
		(long long)freed);
	fprintf(out, "preempted jobs: %zu, %zu re-admitted and finished\n",
		victims, back);
	for (size_t i = 0; i < d->s->n; i++) {
		const struct djob *j = &d->jobs[i];
		int64_t w;

		if (d->s->v[i].klass != FEED_INFERENCE || !j->created_ms ||
		    !j->admitted_ms)
			continue;
		w = j->admitted_ms > j->created_ms
			    ? j->admitted_ms - j->created_ms
			    : 0;
		if (is_preemptor(d, i)) {
			waits[n++] = w;
			sum += w;
			if (w > max)
				max = w;
		} else {
			nother++;
			sum_other += w;
		}
	}
	if (n)
		fprintf(out, "prod-inference admitted by preempting: %zu jobs, "
			"wait mean %.2fs, max %.2fs (without preempting: "
			"%zu jobs, mean %.2fs)\n", n, secs(sum) / (double)n,
			secs(max), nother,
			nother ? secs(sum_other) / (double)nother : 0.0);
	else
		fprintf(out, "prod-inference admitted by preempting: 0 jobs "
			"(%zu without)\n", nother);
}

void dash_summary(const struct dash *d, int64_t now_ms, FILE *out)
{
	struct counts c = count_jobs(d);
	size_t admitted = 0, by_flavor[MAX_FLAVORS] = { 0 };
	int64_t *waits = xcalloc(d->s->n ? d->s->n : 1, sizeof(*waits));
	int64_t cap = 0;
	int ord[MAX_FLAVORS];

	display_order(d, ord);
	for (size_t i = 0; i < d->s->n; i++) {
		admitted += d->jobs[i].admitted_ms != 0;
		if (d->jobs[i].flavor >= 0)
			by_flavor[d->jobs[i].flavor]++;
	}
	fprintf(out, "\n== cueue demo summary ==\n");
	fprintf(out, "jobs: %zu planned, %zu created, %zu admitted, "
		"%zu finished, %zu failed, in %.1fs\n",
		d->s->n, c.created, admitted, c.finished,
		c.failed + c.create_failed,
		d->start_ms ? secs(now_ms - d->start_ms) : 0.0);
	fprintf(out, "wait from Job created to Job unsuspended, per priority "
		"class:\n");
	for (int k = 0; k < FEED_NCLASS; k++) {
		size_t n = 0;
		int64_t sum = 0;

		for (size_t i = 0; i < d->s->n; i++) {
			const struct djob *j = &d->jobs[i];

			if (d->s->v[i].klass != (enum feed_class)k ||
			    !j->created_ms || !j->admitted_ms)
				continue;
			waits[n] = j->admitted_ms > j->created_ms
					   ? j->admitted_ms - j->created_ms
					   : 0;
			sum += waits[n++];
		}
		if (!n) {
			fprintf(out, "  %-15s  %3zu jobs\n",
				feed_class_name((enum feed_class)k), n);
			continue;
		}
		qsort(waits, n, sizeof(*waits), cmp_i64);
		/* nearest rank: the smallest wait at or above 95% of jobs */
		fprintf(out, "  %-15s  %3zu jobs  mean %6.2fs  p95 %6.2fs\n",
			feed_class_name((enum feed_class)k), n,
			secs(sum) / (double)n,
			secs(waits[(n * 95 + 99) / 100 - 1]));
	}
	summary_preemptions(d, waits, out);
	for (int f = 0; f < d->nf; f++)
		cap += total_nominal(d, f);
	fprintf(out, "peak GPU utilisation: %lld/%lld GPUs (%.0f%%);",
		(long long)d->peak_used, (long long)cap,
		cap ? 100.0 * (double)d->peak_used / (double)cap : 0.0);
	for (int f = 0; f < d->nf; f++)
		fprintf(out, "%s %s %lld/%lld", f ? "," : "",
			d->f[ord[f]].name, (long long)d->f[ord[f]].peak,
			(long long)total_nominal(d, ord[f]));
	if (c.finished == c.created && in_use_total(d))
		fprintf(out, "\ndash: %lld GPUs still counted in use after "
			"every Job ended (a demo bug)",
			(long long)in_use_total(d));
	fprintf(out, "\nadmitted by flavor:");
	for (int f = 0; f < d->nf; f++)
		fprintf(out, "%s %s %zu", f ? "," : "", d->f[ord[f]].name,
			by_flavor[ord[f]]);
	fputc('\n', out);
	fflush(out);
	free(waits);
}
