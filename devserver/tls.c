/*
 * tls: CA + serving certificate generation with OpenSSL 3 (EVP, X509v3
 * extensions through their config-string form, which is the readable way
 * to state what Go's verifier checks: basicConstraints, keyUsage,
 * extendedKeyUsage serverAuth, subjectAltName).
 */
#include "devserver/tls.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

static char *bio_text(BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	char *s = xmalloc((size_t)n + 1);

	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	return s;
}

static char *cert_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s;

	PEM_write_bio_X509(b, x);
	s = bio_text(b);
	BIO_free(b);
	return s;
}

static char *key_pem(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s;

	PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
	s = bio_text(b);
	BIO_free(b);
	return s;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ex;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ex)
		return -1;
	X509_add_ext(cert, ex, -1);
	X509_EXTENSION_free(ex);
	return 0;
}

static X509 *new_cert(EVP_PKEY *key, const char *cn)
{
	X509 *x = X509_new();
	unsigned char serial[16];
	BIGNUM *bn;
	X509_NAME *name;

	X509_set_version(x, 2);
	RAND_bytes(serial, sizeof(serial));
	serial[0] &= 0x7f;
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
	BN_free(bn);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600);
	X509_set_pubkey(x, key);
	name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	return x;
}

int tls_generate(const char *const *dns_names, const char *const *ips,
		 struct tls_material *out, struct err *err)
{
	EVP_PKEY *ca_key = EVP_EC_gen("P-256"), *key = EVP_EC_gen("P-256");
	X509 *ca = NULL, *crt = NULL;
	char san[1024] = "";
	size_t o = 0;
	int rc = -1;

	if (!ca_key || !key) {
		err_set(err, "tls: cannot generate EC keys");
		goto out;
	}
	ca = new_cert(ca_key, "cueue-devserver-ca");
	X509_set_issuer_name(ca, X509_get_subject_name(ca));
	if (add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE") ||
	    add_ext(ca, ca, NID_key_usage,
		    "critical,keyCertSign,cRLSign,digitalSignature") ||
	    add_ext(ca, ca, NID_subject_key_identifier, "hash") ||
	    !X509_sign(ca, ca_key, EVP_sha256())) {
		err_set(err, "tls: cannot make the CA certificate");
		goto out;
	}
	for (size_t i = 0; dns_names && dns_names[i]; i++)
		o += (size_t)snprintf(san + o, sizeof(san) - o, "%sDNS:%s",
				      o ? "," : "", dns_names[i]);
	for (size_t i = 0; ips && ips[i] && o < sizeof(san); i++)
		o += (size_t)snprintf(san + o, sizeof(san) - o, "%sIP:%s",
				      o ? "," : "", ips[i]);
	if (o >= sizeof(san)) {
		err_set(err, "tls: too many subject alternative names");
		goto out;
	}
	crt = new_cert(key, dns_names && dns_names[0] ? dns_names[0]
						      : "cueue-devserver");
	X509_set_issuer_name(crt, X509_get_subject_name(ca));
	if (add_ext(crt, ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    add_ext(crt, ca, NID_key_usage,
		    "critical,digitalSignature,keyEncipherment") ||
	    add_ext(crt, ca, NID_ext_key_usage, "serverAuth") ||
	    add_ext(crt, ca, NID_authority_key_identifier, "keyid:always") ||
	    (o && add_ext(crt, ca, NID_subject_alt_name, san)) ||
	    !X509_sign(crt, ca_key, EVP_sha256())) {
		err_set(err, "tls: cannot make the serving certificate");
		goto out;
	}
	out->ca_pem = cert_pem(ca);
	out->cert_pem = cert_pem(crt);
	out->key_pem = key_pem(key);
	rc = 0;
out:
	X509_free(ca);
	X509_free(crt);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(key);
	return rc;
}

void tls_material_release(struct tls_material *m)
{
	free(m->ca_pem);
	free(m->cert_pem);
	free(m->key_pem);
	m->ca_pem = m->cert_pem = m->key_pem = NULL;
}
