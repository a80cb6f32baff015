/*
 * names: Kubernetes name and label syntax (see names.h), after
 * k8s.io/apimachinery's validation/content packages (IsDNS1123Label,
 * IsDNS1123Subdomain, IsLabelKey a.k.a. IsQualifiedName, IsLabelValue).
 *
 * The regexes are hand-written scanners; the messages, regex text included,
 * are Kubernetes' own words so that users can grep for them. Where
 * Kubernetes returns several messages for one value we join them with "; "
 * into a single Invalid error, as labels.Parse does for selector keys.
 *
 * Empty values: check_dns1123_label/subdomain report "Required value" (every
 * Kubernetes caller checks emptiness before the format); check_qualified_name
 * keeps Kubernetes' Invalid "name part must be non-empty; ..." because
 * ValidateLabelName does; an empty label value is valid. Lengths are in
 * bytes and reported inside the Invalid message ("must be no more than 63
 * bytes"), never as a separate Too long error, again as Kubernetes does.
 *
 * Pure functions: no I/O, no state, allocation only for messages.
 */
#include "model/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

#define LABEL_MAX 63      /* DNS-1123 label, label key name part, value */
#define SUBDOMAIN_MAX 253 /* DNS-1123 subdomain, label key prefix */

#define LABEL_RE "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define SUBDOMAIN_RE LABEL_RE "(\\." LABEL_RE ")*"
#define QNAME_RE "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define VALUE_RE "(" QNAME_RE ")?"

#define QNAME_REGEX_MSG \
	"must consist of alphanumeric characters, '-', '_' or '.', and must " \
	"start and end with an alphanumeric character (e.g. 'MyName',  or " \
	"'my.name',  or '123-abc', regex used for validation is '" QNAME_RE "')"

static const char label_regex_msg[] =
	"a lowercase RFC 1123 label must consist of lower case alphanumeric "
	"characters or '-', and must start and end with an alphanumeric "
	"character (e.g. 'my-name',  or '123-abc', regex used for validation "
	"is '" LABEL_RE "')";
static const char subdomain_regex_msg[] =
	"a lowercase RFC 1123 subdomain must consist of lower case "
	"alphanumeric characters, '-' or '.', and must start and end with an "
	"alphanumeric character (e.g. 'example.com', regex used for "
	"validation is '" SUBDOMAIN_RE "')";
static const char qname_regex_msg[] = QNAME_REGEX_MSG;
static const char qname_slashes_msg[] =
	"a valid label key " QNAME_REGEX_MSG " with an optional DNS subdomain "
	"prefix and '/' (e.g. 'example.com/MyName')";
static const char value_regex_msg[] =
	"a valid label must be an empty string or consist of alphanumeric "
	"characters, '-', '_' or '.', and must start and end with an "
	"alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
	"regex used for validation is '" VALUE_RE "')";
static const char empty_msg[] = "must be non-empty";

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* s[0..n) matches ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ */
static bool re_label(const char *s, size_t n)
{
	if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

/* s[0..n) is one or more re_label runs joined by single dots. */
static bool re_subdomain(const char *s, size_t n)
{
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (!re_label(s + start, i - start))
			return false;
		start = i + 1;
	}
	return true;
}

/* s[0..n) matches ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$ */
static bool re_qname(const char *s, size_t n)
{
	if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i + 1 < n; i++)
		if (!is_alnum(s[i]) && !strchr("-_.", s[i]))
			return false;
	return true;
}

/* Appends prefix + msg to the "; "-joined message list *acc (new string). */
static void msgs_add(char **acc, const char *prefix, const char *msg)
{
	char *next = *acc ? xasprintf("%s; %s%s", *acc, prefix, msg)
			  : xasprintf("%s%s", prefix, msg);

	free(*acc);
	*acc = next;
}

static void msgs_add_maxlen(char **acc, const char *prefix, size_t max)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "must be no more than %zu bytes", max);
	msgs_add(acc, prefix, buf);
}

/*
 * The msgs_* functions below mirror Kubernetes' Is* functions: each
 * appends the messages for s[0..n) to *acc, and adds nothing when the
 * value is good.
 */
static void msgs_subdomain(char **acc, const char *prefix, const char *s,
			   size_t n)
{
	if (n > SUBDOMAIN_MAX)
		msgs_add_maxlen(acc, prefix, SUBDOMAIN_MAX);
	if (!re_subdomain(s, n))
		msgs_add(acc, prefix, subdomain_regex_msg);
}

static void msgs_label(char **acc, const char *s, size_t n)
{
	if (n > LABEL_MAX)
		msgs_add_maxlen(acc, "", LABEL_MAX);
	if (re_label(s, n))
		return;
	/* A good subdomain that is a bad label can only be so for its dots
	 * (length was reported above). */
	msgs_add(acc, "", re_subdomain(s, n) ? "must not contain dots"
					     : label_regex_msg);
}

static void msgs_qualified_name(char **acc, const char *s)
{
	const char *slash = strchr(s, '/');
	const char *name = s;
	size_t n;

	if (slash && strchr(slash + 1, '/')) {
		msgs_add(acc, "", qname_slashes_msg);
		return;
	}
	if (slash) {
		size_t plen = (size_t)(slash - s);

		if (plen == 0)
			msgs_add(acc, "prefix part ", empty_msg);
		else
			msgs_subdomain(acc, "prefix part ", s, plen);
		name = slash + 1;
	}
	n = strlen(name);
	if (n == 0)
		msgs_add(acc, "name part ", empty_msg);
	else if (n > LABEL_MAX)
		msgs_add_maxlen(acc, "name part ", LABEL_MAX);
	if (!re_qname(name, n))
		msgs_add(acc, "name part ", qname_regex_msg);
}

static void msgs_label_value(char **acc, const char *s)
{
	size_t n = strlen(s);

	if (n > LABEL_MAX)
		msgs_add_maxlen(acc, "", LABEL_MAX);
	if (n > 0 && !re_qname(s, n))
		msgs_add(acc, "", value_regex_msg);
}

bool is_dns1123_label(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	return n <= LABEL_MAX && re_label(s, n);
}

bool is_dns1123_subdomain(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	return n <= SUBDOMAIN_MAX && re_subdomain(s, n);
}

bool is_dns1123_label_pattern(const char *s)
{
	return s && re_label(s, strlen(s));
}

bool is_dns1123_subdomain_pattern(const char *s)
{
	return s && re_subdomain(s, strlen(s));
}

bool is_qualified_name(const char *s)
{
	char *msgs = NULL;

	if (!s)
		return false;
	msgs_qualified_name(&msgs, s);
	if (!msgs)
		return true;
	free(msgs);
	return false;
}

bool is_label_value(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	return n <= LABEL_MAX && (n == 0 || re_qname(s, n));
}

/* Adds one Invalid error carrying msgs (if any) and frees msgs. */
static void add_invalid(struct field_errors *fe, const char *path,
			const char *s, char *msgs)
{
	if (msgs)
		fe_invalid(fe, path, s, msgs);
	free(msgs);
}

void check_dns1123_label(struct field_errors *fe, const char *path,
			 const char *s)
{
	char *msgs = NULL;

	if (!s || !*s) {
		fe_required(fe, path, NULL);
		return;
	}
	msgs_label(&msgs, s, strlen(s));
	add_invalid(fe, path, s, msgs);
}

void check_dns1123_subdomain(struct field_errors *fe, const char *path,
			     const char *s)
{
	char *msgs = NULL;

	if (!s || !*s) {
		fe_required(fe, path, NULL);
		return;
	}
	msgs_subdomain(&msgs, "", s, strlen(s));
	add_invalid(fe, path, s, msgs);
}

void check_dns1123_subdomain_prefix(struct field_errors *fe, const char *path,
				    const char *s)
{
	size_t n = strlen(s);
	char *masked = xstrdup(s), *msgs = NULL;

	/* name[:len(name)-2] + "a": upstream drops the byte before the dash
	 * too, which changes which prefixes pass, so it is kept. */
	if (n > 1 && s[n - 1] == '-') {
		masked[n - 2] = 'a';
		masked[--n] = '\0';
	}
	msgs_subdomain(&msgs, "", masked, n);
	add_invalid(fe, path, s, msgs);
	free(masked);
}

void check_dns1123_subdomain_value(struct field_errors *fe, const char *path,
				   const char *s)
{
	char *msgs = NULL;

	if (!s)
		s = "";
	msgs_subdomain(&msgs, "", s, strlen(s));
	add_invalid(fe, path, s, msgs);
}

void check_qualified_name(struct field_errors *fe, const char *path,
			  const char *s)
{
	char *msgs = NULL;

	if (!s)
		s = "";
	msgs_qualified_name(&msgs, s);
	add_invalid(fe, path, s, msgs);
}

void check_label_value(struct field_errors *fe, const char *path,
		       const char *s)
{
	char *msgs = NULL;

	if (!s)
		s = "";
	msgs_label_value(&msgs, s);
	add_invalid(fe, path, s, msgs);
}
