/*
 * inproc: the in-process devserver the controller suites (manager, jobs,
 * wiring, certmgr) run against. inp_start brings up a struct api, with
 * the CRDs of manifests/crds preloaded, behind plain HTTP on a free
 * loopback port, and optionally the Job machinery (gc.c, jobrunner.c).
 * The controller under test runs on inp_loop() and talks HTTP to the
 * server through inp_kube(); the tests read and write objects through
 * the devserver's internal API (api.h: the same semantics as HTTP, no
 * transport in the way). inp_stop frees all of it.
 *
 * Test-only code. The inp_ prefix is short on purpose, like dsclient's
 * ds_: these names fill every line of the suites (not ip_, which
 * <netinet/in.h> uses: struct ip_opts). One server per test process
 * (Check forks per test). Every helper aborts the test (ck_assert) on a
 * failure it does not report, so call sites read as the scenario.
 * Objects are named by their plural resource only: inp_ref maps it to
 * group and version through one table (resource names are unique across
 * the groups the suites use).
 */
#ifndef TEST_DEVSERVER_INPROC_H
#define TEST_DEVSERVER_INPROC_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/loop.h" /* WAIT_FOR: loop_run_once, struct err */
#include "devserver/api.h"
#include "test/support/support.h" /* WAIT_FOR: T_LOOP_UNTIL */

struct kube;

/* ---- the server ---- */

struct inp_opts {
	bool manifests;  /* also preload manifests/00-namespace.yaml and
			    manifests/webhooks.yaml (after the CRDs) */
	bool jobs;       /* the Job machinery: the garbage collector, the
			    job runner with a 300 ms --job-runtime, and the
			    propagation finalizers the collector removes */
	const struct api_endpoint *endpoint; /* one Service endpoint, as
			    devserver --service-endpoint (copied); NULL:
			    none */
};

/* Starts the server (aborts the test on failure); o may be NULL (the
 * CRDs only). Also sets the controller log level: off, or debug when
 * CK_MANAGER_LOG is set. */
void inp_start(const struct inp_opts *o);
/* Frees the client and the loop, then stops and frees the server
 * (api_shutdown, HTTP stop, runner and collector, api_free). What uses
 * the client (managers, informers) must be freed first. A no-op when
 * nothing runs, so a test may stop early and its teardown again. */
void inp_stop(void);
/* The running server's api (borrowed, valid until inp_stop). */
struct api *inp_api(void);
/* Its base URL, "http://127.0.0.1:port" (borrowed, until inp_stop). */
const char *inp_url(void);

/* ---- the controller side: one loop, one client ---- */

/* The event loop the code under test runs on (borrowed; made at the
 * first call, freed by inp_stop). */
struct loop *inp_loop(void);
/* A client for the server on inp_loop(), rate limits off (borrowed; made
 * at the first call, freed by inp_stop). */
struct kube *inp_kube(void);
/* Runs inp_loop() for ms milliseconds (20 ms polls), asserting each
 * iteration. */
void inp_spin(int64_t ms);
/* Runs inp_loop() until cond holds; fails the test after ms
 * milliseconds (support.h's T_LOOP_UNTIL on inp_loop()). Unprefixed,
 * like dsclient's GET: it fills the suites. */
#define WAIT_FOR(cond, ms) T_LOOP_UNTIL(inp_loop(), cond, ms)

/* ---- objects (ns NULL for cluster-scoped resources) ---- */

/* The api_ref of a resource (core, batch, scheduling.k8s.io,
 * coordination.k8s.io, admissionregistration.k8s.io,
 * apiextensions.k8s.io and kueue.x-k8s.io kinds); name NULL for the collection. An unknown resource aborts the
 * test. The strings are borrowed from the arguments and the table. */
struct api_ref inp_ref(const char *resource, const char *ns,
		       const char *name);
/* Creates the object of JSON text; asserts success. */
void inp_create(const char *resource, const char *ns, const char *text);
/* The same, taking text (new, as support.h's t_*_json builders make). */
void inp_create_take(const char *resource, const char *ns, char *text);
/* The same, returning the object as stored, admission included (new). */
json_t *inp_create_obj(const char *resource, const char *ns,
		       const char *text);
/* The object (new), or NULL when it does not exist. */
json_t *inp_get(const char *resource, const char *ns, const char *name);
/* The items of a collection (new array); asserts the list succeeds. */
json_t *inp_list(const char *resource, const char *ns);
/* Number of objects in a collection. */
size_t inp_count(const char *resource, const char *ns);
/* Merge-patches the object or its subresource sub (NULL: the object);
 * p is borrowed. Asserts success. */
void inp_patch(const char *resource, const char *ns, const char *name,
	       const char *sub, const json_t *p);
/* DELETE with propagationPolicy (NULL: the type's default, Orphan for
 * batch/v1 Jobs); asserts success. */
void inp_del(const char *resource, const char *ns, const char *name,
	     const char *propagation);
bool inp_exists(const char *resource, const char *ns, const char *name);

/* ---- reading objects ---- */

/* The value at a dotted path of j ("status.conditions.0.type": numbers
 * index arrays), or NULL (borrowed from j). Keys may not contain dots. */
const json_t *inp_jpath(const json_t *j, const char *path);
/* The condition of that type in j's status.conditions, or NULL
 * (borrowed from j). */
const json_t *inp_cond(const json_t *j, const char *type);
/* The value at a dotted path of the object as a string: strings as they
 * are, integers and booleans printed, anything else or a missing object
 * "". Borrowed: a static buffer, overwritten by the next call. */
const char *inp_val(const char *resource, const char *ns, const char *name,
		    const char *path);
/* Whether the object has condition type with status, and with reason
 * and a message starting with msg_prefix when those are not NULL. */
bool inp_has_cond(const char *resource, const char *ns, const char *name,
		  const char *type, const char *status, const char *reason,
		  const char *msg_prefix);

#endif
