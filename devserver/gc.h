/*
 * gc: the part of kube-controller-manager the devserver emulates around
 * deletion (k8s-api.md §10.3, §12):
 *
 *  - the owner-reference garbage collector: dependents of a deleted owner
 *    are deleted (Background), an owner marked with foregroundDeletion
 *    waits for its blockOwnerDeletion dependents (Foreground), an owner
 *    marked with orphan has its references removed from its dependents
 *    (Orphan), and dependents whose owner never existed are deleted
 *    ("absent owner", after a 1 s grace);
 *  - the namespace lifecycle: a Terminating namespace has all its
 *    namespaced content deleted, then its `kubernetes` finalizer removed
 *    through /finalize, so it disappears;
 *  - CRD leftovers: objects of a deleted CRD that a concurrent create
 *    slipped into the store after the write path's cleanup.
 *
 * One thread follows the store's event log (store_next_event on every
 * resource) and writes only through the internal API (api.h), so its
 * writes run admission and validation and emit watch events as a
 * client's would. The orphan/foregroundDeletion finalizers exist only
 * when api_opts.propagation_finalizers is set; without it Orphan and
 * Foreground degrade to Background.
 */
#ifndef DEVSERVER_GC_H
#define DEVSERVER_GC_H

#include "model/errors.h"

struct api;
struct gc;

/*
 * Starts the collector's thread on a (borrowed; it must outlive gc_stop).
 * Returns new, or NULL + err when the thread cannot be started.
 */
struct gc *gc_start(struct api *a, struct err *err);

/* Stops the thread, waits for it and frees g (NULL is a no-op). Call it
 * before api_free; any thread but the collector's own. */
void gc_stop(struct gc *g);

#endif
