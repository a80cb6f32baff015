/*
 * config_validate: the rules a loaded Configuration must pass, Kueue's
 * pkg/config/validation.go first (same paths, same words), then cueue's
 * own (listed at the top of config.c). Pure: reads a struct config, adds
 * field errors with paths; positions are the loader's business.
 */
#include "config/config_int.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "model/names.h"
#include "model/quantity.h"
#include "model/selector.h"
#include "model/smap.h"

/* apimachinery's IsNegativeErrorMsg */
#define NEGATIVE "must be greater than or equal to 0"

/* The integrations Kueue registers (jobframework.GetIntegrationsList(),
 * sorted, as its NotSupported message lists them) with the GroupVersion-
 * Kind of each, "Kind.version.group", which decides duplicates. */
const char *const config_frameworks[] = {
	"batch/job",
	"deployment",
	"jobset.x-k8s.io/jobset",
	"kubeflow.org/jaxjob",
	"kubeflow.org/mpijob",
	"kubeflow.org/paddlejob",
	"kubeflow.org/pytorchjob",
	"kubeflow.org/tfjob",
	"kubeflow.org/xgboostjob",
	"leaderworkerset.x-k8s.io/leaderworkerset",
	"pod",
	"ray.io/raycluster",
	"ray.io/rayjob",
	"ray.io/rayservice",
	"sparkoperator.k8s.io/sparkapplication",
	"statefulset",
	"trainer.kubeflow.org/trainjob",
	"workload.codeflare.dev/appwrapper",
	NULL,
};

static const char *const framework_gvks[] = {
	"Job.v1.batch",
	"Deployment.v1.apps",
	"JobSet.v1alpha2.jobset.x-k8s.io",
	"JAXJob.v1.kubeflow.org",
	"MPIJob.v2beta1.kubeflow.org",
	"PaddleJob.v1.kubeflow.org",
	"PyTorchJob.v1.kubeflow.org",
	"TFJob.v1.kubeflow.org",
	"XGBoostJob.v1.kubeflow.org",
	"LeaderWorkerSet.v1.leaderworkerset.x-k8s.io",
	"Pod.v1.",
	"RayCluster.v1.ray.io",
	"RayJob.v1.ray.io",
	"RayService.v1.ray.io",
	"SparkApplication.v1beta2.sparkoperator.k8s.io",
	"StatefulSet.v1.apps",
	"TrainJob.v1alpha1.trainer.kubeflow.org",
	"AppWrapper.v1beta2.workload.codeflare.dev",
};

/* Go's crypto/tls CipherSuites() and InsecureCipherSuites() names, plus
 * the two legacy spellings component-base still accepts. */

/* ------------------------------------------------------------------ */
/* Helpers */

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* A duration value as Kubernetes shows it (a Stringer: "-1s"). */
static void neg_duration(struct field_errors *fe, const char *path,
			 int64_t ms)
{
	char buf[48];

	if (ms == CONFIG_UNSET || ms >= 0)
		return;
	fe_add(fe, FE_INVALID, path, config_ms_string(ms, buf, sizeof(buf)),
	       false, NEGATIVE);
}

static void neg_int(struct field_errors *fe, const char *path, int64_t v)
{
	if (v != CONFIG_UNSET && v < 0)
		fe_invalid_num(fe, path, v, NEGATIVE);
}

static void port_range(struct field_errors *fe, const char *path, int64_t v)
{
	if (v < 1 || v > 65535)
		fe_invalid_num(fe, path, v, "must be between 1 and 65535, "
			       "inclusive");
}

/* apimachinery's IsDNS1035Label, its two messages joined by "," as
 * Kueue joins them. */
static void check_dns1035_label(struct field_errors *fe, const char *path,
				const char *s)
{
	size_t n = strlen(s);
	bool ok = n > 0 && s[0] >= 'a' && s[0] <= 'z' &&
		  ((s[n - 1] >= 'a' && s[n - 1] <= 'z') ||
		   (s[n - 1] >= '0' && s[n - 1] <= '9'));
	char msg[512] = "";

	for (size_t i = 0; ok && i < n; i++)
		ok = (s[i] >= 'a' && s[i] <= 'z') ||
		     (s[i] >= '0' && s[i] <= '9') || s[i] == '-';
	if (n > 63)
		snprintf(msg, sizeof(msg), "must be no more than 63 "
			 "characters");
	if (!ok)
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 "%sa DNS-1035 label must consist of lower case "
			 "alphanumeric characters or '-', start with an "
			 "alphabetic character, and end with an alphanumeric "
			 "character (e.g. 'my-name',  or 'abc-123', regex "
			 "used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
			 *msg ? "," : "");
	if (*msg)
		fe_invalid(fe, path, s, msg);
}

/* metav1's LabelSelectorAsSelector(...).Matches, for the namespace rule:
 * the selector must match neither kube-system nor Kueue's namespace. */
static void must_not_match_namespaces(const struct config *c,
				      const struct config_selector *s,
				      const char *path,
				      struct field_errors *fe)
{
	const char *prohibited[2] = { "kube-system", c->namespace };
	char *str = label_selector_string(&s->sel);

	for (size_t i = 0; i < 2; i++) {
		struct smap labels = SMAP_INIT;

		if (!prohibited[i] || !*prohibited[i])
			continue;
		smap_set(&labels, "kubernetes.io/metadata.name",
			 prohibited[i]);
		if (label_selector_matches(&s->sel, &labels)) {
			char *q = go_quote(prohibited[i]);

			fe_add(fe, FE_INVALID, path, *str ? str : "{}", *str,
			       "should not match the %s namespace", q);
			free(q);
		}
		smap_release(&labels);
	}
	free(str);
}

/* ------------------------------------------------------------------ */
/* Kueue's rules, in validation.go's order */

static void check_wait_for_pods_ready(const struct config *c,
				      struct field_errors *fe)
{
	if (!c->wfpr_enable)
		return;
	neg_duration(fe, "waitForPodsReady.timeout", c->wfpr_timeout_ms);
	neg_duration(fe, "waitForPodsReady.recoveryTimeout",
		     c->wfpr_recovery_timeout_ms);
	neg_int(fe, "waitForPodsReady.requeuingStrategy.backoffLimitCount",
		c->wfpr_backoff_limit_count);
	neg_int(fe, "waitForPodsReady.requeuingStrategy.backoffBaseSeconds",
		c->wfpr_backoff_base_seconds);
	neg_int(fe, "waitForPodsReady.requeuingStrategy.backoffMaxSeconds",
		c->wfpr_backoff_max_seconds);
}

static void check_queue_visibility(const struct config *c,
				   struct field_errors *fe)
{
	const char *mc = "queueVisibility.clusterQueues.maxCount";

	if (c->api != CONFIG_API_V1BETA1)
		return;
	if (c->qv_max_count < 0)
		fe_invalid_num(fe, mc, c->qv_max_count, NEGATIVE);
	if (c->qv_max_count > 4000)
		fe_invalid_num(fe, mc, c->qv_max_count,
			       "must be less than 4000");
	if (c->qv_update_interval_seconds < 1)
		fe_invalid_num(fe, "queueVisibility.updateIntervalSeconds",
			       c->qv_update_interval_seconds,
			       "greater than or equal to 1");
}

static const char *framework_gvk(const char *name)
{
	for (size_t i = 0; config_frameworks[i]; i++)
		if (!strcmp(config_frameworks[i], name))
			return framework_gvks[i];
	return NULL;
}

static void check_integrations(const struct config *c,
			       const struct cfg_vopts *vo,
			       struct field_errors *fe)
{
	const struct config_strlist *fw = &c->int_frameworks;
	const struct config_strlist *ext = &c->int_external_frameworks;
	const char **managed = xcalloc(fw->n + ext->n + 1, sizeof(*managed));
	size_t nm = 0;
	bool pod = false;

	for (size_t i = 0; i < fw->n; i++) {
		const char *gvk = framework_gvk(fw->v[i]);
		char *p = xasprintf("integrations.frameworks[%zu]", i);
		bool dup = false;

		for (size_t j = 0; gvk && j < nm; j++)
			dup = dup || !strcmp(managed[j], gvk);
		if (!gvk)
			fe_unsupported(fe, p, fw->v[i], config_frameworks);
		else if (dup)
			fe_duplicate(fe, p, fw->v[i]);
		else
			managed[nm++] = gvk;
		pod = pod || !strcmp(fw->v[i], "pod");
		free(p);
	}
	for (size_t i = 0; i < ext->n; i++) {
		/* schema.ParseKindArg: "Kind.version.group", two dots at
		 * least; the group is the rest */
		const char *d1 = strchr(ext->v[i], '.');
		const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
		char *p = xasprintf("integrations.externalFrameworks[%zu]", i);
		bool dup = false;

		for (size_t j = 0; d2 && j < nm; j++)
			dup = dup || !strcmp(managed[j], ext->v[i]);
		if (!d2)
			fe_invalid(fe, p, ext->v[i], "must be format, "
				   "'Kind.version.group.com'");
		else if (dup)
			fe_duplicate(fe, p, ext->v[i]);
		else
			managed[nm++] = ext->v[i];
		free(p);
	}
	free(managed);
	/* validatePodIntegrationOptions: managedJobsNamespaceSelector is
	 * always set (defaulted) and checked below for every config, so
	 * only podOptions' own selector is left */
	if (pod && c->int_pod_ns_selector.set && !vo->skip_pod_ns_match)
		must_not_match_namespaces(c, &c->int_pod_ns_selector,
					  "integrations.podOptions."
					  "namespaceSelector", fe);
}

static void check_multikueue(const struct config *c, struct field_errors *fe)
{
	char **names;

	neg_duration(fe, "multiKueue.gcInterval", c->mk_gc_interval_ms);
	neg_duration(fe, "multiKueue.workerLostTimeout",
		     c->mk_worker_lost_timeout_ms);
	if (c->mk_origin)
		check_label_value(fe, "multiKueue.origin", c->mk_origin);
	/* cueue's own (rule 7) */
	names = xcalloc(c->mk_external_frameworks.n + 1, sizeof(*names));
	for (size_t i = 0; i < c->mk_external_frameworks.n; i++) {
		const char *s = c->mk_external_frameworks.v[i].name;
		char *p = xasprintf("multiKueue.externalFrameworks[%zu].name",
				    i);
		const char *d1 = s ? strchr(s, '.') : NULL;

		if (!s || !*s)
			fe_required(fe, p, NULL);
		else if (!d1 || !strchr(d1 + 1, '.'))
			fe_invalid(fe, p, s, "must be format, "
				   "'Kind.version.group'");
		names[i] = (char *)s;
		free(p);
	}
	{
		bool *dup = config_find_dups(names,
					     c->mk_external_frameworks.n);

		for (size_t i = 0; i < c->mk_external_frameworks.n; i++) {
			char *p;

			if (!dup[i] || !*names[i])
				continue;
			p = xasprintf("multiKueue.externalFrameworks[%zu]."
				      "name", i);
			fe_duplicate(fe, p, names[i]);
			free(p);
		}
		free(dup);
	}
	free(names);
	if (c->mk_incremental_step_size != CONFIG_UNSET &&
	    c->mk_incremental_step_size < 1)
		fe_invalid_num(fe, "multiKueue.incrementalDispatcherConfig."
			       "stepSize", c->mk_incremental_step_size,
			       "must be greater than or equal to 1");
	names = xcalloc(c->mk_credentials_providers.n + 1, sizeof(*names));
	for (size_t i = 0; i < c->mk_credentials_providers.n; i++)
		names[i] = c->mk_credentials_providers.v[i].name;
	{
		bool *dup = config_find_dups(names,
					     c->mk_credentials_providers.n);

		for (size_t i = 0; i < c->mk_credentials_providers.n; i++) {
			char *p = xasprintf("multiKueue.clusterProfile."
					    "credentialsProviders[%zu].name",
					    i);

			if (!names[i] || !*names[i])
				fe_required(fe, p, NULL);
			else if (dup[i])
				fe_duplicate(fe, p, names[i]);
			free(p);
		}
		free(dup);
	}
	free(names);
}

static void check_fair_sharing(const struct config *c, struct field_errors *fe)
{
	static const char *const valid[] = {
		"LessThanOrEqualToFinalShare",
		"LessThanInitialShare",
		"LessThanOrEqualToFinalShare,LessThanInitialShare",
		NULL,
	};
	const struct config_strlist *s = &c->fs_preemption_strategies;
	size_t len = 1;
	char *joined;

	if (!s->n)
		return;
	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->v[i]) + 1;
	joined = xcalloc(len, 1);
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			strcat(joined, ",");
		strcat(joined, s->v[i]);
	}
	if (!in_list(valid, joined))
		fe_unsupported(fe, "fairSharing.preemptionStrategies", joined,
			       valid);
	free(joined);
}

static void check_admission_fair_sharing(const struct config *c,
					 struct field_errors *fe)
{
	char buf[48];

	if (!c->afs_enable)
		return;
	neg_duration(fe, "admissionFairSharing.usageHalfLifeTime",
		     c->afs_usage_half_life_ms);
	if (c->afs_usage_sampling_ms <= 0)
		fe_add(fe, FE_INVALID,
		       "admissionFairSharing.usageSamplingInterval",
		       config_ms_string(c->afs_usage_sampling_ms, buf,
					sizeof(buf)), false,
		       "must be greater than 0");
	for (size_t i = 0; i < c->afs_resource_weights.n; i++) {
		const struct config_float_kv *w = &c->afs_resource_weights.v[i];
		char *p;

		if (!(w->value < 0))
			continue;
		p = xasprintf("admissionFairSharing.resourceWeights[%s]",
			      w->key);
		snprintf(buf, sizeof(buf), "%g", w->value);
		fe_add(fe, FE_INVALID, p, buf, false, NEGATIVE);
		free(p);
	}
}

static void check_resources(const struct config *c, struct field_errors *fe)
{
	const struct config_transformations *t = &c->res_transformations;
	const struct config_device_class_mappings *m =
		&c->res_device_class_mappings;
	char **inputs = xcalloc(t->n + 1, sizeof(*inputs));
	bool *dup;

	for (size_t i = 0; i < t->n; i++)
		inputs[i] = t->v[i].input;
	dup = config_find_dups(inputs, t->n);
	for (size_t i = 0; i < t->n; i++) {
		char *p = xasprintf("resources.transformations[%zu].input", i);

		if (!t->v[i].input || !*t->v[i].input)
			fe_required(fe, p, NULL);           /* cueue's own */
		else if (dup[i])
			fe_duplicate(fe, p, t->v[i].input);
		free(p);
		for (size_t j = 0; j < t->v[i].outputs.n; j++) {
			const struct config_quantity_kv *o =
				&t->v[i].outputs.v[j];
			char q[QUANTITY_BUF];

			if (o->value.milli >= 0)
				continue;
			p = xasprintf("resources.transformations[%zu]."
				      "outputs[%s]", i, o->key);
			fe_invalid(fe, p, quantity_string(&o->value, q,
							  sizeof(q)), NEGATIVE);
			free(p);
		}
	}
	free(dup);
	free(inputs);
	/* deviceClassMappings (cueue's own, rule 6) */
	inputs = xcalloc(m->n + 1, sizeof(*inputs));
	for (size_t i = 0; i < m->n; i++)
		inputs[i] = m->v[i].name;
	dup = config_find_dups(inputs, m->n);
	for (size_t i = 0; i < m->n; i++) {
		const struct config_strlist *dc = &m->v[i].device_classes;
		char *p = xasprintf("resources.deviceClassMappings[%zu].name",
				    i);

		if (!m->v[i].name || !*m->v[i].name)
			fe_required(fe, p, NULL);
		else if (dup[i])
			fe_duplicate(fe, p, m->v[i].name);
		else
			check_qualified_name(fe, p, m->v[i].name);
		free(p);
		if (!dc->n) {
			p = xasprintf("resources.deviceClassMappings[%zu]."
				      "deviceClassNames", i);
			fe_required(fe, p, NULL);
			free(p);
		}
		for (size_t j = 0; j < dc->n; j++) {
			bool seen = false;

			p = xasprintf("resources.deviceClassMappings[%zu]."
				      "deviceClassNames[%zu]", i, j);
			for (size_t a = 0; a <= i && !seen; a++) {
				const struct config_strlist *o =
					&m->v[a].device_classes;
				size_t lim = a == i ? j : o->n;

				for (size_t b = 0; b < lim && !seen; b++)
					seen = !strcmp(o->v[b], dc->v[j]);
			}
			if (seen)
				fe_duplicate(fe, p, dc->v[j]);
			else
				check_qualified_name(fe, p, dc->v[j]);
			free(p);
		}
	}
	free(dup);
	free(inputs);
}

/* ------------------------------------------------------------------ */
/* cueue's own (config.c rules 1-5, 8-10) */

static void check_leader_election(const struct config *c,
				  struct field_errors *fe)
{
	static const char *const locks[] = { "leases", NULL };
	const char *path = "leaderElection.leaseDuration";
	char buf[48];

	if (!c->le_leader_elect)
		return;
	if (c->le_lease_duration_ms <= 0)
		fe_add(fe, FE_INVALID, path, config_ms_string(
		       c->le_lease_duration_ms, buf, sizeof(buf)), false,
		       "must be greater than zero");
	else if (c->le_lease_duration_ms <= c->le_renew_deadline_ms)
		fe_add(fe, FE_INVALID, path, config_ms_string(
		       c->le_lease_duration_ms, buf, sizeof(buf)), false,
		       "LeaseDuration must be greater than RenewDeadline");
	path = "leaderElection.renewDeadline";
	if (c->le_renew_deadline_ms <= 0)
		fe_add(fe, FE_INVALID, path, config_ms_string(
		       c->le_renew_deadline_ms, buf, sizeof(buf)), false,
		       "must be greater than zero");
	else if (c->le_retry_period_ms > 0 &&
		 (double)c->le_renew_deadline_ms <=
		 1.2 * (double)c->le_retry_period_ms)
		fe_add(fe, FE_INVALID, path, config_ms_string(
		       c->le_renew_deadline_ms, buf, sizeof(buf)), false,
		       "renewDeadline must be greater than retryPeriod*"
		       "JitterFactor (1.2)");
	if (c->le_retry_period_ms <= 0)
		fe_add(fe, FE_INVALID, "leaderElection.retryPeriod",
		       config_ms_string(c->le_retry_period_ms, buf,
					sizeof(buf)), false,
		       "must be greater than zero");
	if (c->le_resource_lock && strcmp(c->le_resource_lock, "leases"))
		fe_unsupported(fe, "leaderElection.resourceLock",
			       c->le_resource_lock, locks);
}

static bool is_prometheus_name(const char *s)
{
	if (!*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		     *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static void check_metrics(const struct config *c, struct field_errors *fe)
{
	const struct config_custom_labels *l = &c->metrics_custom_labels;
	char **names = xcalloc(l->n + 1, sizeof(*names));
	bool *dup;

	if (l->n > 8)
		fe_too_many(fe, "metrics.customLabels", l->n, 8);
	for (size_t i = 0; i < l->n; i++)
		names[i] = l->v[i].name;
	dup = config_find_dups(names, l->n);
	for (size_t i = 0; i < l->n; i++) {
		const struct config_custom_label *e = &l->v[i];
		char *p = xasprintf("metrics.customLabels[%zu].name", i);

		if (!e->name || !*e->name)
			fe_required(fe, p, NULL);
		else if (!is_prometheus_name(e->name))
			fe_invalid(fe, p, e->name, "must match the regex "
				   "[a-zA-Z_][a-zA-Z0-9_]* (a Prometheus "
				   "label name)");
		else if (dup[i])
			fe_duplicate(fe, p, e->name);
		free(p);
		if (e->source_label_key) {
			p = xasprintf("metrics.customLabels[%zu]."
				      "sourceLabelKey", i);
			check_qualified_name(fe, p, e->source_label_key);
			free(p);
		}
		if (e->source_annotation_key) {
			p = xasprintf("metrics.customLabels[%zu]."
				      "sourceAnnotationKey", i);
			check_qualified_name(fe, p, e->source_annotation_key);
			if (e->source_label_key)
				fe_invalid(fe, p, e->source_annotation_key,
					   "sourceLabelKey and "
					   "sourceAnnotationKey are mutually "
					   "exclusive");
			free(p);
		}
	}
	free(dup);
	free(names);
}

static void check_controller(const struct config *c, struct field_errors *fe)
{
	char buf[48];

	for (size_t i = 0; i < c->controller_gk_concurrency.n; i++) {
		const struct config_int_kv *kv =
			&c->controller_gk_concurrency.v[i];
		char *p;

		if (kv->value >= 1)
			continue;
		p = xasprintf("controller.groupKindConcurrency[%s]", kv->key);
		fe_invalid_num(fe, p, kv->value,
			       "must be greater than or equal to 1");
		free(p);
	}
	if (c->controller_cache_sync_timeout_ms != CONFIG_UNSET &&
	    c->controller_cache_sync_timeout_ms < 0)
		fe_add(fe, FE_INVALID, "controller.cacheSyncTimeout",
		       config_ms_string(c->controller_cache_sync_timeout_ms,
					buf, sizeof(buf)), false, NEGATIVE);
	if (c->client_qps > 0 && c->client_burst < 1)
		fe_invalid_num(fe, "clientConnection.burst", c->client_burst,
			       "must be greater than 0 when qps is greater "
			       "than 0");
}

static void check_tls(const struct config *c, struct field_errors *fe)
{
	for (size_t i = 0; i < c->tls_cipher_suites.n; i++) {
		char *p;

		if (config_tls_cipher_suite_known(c->tls_cipher_suites.v[i]))
			continue;
		p = xasprintf("tls.cipherSuites[%zu]", i);
		fe_invalid(fe, p, c->tls_cipher_suites.v[i],
			   "not a TLS cipher suite Go supports");
		free(p);
	}
	for (size_t i = 0; i < c->tls_curve_preferences.n; i++) {
		char *p;

		if (config_tls_curve_known(c->tls_curve_preferences.v[i]))
			continue;
		p = xasprintf("tls.curvePreferences[%zu]", i);
		fe_invalid_num(fe, p, c->tls_curve_preferences.v[i],
			       "not a TLS supported group Go offers (23 "
			       "CurveP256, 24 CurveP384, 25 CurveP521, 29 "
			       "X25519, 4588 X25519MLKEM768)");
		free(p);
	}
	/* Go's TLS 1.3 suites are not configurable; Kueue prints the list
	 * as Go's %#v does */
	if (c->tls_min_version == CONFIG_TLS_13 && c->tls_cipher_suites.n) {
		struct sbuf b;

		sbuf_init(&b, 0);
		sbuf_adds(&b, "[]string{");
		for (size_t i = 0; i < c->tls_cipher_suites.n; i++)
			sbuf_addf(&b, "%s\"%s\"", i ? ", " : "",
				  c->tls_cipher_suites.v[i]);
		sbuf_adds(&b, "}");
		fe_add(fe, FE_INVALID, "tls.cipherSuites", sbuf_cstr(&b),
		       false, "may not be specified when `minVersion` is "
		       "'VersionTLS13'");
		sbuf_release(&b);
	}
}

static void check_visibility(const struct config *c, struct field_errors *fe)
{
	const char *a = c->vis_bind_address;
	unsigned char buf[16];

	if (a && *a && inet_pton(AF_INET, a, buf) != 1 &&
	    inet_pton(AF_INET6, a, buf) != 1)
		fe_invalid(fe, "visibilityServer.bindAddress", a,
			   "must be a valid IP address, (e.g. 10.9.8.7 or "
			   "2001:db8::ffff)");
	port_range(fe, "visibilityServer.bindPort", c->vis_bind_port);
}

void config_check(const struct config *c, const struct cfg_vopts *vo,
		  struct field_errors *fe)
{
	/* Kueue's validate(), in its order */
	check_wait_for_pods_ready(c, fe);
	check_queue_visibility(c, fe);
	check_integrations(c, vo, fe);
	check_multikueue(c, fe);
	check_fair_sharing(c, fe);
	check_admission_fair_sharing(c, fe);
	if (c->icm_enable) {
		if (c->icm_webhook_service_name)
			check_dns1035_label(fe, "internalCertManagement."
					    "webhookServiceName",
					    c->icm_webhook_service_name);
		if (c->icm_webhook_secret_name)
			check_dns1123_subdomain_value(fe,
				"internalCertManagement.webhookSecretName",
				c->icm_webhook_secret_name);
	}
	check_resources(c, fe);
	if (c->managed_jobs_ns_selector.set && !vo->skip_mjns_match)
		must_not_match_namespaces(c, &c->managed_jobs_ns_selector,
					  "managedJobsNamespaceSelector", fe);
	neg_duration(fe, "objectRetentionPolicies.workloads.afterFinished",
		     c->orp_after_finished_ms);
	neg_duration(fe, "objectRetentionPolicies.workloads."
		     "afterDeactivatedByKueue", c->orp_after_deactivated_ms);
	/* cueue's own */
	if (c->namespace && *c->namespace)
		check_dns1123_label(fe, "namespace", c->namespace);
	port_range(fe, "webhook.port", c->webhook_port);
	check_leader_election(c, fe);
	check_metrics(c, fe);
	check_controller(c, fe);
	check_tls(c, fe);
	check_visibility(c, fe);
}

int config_validate(const struct config *c, struct field_errors *fe)
{
	struct cfg_vopts vo = { false, false };
	size_t before = fe->n;

	config_check(c, &vo, fe);
	return fe->n > before ? -1 : 0;
}
