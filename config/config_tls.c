/*
 * config_tls: the Configuration's tls section (minVersion, cipherSuites,
 * curvePreferences) as the GnuTLS priority string the manager's TLS
 * servers (webhook, visibility, HTTPS metrics) start with. Kueue hands
 * these settings to Go's crypto/tls; GnuTLS names the same things
 * differently and selects them differently:
 *
 *  - Go picks whole TLS 1.2 cipher suites. GnuTLS enables key exchanges,
 *    ciphers and MACs separately and offers every combination of the
 *    enabled ones. The string enables exactly the parts of the listed
 *    suites, so a suite outside the list is offered only when it is
 *    made of parts of listed ones (listing ECDHE-RSA with AES-128-GCM and
 *    ECDHE-ECDSA with AES-256-GCM also allows ECDHE-RSA with AES-256-GCM).
 *  - Go never lets TLS 1.3's suites be configured (Kueue's docs say so):
 *    while TLS 1.3 is offered, its three AEAD ciphers stay enabled, which
 *    also lets TLS 1.2 pair them with the listed key exchanges.
 *  - curvePreferences are IANA group IDs, in preference order: 23
 *    secp256r1, 24 secp384r1, 25 secp521r1, 29 x25519 become GROUP-*.
 *    4588 (X25519MLKEM768) has no counterpart in the GnuTLS cueue links
 *    (3.7 has no ML-KEM): it is left out, with a warning (config_warnings.c),
 *    and x25519 is offered instead when nothing else is listed.
 *
 * Pure: strings only; the servers pass the result to libmicrohttpd
 * (MHD_OPTION_HTTPS_PRIORITIES).
 */
#include "config/config.h"

#include <string.h>

#include "base/sbuf.h"

struct suite {
	const char *go;     /* Go's name */
	const char *kx;     /* GnuTLS key exchange; NULL: TLS 1.3 suite */
	const char *cipher; /* GnuTLS cipher */
	const char *mac;    /* GnuTLS MAC */
};

static const struct suite suites[] = {
	{ "TLS_AES_128_GCM_SHA256", NULL, NULL, NULL },
	{ "TLS_AES_256_GCM_SHA384", NULL, NULL, NULL },
	{ "TLS_CHACHA20_POLY1305_SHA256", NULL, NULL, NULL },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA",
	  "AES-128-CBC", "SHA1" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA",
	  "AES-256-CBC", "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC",
	  "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC",
	  "SHA1" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA",
	  "AES-128-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA",
	  "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM",
	  "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM",
	  "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA",
	  "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA",
	  "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA",
	  "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA",
	  "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_RSA_WITH_RC4_128_SHA", "RSA", "ARCFOUR-128", "SHA1" },
	{ "TLS_RSA_WITH_3DES_EDE_CBC_SHA", "RSA", "3DES-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_128_CBC_SHA256", "RSA", "AES-128-CBC", "SHA256" },
	{ "TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD" },
	{ "TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA", "ARCFOUR-128",
	  "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA", "ARCFOUR-128",
	  "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA", "3DES-CBC",
	  "SHA1" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA",
	  "AES-128-CBC", "SHA256" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA", "AES-128-CBC",
	  "SHA256" },
};

#define NSUITES (sizeof(suites) / sizeof(suites[0]))

struct group {
	int64_t id;
	const char *gnutls; /* NULL: not available here */
	const char *go;
};

static const struct group groups[] = {
	{ 23, "GROUP-SECP256R1", "CurveP256" },
	{ 24, "GROUP-SECP384R1", "CurveP384" },
	{ 25, "GROUP-SECP521R1", "CurveP521" },
	{ 29, "GROUP-X25519", "X25519" },
	{ 4588, NULL, "X25519MLKEM768" },
};

#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

bool config_tls_cipher_suite_known(const char *name)
{
	for (size_t i = 0; i < NSUITES; i++)
		if (!strcmp(suites[i].go, name))
			return true;
	return false;
}

bool config_tls_curve_known(int64_t id)
{
	for (size_t i = 0; i < NGROUPS; i++)
		if (groups[i].id == id)
			return true;
	return false;
}

bool config_tls_curve_unavailable(int64_t id)
{
	for (size_t i = 0; i < NGROUPS; i++)
		if (groups[i].id == id)
			return !groups[i].gnutls;
	return false;
}

/* Appends ":+item" unless the string already has that item. */
static void add_once(struct sbuf *b, const char *item)
{
	const char *s = sbuf_cstr(b), *p = s;
	size_t n = strlen(item);

	while ((p = strstr(p, item)) != NULL) {
		if (p - s >= 2 && p[-2] == ':' && p[-1] == '+' &&
		    (p[n] == ':' || p[n] == '\0'))
			return;
		p += n;
	}
	sbuf_addf(b, ":+%s", item);
}

char *config_tls_priorities(const struct config *c)
{
	struct sbuf b;
	bool tls12 = c->tls_min_version != CONFIG_TLS_13;
	bool any = false;

	sbuf_init(&b, 0);
	sbuf_adds(&b, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	if (tls12)
		sbuf_adds(&b, ":+VERS-TLS1.2");
	for (size_t i = 0; tls12 && i < c->tls_cipher_suites.n; i++)
		for (size_t k = 0; k < NSUITES; k++)
			any |= suites[k].kx &&
			       !strcmp(suites[k].go,
				       c->tls_cipher_suites.v[i]);
	if (any) {
		sbuf_adds(&b, ":-KX-ALL:-CIPHER-ALL:-MAC-ALL");
		/* TLS 1.3's suites, which Go does not let one configure */
		sbuf_adds(&b, ":+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305"
			      ":+AEAD");
		for (size_t i = 0; i < c->tls_cipher_suites.n; i++) {
			for (size_t k = 0; k < NSUITES; k++) {
				const struct suite *s = &suites[k];

				if (!s->kx ||
				    strcmp(s->go, c->tls_cipher_suites.v[i]))
					continue;
				add_once(&b, s->kx);
				add_once(&b, s->cipher);
				add_once(&b, s->mac);
			}
		}
	}
	if (c->tls_curve_preferences.n) {
		bool some = false;

		sbuf_adds(&b, ":-GROUP-ALL");
		for (size_t i = 0; i < c->tls_curve_preferences.n; i++)
			for (size_t k = 0; k < NGROUPS; k++)
				if (groups[k].id ==
					    c->tls_curve_preferences.v[i] &&
				    groups[k].gnutls) {
					add_once(&b, groups[k].gnutls);
					some = true;
				}
		if (!some)
			sbuf_adds(&b, ":+GROUP-X25519");
	}
	return sbuf_detach(&b, NULL);
}
