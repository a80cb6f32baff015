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
 * waitForPodsReady comes from the Workloads too: each new count of
 * reason PodsReadyTimeout in schedulingStats.evictions is one timeout,
 * shown with the requeueState it wrote (count, requeueAt) and the
 * backoff (requeueAt minus the Evicted condition's time); a Requeued=True
 * BackoffFinished after it is the end of that backoff; spec.active=false
 * with Evicted=True DeactivatedDueTo<Cause> is the deactivation, and
 * for the cause RequeuingLimitExceeded the backoffLimitCount it reached
 * is the requeueState.count the Workload carried when its
 * DeactivationTarget turned True (Kueue deactivates at the first timeout
 * whose count + 1 exceeds the limit, so that count is the limit). The
 * Jobs give how many pods were ready (status.ready + succeeded) and
 * when all first were.
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
#include "model/timestamp.h"

#define GPU "nvidia.com/gpu"
#define MAX_FLAVORS 4
#define MAX_QUEUES 8
#define LAST_N 8      /* admissions shown */
#define LAST_PRE 5    /* preemptions shown */
#define LAST_READY 4  /* waitForPodsReady events shown */
#define MAX_BACKOFFS 8 /* backoffs kept per Job for the summary */
#define MAX_LINES 40  /* dashboard lines */
#define HIST_N 64     /* fair: share history columns kept */
#define HIST_STEP_MS 1000 /* fair: one history column per second */
#define FAIR_SETTLE_MS 2000 /* fair: contention measured from this long
			       into each stretch of it */

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
	/* PodsReady, from the Job: */
	int ready;           /* status.ready + succeeded, last version */
	int max_ready;       /* the most of them seen at once */
	int64_t ready_ms;    /* first seen unsuspended with every pod ready
				(or succeeded); 0: not yet */
	int64_t run_from_ms; /* the current run started (while up) */
	int64_t held_ms;     /* time seen running, over the ended runs */
	/* waitForPodsReady, from its Workload: */
	int timeouts;        /* evictions of reason PodsReadyTimeout */
	int limit_evictions; /* evictions Deactivated, RequeuingLimitExceeded */
	int requeued;        /* backoffs seen finished (BackoffFinished) */
	int requeue_count;   /* highest requeueState.count seen; -1: none */
	int limit;           /* requeueState.count when DeactivationTarget
				turned True for RequeuingLimitExceeded,
				i.e. backoffLimitCount; -1: not seen */
	int64_t backoff_s[MAX_BACKOFFS]; /* per timeout: requeueAt minus the
				eviction's time; -1: unknown */
	int64_t deact_ms;    /* seen inactive and Evicted DeactivatedDueTo*;
				0: not (or active again since) */
	char deact_reason[64]; /* that Evicted reason */
};

/* What waitForPodsReady did to a Job, as its Workload and Job showed
 * it (the file comment); shown for the Jobs planned never ready and
 * any other that timed out. */
enum ready_kind {
	RE_ADMITTED,    /* seen starting to run: its pods must get ready */
	RE_TIMEOUT,     /* a new PodsReadyTimeout eviction */
	RE_REQUEUED,    /* Requeued=True BackoffFinished after a timeout */
	RE_DEACTIVATED, /* spec.active=false, Evicted DeactivatedDueTo* */
};

struct dready {
	int64_t at_ms;      /* when the demo saw it */
	size_t job;         /* planned Job index */
	enum ready_kind kind;
	int n;              /* RE_ADMITTED: its admission number;
			       RE_TIMEOUT: the requeueState.count written
			       (-1: none); RE_DEACTIVATED: backoffLimitCount
			       reached (-1: other cause or unknown) */
	int ready, pods;    /* RE_ADMITTED, RE_TIMEOUT: pods ready then */
	int64_t after_s;    /* RE_TIMEOUT: Evicted minus Admitted time, in
			       s (the API's seconds); -1: unknown */
	int64_t backoff_s;  /* RE_TIMEOUT: requeueAt minus Evicted; -1 */
	int gpus;           /* RE_ADMITTED: GPUs it holds */
	int flavor;         /* RE_ADMITTED: their flavor (index into d->f);
			       -1: unknown */
	char text[64];      /* RE_TIMEOUT: requeueAt as written;
			       RE_DEACTIVATED: the Evicted reason */
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
	int64_t weight_milli;        /* spec.fairSharing.weight; 1000 when
					unset */
	bool has_share;              /* status.fairSharing seen */
	int64_t share;               /* its weightedShare (INT64_MAX: +Inf) */
	int64_t hist[HIST_N];        /* share per history column (ring at
					d->nhist); -1: none yet */
};

/* The cohort of the fair scenario (one: the first Cohort seen). */
struct dcohort {
	char *name;                  /* owned; NULL: none seen */
	int64_t nominal[MAX_FLAVORS]; /* GPUs of its own quota, per d->f */
	bool has_share;
	int64_t share;               /* status.fairSharing.weightedShare */
	int64_t hist[HIST_N];        /* as dqueue.hist */
};

/* The fair scenario's contention measure (dash_tick): over the time
 * every team had Jobs pending, less FAIR_SETTLE_MS at the start of each
 * stretch of it, the integrals of each team's GPUs held (from the Jobs)
 * and its queue's weightedShare (from its status). */
struct dfair {
	int64_t last_ms;             /* previous tick; 0: none */
	int64_t stretch_from_ms;     /* every team pending since; 0: not */
	int64_t window_ms;           /* time measured */
	double gpu_ms[FEED_MAX_TEAMS];   /* GPUs x ms held */
	double share_ms[FEED_MAX_TEAMS]; /* weightedShare x ms */
	double all_ms;               /* GPUs x ms held, all teams */
	int64_t end_share[FEED_MAX_TEAMS]; /* at the last measured tick;
					      -1: none */
	int64_t end_gpus[FEED_MAX_TEAMS];
	int64_t end_ms;              /* that tick */
	int64_t next_hist_ms;        /* next history column is due */
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
	enum feed_scenario scenario; /* what s plays (dash_set_scenario) */
	struct djob *jobs;       /* owned; s->n entries */
	struct dqueue q[MAX_QUEUES]; /* first nq used */
	int nq;                  /* sorted by name */
	struct dflavor f[MAX_FLAVORS]; /* first nf used */
	int nf;                  /* first seen first; display_order sorts */
	struct dpreempt *pre;    /* owned; npre in the order seen */
	size_t npre, cappre;
	size_t pre_shown;        /* preemptions printed as plain lines */
	struct dready *rdy;      /* owned; nrdy in the order seen */
	size_t nrdy, caprdy;
	size_t rdy_shown;        /* of them printed as plain lines */
	size_t last[LAST_N];     /* ring of admitted job indexes */
	size_t nlast;            /* admissions so far (ring position) */
	int64_t start_ms;        /* stream start; 0: not started */
	int64_t peak_used;       /* most GPUs in use at once, all flavors */
	struct dcohort coh;      /* fair: the cohort */
	struct dfair fair;       /* fair: the contention measure */
	size_t nhist;            /* fair: history columns so far */
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
	for (size_t i = 0; i < s->n; i++) {
		d->jobs[i].flavor = d->jobs[i].run_flavor = -1;
		d->jobs[i].requeue_count = d->jobs[i].limit = -1;
	}
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
	free(d->coh.name);
	free(d->pre);
	free(d->rdy);
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

/* Teams of the scenario. */
static int nteams(const struct dash *d)
{
	return d->scenario == FEED_FAIR ? FEED_MAX_TEAMS : FEED_NTEAM;
}

void dash_set_scenario(struct dash *d, enum feed_scenario sc)
{
	d->scenario = sc;
}

/* ---- small JSON readers ---- */

/* A quantity (string or number) in milli-units; dflt when absent or
 * bad. */
static int64_t milli(const json_t *v, int64_t dflt)
{
	struct quantity q;
	struct err e;

	if (json_is_integer(v))
		return (int64_t)json_integer_value(v) * 1000;
	if (!json_is_string(v) ||
	    quantity_parse(json_string_value(v), &q, &e) < 0)
		return dflt;
	return q.milli;
}

/* status.fairSharing.weightedShare of a ClusterQueue or Cohort into
 * *share; false (and 0) when absent. */
static bool weighted_share(const json_t *obj, int64_t *share)
{
	const json_t *v = JX_DIG(obj, "status", "fairSharing",
				 "weightedShare");

	*share = json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
	return json_is_integer(v);
}

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

/* ---- waitForPodsReady events ---- */

/* Whether the Job's PodsReady story is told: planned never ready, or
 * seen timing out. */
static bool ready_watched(const struct dash *d, size_t i)
{
	const struct djob *j = &d->jobs[i];

	return d->s->v[i].never_ready || j->timeouts || j->limit_evictions;
}

/* A new event of Job i, zeroed but for its time, Job and kind. */
static struct dready *ready_event(struct dash *d, size_t i,
				  enum ready_kind kind, int64_t now_ms)
{
	struct dready *e;

	XGROW(d->rdy, d->caprdy, d->nrdy + 1);
	e = &d->rdy[d->nrdy++];
	memset(e, 0, sizeof(*e));
	e->at_ms = now_ms;
	e->job = i;
	e->kind = kind;
	e->pods = d->s->v[i].pods;
	e->after_s = e->backoff_s = -1;
	return e;
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
	int ready;

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
	/* Its pods ready, as the job runner counts them: a succeeded pod
	 * was ready (PodsReady counts both). */
	ready = (int)(json_integer_value(JX_DIG(job, "status", "ready")) +
		      json_integer_value(JX_DIG(job, "status", "succeeded")));
	if (!deleted) {
		j->ready = ready;
		if (ready > j->max_ready)
			j->max_ready = ready;
		if (!j->ready_ms && unsuspended &&
		    ready >= d->s->v[i].pods)
			j->ready_ms = now_ms;
	}
	/* In use while unsuspended and not ended: an eviction suspends the
	 * Job again and releases, a re-admission counts on its new flavor,
	 * a deletion releases. */
	running = unsuspended && !ended && !deleted;
	if (running && !j->up) {
		j->runs++;
		j->run_from_ms = now_ms;
		if (ready_watched(d, (size_t)i)) {
			struct dready *e = ready_event(d, (size_t)i,
						       RE_ADMITTED, now_ms);

			e->n = j->runs;
			e->ready = ready;
			e->gpus = (int)gpus;
			e->flavor = job_flavor(d, job);
		}
	} else if (!running && j->up) {
		j->held_ms += now_ms - j->run_from_ms;
	}
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
	for (int k = 0; k < HIST_N; k++)
		d->q[i].hist[k] = -1;
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
	q->weight_milli = milli(JX_DIG(spec, "fairSharing", "weight"), 1000);
	q->has_share = weighted_share(cq, &q->share);
}

void dash_cohort(struct dash *d, const json_t *co, bool deleted)
{
	const char *name = jx_text(json_object_get(co, "metadata"), "name");
	struct dcohort *c = &d->coh;
	const json_t *rg, *fq, *rq;
	size_t a, b, k;

	if (c->name && strcmp(c->name, name))
		return; /* the demo follows one cohort */
	if (deleted) {
		free(c->name);
		memset(c, 0, sizeof(*c));
		return;
	}
	if (!c->name) {
		c->name = xstrdup(name);
		for (int i = 0; i < HIST_N; i++)
			c->hist[i] = -1;
	}
	for (int f = 0; f < MAX_FLAVORS; f++)
		c->nominal[f] = 0;
	json_array_foreach(JX_DIG(co, "spec", "resourceGroups"), a, rg)
		json_array_foreach(json_object_get(rg, "flavors"), b, fq) {
			int f = flavor_index(d, jx_text(fq, "name"), true);

			if (f < 0)
				continue;
			json_array_foreach(json_object_get(fq, "resources"),
					   k, rq)
				if (!strcmp(jx_text(rq, "name"), GPU))
					c->nominal[f] = units(json_object_get(
						rq, "nominalQuota"));
		}
	c->has_share = weighted_share(co, &c->share);
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

/* Evictions of reason (and of underlyingCause cause, unless NULL)
 * counted in a Workload's schedulingStats.evictions. */
static int eviction_count(const json_t *wl, const char *reason,
			  const char *cause)
{
	const json_t *ev = JX_DIG(wl, "status", "schedulingStats",
				  "evictions");
	size_t i;
	const json_t *e;
	int n = 0;

	json_array_foreach(ev, i, e)
		if (!strcmp(jx_text(e, "reason"), reason) &&
		    (!cause || !strcmp(jx_text(e, "underlyingCause"), cause)))
			n += (int)json_integer_value(json_object_get(e,
								     "count"));
	return n;
}

/* Preemptions counted in a Workload's schedulingStats.evictions. */
static int preempt_count(const json_t *wl)
{
	return eviction_count(wl, "Preempted", NULL);
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

/* Whether condition c has status (and reason, unless NULL). */
static bool cond_is(const json_t *c, const char *status, const char *reason)
{
	return c && !strcmp(jx_text(c, "status"), status) &&
	       (!reason || !strcmp(jx_text(c, "reason"), reason));
}

/* A condition's lastTransitionTime in epoch ms, or -1. */
static int64_t cond_time(const json_t *c)
{
	int64_t ms;

	if (!c || timestamp_parse(jx_text(c, "lastTransitionTime"), &ms) < 0)
		return -1;
	return ms;
}

/* waitForPodsReady on a version of planned Job i's Workload (the file
 * comment): timeouts, ends of backoffs, the deactivation. */
static void ready_track(struct dash *d, size_t i, const json_t *wl,
			int64_t now_ms)
{
	struct djob *j = &d->jobs[i];
	const json_t *rq = JX_DIG(wl, "status", "requeueState");
	const json_t *cnt = json_object_get(rq, "count");
	const json_t *ev = condition(wl, "Evicted");
	const json_t *adm = condition(wl, "Admitted");
	int count = json_is_integer(cnt) ? (int)json_integer_value(cnt) : -1;
	int n = eviction_count(wl, "PodsReadyTimeout", NULL);
	bool active = !json_is_false(JX_DIG(wl, "spec", "active"));
	const char *why;

	if (count > j->requeue_count)
		j->requeue_count = count;
	if (j->limit < 0 && cond_is(condition(wl, "DeactivationTarget"),
				    "True", "RequeuingLimitExceeded"))
		j->limit = count >= 0 ? count : j->requeue_count;
	for (; j->timeouts < n; j->timeouts++) {
		struct dready *e = ready_event(d, i, RE_TIMEOUT, now_ms);
		int64_t evicted = cond_is(ev, "True", "PodsReadyTimeout")
					  ? cond_time(ev)
					  : -1;
		int64_t at;

		e->n = count;
		e->ready = j->ready;
		snprintf(e->text, sizeof(e->text), "%s",
			 jx_text(rq, "requeueAt"));
		if (evicted >= 0 && cond_is(adm, "True", NULL) &&
		    cond_time(adm) >= 0)
			e->after_s = (evicted - cond_time(adm)) / 1000;
		if (evicted >= 0 && timestamp_parse(e->text, &at) == 0)
			e->backoff_s = (at - evicted) / 1000;
		if (j->timeouts < MAX_BACKOFFS)
			j->backoff_s[j->timeouts] = e->backoff_s;
	}
	j->limit_evictions = eviction_count(wl, "Deactivated",
					    "RequeuingLimitExceeded");
	/* the end of the backoff clears requeueAt; a Requeued=True
	 * BackoffFinished beside a requeueAt is the previous one's */
	if (j->requeued < j->timeouts && !jx_str(rq, "requeueAt") &&
	    cond_is(condition(wl, "Requeued"), "True", "BackoffFinished")) {
		j->requeued = j->timeouts;
		ready_event(d, i, RE_REQUEUED, now_ms);
	}
	why = cond_is(ev, "True", NULL) ? jx_text(ev, "reason") : "";
	if (!active && !j->deact_ms && !strncmp(why, "DeactivatedDueTo", 16)) {
		struct dready *e = ready_event(d, i, RE_DEACTIVATED, now_ms);

		j->deact_ms = now_ms;
		snprintf(j->deact_reason, sizeof(j->deact_reason), "%s", why);
		snprintf(e->text, sizeof(e->text), "%s", why);
		e->n = !strcmp(why, "DeactivatedDueToRequeuingLimitExceeded")
			       ? j->limit
			       : -1;
	} else if (active && j->deact_ms) {
		j->deact_ms = 0; /* reactivated: it may run again */
	}
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
	ready_track(d, (size_t)i, wl, now_ms);
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
	if (d->scenario == FEED_FAIR && !d->coh.name)
		return false;
	for (int t = 0; t < nteams(d); t++) {
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

/* Whether Job i is done with: it finished, could not be created, or
 * was deactivated and seen stopped. */
static bool settled(const struct djob *j)
{
	return j->create_failed || j->finished_ms || (j->deact_ms && !j->up);
}

bool dash_drained(const struct dash *d)
{
	for (size_t i = 0; i < d->s->n; i++)
		if (!settled(&d->jobs[i]))
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
	size_t deactivated; /* seen deactivated (and not finished) */
	size_t up;          /* running now (a preempted Job, suspended
			       again, is not; "running" counts it while it
			       waits to be admitted again) */
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
		c.deactivated += j->deact_ms && !j->finished_ms;
		c.running += j->admitted_ms && !j->finished_ms &&
			     !j->deact_ms;
		c.up += j->up;
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
 * Kueue's classical preemption gives always, any other when seen; in the
 * fair scenario only those seen. */
static void preempt_counts(const struct dash *d, char *buf, size_t len)
{
	size_t by[NREASON] = { 0 };
	size_t shown = 0;
	int w;

	for (size_t i = 0; i < d->npre; i++)
		by[d->pre[i].reason]++;
	w = snprintf(buf, len, "%zu (", d->npre);
	for (size_t r = 0; r < NREASON && w > 0 && (size_t)w < len; r++) {
		if ((r >= 3 || d->scenario == FEED_FAIR) && !by[r])
			continue;
		w += snprintf(buf + w, len - (size_t)w, "%s%s %zu",
			      shown++ ? ", " : "", preempt_reasons[r].reason,
			      by[r]);
	}
	if (w > 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, ")");
}

/* Times from admission to every pod ready, over the Jobs seen so. */
struct ready_stats {
	size_t n;
	int64_t sum, max; /* ms */
};

static struct ready_stats ready_stats(const struct dash *d)
{
	struct ready_stats r = { 0 };

	for (size_t i = 0; i < d->s->n; i++) {
		const struct djob *j = &d->jobs[i];
		int64_t w;

		if (!j->ready_ms || !j->admitted_ms)
			continue;
		w = j->ready_ms > j->admitted_ms ? j->ready_ms - j->admitted_ms
						 : 0;
		r.n++;
		r.sum += w;
		if (w > r.max)
			r.max = w;
	}
	return r;
}

/* PodsReady timeouts of a Job: its Workload's evictions for it, and the
 * one that deactivated it for the requeuing limit. */
static int timeouts_of(const struct djob *j)
{
	return j->timeouts + j->limit_evictions;
}

/* "name (N), ..." of the Jobs that timed out, or "none". */
static void timed_out_list(const struct dash *d, char *buf, size_t len)
{
	size_t w = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < d->s->n && w < len; i++) {
		int n = timeouts_of(&d->jobs[i]);
		int k;

		if (!n)
			continue;
		k = snprintf(buf + w, len - w, "%s%s (%d)", w ? ", " : "",
			     d->s->v[i].name, n);
		if (k < 0)
			break;
		w += (size_t)k;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* Appends to buf (of len, holding *w chars) what fmt says. */
static void catf(char *buf, size_t len, size_t *w, const char *fmt, ...)
	PRINTF_LIKE(4, 5);
static void catf(char *buf, size_t len, size_t *w, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*w >= len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *w, len - *w, fmt, ap);
	va_end(ap);
	if (k > 0)
		*w += (size_t)k;
}

/* The time of day of an RFC 3339 time ("04:30:47Z"), else all of it. */
static const char *time_of_day(const char *t)
{
	const char *p = strchr(t, 'T');

	return p ? p + 1 : t;
}

/* What event e says, without its time and Job; brief: in at most 72
 * columns (the dashboard's), else in full (a plain line). */
static void ready_text(const struct dash *d, const struct dready *e,
		       bool brief, char *buf, size_t len)
{
	size_t w = 0;

	buf[0] = '\0';
	switch (e->kind) {
	case RE_ADMITTED:
		catf(buf, len, &w, "admitted (admission %d), holds %d GPUs of "
		    "%s, %d/%d pods ready", e->n, e->gpus,
		    e->flavor >= 0 ? d->f[e->flavor].name : "?", e->ready,
		    e->pods);
		break;
	case RE_TIMEOUT:
		if (brief) {
			catf(buf, len, &w, "timed out");
			if (e->after_s >= 0)
				catf(buf, len, &w, " (%llds)",
				    (long long)e->after_s);
			catf(buf, len, &w, ": evicted");
		} else {
			catf(buf, len, &w, "PodsReady timeout: %d/%d pods "
			    "ready", e->ready, e->pods);
			if (e->after_s >= 0)
				catf(buf, len, &w, " %llds after admission",
				    (long long)e->after_s);
			catf(buf, len, &w, ": evicted (PodsReadyTimeout)");
		}
		if (e->n >= 0)
			catf(buf, len, &w, "%s requeueState.count %d",
			    brief ? ";" : ",", e->n);
		if (e->text[0])
			catf(buf, len, &w, ", requeueAt %s",
			    time_of_day(e->text));
		if (e->backoff_s >= 0 && !brief)
			catf(buf, len, &w, " (backoff %llds)",
			    (long long)e->backoff_s);
		break;
	case RE_REQUEUED:
		catf(buf, len, &w, "backoff over (Requeued BackoffFinished)%s",
		    brief ? "" : ": queued again");
		break;
	case RE_DEACTIVATED:
		if (!brief) {
			catf(buf, len, &w, "deactivated: ");
			if (e->n >= 0)
				catf(buf, len, &w, "requeueState.count %d "
				    "reached backoffLimitCount, ", e->n);
		}
		catf(buf, len, &w, "spec.active=false, Evicted %s", e->text);
		break;
	}
}

/* ---- fair sharing (FEED_FAIR) ---- */

/* GPUs of flavor f: the queues' nominal quota plus the cohort's own (the
 * fair platform's pool; 0 in the classic one, which follows no
 * Cohort). */
static int64_t capacity(const struct dash *d, int f)
{
	return total_nominal(d, f) + d->coh.nominal[f];
}

static int64_t capacity_all(const struct dash *d)
{
	int64_t cap = 0;

	for (int f = 0; f < d->nf; f++)
		cap += capacity(d, f);
	return cap;
}

/* The ClusterQueue team-<name> of team t, or NULL while unseen. */
static const struct dqueue *team_queue(const struct dash *d, int t)
{
	char name[64];

	snprintf(name, sizeof(name), "team-%s", feed_team_name(t));
	for (int i = 0; i < d->nq; i++)
		if (!strcmp(d->q[i].name, name))
			return &d->q[i];
	return NULL;
}

/* Per team, from the Jobs (one watch stream, so consistent): GPUs held
 * by its running Jobs and its Jobs pending (created, not running, not
 * ended: queued, or preempted and queued again). */
static void team_load(const struct dash *d, int64_t *held, int *pending)
{
	for (int t = 0; t < FEED_MAX_TEAMS; t++) {
		held[t] = 0;
		pending[t] = 0;
	}
	for (size_t i = 0; i < d->s->n; i++) {
		const struct djob *j = &d->jobs[i];
		int t = d->s->v[i].team;

		if (t < 0 || t >= FEED_MAX_TEAMS)
			continue;
		if (j->up)
			held[t] += feed_job_gpus(&d->s->v[i]);
		else if (j->created_ms && !j->finished_ms &&
			 !j->create_failed && !j->deact_ms)
			pending[t]++;
	}
}

/* The GPUs queue q would hold were the pool split by weight between the
 * queues that have work (pending or admitted): its fair part; -1 when q
 * has none. */
static double fair_part(const struct dash *d, const struct dqueue *q)
{
	int64_t wsum = 0;

	if (!q || q->pending + q->admitted == 0)
		return -1;
	for (int i = 0; i < d->nq; i++)
		if (d->q[i].pending + d->q[i].admitted > 0)
			wsum += d->q[i].weight_milli;
	return wsum > 0 ? (double)capacity_all(d) *
				  (double)q->weight_milli / (double)wsum
			: -1;
}

void dash_tick(struct dash *d, int64_t now_ms)
{
	struct dfair *fs = &d->fair;
	int64_t held[FEED_MAX_TEAMS], from;
	int pending[FEED_MAX_TEAMS];
	bool all = true;

	if (d->scenario != FEED_FAIR || !d->start_ms)
		return;
	/* 1. a history column every HIST_STEP_MS */
	if (now_ms >= fs->next_hist_ms) {
		size_t c = d->nhist % HIST_N;

		for (int i = 0; i < d->nq; i++)
			d->q[i].hist[c] = d->q[i].has_share ? d->q[i].share
							    : -1;
		d->coh.hist[c] = d->coh.has_share ? d->coh.share : -1;
		d->nhist++;
		fs->next_hist_ms = now_ms + HIST_STEP_MS;
	}
	/* 2. contention: every team has Jobs pending; measured from
	 * FAIR_SETTLE_MS into each stretch of it, so that the preemptions
	 * of a team's arrival have landed */
	team_load(d, held, pending);
	for (int t = 0; t < nteams(d); t++)
		if (!pending[t])
			all = false;
	if (!all)
		fs->stretch_from_ms = 0;
	else if (!fs->stretch_from_ms)
		fs->stretch_from_ms = now_ms;
	from = fs->stretch_from_ms + FAIR_SETTLE_MS;
	if (all && fs->last_ms && now_ms > from) {
		int64_t dt = now_ms - (fs->last_ms > from ? fs->last_ms : from);

		fs->window_ms += dt;
		for (int t = 0; t < nteams(d); t++) {
			const struct dqueue *q = team_queue(d, t);
			int64_t sh = q && q->has_share ? q->share : 0;

			fs->gpu_ms[t] += (double)held[t] * (double)dt;
			fs->share_ms[t] += (double)sh * (double)dt;
			fs->all_ms += (double)held[t] * (double)dt;
			fs->end_share[t] = q && q->has_share ? q->share : -1;
			fs->end_gpus[t] = held[t];
		}
		fs->end_ms = now_ms;
	}
	fs->last_ms = now_ms;
}

/* A weightedShare as text: "inf" for Kueue's MaxInt64 (weight 0), "-"
 * while unknown. */
static const char *share_text(bool has, int64_t v, char *buf, size_t len)
{
	if (!has)
		snprintf(buf, len, "-");
	else if (v == INT64_MAX)
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%lld", (long long)v);
	return buf;
}

/* The largest share in the history columns shown (the last cols). */
static int64_t hist_max(const struct dash *d, size_t cols)
{
	size_t n = d->nhist < HIST_N ? d->nhist : HIST_N;
	int64_t max = 0;

	if (cols < n)
		n = cols;
	for (size_t k = 0; k < n; k++) {
		size_t c = (d->nhist - n + k) % HIST_N;

		for (int i = 0; i < d->nq; i++)
			if (d->q[i].hist[c] != INT64_MAX &&
			    d->q[i].hist[c] > max)
				max = d->q[i].hist[c];
		if (d->coh.hist[c] != INT64_MAX && d->coh.hist[c] > max)
			max = d->coh.hist[c];
	}
	return max;
}

/* The last cols columns of hist as a sparkline scaled to max, oldest
 * first, in ASCII (so a line clips by columns): '_' a share of 0, then
 * ".:-=+*#" up to '@' for max; ' ' unknown, '!' +Inf. */
static void sparkline(const struct dash *d, const int64_t *hist,
		      int64_t max, size_t cols, char *buf, size_t len)
{
	static const char levels[] = "_.:-=+*#@";
	size_t n = d->nhist < HIST_N ? d->nhist : HIST_N, w = 0;

	if (cols < n)
		n = cols;
	for (size_t k = 0; k < n && w + 1 < len; k++) {
		int64_t v = hist[(d->nhist - n + k) % HIST_N];
		char ch;

		if (v < 0)
			ch = ' ';
		else if (v == INT64_MAX)
			ch = '!';
		else if (v == 0 || max <= 0)
			ch = '_';
		else
			ch = levels[1 + (v - 1) * 8 / max > 8
					    ? 8
					    : 1 + (v - 1) * 8 / max];
		buf[w++] = ch;
	}
	buf[w] = '\0';
}

/* A weight in milli-units as the YAML would say it ("2", "0.5"). */
static void weight_text(int64_t milli_w, char *buf, size_t len)
{
	if (milli_w % 1000 == 0)
		snprintf(buf, len, "%lld", (long long)(milli_w / 1000));
	else
		snprintf(buf, len, "%.3g", (double)milli_w / 1000.0);
}

/* The fair dashboard's queue table: per ClusterQueue its weight, GPUs
 * (status.flavorsUsage), fair part, pending, weightedShare and its
 * history; then the cohort's. */
static void render_fair_table(struct dash *d, char lines[][256], int *n)
{
	char row[256], cell[48], wt[24], sh[24], fp[24], spark[HIST_N + 1];
	int64_t used_all = 0, cap = capacity_all(d), max;
	int pend_all = 0;
	size_t cols;

	/* "%-15s %6s %7s %6s %7s %6s  " is 51 columns */
	cols = d->width > 51 + 10 ? (size_t)(d->width - 1 - 51) : 10;
	if (cols > HIST_N)
		cols = HIST_N;
	max = hist_max(d, cols);
	add_line(d, lines, n, "%-15s %6s %7s %6s %7s %6s  SHARE HISTORY, "
		 "1 column/s ('@' = %lld)", "CLUSTERQUEUE", "WEIGHT", "GPUS",
		 "FAIR", "PENDING", "SHARE", (long long)max);
	for (int i = 0; i < d->nq; i++) {
		const struct dqueue *q = &d->q[i];
		double part = fair_part(d, q);
		int64_t used = sum4(q->used, d->nf);

		used_all += used;
		pend_all += q->pending;
		weight_text(q->weight_milli, wt, sizeof(wt));
		snprintf(cell, sizeof(cell), "%lld/%lld", (long long)used,
			 (long long)cap);
		if (part >= 0)
			snprintf(fp, sizeof(fp), "%.1f", part);
		else
			snprintf(fp, sizeof(fp), "-");
		sparkline(d, q->hist, max, cols, spark, sizeof(spark));
		snprintf(row, sizeof(row), "%-15s %6s %7s %6s %7d %6s  %s",
			 q->name, wt, cell, fp, q->pending,
			 share_text(q->has_share, q->share, sh, sizeof(sh)),
			 spark);
		add_line(d, lines, n, "%s", row);
	}
	if (d->coh.name) {
		snprintf(row, sizeof(row), "cohort %s", d->coh.name);
		snprintf(cell, sizeof(cell), "%lld/%lld", (long long)used_all,
			 (long long)cap);
		sparkline(d, d->coh.hist, max, cols, spark, sizeof(spark));
		add_line(d, lines, n, "%-15.15s %6s %7s %6s %7d %6s  %s", row,
			 "", cell, "", pend_all,
			 share_text(d->coh.has_share, d->coh.share, sh,
				    sizeof(sh)),
			 spark);
	}
}

/* The fair plain line's queues: " | team-nlp w2 gpus 10/32 share 157
 * pending 5" each, then the cohort's share. */
static void plain_fair(const struct dash *d, FILE *out)
{
	char wt[24], sh[24];
	int64_t cap = capacity_all(d);

	for (int i = 0; i < d->nq; i++) {
		const struct dqueue *q = &d->q[i];

		weight_text(q->weight_milli, wt, sizeof(wt));
		fprintf(out, " | %s w%s gpus %lld/%lld share %s pending %d",
			q->name, wt, (long long)sum4(q->used, d->nf),
			(long long)cap,
			share_text(q->has_share, q->share, sh, sizeof(sh)),
			q->pending);
	}
	if (d->coh.name)
		fprintf(out, " | cohort %s share %s", d->coh.name,
			share_text(d->coh.has_share, d->coh.share, sh,
				   sizeof(sh)));
}

/*
 * The fair summary: over the contention window (dash_tick), each team's
 * mean GPUs held beside its fair part of the pool, its part of the GPUs
 * held beside its part of the weights, its mean weightedShare and the one
 * at the window's end; the largest gap between parts; the fair-sharing
 * preemptions by preemptor's and victim's team.
 */
static void summary_fair(const struct dash *d, FILE *out)
{
	const struct dfair *fs = &d->fair;
	int64_t wsum = 0, cap = capacity_all(d);
	double gap = 0;
	size_t by_pre[FEED_MAX_TEAMS] = { 0 }, by_vic[FEED_MAX_TEAMS] = { 0 };
	size_t nfs = 0;
	char wt[24], sh[24];

	for (int t = 0; t < nteams(d); t++) {
		const struct dqueue *q = team_queue(d, t);

		wsum += q ? q->weight_milli : 1000;
	}
	fprintf(out, "fair sharing: cohort %s, %lld GPUs; contention (every "
		"team with Jobs pending) measured over %.1fs\n",
		d->coh.name ? d->coh.name : "?", (long long)cap,
		secs(fs->window_ms));
	for (int t = 0; t < nteams(d) && fs->window_ms > 0; t++) {
		const struct dqueue *q = team_queue(d, t);
		int64_t w = q ? q->weight_milli : 1000;
		double mean = fs->gpu_ms[t] / (double)fs->window_ms;
		double part = fs->all_ms > 0 ? 100.0 * fs->gpu_ms[t] /
						       fs->all_ms
					     : 0;
		double wpart = wsum ? 100.0 * (double)w / (double)wsum : 0;
		char name[40];

		if (part - wpart > gap || wpart - part > gap)
			gap = part > wpart ? part - wpart : wpart - part;
		weight_text(w, wt, sizeof(wt));
		snprintf(name, sizeof(name), "team-%s", feed_team_name(t));
		fprintf(out, "  %-14s weight %-3s GPUs held %5.1f mean (fair "
			"part %4.1f), %3.0f%% of those held (weight %3.0f%%); "
			"weightedShare mean %.0f, at the end %s\n", name, wt,
			mean, (double)cap * (double)w / (double)wsum, part,
			wpart, fs->share_ms[t] / (double)fs->window_ms,
			share_text(fs->end_share[t] >= 0, fs->end_share[t],
				   sh, sizeof(sh)));
	}
	if (fs->window_ms > 0)
		fprintf(out, "  cohort %s weightedShare %s (a root cohort's "
			"share is 0: it borrows from no one)\n",
			d->coh.name ? d->coh.name : "?",
			share_text(d->coh.has_share, d->coh.share, sh,
				   sizeof(sh)));
	if (fs->window_ms > 0)
		fprintf(out, "shares vs weights: largest gap %.1f points "
			"(one Job of 2 GPUs is %.1f points of the pool)\n",
			gap, cap ? 200.0 / (double)cap : 0.0);
	else
		fprintf(out, "shares vs weights: no contention measured\n");
	for (size_t k = 0; k < d->npre; k++) {
		const struct dpreempt *p = &d->pre[k];
		long by = job_of_wl_uid(d, p->by_uid);

		if (strcmp(preempt_reasons[p->reason].reason,
			   "InCohortFairSharing"))
			continue;
		nfs++;
		by_vic[d->s->v[p->victim].team]++;
		if (by >= 0)
			by_pre[d->s->v[by].team]++;
	}
	fprintf(out, "preemptions with reason InCohortFairSharing: %zu; by "
		"the preemptor's team:", nfs);
	for (int t = 0, first = 1; t < nteams(d); t++)
		if (by_pre[t]) {
			fprintf(out, "%s team-%s %zu", first ? "" : ",",
				feed_team_name(t), by_pre[t]);
			first = 0;
		}
	fprintf(out, "; victims' team:");
	for (int t = 0, first = 1; t < nteams(d); t++)
		if (by_vic[t]) {
			fprintf(out, "%s team-%s %zu", first ? "" : ",",
				feed_team_name(t), by_vic[t]);
			first = 0;
		}
	fputc('\n', out);
}

/* The dashboard's PODS READY block (the classic scenario's). */
static void render_ready(struct dash *d, char lines[][256], int *n,
			 char *row, size_t len)
{
	struct ready_stats r = ready_stats(d);

	add_line(d, lines, n, "%s", "");
	timed_out_list(d, row, len);
	add_line(d, lines, n, "PODS READY: %zu jobs, mean %.2fs after "
		 "admission; timed out: %s", r.n,
		 r.n ? secs(r.sum) / (double)r.n : 0.0, row);
	add_line(d, lines, n, "%7s %-18s %s", "at", "job",
		 "waitForPodsReady");
	for (size_t k = 0; k < LAST_READY; k++) {
		const struct dready *e;

		if (k >= d->nrdy) {
			add_line(d, lines, n, "%s", "");
			continue;
		}
		e = &d->rdy[d->nrdy - 1 - k];
		ready_text(d, e, true, row, len);
		add_line(d, lines, n, "%6.1fs %-18s %s",
			 secs(e->at_ms - d->start_ms), d->s->v[e->job].name,
			 row);
	}
}

static void render_tty(struct dash *d, int64_t now_ms, FILE *out)
{
	char lines[MAX_LINES][256];
	char cell[64], row[256];
	int n = 0, len, ord[MAX_FLAVORS];
	struct counts c = count_jobs(d);
	int64_t cap = capacity_all(d), used = in_use_total(d);
	bool fair = d->scenario == FEED_FAIR;

	display_order(d, ord);

	if (fair)
		add_line(d, lines, &n,
			 "cueue demo: fair sharing   t+%5.1fs   jobs %zu/%zu "
			 "created, %zu running, %zu finished",
			 d->start_ms ? secs(now_ms - d->start_ms) : 0.0,
			 c.created, d->s->n, c.up, c.finished);
	else
		add_line(d, lines, &n,
			 "cueue demo   t+%5.1fs   jobs %zu/%zu created, %zu "
			 "running, %zu finished, %zu deactivated",
			 d->start_ms ? secs(now_ms - d->start_ms) : 0.0,
			 c.created, d->s->n, c.running, c.finished,
			 c.deactivated);
	add_line(d, lines, &n, "%s", "");
	if (fair)
		render_fair_table(d, lines, &n);
	len = snprintf(row, sizeof(row), "%-15s", "CLUSTERQUEUE");
	for (int f = 0; f < d->nf && len < 200; f++)
		len += snprintf(row + len, sizeof(row) - (size_t)len, " %7s",
				d->f[ord[f]].name);
	if (!fair)
		add_line(d, lines, &n,
			 "%s   GPUS  BORROWED  LENT  PENDING  ADMITTED", row);
	for (int i = 0; i < d->nq && !fair; i++) {
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
	add_line(d, lines, &n, "%7s %-18s %-13s %-14s %-7s %-6s %6s %6s",
		 "at", "job", "queue", "class", "GPUs", "flavor", "waited",
		 "ready");
	for (size_t k = 0; k < LAST_N; k++) {
		const struct feed_job *sj;
		const struct djob *j;
		char shape[32], wait[32], qn[40], rdy[32];

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
		/* pods ready (or succeeded) in its last version */
		snprintf(rdy, sizeof(rdy), "%d/%d", j->ready, sj->pods);
		snprintf(qn, sizeof(qn), "team-%s",
			 feed_team_name(sj->team));
		add_line(d, lines, &n,
			 "%6.1fs %-18s %-13s %-14s %-7s %-6s %6s %6s",
			 secs(j->admitted_ms - d->start_ms), sj->name, qn,
			 feed_class_name(sj->klass), shape,
			 j->flavor >= 0 ? d->f[j->flavor].name : "?", wait,
			 rdy);
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
	if (!fair)
		render_ready(d, lines, &n, row, sizeof(row));
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

	/* the preemptions and waitForPodsReady events seen since the last
	 * call, in the order seen */
	while (d->pre_shown < d->npre || d->rdy_shown < d->nrdy) {
		char text[256];

		if (d->rdy_shown == d->nrdy ||
		    (d->pre_shown < d->npre &&
		     d->pre[d->pre_shown].at_ms <=
			     d->rdy[d->rdy_shown].at_ms)) {
			const struct dpreempt *p = &d->pre[d->pre_shown++];

			preemptor_name(d, p, text, sizeof(text));
			fprintf(out, "[t+%5.1fs] preempted %s (%lld GPUs "
				"freed) for %s: %s\n",
				secs(p->at_ms - d->start_ms),
				d->s->v[p->victim].name, (long long)p->gpus,
				text, preempt_reasons[p->reason].reason);
		} else {
			const struct dready *e = &d->rdy[d->rdy_shown++];

			ready_text(d, e, false, text, sizeof(text));
			fprintf(out, "[t+%5.1fs] %s %s\n",
				secs(e->at_ms - d->start_ms),
				d->s->v[e->job].name, text);
		}
	}

	fprintf(out, "[t+%5.1fs] jobs %zu/%zu created, %zu running, "
		"%zu finished",
		d->start_ms ? secs(now_ms - d->start_ms) : 0.0, c.created,
		d->s->n, d->scenario == FEED_FAIR ? c.up : c.running,
		c.finished);
	if (d->scenario == FEED_FAIR)
		plain_fair(d, out);
	for (int i = 0; i < d->nq && d->scenario != FEED_FAIR; i++) {
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

/*
 * The summary's waitForPodsReady lines: how soon the pods of the Jobs
 * were ready after admission and which Jobs timed out; then, for each
 * Job planned never ready or seen timing out, what the API showed of it:
 *
 *   gang research-gang-018: never ready, timed out 3 times, deactivated
 *   after backoffLimitCount=2
 *     0 of 2 pods ready in 3 admissions, ...
 */
static void summary_ready(const struct dash *d, int64_t now_ms, FILE *out)
{
	struct ready_stats r = ready_stats(d);
	char buf[512];

	timed_out_list(d, buf, sizeof(buf));
	fprintf(out, "pods ready after admission: %zu jobs, mean %.2fs, max "
		"%.2fs; PodsReady timeouts: %s\n", r.n,
		r.n ? secs(r.sum) / (double)r.n : 0.0, secs(r.max), buf);
	for (size_t i = 0; i < d->s->n; i++) {
		const struct feed_job *sj = &d->s->v[i];
		const struct djob *j = &d->jobs[i];
		int to = timeouts_of(j);
		int64_t held = j->held_ms +
			       (j->up ? now_ms - j->run_from_ms : 0);
		size_t w = 0;

		if (!ready_watched(d, i))
			continue;
		catf(buf, sizeof(buf), &w, "%s %s: ", sj->pods > 1 ? "gang" :
			"job", sj->name);
		if (!j->runs)
			catf(buf, sizeof(buf), &w, "never admitted");
		else if (!j->max_ready)
			catf(buf, sizeof(buf), &w, "never ready");
		else if (j->max_ready < sj->pods)
			catf(buf, sizeof(buf), &w, "at most %d of %d pods "
			    "ready", j->max_ready, sj->pods);
		else
			catf(buf, sizeof(buf), &w, "ready at last");
		catf(buf, sizeof(buf), &w, ", timed out %d time%s, ", to,
		    to == 1 ? "" : "s");
		if (j->deact_ms && !strcmp(j->deact_reason,
				"DeactivatedDueToRequeuingLimitExceeded")) {
			if (j->limit >= 0)
				catf(buf, sizeof(buf), &w, "deactivated after "
				    "backoffLimitCount=%d", j->limit);
			else
				catf(buf, sizeof(buf), &w, "deactivated after "
				    "backoffLimitCount=?");
		} else if (j->deact_ms) {
			catf(buf, sizeof(buf), &w, "deactivated (%s)",
			    j->deact_reason);
		} else if (j->requeue_count >= 0) {
			catf(buf, sizeof(buf), &w, "not deactivated "
			    "(requeueState.count %d)", j->requeue_count);
		} else {
			catf(buf, sizeof(buf), &w, "not deactivated");
		}
		fprintf(out, "%s\n", buf);
		w = 0;
		catf(buf, sizeof(buf), &w, "  %d of %d pods ready in %d "
		    "admission%s, %d GPUs held %.1fs in all", j->max_ready,
		    sj->pods, j->runs, j->runs == 1 ? "" : "s",
		    feed_job_gpus(sj), secs(held));
		if (j->timeouts) {
			catf(buf, sizeof(buf), &w, "; evicted PodsReadyTimeout "
			    "%d time%s, requeued after backoffs of",
			    j->timeouts, j->timeouts == 1 ? "" : "s");
			for (int k = 0; k < j->timeouts && k < MAX_BACKOFFS;
			     k++) {
				if (j->backoff_s[k] >= 0)
					catf(buf, sizeof(buf), &w, "%s %llds",
					    k ? "," : "",
					    (long long)j->backoff_s[k]);
				else
					catf(buf, sizeof(buf), &w, "%s ?",
					    k ? "," : "");
			}
		}
		if (j->deact_ms)
			catf(buf, sizeof(buf), &w, "; spec.active=false, "
			    "Evicted %s at t+%.1fs", j->deact_reason,
			    secs(j->deact_ms - d->start_ms));
		fprintf(out, "%s\n", buf);
	}
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
	size_t victims = 0, back = 0, gone = 0, n = 0, nother = 0;
	int64_t freed = 0, sum = 0, max = 0, sum_other = 0;

	preempt_counts(d, buf, sizeof(buf));
	for (size_t k = 0; k < d->npre; k++)
		freed += d->pre[k].gpus;
	for (size_t i = 0; i < d->s->n; i++) {
		const struct djob *j = &d->jobs[i];

		if (!j->preempted)
			continue;
		victims++;
		/* Complete after its preemption: it was admitted again (a
		 * preempted Job is suspended until then), whether or not it
		 * had been seen running before it was preempted (a Workload
		 * may lose its admission before its Job is unsuspended) */
		back += j->finished_ms && !j->failed;
		gone += j->deact_ms && !j->finished_ms;
	}
	fprintf(out, "preemptions: %s, %lld GPUs freed\n", buf,
		(long long)freed);
	/* a victim deactivated since will not finish: said apart */
	fprintf(out, "preempted jobs: %zu, %zu re-admitted and finished",
		victims, back);
	if (gone)
		fprintf(out, ", %zu deactivated", gone);
	fputc('\n', out);
	if (d->scenario == FEED_FAIR)
		return; /* no production inference in its stream */
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
		"%zu finished, %zu failed, %zu deactivated, in %.1fs\n",
		d->s->n, c.created, admitted, c.finished,
		c.failed + c.create_failed, c.deactivated,
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
	if (d->scenario == FEED_FAIR)
		summary_fair(d, out);
	summary_preemptions(d, waits, out);
	if (d->scenario != FEED_FAIR)
		summary_ready(d, now_ms, out);
	cap = capacity_all(d);
	fprintf(out, "peak GPU utilisation: %lld/%lld GPUs (%.0f%%);",
		(long long)d->peak_used, (long long)cap,
		cap ? 100.0 * (double)d->peak_used / (double)cap : 0.0);
	for (int f = 0; f < d->nf; f++)
		fprintf(out, "%s %s %lld/%lld", f ? "," : "",
			d->f[ord[f]].name, (long long)d->f[ord[f]].peak,
			(long long)capacity(d, ord[f]));
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
