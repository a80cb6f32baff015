/*
 * builtin: the static table of built-in types and their strategies.
 *
 * Each hook mirrors a piece of kube-apiserver: *_defaults are the Go
 * SetDefaults_* functions (run on decode), *_prepare the strategy's
 * PrepareForCreate/PrepareForUpdate (system-owned fields, run after
 * mutating admission and after uid/creationTimestamp are set), and
 * *_validate the strategy's Validate, reduced to the rules cueue, kubectl
 * and the tests meet. Everything is in place on caller-owned trees.
 */
#include "devserver/builtin.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "devserver/jobval.h"
#include "devserver/schema.h"
#include "model/names.h"
#include "model/timestamp.h"

/* ---- small JSON helpers ---- */

static json_t *obj_child(json_t *o, const char *key)
{
	json_t *c = json_object_get(o, key);

	if (!json_is_object(c)) {
		c = json_object();
		json_object_set_new(o, key, c);
	}
	return c;
}

static void set_default(json_t *o, const char *key, json_t *val)
{
	if (!json_object_get(o, key))
		json_object_set_new(o, key, val);
	else
		json_decref(val);
}

char *builtin_field_value(const json_t *obj, const char *path)
{
	const json_t *cur = obj;
	const char *p = path;

	while (cur && *p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		char key[128];

		if (n >= sizeof(key))
			return xstrdup("");
		memcpy(key, p, n);
		key[n] = '\0';
		cur = json_object_get(cur, key);
		p += n + (dot ? 1 : 0);
	}
	if (json_is_string(cur))
		return xstrdup(json_string_value(cur));
	if (json_is_integer(cur))
		return xasprintf("%lld", (long long)json_integer_value(cur));
	if (json_is_boolean(cur))
		return xstrdup(json_is_true(cur) ? "true" : "false");
	return xstrdup("");
}

/* ---- version priority (apimachinery version.CompareKubeAwareVersionStrings) ---- */

/* Parses v<major>[(alpha|beta)<minor>]: returns 0 and fills kind (2 GA,
 * 1 beta, 0 alpha), or -1 when not Kubernetes-like. */
static int kube_version(const char *s, int *kind, long *major, long *minor)
{
	char *end;

	if (s[0] != 'v' || !isdigit((unsigned char)s[1]))
		return -1;
	*major = strtol(s + 1, &end, 10);
	*minor = 0;
	if (!*end) {
		*kind = 2;
		return 0;
	}
	if (!strncmp(end, "beta", 4)) {
		*kind = 1;
		end += 4;
	} else if (!strncmp(end, "alpha", 5)) {
		*kind = 0;
		end += 5;
	} else {
		return -1;
	}
	if (!isdigit((unsigned char)*end))
		return -1;
	*minor = strtol(end, &end, 10);
	return *end ? -1 : 0;
}

int builtin_version_cmp(const char *a, const char *b)
{
	int ka, kb;
	long ma, mb, na, nb;
	bool va = kube_version(a, &ka, &ma, &na) == 0;
	bool vb = kube_version(b, &kb, &mb, &nb) == 0;

	if (!va && !vb)
		return strcmp(a, b);
	if (va != vb)
		return va ? -1 : 1;
	if (ka != kb)
		return kb - ka;
	if (ma != mb)
		return ma > mb ? -1 : 1;
	if (na != nb)
		return na > nb ? -1 : 1;
	return 0;
}

/* ---- pods and pod templates ---- */

static const char *default_pull_policy(const char *image)
{
	const char *slash = image ? strrchr(image, '/') : NULL;
	const char *last = slash ? slash + 1 : image;
	const char *colon;

	if (!image || strchr(image, '@'))
		return image ? "IfNotPresent" : "Always";
	colon = strchr(last, ':');
	if (!colon || !strcmp(colon + 1, "latest"))
		return "Always";
	return "IfNotPresent";
}

static void container_defaults(json_t *c)
{
	json_t *ports = json_object_get(c, "ports");
	size_t i;
	json_t *p;

	set_default(c, "terminationMessagePath",
		    json_string("/dev/termination-log"));
	set_default(c, "terminationMessagePolicy", json_string("File"));
	set_default(c, "imagePullPolicy",
		    json_string(default_pull_policy(jx_str(c, "image"))));
	set_default(c, "resources", json_object());
	json_array_foreach(ports, i, p)
		if (json_is_object(p))
			set_default(p, "protocol", json_string("TCP"));
}

void builtin_pod_spec_defaults(json_t *spec)
{
	static const char *const lists[] = { "containers", "initContainers" };

	if (!json_is_object(spec))
		return;
	set_default(spec, "restartPolicy", json_string("Always"));
	set_default(spec, "terminationGracePeriodSeconds", json_integer(30));
	set_default(spec, "dnsPolicy", json_string("ClusterFirst"));
	set_default(spec, "securityContext", json_object());
	set_default(spec, "schedulerName", json_string("default-scheduler"));
	for (size_t l = 0; l < 2; l++) {
		json_t *arr = json_object_get(spec, lists[l]), *c;
		size_t i;

		json_array_foreach(arr, i, c)
			if (json_is_object(c))
				container_defaults(c);
	}
}

static void pod_defaults(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec");

	if (!json_is_object(spec))
		return;
	builtin_pod_spec_defaults(spec);
	set_default(spec, "enableServiceLinks", json_true());
}

static void pod_prepare(json_t *obj, const json_t *old, int64_t now_ms)
{
	(void)now_ms;
	if (!old)
		json_object_set_new(obj, "status",
				    json_pack("{s:s}", "phase", "Pending"));
}

static void validate_pod_spec(const json_t *spec, const char *path,
			      bool job, struct field_errors *fe)
{
	static const char *const job_rp[] = { "OnFailure", "Never", NULL };
	json_t *cs = json_object_get(spec, "containers");
	const char *rp = jx_str(spec, "restartPolicy");
	char p[256];
	size_t i;
	json_t *c;

	snprintf(p, sizeof(p), "%s.containers", path);
	if (!json_is_array(cs) || !json_array_size(cs))
		fe_required(fe, p, NULL);
	json_array_foreach(cs, i, c) {
		char cp[300];
		const char *name = jx_str(c, "name");

		snprintf(cp, sizeof(cp), "%s[%zu].name", p, i);
		if (!name || !*name)
			fe_required(fe, cp, NULL);
		else
			check_dns1123_label(fe, cp, name);
		snprintf(cp, sizeof(cp), "%s[%zu].image", p, i);
		if (!jx_str(c, "image") || !*jx_str(c, "image"))
			fe_required(fe, cp, NULL);
	}
	snprintf(p, sizeof(p), "%s.restartPolicy", path);
	if (job && (!rp || (strcmp(rp, "OnFailure") && strcmp(rp, "Never"))))
		fe_unsupported(fe, p, rp ? rp : "", job_rp);
}

static void pod_validate(const json_t *obj, const json_t *old,
			 struct field_errors *fe)
{
	const json_t *spec = json_object_get(obj, "spec");

	(void)old;
	if (!json_is_object(spec)) {
		fe_required(fe, "spec", NULL);
		return;
	}
	validate_pod_spec(spec, "spec", false, fe);
}

/* ---- batch/v1 Job ---- */

static void job_defaults(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec"), *tmpl, *tspec;

	if (!json_is_object(spec))
		return;
	if (!json_object_get(spec, "completions") &&
	    !json_object_get(spec, "parallelism"))
		json_object_set_new(spec, "completions", json_integer(1));
	set_default(spec, "parallelism", json_integer(1));
	set_default(spec, "backoffLimit",
		    json_integer(json_object_get(spec, "backoffLimitPerIndex")
				 ? 2147483647 : 6));
	set_default(spec, "completionMode", json_string("NonIndexed"));
	set_default(spec, "suspend", json_false());
	set_default(spec, "podReplacementPolicy",
		    json_string(json_object_get(spec, "podFailurePolicy")
				? "Failed" : "TerminatingOrFailed"));
	set_default(spec, "manualSelector", json_false());
	tmpl = json_object_get(spec, "template");
	tspec = json_is_object(tmpl) ? json_object_get(tmpl, "spec") : NULL;
	builtin_pod_spec_defaults(tspec);
}

static const char *const job_label_keys[] = {
	"batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name",
	"controller-uid", "job-name",
};

/* Job strategy generateSelector, and SetDefaults_Job's copy of the
 * template labels onto a Job that has none (applied on read back from
 * storage in the real server, so visible in the create response). */
static void job_prepare(json_t *obj, const json_t *old, int64_t now_ms)
{
	json_t *meta = obj_child(obj, "metadata");
	json_t *spec = json_object_get(obj, "spec");
	json_t *tmpl = json_is_object(spec) ? json_object_get(spec, "template")
					    : NULL;
	json_t *tl, *labels;
	const char *uid = jx_str(meta, "uid");
	const char *name = jx_str(meta, "name");

	(void)now_ms;
	if (!json_is_object(tmpl) || !uid || !name)
		return;
	if (old) {
		/* Lenient update: keep the generated selector and labels
		 * when a replace omits them. */
		const json_t *os = json_object_get(old, "spec");
		const json_t *otl = json_object_get(json_object_get(
			json_object_get(os, "template"), "metadata"), "labels");

		if (!json_object_get(spec, "selector") &&
		    json_object_get(os, "selector"))
			json_object_set(spec, "selector",
					json_object_get(os, "selector"));
		tl = obj_child(obj_child(tmpl, "metadata"), "labels");
		for (size_t i = 0; i < 4; i++) {
			json_t *v = json_object_get(otl, job_label_keys[i]);

			if (v && !json_object_get(tl, job_label_keys[i]))
				json_object_set(tl, job_label_keys[i], v);
		}
		return;
	}
	if (json_is_true(json_object_get(spec, "manualSelector")))
		return;
	tl = obj_child(obj_child(tmpl, "metadata"), "labels");
	json_object_set_new(tl, job_label_keys[0], json_string(uid));
	json_object_set_new(tl, job_label_keys[1], json_string(name));
	json_object_set_new(tl, job_label_keys[2], json_string(uid));
	json_object_set_new(tl, job_label_keys[3], json_string(name));
	json_object_set_new(spec, "selector",
			    json_pack("{s:{s:s}}", "matchLabels",
				      job_label_keys[0], uid));
	labels = json_object_get(meta, "labels");
	if (!json_is_object(labels) || !json_object_size(labels))
		json_object_set_new(meta, "labels", json_deep_copy(tl));
}

static void check_nonneg(const json_t *spec, const char *key,
			 struct field_errors *fe)
{
	json_t *v = json_object_get(spec, key);
	char path[64];

	snprintf(path, sizeof(path), "spec.%s", key);
	if (json_is_integer(v) && json_integer_value(v) < 0)
		fe_invalid_num(fe, path, json_integer_value(v),
			       "must be greater than or equal to 0");
}

static void job_validate(const json_t *obj, const json_t *old,
			 struct field_errors *fe)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *tmpl, *tspec;

	if (!json_is_object(spec)) {
		fe_required(fe, "spec.template", NULL);
		return;
	}
	tmpl = json_object_get(spec, "template");
	if (!json_is_object(tmpl)) {
		fe_required(fe, "spec.template", NULL);
		return;
	}
	check_nonneg(spec, "parallelism", fe);
	check_nonneg(spec, "completions", fe);
	check_nonneg(spec, "backoffLimit", fe);
	tspec = json_object_get(tmpl, "spec");
	if (!json_is_object(tspec))
		fe_required(fe, "spec.template.spec", NULL);
	else
		validate_pod_spec(tspec, "spec.template.spec", true, fe);
	/* ValidateJobUpdate's spec rules; a /status write keeps the stored
	 * spec, so they find nothing there. */
	if (old)
		jobval_update(obj, old, fe);
}

/* ---- core/v1 Namespace ---- */

static void namespace_prepare(json_t *obj, const json_t *old, int64_t now_ms)
{
	json_t *meta = obj_child(obj, "metadata");
	const char *name = jx_str(meta, "name");

	(void)now_ms;
	if (name)
		json_object_set_new(obj_child(meta, "labels"),
				    "kubernetes.io/metadata.name",
				    json_string(name));
	if (!old) {
		json_t *spec = obj_child(obj, "spec");
		json_t *fin = json_object_get(spec, "finalizers");
		bool has = false;
		size_t i;
		json_t *f;

		json_array_foreach(fin, i, f)
			if (!strcmp(json_string_value(f) ? json_string_value(f)
							 : "", "kubernetes"))
				has = true;
		if (!json_is_array(fin)) {
			fin = json_array();
			json_object_set_new(spec, "finalizers", fin);
		}
		if (!has)
			json_array_append_new(fin, json_string("kubernetes"));
		json_object_set_new(obj, "status",
				    json_pack("{s:s}", "phase", "Active"));
	}
}

/* ---- core/v1 Secret, Service ---- */

static void secret_defaults(json_t *obj)
{
	set_default(obj, "type", json_string("Opaque"));
}

/* resource.k8s.io/v1 device requests: exactly.allocationMode ExactCount,
 * and then count 1 (kube's SetDefaults_ExactDeviceRequest). */
static void device_requests_defaults(json_t *spec)
{
	json_t *reqs = json_object_get(json_object_get(spec, "devices"),
				       "requests"), *r;
	size_t i;

	json_array_foreach(reqs, i, r) {
		json_t *ex = json_object_get(r, "exactly");
		const char *mode;

		if (!json_is_object(ex))
			continue;
		set_default(ex, "allocationMode", json_string("ExactCount"));
		mode = json_string_value(json_object_get(ex,
							 "allocationMode"));
		if (mode && !strcmp(mode, "ExactCount"))
			set_default(ex, "count", json_integer(1));
	}
}

static void rct_defaults(json_t *obj)
{
	device_requests_defaults(json_object_get(json_object_get(obj, "spec"),
						 "spec"));
}

static void claim_defaults(json_t *obj)
{
	device_requests_defaults(json_object_get(obj, "spec"));
}

static void service_defaults(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec"), *ports, *p;
	size_t i;

	if (!json_is_object(spec))
		return;
	set_default(spec, "type", json_string("ClusterIP"));
	set_default(spec, "sessionAffinity", json_string("None"));
	ports = json_object_get(spec, "ports");
	json_array_foreach(ports, i, p) {
		if (!json_is_object(p))
			continue;
		set_default(p, "protocol", json_string("TCP"));
		if (json_object_get(p, "port"))
			set_default(p, "targetPort",
				    json_deep_copy(json_object_get(p, "port")));
	}
}

/* The ClusterIP allocator, reduced: an address in 10.96.0.0/12 derived
 * from the uid (unique enough for a stand-in; nothing routes to it). */
static void service_prepare(json_t *obj, const json_t *old, int64_t now_ms)
{
	json_t *spec = json_object_get(obj, "spec");
	const char *type = json_string_value(json_object_get(spec, "type"));
	const char *uid = json_string_value(json_object_get(
		json_object_get(obj, "metadata"), "uid"));
	uint32_t h = 2166136261u;
	char ip[32];

	(void)now_ms;
	if (old)
		return;
	json_object_set_new(obj, "status", json_pack("{s:{}}", "loadBalancer"));
	if (!json_is_object(spec) || !uid || (type &&
	    !strcmp(type, "ExternalName")) ||
	    json_string_value(json_object_get(spec, "clusterIP")))
		return;
	for (const char *c = uid; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	h = h % ((1u << 20) - 2) + 1;
	snprintf(ip, sizeof(ip), "10.%u.%u.%u", 96 + (h >> 16), (h >> 8) & 255,
		 h & 255);
	json_object_set_new(spec, "clusterIP", json_string(ip));
	json_object_set_new(spec, "clusterIPs", json_pack("[s]", ip));
	set_default(spec, "ipFamilies", json_pack("[s]", "IPv4"));
	set_default(spec, "ipFamilyPolicy", json_string("SingleStack"));
	set_default(spec, "internalTrafficPolicy", json_string("Cluster"));
}

/* ---- admissionregistration.k8s.io/v1 webhook configurations ---- */

static void webhooks_defaults(json_t *obj, bool mutating)
{
	json_t *hooks = json_object_get(obj, "webhooks"), *h, *rules, *r;
	size_t i, j;

	json_array_foreach(hooks, i, h) {
		if (!json_is_object(h))
			continue;
		set_default(h, "failurePolicy", json_string("Fail"));
		set_default(h, "matchPolicy", json_string("Equivalent"));
		set_default(h, "namespaceSelector", json_object());
		set_default(h, "objectSelector", json_object());
		set_default(h, "timeoutSeconds", json_integer(10));
		if (mutating)
			set_default(h, "reinvocationPolicy",
				    json_string("Never"));
		rules = json_object_get(h, "rules");
		json_array_foreach(rules, j, r)
			if (json_is_object(r))
				set_default(r, "scope", json_string("*"));
		r = json_object_get(json_object_get(h, "clientConfig"),
				    "service");
		if (json_is_object(r))
			set_default(r, "port", json_integer(443));
	}
}

static void mwc_defaults(json_t *obj)
{
	webhooks_defaults(obj, true);
}

static void vwc_defaults(json_t *obj)
{
	webhooks_defaults(obj, false);
}

/* ---- apiextensions.k8s.io/v1 CustomResourceDefinition ---- */

static void crd_defaults(json_t *obj)
{
	json_t *spec = json_object_get(obj, "spec"), *names, *conv;
	const char *kind;

	if (!json_is_object(spec))
		return;
	names = json_object_get(spec, "names");
	kind = json_is_object(names) ? jx_str(names, "kind") : NULL;
	if (kind) {
		char *lower = xstrdup(kind);

		for (char *c = lower; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		set_default(names, "singular", json_string(lower));
		free(lower);
		if (!json_object_get(names, "listKind")) {
			char *lk = xasprintf("%sList", kind);

			json_object_set_new(names, "listKind", json_string(lk));
			free(lk);
		}
	}
	conv = obj_child(spec, "conversion");
	set_default(conv, "strategy", json_string("None"));
}

static json_t *condition(const char *type, const char *reason,
			 const char *message, const json_t *old_conds,
			 const char *now)
{
	const char *ltt = now;
	size_t i;
	json_t *c;

	json_array_foreach(old_conds, i, c) {
		if (!strcmp(jx_str(c, "type") ? jx_str(c, "type") : "", type) &&
		    !strcmp(jx_str(c, "status") ? jx_str(c, "status") : "",
			    "True") && jx_str(c, "lastTransitionTime"))
			ltt = jx_str(c, "lastTransitionTime");
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
			 "True", "lastTransitionTime", ltt, "reason", reason,
			 "message", message);
}

/* What the apiextensions controllers (naming, establishing) would write
 * shortly after a create or update, done synchronously. */
static void crd_prepare(json_t *obj, const json_t *old, int64_t now_ms)
{
	json_t *spec = json_object_get(obj, "spec");
	const json_t *ostatus = old ? json_object_get(old, "status") : NULL;
	const json_t *oconds = json_object_get(ostatus, "conditions");
	json_t *status = json_object(), *stored = json_array(), *conds, *v;
	json_t *ostored = json_object_get(ostatus, "storedVersions");
	char now[TIMESTAMP_BUF];
	size_t i;

	timestamp_format(now_ms, now, sizeof(now));
	json_array_foreach(ostored, i, v)
		json_array_append(stored, v);
	json_array_foreach(json_object_get(spec, "versions"), i, v) {
		const char *name = jx_str(v, "name");
		bool have = false;
		size_t j;
		json_t *s;

		if (!json_is_true(json_object_get(v, "storage")) || !name)
			continue;
		json_array_foreach(stored, j, s)
			if (!strcmp(json_string_value(s), name))
				have = true;
		if (!have)
			json_array_append_new(stored, json_string(name));
	}
	conds = json_array();
	json_array_append_new(conds, condition("NamesAccepted", "NoConflicts",
					       "no conflicts found", oconds,
					       now));
	json_array_append_new(conds, condition("Established",
		"InitialNamesAccepted", "the initial names have been accepted",
		oconds, now));
	json_object_set(status, "acceptedNames",
			json_object_get(spec, "names") ? json_object_get(spec,
			"names") : json_object());
	json_object_set_new(status, "conditions", conds);
	json_object_set_new(status, "storedVersions", stored);
	json_object_set_new(obj, "status", status);
}

static void crd_validate(const json_t *obj, const json_t *old,
			 struct field_errors *fe)
{
	static const char *const scopes[] = { "Cluster", "Namespaced", NULL };
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *names = json_object_get(spec, "names");
	const json_t *versions = json_object_get(spec, "versions"), *v;
	const char *group = jx_str(spec, "group");
	const char *plural = jx_str(names, "plural");
	const char *kind = jx_str(names, "kind");
	const char *scope = jx_str(spec, "scope");
	const char *name = jx_str(json_object_get(obj, "metadata"), "name");
	size_t i, nstorage = 0;

	(void)old;
	if (!group || !*group)
		fe_required(fe, "spec.group", NULL);
	else if (!strchr(group, '.'))
		fe_invalid(fe, "spec.group", group,
			   "should be a domain with at least one dot");
	if (!plural || !*plural)
		fe_required(fe, "spec.names.plural", NULL);
	else
		check_dns1123_label(fe, "spec.names.plural", plural);
	if (!kind || !*kind)
		fe_required(fe, "spec.names.kind", NULL);
	if (!scope)
		fe_required(fe, "spec.scope", NULL);
	else if (strcmp(scope, "Cluster") && strcmp(scope, "Namespaced"))
		fe_unsupported(fe, "spec.scope", scope, scopes);
	if (group && plural && name) {
		char *want = xasprintf("%s.%s", plural, group);

		if (strcmp(want, name))
			fe_invalid(fe, "metadata.name", name,
				   "must be spec.names.plural+\".\"+spec.group");
		free(want);
	}
	if (!json_is_array(versions) || !json_array_size(versions)) {
		fe_required(fe, "spec.versions", "must have exactly one version "
			    "marked as storage version");
		return;
	}
	json_array_foreach(versions, i, v) {
		char p[96];
		const char *vn = jx_str(v, "name");

		snprintf(p, sizeof(p), "spec.versions[%zu].name", i);
		if (!vn || !*vn)
			fe_required(fe, p, NULL);
		else
			check_dns1123_label(fe, p, vn);
		if (json_is_true(json_object_get(v, "storage")))
			nstorage++;
		snprintf(p, sizeof(p),
			 "spec.versions[%zu].schema.openAPIV3Schema", i);
		if (!json_is_object(json_object_get(json_object_get(v,
				"schema"), "openAPIV3Schema")))
			fe_required(fe, p, "schemas are required");
	}
	if (nstorage != 1)
		fe_invalid(fe, "spec.versions", "[...]",
			   "must have exactly one version marked as storage "
			   "version");
	/* every x-kubernetes-validations rule must compile: one the
	 * devserver cannot evaluate is refused, never ignored */
	schema_validate_crd_rules(spec, fe);
}

/* ---- APIService (kube-aggregator's validation, the parts met) ---- */

static void apiservice_validate(const json_t *obj, const json_t *old,
				struct field_errors *fe)
{
	const json_t *spec = json_object_get(obj, "spec");
	const char *name = jx_meta_str(obj, "name");
	const char *group = jx_str(spec, "group");
	const char *version = jx_str(spec, "version");
	const json_t *svc = json_object_get(spec, "service");
	char *want;

	(void)old;
	if (!version || !*version)
		fe_required(fe, "spec.version", "");
	if (!group && (!name || strcmp(name, version ? version : "")))
		fe_required(fe, "spec.group", "only v1 may have an empty group "
					      "and it better be legacy kube");
	want = xasprintf("%s.%s", version ? version : "",
			 group ? group : "");
	if (name && version && group && strcmp(name, want))
		fe_invalid(fe, "metadata.name", name,
			   "must be spec.version+\".\"+spec.group");
	free(want);
	if (json_is_object(svc)) {
		const json_t *gpm = json_object_get(spec,
						    "groupPriorityMinimum");
		const json_t *vp = json_object_get(spec, "versionPriority");

		if (!json_is_integer(gpm) || json_integer_value(gpm) <= 0 ||
		    json_integer_value(gpm) > 20000)
			fe_invalid_num(fe, "spec.groupPriorityMinimum",
				       json_is_integer(gpm)
					       ? json_integer_value(gpm)
					       : 0,
				       "must be positive and less than 20000");
		if (!json_is_integer(vp) || json_integer_value(vp) <= 0 ||
		    json_integer_value(vp) > 1000)
			fe_invalid_num(fe, "spec.versionPriority",
				       json_is_integer(vp)
					       ? json_integer_value(vp)
					       : 0,
				       "must be positive and less than 1000");
		if (json_is_true(json_object_get(spec,
						 "insecureSkipTLSVerify")) &&
		    jx_str(spec, "caBundle") && *jx_str(spec, "caBundle"))
			fe_add(fe, FE_INVALID, "spec.insecureSkipTLSVerify",
			       "true", false,
			       "may not be true if caBundle is present");
	}
}

/* ---- the table ---- */

static const char *const sn_ns[] = { "ns", NULL };
static const char *const sn_po[] = { "po", NULL };
static const char *const sn_ev[] = { "ev", NULL };
static const char *const sn_cm[] = { "cm", NULL };
static const char *const sn_svc[] = { "svc", NULL };
static const char *const sn_pc[] = { "pc", NULL };
static const char *const sn_crd[] = { "crd", "crds", NULL };
static const char *const cat_all[] = { "all", NULL };
static const char *const cat_ext[] = { "api-extensions", NULL };

static const struct builtin_field event_fields[] = {
	{ "involvedObject.kind", "involvedObject.kind" },
	{ "involvedObject.namespace", "involvedObject.namespace" },
	{ "involvedObject.name", "involvedObject.name" },
	{ "involvedObject.uid", "involvedObject.uid" },
	{ "involvedObject.apiVersion", "involvedObject.apiVersion" },
	{ "involvedObject.resourceVersion", "involvedObject.resourceVersion" },
	{ "involvedObject.fieldPath", "involvedObject.fieldPath" },
	{ "reason", "reason" },
	{ "reportingComponent", "reportingComponent" },
	{ "source", "source.component" },
	{ "type", "type" },
	{ NULL, NULL },
};

static const struct builtin_field events_v1_fields[] = {
	{ "regarding.kind", "regarding.kind" },
	{ "regarding.namespace", "regarding.namespace" },
	{ "regarding.name", "regarding.name" },
	{ "regarding.uid", "regarding.uid" },
	{ "reason", "reason" },
	{ "reportingController", "reportingController" },
	{ "type", "type" },
	{ NULL, NULL },
};

static const struct builtin_field pod_fields[] = {
	{ "spec.nodeName", "spec.nodeName" },
	{ "spec.restartPolicy", "spec.restartPolicy" },
	{ "spec.schedulerName", "spec.schedulerName" },
	{ "spec.serviceAccountName", "spec.serviceAccountName" },
	{ "spec.hostNetwork", "spec.hostNetwork" },
	{ "status.phase", "status.phase" },
	{ "status.podIP", "status.podIP" },
	{ "status.nominatedNodeName", "status.nominatedNodeName" },
	{ NULL, NULL },
};

static const struct builtin_field job_fields[] = {
	{ "status.successful", "status.succeeded" },
	{ NULL, NULL },
};

static const struct builtin_field ns_fields[] = {
	{ "status.phase", "status.phase" },
	{ NULL, NULL },
};

static const struct builtin_field secret_fields[] = {
	{ "type", "type" },
	{ NULL, NULL },
};

const struct builtin builtin_types[] = {
	{
		.group = "", .version = "v1", .plural = "namespaces",
		.singular = "namespace", .kind = "Namespace",
		.namespaced = false,
		.flags = BI_STATUS | BI_FINALIZE | BI_NAME_LABEL |
			 BI_STATUS_RESET,
		.short_names = sn_ns, .printer = "Namespace",
		.fields = ns_fields, .prepare = namespace_prepare,
	},
	{
		.group = "", .version = "v1", .plural = "pods",
		.singular = "pod", .kind = "Pod", .namespaced = true,
		.flags = BI_STATUS | BI_RETURN_DELETED | BI_STATUS_RESET,
		.short_names = sn_po, .categories = cat_all,
		.printer = "Pod", .fields = pod_fields,
		.defaults = pod_defaults, .prepare = pod_prepare,
		.validate = pod_validate,
	},
	{
		.group = "", .version = "v1", .plural = "events",
		.singular = "event", .kind = "Event", .namespaced = true,
		.short_names = sn_ev, .printer = "Event",
		.fields = event_fields,
	},
	{
		.group = "", .version = "v1", .plural = "configmaps",
		.singular = "configmap", .kind = "ConfigMap",
		.namespaced = true, .short_names = sn_cm,
		.printer = "ConfigMap",
	},
	{
		.group = "", .version = "v1", .plural = "secrets",
		.singular = "secret", .kind = "Secret", .namespaced = true,
		.printer = "Secret", .fields = secret_fields,
		.defaults = secret_defaults,
	},
	{
		.group = "", .version = "v1", .plural = "services",
		.singular = "service", .kind = "Service", .namespaced = true,
		.flags = BI_STATUS | BI_STATUS_RESET,
		.short_names = sn_svc, .categories = cat_all,
		.printer = "Service", .defaults = service_defaults,
		.prepare = service_prepare,
	},
	{
		.group = "batch", .version = "v1", .plural = "jobs",
		.singular = "job", .kind = "Job", .namespaced = true,
		.flags = BI_STATUS | BI_GENERATION | BI_ORPHAN_DEFAULT |
			 BI_STATUS_RESET,
		.categories = cat_all, .printer = "Job", .fields = job_fields,
		.defaults = job_defaults, .prepare = job_prepare,
		.validate = job_validate,
	},
	{
		.group = "events.k8s.io", .version = "v1", .plural = "events",
		.singular = "event", .kind = "Event", .namespaced = true,
		.short_names = sn_ev, .printer = "Event",
		.fields = events_v1_fields,
	},
	{
		.group = "scheduling.k8s.io", .version = "v1",
		.plural = "priorityclasses", .singular = "priorityclass",
		.kind = "PriorityClass", .namespaced = false,
		.flags = BI_GENERATION, .short_names = sn_pc,
		.printer = "PriorityClass",
	},
	{
		.group = "coordination.k8s.io", .version = "v1",
		.plural = "leases", .singular = "lease", .kind = "Lease",
		.namespaced = true, .printer = "Lease",
	},
	/* dynamic resource allocation (the manager counts claim templates'
	 * devices: controller/manager_dra.c) */
	{
		.group = "resource.k8s.io", .version = "v1",
		.plural = "deviceclasses", .singular = "deviceclass",
		.kind = "DeviceClass", .namespaced = false,
		.flags = BI_GENERATION,
	},
	{
		.group = "resource.k8s.io", .version = "v1",
		.plural = "resourceclaimtemplates",
		.singular = "resourceclaimtemplate",
		.kind = "ResourceClaimTemplate", .namespaced = true,
		.defaults = rct_defaults,
	},
	{
		.group = "resource.k8s.io", .version = "v1",
		.plural = "resourceclaims", .singular = "resourceclaim",
		.kind = "ResourceClaim", .namespaced = true,
		.flags = BI_STATUS | BI_STATUS_RESET,
		.defaults = claim_defaults,
	},
	{
		.group = "apiextensions.k8s.io", .version = "v1",
		.plural = "customresourcedefinitions",
		.singular = "customresourcedefinition",
		.kind = "CustomResourceDefinition", .namespaced = false,
		.flags = BI_STATUS | BI_GENERATION, .short_names = sn_crd,
		.categories = cat_ext, .printer = "CustomResourceDefinition",
		.defaults = crd_defaults, .prepare = crd_prepare,
		.validate = crd_validate,
	},
	{
		.group = "apiregistration.k8s.io", .version = "v1",
		.plural = "apiservices", .singular = "apiservice",
		.kind = "APIService", .namespaced = false,
		.flags = BI_STATUS | BI_STATUS_RESET, .categories = cat_ext,
		.validate = apiservice_validate,
	},
	{
		.group = "admissionregistration.k8s.io", .version = "v1",
		.plural = "mutatingwebhookconfigurations",
		.singular = "mutatingwebhookconfiguration",
		.kind = "MutatingWebhookConfiguration", .namespaced = false,
		.flags = BI_GENERATION, .categories = cat_ext,
		.printer = "MutatingWebhookConfiguration",
		.defaults = mwc_defaults,
	},
	{
		.group = "admissionregistration.k8s.io", .version = "v1",
		.plural = "validatingwebhookconfigurations",
		.singular = "validatingwebhookconfiguration",
		.kind = "ValidatingWebhookConfiguration", .namespaced = false,
		.flags = BI_GENERATION, .categories = cat_ext,
		.printer = "ValidatingWebhookConfiguration",
		.defaults = vwc_defaults,
	},
};

const size_t builtin_ntypes = sizeof(builtin_types) / sizeof(builtin_types[0]);
