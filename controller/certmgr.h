/*
 * certmgr: Kueue's internal certificate management (kueue-api.md §15.2,
 * the cert-controller rotator) on the controller loop, with the API
 * calls of kube.h:
 *
 *  1. GET Secret <namespace>/<secret>; certs_from_secret_data +
 *     certs_check for <service>.<namespace>.svc and for the visibility
 *     API's Service, <base>-visibility-server.<namespace>.svc (a
 *     serving certificate without it is renewed);
 *  2. when missing, unreadable, for another name or expiring within 90
 *     days: certs_generate (or certs_renew_serving when only the serving
 *     certificate is bad, keeping the CA and so the caBundles) on a worker
 *     thread (loop_work_start: an RSA key can take seconds), then
 *     write the Secret: POST a kubernetes.io/tls Secret when there was
 *     none, else a merge patch of data with the read resourceVersion (a
 *     409 or AlreadyExists means another replica won: start over, read
 *     its certificates);
 *  3. hand the PEMs to the on_certs callback when they differ from the
 *     last ones (main.c starts the webhook server or rotates its
 *     certificate): at once when they keep the CA in use (a renewed
 *     serving certificate; the first certificates of the process), after
 *     step 4 when they bring another CA, so no client holding the old
 *     bundle meets a certificate it cannot verify;
 *  4. inject the CA bundle: every webhooks[i].clientConfig.caBundle of
 *     the Mutating and ValidatingWebhookConfiguration
 *     (<base>-mutating-webhook-configuration and
 *     <base>-validating-webhook-configuration, <base> being the service
 *     name without "-webhook-service"), one JSON patch per object with a
 *     "test" of each entry's name before its "add" (a merge patch would
 *     replace the whole list, and a concurrent edit fails the test rather
 *     than being overwritten); and spec.conversion.webhook.clientConfig.
 *     caBundle of the CRDs listed whose conversion strategy is Webhook
 *     (tested likewise). An object that does not exist is skipped; one
 *     already carrying the bundle is not written;
 *  5. ready (certmgr_ready) once a pass finished; the next pass runs
 *     when the certificates come due (lookahead before the first expiry),
 *     at most check_interval_ms (12 h) later, or about a second after
 *     the Secret changed (a watch on that one Secret), or
 *     certmgr_check_now. A failed pass is retried after retry_ms.
 *
 * Repairs. One informer per target (a field selector on its name)
 * reports every version of it: one whose caBundle is missing or not the
 * bundle of the Secret last read (something reset or overwrote it: an
 * API server restored from a backup, a kubectl apply of the manifests)
 * asks for a pass repair_ms later (200 ms). Every pass reads the Secret
 * first and writes a target only when it differs from that Secret's
 * bundle, and its own writes come back equal, so there is no write
 * loop; a burst of changes shares one pass, and repairs asked for within
 * 10 s of the last one wait twice as long (up to 30 s), so a writer that
 * keeps putting another bundle back is met at a bounded rate.
 *
 * Replicas. With leader election every replica runs a certmgr (as
 * Kueue's rotator does: it does not need the lease), all on one Secret:
 * two that find none both generate, one POST wins and the other's gets
 * 409 AlreadyExists, so it reads the winner's Secret at once and uses
 * those certificates (conflicts in the stats); a Secret rewritten by one
 * reaches the others through their Secret watch. They all inject the
 * same bundle, so none ever writes over another.
 *
 * CA rotation. A new CA (the old one expiring within lookahead) is
 * written into ca.crt followed by the CA it replaces while that one is
 * still valid (certs_keep_previous_ca): the bundle trusts both, so a
 * replica still serving a certificate of the old CA is verified until it
 * switches. The previous CA is dropped once expired
 * (certs_drop_expired_cas, written back at the next pass).
 *
 * Files in webhook.certDir are not written: in a cluster the Secret is
 * mounted there read-only (Kueue's Deployment), and the webhook server
 * takes the PEMs in memory.
 *
 * Lifetimes: on a kube client (borrowed; must outlive it). Threads: the
 * loop thread only; on_certs runs on it.
 */
#ifndef CONTROLLER_CERTMGR_H
#define CONTROLLER_CERTMGR_H

#include <stdbool.h>
#include <stdint.h>

#include "webhook/certs.h"

struct kube;
struct certmgr;

/* New certificates are in place (c borrowed for the call). Return 0, or
 * -1 when they could not be used (the pass is retried). */
typedef int certmgr_certs_fn(void *ud, const struct certs *c);

struct certmgr_opts {
	const char *namespace;       /* the Secret's and Service's; required */
	const char *secret_name;     /* webhookSecretName; required */
	const char *service_name;    /* webhookServiceName; required */
	const char *mutating_name;   /* NULL: <base>-mutating-webhook-
				      * configuration */
	const char *validating_name; /* NULL: <base>-validating-... */
	const char *const *crds;     /* CRD names for conversion caBundles,
				      * NULL-terminated; NULL: Kueue's
				      * (certmgr_default_crds) */
	enum certs_key_type key_type; /* CERTS_RSA_2048 (Kueue's) */
	int64_t check_interval_ms;   /* 0: CERTS_CHECK_INTERVAL_S */
	int64_t retry_ms;            /* after a failed pass; 0: 5 s */
	int64_t repair_ms;           /* a pass this long after a target's
				      * bundle was seen wrong; 0: 200 ms */
	int64_t ca_validity_s;       /* new CAs; 0: CERTS_CA_VALIDITY_S */
	int64_t serving_validity_s;  /* new serving certificates; 0:
				      * CERTS_SERVING_VALIDITY_S */
	int64_t lookahead_s;         /* renew this long before expiry; 0:
				      * CERTS_LOOKAHEAD_S (90 days). Tests
				      * shorten all three to seconds */
	bool no_watch;               /* tests: no Secret or target watch */
	certmgr_certs_fn *on_certs;  /* required */
	void *ud;                    /* borrowed */
};

struct certmgr_stats {
	uint64_t passes;      /* finished passes */
	uint64_t failures;    /* failed passes */
	uint64_t generated;   /* certs_generate (new CA) */
	uint64_t renewed;     /* certs_renew_serving */
	uint64_t secret_writes; /* POST or PATCH of the Secret accepted */
	uint64_t injections;  /* webhook configuration / CRD patches
				 accepted */
	uint64_t handed;      /* on_certs calls that returned 0 */
	uint64_t conflicts;   /* Secret writes lost to another writer (409) */
	uint64_t repairs;     /* repair passes asked for by a target watch */
};

/* NULL-terminated names of the Kueue CRDs that may use Webhook
 * conversion (static). */
const char *const *certmgr_default_crds(void);

/* Starts the first pass at once. Strings are copied. */
struct certmgr *certmgr_new(struct kube *k, const struct certmgr_opts *o);
/* Cancels everything in flight. NULL-safe. */
void certmgr_free(struct certmgr *cm);

/* True once a pass put the certificates and every caBundle in place
 * (stays true across later passes). */
bool certmgr_ready(const struct certmgr *cm);
/* The certificates in use (borrowed until the next pass), or NULL. */
const struct certs *certmgr_certs(const struct certmgr *cm);
/* Runs a pass soon (after the current one). */
void certmgr_check_now(struct certmgr *cm);
const struct certmgr_stats *certmgr_stats(const struct certmgr *cm);

/* "<base>-mutating-webhook-configuration" for a service name (new). */
char *certmgr_webhook_config_name(const char *service, bool mutating);
/* "<base>-visibility-server" (new): the visibility API's Service, whose
 * names the serving certificate carries too (controller/visibility.h);
 * a certificate without them is renewed. */
char *certmgr_visibility_service_name(const char *service);

#endif
