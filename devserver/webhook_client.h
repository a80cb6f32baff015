/*
 * webhook_client: the devserver's HTTPS client for admission webhooks
 * (admission.c, k8s-api.md §11.3) and CRD conversion webhooks
 * (convert.c, §12), as kube-apiserver's webhook rest client makes the
 * call: POST <url>?timeout=<N>s with a JSON body, TLS 1.2+, the server
 * certificate verified against clientConfig.caBundle (system roots when
 * empty), and failures reported with the Go error text the real server
 * wraps into its messages ("Post \"https://...\": context deadline
 * exceeded", "no endpoints available for service \"x\"", ...).
 *
 * clientConfig.url is used as is. clientConfig.service {namespace, name,
 * port, path} is addressed as https://<name>.<namespace>.svc:<port><path>
 * and dialled at a --service-endpoint of NAMESPACE/NAME
 * (api_service_endpoints: a Service may have several; each call starts
 * at the next one, round robin, and skips those that refuse the
 * connection), so SNI and the certificate name check see the service DNS
 * name exactly as on a cluster.
 *
 * DESIGN. Calls come from many HTTP connection threads at once. Each call
 * takes an easy handle from a small pool of idle handles (a mutex-guarded
 * stack, so a handle's open connection is reused by a later call but
 * never by two threads at once) and all handles share one TLS session
 * cache through a CURLSH whose lock callbacks use one pthread mutex per
 * curl lock-data class. No lock is held while a transfer runs. libcurl is
 * initialised once (pthread_once) with the x* allocators (STYLE P4).
 */
#ifndef DEVSERVER_WEBHOOK_CLIENT_H
#define DEVSERVER_WEBHOOK_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/sbuf.h"
#include "model/errors.h"

struct api;

/* Response bodies above this are refused (STYLE P5): a ConversionReview
 * for a whole list can be large, an AdmissionReview is a few MiB. */
#define WEBHOOK_MAX_RESPONSE ((size_t)64 << 20)

/* Where the failure of a call happened (the Go error classes of
 * apiserver's webhook package). */
enum webhook_fail {
	WEBHOOK_OK = 0,
	WEBHOOK_FAIL_CLIENT, /* "could not get REST client: ..." (bad
				clientConfig or caBundle) */
	WEBHOOK_FAIL_CALL,   /* "failed to call webhook: ..." (transport,
				TLS, timeout, non-2xx, undecodable body) */
};

struct webhook_call {
	const json_t *client_config; /* borrowed: the clientConfig object */
	int timeout_s;               /* whole seconds, > 0 */
	bool inject_timeout;         /* fail at once as a call that ran
					out of timeout_s (fault injection) */
	enum webhook_fail fail;      /* out: the class of a failure */
};

/*
 * POSTs body (JSON, borrowed) to the webhook c->client_config names and
 * decodes its 2xx answer. Returns a new reference to the decoded JSON
 * object, or NULL with c->fail set and err holding the bare Go error text
 * (without the "failed to call webhook: " prefix). api (borrowed) resolves
 * services; it may be NULL when only url clientConfigs are used. Any
 * thread; blocks for up to c->timeout_s.
 */
json_t *webhook_client_post(struct api *api, struct webhook_call *c,
			    const json_t *body, struct err *err);

/* What an aggregated API server answered (webhook_client_proxy_get). */
struct webhook_proxy_answer {
	long code;
	char *ctype;      /* owned */
	struct sbuf body; /* owned; capped at WEBHOOK_MAX_RESPONSE */
};

/*
 * The APIService proxy (kube-apiserver's aggregator; devserver/README):
 * GETs path_query (path and raw query, sent as is) from the Service
 * client_config names ({service:{namespace, name, port}, caBundle}),
 * through its endpoints as webhook_client_post dials them, verifying the
 * server against caBundle unless insecure (insecureSkipTLSVerify).
 * Returns 0 with out filled (the caller releases ctype and body), or -1
 * + err (Go's text: "Get \"https://...\": ..."). Any thread.
 */
int webhook_client_proxy_get(struct api *api, const json_t *client_config,
			     bool insecure, const char *path_query,
			     int timeout_s, struct webhook_proxy_answer *out,
			     struct err *err);

/*
 * Standard base64 (RFC 4648 with padding; CR and LF ignored, as Go's
 * StdEncoding does) of s into a new buffer of *n bytes, NUL-terminated
 * for convenience. Returns NULL when s is not valid base64, with err
 * holding Go's "illegal base64 data at input byte N".
 */
unsigned char *webhook_client_base64_decode(const char *s, size_t *n,
					    struct err *err);

/* A random RFC 4122 version 4 UUID into out (36 characters + NUL). */
void webhook_client_uuid(char out[37]);

/* Frees the idle handles and the shared TLS session cache; for a clean
 * exit once no call can run any more. Calls after it start afresh. */
void webhook_client_cleanup(void);

#endif
