/*
 * stream: the demo's stream of Jobs, planned up front and deterministic
 * for a seed: which team submits what, of which priority class, how many
 * pods of how many GPUs, when (an offset into the stream) and for how
 * long it runs in the devserver's job runner. stream_job_json turns one
 * planned Job into the batch/v1 object the demo creates through the API
 * (the mutating webhook then suspends it, as Kueue's does).
 *
 * Pure: no I/O, no clock. Owns nothing but the plan's array.
 */
#ifndef DEMO_STREAM_H
#define DEMO_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;

/* The WorkloadPriorityClasses of demo/platform.yaml, highest first. */
enum stream_class {
	STREAM_INFERENCE,  /* prod-inference, 1000: 1-2 GPUs, short */
	STREAM_TRAINING,   /* training, 500: 2-8 GPUs, gangs, long */
	STREAM_EXPERIMENT, /* experiment, 100: 1-4 GPUs; no h100 toleration */
	STREAM_NCLASS
};

/* The teams: namespace team-<name>, LocalQueue "gpus". */
#define STREAM_NTEAM 3

struct stream_job {
	char name[40];            /* "<team>-<class>-NNN"; unique in a plan */
	int team;                 /* index into stream_team_name */
	enum stream_class klass;
	int pods;                 /* parallelism = completions; >= 1 */
	int gpus_per_pod;         /* >= 1; pods * gpus_per_pod <= 8 */
	int64_t at_ms;            /* creation offset from the stream start */
	int64_t runtime_ms;       /* cueue.dev/runtime; >= 100 */
};

struct stream {
	struct stream_job *v; /* owned; n entries in at_ms order */
	size_t n;
};

struct stream_opts {
	size_t jobs;          /* how many Jobs */
	int64_t span_ms;      /* creations spread over [0, span_ms] */
	double runtime_scale; /* multiplies every runtime; > 0 */
	uint64_t seed;        /* same seed, same stream */
	const char *run_id;   /* label cueue.dev/demo-run; borrowed */
};

/* Plans o->jobs Jobs into s (released first). */
void stream_plan(struct stream *s, const struct stream_opts *o);
void stream_release(struct stream *s);

/* "nlp", "recsys", "research"; static. */
const char *stream_team_name(int team);
/* "prod-inference", "training", "experiment"; static. */
const char *stream_class_name(enum stream_class c);
/* Total GPUs of a Job. */
int stream_job_gpus(const struct stream_job *j);

/*
 * The batch/v1 Job for j (new reference): labels queue-name "gpus",
 * priority-class, app.kubernetes.io/part-of=cueue-demo and
 * cueue.dev/demo-run=run_id; annotation cueue.dev/runtime; pods of
 * nvidia.com/gpu + cpu + memory; inference and training tolerate the
 * h100 taint (nvidia.com/gpu=present:NoSchedule), experiments do not.
 */
struct json_t *stream_job_json(const struct stream_job *j, const char *run_id);

/* The label selector that matches exactly the Jobs of run_id (new). */
char *stream_selector(const char *run_id);

#endif
