/*
 * admhook: the admission test harness shared by the suites "admission"
 * (check_admission.c) and "admission_http" (check_admission_http.c).
 *
 * ah_start brings up, in-process, an HTTPS webhook server (certificate
 * for hooks.webhooks.svc, nohooks.webhooks.svc and 127.0.0.1, CA in
 * AH.ca) and a devserver whose --service-endpoint webhooks/hooks points
 * at it, plus a plain HTTP front end (AH.http). The webhook server's
 * answer depends on the request path (/allow, /deny, /deny-bare,
 * /deny-422, /suspend, /label-one, /label-two, /badpatch, /vpatch, /warn,
 * /wrong-uid, /no-kind, /slow, /malformed, /error500, /convert,
 * /convert-fail, /convert-rename; anything else is 404), and it records
 * every request, which ah_count/ah_last/ah_first read back.
 *
 * Test-only code; the ah_ prefix is short on purpose (support.h's t_ is
 * the precedent). One harness per test process (Check forks per test).
 */
#ifndef TEST_DEVSERVER_ADMHOOK_H
#define TEST_DEVSERVER_ADMHOOK_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "devserver/status.h"
#include "devserver/tls.h"

struct api;
struct http_server;

#define ADM "admissionregistration.k8s.io"
#define MWC "mutatingwebhookconfigurations"
#define VWC "validatingwebhookconfigurations"

#define JOB_RULE(ops) \
	"[{\"operations\":[" ops "],\"apiGroups\":[\"batch\"]," \
	"\"apiVersions\":[\"v1\"],\"resources\":[\"jobs\"]}]"
#define CM_RULE(ops) \
	"[{\"operations\":[" ops "],\"apiGroups\":[\"\"]," \
	"\"apiVersions\":[\"v1\"],\"resources\":[\"configmaps\"]}]"

struct ah_server {
	struct api *api;
	struct http_server *hooks;    /* the webhook server */
	struct http_server *http;     /* the devserver's HTTP front end */
	struct tls_material tm;       /* the webhook server's CA and cert */
	struct tls_material other;    /* an unrelated CA */
	char *ca;                     /* base64 of tm.ca_pem */
	char *other_ca;               /* base64 of other.ca_pem */
};

extern struct ah_server AH;

void ah_start(void);
void ah_stop(void);

/* One request the webhook server got; strings owned by the harness. */
struct ah_seen {
	char *path;      /* request path */
	char *timeout;   /* ?timeout= */
	char *host;      /* Host header */
	char *ctype;     /* Content-Type */
	char *accept;    /* Accept */
	json_t *body;    /* the review */
};

/* How many requests path got so far. */
size_t ah_count(const char *path);
/* The body of the last request to path (new reference), or NULL; meta
 * (may be NULL) gets the request's other fields (borrowed until
 * ah_stop). */
json_t *ah_last(const char *path, struct ah_seen *meta);
/* The body of the first request to path (new reference), or NULL. */
json_t *ah_first(const char *path);

/* A value or string at a dotted path of j, or NULL. */
const json_t *ah_jget(const json_t *j, const char *path);
const char *ah_sget(const json_t *j, const char *path);

/* ---- webhook configurations and objects (internal API) ---- */

/* A clientConfig for the service svc and path (or url when path has
 * "://"), trusting ca. New reference. */
json_t *ah_client_config(const char *svc, const char *path, const char *ca);
/* A webhook: rules is JSON text; extra (JSON text or NULL) is merged.
 * New reference. */
json_t *ah_hook(const char *name, const char *path, const char *rules,
		const char *extra);
/* Installs a configuration holding one webhook (h taken). */
void ah_install(bool mutating, const char *name, json_t *h);
int ah_create(const char *group, const char *version, const char *resource,
	      const char *ns, const json_t *obj, json_t **out,
	      struct api_status *st);
/* test/fixtures/admission/job.json named name; a ConfigMap with labels
 * (JSON text or NULL). New references. */
json_t *ah_job(const char *name);
json_t *ah_cm(const char *name, const char *labels);
int ah_create_job(const char *name, json_t **out, struct api_status *st);
int ah_create_cm(const char *ns, const char *name, const char *labels,
		 struct api_status *st);

/* j equals the JSON text want. */
bool ah_json_is(const json_t *j, const char *want);
/* Asserts st holds code, reason and message. */
void ah_status(const struct api_status *st, int code, const char *reason,
	       const char *message);

/* ---- the devserver over HTTP ---- */

struct ah_resp {
	long code;
	char *body;
	char *headers;
	json_t *json;
};

/* A request to AH.http (ctype, body may be NULL); aborts the test when
 * the transfer fails. */
struct ah_resp ah_call(const char *method, const char *path,
		       const char *ctype, const char *body);
/* POST with a JSON body. */
struct ah_resp ah_post(const char *path, const char *body);
void ah_resp_free(struct ah_resp *r);

#endif
