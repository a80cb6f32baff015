/*
 * webhook: cueue's admission and conversion webhook server, the part of
 * the manager that Kueue's controller-runtime webhook server is: the
 * paths of Kueue's config/components/webhook/manifests.yaml (v1beta1 as
 * in v0.14, v1beta2 as at HEAD) plus /convert, served over TLS by
 * server.h and decided by admit.h.
 *
 * The manager's main.c:
 *   1. webhook_opts_from_config(&o, &cfg) (or _init and set fields), the
 *      certificate from certs.h (internal management) or certs_load_dir;
 *   2. wh = webhook_new(&o, &err), then webhook_opts_release(&o);
 *   3. whenever namespaces, or LocalQueues or the WorkloadPriorityClass
 *      named "default", change: build an nsview and
 *      webhook_publish_snapshot(wh, view);
 *   4. on certificate renewal: webhook_set_certificate(wh, cert, key);
 *   5. webhook_free(wh) at shutdown.
 *
 * Threads: all of the above run on the caller's one thread (the
 * controller loop). Requests run on libmicrohttpd's thread pool. The
 * only state they share is the published nsview: the current one is
 * held in a refcounted slot under one mutex (snap_lock, a leaf lock held
 * only to swap the pointer or to take or drop a reference, never across
 * a request); a request takes a reference at its start and reads that
 * immutable view throughout, so a publish never waits for requests and
 * a request never sees a half-built view. The policy is copied at
 * webhook_new and never changes.
 */
#ifndef WEBHOOK_WEBHOOK_H
#define WEBHOOK_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>

#include "model/errors.h"
#include "webhook/admit.h"
#include "webhook/nsview.h"
#include "webhook/server.h"

struct config;

#define WEBHOOK_DEFAULT_PORT 9443u

struct webhook_opts {
	const char *addr;     /* borrowed; bind IP; NULL/"" = every
			       * interface (webhook.host) */
	unsigned port;        /* webhook.port; 0 = any free port (tests) */
	const char *cert_pem; /* borrowed; serving certificate (PEM) */
	const char *key_pem;  /* borrowed; its key */
	bool min_tls13;       /* tls.minVersion VersionTLS13; else TLS 1.2+ */
	char *priorities;     /* owned by the opts; the tls section as a
			       * GnuTLS priority string; NULL: by min_tls13 */
	size_t max_body;      /* 0: 3 MiB, as kube-apiserver */
	unsigned threads;     /* 0: 2 */
	struct admit_policy policy; /* owned by the opts; copied */
	/* Per-request timing (server.h server_observe_fn: path, HTTP code,
	 * seconds from body complete to response queued), on the server's
	 * threads; the manager feeds controller-runtime's webhook metrics
	 * with it (kueue_metrics_webhook_observe). NULL: none. */
	server_observe_fn *observe;
	void *observe_ud;     /* borrowed; outlives the webhook */
};

/* Defaults: every interface, port 9443, Kueue's default policy. */
void webhook_opts_init(struct webhook_opts *o);
/*
 * From a loaded Configuration: webhook.host/port, tls.minVersion
 * (VersionTLS13 -> 1.3 only; anything lower still means 1.2, the floor
 * this server enforces) and the policy (admit_policy_from_config).
 * Strings stay borrowed from c. o is overwritten.
 */
void webhook_opts_from_config(struct webhook_opts *o, const struct config *c);
void webhook_opts_release(struct webhook_opts *o);

struct webhook;

/* Starts serving. Returns new, or NULL + err (bind, certificate). */
struct webhook *webhook_new(const struct webhook_opts *o, struct err *err);

/*
 * Makes v (taken; frozen here if it is not) the view every request from
 * now on reads. The previous one is freed when its last request ends.
 */
void webhook_publish_snapshot(struct webhook *wh, struct nsview *v);

/* Serves a new certificate to every new connection
 * (server_set_certificate: the old daemon finishes its connections, each
 * answer telling the client to close; nothing waits for it). */
int webhook_set_certificate(struct webhook *wh, const char *cert_pem,
			    const char *key_pem, struct err *err) MUST_CHECK;
/* Daemons of earlier certificates still serving connections
 * (server_retired; stops those that are done). */
size_t webhook_retired(struct webhook *wh);

unsigned webhook_port(const struct webhook *wh);
/* True once a snapshot was published (the readiness the manager's
 * /readyz may want besides certificates). */
bool webhook_has_snapshot(struct webhook *wh);
void webhook_free(struct webhook *wh);

/*
 * What the route at path answers to the len bytes at body (need not be
 * NUL-terminated), without TLS or a server: the step the HTTP handler
 * runs once a body is in, with pol and view (both borrowed; view frozen,
 * or NULL: nothing published yet). For the fuzz harness
 * (test/fuzz/fuzz_webhook.c) and tests. Fills resp (code, static ctype,
 * new body) and returns true; false when path is no route (resp
 * untouched). Pure; any thread.
 */
bool webhook_answer(const struct admit_policy *pol,
		    const struct nsview *view, const char *path,
		    const char *body, size_t len, struct server_resp *resp);

/* One served path, for manifests/ and tests. */
struct webhook_path {
	const char *path;     /* "/validate-batch-v1-job" */
	const char *name;     /* Kueue's webhook name, "vjob.kb.io"; NULL
			       * for /convert */
	bool mutating;
	bool kueue_has_it;    /* false: a cueue extra (LocalQueue and
			       * WorkloadPriorityClass validation, which
			       * Kueue leaves to CEL) */
};

/* The table of served paths (static); *n gets its length. */
const struct webhook_path *webhook_paths(size_t *n);

#endif
