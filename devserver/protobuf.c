/*
 * protobuf: a table-driven decoder for the Kubernetes protobuf kinds
 * kubectl's typed clients send (see protobuf.h). The field numbers are
 * those of k8s.io/api and apimachinery's generated.proto files, which
 * never change meaning once assigned.
 */
#include "devserver/protobuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "model/timestamp.h"

enum pk {
	PK_STRING,
	PK_BYTES,     /* base64 in JSON */
	PK_INT,       /* int32/int64 varint */
	PK_BOOL,
	PK_MSG,
	PK_MAP_STR,   /* map<string, string> */
	PK_MAP_BYTES, /* map<string, bytes> */
	PK_MAP_QTY,   /* map<string, resource.Quantity> */
	PK_TIME,      /* metav1.Time -> RFC 3339 seconds */
	PK_MICROTIME, /* metav1.MicroTime -> RFC 3339 microseconds */
	PK_INTSTR,    /* intstr.IntOrString */
	PK_QTY,       /* resource.Quantity -> string */
};

enum {
	F_REP = 1u << 0, /* repeated: a JSON array */
	F_PTR = 1u << 1, /* pointer (or non-omitempty): keep zero values */
};

struct pmsg;

struct pfield {
	unsigned num;            /* protobuf field number */
	const char *name;        /* JSON field name */
	enum pk kind;
	unsigned flags;          /* F_* */
	const struct pmsg *msg;  /* PK_MSG only */
};

struct pmsg {
	const struct pfield *f;
	size_t n;
};

#define MSG(id, ...) \
	static const struct pfield id##_f[] = { __VA_ARGS__ }; \
	static const struct pmsg id = { id##_f, \
		sizeof(id##_f) / sizeof(id##_f[0]) }

/* ---- apimachinery meta/v1 ---- */

MSG(m_ownerref,
	{ 1, "kind", PK_STRING, 0, NULL },
	{ 3, "name", PK_STRING, 0, NULL },
	{ 4, "uid", PK_STRING, 0, NULL },
	{ 5, "apiVersion", PK_STRING, 0, NULL },
	{ 6, "controller", PK_BOOL, F_PTR, NULL },
	{ 7, "blockOwnerDeletion", PK_BOOL, F_PTR, NULL });

MSG(m_objectmeta,
	{ 1, "name", PK_STRING, 0, NULL },
	{ 2, "generateName", PK_STRING, 0, NULL },
	{ 3, "namespace", PK_STRING, 0, NULL },
	{ 4, "selfLink", PK_STRING, 0, NULL },
	{ 5, "uid", PK_STRING, 0, NULL },
	{ 6, "resourceVersion", PK_STRING, 0, NULL },
	{ 7, "generation", PK_INT, 0, NULL },
	{ 8, "creationTimestamp", PK_TIME, 0, NULL },
	{ 9, "deletionTimestamp", PK_TIME, 0, NULL },
	{ 10, "deletionGracePeriodSeconds", PK_INT, F_PTR, NULL },
	{ 11, "labels", PK_MAP_STR, 0, NULL },
	{ 12, "annotations", PK_MAP_STR, 0, NULL },
	{ 13, "ownerReferences", PK_MSG, F_REP, &m_ownerref },
	{ 14, "finalizers", PK_STRING, F_REP, NULL });

MSG(m_selreq,
	{ 1, "key", PK_STRING, 0, NULL },
	{ 2, "operator", PK_STRING, 0, NULL },
	{ 3, "values", PK_STRING, F_REP, NULL });

MSG(m_selector,
	{ 1, "matchLabels", PK_MAP_STR, 0, NULL },
	{ 2, "matchExpressions", PK_MSG, F_REP, &m_selreq });

MSG(m_preconditions,
	{ 1, "uid", PK_STRING, F_PTR, NULL },
	{ 2, "resourceVersion", PK_STRING, F_PTR, NULL });

MSG(m_deleteoptions,
	{ 1, "gracePeriodSeconds", PK_INT, F_PTR, NULL },
	{ 2, "preconditions", PK_MSG, 0, &m_preconditions },
	{ 3, "orphanDependents", PK_BOOL, F_PTR, NULL },
	{ 4, "propagationPolicy", PK_STRING, F_PTR, NULL },
	{ 5, "dryRun", PK_STRING, F_REP, NULL });

/* ---- core/v1 ---- */

MSG(m_containerport,
	{ 1, "name", PK_STRING, 0, NULL },
	{ 2, "hostPort", PK_INT, 0, NULL },
	{ 3, "containerPort", PK_INT, F_PTR, NULL },
	{ 4, "protocol", PK_STRING, 0, NULL },
	{ 5, "hostIP", PK_STRING, 0, NULL });

MSG(m_envvar,
	{ 1, "name", PK_STRING, 0, NULL },
	{ 2, "value", PK_STRING, 0, NULL });

MSG(m_resources,
	{ 1, "limits", PK_MAP_QTY, 0, NULL },
	{ 2, "requests", PK_MAP_QTY, 0, NULL });

MSG(m_volumemount,
	{ 1, "name", PK_STRING, 0, NULL },
	{ 2, "readOnly", PK_BOOL, 0, NULL },
	{ 3, "mountPath", PK_STRING, 0, NULL },
	{ 4, "subPath", PK_STRING, 0, NULL },
	{ 5, "mountPropagation", PK_STRING, F_PTR, NULL },
	{ 6, "subPathExpr", PK_STRING, 0, NULL });

MSG(m_container,
	{ 1, "name", PK_STRING, 0, NULL },
	{ 2, "image", PK_STRING, 0, NULL },
	{ 3, "command", PK_STRING, F_REP, NULL },
	{ 4, "args", PK_STRING, F_REP, NULL },
	{ 5, "workingDir", PK_STRING, 0, NULL },
	{ 6, "ports", PK_MSG, F_REP, &m_containerport },
	{ 7, "env", PK_MSG, F_REP, &m_envvar },
	{ 8, "resources", PK_MSG, 0, &m_resources },
	{ 9, "volumeMounts", PK_MSG, F_REP, &m_volumemount },
	{ 13, "terminationMessagePath", PK_STRING, 0, NULL },
	{ 14, "imagePullPolicy", PK_STRING, 0, NULL },
	{ 16, "stdin", PK_BOOL, 0, NULL },
	{ 17, "stdinOnce", PK_BOOL, 0, NULL },
	{ 18, "tty", PK_BOOL, 0, NULL },
	{ 20, "terminationMessagePolicy", PK_STRING, 0, NULL },
	{ 24, "restartPolicy", PK_STRING, F_PTR, NULL });

MSG(m_toleration,
	{ 1, "key", PK_STRING, 0, NULL },
	{ 2, "operator", PK_STRING, 0, NULL },
	{ 3, "value", PK_STRING, 0, NULL },
	{ 4, "effect", PK_STRING, 0, NULL },
	{ 5, "tolerationSeconds", PK_INT, F_PTR, NULL });

MSG(m_podspec,
	{ 2, "containers", PK_MSG, F_REP, &m_container },
	{ 3, "restartPolicy", PK_STRING, 0, NULL },
	{ 4, "terminationGracePeriodSeconds", PK_INT, F_PTR, NULL },
	{ 5, "activeDeadlineSeconds", PK_INT, F_PTR, NULL },
	{ 6, "dnsPolicy", PK_STRING, 0, NULL },
	{ 7, "nodeSelector", PK_MAP_STR, 0, NULL },
	{ 8, "serviceAccountName", PK_STRING, 0, NULL },
	{ 9, "serviceAccount", PK_STRING, 0, NULL },
	{ 10, "nodeName", PK_STRING, 0, NULL },
	{ 11, "hostNetwork", PK_BOOL, 0, NULL },
	{ 12, "hostPID", PK_BOOL, 0, NULL },
	{ 13, "hostIPC", PK_BOOL, 0, NULL },
	{ 16, "hostname", PK_STRING, 0, NULL },
	{ 17, "subdomain", PK_STRING, 0, NULL },
	{ 19, "schedulerName", PK_STRING, 0, NULL },
	{ 20, "initContainers", PK_MSG, F_REP, &m_container },
	{ 21, "automountServiceAccountToken", PK_BOOL, F_PTR, NULL },
	{ 22, "tolerations", PK_MSG, F_REP, &m_toleration },
	{ 24, "priorityClassName", PK_STRING, 0, NULL },
	{ 25, "priority", PK_INT, F_PTR, NULL },
	{ 29, "runtimeClassName", PK_STRING, F_PTR, NULL },
	{ 30, "enableServiceLinks", PK_BOOL, F_PTR, NULL },
	{ 31, "preemptionPolicy", PK_STRING, F_PTR, NULL });

MSG(m_podtemplate,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "spec", PK_MSG, 0, &m_podspec });

MSG(m_podstatus,
	{ 1, "phase", PK_STRING, 0, NULL },
	{ 3, "message", PK_STRING, 0, NULL },
	{ 4, "reason", PK_STRING, 0, NULL },
	{ 5, "hostIP", PK_STRING, 0, NULL },
	{ 6, "podIP", PK_STRING, 0, NULL },
	{ 7, "startTime", PK_TIME, 0, NULL },
	{ 9, "qosClass", PK_STRING, 0, NULL },
	{ 11, "nominatedNodeName", PK_STRING, 0, NULL });

MSG(m_pod,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "spec", PK_MSG, 0, &m_podspec },
	{ 3, "status", PK_MSG, 0, &m_podstatus });

MSG(m_nsspec,
	{ 1, "finalizers", PK_STRING, F_REP, NULL });

MSG(m_nsstatus,
	{ 1, "phase", PK_STRING, 0, NULL });

MSG(m_namespace,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "spec", PK_MSG, 0, &m_nsspec },
	{ 3, "status", PK_MSG, 0, &m_nsstatus });

MSG(m_configmap,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "data", PK_MAP_STR, 0, NULL },
	{ 3, "binaryData", PK_MAP_BYTES, 0, NULL },
	{ 4, "immutable", PK_BOOL, F_PTR, NULL });

MSG(m_secret,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "data", PK_MAP_BYTES, 0, NULL },
	{ 3, "type", PK_STRING, 0, NULL },
	{ 4, "stringData", PK_MAP_STR, 0, NULL },
	{ 5, "immutable", PK_BOOL, F_PTR, NULL });

MSG(m_serviceport,
	{ 1, "name", PK_STRING, 0, NULL },
	{ 2, "protocol", PK_STRING, 0, NULL },
	{ 3, "port", PK_INT, F_PTR, NULL },
	{ 4, "targetPort", PK_INTSTR, 0, NULL },
	{ 5, "nodePort", PK_INT, 0, NULL },
	{ 6, "appProtocol", PK_STRING, F_PTR, NULL });

MSG(m_servicespec,
	{ 1, "ports", PK_MSG, F_REP, &m_serviceport },
	{ 2, "selector", PK_MAP_STR, 0, NULL },
	{ 3, "clusterIP", PK_STRING, 0, NULL },
	{ 4, "type", PK_STRING, 0, NULL },
	{ 5, "externalIPs", PK_STRING, F_REP, NULL },
	{ 7, "sessionAffinity", PK_STRING, 0, NULL },
	{ 8, "loadBalancerIP", PK_STRING, 0, NULL },
	{ 9, "loadBalancerSourceRanges", PK_STRING, F_REP, NULL },
	{ 10, "externalName", PK_STRING, 0, NULL },
	{ 11, "externalTrafficPolicy", PK_STRING, 0, NULL },
	{ 12, "healthCheckNodePort", PK_INT, 0, NULL },
	{ 13, "publishNotReadyAddresses", PK_BOOL, 0, NULL });

MSG(m_service,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "spec", PK_MSG, 0, &m_servicespec });

MSG(m_objectref,
	{ 1, "kind", PK_STRING, 0, NULL },
	{ 2, "namespace", PK_STRING, 0, NULL },
	{ 3, "name", PK_STRING, 0, NULL },
	{ 4, "uid", PK_STRING, 0, NULL },
	{ 5, "apiVersion", PK_STRING, 0, NULL },
	{ 6, "resourceVersion", PK_STRING, 0, NULL },
	{ 7, "fieldPath", PK_STRING, 0, NULL });

MSG(m_eventsource,
	{ 1, "component", PK_STRING, 0, NULL },
	{ 2, "host", PK_STRING, 0, NULL });

MSG(m_event,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "involvedObject", PK_MSG, F_PTR, &m_objectref },
	{ 3, "reason", PK_STRING, 0, NULL },
	{ 4, "message", PK_STRING, 0, NULL },
	{ 5, "source", PK_MSG, 0, &m_eventsource },
	{ 6, "firstTimestamp", PK_TIME, 0, NULL },
	{ 7, "lastTimestamp", PK_TIME, 0, NULL },
	{ 8, "count", PK_INT, 0, NULL },
	{ 9, "type", PK_STRING, 0, NULL },
	{ 10, "eventTime", PK_MICROTIME, 0, NULL },
	{ 12, "action", PK_STRING, 0, NULL },
	{ 13, "related", PK_MSG, 0, &m_objectref },
	{ 14, "reportingComponent", PK_STRING, F_PTR, NULL },
	{ 15, "reportingInstance", PK_STRING, F_PTR, NULL });

/* ---- other groups ---- */

MSG(m_priorityclass,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "value", PK_INT, F_PTR, NULL },
	{ 3, "globalDefault", PK_BOOL, 0, NULL },
	{ 4, "description", PK_STRING, 0, NULL },
	{ 5, "preemptionPolicy", PK_STRING, F_PTR, NULL });

MSG(m_leasespec,
	{ 1, "holderIdentity", PK_STRING, F_PTR, NULL },
	{ 2, "leaseDurationSeconds", PK_INT, F_PTR, NULL },
	{ 3, "acquireTime", PK_MICROTIME, 0, NULL },
	{ 4, "renewTime", PK_MICROTIME, 0, NULL },
	{ 5, "leaseTransitions", PK_INT, F_PTR, NULL },
	{ 6, "strategy", PK_STRING, F_PTR, NULL },
	{ 7, "preferredHolder", PK_STRING, F_PTR, NULL });

MSG(m_lease,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "spec", PK_MSG, 0, &m_leasespec });

MSG(m_jobspec,
	{ 1, "parallelism", PK_INT, F_PTR, NULL },
	{ 2, "completions", PK_INT, F_PTR, NULL },
	{ 3, "activeDeadlineSeconds", PK_INT, F_PTR, NULL },
	{ 4, "selector", PK_MSG, F_PTR, &m_selector },
	{ 5, "manualSelector", PK_BOOL, F_PTR, NULL },
	{ 6, "template", PK_MSG, F_PTR, &m_podtemplate },
	{ 7, "backoffLimit", PK_INT, F_PTR, NULL },
	{ 8, "ttlSecondsAfterFinished", PK_INT, F_PTR, NULL },
	{ 9, "completionMode", PK_STRING, F_PTR, NULL },
	{ 10, "suspend", PK_BOOL, F_PTR, NULL },
	{ 12, "backoffLimitPerIndex", PK_INT, F_PTR, NULL },
	{ 13, "maxFailedIndexes", PK_INT, F_PTR, NULL },
	{ 14, "podReplacementPolicy", PK_STRING, F_PTR, NULL },
	{ 15, "managedBy", PK_STRING, F_PTR, NULL });

MSG(m_job,
	{ 1, "metadata", PK_MSG, 0, &m_objectmeta },
	{ 2, "spec", PK_MSG, 0, &m_jobspec });

static const struct {
	const char *api_version; /* NULL: any */
	const char *kind;
	const struct pmsg *msg;
} kinds[] = {
	{ "v1", "Namespace", &m_namespace },
	{ "v1", "ConfigMap", &m_configmap },
	{ "v1", "Secret", &m_secret },
	{ "v1", "Service", &m_service },
	{ "v1", "Pod", &m_pod },
	{ "v1", "Event", &m_event },
	{ "scheduling.k8s.io/v1", "PriorityClass", &m_priorityclass },
	{ "coordination.k8s.io/v1", "Lease", &m_lease },
	{ "batch/v1", "Job", &m_job },
	{ NULL, "DeleteOptions", &m_deleteoptions },
};

/* ---- wire format ---- */

struct rd {
	const uint8_t *p;
	const uint8_t *end;
};

static int varint(struct rd *r, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (r->p >= r->end)
			return -1;
		b = *r->p++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* Reads one field header and, for length-delimited fields, its bytes. */
static int next_field(struct rd *r, unsigned *num, unsigned *wt,
		      uint64_t *val, struct rd *sub)
{
	uint64_t tag;

	if (varint(r, &tag) < 0)
		return -1;
	*num = (unsigned)(tag >> 3);
	*wt = (unsigned)(tag & 7);
	switch (*wt) {
	case 0:
		return varint(r, val);
	case 1:
		if (r->end - r->p < 8)
			return -1;
		r->p += 8;
		return 0;
	case 2:
		if (varint(r, val) < 0 || (uint64_t)(r->end - r->p) < *val)
			return -1;
		sub->p = r->p;
		sub->end = r->p + *val;
		r->p += *val;
		return 0;
	case 5:
		if (r->end - r->p < 4)
			return -1;
		r->p += 4;
		return 0;
	default:
		return -1;
	}
}

static json_t *str_of(const struct rd *s)
{
	return json_stringn((const char *)s->p, (size_t)(s->end - s->p));
}

static int decode_msg(struct rd r, const struct pmsg *m, json_t *out);

/* metav1.Time / MicroTime {seconds = 1, nanos = 2}; NULL when zero. */
static json_t *decode_time(struct rd r, bool micro)
{
	int64_t secs = 0, nanos = 0;
	char buf[TIMESTAMP_BUF];

	while (r.p < r.end) {
		unsigned num, wt;
		uint64_t v = 0;
		struct rd sub;

		if (next_field(&r, &num, &wt, &v, &sub) < 0)
			return NULL;
		if (num == 1 && wt == 0)
			secs = (int64_t)v;
		else if (num == 2 && wt == 0)
			nanos = (int64_t)v;
	}
	if (!secs && !nanos)
		return NULL;
	if (micro)
		return json_string(timestamp_format_micro(secs * 1000 +
			nanos / 1000000, buf, sizeof(buf)));
	return json_string(timestamp_format(secs * 1000, buf, sizeof(buf)));
}

/* intstr.IntOrString {type = 1, intVal = 2, strVal = 3}. */
static json_t *decode_intstr(struct rd r)
{
	uint64_t type = 0, iv = 0;
	json_t *sv = NULL;

	while (r.p < r.end) {
		unsigned num, wt;
		uint64_t v = 0;
		struct rd sub;

		if (next_field(&r, &num, &wt, &v, &sub) < 0)
			break;
		if (num == 1 && wt == 0)
			type = v;
		else if (num == 2 && wt == 0)
			iv = v;
		else if (num == 3 && wt == 2) {
			json_decref(sv);
			sv = str_of(&sub);
		}
	}
	if (type == 1)
		return sv ? sv : json_string("");
	json_decref(sv);
	return json_integer((json_int_t)(int32_t)iv);
}

/* resource.Quantity {string = 1}. */
static json_t *decode_qty(struct rd r)
{
	while (r.p < r.end) {
		unsigned num, wt;
		uint64_t v = 0;
		struct rd sub;

		if (next_field(&r, &num, &wt, &v, &sub) < 0)
			break;
		if (num == 1 && wt == 2)
			return str_of(&sub);
	}
	return json_string("0");
}

/* A map entry {key = 1, value = 2} into obj. */
static int decode_entry(struct rd r, enum pk kind, json_t *obj)
{
	char *key = NULL;
	json_t *val = NULL;

	while (r.p < r.end) {
		unsigned num, wt;
		uint64_t v = 0;
		struct rd sub;

		if (next_field(&r, &num, &wt, &v, &sub) < 0 || wt != 2) {
			free(key);
			json_decref(val);
			return -1;
		}
		if (num == 1) {
			free(key);
			key = xstrndup((const char *)sub.p,
				       (size_t)(sub.end - sub.p));
		} else if (num == 2) {
			json_decref(val);
			if (kind == PK_MAP_STR)
				val = str_of(&sub);
			else if (kind == PK_MAP_QTY)
				val = decode_qty(sub);
			else {
				char *b = b64_encode(sub.p, (size_t)(sub.end -
								  sub.p), B64_STD);

				val = json_string(b);
				free(b);
			}
		}
	}
	if (!val)
		val = json_string("");
	json_object_set_new(obj, key ? key : "", val);
	free(key);
	return 0;
}

static const struct pfield *field_of(const struct pmsg *m, unsigned num)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->f[i].num == num)
			return &m->f[i];
	return NULL;
}

/* The JSON value of one occurrence of f, or NULL to drop it. */
static json_t *decode_value(const struct pfield *f, unsigned wt, uint64_t v,
			    struct rd sub, int *bad)
{
	bool keep = (f->flags & (F_PTR | F_REP)) != 0;
	json_t *j;

	switch (f->kind) {
	case PK_INT:
		if (wt != 0)
			break;
		return v || keep ? json_integer((json_int_t)(int64_t)v) : NULL;
	case PK_BOOL:
		if (wt != 0)
			break;
		return v || keep ? json_boolean(v != 0) : NULL;
	case PK_STRING:
		if (wt != 2)
			break;
		return sub.p < sub.end || keep ? str_of(&sub) : NULL;
	case PK_BYTES:
		if (wt != 2)
			break;
		{
			char *b = b64_encode(sub.p, (size_t)(sub.end - sub.p),
					     B64_STD);

			j = json_string(b);
			free(b);
			return j;
		}
	case PK_TIME:
	case PK_MICROTIME:
		return wt == 2 ? decode_time(sub, f->kind == PK_MICROTIME)
			       : NULL;
	case PK_INTSTR:
		return wt == 2 ? decode_intstr(sub) : NULL;
	case PK_QTY:
		return wt == 2 ? decode_qty(sub) : NULL;
	case PK_MSG:
		if (wt != 2)
			break;
		j = json_object();
		if (decode_msg(sub, f->msg, j) < 0) {
			json_decref(j);
			*bad = 1;
			return NULL;
		}
		if (!json_object_size(j) && !keep) {
			json_decref(j);
			return NULL;
		}
		return j;
	case PK_MAP_STR:
	case PK_MAP_BYTES:
	case PK_MAP_QTY:
		break; /* handled by the caller */
	}
	*bad = 1;
	return NULL;
}

static int decode_msg(struct rd r, const struct pmsg *m, json_t *out)
{
	while (r.p < r.end) {
		unsigned num, wt;
		uint64_t v = 0;
		struct rd sub = { NULL, NULL };
		const struct pfield *f;
		json_t *val;
		int bad = 0;

		if (next_field(&r, &num, &wt, &v, &sub) < 0)
			return -1;
		f = field_of(m, num);
		if (!f)
			continue;
		if (f->kind == PK_MAP_STR || f->kind == PK_MAP_BYTES ||
		    f->kind == PK_MAP_QTY) {
			json_t *map = json_object_get(out, f->name);

			if (wt != 2)
				return -1;
			if (!map) {
				map = json_object();
				json_object_set_new(out, f->name, map);
			}
			if (decode_entry(sub, f->kind, map) < 0)
				return -1;
			continue;
		}
		val = decode_value(f, wt, v, sub, &bad);
		if (bad)
			return -1;
		if (!val)
			continue;
		if (f->flags & F_REP) {
			json_t *arr = json_object_get(out, f->name);

			if (!arr) {
				arr = json_array();
				json_object_set_new(out, f->name, arr);
			}
			json_array_append_new(arr, val);
		} else {
			json_object_set_new(out, f->name, val);
		}
	}
	return 0;
}

bool protobuf_is_envelope(const char *body, size_t len)
{
	return len >= 4 && !memcmp(body, "k8s\0", 4);
}

json_t *protobuf_decode(const char *body, size_t len, struct err *err)
{
	struct rd r = { (const uint8_t *)body + 4, (const uint8_t *)body + len };
	struct rd raw = { NULL, NULL };
	char *av = NULL, *kind = NULL;
	const struct pmsg *m = NULL;
	json_t *obj = NULL;

	if (!protobuf_is_envelope(body, len)) {
		err_set(err, "protobuf: missing the k8s envelope");
		return NULL;
	}
	while (r.p < r.end) {
		unsigned num, wt;
		uint64_t v = 0;
		struct rd sub = { NULL, NULL };

		if (next_field(&r, &num, &wt, &v, &sub) < 0) {
			err_set(err, "protobuf: truncated envelope");
			goto out;
		}
		if (num == 1 && wt == 2) {
			while (sub.p < sub.end) {
				unsigned n2, w2;
				uint64_t v2 = 0;
				struct rd s2 = { NULL, NULL };

				if (next_field(&sub, &n2, &w2, &v2, &s2) < 0 ||
				    w2 != 2)
					break;
				if (n2 == 1) {
					free(av);
					av = xstrndup((const char *)s2.p,
						      (size_t)(s2.end - s2.p));
				} else if (n2 == 2) {
					free(kind);
					kind = xstrndup((const char *)s2.p,
							(size_t)(s2.end - s2.p));
				}
			}
		} else if (num == 2 && wt == 2) {
			raw = sub;
		}
	}
	for (size_t i = 0; kind && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].kind, kind) &&
		    (!kinds[i].api_version ||
		     (av && !strcmp(kinds[i].api_version, av))))
			m = kinds[i].msg;
	if (!m) {
		err_set(err, "protobuf: no decoder for %s, Kind=%s",
			av ? av : "", kind ? kind : "");
		goto out;
	}
	obj = json_object();
	if (raw.p && decode_msg(raw, m, obj) < 0) {
		err_set(err, "protobuf: malformed %s message", kind);
		json_decref(obj);
		obj = NULL;
		goto out;
	}
	if (av && *av)
		json_object_set_new(obj, "apiVersion", json_string(av));
	json_object_set_new(obj, "kind", json_string(kind));
out:
	free(av);
	free(kind);
	return obj;
}
