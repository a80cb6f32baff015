/*
 * manager_inspect: the manager as kubectl cueue uses it (manager.h,
 * opts.inspect): its scheduling state, fed from the caches exactly as a
 * leader's, a Workload taken in as the informer would, the reasons it
 * would write, and the cached objects; and the Configuration mapped to
 * manager_opts, which cueue-manager's main uses too.
 */
#include "controller/manager_int.h"

#include "config/config.h"
#include "model/codec.h"
#include "model/respolicy.h"
#include "model/validate.h"

struct sched *manager_sched(struct manager *m)
{
	return m->fed ? m->s : NULL;
}

int manager_inject_workload(struct manager *m, const json_t *obj,
			    struct err *err)
{
	const struct inf_def *d = &manager_queues_inf_defs[INF_WL];
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct workload w;
	const char *ns = jx_meta_str(obj, "namespace");
	const char *name = jx_meta_str(obj, "name");
	char *key;

	if (!ns || !*ns || !name || !*name)
		return err_set(err, "metadata.name and metadata.namespace "
			       "are required");
	memset(&w, 0, sizeof(w));
	if (codec_decode_workload(obj, &w, &fe) == 0)
		validate_workload(&w, NULL, &fe);
	workload_release(&w);
	if (fe.n) {
		char *msg = field_errors_aggregate(&fe);

		err_set(err, "%s", msg);
		free(msg);
		field_errors_release(&fe);
		return -1;
	}
	field_errors_release(&fe);
	key = xasprintf("%s/%s", ns, name);
	d->apply(m, obj, key);
	free(key);
	return 0;
}

const char *manager_wl_inadmissible(const struct manager *m, const char *ns,
				    const char *name)
{
	char buf[256];
	char *key = object_key_buf(buf, sizeof(buf), ns, name);
	const struct wl_entry *e = hmap_get(&m->wls, key);

	if (key != buf)
		free(key);
	if (!e || !text_same(e->want_reason, "Inadmissible"))
		return NULL;
	return e->want_msg;
}

void manager_visit(const struct manager *m, manager_visit_fn *fn, void *ud)
{
	const struct rf_entry *rf;
	const struct cohort_entry *co;
	const struct cq_entry *cq;
	const struct ns_entry *ns;
	const struct lq_entry *lq;
	const struct wl_entry *wl;
	size_t pos;

	for (pos = 0; (rf = hmap_next(&m->rfs, &pos, NULL));)
		if (rf->rf)
			fn(ud, MK_FLAVOR, rf->name, rf->rf, NULL);
	for (pos = 0; (co = hmap_next(&m->cohorts, &pos, NULL));)
		if (co->c)
			fn(ud, MK_COHORT, co->name, co->c, NULL);
	for (pos = 0; (cq = hmap_next(&m->cqs, &pos, NULL));)
		if (cq->cq)
			fn(ud, MK_CLUSTER_QUEUE, cq->name, cq->cq, cq->invalid);
	for (pos = 0; (ns = hmap_next(&m->nss, &pos, NULL));)
		fn(ud, MK_NAMESPACE, ns->name, &ns->labels, NULL);
	for (pos = 0; (lq = hmap_next(&m->lqs, &pos, NULL));)
		if (lq->lq)
			fn(ud, MK_LOCAL_QUEUE, lq->key, lq->lq, NULL);
	for (pos = 0; (wl = hmap_next(&m->wls, &pos, NULL));)
		if (wl->w)
			fn(ud, MK_WORKLOAD, wl->key, wl->w, NULL);
}

void manager_opts_from_config(struct manager_opts *mo,
			      const struct config *cfg,
			      const char ***afs_res, double **afs_w,
			      struct res_policy *rp)
{
	config_res_policy(cfg, rp);
	mo->res_policy = res_policy_empty(rp) ? NULL : rp;
	mo->dra_mappings = &cfg->res_device_class_mappings;
	mo->ignore_undeclared =
		cfg->res_quota_check == CONFIG_QUOTA_IGNORE_UNDECLARED;
	mo->no_partial_admission =
		!config_feature_gate(cfg, "PartialAdmission", true);
	/* waitForPodsReady (model/deadline.h) */
	mo->ready.enabled = cfg->wfpr_enable;
	mo->ready.timeout_ms = cfg->wfpr_timeout_ms;
	mo->ready.recovery_timeout_ms =
		cfg->wfpr_recovery_timeout_ms == CONFIG_UNSET ||
				cfg->wfpr_recovery_timeout_ms == 0
			? -1
			: cfg->wfpr_recovery_timeout_ms;
	mo->ready.has_limit = cfg->wfpr_backoff_limit_count != CONFIG_UNSET;
	mo->ready.backoff_limit = (int32_t)cfg->wfpr_backoff_limit_count;
	mo->ready.backoff_base_s = cfg->wfpr_backoff_base_seconds;
	mo->ready.backoff_max_s = cfg->wfpr_backoff_max_seconds;
	mo->block_admission = cfg->wfpr_block_admission;
	/* objectRetentionPolicies.workloads.afterFinished */
	mo->ready.has_after_finished =
		cfg->orp_after_finished_ms != CONFIG_UNSET;
	mo->ready.after_finished_ms = mo->ready.has_after_finished
					      ? cfg->orp_after_finished_ms
					      : 0;
	/* ... and afterDeactivatedByKueue */
	mo->ready.has_after_deactivated =
		cfg->orp_after_deactivated_ms != CONFIG_UNSET;
	mo->ready.after_deactivated_ms =
		mo->ready.has_after_deactivated ? cfg->orp_after_deactivated_ms
						: 0;
	mo->requeue_ts_creation =
		cfg->wfpr_requeue_timestamp == CONFIG_REQUEUE_CREATION;
	mo->fair_sharing = cfg->fs_enable;
	mo->afs = cfg->afs_enable;
	mo->afs_half_life_ms = cfg->afs_usage_half_life_ms;
	mo->afs_sampling_ms = cfg->afs_usage_sampling_ms;
	mo->nafs_w = cfg->afs_resource_weights.n;
	*afs_res = NULL;
	*afs_w = NULL;
	if (mo->nafs_w) {
		*afs_res = xcalloc(mo->nafs_w, sizeof(**afs_res));
		*afs_w = xcalloc(mo->nafs_w, sizeof(**afs_w));
		for (size_t i = 0; i < mo->nafs_w; i++) {
			(*afs_res)[i] = cfg->afs_resource_weights.v[i].key;
			(*afs_w)[i] = cfg->afs_resource_weights.v[i].value;
		}
		mo->afs_res = *afs_res;
		mo->afs_w = *afs_w;
	}
	mo->nfs_strategies = 0;
	for (size_t i = 0; i < cfg->fs_preemption_strategies.n && i < 2; i++)
		mo->fs_strategies[mo->nfs_strategies++] =
			!strcmp(cfg->fs_preemption_strategies.v[i],
				"LessThanInitialShare")
				? FS_LESS_THAN_INITIAL_SHARE
				: FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
}
