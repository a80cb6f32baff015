/*
 * explain: `kubectl cueue explain (JOB | workload/NAME) -n NS`, why a
 * workload waits (flavors/explain.h) with the arithmetic: per pod set
 * and flavor the reason it was rejected, the quota rows with who uses
 * them, what would make it fit (how much must be freed, whom the policy
 * lets preemption take), and an estimated start. The message the next
 * cycle would write is printed beside the one the object shows, so the
 * two can be compared: they agree unless the state moved in between.
 */
#include "cli/cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/manager.h"
#include "flavors/explain.h"
#include "model/objects.h"
#include "model/quantity.h"
#include "model/resources.h"

static const char *const wcq_names[] = { "Never", "LowerPriority",
					 "LowerOrNewerEqualPriority" };
static const char *const rwc_names[] = { "Never", "LowerPriority", "Any" };
static const char *const bwc_names[] = { "Never", "LowerPriority" };

struct cq_find {
	const char *name;
	const struct cluster_queue *cq;
};

static void visit_cq(void *ud, enum manager_kind kind, const char *name,
		     const void *obj, const char *invalid)
{
	struct cq_find *f = ud;

	(void)invalid;
	if (kind == MK_CLUSTER_QUEUE && !strcmp(name, f->name))
		f->cq = obj;
}

static const char *qty(const char *res, int64_t milli, char *buf,
		       size_t size)
{
	return resource_format(res, milli, buf, size);
}

/* "ns/name" of the argument: a Job (default), job/NAME, workload/NAME. */
static char *target_key(struct cli *c, const char *arg, struct err *err)
{
	const char *slash = strchr(arg, '/');

	if (slash) {
		size_t n = (size_t)(slash - arg);

		if ((n == 8 && !strncmp(arg, "workload", n)) ||
		    (n == 9 && !strncmp(arg, "workloads", n)) ||
		    (n == 2 && !strncmp(arg, "wl", n)))
			return xasprintf("%s/%s", c->ns, slash + 1);
		if ((n == 3 && !strncmp(arg, "job", n)) ||
		    (n == 4 && !strncmp(arg, "jobs", n)))
			return cli_workload_of_job(c, c->ns, slash + 1, err);
		err_set(err, "explain: want JOB, job/NAME or workload/NAME, "
			"not \"%s\"", arg);
		return NULL;
	}
	return cli_workload_of_job(c, c->ns, arg, err);
}

static const char *policy_text(const struct cluster_queue *cq, char *buf,
			       size_t size)
{
	if (!cq)
		return "";
	snprintf(buf, size,
		 "withinClusterQueue: %s, reclaimWithinCohort: %s, "
		 "borrowWithinCohort: %s%s",
		 wcq_names[cq->within_cq % 3], rwc_names[cq->reclaim % 3],
		 bwc_names[cq->borrow_policy % 2],
		 cq->cohort ? "" : " (no cohort)");
	return buf;
}

static json_t *holders_json(const struct sched_xholder *h, size_t n,
			    const char *res)
{
	json_t *a = json_array();
	char q[QUANTITY_BUF];

	for (size_t i = 0; i < n; i++)
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:s, s:s}", "namespace",
				     h[i].w->meta.namespace ? h[i].w->meta.namespace : "",
				     "name", h[i].w->meta.name, "clusterQueue",
				     h[i].cq, "uses",
				     qty(res, h[i].v, q, sizeof(q))));
	return a;
}

static json_t *explain_json(const struct sched_explain *x,
			    const struct cluster_queue *cq, const char *shown,
			    const char *inadm)
{
	json_t *o = json_object(), *a;
	char q[QUANTITY_BUF], own[300], b[256];

	json_object_set_new(o, "namespace",
			    json_string(x->w->meta.namespace));
	json_object_set_new(o, "name", json_string(x->w->meta.name));
	json_object_set_new(o, "owner",
			    json_string(cli_owner(x->w, own, sizeof(own))));
	json_object_set_new(o, "state",
			    json_string(sched_xstate_name(x->state)));
	json_object_set_new(o, "clusterQueue",
			    x->cq ? json_string(x->cq) : json_null());
	json_object_set_new(o, "localQueue",
			    x->lq ? json_string(strchr(x->lq, '/') + 1)
				  : json_null());
	json_object_set_new(o, "priority", json_integer(x->priority));
	if (shown)
		json_object_set_new(o, "quotaReservedMessage",
				    json_string(shown));
	if (inadm)
		json_object_set_new(o, "inadmissible", json_string(inadm));
	if (x->state != SX_PENDING && x->state != SX_PARKED)
		return o;
	json_object_set_new(o, "positionInClusterQueue",
			    json_integer(x->position));
	json_object_set_new(o, "clusterQueueActive",
			    json_boolean(x->cq_active));
	if (!x->cq_active)
		json_object_set_new(o, "clusterQueueInactive",
				    json_string(x->cq_message
							? x->cq_message
							: ""));
	json_object_set_new(o, "strictFIFO", json_boolean(x->strict_fifo));
	json_object_set_new(o, "verdict",
			    json_string(x->never_fits ? "NeverFits"
					: x->mode == ASSIGN_FIT ? "Fits"
					: x->nvictims ? "Preempts" : "Waits"));
	json_object_set_new(o, "message", json_string(x->message));
	json_object_set_new(o, "namespaceSelected",
			    json_boolean(!x->ns_mismatch));
	a = json_array();
	for (size_t i = 0; i < x->nps; i++) {
		const struct sched_xpodset *p = &x->ps[i];
		json_t *ps = json_object(), *rq = json_object(),
		       *fl = json_object();

		json_object_set_new(ps, "name", json_string(p->name));
		json_object_set_new(ps, "count", json_integer(p->count));
		json_object_set_new(ps, "minCount", json_integer(p->min_count));
		for (size_t k = 0; k < p->nres; k++) {
			json_object_set_new(rq, p->res[k],
					    json_string(qty(p->res[k],
							    p->per_pod[k], q,
							    sizeof(q))));
			if (p->flavor[k])
				json_object_set_new(fl, p->res[k],
						    json_string(p->flavor[k]));
		}
		json_object_set_new(ps, "requestsPerPod", rq);
		json_object_set_new(ps, "flavors", fl);
		json_array_append_new(a, ps);
	}
	json_object_set_new(o, "podSets", a);
	a = json_array();
	for (size_t i = 0; i < x->nreasons; i++) {
		const struct sched_xreason *r = &x->reasons[i];
		json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s}", "podSet",
				      x->ps[r->ps].name, "flavor", r->flavor,
				      "resource", r->resource, "kind",
				      sched_xkind_name(r->kind), "message",
				      r->text);

		if (r->kind == SXK_QUOTA || r->kind == SXK_MAX_CAPACITY)
			json_object_set_new(e, "needed",
					    json_string(qty(r->resource,
							    r->needed, q,
							    sizeof(q))));
		if (r->kind == SXK_MAX_CAPACITY)
			json_object_set_new(e, "maximumCapacity",
					    json_string(qty(r->resource, r->max,
							    q, sizeof(q))));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "rejections", a);
	a = json_array();
	for (size_t i = 0; i < x->nquota; i++) {
		const struct sched_xquota *r = &x->quota[i];
		const char *res = r->resource;
		json_t *e = json_object();

		json_object_set_new(e, "flavor", json_string(r->flavor));
		json_object_set_new(e, "resource", json_string(res));
#define QF(key, v) json_object_set_new(e, key, json_string(qty(res, v, q, sizeof(q))))
		QF("requested", r->request);
		QF("nominal", r->nominal);
		if (r->has_borrowing_limit)
			QF("borrowingLimit", r->borrowing_limit);
		if (r->has_lending_limit)
			QF("lendingLimit", r->lending_limit);
		QF("usedByClusterQueue", r->used);
		QF("usedByCohort", r->cohort_used);
		QF("available", r->available);
		QF("maximum", r->max);
#undef QF
		json_object_set_new(e, "topHolders",
				    holders_json(r->top, r->ntop, res));
		json_object_set_new(e, "topCohortHolders",
				    holders_json(r->ctop, r->nctop, res));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "quota", a);
	a = json_array();
	for (size_t i = 0; i < x->nvictims; i++)
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:s, s:s}", "namespace",
				     x->victims[i].w->meta.namespace,
				     "name", x->victims[i].w->meta.name,
				     "clusterQueue", x->victims[i].cq,
				     "reason", x->victims[i].reason));
	json_object_set_new(o, "preemptionVictims", a);
	json_object_set_new(o, "preemptionPolicy",
			    json_string(policy_text(cq, b, sizeof(b))));
	if (x->est_start_ms) {
		cli_time(x->est_start_ms, b, sizeof(b));
		json_object_set_new(o, "estimatedStart", json_string(b));
		json_object_set_new(o, "estimatedAfterEnding",
				    json_integer((json_int_t)x->est_after));
	}
	return o;
}

static void holders_line(const char *label, const struct sched_xholder *h,
			 size_t n, const char *res)
{
	char q[QUANTITY_BUF];

	if (!n)
		return;
	printf("        %s:", label);
	for (size_t i = 0; i < n; i++)
		printf("%s %s/%s %s", i ? "," : "", h[i].w->meta.namespace,
		       h[i].w->meta.name, qty(res, h[i].v, q, sizeof(q)));
	printf("\n");
}

static void explain_text(const struct cli *c, const struct sched_explain *x,
			 const struct cluster_queue *cq, const char *shown,
			 const char *inadm)
{
	char q[QUANTITY_BUF], q2[QUANTITY_BUF], own[300], b[256];
	const char *owner = cli_owner(x->w, own, sizeof(own));

	printf("Workload:     %s/%s%s%s%s\n", x->w->meta.namespace,
	       x->w->meta.name, *owner ? " (" : "", owner, *owner ? ")" : "");
	printf("Queue:        LocalQueue %s -> ClusterQueue %s\n",
	       x->lq ? strchr(x->lq, '/') + 1 : x->w->queue_name
						    ? x->w->queue_name
						    : "-",
	       x->cq ? x->cq : "-");
	printf("Priority:     %d\n", (int)x->priority);
	if (shown)
		printf("Shows:        %s\n", shown);
	switch (x->state) {
	case SX_HOLDING:
		printf("State:        admitted (holds quota in ClusterQueue "
		       "%s)\n", x->cq);
		return;
	case SX_FINISHED:
		printf("State:        finished or deactivated: not queued\n");
		return;
	case SX_NOT_QUEUED:
		printf("State:        not queued: %s\n",
		       inadm ? inadm : "it names no LocalQueue");
		return;
	default:
		break;
	}
	printf("State:        %s, position %d in the ClusterQueue%s\n",
	       x->state == SX_PARKED ? "inadmissible (retried when quota "
				       "is released)"
				     : "pending",
	       (int)x->position,
	       x->strict_fifo ? " (StrictFIFO: the head blocks the rest)"
			      : "");
	if (!x->cq_active) {
		printf("Blocked:      ClusterQueue %s is inactive: %s\n", x->cq,
		       x->cq_message ? x->cq_message : "");
	}
	if (x->ns_mismatch) {
		printf("Blocked:      the ClusterQueue's namespaceSelector "
		       "does not select namespace %s\n",
		       x->w->meta.namespace);
		return;
	}
	printf("Verdict:      %s\n",
	       x->never_fits ? "can never fit as the queues are set up"
	       : x->mode == ASSIGN_FIT ? "fits now (admitted at the next "
					 "cycle)"
	       : x->nvictims ? "admitted after preempting the workloads below"
			     : "waits for quota");
	if (*x->message)
		printf("Message:      %s\n", x->message);
	for (size_t i = 0; i < x->nps; i++) {
		const struct sched_xpodset *p = &x->ps[i];

		printf("Pod set %s: %d pods", p->name, (int)p->count);
		if (p->min_count < p->count)
			printf(" (minCount %d)", (int)p->min_count);
		printf(", per pod");
		for (size_t k = 0; k < p->nres; k++)
			printf(" %s=%s", p->res[k],
			       qty(p->res[k], p->per_pod[k], q, sizeof(q)));
		printf("\n");
		for (size_t k = 0; k < x->nreasons; k++) {
			const struct sched_xreason *r = &x->reasons[k];

			if (r->ps != (int32_t)i)
				continue;
			printf("    %-10s %-12s %s\n",
			       *r->flavor ? r->flavor : "-",
			       sched_xkind_name(r->kind), r->text);
		}
		for (size_t k = 0; k < p->nres; k++)
			if (p->flavor[k])
				printf("    %-10s %-12s %s (%d pods)\n",
				       p->flavor[k], "assigned", p->res[k],
				       (int)p->assigned_count);
	}
	if (x->nquota)
		printf("Quota of ClusterQueue %s:\n", x->cq);
	for (size_t i = 0; i < x->nquota; i++) {
		const struct sched_xquota *r = &x->quota[i];
		const char *res = r->resource;

		printf("    %s %s: requested %s; nominal %s", r->flavor, res,
		       qty(res, r->request, q, sizeof(q)),
		       qty(res, r->nominal, q2, sizeof(q2)));
		if (r->has_borrowing_limit)
			printf(", borrowingLimit %s",
			       qty(res, r->borrowing_limit, q, sizeof(q)));
		if (r->has_lending_limit)
			printf(", lendingLimit %s",
			       qty(res, r->lending_limit, q, sizeof(q)));
		printf("; used %s", qty(res, r->used, q, sizeof(q)));
		if (r->cohort_used != r->used)
			printf(" (cohort %s)",
			       qty(res, r->cohort_used, q, sizeof(q)));
		printf("; available now %s",
		       qty(res, r->available, q, sizeof(q)));
		printf(", at most %s\n", qty(res, r->max, q, sizeof(q)));
		holders_line("used by", r->top, r->ntop, res);
		holders_line("in the cohort", r->ctop, r->nctop, res);
	}
	if (x->mode != ASSIGN_FIT && !x->never_fits) {
		printf("To fit:\n");
		for (size_t k = 0; k < x->nreasons; k++)
			if (x->reasons[k].kind == SXK_QUOTA)
				printf("    free %s of %s in flavor %s\n",
				       qty(x->reasons[k].resource,
					   x->reasons[k].needed, q, sizeof(q)),
				       x->reasons[k].resource,
				       x->reasons[k].flavor);
		if (x->nvictims) {
			printf("    preemption would evict:");
			for (size_t i = 0; i < x->nvictims; i++)
				printf("%s %s/%s (%s, %s)", i ? "," : "",
				       x->victims[i].w->meta.namespace,
				       x->victims[i].w->meta.name,
				       x->victims[i].cq, x->victims[i].reason);
			printf("\n");
		} else {
			printf("    preemption: no running workload may be "
			       "preempted for it under the queue's policy "
			       "(%s)\n",
			       policy_text(cq, b, sizeof(b)));
		}
	}
	if (x->est_start_ms) {
		cli_time(x->est_start_ms, b, sizeof(b));
		printf("Estimated start: %s, once %zu running workload(s) "
		       "reach their maximum execution time (if nothing else "
		       "changes)\n", b, x->est_after);
	}
	(void)c;
}

int cli_explain(struct cli *c, int argc, char **argv)
{
	struct sched_explain x = { .position = -1 };
	struct err err = { "" };
	struct cq_find f = { 0 };
	const struct condition *qr;
	const char *shown = NULL, *inadm;
	char *key, *name;

	if (argc != 1) {
		fprintf(stderr, "kubectl-cueue: explain takes one JOB, "
			"job/NAME or workload/NAME\n");
		return CLI_FAIL;
	}
	key = target_key(c, argv[0], &err);
	if (!key) {
		fprintf(stderr, "kubectl-cueue: %s\n", err.msg);
		return CLI_FAIL;
	}
	name = strchr(key, '/');
	*name++ = '\0';
	if (sched_explain(c->s, key, name, c->now_ms, &x) == SX_UNKNOWN) {
		fprintf(stderr, "kubectl-cueue: no Workload %s/%s (is the Job "
			"labelled with kueue.x-k8s.io/queue-name?)\n", key,
			name);
		free(key);
		return CLI_FAIL;
	}
	qr = conditions_find(&x.w->conds, "QuotaReserved");
	if (qr && qr->status == COND_FALSE)
		shown = qr->message;
	inadm = manager_wl_inadmissible(c->m, key, name);
	if (x.cq) {
		f.name = x.cq;
		manager_visit(c->m, visit_cq, &f);
	}
	if (c->o.json) {
		json_t *o = explain_json(&x, f.cq, shown, inadm);

		cli_print_json(o);
		json_decref(o);
	} else {
		explain_text(c, &x, f.cq, shown, inadm);
	}
	sched_explain_release(&x);
	free(key);
	return CLI_OK;
}
