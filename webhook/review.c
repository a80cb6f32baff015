/*
 * review: AdmissionReview and ConversionReview envelopes. Strings are
 * copied out of the tree; the objects are kept as references into it.
 */
#include "webhook/review.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"

/* A JSON string of s, never NULL: text that is not valid UTF-8 (which
 * jansson refuses) becomes "" rather than a missing member. */
static json_t *new_text(const char *s)
{
	json_t *j = json_string(s ? s : "");

	return j ? j : json_string("");
}

static char *dup_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? xstrdup(s) : NULL;
}

void review_request_release(struct review_request *r)
{
	if (!r)
		return;
	free(r->api_version);
	free(r->uid);
	free(r->group);
	free(r->version);
	free(r->kind);
	free(r->sub_resource);
	free(r->name);
	free(r->namespace);
	json_decref(r->object);
	json_decref(r->old_object);
	memset(r, 0, sizeof(*r));
}

static enum review_op parse_op(const char *s)
{
	static const struct {
		const char *name;
		enum review_op op;
	} ops[] = {
		{ "CREATE", REVIEW_OP_CREATE }, { "UPDATE", REVIEW_OP_UPDATE },
		{ "DELETE", REVIEW_OP_DELETE }, { "CONNECT", REVIEW_OP_CONNECT },
	};

	for (size_t i = 0; s && i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(s, ops[i].name))
			return ops[i].op;
	return REVIEW_OP_UNKNOWN;
}

/* Parses body as a JSON object with the expected kind and one of the
 * apiVersions; returns a new reference or NULL + err. */
static json_t *load_envelope(const char *body, size_t len, const char *kind,
			     const char *const *versions, char **api_version,
			     struct err *err)
{
	json_error_t je;
	json_t *root;
	const char *av, *k;

	if (!len) {
		err_set(err, "request body is empty");
		return NULL;
	}
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		err_set(err, "couldn't decode the %s: %s (line %d, column %d)",
			kind, je.text, je.line, je.column);
		return NULL;
	}
	if (!json_is_object(root)) {
		err_set(err, "couldn't decode the %s: not a JSON object", kind);
		goto fail;
	}
	av = json_string_value(json_object_get(root, "apiVersion"));
	k = json_string_value(json_object_get(root, "kind"));
	if (!av || !k) {
		err_set(err, "couldn't get version/kind of the %s", kind);
		goto fail;
	}
	for (size_t i = 0; versions[i]; i++)
		if (!strcmp(av, versions[i]) && !strcmp(k, kind)) {
			*api_version = xstrdup(av);
			return root;
		}
	err_set(err, "unexpected %s/%s, expected %s", av, k, kind);
fail:
	json_decref(root);
	return NULL;
}

static json_t *object_ref(const json_t *req, const char *key)
{
	json_t *o = json_object_get(req, key);

	return json_is_object(o) ? json_incref(o) : NULL;
}

int review_decode_admission(const char *body, size_t len,
			    struct review_request *out, struct err *err)
{
	static const char *const versions[] = { REVIEW_ADMISSION_V1,
						REVIEW_ADMISSION_V1BETA1,
						NULL };
	json_t *root, *req, *kind, *v;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	root = load_envelope(body, len, "AdmissionReview", versions,
			     &out->api_version, err);
	if (!root)
		return -1;
	req = json_object_get(root, "request");
	if (!json_is_object(req)) {
		err_set(err, "got an empty AdmissionRequest");
		goto out;
	}
	out->uid = dup_str(req, "uid");
	if (!out->uid || !*out->uid) {
		err_set(err, "the AdmissionRequest has no uid");
		goto out;
	}
	kind = json_object_get(req, "kind");
	out->group = dup_str(kind, "group");
	out->version = dup_str(kind, "version");
	out->kind = dup_str(kind, "kind");
	if (!out->kind || !out->version) {
		err_set(err, "the AdmissionRequest has no kind");
		goto out;
	}
	if (!out->group)
		out->group = xstrdup("");
	out->op = parse_op(json_string_value(json_object_get(req,
							     "operation")));
	if (out->op == REVIEW_OP_UNKNOWN) {
		err_set(err, "the AdmissionRequest has an unknown operation");
		goto out;
	}
	out->sub_resource = dup_str(req, "subResource");
	out->name = dup_str(req, "name");
	out->namespace = dup_str(req, "namespace");
	v = json_object_get(req, "dryRun");
	out->dry_run = json_is_true(v);
	out->object = object_ref(req, "object");
	out->old_object = object_ref(req, "oldObject");
	if (!out->object && out->op != REVIEW_OP_DELETE &&
	    out->op != REVIEW_OP_CONNECT) {
		err_set(err, "the AdmissionRequest has no object");
		goto out;
	}
	if (!out->old_object && out->op == REVIEW_OP_UPDATE) {
		err_set(err, "the AdmissionRequest has no oldObject");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

void review_response_release(struct review_response *r)
{
	if (!r)
		return;
	free(r->message);
	json_decref(r->patch);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	memset(r, 0, sizeof(*r));
}

void review_deny(struct review_response *r, int32_t code, const char *reason,
		 const char *message)
{
	r->allowed = false;
	r->code = code;
	r->reason = reason;
	free(r->message);
	r->message = message ? xstrdup(message) : NULL;
	json_decref(r->patch);
	r->patch = NULL;
}

void review_warn(struct review_response *r, const char *warning)
{
	r->warnings = xrealloc(r->warnings,
			       (r->nwarnings + 1) * sizeof(*r->warnings));
	r->warnings[r->nwarnings++] = xstrdup(warning);
}

json_t *review_encode_admission(const char *api_version, const char *uid,
				const struct review_response *r)
{
	json_t *resp = json_object(), *rev = json_object();

	json_object_set_new(resp, "uid", new_text(uid));
	json_object_set_new(resp, "allowed", json_boolean(r->allowed));

	if (r->code || r->message || r->reason) {
		json_t *st = json_object();

		json_object_set_new(st, "metadata", json_object());
		if (!r->allowed)
			json_object_set_new(st, "status",
					    json_string("Failure"));
		if (r->message)
			json_object_set_new(st, "message", new_text(r->message));
		if (r->reason)
			json_object_set_new(st, "reason", new_text(r->reason));
		if (r->code)
			json_object_set_new(st, "code",
					    json_integer(r->code));
		json_object_set_new(resp, "status", st);
	}
	if (r->allowed && r->patch && json_array_size(r->patch)) {
		char *text = json_dumps(r->patch, JSON_COMPACT);
		char *b64;

		if (!text)
			BUG("json_dumps of a patch failed");
		b64 = b64_encode(text, strlen(text), B64_STD);
		json_object_set_new(resp, "patchType", json_string("JSONPatch"));
		json_object_set_new(resp, "patch", json_string(b64));
		free(b64);
		free(text);
	}
	if (r->nwarnings) {
		json_t *w = json_array();

		for (size_t i = 0; i < r->nwarnings; i++)
			json_array_append_new(w, new_text(r->warnings[i]));
		json_object_set_new(resp, "warnings", w);
	}
	json_object_set_new(rev, "apiVersion",
			    new_text(api_version ? api_version
					     : REVIEW_ADMISSION_V1));
	json_object_set_new(rev, "kind", json_string("AdmissionReview"));
	json_object_set_new(rev, "response", resp);
	return rev;
}

void review_conversion_release(struct review_conversion *c)
{
	if (!c)
		return;
	free(c->api_version);
	free(c->uid);
	free(c->desired);
	json_decref(c->objects);
	memset(c, 0, sizeof(*c));
}

int review_decode_conversion(const char *body, size_t len,
			     struct review_conversion *out, struct err *err)
{
	static const char *const versions[] = { REVIEW_CONVERSION_V1, NULL };
	json_t *root, *req, *objs;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	root = load_envelope(body, len, "ConversionReview", versions,
			     &out->api_version, err);
	if (!root)
		return -1;
	req = json_object_get(root, "request");
	if (!json_is_object(req)) {
		err_set(err, "conversion request is nil");
		goto out;
	}
	out->uid = dup_str(req, "uid");
	out->desired = dup_str(req, "desiredAPIVersion");
	if (!out->uid || !*out->uid) {
		err_set(err, "the ConversionRequest has no uid");
		goto out;
	}
	if (!out->desired || !*out->desired) {
		err_set(err, "the ConversionRequest has no desiredAPIVersion");
		goto out;
	}
	objs = json_object_get(req, "objects");
	if (objs && !json_is_array(objs)) {
		err_set(err, "the ConversionRequest's objects is not a list");
		goto out;
	}
	out->objects = objs ? json_incref(objs) : json_array();
	rc = 0;
out:
	json_decref(root);
	return rc;
}

json_t *review_encode_conversion(const char *api_version, const char *uid,
				 const json_t *converted, const char *failure)
{
	json_t *resp = json_object(), *rev = json_object();

	json_object_set_new(resp, "uid", new_text(uid));
	if (failure) {
		json_t *res = json_object();

		json_object_set_new(res, "status", json_string("Failure"));
		json_object_set_new(res, "message", new_text(failure));
		json_object_set_new(resp, "result", res);
		json_object_set_new(resp, "convertedObjects", json_array());
	} else {
		json_object_set_new(resp, "result",
				    json_pack("{s:s}", "status", "Success"));
		json_object_set_new(resp, "convertedObjects",
				    converted ? json_incref((json_t *)converted)
					      : json_array());
	}
	json_object_set_new(rev, "apiVersion",
			    new_text(api_version ? api_version
					     : REVIEW_CONVERSION_V1));
	json_object_set_new(rev, "kind", json_string("ConversionReview"));
	json_object_set_new(rev, "response", resp);
	return rev;
}
