/*
 * cli-bench: how fast `kubectl cueue` answers with a deep backlog (issue
 * 20: pending and explain within 1 s with 10,000 pending workloads and 100
 * ClusterQueues), against a devcluster that test/bench/cli.sh starts, as
 * rows for test/bench/run.sh (BENCHMARKS.md).
 *
 *   cli-bench --cluster DIR --plugin PATH [--cqs N] [--pending N]
 *             [--runs N]
 *
 * Setup (QUICK=1: 10 ClusterQueues, 1,000 pending, 3 runs; else 100,
 * 10,000, 5): one ResourceFlavor; ClusterQueues cb-000... of 10 cpu each,
 * in cohorts of ten (cb-org-K), BestEffortFIFO, withinClusterQueue
 * LowerPriority; a namespace "cb" with one LocalQueue per ClusterQueue;
 * 10 x N + P Workloads of 1 cpu, created directly (no Job, no webhook) by
 * 8 threads, priority 0-3 and the queue round robin: 10 x N take the
 * quota, P wait. Then it waits until the ClusterQueues' statuses count P
 * pending and 10 x N admitted.
 *
 * Each command runs R times as a user runs it (fork and exec of the
 * plugin, KUBECONFIG set, stdout to /dev/null): `pending` (every queue, P
 * rows), `pending cb-050`, `-n cb pending lq-050`, `explain` of a pending
 * workload, `simulate -f` of one more Workload, `doctor`. Rows, per
 * command: the p50 wall time (exec to exit: the lists of every object
 * included), and the core's part from the plugin's --timing (the warm-up
 * cycle plus the command's own work, no I/O).
 *
 * Exit 0 when every run answered (exit codes as the command documents),
 * 1 otherwise, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "model/errors.h"
#include "test/bench/benchlib.h"

#define KAPI "/apis/kueue.x-k8s.io/v1beta2"
#define NTHREADS 8
#define QUOTA 10 /* cpu per ClusterQueue */

struct cfg {
	const char *dir, *plugin;
	int ncq, npending, runs;
	struct bench_kube kube;
	size_t next; /* creation threads: the next id */
	size_t total;
	pthread_mutex_t mu;
	bool failed;
};

static void setup(struct cfg *c)
{
	struct bench_conn k;
	char name[32], org[32], lq[32];

	bench_conn_init(&k, &c->kube);
	bench_create_take(&k, "/api/v1/namespaces",
			  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
				    "kind", "Namespace", "metadata", "name",
				    "cb"),
			  true);
	bench_create_take(&k, KAPI "/resourceflavors",
			  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
				    "kueue.x-k8s.io/v1beta2", "kind",
				    "ResourceFlavor", "metadata", "name", "cb-rf"),
			  true);
	for (int i = 0; i < c->ncq; i++) {
		snprintf(name, sizeof(name), "cb-%03d", i);
		snprintf(org, sizeof(org), "cb-org-%d", i / 10);
		snprintf(lq, sizeof(lq), "lq-%03d", i);
		bench_create_take(
			&k, KAPI "/clusterqueues",
			json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{}, s:s, "
				  "s:{s:s}, s:[{s:[s], s:[{s:s, s:[{s:s, "
				  "s:i}]}]}]}}",
				  "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
				  "ClusterQueue", "metadata", "name", name,
				  "spec", "cohortName", org, "namespaceSelector",
				  "queueingStrategy", "BestEffortFIFO",
				  "preemption", "withinClusterQueue",
				  "LowerPriority", "resourceGroups",
				  "coveredResources", "cpu", "flavors", "name",
				  "cb-rf", "resources", "name", "cpu",
				  "nominalQuota", QUOTA),
			true);
		bench_create_take(
			&k, KAPI "/namespaces/cb/localqueues",
			json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}",
				  "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
				  "LocalQueue", "metadata", "name", lq,
				  "namespace", "cb", "spec", "clusterQueue",
				  name),
			true);
	}
	bench_conn_release(&k);
}

static json_t *workload(const struct cfg *c, size_t id)
{
	char name[32], lq[32];

	snprintf(name, sizeof(name), "w-%zu", id);
	snprintf(lq, sizeof(lq), "lq-%03d", (int)(id % (size_t)c->ncq));
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i, s:[{s:s, "
			 "s:i, s:{s:{s:s, s:[{s:s, s:s, s:{s:{s:s}}}]}}}]}}",
			 "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
			 "Workload", "metadata", "name", name, "namespace", "cb",
			 "spec", "queueName", lq, "priority", (int)(id * 7 % 4),
			 "podSets", "name", "main", "count", 1, "template",
			 "spec", "restartPolicy", "Never", "containers", "name",
			 "c", "image", "pause", "resources", "requests", "cpu",
			 "1");
}

static void *creator(void *ud)
{
	struct cfg *c = ud;
	struct bench_conn k;

	bench_conn_init(&k, &c->kube);
	for (;;) {
		size_t id;
		char *body;
		long code = 0;
		json_t *o;

		pthread_mutex_lock(&c->mu);
		id = c->next++;
		pthread_mutex_unlock(&c->mu);
		if (id >= c->total)
			break;
		o = workload(c, id);
		body = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		for (int tries = 0; tries < 20; tries++) {
			code = bench_request(&k, "POST",
					     KAPI "/namespaces/cb/workloads",
					     "application/json", body);
			if (code == 201 || (code == 409 && tries > 0) ||
			    !bench_is_retryable(code))
				break;
			usleep(200000);
		}
		free(body);
		if (code != 201 && code != 409) {
			bench_note("create w-%zu: HTTP %ld", id, code);
			pthread_mutex_lock(&c->mu);
			c->failed = true;
			pthread_mutex_unlock(&c->mu);
			break;
		}
	}
	bench_conn_release(&k);
	return NULL;
}

/* Sums status.pendingWorkloads and admittedWorkloads of the queues. */
static bool counts(struct cfg *c, long *pending, long *admitted)
{
	struct bench_conn k;
	json_t *doc, *it;
	size_t i;
	bool ok = false;

	*pending = *admitted = 0;
	bench_conn_init(&k, &c->kube);
	if (bench_request(&k, "GET", KAPI "/clusterqueues", NULL, NULL) == 200 &&
	    (doc = json_loads(k.buf, 0, NULL))) {
		json_array_foreach(json_object_get(doc, "items"), i, it) {
			json_t *st = json_object_get(it, "status");

			*pending += json_integer_value(
				json_object_get(st, "pendingWorkloads"));
			*admitted += json_integer_value(
				json_object_get(st, "admittedWorkloads"));
		}
		json_decref(doc);
		ok = true;
	}
	bench_conn_release(&k);
	return ok;
}

/* A workload that waits (the highest id without a reservation). */
static char *pending_name(struct cfg *c)
{
	struct bench_conn k;
	char *found = NULL;

	bench_conn_init(&k, &c->kube);
	for (size_t id = c->total; id-- > 0 && !found;) {
		char path[128];
		json_t *o;

		snprintf(path, sizeof(path), KAPI "/namespaces/cb/workloads/w-%zu",
			 id);
		if (bench_request(&k, "GET", path, NULL, NULL) != 200)
			continue;
		o = json_loads(k.buf, 0, NULL);
		if (o && !bench_has_condition(o, "QuotaReserved"))
			found = xasprintf("w-%zu", id);
		json_decref(o);
	}
	bench_conn_release(&k);
	return found;
}

/* Runs the plugin once: wall ms, and the core's ms from --timing. */
static bool run_once(struct cfg *c, const char *const *args, int ok_rc,
		     double *wall_ms, double *core_ms)
{
	char errf[] = "/tmp/cli-bench.XXXXXX";
	int fd = mkstemp(errf), st = 0;
	int64_t t0 = bench_now_us();
	pid_t pid;
	char *text;
	const char *p;
	double warm = 0, cmd = 0;
	const char *argv[24];
	size_t n = 0;

	if (fd < 0)
		bench_die("mkstemp: %s", strerror(errno));
	argv[n++] = c->plugin;
	for (size_t i = 0; args[i] && n < 22; i++)
		argv[n++] = args[i];
	argv[n++] = "--timing";
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY);
		char *kc;

		dup2(nul, 1);
		dup2(fd, 2);
		kc = xasprintf("KUBECONFIG=%s/kubeconfig", c->dir);
		putenv(kc);
		execv(c->plugin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	*wall_ms = (double)(bench_now_us() - t0) / 1000.0;
	close(fd);
	text = bench_read_file(errf);
	unlink(errf);
	p = text ? strstr(text, "warm-up cycle ") : NULL;
	if (p)
		warm = strtod(p + 14, NULL);
	p = text ? strstr(text, "command ") : NULL;
	if (p)
		cmd = strtod(p + 8, NULL);
	*core_ms = warm + cmd;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != ok_rc) {
		bench_note("%s %s: exit %d: %.300s", c->plugin, args[0],
			   WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			   text ? text : "");
		free(text);
		return false;
	}
	free(text);
	return true;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct cfg c = { .ncq = 100, .npending = 10000, .runs = 5,
			 .mu = PTHREAD_MUTEX_INITIALIZER };
	struct err err = { "" };
	pthread_t th[NTHREADS];
	long pend = 0, adm = 0;
	int64_t t0, deadline;
	char *wname, *simf, wl_arg[64], what[160], note[400], f1[32], f2[32];
	bool ok = true;

	bench_init("cli-bench");
	if (getenv("QUICK")) {
		c.ncq = 10;
		c.npending = 1000;
		c.runs = 3;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
			c.dir = argv[++i];
		else if (!strcmp(argv[i], "--plugin") && i + 1 < argc)
			c.plugin = argv[++i];
		else if (!strcmp(argv[i], "--cqs") && i + 1 < argc)
			c.ncq = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pending") && i + 1 < argc)
			c.npending = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			c.runs = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: cli-bench --cluster DIR --plugin "
				"PATH [--cqs N] [--pending N] [--runs N]\n");
			return 2;
		}
	}
	if (!c.dir || !c.plugin || c.ncq < 1 || c.npending < 1 || c.runs < 1) {
		fprintf(stderr, "cli-bench: --cluster and --plugin are "
			"required\n");
		return 2;
	}
	if (bench_kube_load(&c.kube, c.dir, &err) < 0)
		bench_die("%s", err.msg);
	c.total = (size_t)c.ncq * QUOTA + (size_t)c.npending;
	setup(&c);
	t0 = bench_now_us();
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, creator, &c);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	if (c.failed)
		bench_die("creating the workloads failed");
	bench_note("%zu workloads created in %.1f s", c.total,
		   (double)(bench_now_us() - t0) / 1e6);
	deadline = bench_now_us() + 600 * 1000000LL;
	while (bench_now_us() < deadline) {
		if (counts(&c, &pend, &adm) && pend == c.npending &&
		    adm == (long)c.ncq * QUOTA)
			break;
		usleep(500000);
	}
	if (pend != c.npending || adm != (long)c.ncq * QUOTA)
		bench_die("the queues show %ld pending, %ld admitted (want %d, "
			  "%d)", pend, adm, c.npending, c.ncq * QUOTA);
	bench_note("settled %.1f s after the first create: %ld pending, %ld "
		   "admitted", (double)(bench_now_us() - t0) / 1e6, pend, adm);
	wname = pending_name(&c);
	if (!wname)
		bench_die("no pending workload found");
	snprintf(wl_arg, sizeof(wl_arg), "workload/%s", wname);
	simf = xasprintf("%s/cli-bench-sim.yaml", c.dir);
	{
		json_t *o = workload(&c, c.total + 1);
		FILE *f = fopen(simf, "w");

		if (!f)
			bench_die("%s: %s", simf, strerror(errno));
		json_dumpf(o, f, JSON_INDENT(2));
		fclose(f);
		json_decref(o);
	}
	{
		const char *pend_all[] = { "pending", NULL };
		const char *pend_cq[] = { "pending", "cb-005", NULL };
		const char *pend_lq[] = { "-n", "cb", "pending", "lq-005", NULL };
		const char *explain[] = { "-n", "cb", "explain", wl_arg, NULL };
		const char *sim[] = { "-n", "cb", "simulate", "-f", simf, NULL };
		const char *doctor[] = { "doctor", NULL };
		struct {
			const char *what;
			const char *const *args;
			int rc;
		} cmds[] = {
			{ "pending (every ClusterQueue)", pend_all, 0 },
			{ "pending CLUSTERQUEUE", pend_cq, 0 },
			{ "pending -n NS LOCALQUEUE", pend_lq, 0 },
			{ "explain workload/NAME", explain, 0 },
			{ "simulate -f (a Workload that waits)", sim, 1 },
			{ "doctor", doctor, 0 },
		};

		for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
			double *wall = xcalloc((size_t)c.runs, sizeof(double));
			double *core = xcalloc((size_t)c.runs, sizeof(double));

			for (int r = 0; r < c.runs; r++)
				ok &= run_once(&c, cmds[k].args, cmds[k].rc,
					       &wall[r], &core[r]);
			qsort(wall, (size_t)c.runs, sizeof(double), cmp_d);
			qsort(core, (size_t)c.runs, sizeof(double), cmp_d);
			snprintf(what, sizeof(what),
				 "kubectl cueue %s, %d pending / %d "
				 "ClusterQueues: p50 wall",
				 cmds[k].what, c.npending, c.ncq);
			bench_fmt(f1, sizeof(f1), wall[(c.runs - 1) / 2], 0);
			bench_fmt(f2, sizeof(f2), core[(c.runs - 1) / 2], 1);
			snprintf(note, sizeof(note),
				 "%d runs, exec to exit (every object listed); "
				 "max %.0f ms; the core's part (warm-up cycle "
				 "+ the command) p50 %s ms; aim <= 1000 ms "
				 "(pending, explain)",
				 c.runs, wall[c.runs - 1], f2);
			bench_row(what, f1, "ms", "—", "—", note);
			snprintf(what, sizeof(what),
				 "kubectl cueue %s, %d pending: the core's part "
				 "p50", cmds[k].what, c.npending);
			bench_row(what, f2, "ms", "—", "—",
				  "the warm-up cycle (the manager's next cycle "
				  "on the rebuilt state) + the command, from "
				  "--timing");
			free(wall);
			free(core);
		}
	}
	free(simf);
	free(wname);
	bench_kube_release(&c.kube);
	return ok ? 0 : 1;
}
