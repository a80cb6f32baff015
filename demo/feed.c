/*
 * feed: the demo's Job mix (see feed.h); the fair scenario's is
 * plan_fair's, below. The classic one opens with scripted scenes,
 * the same every run, that put the platform where preemption is what
 * a GPU platform team wants from it (the times are offsets into the
 * stream; every team's nominal quota is in demo/platform.yaml):
 *
 *   0 s    every team's h100 is busy within its nominal quota: nlp and
 *          recsys serve inference, research trains;
 *   1 s    research launches a sweep of five 4-GPU experiments: 8 a100
 *          GPUs of its own and 12 borrowed, lent by nlp (8) and recsys
 *          (4); recsys trains on its 4 a100 GPUs that it never lends;
 *   3.5 s, 5 s  nlp's experiments arrive and take back the a100 GPUs
 *          nlp lent: reclaimWithinCohort preempts two of research's
 *          borrowing experiments (InCohortReclamation);
 *   6.5 s  recsys's second training job takes back what recsys lent:
 *          a third research experiment goes (InCohortReclamation);
 *   9 s    every queue is at its nominal quota in both flavors and
 *          production inference arrives in nlp: h100 holds only work
 *          of its priority, so withinClusterQueue: LowerPriority
 *          preempts one of nlp's own experiments (InClusterQueue);
 *   12 s   research submits a 2-pod training gang whose pods never turn
 *          ready (cueue.dev/ready-after: never: a bad image, a node that
 *          is not there). It is admitted on research's own quota and
 *          holds it idle until waitForPodsReady (demo/manager-config.yaml)
 *          evicts it after its timeout and requeues it after a backoff,
 *          twice, then deactivates it; meanwhile the seeded stream,
 *          which starts at the same time, is admitted around it.
 *
 * The scenes' Jobs run at least until the scenes are over, whatever the
 * runtime scale, so each preemption finds the state it needs. After them
 * comes a seeded stream of what a shared GPU cluster sees in a busy
 * hour: many small inference Jobs, fewer but large training Jobs (single
 * 8-GPU pods and gangs of 2-4 pods that must start together), and a tail
 * of research experiments. The numbers are chosen so that demand exceeds
 * the 40 GPUs for most of the stream: queues build up, teams borrow and
 * reclaim, and the stream still drains within about a minute of its last
 * creation.
 *
 * This file builds json_t objects outside the places STYLE P3(c) names:
 * the demo is a client program, not part of the core, and the JSON goes
 * straight into a POST body.
 */
#include "demo/feed.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static const char *const team_names[FEED_MAX_TEAMS] = {
	"nlp", "recsys", "research", "vision"
};

static const char *const class_names[FEED_NCLASS] = {
	[FEED_INFERENCE] = "prod-inference",
	[FEED_TRAINING] = "training",
	[FEED_EXPERIMENT] = "experiment",
};

/* Short forms for Job names. */
static const char *const class_short[FEED_NCLASS] = {
	[FEED_INFERENCE] = "infer",
	[FEED_TRAINING] = "train",
	[FEED_EXPERIMENT] = "exp",
};

/* A pod shape: pods x GPUs per pod. */
struct shape {
	int pods;
	int gpus;
};

/* Per class: the shapes drawn from (uniformly), the teams' weights in
 * percent, the runtime range in ms. */
struct class_mix {
	int percent;              /* share of the stream */
	struct shape shapes[6];
	size_t nshapes;
	int team_pct[FEED_NTEAM];
	int64_t rt_min_ms, rt_max_ms;
};

static const struct class_mix mix[FEED_NCLASS] = {
	[FEED_INFERENCE] = {
		.percent = 35,
		.shapes = { { 1, 1 }, { 1, 1 }, { 1, 2 }, { 2, 1 } },
		.nshapes = 4,
		.team_pct = { 50, 50, 0 },
		.rt_min_ms = 3000, .rt_max_ms = 7000,
	},
	[FEED_TRAINING] = {
		.percent = 35,
		.shapes = { { 1, 4 }, { 1, 8 }, { 2, 2 }, { 2, 4 }, { 4, 2 },
			    { 4, 1 } },
		.nshapes = 6,
		.team_pct = { 45, 25, 30 },
		.rt_min_ms = 8000, .rt_max_ms = 16000,
	},
	[FEED_EXPERIMENT] = {
		.percent = 30,
		.shapes = { { 1, 1 }, { 1, 2 }, { 2, 1 }, { 1, 4 } },
		.nshapes = 4,
		.team_pct = { 30, 0, 70 },
		.rt_min_ms = 4000, .rt_max_ms = 10000,
	},
};

enum { NLP, RECSYS, RESEARCH, VISION };

/* One scripted Job of the opening scenes (the file comment). */
struct scene_job {
	int team;
	enum feed_class klass;
	int pods, gpus;     /* pods x GPUs per pod */
	int64_t at_ms;      /* creation offset */
	int64_t runtime_ms; /* at runtime scale 1 */
	bool never_ready;   /* its pods never turn ready */
};

static const struct scene_job scenes[] = {
	/* 0 s: h100 busy, each team within its nominal quota */
	{ NLP, FEED_INFERENCE, 1, 2, 0, 15000, false },
	{ NLP, FEED_INFERENCE, 1, 2, 0, 17000, false },
	{ NLP, FEED_INFERENCE, 1, 2, 0, 14000, false },
	{ NLP, FEED_INFERENCE, 1, 2, 0, 16000, false },
	{ RECSYS, FEED_INFERENCE, 1, 2, 0, 15000, false },
	{ RECSYS, FEED_INFERENCE, 1, 2, 0, 14000, false },
	{ RESEARCH, FEED_TRAINING, 1, 4, 500, 16000, false },
	/* 1 s: research's sweep borrows 12 a100 GPUs */
	{ RESEARCH, FEED_EXPERIMENT, 1, 4, 1000, 15000, false },
	{ RESEARCH, FEED_EXPERIMENT, 1, 4, 1000, 13000, false },
	{ RESEARCH, FEED_EXPERIMENT, 1, 4, 1000, 16000, false },
	{ RESEARCH, FEED_EXPERIMENT, 1, 4, 1000, 14000, false },
	{ RESEARCH, FEED_EXPERIMENT, 1, 4, 1000, 15000, false },
	{ RECSYS, FEED_TRAINING, 2, 2, 1500, 15000, false },
	/* 3.5 s, 5 s: nlp reclaims the a100 GPUs it lent */
	{ NLP, FEED_EXPERIMENT, 1, 4, 3500, 10000, false },
	{ NLP, FEED_EXPERIMENT, 1, 4, 5000, 9000, false },
	/* 6.5 s: recsys reclaims what it lent */
	{ RECSYS, FEED_TRAINING, 1, 4, 6500, 10000, false },
	/* 9 s: production inference preempts an nlp experiment */
	{ NLP, FEED_INFERENCE, 1, 2, 9000, 5000, false },
	/* 12 s: a gang that never gets ready, with the seeded stream */
	{ RESEARCH, FEED_TRAINING, 2, 1, 12000, 10000, true },
};

#define NSCENE (sizeof(scenes) / sizeof(scenes[0]))
/* The preemption scenes' Jobs run at least until this offset (plus
 * their own start), and the seeded stream starts a second after it, as
 * the never-ready gang does. */
#define SCENES_END_MS 11000

/* xorshift64*: small, deterministic, good enough for a demo. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 2685821657736338717ULL;
}

/* Uniform in [0, n). */
static uint64_t pick(uint64_t *s, uint64_t n)
{
	return n ? (next_rand(s) >> 11) % n : 0;
}

static int pick_weighted(uint64_t *s, const int *pct, int n)
{
	int r = (int)pick(s, 100), acc = 0;

	for (int i = 0; i < n; i++) {
		acc += pct[i];
		if (r < acc)
			return i;
	}
	return n - 1;
}

void feed_release(struct feed *s)
{
	FREE_AND_NULL(s->v);
	s->n = 0;
}

static void name_job(struct feed_job *j, size_t i)
{
	snprintf(j->name, sizeof(j->name), "%s-%s-%03zu",
		 team_names[j->team],
		 j->never_ready ? "gang" : class_short[j->klass], i + 1);
}


static int64_t scaled(int64_t ms, double scale)
{
	int64_t v = (int64_t)((double)ms * scale);

	return v < 100 ? 100 : v;
}

static void plan_classic(struct feed *s, const struct feed_opts *o)
{
	uint64_t rng = o->seed * 0x9E3779B97F4A7C15ULL + 1;
	int cls_pct[FEED_NCLASS];
	double scale = o->runtime_scale > 0 ? o->runtime_scale : 1;
	size_t nscene = o->jobs < NSCENE ? o->jobs : NSCENE;
	size_t nbg = o->jobs - nscene;
	int64_t bg_span = o->span_ms > SCENES_END_MS + 1000
				  ? o->span_ms - SCENES_END_MS - 1000
				  : 0;

	for (int c = 0; c < FEED_NCLASS; c++)
		cls_pct[c] = mix[c].percent;
	s->v = xcalloc(o->jobs ? o->jobs : 1, sizeof(*s->v));
	s->n = o->jobs;
	/* 1. The scenes, in time order; each runs past their end. */
	for (size_t i = 0; i < nscene; i++) {
		const struct scene_job *sc = &scenes[i];
		struct feed_job *j = &s->v[i];
		int64_t floor_ms = SCENES_END_MS - sc->at_ms + 1000;

		j->team = sc->team;
		j->klass = sc->klass;
		j->pods = sc->pods;
		j->gpus_per_pod = sc->gpus;
		j->at_ms = sc->at_ms;
		j->runtime_ms = scaled(sc->runtime_ms, scale);
		if (j->runtime_ms < floor_ms)
			j->runtime_ms = floor_ms;
		j->never_ready = sc->never_ready;
		name_job(j, i);
	}
	/* 2. The seeded stream, spread over what is left of the span. */
	for (size_t k = 0; k < nbg; k++) {
		struct feed_job *j = &s->v[nscene + k];
		enum feed_class c =
			(enum feed_class)pick_weighted(&rng, cls_pct,
						       FEED_NCLASS);
		const struct class_mix *m = &mix[c];
		const struct shape *sh = &m->shapes[pick(&rng, m->nshapes)];
		int64_t rt = m->rt_min_ms +
			     (int64_t)pick(&rng, (uint64_t)(m->rt_max_ms -
							   m->rt_min_ms + 1));
		int64_t jitter;

		j->klass = c;
		j->team = pick_weighted(&rng, m->team_pct, FEED_NTEAM);
		j->pods = sh->pods;
		j->gpus_per_pod = sh->gpus;
		j->runtime_ms = scaled(rt, scale);
		/* evenly spread, with up to half a slot of jitter, so the
		 * plan stays sorted by at_ms */
		j->at_ms = SCENES_END_MS + 1000 +
			   (nbg > 1 ? bg_span * (int64_t)k /
					      (int64_t)(nbg - 1)
				    : 0);
		jitter = nbg > 1 ? bg_span / (int64_t)nbg / 2 : 0;
		if (jitter > 0 && k > 0 && k + 1 < nbg)
			j->at_ms -= (int64_t)pick(&rng, (uint64_t)jitter);
		name_job(j, nscene + k);
	}
}

/*
 * The fair scenario (make demo SCENARIO=fair). The four teams of
 * demo/platform-fair.yaml share the cohort's 32 GPUs, none with a quota
 * of its own, weighted nlp 2, recsys 1, research 1, vision 2 (the table
 * below mirrors the YAML; the dashboard reads the real weights from the
 * ClusterQueues). They arrive one after the other, each with a burst of
 * Jobs larger than its share:
 *
 *   0 s        research alone: its burst of 16 Jobs (32 GPUs) fills
 *              the whole pool;
 *   2 s, 4 s   nlp, then recsys: below their share, they preempt
 *              research's Jobs (InCohortFairSharing) until the weighted
 *              shares are level;
 *   30% of the span  vision, the late team, reclaims its part from the
 *              three others the same way.
 *
 * (nlp and vision 12 Jobs, recsys 8.) Then until the span's end every
 * arrived team keeps submitting, in
 * proportion to its weight (its fair part of the pool's throughput), so
 * every team keeps more work queued than it can run and the shares stay
 * level; the queues drain after the span. Every Job is 2 GPUs (one pod
 * of 2, or a gang of 2 x 1), training or experiment, 8-14 s: shares move
 * by one Job's step, 2 of 32 GPUs.
 */
static const struct {
	int team;
	int weight;       /* spec.fairSharing.weight in the YAML */
	int64_t arrive_ms; /* -1: 30% of the span (at least 6 s) */
	size_t burst;     /* Jobs of its burst (fewer when fewer planned) */
} fair_teams[FEED_MAX_TEAMS] = {
	{ RESEARCH, 1, 0, 16 },
	{ NLP, 2, 2000, 12 },
	{ RECSYS, 1, 4000, 8 },
	{ VISION, 2, -1, 12 },
};

/* Jobs of all the bursts. */
#define FAIR_BURSTS 48

/* The fair trickle starts once recsys is in. */
#define FAIR_TRICKLE_MS 4000

static int cmp_at(const void *a, const void *b)
{
	const struct feed_job *x = a, *y = b;

	if (x->at_ms != y->at_ms)
		return (x->at_ms > y->at_ms) - (x->at_ms < y->at_ms);
	/* the draw order (kept in name until named) breaks ties */
	return strcmp(x->name, y->name);
}

static void fair_job(struct feed_job *j, int team, int64_t at_ms,
		     uint64_t *rng, double scale)
{
	j->team = team;
	j->klass = pick(rng, 10) < 7 ? FEED_TRAINING : FEED_EXPERIMENT;
	if (pick(rng, 4) == 0) {
		j->pods = 2; /* a gang of 2 x 1 GPU */
		j->gpus_per_pod = 1;
	} else {
		j->pods = 1;
		j->gpus_per_pod = 2;
	}
	j->at_ms = at_ms;
	j->runtime_ms = scaled(8000 + (int64_t)pick(rng, 6001), scale);
}

static void plan_fair(struct feed *s, const struct feed_opts *o)
{
	uint64_t rng = o->seed * 0x9E3779B97F4A7C15ULL + 7;
	double scale = o->runtime_scale > 0 ? o->runtime_scale : 1;
	int64_t arrive[FEED_MAX_TEAMS], late = o->span_ms * 3 / 10;
	size_t k = 0, nburst = 0, ntrickle;
	int64_t end = o->span_ms > FAIR_TRICKLE_MS ? o->span_ms
						    : FAIR_TRICKLE_MS;

	if (late < 6000)
		late = 6000;
	s->v = xcalloc(o->jobs ? o->jobs : 1, sizeof(*s->v));
	s->n = o->jobs;
	/* 1. the bursts, cut in proportion when fewer Jobs are planned, at
	 * least one Job each while there are Jobs */
	for (int t = 0; t < FEED_MAX_TEAMS; t++) {
		size_t b = o->jobs >= FAIR_BURSTS
				   ? fair_teams[t].burst
				   : o->jobs * fair_teams[t].burst /
					     FAIR_BURSTS;
		int team = fair_teams[t].team;

		arrive[t] = fair_teams[t].arrive_ms >= 0
				    ? fair_teams[t].arrive_ms
				    : late;
		if (!b)
			b = 1;
		for (size_t i = 0; i < b && k < s->n; i++, k++)
			fair_job(&s->v[k], team, arrive[t], &rng, scale);
	}
	nburst = k;
	ntrickle = s->n - nburst;
	/* 2. the trickle: evenly spread from FAIR_TRICKLE_MS to the span's
	 * end, each Job to an arrived team drawn by weight */
	for (size_t i = 0; i < ntrickle; i++, k++) {
		int64_t at = FAIR_TRICKLE_MS +
			     (ntrickle > 1 ? (end - FAIR_TRICKLE_MS) *
						     (int64_t)i /
						     (int64_t)(ntrickle - 1)
					   : 0);
		int wsum = 0, r, t;

		for (t = 0; t < FEED_MAX_TEAMS; t++)
			if (arrive[t] <= at)
				wsum += fair_teams[t].weight;
		r = (int)pick(&rng, (uint64_t)wsum);
		for (t = 0; t < FEED_MAX_TEAMS; t++) {
			if (arrive[t] > at)
				continue;
			if (r < fair_teams[t].weight)
				break;
			r -= fair_teams[t].weight;
		}
		fair_job(&s->v[k], fair_teams[t].team, at, &rng, scale);
	}
	/* 3. in time order, then named by position (job_index in dash.c
	 * reads a Job's index from its name) */
	for (size_t i = 0; i < s->n; i++)
		snprintf(s->v[i].name, sizeof(s->v[i].name), "%08zu", i);
	qsort(s->v, s->n, sizeof(*s->v), cmp_at);
	for (size_t i = 0; i < s->n; i++)
		name_job(&s->v[i], i);
}

void feed_plan(struct feed *s, const struct feed_opts *o)
{
	feed_release(s);
	if (o->scenario == FEED_FAIR)
		plan_fair(s, o);
	else
		plan_classic(s, o);
}

const char *feed_team_name(int team)
{
	return team >= 0 && team < FEED_MAX_TEAMS ? team_names[team] : "?";
}

const char *feed_class_name(enum feed_class c)
{
	return (unsigned)c < FEED_NCLASS ? class_names[c] : "?";
}

int feed_job_gpus(const struct feed_job *j)
{
	return j->pods * j->gpus_per_pod;
}

char *feed_selector(const char *run_id)
{
	return xasprintf("app.kubernetes.io/part-of=cueue-demo,"
			 "cueue.dev/demo-run=%s", run_id);
}

json_t *feed_job_json(const struct feed_job *j, const char *run_id)
{
	char ns[32], rt[32], cpu[16], mem[16], gpu[16];
	json_t *labels, *tol, *job;

	snprintf(ns, sizeof(ns), "team-%s", team_names[j->team]);
	snprintf(rt, sizeof(rt), "%lldms", (long long)j->runtime_ms);
	/* per pod: the GPUs, and a node's share of cpu and memory */
	snprintf(gpu, sizeof(gpu), "%d", j->gpus_per_pod);
	snprintf(cpu, sizeof(cpu), "%d", 10 * j->gpus_per_pod);
	snprintf(mem, sizeof(mem), "%dGi", 100 * j->gpus_per_pod);
	labels = json_pack("{s:s, s:s, s:s, s:s, s:s}",
			   "kueue.x-k8s.io/queue-name", "gpus",
			   "kueue.x-k8s.io/priority-class",
			   class_names[j->klass],
			   "app.kubernetes.io/part-of", "cueue-demo",
			   "cueue.dev/demo-run", run_id,
			   "cueue.dev/demo-class", class_short[j->klass]);
	tol = json_array();
	if (j->klass != FEED_EXPERIMENT)
		json_array_append_new(tol, json_pack("{s:s, s:s, s:s, s:s}",
						     "key", "nvidia.com/gpu",
						     "operator", "Equal",
						     "value", "present",
						     "effect", "NoSchedule"));
	job = json_pack(
		"{s:s, s:s,"
		" s:{s:s, s:s, s:O, s:{s:s}},"
		" s:{s:i, s:i, s:i,"
		"    s:{s:{s:O},"
		"       s:{s:s, s:o, s:[{s:s, s:s, s:[s, s, s],"
		"                        s:{s:{s:s, s:s, s:s},"
		"                           s:{s:s}}}]}}}}",
		"apiVersion", "batch/v1", "kind", "Job",
		"metadata", "name", j->name, "namespace", ns, "labels", labels,
		"annotations", "cueue.dev/runtime", rt,
		"spec", "parallelism", j->pods, "completions", j->pods,
		"backoffLimit", 0,
		"template", "metadata", "labels", labels,
		"spec", "restartPolicy", "Never", "tolerations", tol,
		"containers", "name", "worker",
		"image", "nvcr.io/nvidia/pytorch:24.05-py3",
		"command", "torchrun", "--standalone", "train.py",
		"resources", "requests", "nvidia.com/gpu", gpu, "cpu", cpu,
		"memory", mem, "limits", "nvidia.com/gpu", gpu);
	json_decref(labels);
	if (!job)
		BUG("feed_job_json: json_pack failed");
	/* the job runner keeps its pods active but never ready */
	if (j->never_ready)
		json_object_set_new(
			json_object_get(json_object_get(job, "metadata"),
					"annotations"),
			"cueue.dev/ready-after", json_string("never"));
	return job;
}
