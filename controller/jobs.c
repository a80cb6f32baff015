/*
 * jobs: the batch/v1 Job reconciler (see jobs.h).
 *
 * DESIGN. Two caches, both keyed "ns/name":
 *   jobs  the decoded Jobs of the informer (struct job_entry);
 *   wls   what the integration must know of each Workload a batch/v1 Job
 *         controls and the manager's trimmed cache lacks: the owner's
 *         name and uid, the finalizers, deletion (struct wl_rec). The
 *         manager's observer fills it; the scheduling view (conditions,
 *         admission, pod sets) is read through manager_workload_peek.
 * Changes only mark entries dirty; a zero-delay timer reconciles the
 * dirty ones on the next loop turn, when the manager's cache reflects
 * the same events (the observer runs before the manager applies them).
 *
 * Each entry has at most one write in flight. After a write succeeds the
 * entry holds still until the object it was based on changes (the
 * informer brings the write's own effect), as the manager does with
 * sent_rv; after a failure it is reconciled again after retry_ms.
 *
 * The Job reconcile follows Kueue's ReconcileGenericJob, steps numbered
 * as there. JSON: this file holds json_t (outside STYLE P3(c)'s list)
 * for the same reason manager.c does: informer objects meet the codec
 * here and merge-patch bodies are assembled from them.
 */
#include "controller/jobs.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "base/jx.h"
#include "base/text.h"
#include "controller/events.h"
#include "controller/kube.h"
#include "controller/kube_watch.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/manager.h"
#include "model/codec.h"
#include "model/deadline.h"
#include "model/jobwl.h"
#include "model/selector.h"

#define COMPONENT "job"
#define EVENT_COMPONENT "batch/job-kueue-controller"
#define WL_VERSION "v1beta2"
#define COND_FINISHED "Finished"
#define COND_EVICTED "Evicted"

enum write_kind {
	W_NONE = 0,
	W_CREATE,     /* POST the Workload */
	W_START,      /* Job: unsuspend with the admission's flavors */
	W_SUSPEND,    /* Job: suspend + stopping annotation */
	W_STARTTIME,  /* Job /status: startTime null */
	W_RESTORE,    /* Job: restore the template, drop the annotation */
	W_FINISH,     /* Workload /status: Finished=True */
	W_CLEAR,      /* Workload /status: reservation cleared (eviction) */
	W_PODSREADY,  /* Workload /status: PodsReady follows the pods */
	W_QUEUE,      /* Workload: spec.queueName follows the Job */
	W_FINALIZER,  /* Workload: resource-in-use removed */
	W_DELETE,     /* Workload: orphan deleted */
	W_UPDATE,     /* Workload: pod sets follow a suspended Job */
	W_REPLACE,    /* Workload: not matching its Job, deleted */
	W_UNMANAGED,  /* Workload: of a Job no longer managed, deleted */
};

struct jobs;

/* One write slot, shared by both entry kinds. */
struct slot {
	struct jobs *js;          /* borrowed */
	char *key;                /* owned; the entry's key */
	bool is_wl;               /* which map key belongs to */
	struct kube_call *call;   /* in flight, or NULL */
	enum write_kind kind;
	char *hold_rv;            /* owned; a write based on this version
				     succeeded: act again once it moves */
	char *event_reason;       /* owned; posted when the write succeeds */
	char *event_msg;          /* owned */
	bool dirty;               /* queued in js->dirty */
	bool retry;               /* reconcile again at the retry timer */
};

struct job_entry {
	struct slot s;            /* s.key "ns/name" is the map key */
	struct job *j;            /* owned; the last good version */
	char *wl_name;            /* owned; job-<name>-<hash> */
	bool created;             /* our POST succeeded (or 409): wait for
				     the informer */
	char *bad_rv;             /* owned; version that failed to build */
	uint64_t seen;
	/* the last equivalence check that matched: the Job's generation
	 * and suspend, the Workload's uid, generation and admitted count
	 * (-1 none); the same again matches without building anything */
	bool m_valid;
	int64_t m_jgen, m_wgen;
	bool m_susp;
	int32_t m_adm;
	char *m_wuid;             /* owned */
};

struct wl_rec {
	struct slot s;            /* s.key "ns/name" */
	char *owner;              /* owned; controller Job's name */
	char *owner_uid;          /* owned */
	char *rv;                 /* owned */
	bool deleting;
	bool finished;
	char **finalizers;        /* owned copies */
	size_t nfinalizers;
};

/* A PriorityClass: what the Workload's priority needs of it. */
struct pc_entry {
	char *name;          /* owned; map key */
	int32_t value;
	bool global_default;
	uint64_t seen;
};

struct jobs {
	struct kube *k;           /* borrowed */
	struct loop *l;           /* borrowed */
	struct manager *m;        /* borrowed */
	struct jobs_opts o;       /* label keys copied below */
	char **label_keys;        /* owned */
	struct kube_watch *w;     /* owned */
	bool synced;
	struct kube_watch *pcw;   /* owned; scheduling.k8s.io/v1
				     priorityclasses */
	bool pc_synced;
	struct hmap pcs;          /* name -> struct pc_entry */
	uint64_t pc_gen;
	uint64_t gen;             /* list generation */
	struct hmap jobs, wls;
	char **dirty;             /* owned keys: "j:ns/name" or "w:ns/name" */
	size_t ndirty, cap_dirty;
	struct timer run;         /* reconcile the dirty entries */
	struct timer retry;       /* reconcile the failed ones again */
	bool has_retry;
	size_t inflight;
	struct event_recorder *ev; /* owned; Events on Jobs */
	struct jobs_stats stats;
	bool has_ns_sel;          /* o.ns_selector was given */
	struct label_selector ns_sel; /* owned copy of it */
	struct hmap ns_match;     /* namespace -> struct ns_entry */
	uint64_t ns_gen;          /* manager_nsview_gen ns_match reflects */
	bool ns_built;            /* ns_match was built at least once */
};

/* Whether a namespace matches managedJobsNamespaceSelector. */
struct ns_entry {
	char *name;               /* owned; map key */
	bool match;
};

/* ------------------------------------------------------------------ */
/* Small helpers */

static bool both_eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static void set_str(char **dst, const char *s)
{
	char *n = xstrdup_or_null(s);

	free(*dst);
	*dst = n;
}

static char *mk_key(const char *ns, const char *name)
{
	return xasprintf("%s/%s", ns ? ns : "", name ? name : "");
}

static void arm_run(struct jobs *js)
{
	if (!timers_is_armed(&js->run))
		loop_timer_arm(js->l, &js->run, 0);
}

static void mark(struct slot *s)
{
	struct jobs *js = s->js;

	if (s->dirty)
		return;
	s->dirty = true;
	if (js->ndirty == js->cap_dirty) {
		js->cap_dirty = js->cap_dirty ? 2 * js->cap_dirty : 16;
		js->dirty = xrealloc(js->dirty,
				     js->cap_dirty * sizeof(*js->dirty));
	}
	js->dirty[js->ndirty++] = xasprintf("%c:%s", s->is_wl ? 'w' : 'j',
					    s->key);
	arm_run(js);
}

/* Reconcile s again at the next retry tick (a failed write, a flavor
 * or priority class not there yet). */
static void want_retry(struct slot *s)
{
	s->retry = true;
	if (!timers_is_armed(&s->js->retry))
		loop_timer_arm(s->js->l, &s->js->retry, s->js->o.retry_ms);
}

static void mark_job(struct jobs *js, const char *key)
{
	struct job_entry *e = hmap_get(&js->jobs, key);

	if (e)
		mark(&e->s);
}

static void mark_wl(struct jobs *js, const char *key)
{
	struct wl_rec *r = hmap_get(&js->wls, key);

	if (r)
		mark(&r->s);
}

static void slot_release(struct slot *s)
{
	if (s->call) {
		kube_cancel(s->js->k, s->call);
		s->js->inflight--;
	}
	free(s->key);
	free(s->hold_rv);
	free(s->event_reason);
	free(s->event_msg);
}

/* The controller owner reference of meta, or NULL. */
static const struct owner_ref *controller_of(const struct object_meta *m)
{
	for (size_t i = 0; i < m->nowners; i++)
		if (m->owners[i].controller)
			return &m->owners[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Events (core/v1), best effort through the recorder (events.h) */

static void job_event(struct jobs *js, const struct job *j,
		      enum event_type type, const char *reason,
		      const char *msg)
{
	struct event_object obj = {
		.api_version = "batch/v1", .kind = "Job",
		.ns = j->meta.namespace, .name = j->meta.name,
		.uid = j->meta.uid,
		.resource_version = j->meta.resource_version,
	};

	event_record(js->ev, &obj, type, reason, msg);
	js->stats.events++;
}

/* ------------------------------------------------------------------ */
/* Writes */

static void write_done(void *ud, const struct kube_reply *r, json_t *body);

/*
 * Submits one write for slot s: verb on path with body (borrowed);
 * hold_rv is the version of the object the write was based on. An event
 * (reason, msg; may be NULL) is posted when it succeeds.
 */
static void submit(struct slot *s, enum write_kind kind, enum kube_verb verb,
		   const char *path, const json_t *body, const char *hold_rv,
		   const char *reason, const char *msg)
{
	struct kube_req req = { .verb = verb, .path = path, .body = body,
				.done = write_done, .ud = s };

	if (verb == KUBE_DELETE)
		req.propagation = "Background";
	s->kind = kind;
	set_str(&s->hold_rv, hold_rv);
	set_str(&s->event_reason, reason);
	set_str(&s->event_msg, msg);
	s->js->inflight++;
	s->call = kube_submit(s->js->k, &req);
}

static char *job_path(const struct job *j, const char *sub)
{
	struct kube_ref ref = { .group = "batch", .version = "v1",
				.resource = "jobs", .ns = j->meta.namespace,
				.name = j->meta.name, .subresource = sub };

	return kube_path(&ref);
}

static char *wl_path(const char *ns, const char *name, const char *sub)
{
	struct kube_ref ref = { .group = KUEUE_GROUP, .version = WL_VERSION,
				.resource = "workloads", .ns = ns,
				.name = name, .subresource = sub };

	return kube_path(&ref);
}

static const char *kind_word(enum write_kind k)
{
	static const char *const names[] = {
		[W_NONE] = "none", [W_CREATE] = "create workload",
		[W_START] = "start job", [W_SUSPEND] = "suspend job",
		[W_STARTTIME] = "reset job startTime",
		[W_RESTORE] = "restore job template",
		[W_FINISH] = "finish workload",
		[W_CLEAR] = "clear workload reservation",
		[W_PODSREADY] = "update workload PodsReady",
		[W_QUEUE] = "update workload queue",
		[W_FINALIZER] = "remove workload finalizer",
		[W_DELETE] = "delete workload",
		[W_UPDATE] = "update workload to match job",
		[W_REPLACE] = "delete workload not matching job",
		[W_UNMANAGED] = "delete workload of unmanaged job",
	};

	return names[k];
}

static void write_done(void *ud, const struct kube_reply *r, json_t *body)
{
	struct slot *s = ud;
	struct jobs *js = s->js;
	enum write_kind kind = s->kind;
	bool ok = r->outcome == KUBE_OK;
	const char *slash = strchr(s->key, '/');
	char *ns = xstrdup(s->key);

	ns[slash ? (size_t)(slash - s->key) : 0] = '\0';
	s->call = NULL;
	s->kind = W_NONE;
	js->inflight--;
	/* Effects already in place count as success. */
	if (!ok && r->outcome == KUBE_HTTP &&
	    ((kind == W_CREATE && r->code == 409) ||
	     ((kind == W_DELETE || kind == W_FINALIZER ||
	       kind == W_REPLACE || kind == W_UNMANAGED) && r->code == 404)))
		ok = true;
	if (ok) {
		switch (kind) {
		case W_CREATE:
			js->stats.created++;
			((struct job_entry *)(void *)s)->created = true;
			break;
		case W_START:
			js->stats.started++;
			break;
		case W_SUSPEND:
			js->stats.stopped++;
			break;
		case W_FINISH:
			js->stats.finished++;
			break;
		case W_FINALIZER:
			js->stats.finalizers++;
			break;
		case W_DELETE:
		case W_UNMANAGED:
			js->stats.deleted++;
			break;
		case W_UPDATE:
			js->stats.updated++;
			break;
		case W_REPLACE:
			js->stats.replaced++;
			break;
		default:
			break;
		}
		log_msg(LOG_INFO, COMPONENT, ns, slash ? slash + 1 : s->key,
			"%s", kind_word(kind));
		if (s->event_reason && !s->is_wl) {
			struct job_entry *e = (struct job_entry *)(void *)s;

			if (e->j)
				job_event(js, e->j, EVENT_NORMAL,
					  s->event_reason, s->event_msg);
		}
	} else {
		if (r->code == 409)
			js->stats.conflicts++;
		else
			js->stats.failures++;
		log_msg(r->code == 409 ? LOG_DEBUG : LOG_WARN, COMPONENT, ns,
			slash ? slash + 1 : s->key, "%s failed: %ld %s",
			kind_word(kind), r->code, r->message);
		FREE_AND_NULL(s->hold_rv);
		want_retry(s);
	}
	FREE_AND_NULL(s->event_reason);
	FREE_AND_NULL(s->event_msg);
	free(ns);
	json_decref(body);
	if (ok)
		mark(s);
}

/* ------------------------------------------------------------------ */
/* JSON pieces */

static const char *effect_name(enum taint_effect e)
{
	switch (e) {
	case EFFECT_NO_SCHEDULE:
		return "NoSchedule";
	case EFFECT_PREFER_NO_SCHEDULE:
		return "PreferNoSchedule";
	case EFFECT_NO_EXECUTE:
		return "NoExecute";
	default:
		return NULL;
	}
}

/* A corev1.Toleration as the API returns it (new). */
static json_t *toleration_json(const struct toleration *t)
{
	json_t *o = json_object();
	const char *eff = effect_name(t->effect);

	if (t->key && *t->key)
		json_object_set_new(o, "key", json_string(t->key));
	json_object_set_new(o, "operator", json_string(
		t->op == TOL_EXISTS ? "Exists" : "Equal"));
	if (t->value && *t->value)
		json_object_set_new(o, "value", json_string(t->value));
	if (eff)
		json_object_set_new(o, "effect", json_string(eff));
	if (t->has_seconds)
		json_object_set_new(o, "tolerationSeconds",
				    json_integer(t->seconds));
	return o;
}

/* Whether arr holds a toleration equal to t (operator defaulting to
 * Equal on both sides). */
static bool has_toleration(const json_t *arr, const json_t *t)
{
	static const char *const keys[] = { "key", "value", "effect",
					    "tolerationSeconds" };
	const json_t *x;
	size_t i;

	json_array_foreach(arr, i, x) {
		const char *xo = json_string_value(json_object_get(x, "operator"));
		const char *to = json_string_value(json_object_get(t, "operator"));
		bool same = !strcmp(xo && *xo ? xo : "Equal",
				    to && *to ? to : "Equal");

		for (size_t k = 0; same && k < 4; k++) {
			const json_t *a = json_object_get(x, keys[k]);
			const json_t *b = json_object_get(t, keys[k]);

			if (json_is_string(a) && !*json_string_value(a))
				a = NULL;
			if (json_is_string(b) && !*json_string_value(b))
				b = NULL;
			same = (!a && !b) || (a && b && json_equal(a, b));
		}
		if (same)
			return true;
	}
	return false;
}

/* The Job template's spec.tolerations (new array; empty when none). */
static json_t *template_tolerations(const struct job *j)
{
	json_t *raw = j->tmpl.raw ? json_loads(j->tmpl.raw, 0, NULL) : NULL;
	json_t *t = json_object_get(json_object_get(raw, "spec"),
				    "tolerations");
	json_t *res = json_is_array(t) ? json_deep_copy(t) : json_array();

	json_decref(raw);
	return res;
}

/* ------------------------------------------------------------------ */
/* Job actions */

/* Distinct flavors of one pod set assignment, each looked up. Returns
 * 0, or -1 + err naming a flavor not cached. */
static int admission_info(struct jobs *js, const struct job *j,
			  const struct pod_set_assignment *psa,
			  json_t *node_sel, json_t *tols, struct err *err,
			  bool *permanent)
{
	for (size_t i = 0; i < psa->flavors.n; i++) {
		const char *fname = psa->flavors.v[i].value;
		const struct resource_flavor *rf;
		bool dup = false;

		for (size_t k = 0; k < i; k++)
			dup |= !strcmp(psa->flavors.v[k].value, fname);
		if (dup)
			continue;
		rf = manager_flavor_peek(js->m, fname);
		if (!rf)
			return err_set(err, "ResourceFlavor \"%s\" not found",
				       fname);
		for (size_t n = 0; n < rf->node_labels.n; n++) {
			const struct smap_kv *kv = &rf->node_labels.v[n];
			const char *cur = smap_get(&j->tmpl.node_selector,
						   kv->key);
			const json_t *set = json_object_get(node_sel, kv->key);

			if ((cur && strcmp(cur, kv->value)) ||
			    (set && strcmp(json_string_value(set), kv->value))) {
				*permanent = true;
				return err_set(err, "conflict for labels: "
					       "conflict for key=%s, value1=%s, "
					       "value2=%s", kv->key,
					       cur ? cur : json_string_value(set),
					       kv->value);
			}
			json_object_set_new(node_sel, kv->key,
					    json_string(kv->value));
		}
		for (size_t n = 0; n < rf->ntols; n++) {
			json_t *t = toleration_json(&rf->tols[n]);

			if (!has_toleration(tols, t))
				json_array_append(tols, t);
			json_decref(t);
		}
	}
	return 0;
}

static void finish_wl(struct job_entry *e, const struct workload *wl,
		      const char *reason, const char *msg);

/* 7. The Workload is admitted and the Job suspended: run it. */
static void start_job(struct job_entry *e, const struct workload *wl)
{
	struct jobs *js = e->s.js;
	const struct job *j = e->j;
	const struct pod_set_assignment *psa = NULL;
	json_t *node_sel = json_object(), *tols = template_tolerations(j);
	json_t *p = NULL;
	struct err err = { "" };
	bool permanent = false;
	char *path = NULL, *msg = NULL;

	for (size_t i = 0; i < wl->admission.npsa; i++)
		if (both_eq(wl->admission.psa[i].name, DEFAULT_PODSET_NAME))
			psa = &wl->admission.psa[i];
	if (!psa && wl->admission.npsa)
		psa = &wl->admission.psa[0];
	if (!psa) {
		log_msg(LOG_WARN, COMPONENT, j->meta.namespace, j->meta.name,
			"admission of %s has no pod set assignment",
			wl->meta.name);
		goto out;
	}
	if (admission_info(js, j, psa, node_sel, tols, &err,
			   &permanent) < 0) {
		log_msg(LOG_WARN, COMPONENT, j->meta.namespace, j->meta.name,
			"cannot start: %s", err.msg);
		if (permanent)
			finish_wl(e, wl, "FailedToStart", err.msg);
		else
			want_retry(&e->s);
		goto out;
	}
	p = json_pack("{s:{s:s}, s:{s:b, s:{s:{s:{s:s}}, s:{}}}}",
		      "metadata", "resourceVersion", j->meta.resource_version,
		      "spec", "suspend", 0, "template", "metadata", "labels",
		      LABEL_PODSET, psa->name, "spec");
	{
		json_t *tspec = json_object_get(json_object_get(
			json_object_get(p, "spec"), "template"), "spec");

		if (json_object_size(node_sel))
			json_object_set(tspec, "nodeSelector", node_sel);
		if (json_array_size(tols))
			json_object_set(tspec, "tolerations", tols);
	}
	if (smap_get(&j->meta.annotations, ANNOT_MIN_PARALLELISM) &&
	    !js->o.no_partial_admission) {
		int32_t n = psa->has_count ? psa->count :
			(wl->npod_sets ? wl->pod_sets[0].count : 1);
		const char *eq = smap_get(&j->meta.annotations,
					  ANNOT_COMPLETIONS_EQUAL_PARALLELISM);
		json_t *spec = json_object_get(p, "spec");

		json_object_set_new(spec, "parallelism", json_integer(n));
		if (eq && !strcmp(eq, "true"))
			json_object_set_new(spec, "completions",
					    json_integer(n));
	}
	path = job_path(j, NULL);
	msg = xasprintf("Admitted by clusterQueue %s",
			wl->admission.cluster_queue);
	submit(&e->s, W_START, KUBE_PATCH_MERGE, path, p,
	       j->meta.resource_version, "Started", msg);
out:
	free(path);
	free(msg);
	json_decref(p);
	json_decref(node_sel);
	json_decref(tols);
}

/* Step 1 of Kueue's stop: suspend, marking the Job as stopping. */
static void suspend_job(struct job_entry *e, const char *msg)
{
	const struct job *j = e->j;
	char *path = job_path(j, NULL);
	json_t *p = json_pack("{s:{s:s, s:{s:s}}, s:{s:b}}", "metadata",
			      "resourceVersion", j->meta.resource_version,
			      "annotations", ANNOT_STOPPING, "true", "spec",
			      "suspend", 1);

	submit(&e->s, W_SUSPEND, KUBE_PATCH_MERGE, path, p,
	       j->meta.resource_version, "Stopped", msg);
	free(path);
	json_decref(p);
}

/* Steps 2 and 3 of the stop, once suspended: clear status.startTime so
 * the template may change, then restore it from the Workload's pod set
 * (wl may be NULL: only the annotation goes). */
static void finish_stop(struct job_entry *e, const struct workload *wl)
{
	struct jobs *js = e->s.js;
	const struct job *j = e->j;
	char *path;
	json_t *p, *spec, *tspec;

	if (j->start_ms) {
		path = job_path(j, "status");
		p = json_pack("{s:{s:s}, s:{s:n}}", "metadata",
			      "resourceVersion", j->meta.resource_version,
			      "status", "startTime");
		submit(&e->s, W_STARTTIME, KUBE_PATCH_MERGE, path, p,
		       j->meta.resource_version, NULL, NULL);
		free(path);
		json_decref(p);
		return;
	}
	p = json_pack("{s:{s:s, s:{s:n}}, s:{}}", "metadata",
		      "resourceVersion", j->meta.resource_version,
		      "annotations", ANNOT_STOPPING, "spec");
	spec = json_object_get(p, "spec");
	if (wl && wl->npod_sets) {
		const struct pod_set *ps = &wl->pod_sets[0];
		json_t *ns = json_object(), *tols = json_array();

		/* nodeSelector: back to the pod set's, keys added since
		 * removed (a merge patch merges maps) */
		for (size_t i = 0; i < j->tmpl.node_selector.n; i++) {
			const char *k = j->tmpl.node_selector.v[i].key;

			if (!smap_has(&ps->tmpl.node_selector, k))
				json_object_set_new(ns, k, json_null());
		}
		for (size_t i = 0; i < ps->tmpl.node_selector.n; i++)
			json_object_set_new(ns, ps->tmpl.node_selector.v[i].key,
					    json_string(ps->tmpl.node_selector
							.v[i].value));
		for (size_t i = 0; i < ps->tmpl.ntols; i++)
			json_array_append_new(tols,
					      toleration_json(&ps->tmpl.tols[i]));
		tspec = json_object();
		if (json_object_size(ns))
			json_object_set(tspec, "nodeSelector", ns);
		json_object_set(tspec, "tolerations",
				json_array_size(tols) ? tols : json_null());
		json_object_set_new(spec, "template", json_pack(
			"{s:{s:{s:n}}, s:o}", "metadata", "labels",
			LABEL_PODSET, "spec", tspec));
		if (smap_get(&j->meta.annotations, ANNOT_MIN_PARALLELISM) &&
		    !js->o.no_partial_admission)
			json_object_set_new(spec, "parallelism",
					    json_integer(ps->count));
		json_decref(ns);
		json_decref(tols);
	}
	path = job_path(j, NULL);
	submit(&e->s, W_RESTORE, KUBE_PATCH_MERGE, path, p,
	       j->meta.resource_version, NULL, NULL);
	free(path);
	json_decref(p);
}

/* Writes conditions (and admission when clear, and the accumulated
 * admitted time when it moved) of a copy of wl. */
static json_t *status_patch(const struct workload *wl,
			    const struct workload *changed, bool clear)
{
	json_t *st = codec_encode_workload_status(changed, API_V1BETA2);
	json_t *p = json_pack("{s:{s:s}, s:{s:O}}", "metadata",
			      "resourceVersion", wl->meta.resource_version,
			      "status", "conditions",
			      json_object_get(st, "conditions"));
	const char *acc = "accumulatedPastExecutionTimeSeconds";

	if (clear)
		json_object_set_new(json_object_get(p, "status"), "admission",
				    json_null());
	if (changed->has_accumulated &&
	    (!wl->has_accumulated ||
	     wl->accumulated_seconds != changed->accumulated_seconds) &&
	    json_object_get(st, acc))
		json_object_set(json_object_get(p, "status"), acc,
				json_object_get(st, acc));
	json_decref(st);
	return p;
}

/* 2. Finished=True on the Workload. */
static void finish_wl(struct job_entry *e, const struct workload *wl,
		      const char *reason, const char *msg)
{
	struct jobs *js = e->s.js;
	struct workload tmp = { 0 };
	char *path, *ev;
	json_t *p;

	workload_copy(&tmp, wl);
	conditions_set(&tmp.conds, COND_FINISHED, COND_TRUE, reason,
		       msg ? msg : "", wl->meta.generation,
		       loop_wall_ms(js->l));
	p = status_patch(wl, &tmp, false);
	path = wl_path(wl->meta.namespace, wl->meta.name, "status");
	ev = xasprintf("Workload '%s/%s' is declared finished",
		       wl->meta.namespace, wl->meta.name);
	submit(&e->s, W_FINISH, KUBE_PATCH_MERGE, path, p,
	       wl->meta.resource_version, "FinishedWorkload", ev);
	free(ev);
	free(path);
	json_decref(p);
	workload_release(&tmp);
}

/* 6. After an eviction, once the Job runs no pod: the reservation goes
 * (QuotaReserved=False Pending, Admitted=False, Requeued). */
static void clear_reservation(struct job_entry *e, const struct workload *wl,
			      const struct condition *ev)
{
	struct jobs *js = e->s.js;
	struct workload tmp = { 0 };
	int64_t now = loop_wall_ms(js->l);
	bool requeue = both_eq(ev->reason, "Preempted") ||
		       both_eq(ev->reason, "NodeFailures");
	char *path;
	json_t *p;

	workload_copy(&tmp, wl);
	conditions_set(&tmp.conds, "Requeued",
		       requeue ? COND_TRUE : COND_FALSE, ev->reason,
		       ev->message, wl->meta.generation, now);
	conditions_set(&tmp.conds, "QuotaReserved", COND_FALSE, "Pending",
		       ev->message, wl->meta.generation, now);
	/* Admitted True -> False: the admitted seconds accumulate (the
	 * maximum execution time counts across evictions) */
	deadline_admitted_off(&tmp, now);
	/* no longer admitted: PodsReady is WaitForStart again (Kueue's
	 * next reconcile would write it; it comes with this write) */
	if (js->o.wait_for_pods_ready &&
	    conditions_find(&tmp.conds, COND_PODS_READY))
		conditions_set(&tmp.conds, COND_PODS_READY, COND_FALSE,
			       "WaitForStart",
			       "Not all pods are ready or succeeded",
			       wl->meta.generation, now);
	if (conditions_find(&tmp.conds, "Admitted"))
		conditions_set(&tmp.conds, "Admitted", COND_FALSE,
			       "NoReservation",
			       "The workload has no reservation",
			       wl->meta.generation, now);
	p = status_patch(wl, &tmp, true);
	path = wl_path(wl->meta.namespace, wl->meta.name, "status");
	submit(&e->s, W_CLEAR, KUBE_PATCH_MERGE, path, p,
	       wl->meta.resource_version, NULL, NULL);
	free(path);
	json_decref(p);
	workload_release(&tmp);
}

/*
 * 5. waitForPodsReady: the PodsReady condition follows the Job's pods
 * (ready + succeeded >= the pod count; deadline.h has Kueue's rule).
 * Returns true when a write went out. Two deliberate differences from
 * Kueue, each saving a write that says nothing new: a workload that was
 * never admitted gets its first PodsReady (False WaitForStart) with its
 * admission write rather than at creation, and an evicted workload's
 * Job being stopped is not marked WaitForRecovery on the way out (its
 * reservation clear resets the condition to WaitForStart).
 */
static bool sync_pods_ready(struct job_entry *e, const struct workload *wl)
{
	struct jobs *js = e->s.js;
	const struct job *j = e->j;
	const struct condition *c = conditions_find(&wl->conds,
						    COND_PODS_READY);
	const struct condition *ev = conditions_find(&wl->conds,
						     COND_EVICTED);
	struct workload tmp = { 0 };
	const char *reason, *msg;
	enum cond_status st;
	char *path;
	json_t *p;

	if (!js->o.wait_for_pods_ready || (ev && ev->status == COND_TRUE))
		return false;
	/* Kueue's Job.PodsReady: ready + succeeded, the succeeded pods not
	 * counted yet included (uncountedTerminatedPods: the Job controller
	 * drops them from ready before it adds them to succeeded) */
	st = deadline_pods_ready_cond(wl,
				      (int64_t)j->ready + j->succeeded +
						      j->uncounted_succeeded >=
					      jobwl_pod_count(j),
				      &reason, &msg);
	if (c ? c->status == st && both_eq(c->reason, reason)
	      : !workload_is_admitted(wl))
		return false;
	conditions_copy(&tmp.conds, &wl->conds);
	conditions_set(&tmp.conds, COND_PODS_READY, st, reason, msg,
		       wl->meta.generation, loop_wall_ms(js->l));
	p = status_patch(wl, &tmp, false);
	path = wl_path(wl->meta.namespace, wl->meta.name, "status");
	submit(&e->s, W_PODSREADY, KUBE_PATCH_MERGE, path, p,
	       wl->meta.resource_version, NULL, NULL);
	free(path);
	json_decref(p);
	workload_release(&tmp);
	return true;
}

/* WorkloadPriorityClasses come from the manager's cache. */
static bool wpc_lookup(void *ctx, const char *name, int32_t *value)
{
	struct jobs *js = ctx;

	return manager_wpc_value(js->m, name, value);
}

static bool pc_lookup(void *ctx, const char *name, int32_t *value)
{
	struct jobs *js = ctx;
	const struct pc_entry *p = hmap_get(&js->pcs, name);

	if (!p)
		return false;
	*value = p->value;
	return true;
}

/* The globalDefault PriorityClass; the lowest value when several. */
static bool pc_global_default(void *ctx, const char **name, int32_t *value)
{
	struct jobs *js = ctx;
	const struct pc_entry *best = NULL;
	size_t pos = 0;
	void *v;

	while ((v = hmap_next(&js->pcs, &pos, NULL))) {
		const struct pc_entry *p = v;

		if (p->global_default && (!best || p->value < best->value ||
					  (p->value == best->value &&
					   strcmp(p->name, best->name) < 0)))
			best = p;
	}
	if (!best)
		return false;
	*name = best->name;
	*value = best->value;
	return true;
}

/* The Workload the Job asks for now, into wl (released first). Fails
 * (logged once per Job version, retried) when it cannot be built. */
static int build_wl(struct job_entry *e, struct workload *wl)
{
	struct jobs *js = e->s.js;
	const struct job *j = e->j;
	struct priority_lookup prio = { 0 };
	struct jobwl_opts wo = { .prio = &prio };
	struct err err = { "" };

	prio.wpc = wpc_lookup;
	prio.pc = pc_lookup;
	prio.global_default = pc_global_default;
	prio.ctx = js;
	wo.label_keys_to_copy = (const char *const *)js->label_keys;
	wo.nlabel_keys_to_copy = js->o.nlabel_keys_to_copy;
	if (jobwl_build(j, &wo, wl, &err) < 0) {
		if (!both_eq(e->bad_rv, j->meta.resource_version))
			log_msg(LOG_WARN, COMPONENT, j->meta.namespace,
				j->meta.name, "cannot build workload: %s",
				err.msg);
		set_str(&e->bad_rv, j->meta.resource_version);
		want_retry(&e->s);
		workload_release(wl);
		return -1;
	}
	if (js->o.no_partial_admission && wl->npod_sets)
		wl->pod_sets[0].has_min_count = false;
	return 0;
}

static void create_wl(struct job_entry *e)
{
	const struct job *j = e->j;
	struct workload wl = { 0 };
	char *path, *msg;
	json_t *body;

	if (build_wl(e, &wl) < 0)
		return;
	body = codec_encode_workload(&wl, API_V1BETA2);
	json_object_del(body, "status");
	path = wl_path(j->meta.namespace, NULL, NULL);
	msg = xasprintf("Created Workload: %s/%s", j->meta.namespace,
			wl.meta.name);
	/* no hold: the created flag waits for the Workload instead */
	submit(&e->s, W_CREATE, KUBE_POST, path, body, NULL,
	       "CreatedWorkload", msg);
	free(msg);
	free(path);
	json_decref(body);
	workload_release(&wl);
}

/*
 * Kueue's equivalentToWorkload: whether wl still describes the Job.
 * built receives the Workload the Job asks for now (the caller releases
 * it). A running Job is compared at its admitted count and without the
 * scheduling directives its flavors added (kueue-api.md §12.6).
 * Returns -1 when the Job's Workload cannot be built (retried).
 */
static int wl_compare(struct job_entry *e, const struct workload *wl,
		      struct workload *built);

static int wl_matches(struct job_entry *e, const struct workload *wl,
		      struct workload *built)
{
	const struct job *j = e->j;
	int32_t adm_key = -1;
	int r;

	if (wl->has_admission && wl->admission.npsa)
		adm_key = wl->admission.psa[0].has_count ?
			  wl->admission.psa[0].count : -2;
	if (e->m_valid && e->m_jgen == j->meta.generation &&
	    e->m_susp == j->suspend && e->m_wgen == wl->meta.generation &&
	    e->m_adm == adm_key && text_same(e->m_wuid, wl->meta.uid))
		return 1;
	r = wl_compare(e, wl, built);
	e->m_valid = r == 1 && j->meta.generation && wl->meta.generation;
	if (e->m_valid) {
		e->m_jgen = j->meta.generation;
		e->m_susp = j->suspend;
		e->m_wgen = wl->meta.generation;
		e->m_adm = adm_key;
		set_str(&e->m_wuid, wl->meta.uid);
	}
	return r;
}

static int wl_compare(struct job_entry *e, const struct workload *wl,
		      struct workload *built)
{
	const struct job *j = e->j;
	int32_t count;
	bool running = !j->suspend;

	if (build_wl(e, built) < 0)
		return -1;
	if (wl->npod_sets != 1 || built->npod_sets != 1)
		return wl->npod_sets == built->npod_sets;
	count = built->pod_sets[0].count;
	if (wl->has_admission && wl->admission.npsa &&
	    wl->admission.psa[0].has_count) {
		int32_t adm = wl->admission.psa[0].count;

		if (running) {
			/* the Job runs the admitted count (partial) */
			if (jobwl_pod_count(j) != adm)
				return 0;
			count = wl->pod_sets[0].count;
		} else if (adm != count &&
			   !(built->pod_sets[0].has_min_count &&
			     adm >= built->pod_sets[0].min_count &&
			     adm < count)) {
			/* an admission that would not run the Job as it
			 * is (decided on another spec) */
			return 0;
		}
	}
	return jobwl_pod_set_matches(&built->pod_sets[0], &wl->pod_sets[0],
				     count, !running);
}

/*
 * The Workload no longer describes the suspended Job: without a
 * reservation its pod sets follow the Job (the Workload keeps its place
 * in the queue); with one it is deleted once the Job runs no pod, and
 * step 3 creates the right one (Kueue's "Deleted not matching
 * Workload"). The quota goes with the deletion, never before the pods.
 */
static void match_wl(struct job_entry *e, const struct workload *wl,
		     const struct workload *built)
{
	const struct job *j = e->j;
	char *path, *msg;

	if (!workload_has_quota_reservation(wl)) {
		json_t *enc = codec_encode_workload(built, API_V1BETA2);
		json_t *p = json_pack("{s:{s:s}, s:{s:O}}", "metadata",
				      "resourceVersion",
				      wl->meta.resource_version, "spec",
				      "podSets",
				      json_object_get(json_object_get(enc,
								      "spec"),
						      "podSets"));

		path = wl_path(wl->meta.namespace, wl->meta.name, NULL);
		msg = xasprintf("Updated not matching Workload for suspended "
				"job: %s/%s", wl->meta.namespace,
				wl->meta.name);
		submit(&e->s, W_UPDATE, KUBE_PATCH_MERGE, path, p,
		       wl->meta.resource_version, "UpdatedWorkload", msg);
		json_decref(p);
		json_decref(enc);
	} else {
		if (j->active > 0)
			return; /* its pods are still going */
		path = wl_path(wl->meta.namespace, wl->meta.name, NULL);
		msg = xasprintf("Deleted not matching Workload: %s/%s",
				wl->meta.namespace, wl->meta.name);
		submit(&e->s, W_REPLACE, KUBE_DELETE, path, NULL,
		       wl->meta.resource_version, "DeletedWorkload", msg);
	}
	free(path);
	free(msg);
}

/* Owner kinds of Kueue-managed parents: their Jobs are children. */
static bool managed_parent(const struct owner_ref *o)
{
	static const char *const kinds[] = {
		"JobSet", "MPIJob", "RayJob", "RayCluster", "PyTorchJob",
		"TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "TrainJob",
		"AppWrapper", "LeaderWorkerSet",
	};

	for (size_t i = 0; o && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (both_eq(o->kind, kinds[i]))
			return true;
	return false;
}

static void ns_match_clear(struct jobs *js)
{
	size_t pos = 0;
	struct ns_entry *n;

	while ((n = hmap_next(&js->ns_match, &pos, NULL))) {
		hmap_del(&js->ns_match, n->name);
		free(n->name);
		free(n);
	}
}

static void ns_match_add(void *ud, const char *ns, const struct smap *labels)
{
	struct jobs *js = ud;
	struct ns_entry *n = xcalloc(1, sizeof(*n));
	struct smap empty = SMAP_INIT;

	n->name = xstrdup(ns);
	n->match = label_selector_matches(&js->ns_sel,
					  labels ? labels : &empty);
	free(hmap_put(&js->ns_match, n->name, n));
}

enum ns_state { NS_UNKNOWN, NS_UNMANAGED, NS_MANAGED };

/* managedJobsNamespaceSelector on namespace ns, from the manager's
 * namespace cache (rebuilt here only when that cache moved). */
static enum ns_state ns_state(struct jobs *js, const char *ns)
{
	const struct ns_entry *n;
	uint64_t gen;

	if (!js->has_ns_sel)
		return NS_MANAGED;
	gen = manager_nsview_gen(js->m);
	if (!js->ns_built || gen != js->ns_gen) {
		ns_match_clear(js);
		manager_foreach_namespace(js->m, ns_match_add, js);
		js->ns_gen = gen;
		js->ns_built = true;
	}
	n = ns ? hmap_get(&js->ns_match, ns) : NULL;
	if (!n)
		return NS_UNKNOWN;
	return n->match ? NS_MANAGED : NS_UNMANAGED;
}

/*
 * Kueue's ReconcileGenericJob, before step 1: is this Job the
 * integration's? A child of another managed job kind never is; with
 * ns_selector_always the namespace must match first; then a queue name
 * makes it managed, and without one manageJobsWithoutQueueName needs a
 * matching namespace. A namespace the cache does not hold yet (a Job
 * seen before its namespace) is asked again at the retry tick.
 */
static bool is_managed(struct jobs *js, struct job_entry *e)
{
	const struct job *j = e->j;
	const char *q = smap_get(&j->meta.labels, LABEL_QUEUE_NAME);
	enum ns_state st;

	if (managed_parent(controller_of(&j->meta)))
		return false;
	if (!(q && *q) && !js->o.manage_without_queue_name)
		return false;
	if (!js->o.ns_selector_always && q && *q)
		return true;
	st = ns_state(js, j->meta.namespace);
	if (st == NS_UNKNOWN)
		want_retry(&e->s);
	return st == NS_MANAGED;
}

/* The Job's Complete or Failed condition when True, or NULL. */
static const struct condition *job_finished(const struct job *j)
{
	for (size_t i = 0; i < j->conds.n; i++) {
		const struct condition *c = &j->conds.v[i];

		if (c->status == COND_TRUE && (both_eq(c->type, "Complete") ||
					       both_eq(c->type, "Failed")))
			return c;
	}
	return NULL;
}

/* Whether the held version still stands: act only once it moved. */
static bool held(struct slot *s, const char *rv)
{
	if (!s->hold_rv)
		return false;
	if (both_eq(s->hold_rv, rv))
		return true;
	FREE_AND_NULL(s->hold_rv);
	return false;
}

static void mark_owned(struct jobs *js, const struct job *j);

/*
 * A Job the integration no longer manages (its queue label removed while
 * suspended: the webhook refuses that on a running Job) keeps no
 * Workload: one left queued would reserve quota for a Job nothing
 * starts. Deleted, as Kueue's reconciler does, once no pod runs.
 */
static void drop_unmanaged(struct jobs *js, struct job_entry *e)
{
	const struct job *j = e->j;
	const char *q = smap_get(&j->meta.labels, LABEL_QUEUE_NAME);
	const struct workload *wl;
	const struct wl_rec *rec;
	char *wk, *path;

	if ((q && *q) || js->o.manage_without_queue_name ||
	    !j->suspend || j->active > 0 || j->meta.deletion_ms ||
	    !e->wl_name || managed_parent(controller_of(&j->meta)))
		return;
	wl = manager_workload_peek(js->m, j->meta.namespace, e->wl_name);
	wk = mk_key(j->meta.namespace, e->wl_name);
	rec = hmap_get(&js->wls, wk);
	free(wk);
	if (!wl || !rec || rec->deleting ||
	    !both_eq(rec->owner_uid, j->meta.uid) ||
	    workload_is_finished(wl) || held(&e->s, wl->meta.resource_version))
		return;
	path = wl_path(wl->meta.namespace, wl->meta.name, NULL);
	submit(&e->s, W_UNMANAGED, KUBE_DELETE, path, NULL,
	       wl->meta.resource_version, NULL, NULL);
	free(path);
}

static void reconcile_job(struct jobs *js, struct job_entry *e)
{
	const struct job *j = e->j;
	const struct workload *wl;
	const struct wl_rec *rec;
	const struct condition *fin, *ev;
	char *wk;

	if (e->s.call)
		return;
	if (!is_managed(js, e)) {
		drop_unmanaged(js, e);
		return;
	}
	if (j->meta.deletion_ms) {
		mark_owned(js, j);
		return;
	}
	wl = manager_workload_peek(js->m, j->meta.namespace, e->wl_name);
	wk = mk_key(j->meta.namespace, e->wl_name);
	rec = hmap_get(&js->wls, wk);
	free(wk);
	/* a Workload of another Job of the same name (an older uid) */
	if (wl && rec && !both_eq(rec->owner_uid, j->meta.uid))
		wl = NULL;
	if (wl)
		e->created = false;
	/* The hold: a write based on this Job (or Workload) version
	 * succeeded; the informers have not brought its effect yet. */
	if (e->s.hold_rv && (both_eq(e->s.hold_rv, j->meta.resource_version) ||
			     (wl && both_eq(e->s.hold_rv,
					    wl->meta.resource_version))))
		return;
	FREE_AND_NULL(e->s.hold_rv);

	/* 1. Finished Workload: nothing left for the Job (the finalizer
	 *    goes in reconcile_wl). */
	if (wl && workload_is_finished(wl))
		return;
	/* A stop in progress (suspended with the stopping annotation):
	 * reset startTime, restore the template. */
	if (j->suspend && smap_has(&j->meta.annotations, ANNOT_STOPPING)) {
		finish_stop(e, wl);
		return;
	}
	/* 1.1 Workload being deleted: stop the Job. */
	if (wl && rec && rec->deleting) {
		if (!j->suspend)
			suspend_job(e, "Workload is deleted");
		return;
	}
	/* 2. Job finished: the Workload follows. */
	fin = job_finished(j);
	if (fin) {
		if (wl)
			finish_wl(e, wl, both_eq(fin->type, "Failed") ?
				  "Failed" : "Succeeded", fin->message);
		return;
	}
	/* 3. No Workload: stop a running Job, wait for its pods to go,
	 *    then create one. */
	if (!wl) {
		if (!j->suspend) {
			suspend_job(e, "Missing Workload; unable to restore "
				       "pod templates");
			return;
		}
		if (j->active > 0 || e->created)
			return;
		create_wl(e);
		return;
	}
	/* 4. Equivalence: the Workload must still describe the Job. A
	 *    running Job that outgrew it is stopped ("No matching
	 *    Workload"); a suspended one gets it updated or replaced. */
	if (!workload_is_finished(wl)) {
		struct workload built = { 0 };
		int match = wl_matches(e, wl, &built);

		if (match == 0 && !j->suspend)
			suspend_job(e, "No matching Workload");
		else if (match == 0)
			match_wl(e, wl, &built);
		workload_release(&built);
		if (match <= 0)
			return;
	}
	/* 5. waitForPodsReady. */
	if (sync_pods_ready(e, wl))
		return;
	/* 6. Eviction. */
	ev = conditions_find(&wl->conds, COND_EVICTED);
	if (ev && ev->status == COND_TRUE) {
		if (!j->suspend)
			suspend_job(e, ev->message);
		else if (workload_has_quota_reservation(wl) && !j->active)
			clear_reservation(e, wl, ev);
		return;
	}
	/* 7. Suspended: start once admitted; follow queue changes. */
	if (j->suspend) {
		const char *q = smap_get(&j->meta.labels, LABEL_QUEUE_NAME);

		if (workload_is_admitted(wl) && wl->has_admission) {
			start_job(e, wl);
		} else if (q && *q && !both_eq(q, wl->queue_name) &&
			   !workload_has_quota_reservation(wl)) {
			char *path = wl_path(wl->meta.namespace, wl->meta.name,
					     NULL);
			json_t *p = json_pack("{s:{s:s}, s:{s:s}}", "metadata",
					      "resourceVersion",
					      wl->meta.resource_version,
					      "spec", "queueName", q);

			submit(&e->s, W_QUEUE, KUBE_PATCH_MERGE, path, p,
			       wl->meta.resource_version, NULL, NULL);
			free(path);
			json_decref(p);
		}
		return;
	}
	/* 8. Running without admission: stop it. */
	if (!workload_is_admitted(wl))
		suspend_job(e, "Not admitted by cluster queue");
}

/* ------------------------------------------------------------------ */
/* Workload records: finalizers and orphans */

static void reconcile_wl(struct jobs *js, struct wl_rec *r)
{
	const char *slash = strchr(r->s.key, '/');
	char *ns, *jk, *path;
	const struct job_entry *owner;
	bool orphan, has_fin = false;

	if (r->s.call || !js->synced || !manager_active(js->m))
		return;
	if (held(&r->s, r->rv))
		return;
	ns = xstrdup(r->s.key);
	ns[slash ? (size_t)(slash - r->s.key) : 0] = '\0';
	jk = mk_key(ns, r->owner);
	owner = r->owner ? hmap_get(&js->jobs, jk) : NULL;
	/* Kueue drops the finalizer once the Job is gone or going; the
	 * Workload itself is deleted too (not only left to the garbage
	 * collector), so an orphan-propagation delete leaks nothing. */
	orphan = !owner || !owner->j || owner->j->meta.deletion_ms ||
		 !both_eq(owner->j->meta.uid, r->owner_uid);
	for (size_t i = 0; i < r->nfinalizers; i++)
		has_fin |= !strcmp(r->finalizers[i], FINALIZER_RESOURCE_IN_USE);
	if (has_fin && (orphan || r->finished || r->deleting)) {
		json_t *fins = json_array(), *p;

		for (size_t i = 0; i < r->nfinalizers; i++)
			if (strcmp(r->finalizers[i], FINALIZER_RESOURCE_IN_USE))
				json_array_append_new(
					fins, json_string(r->finalizers[i]));
		p = json_pack("{s:{s:s, s:o}}", "metadata", "resourceVersion",
			      r->rv, "finalizers",
			      json_array_size(fins) ? fins : json_null());
		if (!json_array_size(fins))
			json_decref(fins);
		path = wl_path(ns, slash ? slash + 1 : r->s.key, NULL);
		submit(&r->s, W_FINALIZER, KUBE_PATCH_MERGE, path, p, r->rv,
		       NULL, NULL);
		free(path);
		json_decref(p);
	} else if (orphan && !r->deleting) {
		path = wl_path(ns, slash ? slash + 1 : r->s.key, NULL);
		submit(&r->s, W_DELETE, KUBE_DELETE, path, NULL, r->rv, NULL,
		       NULL);
		free(path);
	}
	free(jk);
	free(ns);
}

/* ------------------------------------------------------------------ */
/* The dirty queue */

static void run_dirty(void *ud, int64_t now_ms)
{
	struct jobs *js = ud;
	char **v = js->dirty;
	size_t n = js->ndirty;

	(void)now_ms;
	if (!js->synced || !js->pc_synced || !manager_active(js->m)) {
		/* not yet: look again soon (the manager has no sync hook) */
		loop_timer_arm(js->l, &js->run, 50);
		return;
	}
	js->dirty = NULL;
	js->ndirty = js->cap_dirty = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i][0] == 'j') {
			struct job_entry *e = hmap_get(&js->jobs, v[i] + 2);

			if (e) {
				e->s.dirty = false;
				if (e->j)
					reconcile_job(js, e);
			}
		} else {
			struct wl_rec *r = hmap_get(&js->wls, v[i] + 2);

			if (r) {
				r->s.dirty = false;
				reconcile_wl(js, r);
			}
		}
		free(v[i]);
	}
	free(v);
}

static void run_retry(void *ud, int64_t now_ms)
{
	struct jobs *js = ud;
	size_t pos = 0;
	void *v;

	(void)now_ms;
	while ((v = hmap_next(&js->jobs, &pos, NULL))) {
		struct job_entry *e = v;

		if (e->s.retry) {
			e->s.retry = false;
			mark(&e->s);
		}
	}
	pos = 0;
	while ((v = hmap_next(&js->wls, &pos, NULL))) {
		struct wl_rec *r = v;

		if (r->s.retry) {
			r->s.retry = false;
			mark(&r->s);
		}
	}
}

/* ------------------------------------------------------------------ */
/* The Workload observer (called from the manager's informer) */

static void wl_rec_free(struct wl_rec *r)
{
	slot_release(&r->s);
	free(r->owner);
	free(r->owner_uid);
	free(r->rv);
	for (size_t i = 0; i < r->nfinalizers; i++)
		free(r->finalizers[i]);
	free(r->finalizers);
	free(r);
}

static void on_workload(void *ud, enum manager_wl_event ev,
			const struct workload *w)
{
	struct jobs *js = ud;
	const struct owner_ref *o = controller_of(&w->meta);
	char *key = mk_key(w->meta.namespace, w->meta.name);
	struct wl_rec *r = hmap_get(&js->wls, key);
	char *jk = NULL;

	if (ev == MANAGER_WL_DELETE) {
		if (r) {
			if (r->owner)
				jk = mk_key(w->meta.namespace, r->owner);
			hmap_del(&js->wls, key);
			wl_rec_free(r);
		}
		goto out;
	}
	if (o && (!both_eq(o->kind, "Job") ||
		  !both_eq(o->api_version, "batch/v1")))
		o = NULL;
	/* A Workload that lost its owner reference (the Job deleted with
	 * propagationPolicy Orphan) is still ours by its job-uid label:
	 * kept as an orphan, to be cleaned up. */
	if (!o && !smap_has(&w->meta.labels, LABEL_JOB_UID)) {
		if (r) {
			hmap_del(&js->wls, key);
			wl_rec_free(r);
		}
		goto out;
	}
	if (!r) {
		r = xcalloc(1, sizeof(*r));
		r->s.js = js;
		r->s.key = xstrdup(key);
		r->s.is_wl = true;
		hmap_put(&js->wls, r->s.key, r);
	}
	set_str(&r->owner, o ? o->name : NULL);
	set_str(&r->owner_uid, o ? o->uid : NULL);
	set_str(&r->rv, w->meta.resource_version);
	r->deleting = w->meta.deletion_ms != 0;
	r->finished = workload_is_finished(w);
	for (size_t i = 0; i < r->nfinalizers; i++)
		free(r->finalizers[i]);
	free(r->finalizers);
	r->finalizers = NULL;
	r->nfinalizers = w->meta.nfinalizers;
	if (r->nfinalizers) {
		r->finalizers = xcalloc(r->nfinalizers, sizeof(char *));
		for (size_t i = 0; i < r->nfinalizers; i++)
			r->finalizers[i] = xstrdup(w->meta.finalizers[i]);
	}
	mark(&r->s);
	if (o)
		jk = mk_key(w->meta.namespace, o->name);
out:
	if (jk)
		mark_job(js, jk);
	free(jk);
	free(key);
}

/* ------------------------------------------------------------------ */
/* The Job informer */

static void job_entry_free(struct job_entry *e)
{
	slot_release(&e->s);
	if (e->j) {
		job_release(e->j);
		free(e->j);
	}
	free(e->wl_name);
	free(e->bad_rv);
	free(e->m_wuid);
	free(e);
}

/* The records of Workloads e's Job owned: look at them again. */
static void mark_owned(struct jobs *js, const struct job *j)
{
	char *wk;

	if (!j->meta.name)
		return;
	{
		char *name = jobwl_workload_name("Job", "batch", j->meta.name,
						 j->meta.uid);

		wk = mk_key(j->meta.namespace, name);
		free(name);
	}
	mark_wl(js, wk);
	free(wk);
}

static void apply_job(struct jobs *js, const json_t *obj)
{
	const char *ns = jx_meta_str(obj, "namespace"), *name =
		jx_meta_str(obj, "name");
	const char *rv = jx_meta_str(obj, "resourceVersion");
	struct field_errors fe = FIELD_ERRORS_INIT;
	char *key;
	struct job_entry *e;
	struct job *nj;

	if (!ns || !name)
		return;
	key = mk_key(ns, name);
	e = hmap_get(&js->jobs, key);
	if (e) {
		e->seen = js->gen;
		if (e->j && both_eq(rv, e->j->meta.resource_version)) {
			free(key);
			return;
		}
	}
	nj = xcalloc(1, sizeof(*nj));
	if (codec_decode_job(obj, nj, &fe) < 0) {
		log_msg(LOG_WARN, COMPONENT, ns, name,
			"job does not decode: %s",
			fe.n ? fe.v[0].text : "?");
		field_errors_release(&fe);
		job_release(nj);
		free(nj);
		free(key);
		return;
	}
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->s.js = js;
		e->s.key = key;
		e->seen = js->gen;
		hmap_put(&js->jobs, e->s.key, e);
		key = NULL;
	}
	if (e->j && !both_eq(e->j->meta.uid, nj->meta.uid)) {
		mark_owned(js, e->j);
		e->created = false;
		FREE_AND_NULL(e->wl_name);
	}
	if (e->j) {
		job_release(e->j);
		free(e->j);
	}
	e->j = nj;
	if (!e->wl_name)
		e->wl_name = jobwl_workload_name("Job", "batch", nj->meta.name,
						 nj->meta.uid);
	free(key);
	mark(&e->s);
}

static void drop_job(struct jobs *js, struct job_entry *e)
{
	if (e->j)
		mark_owned(js, e->j);
	hmap_del(&js->jobs, e->s.key);
	job_entry_free(e);
}

static void on_job_event(void *ud, enum kube_event_type type, json_t *obj)
{
	struct jobs *js = ud;

	if (type == KUBE_DELETED) {
		char *key = mk_key(jx_meta_str(obj, "namespace"),
				   jx_meta_str(obj, "name"));
		struct job_entry *e = hmap_get(&js->jobs, key);

		if (e)
			drop_job(js, e);
		free(key);
	} else {
		apply_job(js, obj);
	}
	json_decref(obj);
}

static void on_job_replace(void *ud, json_t *items, bool initial)
{
	struct jobs *js = ud;
	const json_t *it;
	size_t i, pos = 0;
	void *v;

	(void)initial;
	js->gen++;
	json_array_foreach(items, i, it)
		apply_job(js, it);
	while ((v = hmap_next(&js->jobs, &pos, NULL))) {
		struct job_entry *e = v;

		if (e->seen != js->gen)
			drop_job(js, e);
	}
	json_decref(items);
}

static void on_job_synced(void *ud)
{
	struct jobs *js = ud;
	size_t pos = 0;
	void *v;

	js->synced = true;
	/* the orphan check waited for the Job list */
	while ((v = hmap_next(&js->wls, &pos, NULL)))
		mark(&((struct wl_rec *)v)->s);
	arm_run(js);
}

static void on_job_error(void *ud, const char *message)
{
	(void)ud;
	log_msg(LOG_WARN, "informer", NULL, "jobs", "%s", message);
}

static const struct kube_watch_ops job_ops = {
	.event = on_job_event,
	.replace = on_job_replace,
	.synced = on_job_synced,
	.error = on_job_error,
};

/* ------------------------------------------------------------------ */
/* The PriorityClass informer */

static void pc_apply(struct jobs *js, const json_t *obj)
{
	const char *name = jx_meta_str(obj, "name");
	struct pc_entry *p;

	if (!name || !json_is_integer(json_object_get(obj, "value")))
		return;
	p = hmap_get(&js->pcs, name);
	if (!p) {
		p = xcalloc(1, sizeof(*p));
		p->name = xstrdup(name);
		hmap_put(&js->pcs, p->name, p);
	}
	p->value = (int32_t)json_integer_value(json_object_get(obj, "value"));
	p->global_default = json_is_true(json_object_get(obj,
							 "globalDefault"));
	p->seen = js->pc_gen;
}

static void pc_drop(struct jobs *js, struct pc_entry *p)
{
	hmap_del(&js->pcs, p->name);
	free(p->name);
	free(p);
}

static void on_pc_event(void *ud, enum kube_event_type type, json_t *obj)
{
	struct jobs *js = ud;

	if (type == KUBE_DELETED) {
		const char *name = jx_meta_str(obj, "name");
		struct pc_entry *p = name ? hmap_get(&js->pcs, name) : NULL;

		if (p)
			pc_drop(js, p);
	} else {
		pc_apply(js, obj);
	}
	json_decref(obj);
}

static void on_pc_replace(void *ud, json_t *items, bool initial)
{
	struct jobs *js = ud;
	const json_t *it;
	size_t i, pos = 0;
	void *v;

	(void)initial;
	js->pc_gen++;
	json_array_foreach(items, i, it)
		pc_apply(js, it);
	while ((v = hmap_next(&js->pcs, &pos, NULL)))
		if (((struct pc_entry *)v)->seen != js->pc_gen)
			pc_drop(js, v);
	json_decref(items);
}

static void on_pc_synced(void *ud)
{
	struct jobs *js = ud;

	js->pc_synced = true;
	arm_run(js);
}

static void on_pc_error(void *ud, const char *message)
{
	(void)ud;
	log_msg(LOG_WARN, "informer", NULL, "priorityclasses", "%s", message);
}

static const struct kube_watch_ops pc_ops = {
	.event = on_pc_event,
	.replace = on_pc_replace,
	.synced = on_pc_synced,
	.error = on_pc_error,
};

/* ------------------------------------------------------------------ */
/* Construction */

struct jobs *jobs_new(struct kube *k, struct manager *m,
		      const struct jobs_opts *o)
{
	static const struct jobs_opts dflt;
	struct jobs *js = xcalloc(1, sizeof(*js));
	struct kube_ref ref = { .group = "batch", .version = "v1",
				.resource = "jobs" };
	char *path = kube_path(&ref);
	struct kube_watch_opts wo = { .path = path, .ops = &job_ops };

	js->k = k;
	js->l = kube_loop(k);
	js->m = m;
	js->o = o ? *o : dflt;
	if (!js->o.retry_ms)
		js->o.retry_ms = 1000;
	if (js->o.nlabel_keys_to_copy) {
		js->label_keys = xcalloc(js->o.nlabel_keys_to_copy,
					 sizeof(char *));
		for (size_t i = 0; i < js->o.nlabel_keys_to_copy; i++)
			js->label_keys[i] = xstrdup(js->o.label_keys_to_copy[i]);
	}
	js->o.label_keys_to_copy = NULL;
	label_selector_init(&js->ns_sel);
	if (js->o.ns_selector) {
		js->has_ns_sel = true;
		label_selector_copy(&js->ns_sel, js->o.ns_selector);
	}
	js->o.ns_selector = NULL;
	js->o.registry = NULL;
	js->ev = event_recorder_new(k, &(struct event_recorder_opts){
		.component = EVENT_COMPONENT,
		.registry = o ? o->registry : NULL,
	});
	hmap_init(&js->ns_match);
	hmap_init(&js->jobs);
	hmap_init(&js->wls);
	hmap_init(&js->pcs);
	timers_setup(&js->run, run_dirty, js);
	timers_setup(&js->retry, run_retry, js);
	manager_set_wl_observer(m, on_workload, js);
	wo.page_size = js->o.page_size;
	wo.ud = js;
	js->w = kube_watch_new(k, &wo);
	free(path);
	ref.group = "scheduling.k8s.io";
	ref.resource = "priorityclasses";
	path = kube_path(&ref);
	wo.path = path;
	wo.ops = &pc_ops;
	js->pcw = kube_watch_new(k, &wo);
	free(path);
	return js;
}

void jobs_free(struct jobs *js)
{
	size_t pos;
	void *v;

	if (!js)
		return;
	manager_set_wl_observer(js->m, NULL, NULL);
	kube_watch_free(js->w);
	kube_watch_free(js->pcw);
	loop_timer_cancel(js->l, &js->run);
	loop_timer_cancel(js->l, &js->retry);
	event_recorder_free(js->ev);
	for (pos = 0; (v = hmap_next(&js->jobs, &pos, NULL));)
		job_entry_free(v);
	for (pos = 0; (v = hmap_next(&js->wls, &pos, NULL));)
		wl_rec_free(v);
	for (pos = 0; (v = hmap_next(&js->pcs, &pos, NULL));) {
		struct pc_entry *p = v;

		free(p->name);
		free(p);
	}
	hmap_release(&js->pcs);
	ns_match_clear(js);
	hmap_release(&js->ns_match);
	label_selector_release(&js->ns_sel);
	hmap_release(&js->jobs);
	hmap_release(&js->wls);
	for (size_t i = 0; i < js->ndirty; i++)
		free(js->dirty[i]);
	free(js->dirty);
	for (size_t i = 0; i < js->o.nlabel_keys_to_copy; i++)
		free(js->label_keys[i]);
	free(js->label_keys);
	free(js);
}

bool jobs_synced(const struct jobs *js)
{
	return js->synced;
}

const struct jobs_stats *jobs_stats(const struct jobs *js)
{
	return &js->stats;
}
