/*
 * webhookview: keeps the webhook's namespace view (webhook/nsview.h) in
 * step with the manager's caches: namespace labels, the namespaces with
 * a LocalQueue named "default", and whether a WorkloadPriorityClass
 * "default" exists. webhookview_sync rebuilds and publishes a view only
 * when manager_nsview_gen moved since the last publish (and only once
 * the manager has synced), so calling it once per loop turn is cheap:
 * one integer compare when nothing changed.
 *
 * Threads: the loop thread (it reads the manager's caches); the webhook
 * threads only ever see frozen views.
 */
#ifndef CONTROLLER_WEBHOOKVIEW_H
#define CONTROLLER_WEBHOOKVIEW_H

#include <stdbool.h>
#include <stdint.h>

struct manager;
struct webhook;

struct webhookview {
	bool published;  /* a view was published at least once */
	uint64_t gen;    /* manager_nsview_gen of that view */
	uint64_t builds; /* views built (tests) */
};

#define WEBHOOKVIEW_INIT { false, 0, 0 }

/* Publishes a fresh view to wh when m synced and its namespace state
 * changed since the last call. Returns true when it published. */
bool webhookview_sync(struct webhookview *v, const struct manager *m,
		      struct webhook *wh);

#endif
