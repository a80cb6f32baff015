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
 * x-kubernetes-map-type, and x-kubernetes-validations: CEL rules (the
 * subset devserver/cel.h lists) with message, messageExpression, reason
 * and fieldPath, transition rules (oldSelf) on update, ratcheting and
 * kube-apiserver's cost budget. A CRD whose rule does not compile in the
 * subset is refused (schema_validate_crd_rules), never served with the
 * rule ignored.
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
 * Validates obj (a create: schema_validate_update with no old object)
 * against schema, appending every violation to fe with
 * Kubernetes' wording and paths ("spec.queueingStrategy: Unsupported
 * value: \"X\": supported values: \"BestEffortFIFO\", \"StrictFIFO\"",
 * "spec.resourceGroups: Too many: 17: must have at most 16 items",
 * "spec.x: Invalid value: \"string\": spec.x in body must be of type
 * integer: \"string\"", "spec.name: Required value").
 */
void schema_validate(const json_t *obj, const json_t *schema,
		     struct field_errors *fe);

/*
 * schema_validate for a create (old NULL) or an update (old: the stored
 * object in the same version). Then, as the custom resource strategy
 * does, the x-kubernetes-validations rules run unless fe (which may
 * already hold the caller's metadata errors) has a blocking error (type,
 * required, enum, too long, too many), in which case the one error
 * "<nil>: Invalid value: \"null\": some validation rules were not
 * checked..." stands for them. Each rule runs where its value is present
 * and not null, with self bound to it, and on update with oldSelf bound
 * to the correlated old value (fields by name, list-type=map items by
 * their keys); a rule using oldSelf is skipped where there is none. A
 * failing rule gives "<path>: Invalid value: \"<schema type>\": <message>"
 * (the root's path prints "<nil>"), with reason and fieldPath honoured;
 * on update a rule without oldSelf does not fail a value left unchanged
 * (ratcheting). All rules of one object share CEL_RUNTIME_BUDGET.
 */
void schema_validate_update(const json_t *obj, const json_t *old,
			    const json_t *schema, struct field_errors *fe);

/*
 * The CRD-time checks of x-kubernetes-validations, over spec (a CRD's
 * spec, borrowed): each rule's shape (rule, message, messageExpression,
 * reason, fieldPath), then that it compiles to a bool (and its
 * messageExpression to a string), and that oldSelf is not used under a
 * list whose items cannot be correlated. Errors name the rule as
 * kube-apiserver does: "spec.validation.openAPIV3Schema.properties[spec]
 * .x-kubernetes-validations[0].rule: Invalid value: apiextensions
 * .ValidationRule{...}: compilation failed: ERROR: <input>:1:6: ...".
 */
void schema_validate_crd_rules(const json_t *spec, struct field_errors *fe);

#endif
