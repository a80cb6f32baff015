/*
 * feed: the demo's stream of Jobs, planned up front and deterministic
 * for a seed. The classic scenario (make demo): scripted scenes that end
 * in preemptions (feed.c), then a seeded stream. The fair scenario (make
 * demo SCENARIO=fair): four teams that share one pool by fair sharing
 * arrive one after the other, each with more work than its share
 * (feed.c, plan_fair). In both: which team submits what, of which
 * priority class, how many pods of how many GPUs, when (an offset into
 * the stream) and for how long it runs in the devserver's job runner,
 * whose pods are ready at once but for one gang of the scenes, never
 * ready (waitForPodsReady's case). feed_job_json turns one planned Job
 * into the batch/v1 object the demo creates through the API (the
 * mutating webhook then suspends it, as Kueue's does).
 *
 * Pure: no I/O, no clock. Owns nothing but the plan's array.
 */
#ifndef DEMO_FEED_H
#define DEMO_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;

/* The WorkloadPriorityClasses of demo/platform.yaml, highest first. */
enum feed_class {
	FEED_INFERENCE,  /* prod-inference, 1000: 1-2 GPUs, short */
	FEED_TRAINING,   /* training, 500: 2-8 GPUs, gangs, long */
	FEED_EXPERIMENT, /* experiment, 100: 1-4 GPUs; no h100 toleration */
	FEED_NCLASS
};

/* The teams: namespace team-<name>, LocalQueue "gpus". The classic
 * scenario has the first FEED_NTEAM, the fair one all FEED_MAX_TEAMS. */
#define FEED_NTEAM 3
#define FEED_MAX_TEAMS 4

enum feed_scenario {
	FEED_CLASSIC, /* make demo: demo/platform.yaml */
	FEED_FAIR,    /* make demo SCENARIO=fair: demo/platform-fair.yaml */
};

struct feed_job {
	char name[40];            /* "<team>-<class>-NNN" ("<team>-gang-NNN"
				     when never_ready); unique in a plan */
	int team;                 /* index into feed_team_name */
	enum feed_class klass;
	int pods;                 /* parallelism = completions; >= 1 */
	int gpus_per_pod;         /* >= 1; pods * gpus_per_pod <= 8 */
	int64_t at_ms;            /* creation offset from the stream start */
	int64_t runtime_ms;       /* cueue.dev/runtime; >= 100 */
	bool never_ready;         /* cueue.dev/ready-after: never (the
				     runner keeps its pods unready) */
};

struct feed {
	struct feed_job *v; /* owned; n entries in at_ms order */
	size_t n;
};

struct feed_opts {
	size_t jobs;          /* how many Jobs: the scenes' first (all of
				 them from 18 on), then the seeded ones */
	int64_t span_ms;      /* the seeded Jobs are created from the
				 scenes' end (12 s) to span_ms */
	double runtime_scale; /* multiplies every runtime; > 0 */
	uint64_t seed;        /* same seed, same stream */
	const char *run_id;   /* label cueue.dev/demo-run; borrowed */
	enum feed_scenario scenario;
};

/* Plans o->jobs Jobs of o->scenario into s (released first). */
void feed_plan(struct feed *s, const struct feed_opts *o);
void feed_release(struct feed *s);

/* "nlp", "recsys", "research", "vision" (FEED_FAIR only); static. */
const char *feed_team_name(int team);
/* "prod-inference", "training", "experiment"; static. */
const char *feed_class_name(enum feed_class c);
/* Total GPUs of a Job. */
int feed_job_gpus(const struct feed_job *j);

/*
 * The batch/v1 Job for j (new reference): labels queue-name "gpus",
 * priority-class, app.kubernetes.io/part-of=cueue-demo and
 * cueue.dev/demo-run=run_id; annotation cueue.dev/runtime, and
 * cueue.dev/ready-after: never when never_ready; pods of nvidia.com/gpu
 * + cpu + memory; inference and training tolerate the h100 taint
 * (nvidia.com/gpu=present:NoSchedule), experiments do not.
 */
struct json_t *feed_job_json(const struct feed_job *j, const char *run_id);

/* The label selector that matches exactly the Jobs of run_id (new). */
char *feed_selector(const char *run_id);

#endif
