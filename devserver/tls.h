/*
 * tls: the devserver's certificates, made at start with OpenSSL: a
 * self-signed CA and a serving certificate it signs (EC P-256, SHA-256,
 * one year), with the subject alternative names clients dial
 * (IP:127.0.0.1 and DNS:localhost for the API server). The PEM texts go to
 * libmicrohttpd (GnuTLS) and the CA into the kubeconfig's
 * certificate-authority-data, so kubectl and cueue verify the server
 * without insecure-skip-tls-verify.
 *
 * Nothing is written to disk here. Threads: any; no shared state.
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

#endif
