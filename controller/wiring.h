/*
 * wiring: what runs around the manager in cueue-manager (issues 5 and 6):
 * the metrics registry with Kueue's families (kueue_metrics.h) and the
 * process_* collector (procstat.h), the metrics and health servers
 * (httpd.h), the admission/conversion webhook server (webhook/webhook.h)
 * with its certificates (certmgr.h, or webhook.certDir when internal
 * certificate management is off), the webhook's namespace view
 * (webhookview.h), and the readiness checks. main.c and the wiring test
 * (test/devserver/check_wiring.c) run exactly this code.
 *
 * Startup (main.c):
 *   w = wiring_new(k, &opts, &err);        binds the servers; starts
 *                                          certmgr (or reads certDir)
 *   mo.metrics = wiring_metrics(w);
 *   m = manager_new(k, &mo);
 *   wiring_attach(w, m);                   view sync + readiness timer
 *   ... loop ...
 *   manager_free(m); wiring_free(w);       (no loop turn in between)
 *
 * Addresses: metrics and health take Go-style listen addresses
 * (httpd.h; "0" or "" = off; "127.0.0.1:0" = a free port); the webhook
 * takes "HOST:PORT" or ":PORT" ("0" = no webhook and no certificates).
 * Each server logs one line with its address once it listens:
 *   msg="metrics server listening on http://127.0.0.1:PORT"
 *   msg="health probe server listening on http://127.0.0.1:PORT"
 *   msg="webhook server listening on port PORT"
 *
 * Metrics are served over plain HTTP unless metrics_cert_dir is set
 * (tls.crt, tls.key: HTTPS). Kueue serves HTTPS with TokenReview and
 * SubjectAccessReview authorization; cueue has no authorization on
 * /metrics, so keep it on a network only Prometheus reaches (or
 * loopback).
 *
 * Readiness (/readyz): "informers-synced" once manager_synced,
 * "api-connection" while no informer of the manager has failed to list
 * or watch for 5 s on end (a lost or refused API connection, an
 * unusable CA or token: manager_api_failing_ms),
 * "certs" once the certificates and caBundles are in place, "webhook"
 * once the webhook server listens and has its first namespace view.
 * Without a webhook, "certs" and "webhook" pass at once.
 *
 * Threads: the loop thread; the servers run their own threads (their
 * headers say what they share).
 */
#ifndef CONTROLLER_WIRING_H
#define CONTROLLER_WIRING_H

#include <stdbool.h>
#include <stdint.h>

#include "model/errors.h"
#include "webhook/certs.h"

struct config;
struct kube;
struct manager;
struct kueue_metrics;
struct certmgr;
struct webhook;
struct wiring;

struct wiring_opts {
	const struct config *cfg;    /* borrowed; must outlive the wiring */
	const char *metrics_bind;    /* NULL: cfg metrics.bindAddress */
	const char *health_bind;     /* NULL: cfg health.healthProbeBindAddress */
	const char *webhook_bind;    /* NULL: cfg webhook.host:webhook.port;
				      * "0": no webhook */
	const char *visibility_bind; /* NULL: cfg visibilityServer
				      * bindAddress:bindPort; "0": none
				      * (never without the webhook) */
	const char *metrics_cert_dir; /* tls.crt/tls.key: HTTPS metrics */
	enum certs_key_type key_type; /* generated keys; tests: EC */
	int64_t tick_ms;             /* view/readiness period; 0: 50 ms */
	const char *git_version;     /* kueue_build_info */
	const char *git_commit;
};

/* Returns the started wiring, or NULL + err (a bind failed, a bad
 * address, unreadable metrics certificates). */
struct wiring *wiring_new(struct kube *k, const struct wiring_opts *o,
			  struct err *err);
/* Starts following m (borrowed; free m right before the wiring). */
void wiring_attach(struct wiring *w, struct manager *m);
void wiring_free(struct wiring *w);

/* For manager_opts.metrics; borrowed. */
struct kueue_metrics *wiring_metrics(struct wiring *w);
/* The registry itself, for families outside Kueue's (manager_opts.registry:
 * the event recorder's counter); borrowed. */
struct metrics;
struct metrics *wiring_registry(struct wiring *w);
/* 0 when that server is off (or, for the webhook, not started yet). */
unsigned wiring_metrics_port(const struct wiring *w);
unsigned wiring_health_port(const struct wiring *w);
unsigned wiring_webhook_port(const struct wiring *w);
unsigned wiring_visibility_port(const struct wiring *w);
/* Every readiness check passes. */
bool wiring_ready(const struct wiring *w);
/* NULL without internal certificate management. */
struct certmgr *wiring_certmgr(struct wiring *w);
struct webhook *wiring_webhook(struct wiring *w);

#endif
