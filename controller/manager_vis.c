/*
 * manager_vis: the visibility API's answers (Kueue's
 * visibility.kueue.x-k8s.io pendingworkloads; kueue-api.md §15.1), made
 * on the loop thread from the scheduler's own queues
 * (sched_cq_pending), so a position is where the next cycles will try
 * the workload: active ones in queue order (StrictFIFO's blocked head
 * first, as it blocks), then the parked ones.
 *
 * As Kueue's REST storage does:
 *  - limit defaults to 1000 (0 or absent) and is capped at 100,000;
 *    negative limit or offset count as 0;
 *  - ClusterQueue: items offset .. offset+limit-1 of its queue;
 *    positionInLocalQueue counts the earlier items of the same
 *    LocalQueue;
 *  - LocalQueue: its own items of its ClusterQueue's queue, offset
 *    skipped; positionInClusterQueue is the index in the whole queue;
 *  - an unknown ClusterQueue, or a LocalQueue the manager does not
 *    know, is 404 NotFound ("clusterqueue.visibility.kueue.x-k8s.io
 *    \"x\" not found"); a LocalQueue whose ClusterQueue is missing
 *    lists nothing.
 * A replica that does not schedule (a follower, or informers not yet
 * synced) has no queues: 503 ServiceUnavailable, so a client retries
 * rather than reading an empty list as "nothing pending".
 *
 * JSON: the answer is rendered here, as the status patches are in
 * manager_wl.c.
 */
#include "controller/manager_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "flavors/sched.h"
#include "model/timestamp.h"

#define VIS_GROUP "visibility.kueue.x-k8s.io"
#define VIS_DEFAULT_LIMIT 1000
#define VIS_MAX_LIMIT 100000

static char *status_json(unsigned code, const char *reason,
			 const char *message, const char *kind,
			 const char *name)
{
	json_t *o = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}",
			      "kind", "Status", "apiVersion", "v1",
			      "metadata", "status", "Failure",
			      "message", message, "reason", reason,
			      "code", (int)code);
	char *s;

	if (kind)
		json_object_set_new(o, "details",
				    json_pack("{s:s, s:s, s:s}", "name", name,
					      "group", VIS_GROUP, "kind",
					      kind));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static char *not_found(const char *kind, const char *name, unsigned *code)
{
	char *msg = xasprintf("%s." VIS_GROUP " \"%s\" not found", kind,
			      name);
	char *s = status_json(404, "NotFound", msg, kind, name);

	free(msg);
	*code = 404;
	return s;
}

struct vis_walk {
	const struct manager_vis_query *q;
	json_t *items;
	int64_t index;   /* position in the ClusterQueue of the next item */
	int64_t skipped; /* LocalQueue query: own items skipped so far */
	int64_t limit;
	int64_t offset;
	struct hmap lq_pos; /* ClusterQueue query: "ns/lq" -> struct
			       lq_count (owned) */
};

static json_t *item_json(const struct workload *w, int32_t priority,
			 int64_t pos_cq, int64_t pos_lq)
{
	char ts[40];
	json_t *meta = json_pack("{s:s, s:s}", "name", w->meta.name,
				 "namespace", w->meta.namespace);

	if (w->meta.creation_ms)
		json_object_set_new(meta, "creationTimestamp",
				    json_string(timestamp_format(
					    w->meta.creation_ms, ts,
					    sizeof(ts))));
	else
		json_object_set_new(meta, "creationTimestamp", json_null());
	if (w->meta.nowners) {
		json_t *refs = json_array();

		for (size_t i = 0; i < w->meta.nowners; i++) {
			const struct owner_ref *o = &w->meta.owners[i];

			json_array_append_new(
				refs, json_pack("{s:s, s:s, s:s, s:s}",
						"apiVersion", o->api_version,
						"kind", o->kind, "name",
						o->name, "uid", o->uid));
		}
		json_object_set_new(meta, "ownerReferences", refs);
	}
	return json_pack("{s:o, s:i, s:s, s:I, s:I}", "metadata", meta,
			 "priority", (int)priority, "localQueueName",
			 w->queue_name ? w->queue_name : "",
			 "positionInClusterQueue", (json_int_t)pos_cq,
			 "positionInLocalQueue", (json_int_t)pos_lq);
}

/* A LocalQueue's count of items seen so far (ClusterQueue query). */
struct lq_count {
	char *key; /* owned; the map key */
	int64_t n;
};

static bool walk_cq(void *ud, const struct workload *w, const char *lq,
		    int32_t priority, bool parked)
{
	struct vis_walk *v = ud;
	const char *key = lq ? lq : "";
	struct lq_count *c = hmap_get(&v->lq_pos, key);

	(void)parked;
	if (v->index >= v->offset + v->limit)
		return false;
	if (!c) {
		c = xcalloc(1, sizeof(*c));
		c->key = xstrdup(key);
		hmap_put(&v->lq_pos, c->key, c);
	}
	if (v->index >= v->offset)
		json_array_append_new(v->items,
				      item_json(w, priority, v->index, c->n));
	c->n++;
	v->index++;
	return true;
}

static bool walk_lq(void *ud, const struct workload *w, const char *lq,
		    int32_t priority, bool parked)
{
	struct vis_walk *v = ud;
	int64_t pos = v->index++;

	(void)lq;
	(void)parked;
	if ((int64_t)json_array_size(v->items) >= v->limit)
		return false;
	if (!w->meta.namespace || strcmp(w->meta.namespace, v->q->ns) ||
	    !w->queue_name || strcmp(w->queue_name, v->q->lq))
		return true;
	if (v->skipped < v->offset) {
		v->skipped++;
		return true;
	}
	json_array_append_new(v->items,
			      item_json(w, priority, pos,
					(int64_t)json_array_size(v->items) +
						v->offset));
	return true;
}

char *manager_visibility(struct manager *m, const struct manager_vis_query *q,
			 unsigned *code)
{
	struct vis_walk v = { .q = q };
	const char *cq = q->cq;
	json_t *out;
	char *s;

	if (!m->fed || m->draining) {
		*code = 503;
		return status_json(503, "ServiceUnavailable",
				   "this replica's caches are not synced yet "
				   "(or it is shutting down): it has no "
				   "queues to show; retry",
				   NULL, NULL);
	}
	v.limit = q->limit <= 0 ? VIS_DEFAULT_LIMIT : q->limit;
	if (v.limit > VIS_MAX_LIMIT)
		v.limit = VIS_MAX_LIMIT;
	v.offset = q->offset < 0 ? 0 : q->offset;
	v.items = json_array();
	hmap_init(&v.lq_pos);
	if (q->lq) {
		char *key = xasprintf("%s/%s", q->ns, q->lq);
		struct lq_entry *e = hmap_get(&m->lqs, key);

		free(key);
		if (!e || !e->lq) {
			json_decref(v.items);
			hmap_release(&v.lq_pos);
			return not_found("localqueue", q->lq, code);
		}
		cq = e->lq->cluster_queue;
		if (cq)
			(void)sched_cq_pending(m->s, cq, walk_lq, &v);
	} else if (!sched_cq_pending(m->s, cq, walk_cq, &v)) {
		json_decref(v.items);
		hmap_release(&v.lq_pos);
		return not_found("clusterqueue", cq, code);
	}
	{
		size_t pos = 0;
		struct lq_count *c;

		while ((c = hmap_next(&v.lq_pos, &pos, NULL))) {
			free(c->key);
			free(c);
		}
		hmap_release(&v.lq_pos);
	}
	out = json_pack("{s:s, s:s, s:{s:n}, s:o}", "kind",
			"PendingWorkloadsSummary", "apiVersion", q->api_version,
			"metadata", "creationTimestamp", "items", v.items);
	s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	*code = 200;
	return s;
}
