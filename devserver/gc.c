/*
 * gc: owner-reference garbage collection, the namespace lifecycle and
 * CRD leftovers for the devserver (see gc.h for what each does). It owns
 * its thread and an in-memory graph of every object's uid, owners and
 * dependents; it reads the store and writes only through the internal
 * API. It must never write an object it has not just re-read from the
 * store at the RV its graph holds, so a decision made on a stale graph
 * is dropped rather than applied (the newer event re-queues the work).
 *
 * DESIGN. kube-controller-manager's GC builds a graph from informers
 * and runs two queues (attemptToDelete, attemptToOrphan); here the event
 * log is the informer. Every object is a node keyed by uid. A node that
 * is only referenced as an owner and was never seen is "unseen"; one
 * whose DELETED event was seen is "gone". Work is queued per node as
 * bits:
 *   W_ATTEMPT    as a dependent: classify each owner (solid, waiting for
 *                foreground deletion, gone, unseen). With a solid owner,
 *                references to gone/waiting owners are removed; with none,
 *                the dependent is deleted (Foreground when a waiting owner
 *                exists and it has dependents itself; otherwise per its
 *                own finalizers, Background by default). An unseen owner
 *                counts as absent only when it is still unseen at a
 *                second look at least GRACE_MS after the first.
 *   W_OWNER      as an owner with deletionTimestamp: orphan -> remove the
 *                references from every dependent, then the finalizer;
 *                foregroundDeletion -> delete the dependents, and remove
 *                the finalizer once no blockOwnerDeletion dependent is
 *                left.
 *   W_NAMESPACE  a Terminating namespace: delete all namespaced content
 *                (Background), then remove `kubernetes` via /finalize.
 * Each turn of the thread:
 *   1. wait for the first event (any resource), at most until the
 *      earliest delayed work (and 1 s, so a stop is seen); drain up to
 *      BATCH more, applying each to the graph; STORE_GONE -> resync
 *      (rebuild the graph from a full list);
 *   2. unless a resync's replay is still behind the list it took, move
 *      due delayed work to the queue and run the queue;
 *   3. after a turn that had events (but no backlog), sleep COALESCE_MS
 *      before waiting again: under a stream of writes the thread then
 *      wakes a few hundred times a second for a batch, not once per
 *      write (a wake-up per write cost the writers measurably).
 * Failed writes are retried per node with a backoff of 1 s doubling to
 * 30 s; 404 counts as done and 409 is retried at once with a fresh read.
 */
#include "devserver/gc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "base/jx.h"
#include "devserver/api.h"
#include "devserver/builtin.h"
#include "devserver/store.h"

#define NS_KEY "/namespaces"
#define CRD_KEY "apiextensions.k8s.io/customresourcedefinitions"
#define BATCH 4096            /* events applied before work runs */
#define EV_CHUNK 64           /* events taken per store lock hold */
#define MAX_WAIT_MS 1000      /* longest sleep, so a stop is noticed */
#define COALESCE_MS 2         /* step 3 of a turn */
#define GRACE_MS 1000         /* unseen owner: second look after this */
#define NS_RECHECK_MS 1000    /* namespace content still there */
#define NS_NUDGE_MS 50        /* content of a Terminating ns went away */
#define CRD_SETTLE_MS 500     /* after a CRD's DELETED, before leftovers */
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 30000
#define CONFLICT_RETRIES 5

static const char gc_user[] =
	"system:serviceaccount:kube-system:generic-garbage-collector";
static const char ns_user[] =
	"system:serviceaccount:kube-system:namespace-controller";

enum node_flag {
	N_LIVE = 1u << 0,       /* the object exists (as of the cursor) */
	N_GONE = 1u << 1,       /* its DELETED event was seen */
	N_DELETING = 1u << 2,   /* has metadata.deletionTimestamp */
	N_FIN_ORPHAN = 1u << 3, /* finalizer "orphan" */
	N_FIN_FG = 1u << 4,     /* finalizer "foregroundDeletion" */
};

enum work {
	W_ATTEMPT = 1u << 0,
	W_OWNER = 1u << 1,
	W_NAMESPACE = 1u << 2,
};

struct oref {
	char *uid;    /* owned */
	bool block;   /* blockOwnerDeletion */
};

/* One uid. Dependents point at their owners by uid (owners[]) and owners
 * list their dependents (deps[]); both sides change together. */
struct gnode {
	char *uid;             /* owned; the key in the graph's nodes */
	const char *res;       /* interned store key; NULL: never seen */
	char *ns;              /* owned; "" cluster-scoped; NULL with !res */
	char *name;            /* owned; NULL with !res */
	uint64_t rv;           /* RV of the last state applied */
	unsigned flags;        /* enum node_flag */
	struct oref *owners;   /* nowners, unique uids */
	size_t nowners;
	struct gnode **deps;   /* ndeps nodes that list this uid as owner */
	size_t ndeps, capdeps;
	unsigned queued;       /* enum work bits waiting in g->queue */
	unsigned later;        /* enum work bits waiting in g->later */
	int64_t later_ms;      /* due time of its earliest g->later entry */
	int64_t absent_since;  /* first look that found an owner unseen; 0 */
	int64_t backoff_ms;    /* last retry delay after a failure; 0 */
};

struct later {
	char *uid;      /* owned */
	int64_t due_ms;
};

struct term_ns {
	char *name;     /* owned; a Terminating namespace we work on */
	char *uid;      /* owned */
};

struct crd_gone {
	char *name;     /* owned; CRD name */
	char *key;      /* owned; store key of its objects */
	int64_t due_ms;
};

struct gc {
	struct api *api;          /* borrowed */
	struct store *store;      /* borrowed from api */
	pthread_t thread;
	atomic_bool stop;         /* set by gc_stop */
	atomic_bool exited;       /* set by the thread on its way out */
	/* Everything below belongs to the collector's thread. */
	uint64_t cursor;          /* last store RV applied */
	uint64_t ready_rv;        /* work waits until cursor >= this */
	struct hmap nodes;        /* uid -> struct gnode (owned) */
	char **keys;              /* interned store keys */
	size_t nkeys, capkeys;
	char **queue;             /* owned uids with queued bits */
	size_t nqueue, capqueue;
	struct later *later;      /* delayed work, unordered */
	size_t nlater, caplater;
	int64_t later_min;        /* earliest due in later; 0: none */
	struct term_ns *terms;
	size_t nterms, capterms;
	struct crd_gone *crds;
	size_t ncrds, capcrds;
};

/* ---- helpers ---- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool has_string(const json_t *arr, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v)
		if (json_string_value(v) && !strcmp(json_string_value(v), s))
			return true;
	return false;
}

/* A copy of arr without the strings equal to s. */
static json_t *without_string(const json_t *arr, const char *s)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach(arr, i, v)
		if (!json_string_value(v) || strcmp(json_string_value(v), s))
			json_array_append_new(out, json_deep_copy(v));
	return out;
}

/* "batch/jobs" -> group "batch", plural "jobs" ("/pods": "", "pods"). */
static void split_key(const char *key, char *group, size_t n,
		      const char **plural)
{
	const char *slash = strrchr(key, '/');

	if (!slash) {
		group[0] = '\0';
		*plural = key;
		return;
	}
	snprintf(group, n, "%.*s", (int)(slash - key), key);
	*plural = slash + 1;
}

static void log_failure(const char *what, const char *res, const char *ns,
			const char *name, const struct api_status *st)
{
	fprintf(stderr, "cueue-devserver: gc: %s %s %s%s%s: %d %s\n", what,
		res, ns, *ns ? "/" : "", name, st->code,
		st->message ? st->message : "");
}

/* ---- the graph ---- */

static struct gnode *node_find(struct gc *g, const char *uid)
{
	return hmap_get(&g->nodes, uid);
}

static struct gnode *node_get(struct gc *g, const char *uid)
{
	struct gnode *n = node_find(g, uid);

	if (n)
		return n;
	n = xcalloc(1, sizeof(*n));
	n->uid = xstrdup(uid);
	hmap_put(&g->nodes, n->uid, n);
	return n;
}

static void node_free(struct gnode *n)
{
	for (size_t i = 0; i < n->nowners; i++)
		free(n->owners[i].uid);
	free(n->owners);
	free(n->deps);
	free(n->uid);
	free(n->ns);
	free(n->name);
	free(n);
}

/* Frees n once nothing needs it: not live and no dependents. Queued
 * uids of a freed node are skipped when they come up. */
static void maybe_free(struct gc *g, struct gnode *n)
{
	if ((n->flags & N_LIVE) || n->ndeps || n->nowners)
		return;
	hmap_del(&g->nodes, n->uid);
	node_free(n);
}

static const char *intern(struct gc *g, const char *key)
{
	for (size_t i = 0; i < g->nkeys; i++)
		if (!strcmp(g->keys[i], key))
			return g->keys[i];
	XGROW(g->keys, g->capkeys, g->nkeys + 1);
	g->keys[g->nkeys] = xstrdup(key);
	return g->keys[g->nkeys++];
}

static bool fg_deleting(const struct gnode *n)
{
	return (n->flags & (N_LIVE | N_DELETING | N_FIN_FG)) ==
	       (N_LIVE | N_DELETING | N_FIN_FG);
}

/* ---- work queues ---- */

static void queue(struct gc *g, struct gnode *n, unsigned bits)
{
	if (!n->queued) {
		XGROW(g->queue, g->capqueue, g->nqueue + 1);
		g->queue[g->nqueue++] = xstrdup(n->uid);
	}
	n->queued |= bits;
}

static void queue_later(struct gc *g, struct gnode *n, unsigned bits,
			int64_t due_ms)
{
	n->later |= bits;
	if (n->later_ms && n->later_ms <= due_ms)
		return;
	n->later_ms = due_ms;
	XGROW(g->later, g->caplater, g->nlater + 1);
	g->later[g->nlater].uid = xstrdup(n->uid);
	g->later[g->nlater++].due_ms = due_ms;
	if (!g->later_min || due_ms < g->later_min)
		g->later_min = due_ms;
}

/* A write failed: retry the work with a growing delay. */
static void retry_later(struct gc *g, struct gnode *n, unsigned bits)
{
	int64_t b = n->backoff_ms ? n->backoff_ms * 2 : BACKOFF_MIN_MS;

	n->backoff_ms = b < BACKOFF_MAX_MS ? b : BACKOFF_MAX_MS;
	queue_later(g, n, bits, now_ms() + n->backoff_ms);
}

/* Moves due delayed work to the queue. */
static void promote_later(struct gc *g, int64_t now)
{
	size_t o = 0;

	if (!g->later_min || g->later_min > now)
		return;
	g->later_min = 0;
	for (size_t i = 0; i < g->nlater; i++) {
		struct later *l = &g->later[i];

		if (l->due_ms <= now) {
			struct gnode *n = node_find(g, l->uid);

			if (n && n->later && n->later_ms <= now) {
				unsigned bits = n->later;

				n->later = 0;
				n->later_ms = 0;
				queue(g, n, bits);
			}
			free(l->uid);
			continue;
		}
		if (!g->later_min || l->due_ms < g->later_min)
			g->later_min = l->due_ms;
		g->later[o++] = *l;
	}
	g->nlater = o;
}

/* ---- applying events ---- */

enum owner_state {
	OS_SOLID,    /* live, not waiting for its dependents */
	OS_WAITING,  /* live, in foreground deletion */
	OS_ABSENT,   /* deleted, or in another namespace */
	OS_UNSEEN,   /* no object with this uid was ever seen */
};

static enum owner_state owner_state(struct gc *g, const struct gnode *d,
				    const char *uid)
{
	const struct gnode *o = node_find(g, uid);

	if (!o || !(o->flags & (N_LIVE | N_GONE)))
		return OS_UNSEEN;
	if (o->flags & N_GONE)
		return OS_ABSENT;
	/* A namespaced owner must live in the dependent's namespace. */
	if (o->ns[0] && strcmp(o->ns, d->ns))
		return OS_ABSENT;
	if (fg_deleting(o))
		return OS_WAITING;
	return OS_SOLID;
}

static bool needs_attempt(struct gc *g, const struct gnode *n)
{
	if (!(n->flags & N_LIVE) || (n->flags & N_DELETING))
		return false;
	for (size_t i = 0; i < n->nowners; i++)
		if (owner_state(g, n, n->owners[i].uid) != OS_SOLID)
			return true;
	return false;
}

static void dep_remove(struct gnode *o, const struct gnode *d)
{
	for (size_t i = 0; i < o->ndeps; i++)
		if (o->deps[i] == d) {
			o->deps[i] = o->deps[--o->ndeps];
			return;
		}
}

/* True when refs lists exactly n's owners, in order: the common case of
 * an event that changed something else, which then costs no allocation. */
static bool same_owners(const struct gnode *n, const json_t *refs)
{
	size_t i;
	json_t *r;

	if (json_array_size(refs) != n->nowners)
		return false;
	json_array_foreach(refs, i, r) {
		const char *uid = json_string_value(json_object_get(r, "uid"));

		if (!uid || strcmp(uid, n->owners[i].uid) ||
		    json_is_true(json_object_get(r, "blockOwnerDeletion")) !=
		    n->owners[i].block)
			return false;
	}
	return true;
}

/* Replaces n's owners with those of obj (NULL: none), keeping the
 * owners' dependent lists in step. */
static void set_owners(struct gc *g, struct gnode *n, const json_t *obj)
{
	const json_t *refs = json_object_get(json_object_get(obj, "metadata"),
					     "ownerReferences"), *r;
	struct oref *nw = NULL, *old = n->owners;
	size_t nn = 0, cap = 0, nold = n->nowners, i;

	if (same_owners(n, refs))
		return;
	json_array_foreach(refs, i, r) {
		const char *uid = json_string_value(json_object_get(r, "uid"));
		bool block = json_is_true(json_object_get(r,
							  "blockOwnerDeletion"));
		size_t k;

		if (!uid || !*uid)
			continue;
		for (k = 0; k < nn && strcmp(nw[k].uid, uid); k++)
			;
		if (k < nn) {
			nw[k].block |= block;
			continue;
		}
		XGROW(nw, cap, nn + 1);
		nw[nn].uid = xstrdup(uid);
		nw[nn++].block = block;
	}
	/* Attach new owners first, so an owner both old and new is never
	 * freed on the way. */
	for (i = 0; i < nn; i++) {
		struct gnode *o;
		size_t k;

		for (k = 0; k < nold && strcmp(old[k].uid, nw[i].uid); k++)
			;
		o = node_get(g, nw[i].uid);
		if (k == nold) {
			XGROW(o->deps, o->capdeps, o->ndeps + 1);
			o->deps[o->ndeps++] = n;
		}
		if (fg_deleting(o) && (k == nold || old[k].block != nw[i].block))
			queue(g, o, W_OWNER);
	}
	n->owners = nw;
	n->nowners = nn;
	for (i = 0; i < nold; i++) {
		struct gnode *o = node_find(g, old[i].uid);
		size_t k;

		for (k = 0; k < nn && strcmp(nw[k].uid, old[i].uid); k++)
			;
		if (k == nn && o) {
			dep_remove(o, n);
			if (fg_deleting(o))
				queue(g, o, W_OWNER);
			if (o != n)
				maybe_free(g, o);
		}
		free(old[i].uid);
	}
	free(old);
}

/* An object's state at rv (ADDED, MODIFIED, or a list item). */
static void node_update(struct gc *g, const char *res, const char *ns,
			const char *name, const json_t *obj, uint64_t rv)
{
	const char *uid = jx_meta_str(obj, "uid");
	const json_t *fins = json_object_get(json_object_get(obj, "metadata"),
					     "finalizers");
	struct gnode *n;

	if (!uid || !*uid)
		return;
	n = node_find(g, uid);
	if (n && (n->flags & (N_LIVE | N_GONE)) && n->rv >= rv)
		return; /* replayed after a resync's list */
	n = node_get(g, uid);
	if (!n->res) {
		n->res = intern(g, res);
		n->ns = xstrdup(ns ? ns : "");
		n->name = xstrdup(name);
	}
	n->rv = rv;
	n->flags = N_LIVE;
	if (jx_meta_str(obj, "deletionTimestamp"))
		n->flags |= N_DELETING;
	if (has_string(fins, "orphan"))
		n->flags |= N_FIN_ORPHAN;
	if (has_string(fins, "foregroundDeletion"))
		n->flags |= N_FIN_FG;
	set_owners(g, n, obj);
	if (needs_attempt(g, n))
		queue(g, n, W_ATTEMPT);
	if ((n->flags & N_DELETING) && (n->flags & (N_FIN_ORPHAN | N_FIN_FG)))
		queue(g, n, W_OWNER);
	if ((n->flags & N_DELETING) && !strcmp(res, NS_KEY))
		queue(g, n, W_NAMESPACE);
}

static void term_remove(struct gc *g, const char *name)
{
	for (size_t i = 0; i < g->nterms; i++)
		if (!strcmp(g->terms[i].name, name)) {
			free(g->terms[i].name);
			free(g->terms[i].uid);
			g->terms[i] = g->terms[--g->nterms];
			return;
		}
}

static void crd_gone_add(struct gc *g, const char *name, const json_t *crd)
{
	const json_t *spec = json_object_get(crd, "spec");
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *plural = json_string_value(json_object_get(
		json_object_get(spec, "names"), "plural"));

	if (!group || !plural)
		return;
	XGROW(g->crds, g->capcrds, g->ncrds + 1);
	g->crds[g->ncrds].name = xstrdup(name);
	g->crds[g->ncrds].key = xasprintf("%s/%s", group, plural);
	g->crds[g->ncrds++].due_ms = now_ms() + CRD_SETTLE_MS;
}

/* An object's DELETED event. */
static void node_deleted(struct gc *g, const struct store_event *ev)
{
	const char *uid = jx_meta_str(ev->obj, "uid");
	struct gnode *n = uid ? node_find(g, uid) : NULL;

	/* Content of a Terminating namespace went away: look again soon. */
	if (*ev->ns)
		for (size_t i = 0; i < g->nterms; i++)
			if (!strcmp(g->terms[i].name, ev->ns)) {
				struct gnode *t = node_find(g, g->terms[i].uid);

				if (t)
					queue_later(g, t, W_NAMESPACE,
						    now_ms() + NS_NUDGE_MS);
			}
	if (!strcmp(ev->res, NS_KEY))
		term_remove(g, ev->name);
	if (!strcmp(ev->res, CRD_KEY))
		crd_gone_add(g, ev->name, ev->obj);
	if (!n || n->rv > ev->rv)
		return;
	set_owners(g, n, NULL);
	n->flags = N_GONE;
	n->rv = ev->rv;
	for (size_t i = 0; i < n->ndeps; i++)
		queue(g, n->deps[i], W_ATTEMPT);
	maybe_free(g, n);
}

static void on_event(struct gc *g, const struct store_event *ev)
{
	if (ev->type == STORE_DELETED)
		node_deleted(g, ev);
	else
		node_update(g, ev->res, ev->ns, ev->name, ev->obj, ev->rv);
}

/* ---- writes ---- */

static void node_ref(const struct gnode *n, char *group, size_t gn,
		     struct api_ref *ref, const char *user)
{
	const char *plural;

	split_key(n->res, group, gn, &plural);
	memset(ref, 0, sizeof(*ref));
	ref->group = group;
	ref->resource = plural;
	ref->ns = n->ns;
	ref->name = n->name;
	ref->user = user;
}

/* The stored object of n, or NULL when it is gone or was replaced. */
static json_t *node_current(struct gc *g, const struct gnode *n)
{
	json_t *cur = store_get(g->store, n->res, n->ns, n->name);
	const char *uid = cur ? jx_meta_str(cur, "uid") : NULL;

	if (!uid || strcmp(uid, n->uid)) {
		json_decref(cur);
		return NULL;
	}
	return cur;
}

enum edit { EDIT_OWNERS, EDIT_FINALIZER };

/*
 * Removes, with a resourceVersion-guarded merge patch, the owner
 * references to the uids in drop[] (EDIT_OWNERS) or the finalizer drop[0]
 * (EDIT_FINALIZER) from n's object. Re-reads and retries on 409. Returns
 * 0 when done or nothing was left to do, -1 after logging a failure.
 */
static int edit_meta(struct gc *g, const struct gnode *n, enum edit what,
		     const char *const *drop, size_t ndrop)
{
	char group[256];
	struct api_ref ref;

	node_ref(n, group, sizeof(group), &ref, gc_user);
	for (int attempt = 0; attempt <= CONFLICT_RETRIES; attempt++) {
		json_t *cur = node_current(g, n), *m, *val, *patch, *v;
		struct api_status st = API_STATUS_INIT;
		const char *field;
		size_t i;
		int rc;

		if (!cur)
			return 0;
		m = json_object_get(cur, "metadata");
		if (what == EDIT_FINALIZER) {
			field = "finalizers";
			if (!has_string(json_object_get(m, field), drop[0])) {
				json_decref(cur);
				return 0;
			}
			val = without_string(json_object_get(m, field),
					     drop[0]);
		} else {
			field = "ownerReferences";
			val = json_array();
			json_array_foreach(json_object_get(m, field), i, v) {
				const char *u = json_string_value(
					json_object_get(v, "uid"));
				bool keep = true;

				for (size_t k = 0; k < ndrop && u; k++)
					if (!strcmp(u, drop[k]))
						keep = false;
				if (keep) /* copies: the stored tree is shared */
					json_array_append_new(val,
						json_deep_copy(v));
			}
			if (json_array_size(val) ==
			    json_array_size(json_object_get(m, field))) {
				json_decref(val);
				json_decref(cur);
				return 0;
			}
		}
		if (!json_array_size(val)) {
			json_decref(val);
			val = json_null();
		}
		patch = json_pack("{s:{s:s, s:o}}", "metadata",
				  "resourceVersion",
				  jx_meta_str(cur, "resourceVersion") ?
				  jx_meta_str(cur, "resourceVersion") : "",
				  field, val);
		json_decref(cur);
		rc = api_internal_patch(g->api, &ref, "", API_PATCH_MERGE,
					patch, NULL, &st);
		json_decref(patch);
		if (rc == 0 || st.code == 404) {
			status_release(&st);
			return 0;
		}
		if (st.code != 409 || attempt == CONFLICT_RETRIES) {
			log_failure(what == EDIT_FINALIZER
				    ? "removing a finalizer from"
				    : "removing owner references from",
				    n->res, n->ns, n->name, &st);
			status_release(&st);
			return -1;
		}
		status_release(&st);
	}
	return -1;
}

/* Deletes n's object when the graph still describes its stored state.
 * Returns -1 after logging a failure. */
static int delete_node(struct gc *g, const struct gnode *n,
		       const char *propagation)
{
	json_t *cur = node_current(g, n);
	struct api_status st = API_STATUS_INIT;
	struct api_ref ref;
	char group[256];
	bool current = cur && jx_rv_u64(cur) == n->rv;
	int rc;

	json_decref(cur);
	if (!current)
		return 0; /* a newer event is on its way and re-queues */
	node_ref(n, group, sizeof(group), &ref, gc_user);
	rc = api_internal_delete(g->api, &ref, propagation, NULL, &st);
	if (rc < 0 && st.code != 404) {
		log_failure("deleting", n->res, n->ns, n->name, &st);
		status_release(&st);
		return -1;
	}
	status_release(&st);
	return 0;
}

/* ---- work ---- */

/* W_ATTEMPT: kube's attemptToDeleteItem for dependent d. */
static void attempt(struct gc *g, struct gnode *d, int64_t now)
{
	const char **drop;
	size_t ndrop = 0, nsolid = 0, nwaiting = 0;
	bool unseen = false;
	const char *policy;
	int rc = 0;

	if (!(d->flags & N_LIVE) || (d->flags & N_DELETING) || !d->nowners)
		return;
	drop = xcalloc(d->nowners, sizeof(*drop));
	for (size_t i = 0; i < d->nowners; i++) {
		const char *uid = d->owners[i].uid;

		switch (owner_state(g, d, uid)) {
		case OS_SOLID:
			nsolid++;
			break;
		case OS_WAITING:
			nwaiting++;
			drop[ndrop++] = uid;
			break;
		case OS_ABSENT:
			drop[ndrop++] = uid;
			break;
		case OS_UNSEEN:
			if (d->absent_since && now - d->absent_since >= GRACE_MS)
				drop[ndrop++] = uid;
			else
				unseen = true;
			break;
		}
	}
	if (!unseen)
		d->absent_since = 0;
	else if (!d->absent_since)
		d->absent_since = now;
	if (unseen)
		queue_later(g, d, W_ATTEMPT, d->absent_since + GRACE_MS);
	if (nsolid) {
		/* Owned by someone alive: only forget the dead owners. */
		if (ndrop)
			rc = edit_meta(g, d, EDIT_OWNERS, drop, ndrop);
	} else if (!unseen) {
		if (nwaiting && d->ndeps)
			policy = "Foreground";
		else if (d->flags & N_FIN_ORPHAN)
			policy = "Orphan";
		else if (d->flags & N_FIN_FG)
			policy = "Foreground";
		else
			policy = "Background";
		rc = delete_node(g, d, policy);
	}
	free(drop);
	if (rc < 0)
		retry_later(g, d, W_ATTEMPT);
	else
		d->backoff_ms = 0;
}

static bool blocks(const struct gnode *d, const char *owner_uid)
{
	for (size_t i = 0; i < d->nowners; i++)
		if (!strcmp(d->owners[i].uid, owner_uid))
			return d->owners[i].block;
	return false;
}

/* W_OWNER: the orphan and foregroundDeletion finalizers of o. */
static void owner_work(struct gc *g, struct gnode *o)
{
	static const char *const orphan[] = { "orphan" };
	static const char *const fg[] = { "foregroundDeletion" };

	if (!(o->flags & N_LIVE) || !(o->flags & N_DELETING))
		return;
	if (o->flags & N_FIN_ORPHAN) {
		const char *uid = o->uid;
		bool ok = true;

		for (size_t i = 0; i < o->ndeps; i++)
			if (edit_meta(g, o->deps[i], EDIT_OWNERS, &uid, 1) < 0)
				ok = false;
		if (!ok || edit_meta(g, o, EDIT_FINALIZER, orphan, 1) < 0)
			retry_later(g, o, W_OWNER);
		else
			o->backoff_ms = 0;
		return; /* foregroundDeletion, if also there, comes next */
	}
	if (o->flags & N_FIN_FG) {
		size_t blocking = 0;

		for (size_t i = 0; i < o->ndeps; i++) {
			struct gnode *d = o->deps[i];

			if (!(d->flags & N_DELETING))
				queue(g, d, W_ATTEMPT);
			if (blocks(d, o->uid))
				blocking++;
		}
		if (blocking)
			return; /* their DELETED events re-queue o */
		if (edit_meta(g, o, EDIT_FINALIZER, fg, 1) < 0)
			retry_later(g, o, W_OWNER);
		else
			o->backoff_ms = 0;
	}
}

/* Calls fn for every namespaced type: the built-ins and the CRDs. */
typedef void type_fn(struct gc *g, const char *group, const char *plural,
		     void *ctx);

static void each_namespaced_type(struct gc *g, type_fn *fn, void *ctx)
{
	struct store_list_opts o = { 0 };
	struct store_list_result lr;
	size_t i;
	json_t *crd;

	for (i = 0; i < builtin_ntypes; i++)
		if (builtin_types[i].namespaced)
			fn(g, builtin_types[i].group, builtin_types[i].plural,
			   ctx);
	store_list(g->store, CRD_KEY, &o, &lr);
	json_array_foreach(lr.items, i, crd) {
		const json_t *spec = json_object_get(crd, "spec");
		const char *group = json_string_value(json_object_get(spec,
								      "group"));
		const char *plural = json_string_value(json_object_get(
			json_object_get(spec, "names"), "plural"));
		const char *scope = json_string_value(json_object_get(spec,
								      "scope"));

		if (group && plural && scope && !strcmp(scope, "Namespaced"))
			fn(g, group, plural, ctx);
	}
	store_list_result_release(&lr);
}

struct ns_sweep {
	const char *ns;
	size_t remaining;  /* objects still in ns after the sweep */
};

/* Deletes every object of one type in a Terminating namespace. */
static void sweep_type(struct gc *g, const char *group, const char *plural,
		       void *ctx)
{
	struct ns_sweep *sw = ctx;
	struct store_list_opts o = { .ns = sw->ns };
	struct store_list_result lr;
	char *key = xasprintf("%s/%s", group, plural);
	size_t i;
	json_t *obj;

	store_list(g->store, key, &o, &lr);
	json_array_foreach(lr.items, i, obj) {
		struct api_ref ref = { .group = group, .resource = plural,
				       .ns = sw->ns, .name = jx_name(obj),
				       .user = ns_user };
		struct api_status st = API_STATUS_INIT;

		if (jx_meta_str(obj, "deletionTimestamp") || !ref.name)
			continue;
		if (api_internal_delete(g->api, &ref, "Background", NULL,
					&st) < 0 && st.code != 404)
			log_failure("deleting", key, sw->ns, ref.name, &st);
		status_release(&st);
	}
	store_list_result_release(&lr);
	o.limit = 1;
	store_list(g->store, key, &o, &lr);
	sw->remaining += json_array_size(lr.items) + lr.remaining;
	store_list_result_release(&lr);
	free(key);
}

/* W_NAMESPACE: the namespace controller for a Terminating namespace. */
static void namespace_work(struct gc *g, struct gnode *n)
{
	json_t *cur = node_current(g, n), *fins, *obj;
	struct ns_sweep sw = { .ns = n->name };
	struct api_ref ref = { .group = "", .resource = "namespaces",
			       .name = n->name, .user = ns_user };
	struct api_status st = API_STATUS_INIT;
	bool listed = false;

	if (!cur || !jx_meta_str(cur, "deletionTimestamp"))
		goto out;
	fins = json_object_get(json_object_get(cur, "spec"), "finalizers");
	if (!has_string(fins, "kubernetes")) {
		term_remove(g, n->name);
		goto out;
	}
	for (size_t i = 0; i < g->nterms; i++)
		if (!strcmp(g->terms[i].name, n->name))
			listed = true;
	if (!listed) {
		XGROW(g->terms, g->capterms, g->nterms + 1);
		g->terms[g->nterms].name = xstrdup(n->name);
		g->terms[g->nterms++].uid = xstrdup(n->uid);
	}
	/* 1. delete the content; objects with finalizers stay a while */
	each_namespaced_type(g, sweep_type, &sw);
	if (sw.remaining) {
		queue_later(g, n, W_NAMESPACE, now_ms() + NS_RECHECK_MS);
		goto out;
	}
	/* 2. empty: drop our finalizer; the write path removes the
	 * namespace once no finalizer is left */
	json_decref(cur);
	cur = node_current(g, n);
	if (!cur)
		goto out;
	obj = json_deep_copy(cur);
	json_object_set_new(json_object_get(obj, "spec"), "finalizers",
			    without_string(json_object_get(json_object_get(
				    cur, "spec"), "finalizers"),
					   "kubernetes"));
	if (api_internal_update(g->api, &ref, "finalize", obj, NULL, &st) <
	    0) {
		if (st.code == 409)
			queue(g, n, W_NAMESPACE);
		else if (st.code != 404) {
			log_failure("finalizing", NS_KEY, "", n->name, &st);
			retry_later(g, n, W_NAMESPACE);
		}
	}
	json_decref(obj);
	status_release(&st);
out:
	json_decref(cur);
}

/* Objects of a deleted CRD that a concurrent create stored after the
 * write path's cleanup: its type is not served any more, so only the
 * store can reach them. Left alone if the CRD came back. */
static void crd_leftovers(struct gc *g, int64_t now)
{
	size_t o = 0;

	for (size_t i = 0; i < g->ncrds; i++) {
		struct crd_gone *c = &g->crds[i];
		json_t *back;

		if (c->due_ms > now) {
			g->crds[o++] = *c;
			continue;
		}
		back = store_get(g->store, CRD_KEY, "", c->name);
		if (!back) {
			struct store_list_opts lo = { 0 };
			struct store_list_result lr;
			size_t k;
			json_t *obj;

			store_list(g->store, c->key, &lo, &lr);
			json_array_foreach(lr.items, k, obj) {
				const char *ns = jx_meta_str(obj, "namespace");

				store_delete(g->store, c->key, ns ? ns : "",
					     jx_meta_str(obj, "name"), 0, NULL);
			}
			store_list_result_release(&lr);
		}
		json_decref(back);
		free(c->name);
		free(c->key);
	}
	g->ncrds = o;
}

/* Step 2 of a turn: due delayed work, then everything queued so far. */
static void run_work(struct gc *g)
{
	int64_t now = now_ms();
	char **todo;
	size_t n;

	promote_later(g, now);
	if (g->ncrds)
		crd_leftovers(g, now);
	todo = g->queue;
	n = g->nqueue;
	g->queue = NULL;
	g->nqueue = g->capqueue = 0;
	for (size_t i = 0; i < n; i++) {
		struct gnode *node = atomic_load(&g->stop) ? NULL
				     : node_find(g, todo[i]);
		unsigned bits = node ? node->queued : 0;

		free(todo[i]);
		if (!node)
			continue;
		node->queued = 0;
		if (bits & W_OWNER)
			owner_work(g, node);
		if (bits & W_NAMESPACE)
			namespace_work(g, node);
		if (bits & W_ATTEMPT)
			attempt(g, node, now);
	}
	free(todo);
}

/* ---- resync ---- */

static void graph_clear(struct gc *g)
{
	struct gnode *n;
	size_t pos = 0;

	while ((n = hmap_next(&g->nodes, &pos, NULL)))
		node_free(n); /* its key too: the map is emptied below */
	hmap_release(&g->nodes);
	for (size_t i = 0; i < g->nqueue; i++)
		free(g->queue[i]);
	g->nqueue = 0;
	for (size_t i = 0; i < g->nlater; i++)
		free(g->later[i].uid);
	g->nlater = 0;
	g->later_min = 0;
	for (size_t i = 0; i < g->nterms; i++) {
		free(g->terms[i].name);
		free(g->terms[i].uid);
	}
	g->nterms = 0;
}

static void load_key(struct gc *g, const char *key)
{
	struct store_list_opts o = { 0 };
	struct store_list_result lr;
	size_t i;
	json_t *obj;

	store_list(g->store, key, &o, &lr);
	json_array_foreach(lr.items, i, obj) {
		const char *name = jx_meta_str(obj, "name");

		if (name)
			node_update(g, key, jx_namespace(obj), name, obj,
				    jx_rv_u64(obj));
	}
	store_list_result_release(&lr);
}

/* Rebuilds the graph from a list of every type (start, STORE_GONE). The
 * events after the cursor taken first are replayed over it; work waits
 * until the replay has passed the RV the lists ended at. */
static void resync(struct gc *g)
{
	struct store_list_opts o = { 0 };
	struct store_list_result lr;
	size_t i;
	json_t *crd;

	graph_clear(g);
	g->cursor = store_rv(g->store);
	for (i = 0; i < builtin_ntypes; i++) {
		char *key = xasprintf("%s/%s", builtin_types[i].group,
				      builtin_types[i].plural);

		load_key(g, key);
		free(key);
	}
	store_list(g->store, CRD_KEY, &o, &lr);
	json_array_foreach(lr.items, i, crd) {
		const json_t *spec = json_object_get(crd, "spec");
		const char *group = json_string_value(json_object_get(spec,
								      "group"));
		const char *plural = json_string_value(json_object_get(
			json_object_get(spec, "names"), "plural"));
		char *key;

		if (!group || !plural)
			continue;
		key = xasprintf("%s/%s", group, plural);
		load_key(g, key);
		free(key);
	}
	store_list_result_release(&lr);
	g->ready_rv = store_rv(g->store);
}

/* ---- the thread ---- */

static int wait_ms(struct gc *g)
{
	int64_t w = MAX_WAIT_MS, now;

	if (g->nqueue)
		return 0;
	now = now_ms();
	if (g->later_min && g->later_min - now < w)
		w = g->later_min - now;
	for (size_t i = 0; i < g->ncrds; i++)
		if (g->crds[i].due_ms - now < w)
			w = g->crds[i].due_ms - now;
	return w > 0 ? (int)w : 0;
}

static void *gc_main(void *arg)
{
	struct gc *g = arg;

	while (!atomic_load(&g->stop)) {
		int timeout = wait_ms(g);
		size_t done = 0;

		/* 1. events */
		while (done < BATCH) {
			struct store_event evs[EV_CHUNK];
			size_t n = 0;
			enum store_rc rc = store_next_events(g->store,
							     &g->cursor, NULL,
							     done ? 0 : timeout,
							     evs, EV_CHUNK, &n);

			if (rc == STORE_GONE) {
				resync(g);
				break;
			}
			if (rc != STORE_OK)
				break;
			for (size_t i = 0; i < n; i++) {
				on_event(g, &evs[i]);
				store_event_release(&evs[i]);
			}
			done += n;
		}
		if (atomic_load(&g->stop))
			break;
		/* 2. work, once the graph is whole */
		if (g->cursor >= g->ready_rv)
			run_work(g);
		/* 3. let the next events gather */
		if (done > 0 && done < BATCH && !atomic_load(&g->stop)) {
			struct timespec d = { 0, COALESCE_MS * 1000000L };

			nanosleep(&d, NULL);
		}
	}
	atomic_store(&g->exited, true);
	return NULL;
}

struct gc *gc_start(struct api *a, struct err *err)
{
	struct gc *g = xcalloc(1, sizeof(*g));

	g->api = a;
	g->store = api_store(a);
	hmap_init(&g->nodes);
	atomic_init(&g->stop, false);
	atomic_init(&g->exited, false);
	/* The first list happens here, so every write after gc_start
	 * returns is seen as an event. */
	resync(g);
	if (pthread_create(&g->thread, NULL, gc_main, g) != 0) {
		graph_clear(g);
		for (size_t i = 0; i < g->nkeys; i++)
			free(g->keys[i]);
		free(g->keys);
		free(g->queue);
		free(g->later);
		free(g->terms);
		hmap_release(&g->nodes);
		free(g);
		err_set(err, "gc: cannot start its thread");
		return NULL;
	}
	return g;
}

void gc_stop(struct gc *g)
{
	if (!g)
		return;
	atomic_store(&g->stop, true);
	/* The thread may be about to sleep in store_next_event: keep waking
	 * it until it has left its loop. */
	while (!atomic_load(&g->exited)) {
		struct timespec d = { 0, 2000000 };

		store_wake_all(g->store);
		nanosleep(&d, NULL);
	}
	pthread_join(g->thread, NULL);
	graph_clear(g);
	hmap_release(&g->nodes);
	free(g->queue);
	free(g->later);
	free(g->terms);
	for (size_t i = 0; i < g->ncrds; i++) {
		free(g->crds[i].name);
		free(g->crds[i].key);
	}
	free(g->crds);
	for (size_t i = 0; i < g->nkeys; i++)
		free(g->keys[i]);
	free(g->keys);
	free(g);
}
