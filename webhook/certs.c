/*
 * certs: X.509 with OpenSSL 3. Extensions other than subjectAltName go
 * through their config-string form (the readable way to state what Go's
 * verifier checks); the SANs are built as GENERAL_NAMEs so no name can
 * be misread as config syntax.
 */
#include "webhook/certs.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/b64.h"

#define MAX_FILE ((size_t)1 << 20)

void certs_release(struct certs *c)
{
	if (!c)
		return;
	free(c->ca_pem);
	free(c->ca_key_pem);
	free(c->cert_pem);
	free(c->key_pem);
	memset(c, 0, sizeof(*c));
}

/* ---- PEM in and out ---- */

static char *bio_text(BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	char *s = xmalloc((size_t)n + 1);

	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	return s;
}

static char *cert_to_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s;

	if (!b || !PEM_write_bio_X509(b, x))
		BUG("PEM_write_bio_X509 failed");
	s = bio_text(b);
	BIO_free(b);
	return s;
}

static char *key_to_pem(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s;

	if (!b || !PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL))
		BUG("PEM_write_bio_PrivateKey failed");
	s = bio_text(b);
	BIO_free(b);
	return s;
}

static X509 *cert_from_pem(const char *pem)
{
	BIO *b;
	X509 *x;

	if (!pem)
		return NULL;
	b = BIO_new_mem_buf(pem, -1);
	x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	ERR_clear_error();
	return x;
}

static EVP_PKEY *key_from_pem(const char *pem)
{
	BIO *b;
	EVP_PKEY *k;

	if (!pem)
		return NULL;
	b = BIO_new_mem_buf(pem, -1);
	k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	ERR_clear_error();
	return k;
}

/* ---- building certificates ---- */

static EVP_PKEY *new_key(enum certs_key_type t)
{
	EVP_PKEY *k = t == CERTS_EC_P256 ? EVP_EC_gen("P-256")
					 : EVP_RSA_gen(2048);

	ERR_clear_error();
	return k;
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

static int add_sans(X509 *x, char *const *dns, const char *const *ips)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	int rc = -1;

	if (!gens)
		return -1;
	for (size_t i = 0; dns && dns[i]; i++) {
		GENERAL_NAME *g = GENERAL_NAME_new();
		ASN1_IA5STRING *s = ASN1_IA5STRING_new();

		if (!g || !s || !ASN1_STRING_set(s, dns[i], -1)) {
			GENERAL_NAME_free(g);
			ASN1_IA5STRING_free(s);
			goto out;
		}
		GENERAL_NAME_set0_value(g, GEN_DNS, s);
		sk_GENERAL_NAME_push(gens, g);
	}
	for (size_t i = 0; ips && ips[i]; i++) {
		GENERAL_NAME *g;
		ASN1_OCTET_STRING *ip = a2i_IPADDRESS(ips[i]);

		if (!ip)
			goto out;
		g = GENERAL_NAME_new();
		if (!g) {
			ASN1_OCTET_STRING_free(ip);
			goto out;
		}
		GENERAL_NAME_set0_value(g, GEN_IPADD, ip);
		sk_GENERAL_NAME_push(gens, g);
	}
	if (X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0,
			  X509V3_ADD_DEFAULT) == 1)
		rc = 0;
out:
	GENERAL_NAMES_free(gens);
	return rc;
}

/* A certificate for key with subject O=kueue, CN=cn, valid from now - 1 h
 * to now + validity_s (cert-controller's window); issuer name and
 * signature are the caller's. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, int64_t now_s,
		      int64_t validity_s)
{
	X509 *x = X509_new();
	unsigned char serial[16];
	BIGNUM *bn;
	X509_NAME *name;
	time_t now = (time_t)now_s;

	if (!x)
		return NULL;
	X509_set_version(x, 2);
	if (RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] &= 0x7f; /* positive */
	serial[0] |= 0x01; /* and never zero */
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x))) {
		BN_free(bn);
		goto fail;
	}
	BN_free(bn);
	if (!X509_time_adj_ex(X509_getm_notBefore(x), 0,
			      -(long)CERTS_BACKDATE_S, &now) ||
	    !X509_time_adj_ex(X509_getm_notAfter(x), (int)(validity_s / 86400),
			      (long)(validity_s % 86400), &now))
		goto fail;
	X509_set_pubkey(x, key);
	name = X509_get_subject_name(x);
	if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
					(const unsigned char *)CERTS_ORG, -1,
					-1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
					(const unsigned char *)cn, -1, -1, 0))
		goto fail;
	return x;
fail:
	X509_free(x);
	return NULL;
}

char **certs_dns_names(const struct certs_opts *o)
{
	size_t n = 0, k = 0;
	char **v;

	while (o->extra_dns && o->extra_dns[n])
		n++;
	v = xcalloc(n + 5, sizeof(*v));
	v[k++] = xasprintf("%s.%s.svc", o->service, o->namespace);
	v[k++] = xstrdup(o->service);
	v[k++] = xasprintf("%s.%s", o->service, o->namespace);
	v[k++] = xasprintf("%s.%s.svc.cluster.local", o->service,
			   o->namespace);
	for (size_t i = 0; i < n; i++)
		v[k++] = xstrdup(o->extra_dns[i]);
	v[k] = NULL;
	return v;
}

static void free_names(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int check_opts(const struct certs_opts *o, struct err *err)
{
	if (!o->service || !*o->service || !o->namespace || !*o->namespace)
		return err_set(err, "certs: service and namespace are required");
	if (o->ca_validity_s < 0 || o->serving_validity_s < 0)
		return err_set(err, "certs: negative validity");
	return 0;
}

/* The serving certificate for o, signed by ca with ca_key, into new PEM
 * texts. */
static int make_serving(const struct certs_opts *o, X509 *ca, EVP_PKEY *ca_key,
			char **cert_pem, char **key_pem, struct err *err)
{
	static const char *const loopback[] = { "127.0.0.1", NULL };
	EVP_PKEY *key = new_key(o->key_type);
	char **dns = certs_dns_names(o);
	int64_t validity = o->serving_validity_s ? o->serving_validity_s
						 : CERTS_SERVING_VALIDITY_S;
	X509 *x = NULL;
	int rc = -1;

	if (!key) {
		err_set(err, "certs: cannot generate the serving key");
		goto out;
	}
	x = new_cert(key, dns[0], o->now_s, validity);
	if (!x || !X509_set_issuer_name(x, X509_get_subject_name(ca)) ||
	    add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    add_ext(x, ca, NID_key_usage,
		    "critical,digitalSignature,keyEncipherment") ||
	    add_ext(x, ca, NID_ext_key_usage, "serverAuth") ||
	    add_ext(x, ca, NID_authority_key_identifier, "keyid:always")) {
		err_set(err, "certs: cannot build the serving certificate");
		goto out;
	}
	if (add_sans(x, dns, o->ips ? o->ips : loopback)) {
		err_set(err, "certs: bad subject alternative name");
		goto out;
	}
	if (!X509_sign(x, ca_key, EVP_sha256())) {
		err_set(err, "certs: cannot sign the serving certificate");
		goto out;
	}
	*cert_pem = cert_to_pem(x);
	*key_pem = key_to_pem(key);
	rc = 0;
out:
	ERR_clear_error();
	free_names(dns);
	X509_free(x);
	EVP_PKEY_free(key);
	return rc;
}

int certs_generate(const struct certs_opts *o, struct certs *out,
		   struct err *err)
{
	EVP_PKEY *ca_key = NULL;
	X509 *ca = NULL;
	struct certs c = CERTS_INIT;
	int64_t validity = o->ca_validity_s ? o->ca_validity_s
					    : CERTS_CA_VALIDITY_S;
	int rc = -1;

	if (check_opts(o, err))
		return -1;
	ca_key = new_key(o->key_type);
	if (!ca_key) {
		err_set(err, "certs: cannot generate the CA key");
		goto out;
	}
	ca = new_cert(ca_key, CERTS_CA_CN, o->now_s, validity);
	if (!ca || !X509_set_issuer_name(ca, X509_get_subject_name(ca)) ||
	    add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE") ||
	    add_ext(ca, ca, NID_key_usage,
		    "critical,digitalSignature,keyEncipherment,keyCertSign") ||
	    add_ext(ca, ca, NID_subject_key_identifier, "hash") ||
	    !X509_sign(ca, ca_key, EVP_sha256())) {
		err_set(err, "certs: cannot make the CA certificate");
		goto out;
	}
	if (make_serving(o, ca, ca_key, &c.cert_pem, &c.key_pem, err))
		goto out;
	c.ca_pem = cert_to_pem(ca);
	c.ca_key_pem = key_to_pem(ca_key);
	certs_release(out);
	*out = c;
	memset(&c, 0, sizeof(c));
	rc = 0;
out:
	ERR_clear_error();
	certs_release(&c);
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	return rc;
}

int certs_renew_serving(const struct certs_opts *o, struct certs *c,
			struct err *err)
{
	X509 *ca = cert_from_pem(c->ca_pem);
	EVP_PKEY *ca_key = key_from_pem(c->ca_key_pem);
	char *cert = NULL, *key = NULL;
	int rc = -1;

	if (check_opts(o, err))
		goto out;
	if (!ca || !ca_key) {
		err_set(err, "certs: renewing needs the CA certificate and key");
		goto out;
	}
	if (make_serving(o, ca, ca_key, &cert, &key, err))
		goto out;
	free(c->cert_pem);
	free(c->key_pem);
	c->cert_pem = cert;
	c->key_pem = key;
	rc = 0;
out:
	X509_free(ca);
	EVP_PKEY_free(ca_key);
	return rc;
}

/* ---- checking ---- */

static int asn1_epoch(const ASN1_TIME *t, int64_t *out)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!t || ASN1_TIME_to_tm(t, &tm) != 1)
		return -1;
	*out = (int64_t)timegm(&tm);
	return 0;
}

static int cert_time(const char *pem, bool after, int64_t *out,
		     struct err *err)
{
	X509 *x = cert_from_pem(pem);
	int rc;

	if (!x)
		return err_set(err, "certs: not a PEM certificate");
	rc = asn1_epoch(after ? X509_get0_notAfter(x) : X509_get0_notBefore(x),
			out);
	X509_free(x);
	if (rc)
		return err_set(err, "certs: unreadable validity time");
	return 0;
}

int certs_not_after(const char *pem, int64_t *out, struct err *err)
{
	return cert_time(pem, true, out, err);
}

int certs_not_before(const char *pem, int64_t *out, struct err *err)
{
	return cert_time(pem, false, out, err);
}

/* Is x usable from now until now + lookahead? */
static bool in_window(X509 *x, int64_t now, int64_t lookahead,
		      const char *what, struct err *why)
{
	int64_t nb, na;

	if (asn1_epoch(X509_get0_notBefore(x), &nb) ||
	    asn1_epoch(X509_get0_notAfter(x), &na)) {
		err_set(why, "%s has unreadable validity times", what);
		return false;
	}
	if (nb > now) {
		err_set(why, "%s is not valid yet", what);
		return false;
	}
	if (na <= now + lookahead) {
		err_set(why, "%s expires at %lld, within the renewal window",
			what, (long long)na);
		return false;
	}
	return true;
}

enum certs_verdict certs_check(const struct certs *c, const char *dns_name,
			       int64_t now_s, int64_t lookahead_s,
			       struct err *why)
{
	X509 *ca = cert_from_pem(c->ca_pem), *x = NULL;
	EVP_PKEY *ca_key = NULL, *key = NULL, *ca_pub;
	enum certs_verdict v = CERTS_RENEW_ALL;

	if (!lookahead_s)
		lookahead_s = CERTS_LOOKAHEAD_S;
	if (!ca) {
		err_set(why, "the CA certificate is missing or not PEM");
		goto out;
	}
	if (X509_check_ca(ca) < 1) {
		err_set(why, "the CA certificate is not a CA");
		goto out;
	}
	if (c->ca_key_pem) {
		ca_key = key_from_pem(c->ca_key_pem);
		if (!ca_key || X509_check_private_key(ca, ca_key) != 1) {
			err_set(why, "the CA key does not match the CA");
			goto out;
		}
	}
	if (!in_window(ca, now_s, lookahead_s, "the CA certificate", why))
		goto out;
	v = CERTS_RENEW_SERVING;
	x = cert_from_pem(c->cert_pem);
	key = key_from_pem(c->key_pem);
	if (!x || !key) {
		err_set(why, "the serving certificate or key is missing or "
			"not PEM");
		goto out;
	}
	if (X509_check_private_key(x, key) != 1) {
		err_set(why, "the serving key does not match its certificate");
		goto out;
	}
	ca_pub = X509_get0_pubkey(ca);
	if (!ca_pub || X509_verify(x, ca_pub) != 1) {
		err_set(why, "the serving certificate is not signed by the CA");
		goto out;
	}
	if (dns_name && X509_check_host(x, dns_name, 0, 0, NULL) != 1) {
		err_set(why, "the serving certificate is not valid for %s",
			dns_name);
		goto out;
	}
	if (!in_window(x, now_s, lookahead_s, "the serving certificate", why))
		goto out;
	v = CERTS_OK;
out:
	ERR_clear_error();
	X509_free(ca);
	X509_free(x);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(key);
	return v;
}

/* ---- a CA rotation's overlap ---- */

/* Every certificate of a PEM text, in order (new stack; NULL when it
 * holds none). */
static STACK_OF(X509) *certs_of(const char *pem)
{
	STACK_OF(X509) *st;
	BIO *b;
	X509 *x;

	if (!pem)
		return NULL;
	b = BIO_new_mem_buf(pem, -1);
	st = sk_X509_new_null();
	if (!b || !st)
		BUG("BIO_new_mem_buf or sk_X509_new_null failed");
	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL)))
		if (!sk_X509_push(st, x))
			BUG("sk_X509_push failed");
	BIO_free(b);
	ERR_clear_error();
	if (!sk_X509_num(st)) {
		sk_X509_free(st);
		return NULL;
	}
	return st;
}

static bool expired(X509 *x, int64_t now_s)
{
	int64_t na;

	return asn1_epoch(X509_get0_notAfter(x), &na) || na <= now_s;
}

bool certs_keep_previous_ca(struct certs *c, const char *old_ca_pem,
			    int64_t now_s)
{
	STACK_OF(X509) *old = certs_of(old_ca_pem);
	X509 *cur = cert_from_pem(c->ca_pem), *prev;
	bool kept = false;

	if (!old || !cur)
		goto out;
	prev = sk_X509_value(old, 0);
	if (!X509_cmp(prev, cur) || expired(prev, now_s) ||
	    X509_check_ca(prev) < 1)
		goto out;
	{
		char *pem = cert_to_pem(prev);
		char *both = xasprintf("%s%s%s", c->ca_pem,
				       c->ca_pem[0] && c->ca_pem[strlen(
					       c->ca_pem) - 1] != '\n'
				       ? "\n" : "", pem);

		free(pem);
		free(c->ca_pem);
		c->ca_pem = both;
		kept = true;
	}
out:
	sk_X509_pop_free(old, X509_free);
	X509_free(cur);
	return kept;
}

bool certs_drop_expired_cas(struct certs *c, int64_t now_s)
{
	STACK_OF(X509) *all = certs_of(c->ca_pem);
	bool dropped = false;
	int n = all ? sk_X509_num(all) : 0;

	for (int i = 1; i < n; i++)
		dropped |= expired(sk_X509_value(all, i), now_s);
	if (dropped) {
		/* the CA itself stays as it was written; the others that
		 * are still valid follow it */
		char *first = cert_to_pem(sk_X509_value(all, 0)), *pem = first;

		for (int i = 1; i < n; i++) {
			X509 *x = sk_X509_value(all, i);
			char *one, *joined;

			if (expired(x, now_s))
				continue;
			one = cert_to_pem(x);
			joined = xasprintf("%s%s", pem, one);
			free(one);
			free(pem);
			pem = joined;
		}
		free(c->ca_pem);
		c->ca_pem = pem;
	}
	sk_X509_pop_free(all, X509_free);
	return dropped;
}

size_t certs_ca_count(const struct certs *c)
{
	STACK_OF(X509) *all = certs_of(c->ca_pem);
	size_t n = all ? (size_t)sk_X509_num(all) : 0;

	sk_X509_pop_free(all, X509_free);
	return n;
}

/* ---- the Secret ---- */

static const struct {
	const char *key;
	size_t off;
	bool required;
} secret_keys[] = {
	{ CERTS_CA_CRT, offsetof(struct certs, ca_pem), false },
	{ CERTS_CA_KEY, offsetof(struct certs, ca_key_pem), false },
	{ CERTS_TLS_CRT, offsetof(struct certs, cert_pem), true },
	{ CERTS_TLS_KEY, offsetof(struct certs, key_pem), true },
};
#define NSECRET_KEYS (sizeof(secret_keys) / sizeof(secret_keys[0]))

static char **slot(struct certs *c, size_t i)
{
	return (char **)((char *)c + secret_keys[i].off);
}

static const char *cslot(const struct certs *c, size_t i)
{
	return *(char *const *)((const char *)c + secret_keys[i].off);
}

json_t *certs_to_secret_data(const struct certs *c)
{
	json_t *d = json_object();

	for (size_t i = 0; i < NSECRET_KEYS; i++) {
		const char *pem = cslot(c, i);

		if (pem) {
			char *b = b64_encode(pem, strlen(pem), B64_STD);

			json_object_set_new(d, secret_keys[i].key,
					    json_string(b));
			free(b);
		}
	}
	return d;
}

static bool looks_pem(const char *s, size_t n)
{
	return n == strlen(s) && strstr(s, "-----BEGIN ") != NULL;
}

int certs_from_secret_data(const json_t *data, struct certs *out,
			   struct err *err)
{
	struct certs c = CERTS_INIT;

	certs_release(out);
	if (!json_is_object(data))
		return err_set(err, "secret data is not an object");
	for (size_t i = 0; i < NSECRET_KEYS; i++) {
		const json_t *v = json_object_get(data, secret_keys[i].key);
		unsigned char *pem;
		size_t n = 0;

		if (!v || json_is_null(v)) {
			if (!secret_keys[i].required)
				continue;
			err_set(err, "secret data has no %s",
				secret_keys[i].key);
			goto fail;
		}
		/* whitespace is skipped: PEM pasted into YAML */
		pem = json_is_string(v) ? b64_decode(json_string_value(v),
						     json_string_length(v),
						     B64_SKIP_SPACE, &n, NULL)
					: NULL;
		if (!pem || !looks_pem((char *)pem, n)) {
			free(pem);
			err_set(err, "secret data %s is not base64 of PEM",
				secret_keys[i].key);
			goto fail;
		}
		*slot(&c, i) = (char *)pem;
	}
	*out = c;
	return 0;
fail:
	certs_release(&c);
	return -1;
}

char *certs_ca_bundle(const struct certs *c)
{
	return c->ca_pem ? b64_encode(c->ca_pem, strlen(c->ca_pem), B64_STD)
			 : NULL;
}

/* ---- certDir ---- */

static char *read_small(const char *path, struct err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	size_t n;

	if (!f) {
		err_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = xmalloc(MAX_FILE + 1);
	n = fread(buf, 1, MAX_FILE + 1, f);
	if (ferror(f) || n > MAX_FILE) {
		err_set(err, "%s: %s", path, ferror(f) ? "read error"
							: "larger than 1 MiB");
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (!looks_pem(buf, n)) {
		err_set(err, "%s: not PEM", path);
		free(buf);
		return NULL;
	}
	return xrealloc(buf, n + 1);
}

int certs_load_dir(const char *dir, struct certs *out, struct err *err)
{
	struct certs c = CERTS_INIT;
	char *p;

	certs_release(out);
	p = xasprintf("%s/%s", dir, CERTS_TLS_CRT);
	c.cert_pem = read_small(p, err);
	free(p);
	if (!c.cert_pem)
		goto fail;
	p = xasprintf("%s/%s", dir, CERTS_TLS_KEY);
	c.key_pem = read_small(p, err);
	free(p);
	if (!c.key_pem)
		goto fail;
	p = xasprintf("%s/%s", dir, CERTS_CA_CRT);
	if (access(p, F_OK) == 0) {
		c.ca_pem = read_small(p, err);
		if (!c.ca_pem) {
			free(p);
			goto fail;
		}
	}
	free(p);
	*out = c;
	return 0;
fail:
	certs_release(&c);
	return -1;
}

static int write_atomic(const char *dir, const char *name, const char *text,
			mode_t mode, struct err *err)
{
	char *path = xasprintf("%s/%s", dir, name);
	char *tmp = xasprintf("%s/.%s.tmp", dir, name);
	size_t n = strlen(text);
	int fd, rc = -1;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		err_set(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (write(fd, text, n) != (ssize_t)n || fsync(fd) != 0) {
		err_set(err, "%s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		err_set(err, "%s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(path);
	free(tmp);
	return rc;
}

int certs_write_dir(const char *dir, const struct certs *c, struct err *err)
{
	if (!c->cert_pem || !c->key_pem)
		return err_set(err, "certs: no serving certificate to write");
	if (write_atomic(dir, CERTS_TLS_CRT, c->cert_pem, 0644, err) ||
	    write_atomic(dir, CERTS_TLS_KEY, c->key_pem, 0600, err))
		return -1;
	if (c->ca_pem && write_atomic(dir, CERTS_CA_CRT, c->ca_pem, 0644, err))
		return -1;
	return 0;
}
