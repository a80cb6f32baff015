/*
 * names: Kubernetes name and label syntax checks (apimachinery's
 * validation package): DNS-1123 labels and subdomains, qualified names
 * (label keys, resource names), label values.
 *
 * Each is_* predicate answers yes/no; each check_* adds one field error in
 * Kubernetes' exact wording (the regex text included) to fe when the value
 * is bad. No I/O, no allocation beyond the error list.
 */
#ifndef MODEL_NAMES_H
#define MODEL_NAMES_H

#include <stdbool.h>

#include "model/errors.h"

bool is_dns1123_label(const char *s);     /* <= 63, [a-z0-9]([-a-z0-9]*[a-z0-9])? */
bool is_dns1123_subdomain(const char *s); /* <= 253, labels joined by '.' */
bool is_qualified_name(const char *s);    /* [prefix/]name, label key syntax */
bool is_label_value(const char *s);       /* <= 63, may be empty */
/* The DNS-1123 patterns alone, any length: a CRD's Pattern marker, whose
 * MaxLength is checked and reported on its own. */
bool is_dns1123_label_pattern(const char *s);
bool is_dns1123_subdomain_pattern(const char *s);

/* Each adds one Invalid error at path when bad (lengths are reported
 * inside the Invalid message, as Kubernetes does), or Required for an
 * empty DNS name. */
void check_dns1123_label(struct field_errors *fe, const char *path,
			 const char *s);
void check_dns1123_subdomain(struct field_errors *fe, const char *path,
			     const char *s);
/*
 * A generateName prefix, as Kubernetes' NameIsDNSSubdomain(s, prefix=true)
 * checks it: a trailing dash is masked first by maskTrailingDash, quirk
 * included (the last two bytes become one "a"), and errors show s as
 * written. s must be non-empty.
 */
void check_dns1123_subdomain_prefix(struct field_errors *fe, const char *path,
				    const char *s);
/* As check_dns1123_subdomain, but "" gets the pattern message, not
 * Required: IsDNS1123Subdomain run on any text, as Kueue checks the
 * values of its labels and annotations. */
void check_dns1123_subdomain_value(struct field_errors *fe, const char *path,
				   const char *s);
void check_qualified_name(struct field_errors *fe, const char *path,
			  const char *s);
void check_label_value(struct field_errors *fe, const char *path,
		       const char *s);

#endif
