/*
 * certmgr: the internal certificate manager's passes (certmgr.h). A
 * pass is a chain of requests, one at a time:
 *   GET secret -> [POST | merge PATCH secret] -> [on_certs] ->
 *   for each target (mutating, validating, CRDs...): GET -> [JSON PATCH]
 *   -> [on_certs] -> done (ready; next pass when the certificates come
 *   due, at most check_interval_ms later).
 * on_certs runs before the injection when the new certificates keep the
 * CA of those in use, after it when they bring another CA (so the
 * bundles trust it before anything signed by it is served).
 * Any failure ends the pass and schedules another after retry_ms; a 409
 * on the Secret (another replica was first) schedules one at once.
 * Between passes one informer per target reports every version of it; a
 * version whose bundle is not ours asks for a repair pass (repair_ms,
 * doubling while repairs keep coming, see request_repair).
 * Owns: its copies of the options, the current certificates, the one
 * request in flight, its timer, the Secret watch and the target
 * watches. Never logs at more than info for normal progress. JSON: it
 * reads the Secret, webhook configurations and CRDs and builds their
 * patches as json_t, outside STYLE P3(c)'s list (the certificates are
 * all it takes from them).
 */
#include "controller/certmgr.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/text.h"
#include "controller/kube.h"
#include "controller/kube_watch.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/timers.h"

#define COMPONENT "certmgr"
#define DEFAULT_RETRY_MS 5000
#define DEFAULT_REPAIR_MS 200
#define SECRET_CHANGE_DELAY_MS 1000
/* A repair asked for within this long of the last one waits twice as
 * long as that one did, up to REPAIR_MAX_MS: a writer that keeps putting
 * another bundle back (a second manager with its own Secret) meets one
 * patch per REPAIR_MAX_MS at worst, never a write loop. */
#define REPAIR_WINDOW_MS 10000
#define REPAIR_MAX_MS 30000
/* JSON patches of targets refused in one pass (a failed "test": the
 * object moved meanwhile) before the pass gives up and retries later. */
#define MAX_REFUSALS 8
/* Slack after the moment the certificates come due, so the pass that
 * runs then sees them due (certs_check counts whole seconds). */
#define DUE_SLACK_MS 50

static const char *const default_crds[] = {
	"clusterqueues.kueue.x-k8s.io",
	"cohorts.kueue.x-k8s.io",
	"localqueues.kueue.x-k8s.io",
	"resourceflavors.kueue.x-k8s.io",
	"workloadpriorityclasses.kueue.x-k8s.io",
	"workloads.kueue.x-k8s.io",
	NULL,
};

enum target_kind { T_MUTATING, T_VALIDATING, T_CRD };

struct certmgr;

struct target {
	enum target_kind kind;
	char *name;               /* owned */
	struct certmgr *cm;       /* borrowed: the owner */
	size_t index;             /* in cm->targets */
	struct kube_watch *watch; /* owned; NULL with no_watch */
	char *read_rv;            /* owned; the version a pass last read */
	char *wrote_rv;           /* owned; the version it last wrote */
};

struct certmgr {
	struct kube *k;       /* borrowed */
	struct loop *l;       /* borrowed */
	char *ns, *secret, *service, *dns;
	char *vis_service, *vis_dns; /* the visibility API's Service */
	struct target *targets; /* owned */
	size_t ntargets;
	enum certs_key_type key_type;
	int64_t interval_ms, retry_ms, repair_base_ms;
	int64_t ca_validity_s, serving_validity_s, lookahead_s;
	certmgr_certs_fn *on_certs;
	void *ud;

	struct certs cur;     /* in use (handed to on_certs) */
	struct certs next;    /* this pass's, as in the Secret */
	char *secret_rv;      /* owned; the Secret's version read or written */
	bool secret_exists;
	char *ca_bundle;      /* owned; the bundle of the Secret last read,
			       * the one every target must carry; NULL
			       * before the first pass got that far */
	size_t ti;            /* target being injected */
	unsigned refusals;    /* target patches refused in this pass */
	bool handed;          /* this pass's certificates are in use */
	struct kube_call *call;
	struct loop_work *work; /* key generation running, or NULL */
	bool running, ready;
	bool again;           /* another pass was asked for meanwhile */
	int64_t again_ms;     /* ... this long after this one ends */
	bool repair_pending;  /* a repair pass is asked for, not started */
	int64_t repair_ms;    /* the delay of the last repair asked for */
	int64_t last_repair_ms; /* loop_now_ms of that request; 0: none */
	struct timer timer;
	struct kube_watch *watch; /* the Secret's */
	struct certmgr_stats stats;
};

const char *const *certmgr_default_crds(void)
{
	return default_crds;
}

char *certmgr_webhook_config_name(const char *service, bool mutating)
{
	static const char suffix[] = "-webhook-service";
	size_t n = strlen(service), sl = sizeof(suffix) - 1;
	char *base, *out;

	if (n > sl && !strcmp(service + n - sl, suffix))
		base = xstrndup(service, n - sl);
	else
		base = xstrdup(service);
	out = xasprintf("%s-%s-webhook-configuration", base,
			mutating ? "mutating" : "validating");
	free(base);
	return out;
}

char *certmgr_visibility_service_name(const char *service)
{
	static const char suffix[] = "-webhook-service";
	size_t n = strlen(service), sl = sizeof(suffix) - 1;

	if (n > sl && !strcmp(service + n - sl, suffix))
		return xasprintf("%.*s-visibility-server", (int)(n - sl),
				 service);
	return xasprintf("%s-visibility-server", service);
}

static bool certs_equal(const struct certs *a, const struct certs *b)
{
	return text_same(a->ca_pem, b->ca_pem) &&
	       text_same(a->ca_key_pem, b->ca_key_pem) &&
	       text_same(a->cert_pem, b->cert_pem) &&
	       text_same(a->key_pem, b->key_pem);
}

static void pass_start(struct certmgr *cm);

static void on_timer(void *ud, int64_t now_ms)
{
	(void)now_ms;
	pass_start(ud);
}

/* Arms the pass timer delay_ms from now unless it fires sooner. */
static void arm_by(struct certmgr *cm, int64_t delay_ms)
{
	if (cm->timer.slot != TIMERS_UNARMED &&
	    cm->timer.due_ms <= loop_now_ms(cm->l) + delay_ms)
		return;
	loop_timer_arm(cm->l, &cm->timer, delay_ms);
}

/* A pass delay_ms from now, or after the running one. */
static void request_pass(struct certmgr *cm, int64_t delay_ms)
{
	if (cm->running) {
		if (!cm->again || delay_ms < cm->again_ms)
			cm->again_ms = delay_ms;
		cm->again = true;
		return;
	}
	arm_by(cm, delay_ms);
}

/*
 * A target does not carry our bundle: a repair pass soon. Repairs asked
 * for in a burst (a restarted API server resets every target at once)
 * share one pass; one asked for within REPAIR_WINDOW_MS of the last
 * waits twice as long as it did (see REPAIR_WINDOW_MS).
 */
static void request_repair(struct certmgr *cm)
{
	int64_t now = loop_now_ms(cm->l);

	if (cm->repair_pending)
		return;
	if (cm->last_repair_ms && now - cm->last_repair_ms < REPAIR_WINDOW_MS)
		cm->repair_ms = cm->repair_ms * 2 < REPAIR_MAX_MS
				? cm->repair_ms * 2 : REPAIR_MAX_MS;
	else
		cm->repair_ms = cm->repair_base_ms;
	cm->repair_pending = true;
	cm->last_repair_ms = now;
	cm->stats.repairs++;
	request_pass(cm, cm->repair_ms);
}

/* When the certificates in use come due (certs_check would renew them),
 * as a delay from now, at most the check interval. */
static int64_t due_in_ms(const struct certmgr *cm)
{
	int64_t ca_na, na, due_s, delay;
	struct err ignored = { "" };

	if (certs_not_after(cm->cur.cert_pem, &na, &ignored) < 0 ||
	    certs_not_after(cm->cur.ca_pem, &ca_na, &ignored) < 0)
		return cm->interval_ms;
	due_s = (ca_na < na ? ca_na : na) - cm->lookahead_s;
	delay = due_s * 1000 - loop_wall_ms(cm->l) + DUE_SLACK_MS;
	if (delay < DUE_SLACK_MS)
		delay = DUE_SLACK_MS;
	return delay < cm->interval_ms ? delay : cm->interval_ms;
}

static void pass_end(struct certmgr *cm, bool ok, int64_t delay_ms)
{
	cm->running = false;
	certs_release(&cm->next);
	if (ok) {
		cm->stats.passes++;
		if (!cm->ready)
			log_msg(LOG_INFO, COMPONENT, cm->ns, cm->secret,
				"certificates and CA bundles in place");
		cm->ready = true;
	} else {
		cm->stats.failures++;
	}
	if (cm->again && cm->again_ms < delay_ms)
		delay_ms = cm->again_ms;
	cm->again = false;
	loop_timer_arm(cm->l, &cm->timer, delay_ms);
}

static void fail(struct certmgr *cm, const char *what,
		 const struct kube_reply *r)
{
	bool conflict = r && r->code == 409;

	log_msg(conflict ? LOG_INFO : LOG_WARN, COMPONENT, cm->ns, cm->secret,
		"%s: %s%s", what, r ? r->message : "failed",
		conflict ? " (retrying)" : "");
	if (conflict)
		cm->stats.conflicts++;
	pass_end(cm, false, conflict ? 0 : cm->retry_ms);
}

static char *path_of(const char *group, const char *version,
		     const char *resource, const char *ns, const char *name)
{
	struct kube_ref ref = { .group = group, .version = version,
				.resource = resource, .ns = ns, .name = name };

	return kube_path(&ref);
}

static void submit(struct certmgr *cm, enum kube_verb verb, char *path_take,
		   const json_t *body, kube_done_take_fn *done)
{
	struct kube_req req = { .verb = verb, .path = path_take,
				.body = body, .done = done, .ud = cm };

	cm->call = kube_submit(cm->k, &req);
	free(path_take);
}

/* ---- injection ---- */

static void inject_next(struct certmgr *cm);

static char *target_path(const struct certmgr *cm, const struct target *t)
{
	(void)cm;
	switch (t->kind) {
	case T_MUTATING:
		return path_of("admissionregistration.k8s.io", "v1",
			       "mutatingwebhookconfigurations", NULL, t->name);
	case T_VALIDATING:
		return path_of("admissionregistration.k8s.io", "v1",
			       "validatingwebhookconfigurations", NULL,
			       t->name);
	case T_CRD:
		break;
	}
	return path_of("apiextensions.k8s.io", "v1",
		       "customresourcedefinitions", NULL, t->name);
}

static void add_op(json_t *ops, const char *op, const char *path,
		   json_t *value_take)
{
	json_array_append_new(ops, json_pack("{s:s, s:s, s:o}", "op", op,
					     "path", path, "value",
					     value_take));
}

/* The JSON patch putting the bundle into obj, or NULL when nothing needs
 * to change. */
static json_t *inject_patch(const struct certmgr *cm, const struct target *t,
			    const json_t *obj)
{
	json_t *ops = json_array();

	if (t->kind == T_CRD) {
		const json_t *conv = json_object_get(
			json_object_get(obj, "spec"), "conversion");
		const json_t *cc = json_object_get(
			json_object_get(conv, "webhook"), "clientConfig");
		const char *strategy = json_string_value(
			json_object_get(conv, "strategy"));

		if (!text_same(strategy, "Webhook") || !json_is_object(cc) ||
		    text_same(json_string_value(json_object_get(cc, "caBundle")),
			 cm->ca_bundle)) {
			json_decref(ops);
			return NULL;
		}
		add_op(ops, "test", "/spec/conversion/strategy",
		       json_string("Webhook"));
		add_op(ops, "add", "/spec/conversion/webhook/clientConfig/"
		       "caBundle", json_string(cm->ca_bundle));
	} else {
		const json_t *hooks = json_object_get(obj, "webhooks"), *h;
		size_t i;

		json_array_foreach(hooks, i, h) {
			const json_t *cc = json_object_get(h, "clientConfig");
			const char *name = json_string_value(
				json_object_get(h, "name"));
			char p[96];

			if (!name || text_same(json_string_value(
				json_object_get(cc, "caBundle")),
				cm->ca_bundle))
				continue;
			snprintf(p, sizeof(p), "/webhooks/%zu/name", i);
			add_op(ops, "test", p, json_string(name));
			snprintf(p, sizeof(p), "/webhooks/%zu/clientConfig", i);
			if (!json_is_object(cc)) {
				add_op(ops, "add", p, json_pack("{s:s}",
					"caBundle", cm->ca_bundle));
				continue;
			}
			snprintf(p, sizeof(p),
				 "/webhooks/%zu/clientConfig/caBundle", i);
			add_op(ops, "add", p, json_string(cm->ca_bundle));
		}
	}
	if (!json_array_size(ops)) {
		json_decref(ops);
		return NULL;
	}
	return ops;
}

/* The resourceVersion of obj (borrowed), or NULL. */
static const char *rv_of(const json_t *obj)
{
	return json_string_value(json_object_get(
		json_object_get(obj, "metadata"), "resourceVersion"));
}

static void set_text(char **slot, const char *v)
{
	free(*slot);
	*slot = v ? xstrdup(v) : NULL;
}

static void patched(void *ud, const struct kube_reply *r, json_t *body)
{
	struct certmgr *cm = ud;
	struct target *t = &cm->targets[cm->ti];

	cm->call = NULL;
	if (r->outcome == KUBE_OK)
		set_text(&t->wrote_rv, rv_of(body));
	json_decref(body);
	if (r->outcome != KUBE_OK) {
		/* 404: deleted meanwhile; 409/422: a test failed, the object
		 * moved on: read it again */
		if (r->code == 404) {
			cm->ti++;
			inject_next(cm);
			return;
		}
		if (r->code == 409 || r->code == 422) {
			if (++cm->refusals <= MAX_REFUSALS) {
				log_msg(LOG_INFO, COMPONENT, NULL, t->name,
					"caBundle patch refused, re-reading: "
					"%s", r->message);
				inject_next(cm);
				return;
			}
			/* the object keeps moving under us: later */
			log_msg(LOG_WARN, COMPONENT, NULL, t->name,
				"caBundle patch refused %u times; retrying "
				"later", cm->refusals - 1);
			pass_end(cm, false, cm->retry_ms);
			return;
		}
		fail(cm, "caBundle patch", r);
		return;
	}
	cm->stats.injections++;
	log_msg(LOG_INFO, COMPONENT, NULL, t->name, "CA bundle injected");
	cm->ti++;
	inject_next(cm);
}

static void target_read(void *ud, const struct kube_reply *r, json_t *body)
{
	struct certmgr *cm = ud;
	struct target *t = &cm->targets[cm->ti];
	json_t *ops;

	cm->call = NULL;
	if (r->outcome != KUBE_OK) {
		json_decref(body);
		if (r->code == 404) {
			if (t->kind != T_CRD)
				log_msg(LOG_WARN, COMPONENT, NULL, t->name,
					"webhook configuration not found; "
					"no CA bundle injected");
			cm->ti++;
			inject_next(cm);
			return;
		}
		fail(cm, "reading a caBundle target", r);
		return;
	}
	set_text(&t->read_rv, rv_of(body));
	ops = inject_patch(cm, t, body);
	json_decref(body);
	if (!ops) {
		cm->ti++;
		inject_next(cm);
		return;
	}
	submit(cm, KUBE_PATCH_JSON, target_path(cm, t), ops, patched);
	json_decref(ops);
}

static int hand_over(struct certmgr *cm);

static void inject_next(struct certmgr *cm)
{
	if (cm->ti >= cm->ntargets) {
		/* every bundle is in place: now a new CA may be served */
		if (hand_over(cm) < 0) {
			fail(cm, "using the certificates", NULL);
			return;
		}
		pass_end(cm, true, due_in_ms(cm));
		return;
	}
	submit(cm, KUBE_GET, target_path(cm, &cm->targets[cm->ti]), NULL,
	       target_read);
}

/* ---- the Secret ---- */

/* Hands this pass's certificates to on_certs unless they are those in
 * use already. Returns 0, or -1 when on_certs refused them. */
static int hand_over(struct certmgr *cm)
{
	if (cm->handed)
		return 0;
	if (!certs_equal(&cm->cur, &cm->next)) {
		if (cm->on_certs(cm->ud, &cm->next) < 0)
			return -1;
		cm->stats.handed++;
		certs_release(&cm->cur);
		cm->cur = cm->next;
		memset(&cm->next, 0, sizeof(cm->next));
	}
	cm->handed = true;
	return 0;
}

/*
 * The certificates of this pass are in the Secret: their bundle is the
 * one every target must carry from now on. They are used at once when
 * they keep the CA in use (a renewed serving certificate, or the first
 * certificates of this process), otherwise only once every bundle holds
 * their CA (inject_next): a client holding the old bundle would refuse a
 * certificate signed by a CA it does not know yet.
 */
static void certs_in_place(struct certmgr *cm)
{
	char *bundle = certs_ca_bundle(&cm->next);

	if (!bundle) {
		fail(cm, "no CA certificate", NULL);
		return;
	}
	free(cm->ca_bundle);
	cm->ca_bundle = bundle;
	if ((!cm->cur.cert_pem || text_same(cm->cur.ca_pem, cm->next.ca_pem)) &&
	    hand_over(cm) < 0) {
		fail(cm, "using the certificates", NULL);
		return;
	}
	cm->ti = 0;
	inject_next(cm);
}

static void set_rv(struct certmgr *cm, const json_t *obj)
{
	const char *rv = json_string_value(json_object_get(
		json_object_get(obj, "metadata"), "resourceVersion"));

	free(cm->secret_rv);
	cm->secret_rv = rv ? xstrdup(rv) : NULL;
}

static void secret_written(void *ud, const struct kube_reply *r,
			   json_t *body)
{
	struct certmgr *cm = ud;

	cm->call = NULL;
	if (r->outcome != KUBE_OK) {
		json_decref(body);
		fail(cm, "writing the Secret", r);
		return;
	}
	set_rv(cm, body);
	json_decref(body);
	cm->stats.secret_writes++;
	log_msg(LOG_INFO, COMPONENT, cm->ns, cm->secret,
		"certificates written");
	certs_in_place(cm);
}

static void write_secret(struct certmgr *cm)
{
	json_t *data = certs_to_secret_data(&cm->next), *body;

	if (cm->secret_exists) {
		body = json_pack("{s:{s:s?}, s:o}", "metadata",
				 "resourceVersion", cm->secret_rv, "data",
				 data);
		submit(cm, KUBE_PATCH_MERGE,
		       path_of("", "v1", "secrets", cm->ns, cm->secret), body,
		       secret_written);
	} else {
		body = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:s, "
				 "s:o}", "apiVersion", "v1", "kind", "Secret",
				 "metadata", "name", cm->secret, "namespace",
				 cm->ns, "labels", "app.kubernetes.io/"
				 "managed-by", "cueue", "type",
				 "kubernetes.io/tls", "data", data);
		submit(cm, KUBE_POST,
		       path_of("", "v1", "secrets", cm->ns, NULL), body,
		       secret_written);
	}
	json_decref(body);
}

/* ---- key generation, off the loop thread ---- */

/* One generation: everything the worker thread reads is its own copy. */
struct keygen {
	struct certmgr *cm;   /* borrowed; never read on the worker */
	char *service, *ns;   /* owned copies for co */
	char *extra[5];       /* owned: the visibility Service's names,
				 NULL-terminated, for co.extra_dns */
	struct certs_opts co; /* points at service, ns and extra */
	bool serving_only;    /* renew the serving certificate only */
	struct certs c;       /* in: the Secret's; out: the new ones */
	char *old_ca;         /* owned; the CA being replaced, or NULL */
	char why[ERR_MAX];     /* the reason a pass generates */
	struct err err;       /* the worker's error */
	bool renewed;         /* the serving renewal worked */
	int rc;               /* of certs_generate */
	bool kept_ca;         /* the previous CA stays in the bundle */
	int64_t ms;           /* how long the worker took */
};

static void keygen_free(struct keygen *kg)
{
	certs_release(&kg->c);
	free(kg->old_ca);
	free(kg->service);
	free(kg->ns);
	for (size_t i = 0; kg->extra[i]; i++)
		free(kg->extra[i]);
	free(kg);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* On the worker thread: kg alone. */
static void keygen_work(void *arg)
{
	struct keygen *kg = arg;
	int64_t t0 = mono_ms();

	if (kg->serving_only)
		kg->renewed = certs_renew_serving(&kg->co, &kg->c, &kg->err)
			      == 0;
	if (!kg->renewed) {
		kg->err.msg[0] = '\0';
		kg->rc = certs_generate(&kg->co, &kg->c, &kg->err);
		if (kg->rc == 0)
			kg->kept_ca = certs_keep_previous_ca(
				&kg->c, kg->old_ca, kg->co.now_s);
	}
	kg->ms = mono_ms() - t0;
}

/* Back on the loop thread. */
static void keygen_done(void *arg, bool cancelled)
{
	struct keygen *kg = arg;
	struct certmgr *cm = kg->cm;

	if (cancelled) {
		keygen_free(kg);
		return;
	}
	cm->work = NULL;
	if (kg->renewed) {
		cm->stats.renewed++;
		log_msg(LOG_INFO, COMPONENT, cm->ns, cm->secret,
			"serving certificate renewed (%" PRId64 " ms)",
			kg->ms);
	} else if (kg->rc < 0) {
		log_msg(LOG_ERROR, COMPONENT, cm->ns, cm->secret,
			"generating certificates: %s", kg->err.msg);
		keygen_free(kg);
		pass_end(cm, false, cm->retry_ms);
		return;
	} else {
		cm->stats.generated++;
		log_msg(LOG_INFO, COMPONENT, cm->ns, cm->secret,
			"new CA and serving certificate (%s; %" PRId64
			" ms)%s", kg->why, kg->ms,
			kg->kept_ca ? "; the previous CA stays in the bundle "
				      "until it expires" : "");
	}
	certs_release(&cm->next);
	cm->next = kg->c;
	kg->c = (struct certs)CERTS_INIT;
	keygen_free(kg);
	write_secret(cm);
}

/*
 * The Secret read into cm->next needs new certificates (verdict v, for
 * the reason why): renews the serving certificate, or makes a new CA
 * and serving certificate keeping the old CA in the bundle, on a worker
 * thread; the pass goes on in keygen_done.
 */
static void keygen_start(struct certmgr *cm, enum certs_verdict v,
			 const char *why, int64_t now_s)
{
	struct keygen *kg = xcalloc(1, sizeof(*kg));
	struct err err = { "" };

	kg->cm = cm;
	kg->service = xstrdup(cm->service);
	kg->ns = xstrdup(cm->ns);
	kg->extra[0] = xstrdup(cm->vis_dns);
	kg->extra[1] = xstrdup(cm->vis_service);
	kg->extra[2] = xasprintf("%s.%s", cm->vis_service, cm->ns);
	kg->extra[3] = xasprintf("%s.cluster.local", cm->vis_dns);
	kg->co = (struct certs_opts){
		.service = kg->service,
		.namespace = kg->ns,
		.extra_dns = (const char *const *)kg->extra,
		.key_type = cm->key_type,
		.now_s = now_s,
		.ca_validity_s = cm->ca_validity_s,
		.serving_validity_s = cm->serving_validity_s };
	kg->serving_only = v == CERTS_RENEW_SERVING;
	snprintf(kg->why, sizeof(kg->why), "%s", why);
	kg->old_ca = cm->next.ca_pem ? xstrdup(cm->next.ca_pem) : NULL;
	kg->c = cm->next;
	cm->next = (struct certs)CERTS_INIT;
	cm->work = loop_work_start(cm->l, keygen_work, keygen_done, kg, &err);
	if (!cm->work) {
		log_msg(LOG_ERROR, COMPONENT, cm->ns, cm->secret,
			"generating certificates: %s", err.msg);
		keygen_free(kg);
		pass_end(cm, false, cm->retry_ms);
	}
}

static void secret_read(void *ud, const struct kube_reply *r, json_t *body)
{
	struct certmgr *cm = ud;
	struct err why = { "" };
	int64_t now_s = loop_wall_ms(cm->l) / 1000;
	enum certs_verdict v = CERTS_RENEW_ALL;

	cm->call = NULL;
	if (r->outcome != KUBE_OK && r->code != 404) {
		json_decref(body);
		fail(cm, "reading the Secret", r);
		return;
	}
	cm->secret_exists = r->outcome == KUBE_OK;
	FREE_AND_NULL(cm->secret_rv);
	if (cm->secret_exists) {
		set_rv(cm, body);
		if (certs_from_secret_data(json_object_get(body, "data"),
					   &cm->next, &why) == 0)
			v = certs_check(&cm->next, cm->dns, now_s,
					cm->lookahead_s, &why);
		/* the visibility Service's name too (a Secret made before
		 * cueue served the visibility API lacks it) */
		if (v == CERTS_OK &&
		    certs_check(&cm->next, cm->vis_dns, now_s,
				cm->lookahead_s, &why) != CERTS_OK)
			v = CERTS_RENEW_SERVING;
	} else {
		snprintf(why.msg, sizeof(why.msg), "no Secret");
	}
	json_decref(body);
	if (v == CERTS_OK) {
		if (certs_drop_expired_cas(&cm->next, now_s)) {
			log_msg(LOG_INFO, COMPONENT, cm->ns, cm->secret,
				"expired previous CA dropped from the bundle");
			write_secret(cm);
			return;
		}
		certs_in_place(cm);
		return;
	}
	keygen_start(cm, v, why.msg, now_s);
}

static void pass_start(struct certmgr *cm)
{
	if (cm->running) {
		request_pass(cm, 0);
		return;
	}
	loop_timer_cancel(cm->l, &cm->timer);
	cm->running = true;
	cm->handed = false;
	cm->refusals = 0;
	cm->repair_pending = false;
	submit(cm, KUBE_GET, path_of("", "v1", "secrets", cm->ns, cm->secret),
	       NULL, secret_read);
}

/* ---- the Secret watch: a change someone else made triggers a pass ---- */

/* Does the Secret obj hold the certificates this manager uses or is
 * putting in place? (Our own write may come back through the watch
 * before its answer, so before its resourceVersion is known.) */
static bool secret_is_ours(const struct certmgr *cm, const json_t *obj)
{
	struct certs c = CERTS_INIT;
	struct err ignored = { "" };
	bool ours;

	if (certs_from_secret_data(json_object_get(obj, "data"), &c,
				   &ignored) < 0)
		return false;
	ours = (cm->cur.cert_pem && certs_equal(&c, &cm->cur)) ||
	       (cm->next.cert_pem && certs_equal(&c, &cm->next));
	certs_release(&c);
	return ours;
}

static void secret_changed(struct certmgr *cm, const json_t *obj)
{
	const char *rv = json_string_value(json_object_get(
		json_object_get(obj, "metadata"), "resourceVersion"));

	if (obj && ((rv && text_same(rv, cm->secret_rv)) ||
		    secret_is_ours(cm, obj)))
		return; /* our own write, or what the pass read */
	request_pass(cm, cm->running ? 0 : SECRET_CHANGE_DELAY_MS);
}

static void w_event(void *ud, enum kube_event_type type, json_t *obj)
{
	struct certmgr *cm = ud;

	secret_changed(cm, type == KUBE_DELETED ? NULL : obj);
	json_decref(obj);
}

static void w_replace(void *ud, json_t *items, bool initial)
{
	struct certmgr *cm = ud;

	if (!initial)
		secret_changed(cm, json_array_get(items, 0));
	json_decref(items);
}

static void w_error(void *ud, const char *message)
{
	struct certmgr *cm = ud;

	log_msg(LOG_DEBUG, COMPONENT, cm->ns, cm->secret, "watch: %s",
		message);
}

static const struct kube_watch_ops watch_ops = {
	.event = w_event,
	.replace = w_replace,
	.error = w_error,
};

/* ---- the target watches: a bundle someone else changed is repaired ---- */

/* A version of target t (borrowed; NULL: deleted). */
static void target_seen(struct target *t, const json_t *obj)
{
	struct certmgr *cm = t->cm;
	json_t *ops;

	if (!obj || !cm->ca_bundle)
		return; /* nothing to repair, or nothing to repair with yet */
	if (cm->running && cm->ti < t->index)
		return; /* the running pass reads it yet */
	if (rv_of(obj) && (text_same(rv_of(obj), t->read_rv) ||
			   text_same(rv_of(obj), t->wrote_rv)))
		return; /* a version a pass handled already (its event came
			 * late) */
	ops = inject_patch(cm, t, obj);
	if (!ops)
		return; /* ours, or not a target of injection */
	json_decref(ops);
	log_msg(LOG_WARN, COMPONENT, NULL, t->name,
		"caBundle missing or not ours; repairing");
	request_repair(cm);
}

static void tw_event(void *ud, enum kube_event_type type, json_t *obj)
{
	target_seen(ud, type == KUBE_DELETED ? NULL : obj);
	json_decref(obj);
}

static void tw_replace(void *ud, json_t *items, bool initial)
{
	const json_t *it;
	size_t i;

	(void)initial;
	json_array_foreach(items, i, it)
		target_seen(ud, it);
	json_decref(items);
}

static void tw_error(void *ud, const char *message)
{
	const struct target *t = ud;

	log_msg(LOG_DEBUG, COMPONENT, NULL, t->name, "watch: %s", message);
}

static const struct kube_watch_ops target_watch_ops = {
	.event = tw_event,
	.replace = tw_replace,
	.error = tw_error,
};

static void watch_target(struct certmgr *cm, struct target *t)
{
	char *path = target_path(cm, t);
	char *slash = strrchr(path, '/');
	char *sel = xasprintf("metadata.name=%s", t->name);
	struct kube_watch_opts wo = { .path = path, .field_selector = sel,
				      .ops = &target_watch_ops, .ud = t };

	*slash = '\0'; /* the collection */
	t->watch = kube_watch_new(cm->k, &wo);
	free(sel);
	free(path);
}

/* ---- construction ---- */

static void add_target(struct certmgr *cm, enum target_kind kind,
		       char *name_take)
{
	struct target *t;

	cm->targets = xrealloc(cm->targets,
			       (cm->ntargets + 1) * sizeof(*cm->targets));
	t = &cm->targets[cm->ntargets];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->name = name_take;
	t->index = cm->ntargets++;
}

struct certmgr *certmgr_new(struct kube *k, const struct certmgr_opts *o)
{
	struct certmgr *cm = xcalloc(1, sizeof(*cm));
	const char *const *crds = o->crds ? o->crds : default_crds;

	cm->k = k;
	cm->l = kube_loop(k);
	cm->ns = xstrdup(o->namespace);
	cm->secret = xstrdup(o->secret_name);
	cm->service = xstrdup(o->service_name);
	cm->dns = xasprintf("%s.%s.svc", o->service_name, o->namespace);
	cm->vis_service = certmgr_visibility_service_name(o->service_name);
	cm->vis_dns = xasprintf("%s.%s.svc", cm->vis_service, o->namespace);
	add_target(cm, T_MUTATING, o->mutating_name
		   ? xstrdup(o->mutating_name)
		   : certmgr_webhook_config_name(o->service_name, true));
	add_target(cm, T_VALIDATING, o->validating_name
		   ? xstrdup(o->validating_name)
		   : certmgr_webhook_config_name(o->service_name, false));
	for (size_t i = 0; crds[i]; i++)
		add_target(cm, T_CRD, xstrdup(crds[i]));
	cm->key_type = o->key_type;
	cm->interval_ms = o->check_interval_ms ? o->check_interval_ms
			  : CERTS_CHECK_INTERVAL_S * 1000;
	cm->retry_ms = o->retry_ms ? o->retry_ms : DEFAULT_RETRY_MS;
	cm->repair_base_ms = o->repair_ms ? o->repair_ms : DEFAULT_REPAIR_MS;
	cm->ca_validity_s = o->ca_validity_s;
	cm->serving_validity_s = o->serving_validity_s;
	cm->lookahead_s = o->lookahead_s ? o->lookahead_s
			  : CERTS_LOOKAHEAD_S;
	cm->on_certs = o->on_certs;
	cm->ud = o->ud;
	timers_setup(&cm->timer, on_timer, cm);
	if (!o->no_watch) {
		char *path = path_of("", "v1", "secrets", cm->ns, NULL);
		char *sel = xasprintf("metadata.name=%s", cm->secret);
		struct kube_watch_opts wo = { .path = path,
					      .field_selector = sel,
					      .ops = &watch_ops, .ud = cm };

		cm->watch = kube_watch_new(k, &wo);
		free(sel);
		free(path);
		/* the array is complete: its entries no longer move */
		for (size_t i = 0; i < cm->ntargets; i++) {
			cm->targets[i].cm = cm;
			watch_target(cm, &cm->targets[i]);
		}
	}
	pass_start(cm);
	return cm;
}

void certmgr_free(struct certmgr *cm)
{
	if (!cm)
		return;
	kube_watch_free(cm->watch);
	for (size_t i = 0; i < cm->ntargets; i++)
		kube_watch_free(cm->targets[i].watch);
	if (cm->call)
		kube_cancel(cm->k, cm->call);
	loop_work_cancel(cm->l, cm->work);
	loop_timer_cancel(cm->l, &cm->timer);
	certs_release(&cm->cur);
	certs_release(&cm->next);
	for (size_t i = 0; i < cm->ntargets; i++) {
		free(cm->targets[i].name);
		free(cm->targets[i].read_rv);
		free(cm->targets[i].wrote_rv);
	}
	free(cm->targets);
	free(cm->secret_rv);
	free(cm->ca_bundle);
	free(cm->ns);
	free(cm->secret);
	free(cm->service);
	free(cm->dns);
	free(cm->vis_dns);
	free(cm->vis_service);
	free(cm);
}

bool certmgr_ready(const struct certmgr *cm)
{
	return cm && cm->ready;
}

const struct certs *certmgr_certs(const struct certmgr *cm)
{
	return cm && cm->cur.cert_pem ? &cm->cur : NULL;
}

void certmgr_check_now(struct certmgr *cm)
{
	pass_start(cm);
}

const struct certmgr_stats *certmgr_stats(const struct certmgr *cm)
{
	return &cm->stats;
}
