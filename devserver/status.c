/*
 * status: Status objects and the exact §7 message templates of
 * kube-apiserver (apimachinery's errors package: NewNotFound,
 * NewAlreadyExists, NewConflict, NewInvalid, ...).
 */
#include "devserver/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void status_init(struct api_status *st)
{
	st->code = 0;
	st->reason[0] = '\0';
	st->message = NULL;
	st->details = NULL;
	st->retry_after = 0;
}

void status_release(struct api_status *st)
{
	free(st->message);
	json_decref(st->details);
	status_init(st);
}

static int vset(struct api_status *st, int code, const char *reason,
		json_t *details, const char *fmt, va_list ap)
{
	char buf[2048];

	if (st->code) {
		json_decref(details);
		return -1;
	}
	vsnprintf(buf, sizeof(buf), fmt, ap);
	st->code = code;
	snprintf(st->reason, sizeof(st->reason), "%s", reason ? reason : "");
	st->message = xstrdup(buf);
	st->details = details;
	return -1;
}

int status_set(struct api_status *st, int code, const char *reason,
	       json_t *details, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vset(st, code, reason, details, fmt, ap);
	va_end(ap);
	return rc;
}

json_t *status_to_json(const struct api_status *st)
{
	json_t *o = json_pack("{s:s, s:s, s:{}, s:s}", "kind", "Status",
			      "apiVersion", "v1", "metadata", "status",
			      "Failure");

	json_object_set_new(o, "message",
			    json_string(st->message ? st->message : ""));
	if (st->reason[0])
		json_object_set_new(o, "reason", json_string(st->reason));
	if (st->details)
		json_object_set(o, "details", st->details);
	json_object_set_new(o, "code", json_integer(st->code));
	return o;
}

json_t *status_success(json_t *details)
{
	json_t *o = json_pack("{s:s, s:s, s:{}, s:s}", "kind", "Status",
			      "apiVersion", "v1", "metadata", "status",
			      "Success");

	if (details)
		json_object_set_new(o, "details", details);
	return o;
}

char *status_qualified(const char *group, const char *plural)
{
	if (!group || !*group)
		return xstrdup(plural);
	return xasprintf("%s.%s", plural, group);
}

json_t *status_details(const char *group, const char *plural,
		       const char *name)
{
	json_t *d = json_object();

	if (name)
		json_object_set_new(d, "name", json_string(name));
	if (group && *group)
		json_object_set_new(d, "group", json_string(group));
	json_object_set_new(d, "kind", json_string(plural));
	return d;
}

int status_not_found(struct api_status *st, const char *group,
		     const char *plural, const char *name)
{
	char *qr = status_qualified(group, plural);

	status_set(st, 404, "NotFound", status_details(group, plural, name),
		   "%s \"%s\" not found", qr, name);
	free(qr);
	return -1;
}

int status_already_exists(struct api_status *st, const char *group,
			  const char *plural, const char *name)
{
	char *qr = status_qualified(group, plural);

	status_set(st, 409, "AlreadyExists",
		   status_details(group, plural, name),
		   "%s \"%s\" already exists", qr, name);
	free(qr);
	return -1;
}

int status_conflict_detail(struct api_status *st, const char *group,
			   const char *plural, const char *name,
			   const char *detail)
{
	char *qr = status_qualified(group, plural);

	status_set(st, 409, "Conflict", status_details(group, plural, name),
		   "Operation cannot be fulfilled on %s \"%s\": %s", qr, name,
		   detail);
	free(qr);
	return -1;
}

int status_conflict(struct api_status *st, const char *group,
		    const char *plural, const char *name)
{
	return status_conflict_detail(st, group, plural, name,
		"the object has been modified; please apply your changes "
		"to the latest version and try again");
}

static const char *cause_reason(enum fe_kind k)
{
	switch (k) {
	case FE_NOT_FOUND: return "FieldValueNotFound";
	case FE_REQUIRED: return "FieldValueRequired";
	case FE_DUPLICATE: return "FieldValueDuplicate";
	case FE_INVALID: return "FieldValueInvalid";
	case FE_UNSUPPORTED: return "FieldValueNotSupported";
	case FE_FORBIDDEN: return "FieldValueForbidden";
	case FE_TOO_LONG: return "FieldValueTooLong";
	case FE_TOO_MANY: return "FieldValueTooMany";
	case FE_TYPE: return "FieldValueTypeInvalid";
	case FE_INTERNAL: return "InternalError";
	}
	return "FieldValueInvalid";
}

int status_invalid(struct api_status *st, const char *group,
		   const char *kind, const char *name,
		   const struct field_errors *fe)
{
	json_t *d = json_object(), *causes = json_array();
	char *agg = field_errors_aggregate(fe);

	json_object_set_new(d, "name", json_string(name ? name : ""));
	if (group && *group)
		json_object_set_new(d, "group", json_string(group));
	json_object_set_new(d, "kind", json_string(kind));
	for (size_t i = 0; i < fe->n; i++) {
		const struct field_error *e = &fe->v[i];
		size_t pl = strlen(e->path);
		const char *body = e->text;

		/* The cause message is the text without "path: ". */
		if (!strncmp(body, e->path, pl) && !strncmp(body + pl, ": ", 2))
			body += pl + 2;
		json_array_append_new(causes,
			json_pack("{s:s, s:s, s:s}", "reason",
				  cause_reason(e->kind), "message", body,
				  "field", e->path));
	}
	json_object_set_new(d, "causes", causes);
	if (group && *group)
		status_set(st, 422, "Invalid", d, "%s.%s \"%s\" is invalid: %s",
			   kind, group, name ? name : "", agg);
	else
		status_set(st, 422, "Invalid", d, "%s \"%s\" is invalid: %s",
			   kind, name ? name : "", agg);
	free(agg);
	return -1;
}

int status_bad_request(struct api_status *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(st, 400, "BadRequest", NULL, fmt, ap);
	va_end(ap);
	return -1;
}

int status_forbidden(struct api_status *st, const char *group,
		     const char *plural, const char *name, const char *detail)
{
	char *qr = status_qualified(group, plural);

	status_set(st, 403, "Forbidden", status_details(group, plural, name),
		   "%s \"%s\" is forbidden: %s", qr, name ? name : "", detail);
	free(qr);
	return -1;
}

int status_internal(struct api_status *st, const char *detail)
{
	return status_set(st, 500, "InternalError",
			  json_pack("{s:[{s:s}]}", "causes", "message",
				    detail),
			  "Internal error occurred: %s", detail);
}

int status_path_not_found(struct api_status *st)
{
	return status_set(st, 404, "NotFound", json_object(),
			  "the server could not find the requested resource");
}

int status_method_not_allowed(struct api_status *st)
{
	return status_set(st, 405, "MethodNotAllowed", json_object(),
			  "the server does not allow this method on the "
			  "requested resource");
}

int status_expired(struct api_status *st, unsigned long long req,
		   unsigned long long cur)
{
	return status_set(st, 410, "Expired", NULL,
			  "too old resource version: %llu (%llu)", req, cur);
}

int status_too_large_rv(struct api_status *st, unsigned long long req,
			unsigned long long cur)
{
	status_set(st, 504, "Timeout",
		   json_pack("{s:[{s:s, s:s}], s:i}", "causes", "reason",
			     "ResourceVersionTooLarge", "message",
			     "Too large resource version",
			     "retryAfterSeconds", 1),
		   "Too large resource version: %llu, current: %llu", req,
		   cur);
	st->retry_after = 1;
	return -1;
}

int status_unsupported_media(struct api_status *st, const char *accepted)
{
	return status_set(st, 415, "UnsupportedMediaType", NULL,
			  "the body of the request was in an unknown format - "
			  "accepted media types include: %s", accepted);
}

int status_too_large_body(struct api_status *st, unsigned long limit)
{
	return status_set(st, 413, "RequestEntityTooLarge", NULL,
			  "Request entity too large: limit is %lu", limit);
}

int status_too_many_requests(struct api_status *st, int retry_after_s)
{
	st->retry_after = retry_after_s;
	return status_set(st, 429, "TooManyRequests",
			  json_pack("{s:i}", "retryAfterSeconds",
				    retry_after_s),
			  "Too many requests, please try again later.");
}

int status_unauthorized(struct api_status *st)
{
	return status_set(st, 401, "Unauthorized", NULL, "Unauthorized");
}

int status_not_acceptable(struct api_status *st)
{
	return status_set(st, 406, "NotAcceptable", NULL,
			  "only the following media types are accepted: "
			  "application/json, application/yaml, "
			  "application/vnd.kubernetes.protobuf");
}
