/*
 * nsview: what the webhook needs to know about namespaces, as the
 * controller last saw them: each namespace's labels (for
 * managedJobsNamespaceSelector) and whether it holds a LocalQueue named
 * "default" (for queue-name defaulting and the Job validation rule of
 * kueue-api.md §12.3), and whether a WorkloadPriorityClass "default"
 * exists (HEAD's priority-class defaulting, §6).
 *
 * The controller builds one with nsview_new + nsview_set_* on its own
 * thread, then hands it to webhook_publish_snapshot, which freezes it:
 * from then on it is immutable and read by the webhook's threads
 * concurrently (the query functions never write). Lookups are binary
 * searches over arrays sorted at freeze time.
 */
#ifndef WEBHOOK_NSVIEW_H
#define WEBHOOK_NSVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "model/smap.h"

struct nsview;

/* Returns a new, empty, unfrozen view. */
struct nsview *nsview_new(void);
void nsview_free(struct nsview *v);

/* Records namespace ns with a copy of its labels (replacing earlier
 * ones). Only before freezing. */
void nsview_set_labels(struct nsview *v, const char *ns,
		       const struct smap *labels);
/* Records that ns has a LocalQueue named "default". Only before
 * freezing. */
void nsview_set_default_lq(struct nsview *v, const char *ns);

/* Records that a WorkloadPriorityClass named "default" exists (for the
 * HEAD gate WorkloadPriorityClassDefaulting). Only before freezing. */
void nsview_set_default_wpc(struct nsview *v);

/* Sorts and makes v immutable; later set calls are a BUG. */
void nsview_freeze(struct nsview *v);
bool nsview_is_frozen(const struct nsview *v);

/* Frozen views only; v may be NULL (nothing known). */
bool nsview_has_default_lq(const struct nsview *v, const char *ns);
/* The labels of ns (borrowed, valid while v lives) or NULL when ns was
 * never recorded. */
const struct smap *nsview_labels(const struct nsview *v, const char *ns);
size_t nsview_count(const struct nsview *v);
bool nsview_has_default_wpc(const struct nsview *v);

#endif
