/*
 * dsclient: the devserver test harness the HTTP suites share (api,
 * api_write, robust). It starts the server in-process (struct api + the
 * libmicrohttpd front end on 127.0.0.1, port 0, plain HTTP or TLS with a
 * token) and drives it with libcurl, or with raw sockets where a test
 * needs to misbehave on the wire (slow headers, dropped bodies).
 *
 * Test-only code. The ds_ prefix is short on purpose, like support.h's
 * t_: these names fill every line of the suites. One server per test
 * process (Check forks per test), held in DS.
 */
#ifndef TEST_DEVSERVER_DSCLIENT_H
#define TEST_DEVSERVER_DSCLIENT_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "devserver/tls.h"

struct api;
struct fault_opts;
struct http_server;

#define AGG_ACCEPT \
	"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," \
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," \
	"application/json"
#define TABLE_ACCEPT \
	"application/json;as=Table;v=v1;g=meta.k8s.io," \
	"application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
#define WL "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
#define CQ "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
#define JOBS "/apis/batch/v1/namespaces/default/jobs"
#define CMS "/api/v1/namespaces/default/configmaps"

#define MERGE "application/merge-patch+json"
#define JSONP "application/json-patch+json"
#define SMP "application/strategic-merge-patch+json"
#define APPLY "application/apply-patch+yaml"

/* ---- the server under test ---- */

struct ds_server {
	struct api *api;
	struct http_server *http;
	struct tls_material tm;
	const char *token;     /* sent as Bearer when set (borrowed) */
	const char *url;       /* base URL when not DS.http's (a server in
				  another process), else NULL */
};

extern struct ds_server DS;

struct ds_opts {
	bool tls;
	const char *token;         /* required over TLS, or NULL */
	size_t history;            /* watch history; 0: 1000 */
	const char *data_dir;      /* NULL: memory only */
	unsigned read_timeout_ms;  /* http_opts; 0: the server default */
	unsigned max_connections;  /* http_opts; 0: the server default */
	const struct fault_opts *faults; /* api_opts; NULL: none */
};

/* Starts DS (aborts the test on failure); o may be NULL (plain HTTP). */
void ds_start(const struct ds_opts *o);
/* Stops and frees DS; the order api_shutdown, HTTP stop, api_free. */
void ds_stop(void);

/* ---- HTTP over libcurl ---- */

struct ds_resp {
	long code;
	char *body;      /* NUL-terminated */
	size_t len;
	char *headers;   /* raw header block */
	json_t *json;    /* parsed body, or NULL */
};

/* One request; ctype/body/accept may be NULL (Accept defaults to JSON).
 * Aborts the test when the transfer fails. */
struct ds_resp ds_call(const char *method, const char *path,
		       const char *ctype, const char *body,
		       const char *accept);
/* The same with a body of len bytes (may hold NULs). */
struct ds_resp ds_call_len(const char *method, const char *path,
			   const char *ctype, const char *body, size_t len,
			   const char *accept);
/* ds_call without asserts, for threads and servers that may die: returns
 * the libcurl code (0 = CURLE_OK, *out filled; else *out is empty). */
int ds_try_call(const char *method, const char *path, const char *ctype,
		const char *body, struct ds_resp *out);
void ds_resp_free(struct ds_resp *r);

#define GET(p) ds_call("GET", (p), NULL, NULL, NULL)
#define POST(p, b) ds_call("POST", (p), "application/json", (b), NULL)
#define PUT(p, b) ds_call("PUT", (p), "application/json", (b), NULL)
#define DEL(p) ds_call("DELETE", (p), NULL, NULL, NULL)
#define PATCH(p, t, b) ds_call("PATCH", (p), (t), (b), NULL)

/* A value or string at a dotted path ("metadata.name") of j, or NULL. */
const json_t *ds_jget(const json_t *j, const char *path);
const char *ds_sget(const json_t *j, const char *path);

#define ds_code(r, c) \
	ck_assert_msg((r).code == (c), "want %d, got %ld: %s", (c), \
		      (r).code, (r).body)

/* Asserts r is a Status with code, and reason and message when not
 * NULL. */
void ds_status(const struct ds_resp *r, long code, const char *reason,
	       const char *message);

/* ---- fixtures ---- */

/* A file of the source tree (new string); aborts the test if missing. */
char *ds_fixture(const char *rel);
/* POSTs the fixture CRDs' YAML (all, or only the file containing only). */
void ds_install_crds(const char *only);
/* A Workload "x" (label team=ta) in v1beta2. */
extern const char ds_wl_x[];
/* A Workload name with label team (new string). */
char *ds_wl(const char *name, const char *team);
/* metadata.resourceVersion of a response (borrowed). */
const char *ds_rv(const struct ds_resp *r);

/* ---- watches ---- */

/* Runs a watch to its end (use timeoutSeconds) and returns its events
 * (new array). */
json_t *ds_watch_events(const char *path, const char *accept);
const char *ds_ev_type(const json_t *evs, size_t i);

/* ---- raw sockets ---- */

/* A connected TCP socket to DS (plain HTTP only); aborts on failure. */
int ds_connect(void);
/* Writes all of buf; false when the peer is gone. */
bool ds_send(int fd, const void *buf, size_t len);
/* Reads until EOF or timeout_ms of silence; new string (may be ""). */
char *ds_recv_all(int fd, int timeout_ms);
/* True when the server closes fd (EOF or reset) within timeout_ms;
 * anything it sends first is read and dropped. */
bool ds_wait_closed(int fd, int timeout_ms);
/* Waits up to timeout_ms for http_server_connections(DS.http) == n. */
bool ds_wait_connections(size_t n, int timeout_ms);

#endif
