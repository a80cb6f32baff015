/*
 * tls: the devserver's certificates, made at start with OpenSSL: a
 * self-signed CA and a serving certificate it signs (EC P-256, SHA-256,
 * one year), with the subject alternative names clients dial
 * (IP:127.0.0.1 and DNS:localhost for the API server). The PEM texts go to
 * libmicrohttpd (GnuTLS) and the CA into the kubeconfig's
 * certificate-authority-data, so kubectl and cueue verify the server
 * without insecure-skip-tls-verify.
 *
 * With --data-dir the material and the bearer token are kept there
 * (tls_keep, tls_token_keep: DIR/tls.pem and DIR/token, mode 0600,
 * written atomically), so a restarted devserver serves with the same CA
 * and token and the kubeconfigs clients hold keep working. Nothing else
 * is written to disk here. Threads: any; no shared state.
 */
#ifndef DEVSERVER_TLS_H
#define DEVSERVER_TLS_H

#include "model/errors.h"

struct tls_material {
	char *ca_pem;   /* owned; the CA certificate */
	char *cert_pem; /* owned; the serving certificate */
	char *key_pem;  /* owned; its private key (PKCS#8) */
};

#define TLS_MATERIAL_INIT { NULL, NULL, NULL }

/*
 * Makes a CA and a serving certificate for the given names (NULL-
 * terminated lists; either may be NULL). Returns 0, or -1 + err.
 */
int tls_generate(const char *const *dns_names, const char *const *ips,
		 struct tls_material *out, struct err *err) MUST_CHECK;
void tls_material_release(struct tls_material *m);

enum tls_kept {
	TLS_KEPT_LOADED,  /* path held a valid set: reused */
	TLS_KEPT_NEW,     /* path was absent: made and written */
	TLS_KEPT_RENEWED, /* path's serving certificate expired (or expires
			     within a day): a new set (new CA) replaced it */
};

/*
 * The material kept at path: the CA certificate, the serving certificate
 * and its private key, PEM, in that order. Loads it when the certificate
 * is signed by that CA, matches the key and is valid for one more day;
 * otherwise makes a new set for the names (as tls_generate) and writes it
 * there (mode 0600, temp file + rename). A file that is there but does
 * not hold such a set is an error naming it; it is never replaced, since
 * clients may trust its CA. Returns 0 with *how set, or -1 + err.
 */
int tls_keep(const char *path, const char *const *dns_names,
	     const char *const *ips, struct tls_material *out,
	     enum tls_kept *how, struct err *err) MUST_CHECK;

/*
 * The bearer token kept at path (one line). given (a --token flag) wins
 * and is written there when the file differs; without it the stored
 * token is reused, or a new random one (32 hex digits) is made and
 * written (mode 0600). A stored token that is empty or holds anything
 * but printable ASCII without spaces is an error naming the file.
 * *token: new. Returns 0, or -1 + err.
 */
int tls_token_keep(const char *path, const char *given, char **token,
		   struct err *err) MUST_CHECK;

#endif
