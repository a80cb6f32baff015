/*
 * convert: strategy None (apiVersion rewrite, apiextensions'
 * nopConverter) and strategy Webhook (apiextensions' webhookConverter):
 * one ConversionReview per call carrying every object that is not yet in
 * the desired version, sent to spec.conversion.webhook.clientConfig
 * through webhook_client.h, the answer checked and each converted
 * object's metadata restored from the original except labels and
 * annotations, as webhook_converter.go does. Failures answer 500 with
 * the converter's bare error ("conversion webhook for <gvk> failed: ...")
 * and no reason, which kubectl prints as "Error from server: ...".
 *
 * No state; any thread. A webhook call blocks the caller's thread.
 */
#include "devserver/convert.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "devserver/registry.h"
#include "devserver/status.h"
#include "devserver/webhook_client.h"
#include "model/names.h"

#define CONVERSION_TIMEOUT_S 30 /* apiextensions' webhook client */

static bool needs_conversion(const json_t *obj, const char *want)
{
	const char *have = jx_str(obj, "apiVersion");

	return !have || strcmp(have, want) != 0;
}

/* Go's %T of a decoded JSON value. */
static const char *go_type(const json_t *v)
{
	if (!v || json_is_null(v))
		return "<nil>";
	if (json_is_string(v))
		return "string";
	if (json_is_integer(v))
		return "int64";
	if (json_is_real(v))
		return "float64";
	if (json_is_boolean(v))
		return "bool";
	if (json_is_array(v))
		return "[]interface {}";
	return "map[string]interface {}";
}

/* schema.GroupVersion.String() of an apiVersion. */
static const char *gv_string(const char *av)
{
	return av ? av : "";
}

/* The failure: 500, the converter's message, no reason (apiserver's
 * ErrorToAPIStatus of a plain error). */
static void failed(struct api_status *st, const char *fmt, ...)
	PRINTF_LIKE(2, 3);

static void failed(struct api_status *st, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	status_set(st, 500, "", NULL, "%s", buf);
}

/* getConvertedObjectsFromResponse: the converted objects (borrowed from
 * resp), or NULL + err. */
static const json_t *converted_objects(const json_t *resp, const char *rv,
				       const char *uid, struct err *err)
{
	const json_t *r = json_object_get(resp, "response");
	const json_t *result, *objs;
	const char *av = jx_str(resp, "apiVersion");
	const char *kind = jx_str(resp, "kind");
	const char *got_uid, *status, *slash;

	av = av ? av : "";
	if (strcmp(av, rv) || strcmp(kind ? kind : "", "ConversionReview")) {
		slash = strchr(av, '/');
		err_set(err, "expected webhook response of %s, Kind="
			"ConversionReview, got %.*s/%s, Kind=%s", rv,
			slash ? (int)(slash - av) : 0, av,
			slash ? slash + 1 : av, kind ? kind : "");
		return NULL;
	}
	if (!json_is_object(r)) {
		err_set(err, "no response provided");
		return NULL;
	}
	got_uid = jx_str(r, "uid");
	if (strcmp(got_uid ? got_uid : "", uid)) {
		err_set(err, "expected response.uid=\"%s\", got \"%s\"", uid,
			got_uid ? got_uid : "");
		return NULL;
	}
	result = json_object_get(r, "result");
	status = jx_str(result, "status");
	if (strcmp(status ? status : "", "Success")) {
		const char *m = jx_str(result, "message");

		if (m && *m)
			err_set(err, "%s", m);
		else
			err_set(err, "response.result.status was '%s', not "
				"'Success'", status ? status : "");
		return NULL;
	}
	/* Absent or null: no objects (err stays empty). */
	objs = json_object_get(r, "convertedObjects");
	return json_is_array(objs) ? objs : NULL;
}

/* validateConvertedObject: kind, name, namespace and uid kept. */
static int same_identity(const json_t *in, const json_t *out,
			 struct err *err)
{
	static const struct {
		const char *key;   /* metadata key, NULL: kind */
		const char *what;
	} f[] = {
		{ NULL, "kind" }, { "name", "name" },
		{ "namespace", "namespace" }, { "uid", "UID" },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		const char *a, *b;

		if (!f[i].key) {
			a = jx_str(in, "kind");
			b = jx_str(out, "kind");
		} else {
			a = jx_str(json_object_get(in, "metadata"), f[i].key);
			b = jx_str(json_object_get(out, "metadata"), f[i].key);
		}
		if (strcmp(a ? a : "", b ? b : ""))
			return err_set(err, "must have the same %s: %s != %s",
				       f[i].what, a ? a : "", b ? b : "");
	}
	return 0;
}

/*
 * restoreObjectMeta: out's metadata becomes a copy of in's, with out's
 * own labels and annotations (validated when they changed). Returns 0,
 * or -1 + err.
 */
static int restore_meta(const json_t *in, json_t *out, struct err *err)
{
	static const char *const flds[] = { "labels", "annotations" };
	json_t *resp_meta = json_object_get(out, "metadata"), *meta;
	const json_t *orig = json_object_get(in, "metadata");
	int rc = -1;

	if (!resp_meta)
		return err_set(err, "missing metadata in converted object");
	if (!json_is_object(resp_meta))
		return err_set(err, "invalid metadata of type %s in converted "
			       "object", go_type(resp_meta));
	json_incref(resp_meta);
	meta = json_is_object(orig) ? json_deep_copy(orig) : json_object();
	for (size_t i = 0; i < 2; i++) {
		json_t *rf = json_object_get(resp_meta, flds[i]);
		json_t *of = json_object_get(meta, flds[i]), *v;
		struct field_errors fe = FIELD_ERRORS_INIT;
		bool changed;
		const char *k;

		if (!rf || json_is_null(rf)) {
			json_object_del(meta, flds[i]);
			continue;
		}
		if (!json_is_object(rf)) {
			err_set(err, "invalid metadata.%s of type %s in "
				"converted object", flds[i], go_type(rf));
			goto out;
		}
		changed = json_object_size(rf) != json_object_size(of);
		json_object_foreach(rf, k, v) {
			if (!json_is_string(v)) {
				err_set(err, "metadata.%s[%s] must be a string, "
					"but is %s in converted object",
					flds[i], k, go_type(v));
				goto out;
			}
			if (!json_equal(v, json_object_get(of, k)))
				changed = true;
		}
		if (changed) {
			char path[64];

			json_object_foreach(rf, k, v) {
				snprintf(path, sizeof(path), "metadata.%s",
					 i ? "annotation" : "labels");
				check_qualified_name(&fe, path, k);
				if (!i)
					check_label_value(&fe, path,
							  json_string_value(v));
			}
			if (fe.n) {
				char *agg = field_errors_aggregate(&fe);

				err_set(err, "%s", agg);
				free(agg);
				field_errors_release(&fe);
				goto out;
			}
		}
		json_object_set(meta, flds[i], rf);
	}
	json_object_set(out, "metadata", meta);
	rc = 0;
out:
	json_decref(meta);
	json_decref(resp_meta);
	return rc;
}

/* The first ConversionReview apiVersion the webhook accepts, or NULL. */
static const char *review_version(const json_t *wh)
{
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(wh, "conversionReviewVersions"),
			   i, v) {
		const char *s = json_string_value(v);

		if (s && !strcmp(s, "v1"))
			return "apiextensions.k8s.io/v1";
		if (s && !strcmp(s, "v1beta1"))
			return "apiextensions.k8s.io/v1beta1";
	}
	return NULL;
}

/*
 * webhookConverter.Convert of objs (a list when is_list, else one
 * object in a one-element array) to want. Returns a new array or NULL +
 * st.
 */
static json_t *convert_webhook(struct api *api, const struct rtype *t,
			       const json_t *objs, const char *want,
			       bool is_list, struct api_status *st)
{
	const json_t *wh = json_object_get(json_object_get(json_object_get(
		t->crd, "spec"), "conversion"), "webhook");
	const char *rv = review_version(wh), *from = NULL;
	struct webhook_call call = { 0 };
	struct err err = { "" };
	json_t *send = json_array(), *review = NULL, *resp = NULL;
	json_t *out = NULL, *o;
	const json_t *conv;
	char gvk[400], uid[37];
	size_t i, ci = 0;

	json_array_foreach(objs, i, o)
		if (needs_conversion(o, want)) {
			if (!from)
				from = jx_str(o, "apiVersion");
			json_array_append(send, o);
		}
	from = from ? from : "";
	snprintf(gvk, sizeof(gvk), "%s%s, Kind=%s%s", strchr(from, '/') ? ""
		 : "/", from, t->kind, is_list ? "List" : "");
	if (!rv) {
		failed(st, "webhook does not accept known ConversionReview "
		       "versions (v1, v1beta1)");
		goto out;
	}
	webhook_client_uuid(uid);
	review = json_pack("{s:s, s:s, s:{s:s, s:s, s:O}}", "kind",
			   "ConversionReview", "apiVersion", rv, "request",
			   "uid", uid, "desiredAPIVersion", want, "objects",
			   send);
	call.client_config = json_object_get(wh, "clientConfig");
	call.timeout_s = CONVERSION_TIMEOUT_S;
	resp = webhook_client_post(api, &call, review, &err);
	if (!resp) {
		failed(st, "conversion webhook for %s failed: %s", gvk, err.msg);
		goto out;
	}
	conv = json_object_get(json_object_get(resp, "response"),
			       "convertedObjects");
	if (conv && !json_is_null(conv) && !json_is_array(conv)) {
		failed(st, "conversion webhook for %s failed: json: cannot "
		       "unmarshal %s into Go struct field ConversionResponse."
		       "response.convertedObjects of type "
		       "[]runtime.RawExtension", gvk,
		       json_is_object(conv) ? "object" : go_type(conv));
		goto out;
	}
	conv = converted_objects(resp, rv, uid, &err);
	if (err.msg[0]) {
		failed(st, "conversion webhook for %s returned invalid "
		       "response: %s", gvk, err.msg);
		goto out;
	}
	if (json_array_size(conv) != json_array_size(send)) {
		failed(st, "conversion webhook for %s returned %zu objects, "
		       "expected %zu", gvk, json_array_size(conv),
		       json_array_size(send));
		goto out;
	}
	out = json_array();
	json_array_foreach(objs, i, o) {
		const json_t *src = json_array_get(conv, ci);
		json_t *c;
		const char *cav, *ck;
		char at[48] = "";

		if (!needs_conversion(o, want)) {
			json_array_append(out, o);
			continue;
		}
		if (is_list)
			snprintf(at, sizeof(at), " at index %zu", ci);
		if (!json_is_object(src) || !jx_str(src, "kind")) {
			char *txt = json_dumps(src, JSON_COMPACT |
					       JSON_ENCODE_ANY);

			failed(st, "conversion webhook for %s returned invalid "
			       "%sobject%s: Object 'Kind' is missing in '%s'",
			       gvk, is_list ? "converted " : "", at,
			       txt ? txt : "");
			free(txt);
			goto fail;
		}
		/* Go increments the index before the remaining checks. */
		ci++;
		if (is_list)
			snprintf(at, sizeof(at), " at index %zu", ci);
		cav = gv_string(jx_str(src, "apiVersion"));
		ck = jx_str(src, "kind");
		if (strcmp(cav, want)) {
			failed(st, "conversion webhook for %s returned invalid "
			       "%sobject%s: invalid groupVersion (expected %s, "
			       "received %s)", gvk, is_list ? "converted " : "",
			       at, want, cav);
			goto fail;
		}
		if (strcmp(ck, t->kind) || strcmp(jx_str(o, "kind") ? jx_str(o,
			"kind") : t->kind, ck)) {
			failed(st, "conversion webhook for %s returned invalid "
			       "%sobject%s: invalid kind (expected %s, "
			       "received %s)", gvk, is_list ? "converted " : "",
			       at,
			       jx_str(o, "kind") ? jx_str(o, "kind") : t->kind,
			       ck);
			goto fail;
		}
		if (same_identity(o, src, &err) < 0) {
			failed(st, "conversion webhook for %s returned invalid "
			       "%sobject%s: %s", gvk, is_list ? "converted " : "",
			       at, err.msg);
			goto fail;
		}
		c = json_deep_copy(src);
		if (restore_meta(o, c, &err) < 0) {
			json_decref(c);
			failed(st, "conversion webhook for %s returned invalid "
			       "metadata%s%s: %s", gvk, is_list
			       ? " in object" : "", at, err.msg);
			goto fail;
		}
		json_array_append_new(out, c);
	}
	goto out;
fail:
	json_decref(out);
	out = NULL;
out:
	json_decref(resp);
	json_decref(review);
	json_decref(send);
	return out;
}

static json_t *convert_list(struct api *api, const struct rtype *t,
			    const json_t *objs, const char *to_version,
			    bool is_list, struct api_status *st)
{
	char want[300];
	json_t *out, *o;
	size_t i;
	bool any = false;

	rtype_api_version(t, to_version, want, sizeof(want));
	json_array_foreach(objs, i, o)
		if (needs_conversion(o, want))
			any = true;
	if (!any)
		return json_incref((json_t *)objs);
	if (t->conversion == CONV_WEBHOOK && !t->bi)
		return convert_webhook(api, t, objs, want, is_list, st);
	out = json_array();
	json_array_foreach(objs, i, o) {
		json_t *c = json_copy((json_t *)o);

		json_object_set_new(c, "apiVersion", json_string(want));
		json_array_append_new(out, c);
	}
	return out;
}

json_t *convert_objects(struct api *api, const struct rtype *t,
			const json_t *objs, const char *to_version,
			struct api_status *st)
{
	return convert_list(api, t, objs, to_version, true, st);
}

json_t *convert_object(struct api *api, const struct rtype *t,
		       const json_t *obj, const char *to_version,
		       struct api_status *st)
{
	json_t *arr = json_array(), *out, *res;

	json_array_append(arr, (json_t *)obj);
	out = convert_list(api, t, arr, to_version, false, st);
	json_decref(arr);
	if (!out)
		return NULL;
	res = json_incref(json_array_get(out, 0));
	json_decref(out);
	return res;
}
