/*
 * jobval: kube-apiserver 1.32's batch/v1 Job update rules (see jobval.h).
 *
 * Three parts: a comparator that stands in for equality.Semantic.DeepEqual
 * on the Go structs the JSON decodes into, the renderers of the values
 * kube prints in its messages (Go's %v, %q and %#v of the field), and the
 * rules, checked in ValidateJobSpecUpdate's order so the messages come out
 * in kube's order. Never writes to the objects it is given.
 */
#include "devserver/jobval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/quantity.h"

/* ---- what the Go types say about a JSON key ---- */

/* Go maps: empty is the same as absent, but an entry holding "" is an
 * entry (unlike a struct field holding ""). */
static const char *const map_keys[] = {
	"labels", "annotations", "nodeSelector", "matchLabels", "limits",
	"requests", "overhead", NULL,
};

/* Maps of resource.Quantity, compared by amount ("1" == "1000m"). */
static const char *const quantity_keys[] = {
	"limits", "requests", "overhead", NULL,
};

/* Pointers to structs: {} is a non-nil pointer, not the same as absent. */
static const char *const ptr_struct_keys[] = {
	"affinity", "nodeAffinity", "podAffinity", "podAntiAffinity",
	"requiredDuringSchedulingIgnoredDuringExecution", "securityContext",
	"dnsConfig", "os", "lifecycle", "livenessProbe", "readinessProbe",
	"startupProbe", "postStart", "preStop", "exec", "httpGet",
	"tcpSocket", "grpc", "sleep", "seLinuxOptions", "seccompProfile",
	"appArmorProfile", "windowsOptions", "capabilities", "valueFrom",
	"configMapKeyRef", "secretKeyRef", "fieldRef", "resourceFieldRef",
	"configMapRef", "secretRef", "labelSelector", "namespaceSelector",
	"emptyDir", "hostPath", "secret", "configMap",
	"persistentVolumeClaim", "projected", "downwardAPI", "csi",
	"ephemeral", "nfs", "selector", "podFailurePolicy", "successPolicy",
	"onExitCodes", NULL,
};

/* Pointers to scalars: false, 0 and "" are values, not the same as
 * absent. */
static const char *const ptr_scalar_keys[] = {
	"activeDeadlineSeconds", "terminationGracePeriodSeconds",
	"automountServiceAccountToken", "shareProcessNamespace",
	"setHostnameAsFQDN", "enableServiceLinks", "hostUsers", "priority",
	"preemptionPolicy", "runtimeClassName", "runAsUser", "runAsGroup",
	"runAsNonRoot", "fsGroup", "fsGroupChangePolicy",
	"supplementalGroupsPolicy", "privileged", "allowPrivilegeEscalation",
	"readOnlyRootFilesystem", "procMount", "tolerationSeconds",
	"defaultMode", "mode", "optional", "minDomains", "nodeAffinityPolicy",
	"nodeTaintsPolicy", "mountPropagation", "recursiveReadOnly",
	"sizeLimit",
	/* JobSpec */
	"completions", "parallelism", "backoffLimit", "backoffLimitPerIndex",
	"maxFailedIndexes", "managedBy", "completionMode", "suspend",
	"manualSelector", "ttlSecondsAfterFinished", "podReplacementPolicy",
	NULL,
};

static bool in_list(const char *const *list, const char *key)
{
	if (!key)
		return false;
	for (; *list; list++)
		if (!strcmp(*list, key))
			return true;
	return false;
}

/* ---- equality.Semantic over JSON ---- */

static bool is_nil(const json_t *v)
{
	return !v || json_is_null(v);
}

/* Whether v decodes to the zero value of the Go field named key. */
static bool is_empty(const char *key, const json_t *v)
{
	const char *k;
	json_t *c;

	if (is_nil(v))
		return true;
	if (json_is_array(v))
		return !json_array_size(v);
	if (json_is_object(v)) {
		if (in_list(ptr_struct_keys, key))
			return false;
		if (in_list(map_keys, key))
			return !json_object_size(v);
		json_object_foreach((json_t *)v, k, c)
			if (!is_empty(k, c))
				return false;
		return true;
	}
	if (in_list(ptr_scalar_keys, key))
		return false;
	if (json_is_string(v))
		return !*json_string_value(v);
	if (json_is_integer(v))
		return !json_integer_value(v);
	if (json_is_real(v))
		return json_real_value(v) == 0;
	return json_is_false(v);
}

static bool scalar_eq(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b) &&
	    (json_is_real(a) || json_is_real(b)))
		return json_number_value(a) == json_number_value(b);
	return json_equal((json_t *)a, (json_t *)b);
}

static int to_quantity(const json_t *v, struct quantity *q)
{
	struct err err;

	if (json_is_string(v))
		return quantity_parse(json_string_value(v), q, &err);
	if (json_is_integer(v))
		return quantity_from_int(json_integer_value(v), q, &err);
	return -1;
}

static bool quantity_eq(const json_t *a, const json_t *b)
{
	struct quantity qa, qb;

	if (to_quantity(a, &qa) < 0 || to_quantity(b, &qb) < 0)
		return scalar_eq(a, b);
	return qa.milli == qb.milli;
}

static bool list_eq(const json_t *a, const json_t *b);
static bool fields_eq(const json_t *a, const json_t *b);

/* List elements are always there: no emptiness rules. */
static bool elem_eq(const json_t *a, const json_t *b)
{
	if (json_is_object(a) && json_is_object(b))
		return fields_eq(a, b);
	if (json_is_array(a) && json_is_array(b))
		return list_eq(a, b);
	return scalar_eq(a, b);
}

static bool list_eq(const json_t *a, const json_t *b)
{
	size_t n = json_array_size(a);

	if (n != json_array_size(b))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!elem_eq(json_array_get(a, i), json_array_get(b, i)))
			return false;
	return true;
}

/* Map entries holding null are absent (a Go map cannot hold nil). */
static bool map_eq(const json_t *a, const json_t *b, bool quantities)
{
	size_t na = 0, nb = 0;
	const char *k;
	json_t *c, *d;

	json_object_foreach((json_t *)b, k, c)
		if (!json_is_null(c))
			nb++;
	json_object_foreach((json_t *)a, k, c) {
		if (json_is_null(c))
			continue;
		na++;
		d = json_object_get(b, k);
		if (is_nil(d))
			return false;
		if (quantities ? !quantity_eq(c, d) : !elem_eq(c, d))
			return false;
	}
	return na == nb;
}

static bool fields_eq(const json_t *a, const json_t *b)
{
	const char *k;
	json_t *c;

	json_object_foreach((json_t *)a, k, c)
		if (!jobval_equal(k, c, json_object_get(b, k)))
			return false;
	json_object_foreach((json_t *)b, k, c)
		if (!json_object_get(a, k) && !is_empty(k, c))
			return false;
	return true;
}

bool jobval_equal(const char *key, const json_t *a, const json_t *b)
{
	bool ea = is_empty(key, a), eb = is_empty(key, b);

	if (ea || eb)
		return ea && eb;
	if (json_is_object(a) && json_is_object(b)) {
		if (in_list(map_keys, key))
			return map_eq(a, b, in_list(quantity_keys, key));
		return fields_eq(a, b);
	}
	if (json_is_array(a) && json_is_array(b))
		return list_eq(a, b);
	return scalar_eq(a, b);
}

/* ---- the values kube prints ---- */

struct out {
	char *p;    /* owned; NUL-terminated */
	size_t n;   /* bytes used */
	size_t cap; /* bytes allocated */
};

static void put(struct out *o, const char *s)
{
	size_t l = strlen(s);

	XGROW(o->p, o->cap, o->n + l + 1);
	memcpy(o->p + o->n, s, l + 1);
	o->n += l;
}

static void put_quoted(struct out *o, const char *s)
{
	char *q = go_quote(s);

	put(o, q);
	free(q);
}

/* Go field names of JSON keys that are not just capitalised. */
static const struct {
	const char *json;
	const char *go;
} go_names[] = {
	{ "uid", "UID" }, { "tty", "TTY" }, { "hostIPC", "HostIPC" },
	{ "hostPID", "HostPID" }, { "dnsPolicy", "DNSPolicy" },
	{ "dnsConfig", "DNSConfig" }, { "hostIP", "HostIP" }, { "os", "OS" },
	{ "fsGroup", "FSGroup" }, { "fsGroupChangePolicy", "FSGroupChangePolicy" },
	{ "nfs", "NFS" }, { "csi", "CSI" }, { "iscsi", "ISCSI" }, { "fc", "FC" },
	{ "rbd", "RBD" }, { "httpGet", "HTTPGet" }, { "tcpSocket", "TCPSocket" },
	{ "grpc", "GRPC" }, { "seLinuxOptions", "SELinuxOptions" },
	{ "apiVersion", "APIVersion" }, { "downwardAPI", "DownwardAPI" },
};

static void put_go_name(struct out *o, const char *key)
{
	char b[128];

	for (size_t i = 0; i < sizeof(go_names) / sizeof(go_names[0]); i++)
		if (!strcmp(go_names[i].json, key)) {
			put(o, go_names[i].go);
			return;
		}
	snprintf(b, sizeof(b), "%s", key);
	if (b[0] >= 'a' && b[0] <= 'z')
		b[0] = (char)(b[0] - 'a' + 'A');
	put(o, b);
}

/* The element type of the lists a pod template holds. */
static const struct {
	const char *key;
	const char *type;
} list_types[] = {
	{ "containers", "core.Container" },
	{ "initContainers", "core.Container" },
	{ "volumes", "core.Volume" }, { "tolerations", "core.Toleration" },
	{ "env", "core.EnvVar" }, { "ports", "core.ContainerPort" },
	{ "volumeMounts", "core.VolumeMount" },
	{ "imagePullSecrets", "core.LocalObjectReference" },
	{ "schedulingGates", "core.PodSchedulingGate" },
};

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void put_any(struct out *o, const char *key, const json_t *v);

/* A map[string]string as %#v prints it: keys sorted, nil as (nil). */
static void put_map(struct out *o, const json_t *m)
{
	size_t n = json_object_size(m), i = 0;
	const char **keys;
	const char *k;
	json_t *c;

	if (!json_is_object(m)) {
		put(o, "map[string]string(nil)");
		return;
	}
	keys = xcalloc(n ? n : 1, sizeof(*keys));
	json_object_foreach((json_t *)m, k, c)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_keys);
	put(o, "map[string]string{");
	for (i = 0; i < n; i++) {
		c = json_object_get(m, keys[i]);
		if (i)
			put(o, ", ");
		put_quoted(o, keys[i]);
		put(o, ":");
		if (json_is_string(c))
			put_quoted(o, json_string_value(c));
		else
			put_any(o, keys[i], c);
	}
	put(o, "}");
	free(keys);
}

static void put_strings(struct out *o, const json_t *a)
{
	size_t i;
	json_t *c;

	if (!json_is_array(a)) {
		put(o, "[]string(nil)");
		return;
	}
	put(o, "[]string{");
	json_array_foreach(a, i, c) {
		if (i)
			put(o, ", ");
		put_any(o, NULL, c);
	}
	put(o, "}");
}

static void put_fields(struct out *o, const json_t *obj)
{
	const char *k;
	json_t *c;
	bool first = true;

	json_object_foreach((json_t *)obj, k, c) {
		if (!first)
			put(o, ", ");
		first = false;
		put_go_name(o, k);
		put(o, ":");
		put_any(o, k, c);
	}
}

/* Any value in Go syntax; struct types are named after the key. */
static void put_any(struct out *o, const char *key, const json_t *v)
{
	char b[64];

	if (is_nil(v)) {
		put(o, "<nil>");
	} else if (json_is_string(v)) {
		put_quoted(o, json_string_value(v));
	} else if (json_is_integer(v)) {
		snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(v));
		put(o, b);
	} else if (json_is_real(v)) {
		snprintf(b, sizeof(b), "%g", json_real_value(v));
		put(o, b);
	} else if (json_is_boolean(v)) {
		put(o, json_is_true(v) ? "true" : "false");
	} else if (json_is_object(v)) {
		if (in_list(map_keys, key)) {
			put_map(o, v);
			return;
		}
		put(o, "core.");
		put_go_name(o, key ? key : "Object");
		put(o, "{");
		put_fields(o, v);
		put(o, "}");
	} else if (json_is_array(v) && json_is_string(json_array_get(v, 0))) {
		put_strings(o, v);
	} else {
		const char *type = "core.Object";
		size_t i;
		json_t *c;

		for (size_t t = 0; key && t < sizeof(list_types) /
						 sizeof(list_types[0]); t++)
			if (!strcmp(list_types[t].key, key))
				type = list_types[t].type;
		put(o, "[]");
		put(o, type);
		put(o, "{");
		json_array_foreach(v, i, c) {
			if (i)
				put(o, ", ");
			if (json_is_object(c)) {
				put(o, type);
				put(o, "{");
				put_fields(o, c);
				put(o, "}");
			} else {
				put_any(o, NULL, c);
			}
		}
		put(o, "}");
	}
}

static const char *sval(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

char *jobval_template_value(const json_t *tmpl)
{
	const json_t *m = json_object_get(tmpl, "metadata");
	const json_t *spec = json_object_get(tmpl, "spec");
	struct out o = { NULL, 0, 0 };
	char b[64];

	put(&o, "core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:");
	put_quoted(&o, sval(m, "name"));
	put(&o, ", GenerateName:");
	put_quoted(&o, sval(m, "generateName"));
	put(&o, ", Namespace:");
	put_quoted(&o, sval(m, "namespace"));
	put(&o, ", SelfLink:\"\", UID:");
	put_quoted(&o, sval(m, "uid"));
	put(&o, ", ResourceVersion:");
	put_quoted(&o, sval(m, "resourceVersion"));
	snprintf(b, sizeof(b), ", Generation:%lld",
		 (long long)json_integer_value(json_object_get(m,
							       "generation")));
	put(&o, b);
	put(&o, ", CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, "
		"0, time.UTC), DeletionTimestamp:<nil>, "
		"DeletionGracePeriodSeconds:(*int64)(nil), Labels:");
	put_map(&o, json_object_get(m, "labels"));
	put(&o, ", Annotations:");
	put_map(&o, json_object_get(m, "annotations"));
	put(&o, ", OwnerReferences:[]v1.OwnerReference(nil), Finalizers:");
	put_strings(&o, json_object_get(m, "finalizers"));
	put(&o, ", ManagedFields:[]v1.ManagedFieldsEntry(nil)}, "
		"Spec:core.PodSpec{");
	if (json_is_object(spec))
		put_fields(&o, spec);
	put(&o, "}}");
	return o.p;
}

/* %#v of a *metav1.LabelSelector once ErrorBody dereferenced it. */
static char *selector_value(const json_t *sel)
{
	const json_t *exprs = json_object_get(sel, "matchExpressions");
	struct out o = { NULL, 0, 0 };
	size_t i;
	json_t *e;

	put(&o, "v1.LabelSelector{MatchLabels:");
	put_map(&o, json_object_get(sel, "matchLabels"));
	put(&o, ", MatchExpressions:");
	if (!json_is_array(exprs)) {
		put(&o, "[]v1.LabelSelectorRequirement(nil)}");
		return o.p;
	}
	put(&o, "[]v1.LabelSelectorRequirement{");
	json_array_foreach(exprs, i, e) {
		if (i)
			put(&o, ", ");
		put(&o, "v1.LabelSelectorRequirement{Key:");
		put_quoted(&o, sval(e, "key"));
		put(&o, ", Operator:");
		put_quoted(&o, sval(e, "operator"));
		put(&o, ", Values:");
		put_strings(&o, json_object_get(e, "values"));
		put(&o, "}");
	}
	put(&o, "}}");
	return o.p;
}

/* %#v of a dereferenced struct pointer of the Job spec. */
static char *record_value(const char *type, const json_t *v)
{
	struct out o = { NULL, 0, 0 };

	put(&o, type);
	put(&o, "{");
	put_fields(&o, v);
	put(&o, "}");
	return o.p;
}

/*
 * "<path>: Invalid value: <value>: <detail>" with the value as ErrorBody
 * prints a field: nil pointers as "null" (quoted, it is a string then),
 * numbers and booleans bare, strings quoted.
 */
static void invalid_scalar(struct field_errors *fe, const char *path,
			   const json_t *v, const char *detail)
{
	char b[64];

	if (is_nil(v)) {
		fe_add(fe, FE_INVALID, path, "null", true, "%s", detail);
	} else if (json_is_string(v)) {
		fe_add(fe, FE_INVALID, path, json_string_value(v), true, "%s",
		       detail);
	} else {
		if (json_is_integer(v))
			snprintf(b, sizeof(b), "%lld",
				 (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(b, sizeof(b), "%g", json_real_value(v));
		else
			snprintf(b, sizeof(b), "%s",
				 json_is_true(v) ? "true" : "false");
		fe_add(fe, FE_INVALID, path, b, false, "%s", detail);
	}
}

/* ---- the rules ---- */

#define IMMUTABLE "field is immutable"

/* validateCompletions: immutable, except that an Indexed Job may change
 * it together with parallelism (the new completions must equal the new
 * parallelism). A nil completions on an Indexed Job is reported by the
 * spec validation, not here. */
static void check_completions(const json_t *spec, const json_t *ospec,
			      struct field_errors *fe)
{
	const json_t *c = json_object_get(spec, "completions");
	const json_t *p = json_object_get(spec, "parallelism");
	const char *mode = json_string_value(json_object_get(spec,
							     "completionMode"));

	if (jobval_equal("completions", c, json_object_get(ospec,
							   "completions")))
		return;
	if (!mode || strcmp(mode, "Indexed")) {
		invalid_scalar(fe, "spec.completions", c, IMMUTABLE);
		return;
	}
	if (is_nil(c))
		return;
	if (!json_is_integer(c) || !json_is_integer(p) ||
	    json_integer_value(c) != json_integer_value(p))
		invalid_scalar(fe, "spec.completions", c,
			       "can only be modified in tandem with "
			       "spec.parallelism");
}

static void set_or_del(json_t *o, const char *key, const json_t *v)
{
	if (is_nil(v))
		json_object_del(o, key);
	else
		json_object_set_new(o, key, json_deep_copy(v));
}

static json_t *child(json_t *o, const char *key)
{
	json_t *c = json_object_get(o, key);

	if (!json_is_object(c)) {
		c = json_object();
		json_object_set_new(o, key, c);
	}
	return c;
}

/* True when nothing but nulls is left in an Affinity. */
static bool affinity_is_zero(const json_t *a)
{
	const char *k;
	json_t *c;

	json_object_foreach((json_t *)a, k, c)
		if (!json_is_null(c))
			return false;
	return true;
}

/*
 * validatePodTemplateUpdate. When the stored Job is suspended and never
 * started, the scheduling directives of the new template are copied over
 * a copy of the old one before the comparison, so only they may differ:
 * nodeSelector, tolerations, schedulingGates, labels, annotations, and
 * the affinity's nodeAffinity (an affinity may appear or go away when it
 * holds nothing else).
 */
static void check_template(const json_t *spec, const json_t *ospec,
			   bool mutable_sched, struct field_errors *fe)
{
	const json_t *t = json_object_get(spec, "template");
	const json_t *ot = json_object_get(ospec, "template");
	json_t *cmp = NULL;
	char *val;

	if (mutable_sched) {
		const json_t *ns = json_object_get(t, "spec");
		const json_t *nm = json_object_get(t, "metadata");
		const json_t *na = json_object_get(ns, "affinity");
		json_t *os, *om, *oa;

		cmp = json_is_object(ot) ? json_deep_copy(ot) : json_object();
		os = child(cmp, "spec");
		om = child(cmp, "metadata");
		oa = json_object_get(os, "affinity");
		if (is_nil(na) && json_is_object(oa)) {
			json_object_del(oa, "nodeAffinity");
			if (affinity_is_zero(oa))
				json_object_del(os, "affinity");
		} else if (json_is_object(na) && is_nil(oa)) {
			oa = json_object();
			set_or_del(oa, "nodeAffinity",
				   json_object_get(na, "nodeAffinity"));
			json_object_set_new(os, "affinity", oa);
		} else if (json_is_object(na) && json_is_object(oa)) {
			set_or_del(oa, "nodeAffinity",
				   json_object_get(na, "nodeAffinity"));
		}
		set_or_del(os, "nodeSelector",
			   json_object_get(ns, "nodeSelector"));
		set_or_del(os, "tolerations", json_object_get(ns, "tolerations"));
		set_or_del(os, "schedulingGates",
			   json_object_get(ns, "schedulingGates"));
		set_or_del(om, "annotations", json_object_get(nm, "annotations"));
		set_or_del(om, "labels", json_object_get(nm, "labels"));
		ot = cmp;
	}
	if (!jobval_equal("template", t, ot)) {
		val = jobval_template_value(t);
		fe_add(fe, FE_INVALID, "spec.template", val, false, "%s",
		       IMMUTABLE);
		free(val);
	}
	json_decref(cmp);
}

/* ValidateImmutableField of a pointer-to-struct field of the spec. */
static void check_struct(const json_t *spec, const json_t *ospec,
			 const char *key, const char *type,
			 struct field_errors *fe)
{
	const json_t *v = json_object_get(spec, key);
	char path[64];
	char *val;

	if (jobval_equal(key, v, json_object_get(ospec, key)))
		return;
	snprintf(path, sizeof(path), "spec.%s", key);
	if (is_nil(v)) {
		fe_add(fe, FE_INVALID, path, "null", true, "%s", IMMUTABLE);
		return;
	}
	val = !strcmp(key, "selector") ? selector_value(v)
				       : record_value(type, v);
	fe_add(fe, FE_INVALID, path, val, false, "%s", IMMUTABLE);
	free(val);
}

/* ValidateImmutableField of a pointer-to-scalar field of the spec. */
static void check_scalar(const json_t *spec, const json_t *ospec,
			 const char *key, struct field_errors *fe)
{
	const json_t *v = json_object_get(spec, key);
	char path[64];

	if (jobval_equal(key, v, json_object_get(ospec, key)))
		return;
	snprintf(path, sizeof(path), "spec.%s", key);
	invalid_scalar(fe, path, v, IMMUTABLE);
}

void jobval_update(const json_t *obj, const json_t *old,
		   struct field_errors *fe)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *ospec = json_object_get(old, "spec");
	const json_t *ostatus = json_object_get(old, "status");
	bool mutable_sched;

	if (!json_is_object(spec) || !json_is_object(ospec))
		return;
	/* validationOptionsForJob: AllowMutableSchedulingDirectives */
	mutable_sched = json_is_true(json_object_get(ospec, "suspend")) &&
			is_nil(json_object_get(ostatus, "startTime"));
	check_completions(spec, ospec, fe);
	check_struct(spec, ospec, "selector", "v1.LabelSelector", fe);
	check_template(spec, ospec, mutable_sched, fe);
	check_scalar(spec, ospec, "completionMode", fe);
	check_struct(spec, ospec, "podFailurePolicy", "batch.PodFailurePolicy",
		     fe);
	check_scalar(spec, ospec, "backoffLimitPerIndex", fe);
	check_scalar(spec, ospec, "managedBy", fe);
	check_struct(spec, ospec, "successPolicy", "batch.SuccessPolicy", fe);
}
