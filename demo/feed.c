/*
 * feed: the demo's Job mix (see feed.h). The mix is what a shared
 * GPU cluster sees in a busy hour: many small inference Jobs, fewer but
 * large training Jobs (single 8-GPU pods and gangs of 2-4 pods that must
 * start together), and a tail of research experiments. The numbers are
 * chosen so that demand exceeds the 40 GPUs of demo/platform.yaml for
 * most of the stream: queues build up, teams borrow, and the stream
 * still drains within about a minute of its last creation.
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

static const char *const team_names[FEED_NTEAM] = {
	"nlp", "recsys", "research"
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

void feed_plan(struct feed *s, const struct feed_opts *o)
{
	uint64_t rng = o->seed * 0x9E3779B97F4A7C15ULL + 1;
	int cls_pct[FEED_NCLASS];
	double scale = o->runtime_scale > 0 ? o->runtime_scale : 1;

	feed_release(s);
	for (int c = 0; c < FEED_NCLASS; c++)
		cls_pct[c] = mix[c].percent;
	s->v = xcalloc(o->jobs ? o->jobs : 1, sizeof(*s->v));
	s->n = o->jobs;
	for (size_t i = 0; i < s->n; i++) {
		struct feed_job *j = &s->v[i];
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
		j->runtime_ms = (int64_t)((double)rt * scale);
		if (j->runtime_ms < 100)
			j->runtime_ms = 100;
		/* evenly spread, with up to half a slot of jitter, so the
		 * plan stays sorted by at_ms */
		j->at_ms = s->n > 1 ? o->span_ms * (int64_t)i /
					      (int64_t)(s->n - 1)
				    : 0;
		jitter = s->n > 1 ? o->span_ms / (int64_t)s->n / 2 : 0;
		if (jitter > 0 && i > 0 && i + 1 < s->n)
			j->at_ms -= (int64_t)pick(&rng, (uint64_t)jitter);
		snprintf(j->name, sizeof(j->name), "%s-%s-%03zu",
			 team_names[j->team], class_short[c], i + 1);
	}
}

const char *feed_team_name(int team)
{
	return team >= 0 && team < FEED_NTEAM ? team_names[team] : "?";
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
	return job;
}
