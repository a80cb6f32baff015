/*
 * tls: CA + serving certificate generation with OpenSSL 3 (EVP, X509v3
 * extensions through their config-string form, which is the readable way
 * to state what Go's verifier checks: basicConstraints, keyUsage,
 * extendedKeyUsage serverAuth, subjectAltName), and the files that keep
 * them and the bearer token in a data dir.
 */
#include "devserver/tls.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/sbuf.h"

/* Files we read back are small; anything bigger is not ours. */
#define KEPT_FILE_MAX (64 * 1024)
/* A kept serving certificate is renewed when it has less left. */
#define RENEW_MARGIN_S (24L * 3600)

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

/* ---- kept material ---- */

/* Reads path into a new string. Returns 1, 0 when it does not exist, or
 * -1 + err. */
static int read_small(const char *path, char **out, struct err *err)
{
	struct sbuf b;
	char tmp[4096];
	FILE *f = fopen(path, "re");
	size_t n;
	int rc = 1;

	if (!f) {
		if (errno == ENOENT)
			return 0;
		return err_set(err, "%s: %s", path, strerror(errno));
	}
	sbuf_init(&b, KEPT_FILE_MAX);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		if (sbuf_add(&b, tmp, n) < 0)
			break;
	if (b.failed)
		rc = err_set(err, "%s: larger than %d bytes", path,
			     KEPT_FILE_MAX);
	else if (ferror(f))
		rc = err_set(err, "%s: %s", path, strerror(errno));
	fclose(f);
	if (rc == 1)
		*out = xstrdup(sbuf_cstr(&b));
	sbuf_release(&b);
	return rc;
}

/* Writes text to path, mode 0600, through a temp file and rename, so a
 * crash leaves the old file or the new one. Returns 0 or -1 + err. */
static int write_private(const char *path, const char *text,
			 struct err *err)
{
	char *tmp = xasprintf("%s.tmp", path);
	size_t n = strlen(text), off = 0;
	int fd, rc = -1;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err_set(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	/* an old temp file may have had wider bits */
	if (fchmod(fd, 0600) != 0) {
		err_set(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	while (off < n) {
		ssize_t w = write(fd, text + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err_set(err, "%s: %s", tmp, strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) != 0) {
		err_set(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		err_set(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		err_set(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		unlink(tmp);
	free(tmp);
	return rc;
}

/*
 * Parses the kept set in text. Returns 1 (valid, out filled), 0 (valid
 * but expiring: renew), or -1 + err (not a set).
 */
static int parse_kept(const char *path, const char *text,
		      struct tls_material *out, struct err *err)
{
	BIO *b = BIO_new_mem_buf(text, -1);
	X509 *ca = NULL, *crt = NULL;
	EVP_PKEY *key = NULL, *ca_pub;
	time_t soon = time(NULL) + RENEW_MARGIN_S;
	int rc = -1;

	if (!b)
		BUG("BIO_new_mem_buf failed");
	ca = PEM_read_bio_X509(b, NULL, NULL, NULL);
	crt = ca ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	key = crt ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	if (!key) {
		err_set(err, "%s: not the devserver's TLS material (the CA "
			"certificate, the serving certificate and its private "
			"key, PEM, in that order); remove it to make new ones",
			path);
		goto out;
	}
	ca_pub = X509_get0_pubkey(ca);
	if (!ca_pub || X509_verify(crt, ca_pub) != 1 ||
	    X509_check_private_key(crt, key) != 1) {
		err_set(err, "%s: the serving certificate is not signed by "
			"the CA before it or does not match the key; remove "
			"the file to make new ones", path);
		goto out;
	}
	if (X509_cmp_time(X509_get0_notAfter(crt), &soon) <= 0 ||
	    X509_cmp_time(X509_get0_notAfter(ca), &soon) <= 0) {
		rc = 0;
		goto out;
	}
	out->ca_pem = cert_pem(ca);
	out->cert_pem = cert_pem(crt);
	out->key_pem = key_pem(key);
	rc = 1;
out:
	X509_free(ca);
	X509_free(crt);
	EVP_PKEY_free(key);
	BIO_free(b);
	return rc;
}

int tls_keep(const char *path, const char *const *dns_names,
	     const char *const *ips, struct tls_material *out,
	     enum tls_kept *how, struct err *err)
{
	char *text = NULL, *all;
	int rc = read_small(path, &text, err);

	if (rc < 0)
		return -1;
	if (rc == 1) {
		rc = parse_kept(path, text, out, err);
		free(text);
		if (rc < 0)
			return -1;
		if (rc == 1) {
			*how = TLS_KEPT_LOADED;
			return 0;
		}
		*how = TLS_KEPT_RENEWED;
	} else {
		*how = TLS_KEPT_NEW;
	}
	if (tls_generate(dns_names, ips, out, err) < 0)
		return -1;
	all = xasprintf("%s%s%s", out->ca_pem, out->cert_pem, out->key_pem);
	rc = write_private(path, all, err);
	free(all);
	if (rc < 0) {
		tls_material_release(out);
		return -1;
	}
	return 0;
}

static bool token_ok(const char *t)
{
	if (!*t)
		return false;
	for (; *t; t++)
		if (*t <= ' ' || *t > '~')
			return false;
	return true;
}

int tls_token_keep(const char *path, const char *given, char **token,
		   struct err *err)
{
	char *text = NULL;
	int rc = read_small(path, &text, err);

	if (rc < 0)
		return -1;
	if (rc == 1) {
		size_t n = strlen(text);

		/* one line: its newline is not part of the token */
		if (n && text[n - 1] == '\n')
			text[--n] = '\0';
		if (!given && !token_ok(text)) {
			free(text);
			return err_set(err, "%s: not a bearer token (one line "
				       "of printable ASCII without spaces); "
				       "remove it to make a new one", path);
		}
	}
	if (given) {
		if (!token_ok(given)) {
			free(text);
			return err_set(err, "--token: must be printable ASCII "
				       "without spaces");
		}
		if (!text || strcmp(text, given)) {
			char *line = xasprintf("%s\n", given);

			rc = write_private(path, line, err);
			free(line);
			if (rc < 0) {
				free(text);
				return -1;
			}
		}
		free(text);
		*token = xstrdup(given);
		return 0;
	}
	if (text) {
		*token = text;
		return 0;
	}
	{
		unsigned char r[16];
		char hex[33], *line;

		if (RAND_bytes(r, sizeof(r)) != 1)
			return err_set(err, "tls: no random bytes for a "
				       "token");
		for (size_t i = 0; i < sizeof(r); i++)
			snprintf(hex + 2 * i, 3, "%02x", r[i]);
		line = xasprintf("%s\n", hex);
		rc = write_private(path, line, err);
		free(line);
		if (rc < 0)
			return -1;
		*token = xstrdup(hex);
	}
	return 0;
}
