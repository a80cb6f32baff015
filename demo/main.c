/*
 * cueue-demo: plays the Job stream of the demo against a cluster and
 * shows what the queues do (demo/README.md). demo/demo.sh starts the
 * devcluster, applies demo/platform.yaml and runs this program; it works
 * as well against any cluster whose kubeconfig it is given and that has
 * the platform applied.
 *
 *   cueue-demo --kubeconfig FILE [--jobs N] [--span S] [--runtime-scale F]
 *              [--seed N] [--interval MS] [--timeout S] [--plain]
 *              [--scenario classic|fair]
 *
 * Shape: the controller's own event loop and REST client (controller/
 * loop.h, kube.h, kube_watch.h) on one thread: informers on
 * ResourceFlavors, ClusterQueues, Workloads (who preempted whom, what
 * waitForPodsReady did) and this run's Jobs feed demo/dash.c; a
 * 100 ms tick creates the Jobs that are due (POST through the API, so the
 * mutating webhook suspends them as it would in a cluster), redraws the
 * dashboard and notices when the stream has drained. Ctrl-C (SIGINT) or
 * SIGTERM stops the loop; the program then restores the terminal and
 * exits 130. --scenario fair plays the fair-sharing stream against
 * demo/platform-fair.yaml, and follows the Cohorts too.
 *
 * Exit status: 0 when every Job was created and finished (or, as the
 * never-ready gang, deactivated and stopped); 1 on a timeout, a failed
 * create or a setup failure; 2 on bad usage; 130 on a signal.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "controller/kube.h"
#include "controller/kube_watch.h"
#include "controller/kubeconfig.h"
#include "controller/loop.h"
#include "demo/dash.h"
#include "demo/feed.h"

#define TICK_MS 100

struct post {
	struct app *app; /* borrowed */
	size_t i;        /* planned Job index */
};

struct informer;

struct app {
	struct loop *l;          /* owned: the one event loop */
	struct kube *k;          /* owned: the REST client on l */
	struct dash *d;          /* owned: what is observed and drawn */
	struct feed s;         /* the planned Jobs */
	struct post *posts;      /* owned; s.n entries */
	const struct informer *jobs; /* borrowed: the Jobs informer */
	const struct informer *wls;  /* borrowed: the Workloads informer */
	char run_id[32];         /* label cueue.dev/demo-run of this run */
	struct timer tick;       /* every TICK_MS while the loop runs */
	size_t next;             /* next planned Job to create */
	int64_t begin_ms;        /* program start (ready timeout) */
	int64_t start_ms;        /* stream start; 0: waiting for queues */
	int64_t last_render_ms;
	int64_t interval_ms;     /* dashboard refresh */
	int64_t timeout_ms;      /* the whole stream */
	int64_t ready_timeout_ms;
	int rc;                  /* exit status once stopped */
	bool tty;
	bool fair;               /* --scenario fair */
	char first_error[512];   /* first failure worth reporting */
};

/* ---- informers ---- */

typedef void apply_fn(struct app *a, const json_t *obj, bool deleted);

static void apply_flavor(struct app *a, const json_t *o, bool del)
{
	dash_flavor(a->d, o, del);
}

static void apply_cq(struct app *a, const json_t *o, bool del)
{
	dash_cluster_queue(a->d, o, del, loop_now_ms(a->l));
}

static void apply_job(struct app *a, const json_t *o, bool del)
{
	/* a deleted Job keeps what was observed of it, and frees its GPUs */
	dash_job(a->d, o, del, loop_now_ms(a->l));
}

static void apply_wl(struct app *a, const json_t *o, bool del)
{
	dash_workload(a->d, o, del, loop_now_ms(a->l));
}

static void apply_cohort(struct app *a, const json_t *o, bool del)
{
	dash_cohort(a->d, o, del);
}

struct informer {
	struct app *app;      /* borrowed */
	apply_fn *apply;      /* what an object (listed or watched) does */
	struct kube_watch *w; /* owned */
	bool listed;          /* its first list was applied */
};

static void on_event(void *ud, enum kube_event_type t, json_t *obj)
{
	struct informer *in = ud;

	in->apply(in->app, obj, t == KUBE_DELETED);
	dash_sample(in->app->d);
	json_decref(obj);
}

static void on_replace(void *ud, json_t *items, bool initial)
{
	struct informer *in = ud;
	size_t i;
	json_t *o;

	(void)initial;
	json_array_foreach(items, i, o)
		in->apply(in->app, o, false);
	dash_sample(in->app->d); /* the whole list: a consistent state */
	in->listed = true;
	json_decref(items);
}

static const struct kube_watch_ops informer_ops = {
	.event = on_event,
	.replace = on_replace,
};

static void informer_start(struct informer *in, struct app *a,
			   apply_fn *fn, const char *path,
			   const char *selector)
{
	struct kube_watch_opts o = {
		.path = path,
		.label_selector = selector,
		.ops = &informer_ops,
		.ud = in,
	};

	in->app = a;
	in->apply = fn;
	in->w = kube_watch_new(a->k, &o);
}

/* ---- the stream ---- */

/* Keeps the first failure for the end (a terminal shows the dashboard
 * meanwhile); without a terminal every one goes to stderr at once. */
static void note_error(struct app *a, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void note_error(struct app *a, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!a->first_error[0])
		snprintf(a->first_error, sizeof(a->first_error), "%s", msg);
	if (!a->tty)
		fprintf(stderr, "cueue-demo: %s\n", msg);
}

static void on_created(void *ud, const struct kube_reply *r, json_t *body)
{
	struct post *p = ud;
	struct app *a = p->app;

	if (r->outcome == KUBE_OK) {
		dash_job_created(a->d, p->i, loop_now_ms(a->l));
	} else {
		dash_job_failed_create(a->d, p->i, r->message);
		note_error(a, "creating Job %s: %s", a->s.v[p->i].name,
			   r->message);
	}
	json_decref(body);
}

static void create_due(struct app *a, int64_t now_ms)
{
	while (a->next < a->s.n &&
	       a->s.v[a->next].at_ms <= now_ms - a->start_ms) {
		const struct feed_job *j = &a->s.v[a->next];
		char ns[48];
		struct kube_ref ref = { .group = "batch", .version = "v1",
					.resource = "jobs", .ns = ns };
		json_t *body = feed_job_json(j, a->run_id);
		char *path;
		struct kube_req req = { .verb = KUBE_POST };

		snprintf(ns, sizeof(ns), "team-%s", feed_team_name(j->team));
		path = kube_path(&ref);
		req.path = path;
		req.body = body;
		req.done = on_created;
		a->posts[a->next] = (struct post){ a, a->next };
		req.ud = &a->posts[a->next];
		kube_submit(a->k, &req);
		free(path);
		json_decref(body);
		a->next++;
	}
}

/* The terminal's columns, or 0 when unknown. */
static int term_width(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

static void finish(struct app *a, int rc)
{
	a->rc = rc;
	loop_stop(a->l);
}

static void on_tick(void *ud, int64_t now_ms)
{
	struct app *a = ud;

	/* The stream starts once the demo can follow it: the queues are
	 * Active, the flavors they name are known (dash_ready), and the Jobs
	 * informer has listed, so its watch sees every version of every Job
	 * from its creation on. */
	if (!a->start_ms) {
		if (dash_ready(a->d) && a->jobs->listed && a->wls->listed) {
			a->start_ms = now_ms;
			dash_start(a->d, now_ms);
		} else if (now_ms - a->begin_ms > a->ready_timeout_ms &&
			   a->fair) {
			note_error(a, "the ClusterQueues team-nlp, "
				   "team-recsys, team-research and "
				   "team-vision are not all Active with their "
				   "ResourceFlavors known, no Cohort is known, "
				   "or the Jobs or Workloads not listed (is "
				   "demo/platform-fair.yaml applied?)");
			finish(a, 1);
			return;
		} else if (now_ms - a->begin_ms > a->ready_timeout_ms) {
			note_error(a, "the ClusterQueues team-nlp, "
				   "team-recsys and team-research are not "
				   "all Active with their ResourceFlavors "
				   "known, or the Jobs or Workloads not "
				   "listed (is "
				   "demo/platform.yaml applied?)");
			finish(a, 1);
			return;
		}
	}
	if (a->start_ms) {
		create_due(a, now_ms);
		dash_tick(a->d, now_ms);
		if (a->next == a->s.n && dash_drained(a->d)) {
			finish(a, a->first_error[0] ? 1 : 0);
			return;
		}
		if (now_ms - a->start_ms > a->timeout_ms) {
			note_error(a, "timeout: %zu of %zu Jobs finished",
				   dash_finished(a->d), a->s.n);
			finish(a, 1);
			return;
		}
		if (now_ms - a->last_render_ms >= a->interval_ms) {
			if (a->tty)
				dash_set_width(a->d, term_width());
			dash_render(a->d, now_ms, stdout);
			a->last_render_ms = now_ms;
		}
	}
	loop_timer_arm(a->l, &a->tick, TICK_MS);
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fputs("usage: cueue-demo --kubeconfig FILE [--jobs N] [--span S] "
	      "[--runtime-scale F]\n"
	      "                  [--seed N] [--interval MS] [--timeout S] "
	      "[--plain]\n"
	      "                  [--scenario classic|fair]\n", f);
}

struct flags {
	const char *kubeconfig;  /* required; borrowed from argv */
	long jobs;               /* --jobs, >= 1 */
	double span_s;           /* --span: creations spread over it */
	double scale;            /* --runtime-scale, > 0 */
	unsigned long long seed; /* --seed */
	long interval_ms;        /* --interval; -1: by output kind */
	double timeout_s;        /* --timeout for the whole stream */
	bool plain;              /* --plain: no ANSI even on a terminal */
	enum feed_scenario scenario; /* --scenario */
};

static int parse_num(const char *name, const char *s, double min,
		     double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < min) {
		fprintf(stderr, "cueue-demo: --%s: bad value \"%s\"\n", name,
			s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_flags(int argc, char **argv, struct flags *fl)
{
	static const struct option opts[] = {
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "jobs", required_argument, NULL, 'n' },
		{ "span", required_argument, NULL, 's' },
		{ "runtime-scale", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 'S' },
		{ "interval", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "plain", no_argument, NULL, 'p' },
		{ "scenario", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	double v;

	*fl = (struct flags){ .jobs = 61, .span_s = 40, .scale = 1,
			      .seed = 1, .interval_ms = -1,
			      .timeout_s = 300 };
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			fl->kubeconfig = optarg;
			break;
		case 'n':
			if (parse_num("jobs", optarg, 1, &v) < 0)
				return 2;
			fl->jobs = (long)v;
			break;
		case 's':
			if (parse_num("span", optarg, 0, &fl->span_s) < 0)
				return 2;
			break;
		case 'r':
			if (parse_num("runtime-scale", optarg, 0.001,
				      &fl->scale) < 0)
				return 2;
			break;
		case 'S':
			if (parse_num("seed", optarg, 0, &v) < 0)
				return 2;
			fl->seed = (unsigned long long)v;
			break;
		case 'i':
			if (parse_num("interval", optarg, 50, &v) < 0)
				return 2;
			fl->interval_ms = (long)v;
			break;
		case 't':
			if (parse_num("timeout", optarg, 1, &fl->timeout_s) < 0)
				return 2;
			break;
		case 'p':
			fl->plain = true;
			break;
		case 'c':
			if (!strcmp(optarg, "fair")) {
				fl->scenario = FEED_FAIR;
			} else if (!strcmp(optarg, "classic")) {
				fl->scenario = FEED_CLASSIC;
			} else {
				fprintf(stderr, "cueue-demo: --scenario: "
					"classic or fair, not \"%s\"\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !fl->kubeconfig) {
		usage(stderr);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct flags fl;
	struct kubeconfig kc = KUBECONFIG_INIT;
	struct err err = { "" };
	struct loop_opts lo = { .handle_signals = true, .max_wait_ms = 200 };
	struct kube_opts ko = { .qps = -1, .user_agent = "cueue-demo" };
	struct app a;
	struct feed_opts so;
	struct informer inf[5];
	char *selector = NULL;
	int rc;

	rc = parse_flags(argc, argv, &fl);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	memset(inf, 0, sizeof(inf));
	a.rc = 1;
	a.tty = !fl.plain && isatty(STDOUT_FILENO);
	a.fair = fl.scenario == FEED_FAIR;
	a.interval_ms = fl.interval_ms > 0 ? fl.interval_ms
			: a.tty ? 250 : 5000;
	a.timeout_ms = (int64_t)(fl.timeout_s * 1000);
	a.ready_timeout_ms = 30000;
	snprintf(a.run_id, sizeof(a.run_id), "%lx%lx",
		 (unsigned long)time(NULL), (unsigned long)getpid());
	so = (struct feed_opts){ .jobs = (size_t)fl.jobs,
				   .span_ms = (int64_t)(fl.span_s * 1000),
				   .runtime_scale = fl.scale,
				   .seed = fl.seed, .run_id = a.run_id,
				   .scenario = fl.scenario };
	feed_plan(&a.s, &so);
	a.posts = xcalloc(a.s.n, sizeof(*a.posts));
	a.d = dash_new(&a.s, a.tty, term_width());
	dash_set_scenario(a.d, fl.scenario);
	rc = 1;
	if (kubeconfig_load(fl.kubeconfig, NULL, &kc, &err) < 0) {
		fprintf(stderr, "cueue-demo: %s\n", err.msg);
		goto out;
	}
	a.l = loop_new(&lo, &err);
	if (a.l)
		a.k = kube_new(a.l, &kc, &ko, &err);
	if (!a.k) {
		fprintf(stderr, "cueue-demo: %s\n", err.msg);
		goto out;
	}
	selector = feed_selector(a.run_id);
	informer_start(&inf[0], &a, apply_flavor,
		       "/apis/kueue.x-k8s.io/v1beta2/resourceflavors", NULL);
	informer_start(&inf[1], &a, apply_cq,
		       "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", NULL);
	informer_start(&inf[2], &a, apply_job, "/apis/batch/v1/jobs",
		       selector);
	a.jobs = &inf[2];
	informer_start(&inf[3], &a, apply_wl,
		       "/apis/kueue.x-k8s.io/v1beta2/workloads", NULL);
	a.wls = &inf[3];
	if (fl.scenario == FEED_FAIR)
		informer_start(&inf[4], &a, apply_cohort,
			       "/apis/kueue.x-k8s.io/v1beta2/cohorts", NULL);
	a.begin_ms = loop_now_ms(a.l);
	timers_setup(&a.tick, on_tick, &a);
	loop_timer_arm(a.l, &a.tick, 0);
	if (!a.tty)
		printf("cueue-demo: %zu Jobs over %.0fs (run %s%s)\n", a.s.n,
		       fl.span_s, a.run_id,
		       fl.scenario == FEED_FAIR ? ", fair sharing" : "");
	fflush(stdout);
	if (loop_run(a.l, &err) < 0) {
		fprintf(stderr, "cueue-demo: event loop: %s\n", err.msg);
		goto out;
	}
	loop_timer_cancel(a.l, &a.tick);
	if (loop_signal(a.l)) {
		dash_end(a.d, stdout);
		printf("\ncueue-demo: interrupted\n");
		rc = 130;
		goto out;
	}
	if (a.start_ms) {
		dash_render(a.d, loop_now_ms(a.l), stdout);
		dash_end(a.d, stdout);
		dash_summary(a.d, loop_now_ms(a.l), stdout);
	}
	if (a.first_error[0] && a.tty)
		fprintf(stderr, "cueue-demo: %s\n", a.first_error);
	rc = a.rc;
out:
	if (a.d)
		dash_end(a.d, stdout);
	for (int i = 0; i < 5; i++)
		kube_watch_free(inf[i].w);
	kube_free(a.k);
	loop_free(a.l);
	kubeconfig_release(&kc);
	dash_free(a.d);
	feed_release(&a.s);
	free(a.posts);
	free(selector);
	return rc;
}
