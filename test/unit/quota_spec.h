/*
 * quota_spec: the small text notation the scheduling-core suites
 * (check_sched.c, check_preempt.c) build their objects from:
 *   resources  "cpu=2,memory=1Gi" (quantities, milli-units as sched
 *              counts them);
 *   groups     ';' between resource groups, spaces between the flavors
 *              of a group, a flavor "name:res=nominal[/borrowingLimit
 *              [/lendingLimit]],...", '-' for an unset limit; a group's
 *              coveredResources are its first flavor's resources.
 * A malformed spec fails the running Check test.
 */
#ifndef TEST_UNIT_QUOTA_SPEC_H
#define TEST_UNIT_QUOTA_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "model/objects.h"

/* text as a quantity of resource res, in milli-units. */
int64_t spec_qty(const char *res, const char *text);
/* "cpu=1,memory=2Gi" added to out. */
void spec_res(const char *spec, struct reslist *out);
/* spec's resource groups: a new array in *out, its length in *n. */
void spec_groups(const char *spec, struct resource_group **out, size_t *n);

#endif
