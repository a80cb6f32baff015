/*
 * errors: struct err and the field error list (see errors.h). Renders each
 * kind of field.Error with the exact words of k8s.io/apimachinery's
 * field.Error.Error(), because users grep for them and tests compare them.
 */
#include "model/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int err_set(struct err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	utf8_trim_tail(err->msg);
	return -1;
}

size_t utf8_trim_tail(char *s)
{
	size_t n = strlen(s), i = n, need;
	unsigned char lead;

	/* Back over at most three continuation bytes to the lead byte. */
	while (i > 0 && n - i < 3 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0)
		return n;
	lead = (unsigned char)s[i - 1];
	if (lead < 0xc0) /* ASCII or a continuation byte: nothing open */
		return n;
	need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
	if (n - (i - 1) >= need)
		return n;
	s[i - 1] = '\0';
	return i - 1;
}

void field_errors_init(struct field_errors *fe)
{
	fe->v = NULL;
	fe->n = 0;
	fe->cap = 0;
}

void field_errors_release(struct field_errors *fe)
{
	for (size_t i = 0; i < fe->n; i++) {
		free(fe->v[i].path);
		free(fe->v[i].text);
	}
	free(fe->v);
	field_errors_init(fe);
}

char *go_quote(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *q = xmalloc(n * 4 + 3);

	q[o++] = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': q[o++] = '\\'; q[o++] = '"'; break;
		case '\\': q[o++] = '\\'; q[o++] = '\\'; break;
		case '\n': q[o++] = '\\'; q[o++] = 'n'; break;
		case '\t': q[o++] = '\\'; q[o++] = 't'; break;
		case '\r': q[o++] = '\\'; q[o++] = 'r'; break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				o += (size_t)sprintf(q + o, "\\x%02x", *p);
			else
				q[o++] = (char)*p;
		}
	}
	q[o++] = '"';
	q[o] = '\0';
	return q;
}

/* Longest rendered value kept in a message; a 10 MB string must not make a
 * 10 MB denial. Kubernetes trims long values in its messages too. */
#define VALUE_MAX 256

static char *render_value(const char *value, bool quote)
{
	char *cut = NULL, *out;
	size_t n = strlen(value);

	if (n > VALUE_MAX) {
		cut = xmalloc(VALUE_MAX + 4);
		memcpy(cut, value, VALUE_MAX);
		cut[VALUE_MAX] = '\0';
		memcpy(cut + utf8_trim_tail(cut), "...", 4);
		value = cut;
	}
	out = quote ? go_quote(value) : xstrdup(value);
	free(cut);
	return out;
}

void fe_add(struct field_errors *fe, enum fe_kind kind, const char *path,
	    const char *value, bool quote, const char *detail, ...)
{
	char dbuf[1024] = "";
	char *v = value ? render_value(value, quote) : NULL;
	const char *vs = v ? v : "null";
	struct field_error *e;

	if (detail) {
		va_list ap;

		va_start(ap, detail);
		vsnprintf(dbuf, sizeof(dbuf), detail, ap);
		va_end(ap);
		utf8_trim_tail(dbuf);
	}
	XGROW(fe->v, fe->cap, fe->n + 1);
	e = &fe->v[fe->n++];
	e->kind = kind;
	e->path = xstrdup(path);
	switch (kind) {
	case FE_NOT_FOUND:
		e->text = xasprintf("%s: Not found: %s", path, vs);
		break;
	case FE_REQUIRED:
		e->text = *dbuf ? xasprintf("%s: Required value: %s", path, dbuf)
				: xasprintf("%s: Required value", path);
		break;
	case FE_DUPLICATE:
		e->text = xasprintf("%s: Duplicate value: %s", path, vs);
		break;
	case FE_INVALID:
		e->text = *dbuf ? xasprintf("%s: Invalid value: %s: %s", path, vs, dbuf)
				: xasprintf("%s: Invalid value: %s", path, vs);
		break;
	case FE_UNSUPPORTED:
		e->text = xasprintf("%s: Unsupported value: %s: supported values: %s",
				    path, vs, dbuf);
		break;
	case FE_FORBIDDEN:
		e->text = xasprintf("%s: Forbidden: %s", path, dbuf);
		break;
	case FE_TOO_LONG:
		e->text = xasprintf("%s: Too long: may not be more than %s bytes",
				    path, dbuf);
		break;
	case FE_TOO_MANY:
		e->text = xasprintf("%s: Too many: %s: must have at most %s items",
				    path, vs, dbuf);
		break;
	case FE_TYPE:
		e->text = xasprintf("%s: Invalid value: %s: %s in body must be of type %s",
				    path, vs, path, dbuf);
		break;
	case FE_INTERNAL:
		e->text = xasprintf("%s: Internal error: %s", path, dbuf);
		break;
	}
	free(v);
}

void fe_required(struct field_errors *fe, const char *path, const char *detail)
{
	fe_add(fe, FE_REQUIRED, path, NULL, false, detail ? "%s" : NULL, detail);
}

void fe_invalid(struct field_errors *fe, const char *path, const char *value,
		const char *detail)
{
	fe_add(fe, FE_INVALID, path, value, true, detail ? "%s" : NULL, detail);
}

void fe_invalid_num(struct field_errors *fe, const char *path, int64_t value,
		    const char *detail)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)value);
	fe_add(fe, FE_INVALID, path, buf, false, detail ? "%s" : NULL, detail);
}

void fe_unsupported(struct field_errors *fe, const char *path,
		    const char *value, const char *const *supported)
{
	char list[512] = "";
	size_t o = 0;

	/* Each value %q-quoted, as Kubernetes' NotSupported does; some lists
	 * carry user text (pod set names). Cut at a whole entry. */
	for (size_t i = 0; supported && supported[i]; i++) {
		char *q = go_quote(supported[i]);
		int n = snprintf(list + o, sizeof(list) - o, "%s%s",
				 i ? ", " : "", q);

		free(q);
		if (n < 0 || (size_t)n >= sizeof(list) - o) {
			list[o] = '\0';
			break;
		}
		o += (size_t)n;
	}
	fe_add(fe, FE_UNSUPPORTED, path, value, true, "%s", list);
}

void fe_forbidden(struct field_errors *fe, const char *path, const char *detail)
{
	fe_add(fe, FE_FORBIDDEN, path, NULL, false, "%s", detail);
}

void fe_duplicate(struct field_errors *fe, const char *path, const char *value)
{
	fe_add(fe, FE_DUPLICATE, path, value, true, NULL);
}

void fe_too_long(struct field_errors *fe, const char *path, size_t max)
{
	fe_add(fe, FE_TOO_LONG, path, NULL, false, "%zu", max);
}

void fe_too_many(struct field_errors *fe, const char *path, size_t have,
		 size_t max)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%zu", have);
	fe_add(fe, FE_TOO_MANY, path, buf, false, "%zu", max);
}

void field_errors_take_all(struct field_errors *dst, struct field_errors *src)
{
	if (dst == src)
		BUG("field_errors_take_all: dst and src are the same list");
	if (src->n == 0) {	/* memcpy from a NULL v is undefined */
		free(src->v);
		field_errors_init(src);
		return;
	}
	XGROW(dst->v, dst->cap, dst->n + src->n);
	memcpy(dst->v + dst->n, src->v, src->n * sizeof(*src->v));
	dst->n += src->n;
	free(src->v);
	field_errors_init(src);
}

bool field_errors_has_path(const struct field_errors *fe, const char *path)
{
	for (size_t i = 0; i < fe->n; i++)
		if (!strcmp(fe->v[i].path, path))
			return true;
	return false;
}

char *field_errors_aggregate(const struct field_errors *fe)
{
	size_t len = 3;
	char *s, *p;

	if (fe->n == 0)
		return xstrdup("");
	if (fe->n == 1)
		return xstrdup(fe->v[0].text);
	for (size_t i = 0; i < fe->n; i++)
		len += strlen(fe->v[i].text) + 2;
	s = p = xmalloc(len);
	*p++ = '[';
	for (size_t i = 0; i < fe->n; i++) {
		size_t n = strlen(fe->v[i].text);

		if (i) {
			*p++ = ',';
			*p++ = ' ';
		}
		memcpy(p, fe->v[i].text, n);
		p += n;
	}
	*p++ = ']';
	*p = '\0';
	return s;
}
