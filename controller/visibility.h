/*
 * visibility: the manager's visibility API server, Kueue's
 * visibility.kueue.x-k8s.io (v1beta1 and v1beta2; kueue-api.md §15.1),
 * which kube-apiserver reaches through an APIService:
 *
 *   GET /apis/visibility.kueue.x-k8s.io/<v>/clusterqueues/<cq>/pendingworkloads
 *   GET /apis/visibility.kueue.x-k8s.io/<v>/namespaces/<ns>/localqueues/<lq>/pendingworkloads
 *       ?offset=N&limit=N  -> PendingWorkloadsSummary (manager_vis.c)
 *   GET /apis, /apis/visibility.kueue.x-k8s.io, .../<v>: discovery
 *       (APIGroupList, APIGroup, APIResourceList), as an aggregated
 *       server answers them.
 * Bad query values are 400 BadRequest naming the parameter; other paths
 * 404, other methods 405; every error is a metav1 Status.
 *
 * HTTPS on webhook/server.c (TLS 1.2+), with the webhook's certificate
 * (its serving certificate also names the visibility Service; see
 * certmgr.h), rotated with it.
 *
 * THREADS. The server's threads never touch the scheduler: a request is
 * queued under the module's lock and the loop woken (loop_wake); the
 * loop answers every queued request in its before-sleep hook
 * (manager_visibility on the loop thread, between cycles, so the
 * positions are those of one consistent state), and the waiting thread
 * is signalled. A request the loop has not taken within wait_ms is
 * withdrawn and answered 503; one it took is always waited for (the
 * answer is bounded: a sort of one queue).
 */
#ifndef CONTROLLER_VISIBILITY_H
#define CONTROLLER_VISIBILITY_H

#include "base/alloc.h"
#include "model/errors.h"

struct loop;
struct manager;
struct visibility;

struct visibility_opts {
	const char *addr;     /* IP to bind; NULL or "": every interface */
	unsigned port;        /* 0: any free port (tests) */
	const char *cert_pem; /* required; borrowed for the call */
	const char *key_pem;
	int64_t wait_ms;      /* a queued request's wait; 0: 10 s */
	const char *priorities; /* GnuTLS priority string; NULL: TLS 1.2+
				   defaults; borrowed for the call */
};

/* Starts serving; m and l are borrowed and must outlive it. Loop
 * thread. NULL + err when the port cannot be bound or the PEMs are
 * refused. */
struct visibility *visibility_new(struct loop *l, struct manager *m,
				  const struct visibility_opts *o,
				  struct err *err) MUST_CHECK;
/* The certificate for new connections (a rotation). */
int visibility_set_certificate(struct visibility *v, const char *cert_pem,
			       const char *key_pem, struct err *err)
	MUST_CHECK;
unsigned visibility_port(const struct visibility *v);
/* Stops the server (answering what is queued with 503 first), frees.
 * NULL ok. Loop thread. */
void visibility_free(struct visibility *v);

#endif
