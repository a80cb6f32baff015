/*
 * schema: what the API server does with a CRD's structural schema
 * (openAPIV3Schema of the served version): defaulting, pruning and
 * validation, as apiextensions-apiserver does them. Pure functions; the
 * schema is borrowed JSON.
 *
 * Supported keywords: type (object, array, string, integer, number,
 * boolean), properties, additionalProperties (bool or schema), items,
 * required, enum, default, nullable, format (int32, int64, date-time
 * checked), maxLength, minLength, maxItems, minItems, maxProperties,
 * minProperties, minimum, maximum, exclusiveMinimum/Maximum, pattern
 * (ECMA subset via POSIX regex), x-kubernetes-int-or-string,
 * x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource,
 * x-kubernetes-list-type (set, map) with x-kubernetes-list-map-keys,
 * x-kubernetes-map-type. CEL (x-kubernetes-validations) is not evaluated:
 * the same rules come back through the validating webhooks.
 */
#ifndef DEVSERVER_SCHEMA_H
#define DEVSERVER_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>

#include "model/errors.h"

/*
 * Removes every field the schema does not declare (unless preserved by
 * x-kubernetes-preserve-unknown-fields), in place on obj, which the
 * caller owns and no one else references. apiVersion, kind and metadata
 * at the root are never pruned (metadata is reduced to the ObjectMeta
 * fields). When unknown is not NULL, the path of each pruned field is
 * appended to it ("spec.foo") for fieldValidation=Strict/Warn.
 */
void schema_prune(json_t *obj, const json_t *schema, json_t *unknown);

/* Applies default: values in place (structural defaulting: a default
 * applies where the field is absent and its parent object exists). */
void schema_default(json_t *obj, const json_t *schema);

/*
 * Validates obj against schema, appending every violation to fe with
 * Kubernetes' wording and paths ("spec.queueingStrategy: Unsupported
 * value: \"X\": supported values: \"BestEffortFIFO\", \"StrictFIFO\"",
 * "spec.resourceGroups: Too many: 17: must have at most 16 items",
 * "spec.x: Invalid value: \"string\": spec.x in body must be of type
 * integer: \"string\"", "spec.name: Required value").
 */
void schema_validate(const json_t *obj, const json_t *schema,
		     struct field_errors *fe);

#endif
