/*
 * Suite "webhook_certs": webhook/certs.h, the internal certificate
 * management of kueue-api.md §15.2: the CA and serving certificate's
 * subjects, SANs, key types, extensions and validity window, the
 * rotator's check at chosen times (renewal inside 90 days, wrong name,
 * wrong key, foreign CA), renewal that keeps the CA, a CA rotation's
 * overlap (the previous CA kept after the new one, then dropped once
 * expired), and the Secret and certDir round trips. Certificates are
 * read back with OpenSSL.
 */
#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "suites.h"
#include "test/support/support.h"
#include "webhook/certs.h"

#define NOW ((int64_t)1790000000) /* 2026-09-21 */
#define DAY ((int64_t)86400)
#define SVC_DNS "kueue-webhook-service.kueue-system.svc"

static struct certs_opts opts(enum certs_key_type t)
{
	struct certs_opts o = {
		.service = "kueue-webhook-service",
		.namespace = "kueue-system",
		.key_type = t,
		.now_s = NOW,
	};
	return o;
}

static X509 *parse(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);

	BIO_free(b);
	ck_assert_ptr_nonnull(x);
	return x;
}

static char *name_entry(X509_NAME *n, int nid)
{
	char buf[256];

	ck_assert_int_gt(X509_NAME_get_text_by_NID(n, nid, buf, sizeof(buf)),
			 0);
	return xstrdup(buf);
}

/* The SANs of x as "DNS:a,IP:b,..." (new string). */
static char *sans(X509 *x)
{
	GENERAL_NAMES *g = X509_get_ext_d2i(x, NID_subject_alt_name, NULL,
					    NULL);
	char out[1024] = "";
	size_t o = 0;

	for (int i = 0; g && i < sk_GENERAL_NAME_num(g); i++) {
		GENERAL_NAME *n = sk_GENERAL_NAME_value(g, i);

		if (n->type == GEN_DNS)
			o += (size_t)snprintf(out + o, sizeof(out) - o,
					      "%sDNS:%s", o ? "," : "",
					      ASN1_STRING_get0_data(n->d.dNSName));
		else if (n->type == GEN_IPADD) {
			const unsigned char *ip = ASN1_STRING_get0_data(
				n->d.iPAddress);

			o += (size_t)snprintf(out + o, sizeof(out) - o,
					      "%sIP:%d.%d.%d.%d", o ? "," : "",
					      ip[0], ip[1], ip[2], ip[3]);
		}
	}
	GENERAL_NAMES_free(g);
	return xstrdup(out);
}

START_TEST(generate_rsa)
{
	struct certs_opts o = opts(CERTS_RSA_2048);
	struct certs c = CERTS_INIT;
	struct err err = { "" };
	X509 *ca, *x;
	char *s;
	int64_t t;

	ck_assert_msg(certs_generate(&o, &c, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(c.key_pem, "BEGIN PRIVATE KEY"));
	ck_assert_ptr_nonnull(c.ca_key_pem);
	ca = parse(c.ca_pem);
	x = parse(c.cert_pem);
	/* subjects */
	s = name_entry(X509_get_subject_name(ca), NID_commonName);
	ck_assert_str_eq(s, "kueue-ca");
	free(s);
	s = name_entry(X509_get_subject_name(ca), NID_organizationName);
	ck_assert_str_eq(s, "kueue");
	free(s);
	s = name_entry(X509_get_subject_name(x), NID_commonName);
	ck_assert_str_eq(s, SVC_DNS);
	free(s);
	s = name_entry(X509_get_issuer_name(x), NID_commonName);
	ck_assert_str_eq(s, "kueue-ca");
	free(s);
	/* keys and extensions */
	ck_assert_int_eq(EVP_PKEY_get_base_id(X509_get0_pubkey(x)),
			 EVP_PKEY_RSA);
	ck_assert_int_eq(EVP_PKEY_get_bits(X509_get0_pubkey(x)), 2048);
	ck_assert_int_eq(EVP_PKEY_get_bits(X509_get0_pubkey(ca)), 2048);
	ck_assert_int_eq(X509_check_ca(ca), 1);
	ck_assert_int_eq(X509_check_ca(x), 0);
	ck_assert(X509_get_key_usage(ca) & KU_KEY_CERT_SIGN);
	ck_assert(X509_get_extended_key_usage(x) & XKU_SSL_SERVER);
	ck_assert_int_eq(X509_verify(x, X509_get0_pubkey(ca)), 1);
	s = sans(x);
	ck_assert_str_eq(s, "DNS:" SVC_DNS ",DNS:kueue-webhook-service,"
			 "DNS:kueue-webhook-service.kueue-system,"
			 "DNS:" SVC_DNS ".cluster.local,IP:127.0.0.1");
	free(s);
	/* validity: backdated an hour; 1 year and 10 years */
	ck_assert_int_eq(certs_not_before(c.cert_pem, &t, &err), 0);
	ck_assert_int_eq(t, NOW - 3600);
	ck_assert_int_eq(certs_not_after(c.cert_pem, &t, &err), 0);
	ck_assert_int_eq(t, NOW + 365 * DAY);
	ck_assert_int_eq(certs_not_after(c.ca_pem, &t, &err), 0);
	ck_assert_int_eq(t, NOW + 3650 * DAY);
	ck_assert_int_eq(certs_check(&c, SVC_DNS, NOW, 0, &err), CERTS_OK);
	X509_free(ca);
	X509_free(x);
	certs_release(&c);
}
END_TEST

START_TEST(generate_ec_custom_names)
{
	static const char *const extra[] = { "localhost", NULL };
	static const char *const ips[] = { "10.0.0.7", "127.0.0.1", NULL };
	struct certs_opts o = opts(CERTS_EC_P256);
	struct certs c = CERTS_INIT;
	struct err err = { "" };
	X509 *x;
	char *s;

	o.extra_dns = extra;
	o.ips = ips;
	ck_assert_int_eq(certs_generate(&o, &c, &err), 0);
	x = parse(c.cert_pem);
	ck_assert_int_eq(EVP_PKEY_get_base_id(X509_get0_pubkey(x)),
			 EVP_PKEY_EC);
	s = sans(x);
	ck_assert_ptr_nonnull(strstr(s, ",DNS:localhost,IP:10.0.0.7,"
				     "IP:127.0.0.1"));
	free(s);
	ck_assert_int_eq(certs_check(&c, "localhost", NOW, 0, &err), CERTS_OK);
	X509_free(x);
	certs_release(&c);

	o.ips = (const char *const[]){ "not-an-ip", NULL };
	ck_assert_int_eq(certs_generate(&o, &c, &err), -1);
	ck_assert_str_eq(err.msg, "certs: bad subject alternative name");
	o.service = "";
	ck_assert_int_eq(certs_generate(&o, &c, &err), -1);
	ck_assert_str_eq(err.msg, "certs: service and namespace are required");
	ck_assert_ptr_null(c.cert_pem);
}
END_TEST

START_TEST(renewal_window)
{
	struct certs_opts o = opts(CERTS_EC_P256);
	struct certs c = CERTS_INIT, other = CERTS_INIT, mix;
	struct err err = { "" };
	char *bundle;

	ck_assert_int_eq(certs_generate(&o, &c, &err), 0);
	/* valid until 90 days before expiry */
	ck_assert_int_eq(certs_check(&c, SVC_DNS, NOW + 275 * DAY - 60, 0,
				     &err), CERTS_OK);
	ck_assert_int_eq(certs_check(&c, SVC_DNS, NOW + 275 * DAY + 60, 0,
				     &err), CERTS_RENEW_SERVING);
	ck_assert_ptr_nonnull(strstr(err.msg, "the serving certificate "
				     "expires at"));
	ck_assert_int_eq(certs_check(&c, SVC_DNS, NOW + 3560 * DAY + 60, 0,
				     &err), CERTS_RENEW_ALL);
	ck_assert_ptr_nonnull(strstr(err.msg, "the CA certificate expires"));
	ck_assert_int_eq(certs_check(&c, SVC_DNS, NOW - 2 * 3600, 0, &err),
			 CERTS_RENEW_ALL);
	ck_assert_str_eq(err.msg, "the CA certificate is not valid yet");
	ck_assert_int_eq(certs_check(&c, "elsewhere.svc", NOW, 0, &err),
			 CERTS_RENEW_SERVING);
	ck_assert_str_eq(err.msg, "the serving certificate is not valid for "
			 "elsewhere.svc");
	/* a shorter lookahead */
	ck_assert_int_eq(certs_check(&c, SVC_DNS, NOW + 300 * DAY, 30 * DAY,
				     &err), CERTS_OK);

	/* renewing keeps the CA, and with it the caBundle */
	bundle = certs_ca_bundle(&c);
	o.now_s = NOW + 300 * DAY;
	ck_assert_int_eq(certs_renew_serving(&o, &c, &err), 0);
	ck_assert_int_eq(certs_check(&c, SVC_DNS, NOW + 300 * DAY, 0, &err),
			 CERTS_OK);
	{
		char *b2 = certs_ca_bundle(&c);

		ck_assert_str_eq(b2, bundle);
		free(b2);
	}
	free(bundle);

	/* another CA's certificate, keys that do not match, garbage */
	o.now_s = NOW;
	ck_assert_int_eq(certs_generate(&o, &other, &err), 0);
	mix.ca_pem = c.ca_pem;
	mix.ca_key_pem = c.ca_key_pem;
	mix.cert_pem = other.cert_pem;
	mix.key_pem = other.key_pem;
	ck_assert_int_eq(certs_check(&mix, SVC_DNS, NOW, 0, &err),
			 CERTS_RENEW_SERVING);
	ck_assert_str_eq(err.msg, "the serving certificate is not signed by "
			 "the CA");
	mix.key_pem = c.key_pem;
	ck_assert_int_eq(certs_check(&mix, SVC_DNS, NOW, 0, &err),
			 CERTS_RENEW_SERVING);
	ck_assert_str_eq(err.msg, "the serving key does not match its "
			 "certificate");
	mix.cert_pem = c.cert_pem;
	mix.ca_key_pem = other.ca_key_pem;
	ck_assert_int_eq(certs_check(&mix, SVC_DNS, NOW, 0, &err),
			 CERTS_RENEW_ALL);
	ck_assert_str_eq(err.msg, "the CA key does not match the CA");
	mix.ca_key_pem = NULL; /* a CA from outside: no key to check */
	ck_assert_int_eq(certs_check(&mix, SVC_DNS, NOW + 300 * DAY, 0, NULL),
			 CERTS_OK);
	/* c's renewed certificate starts at NOW + 300 days */
	ck_assert_int_eq(certs_check(&mix, SVC_DNS, NOW, 0, &err),
			 CERTS_RENEW_SERVING);
	ck_assert_str_eq(err.msg, "the serving certificate is not valid yet");
	mix.ca_pem = c.cert_pem;
	ck_assert_int_eq(certs_check(&mix, SVC_DNS, NOW, 0, &err),
			 CERTS_RENEW_ALL);
	ck_assert_str_eq(err.msg, "the CA certificate is not a CA");
	mix.ca_pem = (char *)"garbage";
	ck_assert_int_eq(certs_check(&mix, SVC_DNS, NOW, 0, &err),
			 CERTS_RENEW_ALL);
	mix.ca_pem = NULL;
	ck_assert_int_eq(certs_check(&mix, SVC_DNS, NOW, 0, NULL),
			 CERTS_RENEW_ALL);
	/* renewing without the CA key is refused */
	other.ca_key_pem[0] = '\0';
	ck_assert_int_eq(certs_renew_serving(&o, &other, &err), -1);
	ck_assert_str_eq(err.msg, "certs: renewing needs the CA certificate "
			 "and key");
	certs_release(&c);
	certs_release(&other);
}
END_TEST

START_TEST(secret_round_trip)
{
	struct certs_opts o = opts(CERTS_EC_P256);
	struct certs c = CERTS_INIT, back = CERTS_INIT;
	struct err err = { "" };
	json_t *data, *bad;
	unsigned char *pem;
	size_t n;

	ck_assert_int_eq(certs_generate(&o, &c, &err), 0);
	data = certs_to_secret_data(&c);
	ck_assert_uint_eq(json_object_size(data), 4);
	pem = b64_decode(json_string_value(json_object_get(data, "tls.crt")),
			 json_string_length(json_object_get(data, "tls.crt")),
			 B64_STD, &n, NULL);
	ck_assert_str_eq((char *)pem, c.cert_pem);
	free(pem);
	ck_assert_int_eq(certs_from_secret_data(data, &back, &err), 0);
	ck_assert_str_eq(back.ca_pem, c.ca_pem);
	ck_assert_str_eq(back.ca_key_pem, c.ca_key_pem);
	ck_assert_str_eq(back.cert_pem, c.cert_pem);
	ck_assert_str_eq(back.key_pem, c.key_pem);
	ck_assert_int_eq(certs_check(&back, SVC_DNS, NOW, 0, &err), CERTS_OK);

	/* the empty Secret Kueue's manifests create, and bad values */
	bad = json_object();
	ck_assert_int_eq(certs_from_secret_data(bad, &back, &err), -1);
	ck_assert_str_eq(err.msg, "secret data has no tls.crt");
	ck_assert_ptr_null(back.cert_pem);
	json_object_set(bad, "tls.crt", json_object_get(data, "tls.crt"));
	json_object_set(bad, "tls.key", json_object_get(data, "tls.key"));
	json_object_set_new(bad, "ca.crt", json_string("!!!"));
	ck_assert_int_eq(certs_from_secret_data(bad, &back, &err), -1);
	ck_assert_str_eq(err.msg, "secret data ca.crt is not base64 of PEM");
	json_object_set_new(bad, "ca.crt", json_string("aGVsbG8="));
	ck_assert_int_eq(certs_from_secret_data(bad, &back, &err), -1);
	json_object_del(bad, "ca.crt");
	ck_assert_int_eq(certs_from_secret_data(bad, &back, &err), 0);
	ck_assert_ptr_null(back.ca_pem);
	ck_assert_int_eq(certs_from_secret_data(json_array_get(data, 0), &back,
						&err), -1);
	json_decref(bad);
	json_decref(data);
	certs_release(&back);
	certs_release(&c);
}
END_TEST

START_TEST(cert_dir)
{
	struct certs_opts o = opts(CERTS_EC_P256);
	struct certs c = CERTS_INIT, back = CERTS_INIT;
	struct err err = { "" };
	char dir[] = "/tmp/cueue-whcerts-XXXXXX", *p;
	struct stat st;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(certs_generate(&o, &c, &err), 0);
	ck_assert_int_eq(certs_load_dir(dir, &back, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "tls.crt: No such file"));
	ck_assert_int_eq(certs_write_dir(dir, &c, &err), 0);
	p = xasprintf("%s/tls.key", dir);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(certs_load_dir(dir, &back, &err), 0);
	ck_assert_str_eq(back.cert_pem, c.cert_pem);
	ck_assert_str_eq(back.key_pem, c.key_pem);
	ck_assert_str_eq(back.ca_pem, c.ca_pem);
	ck_assert_ptr_null(back.ca_key_pem);
	/* a file that is not PEM */
	f = fopen(p, "w");
	fputs("nope\n", f);
	fclose(f);
	ck_assert_int_eq(certs_load_dir(dir, &back, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "tls.key: not PEM"));
	ck_assert_ptr_null(back.cert_pem);
	unlink(p);
	free(p);
	/* ca.crt is optional */
	p = xasprintf("%s/ca.crt", dir);
	unlink(p);
	free(p);
	ck_assert_int_eq(certs_write_dir(dir, &(struct certs){ NULL, NULL,
			 c.cert_pem, c.key_pem }, &err), 0);
	ck_assert_int_eq(certs_load_dir(dir, &back, &err), 0);
	ck_assert_ptr_null(back.ca_pem);
	ck_assert_int_eq(certs_write_dir("/nonexistent/dir", &c, &err), -1);
	for (const char *const *n = (const char *const[]){ "tls.crt",
		"tls.key", NULL }; *n; n++) {
		p = xasprintf("%s/%s", dir, *n);
		unlink(p);
		free(p);
	}
	rmdir(dir);
	certs_release(&back);
	certs_release(&c);
}
END_TEST

/* Does the PEM bundle verify cert (PEM) at time at? */
static bool bundle_verifies(const char *bundle, const char *cert, int64_t at)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	BIO *b = BIO_new_mem_buf(bundle, -1), *cb = BIO_new_mem_buf(cert, -1);
	X509 *x, *leaf = PEM_read_bio_X509(cb, NULL, NULL, NULL);
	bool ok;

	while ((x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
		X509_STORE_add_cert(st, x);
		X509_free(x);
	}
	ck_assert_ptr_nonnull(leaf);
	X509_STORE_CTX_init(ctx, st, leaf, NULL);
	X509_STORE_CTX_set_time(ctx, 0, (time_t)at);
	ok = X509_verify_cert(ctx) == 1;
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	X509_free(leaf);
	BIO_free(b);
	BIO_free(cb);
	return ok;
}

START_TEST(ca_overlap)
{
	struct certs_opts o = opts(CERTS_EC_P256);
	struct certs old = CERTS_INIT, neu = CERTS_INIT, third = CERTS_INIT;
	char *kept;

	o.ca_validity_s = 80 * DAY;
	ck_assert_int_eq(certs_generate(&o, &old, NULL), 0);
	/* the rotator replaces a CA inside its window: the new one first,
	 * the old one after it */
	o.now_s = NOW + 10 * DAY;
	ck_assert_int_eq(certs_generate(&o, &neu, NULL), 0);
	kept = xstrdup(neu.ca_pem);
	ck_assert(certs_keep_previous_ca(&neu, old.ca_pem, o.now_s));
	ck_assert_uint_eq(certs_ca_count(&neu), 2);
	ck_assert(!strncmp(neu.ca_pem, kept, strlen(kept)));
	free(kept);
	ck_assert_ptr_nonnull(strstr(neu.ca_pem, old.ca_pem));
	ck_assert_ptr_ne(strstr(neu.ca_pem, old.ca_pem), neu.ca_pem);
	/* still a valid set: the CA key matches the first certificate */
	ck_assert_int_eq(certs_check(&neu, SVC_DNS, o.now_s, DAY, NULL),
			 CERTS_OK);
	/* the bundle trusts what either CA signed */
	ck_assert(bundle_verifies(neu.ca_pem, neu.cert_pem, o.now_s));
	ck_assert(bundle_verifies(neu.ca_pem, old.cert_pem, o.now_s));
	ck_assert(!bundle_verifies(old.ca_pem, neu.cert_pem, o.now_s));
	/* nothing to keep: the same CA, none, not PEM, or expired */
	kept = xstrdup(neu.ca_pem);
	ck_assert(!certs_keep_previous_ca(&neu, neu.ca_pem, o.now_s));
	ck_assert(!certs_keep_previous_ca(&neu, NULL, o.now_s));
	ck_assert(!certs_keep_previous_ca(&neu, "junk", o.now_s));
	ck_assert_str_eq(neu.ca_pem, kept);
	/* the next rotation keeps only the CA it replaces */
	o.now_s = NOW + 20 * DAY;
	ck_assert_int_eq(certs_generate(&o, &third, NULL), 0);
	ck_assert(certs_keep_previous_ca(&third, neu.ca_pem, o.now_s));
	ck_assert_uint_eq(certs_ca_count(&third), 2);
	ck_assert_ptr_null(strstr(third.ca_pem, old.ca_pem));
	/* an expired previous CA is not kept, and is dropped later */
	ck_assert(!certs_keep_previous_ca(&third, old.ca_pem, NOW + 81 * DAY));
	ck_assert(!certs_drop_expired_cas(&neu, NOW + 79 * DAY));
	ck_assert_str_eq(neu.ca_pem, kept);
	ck_assert(certs_drop_expired_cas(&neu, NOW + 81 * DAY));
	ck_assert_uint_eq(certs_ca_count(&neu), 1);
	ck_assert_ptr_null(strstr(neu.ca_pem, old.ca_pem));
	ck_assert(!certs_drop_expired_cas(&neu, NOW + 81 * DAY));
	/* and the Secret carries both */
	{
		json_t *d = certs_to_secret_data(&third);
		struct certs back = CERTS_INIT;

		ck_assert_int_eq(certs_from_secret_data(d, &back, NULL), 0);
		ck_assert_uint_eq(certs_ca_count(&back), 2);
		ck_assert_str_eq(back.ca_pem, third.ca_pem);
		certs_release(&back);
		json_decref(d);
	}
	free(kept);
	certs_release(&old);
	certs_release(&neu);
	certs_release(&third);
}
END_TEST

Suite *webhook_certs_suite(void)
{
	Suite *s = suite_create("webhook_certs");
	TCase *tc = tcase_create("certs");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, generate_rsa);
	tcase_add_test(tc, generate_ec_custom_names);
	tcase_add_test(tc, renewal_window);
	tcase_add_test(tc, secret_round_trip);
	tcase_add_test(tc, cert_dir);
	tcase_add_test(tc, ca_overlap);
	suite_add_tcase(s, tc);
	return s;
}
