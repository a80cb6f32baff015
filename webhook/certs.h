/*
 * certs: the webhook server's certificates, as Kueue's internal
 * certificate management makes them (kueue-api.md §15.2, after the
 * open-policy-agent cert-controller rotator): a self-signed CA (CN
 * kueue-ca, O kueue, 10 years) and a serving certificate it signs for the
 * webhook Service (1 year, serverAuth, NotBefore backdated one hour),
 * renewed when either expires within 90 days.
 *
 * Pure functions apart from certs_load_dir / certs_write_dir: nothing here
 * talks to the API server. The controller owns the Secret (read it with
 * certs_from_secret_data, write certs_to_secret_data), the caBundle
 * injection (certs_ca_bundle) and the 12-hour check (certs_check); it
 * hands cert_pem/key_pem to webhook_set_certificate.
 *
 * DESIGN. Keys are RSA 2048 by default, as Kueue's, so a cueue Secret and
 * a Kueue Secret are interchangeable; ECDSA P-256 is there for tests (a
 * P-256 key costs ~0.1 ms where RSA 2048 costs tens of ms). Every time is
 * passed in (now_s), never read from the clock, so expiry is testable.
 *
 * Threads: any; no shared state. Errors: -1 + err (P6).
 */
#ifndef WEBHOOK_CERTS_H
#define WEBHOOK_CERTS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/errors.h"

struct json_t;

/* cert-controller's numbers (kueue-api.md §15.2). */
#define CERTS_CA_VALIDITY_S ((int64_t)10 * 365 * 86400)
#define CERTS_SERVING_VALIDITY_S ((int64_t)365 * 86400)
#define CERTS_BACKDATE_S ((int64_t)3600)
#define CERTS_LOOKAHEAD_S ((int64_t)90 * 86400)
#define CERTS_CHECK_INTERVAL_S ((int64_t)12 * 3600)
#define CERTS_CA_CN "kueue-ca"
#define CERTS_ORG "kueue"

/* The files of webhook.certDir and the keys of the kubernetes.io/tls
 * Secret Kueue fills. */
#define CERTS_CA_CRT "ca.crt"
#define CERTS_CA_KEY "ca.key"
#define CERTS_TLS_CRT "tls.crt"
#define CERTS_TLS_KEY "tls.key"

enum certs_key_type {
	CERTS_RSA_2048 = 0, /* default: Kueue's */
	CERTS_EC_P256,
};

/* A CA and a serving certificate, as PEM texts. */
struct certs {
	char *ca_pem;     /* owned; the CA certificate, then at most one
			   * previous CA still trusted (see
			   * certs_keep_previous_ca); NULL if unknown */
	char *ca_key_pem; /* owned; the CA key (PKCS#8), NULL when the CA
			   * came from outside (cert-manager, a directory) */
	char *cert_pem;   /* owned; the serving certificate */
	char *key_pem;    /* owned; its key (PKCS#8) */
};

#define CERTS_INIT { NULL, NULL, NULL, NULL }

void certs_release(struct certs *c);

struct certs_opts {
	const char *service;   /* webhookServiceName; required */
	const char *namespace; /* the manager's namespace; required */
	const char *const *extra_dns; /* more DNS SANs; NULL-terminated or
				       * NULL */
	const char *const *ips; /* IP SANs, NULL-terminated; NULL means
				 * { "127.0.0.1" } (a node-local or test
				 * caller dials the IP) */
	enum certs_key_type key_type;
	int64_t now_s;          /* epoch seconds; NotBefore = now - 1 h */
	int64_t ca_validity_s;      /* 0: CERTS_CA_VALIDITY_S */
	int64_t serving_validity_s; /* 0: CERTS_SERVING_VALIDITY_S */
};

/*
 * The DNS names of the serving certificate: <svc>.<ns>.svc (also its CN,
 * the name kube-apiserver dials), <svc>, <svc>.<ns>,
 * <svc>.<ns>.svc.cluster.local, then extra_dns. Returns a new
 * NULL-terminated array of new strings (free each and the array).
 */
char **certs_dns_names(const struct certs_opts *o);

/*
 * Makes a new CA and a serving certificate it signs into out (released
 * first). Returns 0, or -1 + err (bad options, OpenSSL failure).
 */
int certs_generate(const struct certs_opts *o, struct certs *out,
		   struct err *err) MUST_CHECK;

/*
 * Replaces c's serving certificate and key with new ones signed by c's CA
 * (which needs ca_key_pem), keeping the CA, so caBundles stay valid.
 * c is untouched on failure.
 */
int certs_renew_serving(const struct certs_opts *o, struct certs *c,
			struct err *err) MUST_CHECK;

/* What a check found, ordered from best to worst. */
enum certs_verdict {
	CERTS_OK = 0,        /* both valid beyond the lookahead */
	CERTS_RENEW_SERVING, /* CA fine; serving cert missing, invalid,
			      * for another name, not signed by the CA or
			      * expiring: certs_renew_serving */
	CERTS_RENEW_ALL,     /* CA missing, unusable or expiring:
			      * certs_generate */
};

/*
 * The rotator's check at now_s with a lookahead of lookahead_s (0:
 * CERTS_LOOKAHEAD_S): parses every PEM, checks the CA is a CA with its
 * key (when ca_key_pem is set), the serving key matches its certificate,
 * the certificate is signed by the CA and valid for dns_name (NULL: any
 * name), and neither
 * expires before now + lookahead (nor starts after now). why (may be
 * NULL) gets the first reason when the verdict is not CERTS_OK.
 */
enum certs_verdict certs_check(const struct certs *c, const char *dns_name,
			       int64_t now_s, int64_t lookahead_s,
			       struct err *why);

/* notAfter of the first certificate in pem, as epoch seconds. */
int certs_not_after(const char *pem, int64_t *out, struct err *err)
	MUST_CHECK;
/* notBefore likewise. */
int certs_not_before(const char *pem, int64_t *out, struct err *err)
	MUST_CHECK;

/*
 * A CA rotation's overlap. When certs_generate replaces a CA that is
 * still valid, certificates it signed may still be served for a while
 * (this replica until it switches, other replicas until they read the
 * new Secret), so the caBundle must trust both: certs_keep_previous_ca
 * appends the first certificate of old_ca_pem (the CA being replaced)
 * to c->ca_pem, after the new CA, which stays first (the one ca.key
 * matches; Kueue's cert-controller reads it the same way). Nothing
 * happens when old_ca_pem holds no certificate, holds c's own CA, no CA,
 * or one expired at now_s. Returns true when it appended. At most one
 * previous CA is ever kept: the next rotation keeps only the CA it
 * replaces.
 */
bool certs_keep_previous_ca(struct certs *c, const char *old_ca_pem,
			    int64_t now_s);
/* Drops from c->ca_pem the certificates after the first that have
 * expired at now_s (a previous CA whose time is over). Returns true when
 * it dropped any. */
bool certs_drop_expired_cas(struct certs *c, int64_t now_s);
/* The number of certificates in c->ca_pem (0 when none or unreadable). */
size_t certs_ca_count(const struct certs *c);

/*
 * The Secret's data map: a new JSON object { "ca.crt", "ca.key",
 * "tls.crt", "tls.key" } of base64 values (keys whose PEM is NULL are
 * left out), what a kubernetes.io/tls Secret's "data" holds.
 */
struct json_t *certs_to_secret_data(const struct certs *c);

/*
 * Reads a Secret's data map (borrowed) into out (released first): every
 * value must be base64 of PEM; tls.crt and tls.key are required, ca.crt
 * and ca.key optional. Returns -1 + err naming the bad key otherwise
 * (out left empty).
 */
int certs_from_secret_data(const struct json_t *data, struct certs *out,
			   struct err *err) MUST_CHECK;

/* The caBundle value (base64 of ca_pem) as a new string; NULL without a
 * CA. */
char *certs_ca_bundle(const struct certs *c);

/*
 * Loads tls.crt and tls.key (required) and ca.crt (optional) from dir,
 * as webhook.certDir holds them when internalCertManagement is off.
 * Each file is at most 1 MiB and must hold PEM. out is released first.
 */
int certs_load_dir(const char *dir, struct certs *out, struct err *err)
	MUST_CHECK;

/*
 * Writes tls.crt, tls.key (mode 0600) and ca.crt (when known) into dir
 * (which must exist), each through a temporary file and rename(2), so a
 * reader never sees half a file.
 */
int certs_write_dir(const char *dir, const struct certs *c, struct err *err)
	MUST_CHECK;

#endif
