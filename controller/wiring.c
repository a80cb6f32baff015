/*
 * wiring: metrics, health, webhook and certificates around the manager
 * (wiring.h). Owns the registry, kueue_metrics, procstat, both httpd
 * servers, the webhook server, the visibility API server (on the same
 * certificates), the certificate manager (or the certDir
 * certificates) and one periodic timer that publishes the webhook's
 * namespace view, flips the readiness flags and mirrors the API client's
 * counters into cueue_api_requests_total.
 */
#include "controller/wiring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "config/config.h"
#include "controller/certmgr.h"
#include "controller/httpd.h"
#include "controller/kube.h"
#include "controller/kueue_metrics.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/manager.h"
#include "controller/metrics.h"
#include "controller/procstat.h"
#include "controller/timers.h"
#include "controller/visibility.h"
#include "controller/webhookview.h"
#include "webhook/webhook.h"

/* The tick also bounds how late a namespace, LocalQueue or
 * WorkloadPriorityClass change reaches the webhook's view (a Job created
 * right after the LocalQueue "default" of its namespace must be
 * defaulted to it), so it stays short: the manager has no hook that says
 * when manager_nsview_gen moves. */
#define DEFAULT_TICK_MS 50
#define API_STATS_EVERY_MS 5000
#define CERTDIR_RETRY_MS 5000

#define CHECK_SYNCED "informers-synced"
#define CHECK_API "api-connection"
/* An informer failing this long makes the replica unready. */
#define API_FAILING_MAX_MS 5000
#define CHECK_CERTS "certs"
#define CHECK_WEBHOOK "webhook"

struct wiring {
	struct kube *k;             /* borrowed */
	struct loop *l;             /* borrowed */
	const struct config *cfg;   /* borrowed */
	struct manager *m;          /* borrowed; after wiring_attach */
	struct metrics *reg;
	struct kueue_metrics *km;
	struct procstat *ps;
	struct httpd *hm, *hh;      /* metrics; health (NULL when one
				       server serves both, or off) */
	struct httpd *health;       /* hh, or hm when it serves both */
	bool webhook_on;
	bool vis_on;                /* serve the visibility API */
	char vis_host[64];
	unsigned vis_port;
	struct visibility *vis;     /* once certificates and m are there */
	char *vis_cert, *vis_key;   /* owned; the latest certificates */
	char wh_host[256];
	unsigned wh_port;
	struct webhook *wh;
	struct certmgr *cm;
	int64_t certdir_next_ms;    /* internal management off: next try */
	bool certdir_warned;
	struct webhookview view;
	bool ok_synced, ok_api, ok_certs, ok_webhook;
	int64_t tick_ms, api_next_ms;
	struct timer tick;
};

static void set_check(struct wiring *w, bool *flag, const char *name,
		      bool ok)
{
	if (*flag == ok)
		return;
	*flag = ok;
	if (w->health)
		httpd_set_check(w->health, name, ok);
	log_msg(LOG_INFO, "health", NULL, NULL, "readiness check %s: %s",
		name, ok ? "ok" : "failing");
}

/* ---- the visibility API server ---- */

/* Starts it, or rotates its certificate, once the manager is attached
 * and certificates are known. */
static void vis_sync(struct wiring *w)
{
	struct err err = { "" };
	struct visibility_opts o = { 0 };
	char *prio;

	if (!w->vis_on || !w->vis_cert || !w->m || w->vis)
		return;
	o.addr = w->vis_host[0] ? w->vis_host : NULL;
	o.port = w->vis_port;
	o.cert_pem = w->vis_cert;
	o.key_pem = w->vis_key;
	o.priorities = prio = config_tls_priorities(w->cfg);
	w->vis = visibility_new(w->l, w->m, &o, &err);
	free(prio);
	if (!w->vis) {
		log_msg(LOG_ERROR, "visibility", NULL, NULL,
			"visibility server: %s", err.msg);
		w->vis_on = false; /* the port is taken: say it once */
		return;
	}
	log_msg(LOG_INFO, "visibility", NULL, NULL,
		"visibility API listening on port %u", visibility_port(w->vis));
}

static void vis_certs(struct wiring *w, const struct certs *c)
{
	struct err err = { "" };

	if (!w->vis_on)
		return;
	free(w->vis_cert);
	free(w->vis_key);
	w->vis_cert = xstrdup(c->cert_pem);
	w->vis_key = xstrdup(c->key_pem);
	if (w->vis && visibility_set_certificate(w->vis, c->cert_pem,
						 c->key_pem, &err) < 0)
		log_msg(LOG_ERROR, "visibility", NULL, NULL,
			"new certificate refused: %s", err.msg);
	vis_sync(w);
}

/* ---- the webhook server ---- */

static int use_certs(void *ud, const struct certs *c)
{
	struct wiring *w = ud;
	struct err err = { "" };
	struct webhook_opts o;

	vis_certs(w, c);
	if (w->wh) {
		if (webhook_set_certificate(w->wh, c->cert_pem, c->key_pem,
					    &err) < 0) {
			log_msg(LOG_ERROR, "webhook", NULL, NULL,
				"new certificate refused: %s", err.msg);
			return -1;
		}
		log_msg(LOG_INFO, "webhook", NULL, NULL,
			"serving a new certificate");
		return 0;
	}
	webhook_opts_from_config(&o, w->cfg);
	o.addr = w->wh_host[0] ? w->wh_host : NULL;
	o.port = w->wh_port;
	o.cert_pem = c->cert_pem;
	o.key_pem = c->key_pem;
	/* controller_runtime_webhook_* from the server's threads */
	o.observe = kueue_metrics_webhook_observe;
	o.observe_ud = w->km;
	w->wh = webhook_new(&o, &err);
	webhook_opts_release(&o);
	if (!w->wh) {
		log_msg(LOG_ERROR, "webhook", NULL, NULL,
			"webhook server: %s", err.msg);
		return -1;
	}
	log_msg(LOG_INFO, "webhook", NULL, NULL,
		"webhook server listening on port %u", webhook_port(w->wh));
	return 0;
}

/* Internal certificate management off: the certificates come from
 * webhook.certDir (cert-manager, a mounted Secret); tried until they are
 * there. */
static void try_certdir(struct wiring *w, int64_t now)
{
	struct certs c = CERTS_INIT;
	struct err err = { "" };

	if (w->wh || now < w->certdir_next_ms)
		return;
	w->certdir_next_ms = now + CERTDIR_RETRY_MS;
	if (certs_load_dir(w->cfg->webhook_cert_dir, &c, &err) < 0) {
		if (!w->certdir_warned)
			log_msg(LOG_WARN, "webhook", NULL, NULL,
				"waiting for certificates in %s: %s",
				w->cfg->webhook_cert_dir, err.msg);
		w->certdir_warned = true;
		return;
	}
	if (use_certs(w, &c) == 0)
		log_msg(LOG_INFO, "webhook", NULL, NULL,
			"certificates from %s", w->cfg->webhook_cert_dir);
	certs_release(&c);
}

/* ---- the periodic step ---- */

static void mirror_api_stats(struct wiring *w)
{
	const struct kube_stats *s = kube_stats(w->k);

	for (size_t i = 0; i < s->n; i++)
		kueue_metrics_api_requests_set(w->km,
					       kube_verb_name(s->v[i].verb),
					       (int)s->v[i].code, s->v[i].n);
}

static void on_tick(void *ud, int64_t now_ms)
{
	struct wiring *w = ud;
	bool synced = w->m && manager_synced(w->m);

	if (w->webhook_on && !w->cm)
		try_certdir(w, now_ms);
	vis_sync(w);
	if (w->wh && w->m)
		webhookview_sync(&w->view, w->m, w->wh);
	set_check(w, &w->ok_synced, CHECK_SYNCED, synced);
	set_check(w, &w->ok_api, CHECK_API,
		  w->m && manager_api_failing_ms(w->m) < API_FAILING_MAX_MS);
	if (w->webhook_on) {
		set_check(w, &w->ok_certs, CHECK_CERTS,
			  w->cm ? certmgr_ready(w->cm) : w->wh != NULL);
		set_check(w, &w->ok_webhook, CHECK_WEBHOOK,
			  w->wh && webhook_has_snapshot(w->wh));
	}
	if (now_ms >= w->api_next_ms) {
		w->api_next_ms = now_ms + API_STATS_EVERY_MS;
		mirror_api_stats(w);
	}
	loop_timer_arm(w->l, &w->tick, w->tick_ms);
}

/* ---- construction ---- */

static struct httpd *start_server(const char *what, const char *bind,
				  const struct httpd_opts *ho,
				  struct err *err)
{
	struct httpd *h = httpd_start(ho, err);

	if (!h) {
		char msg[sizeof(err->msg)];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		err_set(err, "%s server on %s: %s", what, bind, msg);
		return NULL;
	}
	log_msg(LOG_INFO, "httpd", NULL, NULL, "%s server listening on %s",
		what, httpd_url(h));
	return h;
}

static bool bind_any_port(const char *bind)
{
	char host[256];
	unsigned port = 1;
	struct err e = { "" };

	return httpd_parse_bind(bind, host, sizeof(host), &port, &e) == 0 &&
	       port == 0;
}

static int start_http(struct wiring *w, const struct wiring_opts *o,
		      struct err *err)
{
	const struct config *c = o->cfg;
	const char *mb = o->metrics_bind ? o->metrics_bind
			 : c->metrics_bind_address;
	const char *hb = o->health_bind ? o->health_bind
			 : c->health_probe_bind_address;
	bool m_on = !httpd_bind_disabled(mb), h_on = !httpd_bind_disabled(hb);
	static const struct httpd_check checks[] = {
		{ CHECK_SYNCED, NULL, NULL },
		{ CHECK_API, NULL, NULL },
		{ CHECK_CERTS, NULL, NULL },
		{ CHECK_WEBHOOK, NULL, NULL },
	};
	struct httpd_opts ho = {
		.liveness_path = c->health_liveness_endpoint,
		.readiness_path = c->health_readiness_endpoint,
		.checks = checks,
		.nchecks = 4,
	};
	struct certs mc = CERTS_INIT;
	char *prio = config_tls_priorities(c);
	int rc = -1;

	ho.priorities = prio;
	if (o->metrics_cert_dir &&
	    certs_load_dir(o->metrics_cert_dir, &mc, err) < 0)
		return -1;
	/* equal addresses share one server, unless the port is "any" */
	if (m_on && h_on && !strcmp(mb, hb) && !bind_any_port(mb)) {
		ho.bind = mb;
		ho.metrics = w->reg;
		ho.health = true;
		ho.cert_pem = mc.cert_pem;
		ho.key_pem = mc.key_pem;
		w->hm = start_server("metrics and health probe", mb, &ho,
				     err);
		w->health = w->hm;
		rc = w->hm ? 0 : -1;
		goto out;
	}
	if (m_on) {
		struct httpd_opts mo = { .bind = mb, .metrics = w->reg,
					 .cert_pem = mc.cert_pem,
					 .key_pem = mc.key_pem,
					 .priorities = prio };

		w->hm = start_server("metrics", mb, &mo, err);
		if (!w->hm)
			goto out;
	}
	if (h_on) {
		ho.bind = hb;
		ho.health = true;
		w->hh = start_server("health probe", hb, &ho, err);
		w->health = w->hh;
		if (!w->hh)
			goto out;
	}
	rc = 0;
out:
	certs_release(&mc);
	free(prio);
	return rc;
}

static int parse_webhook_bind(struct wiring *w, const struct wiring_opts *o,
			      struct err *err)
{
	const struct config *c = o->cfg;

	if (!o->webhook_bind) {
		snprintf(w->wh_host, sizeof(w->wh_host), "%s",
			 c->webhook_host ? c->webhook_host : "");
		w->wh_port = (unsigned)c->webhook_port;
		w->webhook_on = true;
		return 0;
	}
	if (httpd_bind_disabled(o->webhook_bind))
		return 0;
	if (httpd_parse_bind(o->webhook_bind, w->wh_host, sizeof(w->wh_host),
			     &w->wh_port, err) < 0)
		return -1;
	w->webhook_on = true;
	return 0;
}

/* visibilityServer.bindAddress:bindPort, or the override; served only
 * with the webhook (it shares its certificates). */
static int parse_visibility_bind(struct wiring *w,
				 const struct wiring_opts *o, struct err *err)
{
	const struct config *c = o->cfg;

	if (!w->webhook_on)
		return 0;
	if (!o->visibility_bind) {
		snprintf(w->vis_host, sizeof(w->vis_host), "%s",
			 c->vis_bind_address ? c->vis_bind_address : "");
		w->vis_port = (unsigned)c->vis_bind_port;
		w->vis_on = true;
		return 0;
	}
	if (httpd_bind_disabled(o->visibility_bind))
		return 0;
	if (httpd_parse_bind(o->visibility_bind, w->vis_host,
			     sizeof(w->vis_host), &w->vis_port, err) < 0)
		return -1;
	w->vis_on = true;
	return 0;
}

struct wiring *wiring_new(struct kube *k, const struct wiring_opts *o,
			  struct err *err)
{
	struct wiring *w = xcalloc(1, sizeof(*w));
	const struct config *c = o->cfg;
	struct kueue_metrics_opts kmo = {
		.cq_resources = c->metrics_enable_cq_resources,
		/* off in v0.14, on by default since Kueue 0.17: a v1beta2
		 * Configuration (HEAD) has it on unless the gate says no */
		.lq_metrics = config_feature_gate(c, "LocalQueueMetrics",
						  c->api == CONFIG_API_V1BETA2),
		.git_version = o->git_version,
		.git_commit = o->git_commit,
	};
	struct webhookview v0 = WEBHOOKVIEW_INIT;

	w->k = k;
	w->l = kube_loop(k);
	/* set up first: a failure below frees w, which cancels it */
	timers_setup(&w->tick, on_tick, w);
	w->cfg = c;
	w->view = v0;
	w->tick_ms = o->tick_ms > 0 ? o->tick_ms : DEFAULT_TICK_MS;
	w->reg = metrics_new();
	w->km = kueue_metrics_new(w->reg, &kmo);
	w->ps = procstat_register(w->reg);
	if (parse_webhook_bind(w, o, err) < 0 ||
	    parse_visibility_bind(w, o, err) < 0 ||
	    start_http(w, o, err) < 0) {
		wiring_free(w);
		return NULL;
	}
	if (w->webhook_on && c->icm_enable) {
		struct certmgr_opts co = {
			.namespace = c->namespace,
			.secret_name = c->icm_webhook_secret_name,
			.service_name = c->icm_webhook_service_name,
			.key_type = o->key_type,
			.on_certs = use_certs,
			.ud = w,
		};

		w->cm = certmgr_new(k, &co);
	}
	if (!w->webhook_on) {
		/* nothing to wait for */
		set_check(w, &w->ok_certs, CHECK_CERTS, true);
		set_check(w, &w->ok_webhook, CHECK_WEBHOOK, true);
	}
	loop_timer_arm(w->l, &w->tick, 0);
	return w;
}

void wiring_attach(struct wiring *w, struct manager *m)
{
	w->m = m;
}

void wiring_free(struct wiring *w)
{
	if (!w)
		return;
	if (w->l)
		loop_timer_cancel(w->l, &w->tick);
	certmgr_free(w->cm);
	visibility_free(w->vis);
	free(w->vis_cert);
	free(w->vis_key);
	webhook_free(w->wh);
	httpd_stop(w->hh);
	httpd_stop(w->hm);
	procstat_free(w->ps);
	kueue_metrics_free(w->km);
	metrics_free(w->reg);
	free(w);
}

struct kueue_metrics *wiring_metrics(struct wiring *w)
{
	return w->km;
}

struct metrics *wiring_registry(struct wiring *w)
{
	return w->reg;
}

unsigned wiring_metrics_port(const struct wiring *w)
{
	return w->hm ? httpd_port(w->hm) : 0;
}

unsigned wiring_health_port(const struct wiring *w)
{
	return w->health ? httpd_port(w->health) : 0;
}

unsigned wiring_visibility_port(const struct wiring *w)
{
	return w->vis ? visibility_port(w->vis) : 0;
}

unsigned wiring_webhook_port(const struct wiring *w)
{
	return w->wh ? webhook_port(w->wh) : 0;
}

bool wiring_ready(const struct wiring *w)
{
	return w->ok_synced && w->ok_api && w->ok_certs && w->ok_webhook;
}

struct certmgr *wiring_certmgr(struct wiring *w)
{
	return w->cm;
}

struct webhook *wiring_webhook(struct wiring *w)
{
	return w->wh;
}
