/*
 * pending: `kubectl cueue pending [CQ | -n NS LQ]`, the queue in the
 * order the next cycles follow (sched_cq_pending: active workloads in
 * queue order, then the inadmissible ones), as the visibility API lists
 * it, with each workload's Job, priority, requests and time waited.
 *   no argument        every ClusterQueue (-n: only that namespace's
 *                      workloads)
 *   CQ, clusterqueue/CQ  one ClusterQueue
 *   -n NS LQ, localqueue/LQ  one LocalQueue (positions in both)
 */
#include "cli/cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/manager.h"
#include "flavors/sched.h"
#include "model/objects.h"

struct names {
	char **v;
	size_t n, cap;
};

struct pend {
	struct cli *c;
	const char *cq;
	const char *lq;      /* "ns/name" filter or NULL */
	const char *ns;      /* namespace filter or NULL */
	int32_t pos, lqpos;
	struct cli_table *t;
	json_t *items;
	size_t shown;
	bool all;
};

static void visit_names(void *ud, enum manager_kind kind, const char *name,
			const void *obj, const char *invalid)
{
	struct names *n = ud;

	(void)obj;
	(void)invalid;
	if (kind != MK_CLUSTER_QUEUE)
		return;
	if (n->n == n->cap)
		XGROW(n->v, n->cap, n->n + 1);
	n->v[n->n++] = xstrdup(name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct lq_find {
	const char *key;
	const char *cq;
};

static void visit_lq(void *ud, enum manager_kind kind, const char *name,
		     const void *obj, const char *invalid)
{
	struct lq_find *f = ud;
	const struct local_queue *lq = obj;

	(void)invalid;
	if (kind == MK_LOCAL_QUEUE && !strcmp(name, f->key))
		f->cq = lq->cluster_queue;
}

static char *requests_text(const struct workload *w)
{
	char *out = xstrdup("");

	for (size_t i = 0; i < w->npod_sets; i++) {
		char *r = cli_podset_requests(w, i);
		char *n = xasprintf("%s%s%dx{%s}", out, i ? " " : "",
				    w->pod_sets[i].count, r);

		free(r);
		free(out);
		out = n;
	}
	return out;
}

static bool row(void *ud, const struct workload *w, const char *lq,
		int32_t priority, bool parked)
{
	struct pend *p = ud;
	char own[300], waited[32];
	char *req;
	int32_t pos = p->pos++;
	int32_t lqpos = -1;

	if (p->lq) {
		if (!lq || strcmp(lq, p->lq))
			return true;
		lqpos = p->lqpos++;
	}
	if (p->ns && (!w->meta.namespace || strcmp(w->meta.namespace, p->ns)))
		return true;
	p->shown++;
	req = requests_text(w);
	cli_duration(p->c->now_ms - w->meta.creation_ms, waited,
		     sizeof(waited));
	if (p->items) {
		json_t *it = json_object();

		json_object_set_new(it, "clusterQueue", json_string(p->cq));
		json_object_set_new(it, "positionInClusterQueue",
				    json_integer(pos));
		if (lqpos >= 0)
			json_object_set_new(it, "positionInLocalQueue",
					    json_integer(lqpos));
		json_object_set_new(it, "namespace",
				    json_string(w->meta.namespace));
		json_object_set_new(it, "name", json_string(w->meta.name));
		json_object_set_new(it, "owner",
				    json_string(cli_owner(w, own, sizeof(own))));
		json_object_set_new(it, "localQueue",
				    lq ? json_string(strchr(lq, '/') + 1)
				       : json_null());
		json_object_set_new(it, "priority", json_integer(priority));
		json_object_set_new(it, "requests", json_string(req));
		json_object_set_new(it, "waitedSeconds",
				    json_integer((p->c->now_ms -
						  w->meta.creation_ms) / 1000));
		json_object_set_new(it, "inadmissible", json_boolean(parked));
		json_array_append_new(p->items, it);
	} else {
		if (p->all)
			cli_table_add(p->t, p->cq);
		cli_table_addf(p->t, "%d", (int)pos);
		if (p->lq)
			cli_table_addf(p->t, "%d", (int)lqpos);
		cli_table_addf(p->t, "%s/%s", w->meta.namespace,
			       w->meta.name);
		cli_table_add(p->t, cli_owner(w, own, sizeof(own)));
		cli_table_addf(p->t, "%d", (int)priority);
		cli_table_add(p->t, req);
		cli_table_add(p->t, waited);
		cli_table_add(p->t, parked ? "inadmissible" : "pending");
	}
	free(req);
	return true;
}

int cli_pending(struct cli *c, int argc, char **argv)
{
	static const char *const h_all[] = { "CLUSTERQUEUE", "POSITION",
					     "WORKLOAD", "JOB", "PRIORITY",
					     "REQUESTS", "WAITED", "STATE" };
	static const char *const h_cq[] = { "POSITION", "WORKLOAD", "JOB",
					    "PRIORITY", "REQUESTS", "WAITED",
					    "STATE" };
	static const char *const h_lq[] = { "POSITION", "IN-LOCALQUEUE",
					    "WORKLOAD", "JOB", "PRIORITY",
					    "REQUESTS", "WAITED", "STATE" };
	struct names cqs = { 0 };
	struct cli_table t;
	struct pend p = { .c = c, .t = &t };
	struct lq_find f = { 0 };
	char *lqkey = NULL;
	const char *arg = argc > 0 ? argv[0] : NULL;
	int rc = CLI_OK;

	if (argc > 1) {
		fprintf(stderr, "kubectl-cueue: pending takes at most one "
			"queue\n");
		return CLI_FAIL;
	}
	if (arg && (!strncmp(arg, "localqueue/", 11) ||
		    !strncmp(arg, "lq/", 3) || c->o.ns)) {
		const char *name = strchr(arg, '/') ? strchr(arg, '/') + 1 : arg;

		lqkey = xasprintf("%s/%s", c->ns, name);
		f.key = lqkey;
		manager_visit(c->m, visit_lq, &f);
		if (!f.cq) {
			fprintf(stderr, "kubectl-cueue: LocalQueue %s not "
				"found\n", lqkey);
			free(lqkey);
			return CLI_FAIL;
		}
		cqs.v = xcalloc(1, sizeof(*cqs.v));
		cqs.v[cqs.n++] = xstrdup(f.cq);
		p.lq = lqkey;
	} else if (arg) {
		const char *name = strchr(arg, '/') ? strchr(arg, '/') + 1 : arg;
		struct sched_cq_status st;

		sched_cq_status(c->s, name, &st);
		if (!st.exists) {
			fprintf(stderr, "kubectl-cueue: ClusterQueue %s not "
				"found\n", name);
			return CLI_FAIL;
		}
		cqs.v = xcalloc(1, sizeof(*cqs.v));
		cqs.v[cqs.n++] = xstrdup(name);
	} else {
		manager_visit(c->m, visit_names, &cqs);
		qsort(cqs.v, cqs.n, sizeof(*cqs.v), cmp_str);
		p.all = true;
		if (c->o.ns && !c->o.all_ns)
			p.ns = c->ns;
	}
	if (c->o.json)
		p.items = json_array();
	else if (p.all)
		cli_table_init(&t, 8, h_all);
	else if (p.lq)
		cli_table_init(&t, 8, h_lq);
	else
		cli_table_init(&t, 7, h_cq);
	for (size_t i = 0; i < cqs.n; i++) {
		p.cq = cqs.v[i];
		p.pos = 0;
		p.lqpos = 0;
		sched_cq_pending(c->s, p.cq, row, &p);
	}
	if (p.items) {
		json_t *doc = json_object();

		json_object_set_new(doc, "items", p.items);
		cli_print_json(doc);
		json_decref(doc);
	} else if (!p.shown) {
		cli_table_print(&t);
		printf("No pending workloads.\n");
	} else {
		cli_table_print(&t);
	}
	for (size_t i = 0; i < cqs.n; i++)
		free(cqs.v[i]);
	free(cqs.v);
	free(lqkey);
	return rc;
}
