/*
 * simulate: `kubectl cueue simulate -f job.yaml`, the verdict for a Job
 * or Workload not yet submitted, against the live state, writing
 * nothing:
 *  1. the file is parsed (a malformed one: its line and column);
 *  2. the object is created with dryRun=All, so the API server's
 *     validation and the admission webhooks (cueue's Job defaulting and
 *     validation) judge it as they would judge the real create, and
 *     nothing is stored;
 *  3. a Job becomes its Workload as the Job integration builds it
 *     (model/jobwl.h: pod set, counts, priority);
 *  4. the Workload is taken into the inspected manager as its informer
 *     would take it (decoded, validated, resolved to its queues), and
 *     the next cycle runs: its decision is the verdict.
 * Verdicts and exit codes: Admit (0: admitted now, on which flavors),
 * Preempt (1: admitted once the named workloads are evicted), Wait (1:
 * and why), NeverFits (2: above anything the queue could ever reach),
 * Invalid (3), NotManaged (0: no queue name, cueue leaves it alone).
 */
#include "cli/cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "config/yamljson.h"
#include "controller/manager.h"
#include "flavors/explain.h"
#include "flavors/sched.h"
#include "model/codec.h"
#include "model/jobwl.h"
#include "model/objects.h"

struct verdict {
	const char *v;      /* Admit, Preempt, Wait, NeverFits, ... */
	int code;
	char *message;      /* owned */
	char *cq;           /* owned */
	json_t *flavors;    /* {podSet: {resource: flavor}} */
	json_t *victims;    /* [{namespace, name, clusterQueue, reason}] */
};

static int invalid(struct cli *c, const char *fmt, const char *a,
		   const char *b)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), fmt, a, b);
	if (c->o.json) {
		json_t *o = json_pack("{s:s, s:s}", "verdict", "Invalid",
				      "message", msg);

		cli_print_json(o);
		json_decref(o);
	} else {
		printf("Verdict: invalid\n%s\n", msg);
	}
	return CLI_INVALID;
}

/* ---- priority lookups for jobwl_build ---- */

static bool wpc_lookup(void *ctx, const char *name, int32_t *value)
{
	struct cli *c = ctx;

	return manager_wpc_value(c->m, name, value);
}

static bool pc_lookup(void *ctx, const char *name, int32_t *value)
{
	struct cli *c = ctx;
	char *path = xasprintf("/apis/scheduling.k8s.io/v1/priorityclasses/%s",
			       name);
	struct err err = { "" };
	json_t *o = NULL;
	long code = cli_get(c, path, &o, &err);
	const json_t *v = json_object_get(o, "value");
	bool ok = code == 200 && json_is_integer(v);

	if (ok)
		*value = (int32_t)json_integer_value(v);
	json_decref(o);
	free(path);
	return ok;
}

static bool pc_global_default(void *ctx, const char **name, int32_t *value)
{
	struct cli *c = ctx;
	struct err err = { "" };
	json_t *list = NULL, *it;
	size_t i;
	bool found = false;
	static char best[254];

	if (cli_get(c, "/apis/scheduling.k8s.io/v1/priorityclasses", &list,
		    &err) != 200) {
		json_decref(list);
		return false;
	}
	json_array_foreach(jx_arr_peek(list, "items"), i, it) {
		const json_t *v = json_object_get(it, "value");
		const char *n = jx_meta_str(it, "name");

		if (!json_is_true(json_object_get(it, "globalDefault")) ||
		    !json_is_integer(v) || !n)
			continue;
		if (!found || json_integer_value(v) < *value) {
			*value = (int32_t)json_integer_value(v);
			snprintf(best, sizeof(best), "%s", n);
			found = true;
		}
	}
	json_decref(list);
	if (found)
		*name = best;
	return found;
}

/* The Workload JSON of a Job the API server accepted (dry run). */
static json_t *job_workload(struct cli *c, const json_t *jobj,
			    struct err *err)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct priority_lookup prio = { .wpc = wpc_lookup, .pc = pc_lookup,
					.global_default = pc_global_default,
					.ctx = c };
	struct jobwl_opts jo = { .prio = &prio };
	struct job job;
	struct workload w;
	json_t *out = NULL;

	memset(&job, 0, sizeof(job));
	memset(&w, 0, sizeof(w));
	if (codec_decode_job(jobj, &job, &fe) < 0) {
		char *m = field_errors_aggregate(&fe);

		err_set(err, "%s", m);
		free(m);
		goto out;
	}
	if (jobwl_build(&job, &jo, &w, err) < 0)
		goto out;
	w.version = API_V1BETA2;
	out = codec_encode_workload(&w, API_V1BETA2);
out:
	field_errors_release(&fe);
	job_release(&job);
	workload_release(&w);
	return out;
}

static json_t *assignment_json(const struct admission *a)
{
	json_t *o = json_object();

	for (size_t i = 0; i < a->npsa; i++) {
		json_t *f = json_object();
		const struct smap *m = &a->psa[i].flavors;

		for (size_t k = 0; k < m->n; k++)
			json_object_set_new(f, m->v[k].key,
					    json_string(m->v[k].value));
		json_object_set_new(o, a->psa[i].name, f);
	}
	return o;
}

/* Runs the next cycle with the workload in, and reads its verdict. */
static void decide(struct cli *c, const char *ns, const char *name,
		   struct verdict *v)
{
	struct sched_decisions d = { 0 };
	const struct sched_decision *mine = NULL;
	const char *inadm = manager_wl_inadmissible(c->m, ns, name);

	v->victims = json_array();
	if (inadm) {
		v->v = "Wait";
		v->code = CLI_WAITS;
		v->message = xstrdup(inadm);
		return;
	}
	sched_cycle(c->s, c->now_ms, &d);
	for (size_t i = 0; i < d.n; i++) {
		const struct sched_decision *x = &d.v[i];

		if (x->kind == DEC_PREEMPT && x->preemptor &&
		    !strcmp(x->preemptor->meta.name, name) &&
		    !strcmp(x->preemptor->meta.namespace, ns))
			json_array_append_new(
				v->victims,
				json_pack("{s:s, s:s, s:s, s:s}", "namespace",
					  x->wl->meta.namespace, "name",
					  x->wl->meta.name, "clusterQueue",
					  x->cq, "reason", x->preempt_reason));
		else if (x->kind != DEC_PREEMPT && x->wl &&
			 !strcmp(x->wl->meta.name, name) &&
			 !strcmp(x->wl->meta.namespace, ns))
			mine = x;
	}
	if (mine && mine->kind == DEC_ADMIT) {
		struct admission a = { 0 };

		sched_decision_admission(c->s, mine, &a);
		v->v = "Admit";
		v->code = CLI_OK;
		v->cq = xstrdup(mine->cq);
		v->flavors = assignment_json(&a);
		admission_release(&a);
	} else if (mine && json_array_size(v->victims)) {
		v->v = "Preempt";
		v->code = CLI_WAITS;
		v->cq = xstrdup(mine->cq);
		v->message = xstrdup(mine->message ? mine->message : "");
	} else {
		struct sched_explain x = { .position = -1 };

		sched_explain(c->s, ns, name, c->now_ms, &x);
		v->cq = x.cq ? xstrdup(x.cq) : NULL;
		if (mine && mine->message)
			v->message = xstrdup(mine->message);
		else if (x.cq && !x.cq_active)
			v->message = xasprintf("ClusterQueue %s is inactive: %s",
					       x.cq, x.cq_message
							? x.cq_message
							: "");
		else if (x.assessed && x.mode == ASSIGN_FIT)
			v->message = xstrdup("it fits, but waits behind the "
					     "workloads ahead of it in the "
					     "queue");
		else
			v->message = xstrdup(x.message ? x.message : "");
		v->v = x.never_fits ? "NeverFits" : "Wait";
		v->code = x.never_fits ? CLI_NEVER : CLI_WAITS;
		sched_explain_release(&x);
	}
	sched_decisions_release(&d);
}

static void print_verdict(const struct cli *c, const char *ns,
			  const char *name, const struct verdict *v)
{
	if (c->o.json) {
		json_t *o = json_pack("{s:s, s:s, s:s}", "verdict", v->v,
				      "namespace", ns, "workload", name);

		json_object_set_new(o, "clusterQueue",
				    v->cq ? json_string(v->cq) : json_null());
		if (v->flavors)
			json_object_set(o, "flavors", v->flavors);
		if (json_array_size(v->victims))
			json_object_set(o, "preempts", v->victims);
		if (v->message)
			json_object_set_new(o, "message",
					    json_string(v->message));
		cli_print_json(o);
		json_decref(o);
		return;
	}
	printf("Workload: %s/%s%s%s\n", ns, name,
	       v->cq ? " in ClusterQueue " : "", v->cq ? v->cq : "");
	if (!strcmp(v->v, "Admit")) {
		const char *ps;
		json_t *f;

		printf("Verdict:  admitted now\n");
		json_object_foreach(v->flavors, ps, f) {
			const char *res;
			json_t *fl;

			printf("  pod set %s:", ps);
			json_object_foreach(f, res, fl)
				printf(" %s=%s", res, json_string_value(fl));
			printf("\n");
		}
		return;
	}
	if (!strcmp(v->v, "Preempt")) {
		size_t i;
		json_t *it;

		printf("Verdict:  admitted after preempting:\n");
		json_array_foreach(v->victims, i, it)
			printf("  %s/%s (ClusterQueue %s, %s)\n",
			       jx_str(it, "namespace"), jx_str(it, "name"),
			       jx_str(it, "clusterQueue"), jx_str(it, "reason"));
	} else if (!strcmp(v->v, "NeverFits")) {
		printf("Verdict:  can never fit: the request is above anything "
		       "the queue could ever reach\n");
	} else if (!strcmp(v->v, "NotManaged")) {
		printf("Verdict:  not queued by cueue (no queue name): it "
		       "starts at once\n");
	} else {
		printf("Verdict:  waits\n");
	}
	if (v->message && *v->message)
		printf("Message:  %s\n", v->message);
}

int cli_simulate(struct cli *c, int argc, char **argv)
{
	struct err err = { "" };
	json_t *docs = NULL, *obj, *made = NULL, *wl = NULL;
	size_t *lines = NULL;
	const char *kind, *api, *name;
	char *path, *wname = NULL, *ns = NULL;
	struct verdict v = { 0 };
	bool is_job;
	long code;
	int rc;

	(void)argv;
	if (argc) {
		fprintf(stderr, "kubectl-cueue: simulate takes -f FILE only\n");
		return CLI_FAIL;
	}
	if (!strcmp(c->o.file, "-")) {
		char *buf = NULL;
		size_t len = 0, cap = 0, n;

		do {
			if (cap - len < 65536)
				XGROW(buf, cap, len + 65536);
			n = fread(buf + len, 1, cap - len, stdin);
			len += n;
		} while (n > 0);
		rc = yamljson_load_string_lines(buf ? buf : "", len, &docs,
						&lines, &err);
		free(buf);
		if (rc < 0)
			return invalid(c, "%s: %s", "<stdin>", err.msg);
	} else if (yamljson_load_file_lines(c->o.file, &docs, &lines, &err) <
		   0) {
		return invalid(c, "%s%s", err.msg, "");
	}
	free(lines);
	if (json_array_size(docs) != 1) {
		json_decref(docs);
		return invalid(c, "%s: want exactly one object, found %s",
			       c->o.file,
			       json_array_size(docs) ? "several" : "none");
	}
	obj = json_array_get(docs, 0);
	kind = jx_str(obj, "kind");
	api = jx_str(obj, "apiVersion");
	is_job = kind && api && !strcmp(kind, "Job") &&
		 !strcmp(api, "batch/v1");
	if (!is_job &&
	    !(kind && api && !strcmp(kind, "Workload") &&
	      (!strcmp(api, "kueue.x-k8s.io/v1beta1") ||
	       !strcmp(api, "kueue.x-k8s.io/v1beta2")))) {
		json_decref(docs);
		return invalid(c, "%s: want a batch/v1 Job or a kueue.x-k8s.io "
			       "Workload, not %s", c->o.file,
			       kind ? kind : "an object without kind");
	}
	if (!json_is_object(json_object_get(obj, "metadata")))
		json_object_set_new(obj, "metadata", json_object());
	name = jx_meta_str(obj, "namespace");
	if (name && c->o.ns && strcmp(name, c->o.ns)) {
		rc = invalid(c, "the namespace from the provided object (%s) "
			     "does not match the namespace \"%s\"", name,
			     c->o.ns);
		json_decref(docs);
		return rc;
	}
	if (!name)
		json_object_set_new(json_object_get(obj, "metadata"),
				    "namespace", json_string(c->ns));
	ns = xstrdup(jx_meta_str(obj, "namespace"));
	path = is_job ? xasprintf("/apis/batch/v1/namespaces/%s/jobs", ns)
		      : xasprintf("/apis/%s/namespaces/%s/workloads", api, ns);
	code = cli_create_dry_run(c, path, obj, &made, &err);
	free(path);
	if (code < 200 || code > 299) {
		json_decref(docs);
		json_decref(made);
		free(ns);
		if ((code >= 400 && code < 500 && code != 401 && code != 403 &&
		     code != 404 && code != 429) ||
		    (code == 403 && strstr(err.msg, "admission webhook")))
			return invalid(c, "%s%s", err.msg, "");
		fprintf(stderr, "kubectl-cueue: the dry-run create failed "
			"(%ld): %s\n", code, err.msg);
		return CLI_FAIL;
	}
	json_decref(docs);
	if (is_job) {
		const json_t *labels = jx_obj_peek(jx_obj_peek(made, "metadata"),
						   "labels");

		if (!jx_str(labels, LABEL_QUEUE_NAME)) {
			v.v = "NotManaged";
			v.code = CLI_OK;
			v.victims = json_array();
			print_verdict(c, ns, jx_meta_str(made, "name"), &v);
			json_decref(v.victims);
			json_decref(made);
			free(ns);
			return CLI_OK;
		}
		wl = job_workload(c, made, &err);
		if (!wl) {
			json_decref(made);
			free(ns);
			return invalid(c, "%s%s", err.msg, "");
		}
	} else {
		wl = json_incref(made);
	}
	json_decref(made);
	/* What the real create gives a new Workload: a uid, and now as its
	 * creation time (it queues behind everything already there). */
	{
		json_t *md = json_object_get(wl, "metadata");
		char ts[32];

		if (!jx_str(md, "uid"))
			json_object_set_new(md, "uid",
					    json_string("kubectl-cueue-simulate"));
		cli_time(c->now_ms, ts, sizeof(ts));
		json_object_set_new(md, "creationTimestamp", json_string(ts));
		json_object_del(md, "resourceVersion");
		json_object_del(wl, "status");
	}
	name = jx_meta_str(wl, "name");
	wname = xstrdup(name ? name : "");
	if (manager_inject_workload(c->m, wl, &err) < 0) {
		json_decref(wl);
		rc = invalid(c, "Workload %s: %s", wname, err.msg);
		free(wname);
		free(ns);
		return rc;
	}
	json_decref(wl);
	decide(c, ns, wname, &v);
	print_verdict(c, ns, wname, &v);
	rc = v.code;
	free(v.message);
	free(v.cq);
	json_decref(v.flavors);
	json_decref(v.victims);
	free(wname);
	free(ns);
	return rc;
}
