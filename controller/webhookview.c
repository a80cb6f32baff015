/*
 * webhookview: builds webhook/nsview.h views from the manager's caches
 * (see webhookview.h). Owns nothing but its generation counter.
 */
#include "controller/webhookview.h"

#include "controller/manager.h"
#include "webhook/nsview.h"
#include "webhook/webhook.h"

static void add_ns(void *ud, const char *ns, const struct smap *labels)
{
	nsview_set_labels(ud, ns, labels);
}

static void add_default_lq(void *ud, const char *ns,
			   const struct smap *labels)
{
	(void)labels;
	nsview_set_default_lq(ud, ns);
}

bool webhookview_sync(struct webhookview *v, const struct manager *m,
		      struct webhook *wh)
{
	uint64_t gen;
	struct nsview *nv;

	if (!wh || !m || !manager_synced(m))
		return false;
	gen = manager_nsview_gen(m);
	if (v->published && gen == v->gen)
		return false;
	nv = nsview_new();
	manager_foreach_namespace(m, add_ns, nv);
	manager_foreach_lq_named(m, "default", add_default_lq, nv);
	if (manager_has_wpc(m, "default"))
		nsview_set_default_wpc(nv);
	webhook_publish_snapshot(wh, nv);
	v->published = true;
	v->gen = gen;
	v->builds++;
	return true;
}
