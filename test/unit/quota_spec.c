/* quota_spec: see quota_spec.h. */
#include "test/unit/quota_spec.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/errors.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "test/support/support.h"

int64_t spec_qty(const char *res, const char *text)
{
	struct quantity q;
	struct err err = { { 0 } };

	T_ASSERT_MSG(quantity_parse(text, &q, &err) == 0,
		     "bad quantity %s: %s", text, err.msg);
	return resource_units_milli(res, q.milli);
}

/* "cpu=1,memory=2Gi" -> reslist (added to out). */
void spec_res(const char *spec, struct reslist *out)
{
	char *buf = xstrdup(spec), *save = NULL, *tok;

	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		T_ASSERT_PTR(eq, !=, NULL);
		*eq = '\0';
		reslist_set(out, tok, spec_qty(tok, eq + 1));
	}
	free(buf);
}

/*
 * Quota groups: groups separated by ';', flavors of a group by spaces,
 * a flavor is "name:res=nominal[/borrowing[/lending]],res=...", '-' for
 * an unset limit. The group's coveredResources are the first flavor's
 * resources in order. Example:
 *   "f1:cpu=4,memory=4Gi f2:cpu=8,memory=8Gi; g1:nvidia.com/gpu=2"
 */
static void parse_quota(const char *res, char *text, struct resource_quota *q)
{
	char *parts[3] = { NULL, NULL, NULL };
	char *save = NULL, *tok;
	int n = 0;

	memset(q, 0, sizeof(*q));
	q->name = xstrdup(res);
	for (tok = strtok_r(text, "/", &save); tok && n < 3;
	     tok = strtok_r(NULL, "/", &save))
		parts[n++] = tok;
	T_ASSERT_INT(n, >=, 1);
	q->nominal = spec_qty(res, parts[0]);
	if (n > 1 && strcmp(parts[1], "-") != 0) {
		q->has_borrowing = true;
		q->borrowing = spec_qty(res, parts[1]);
	}
	if (n > 2 && strcmp(parts[2], "-") != 0) {
		q->has_lending = true;
		q->lending = spec_qty(res, parts[2]);
	}
}

static void parse_flavor_quotas(struct resource_group *g, char *text)
{
	char *colon = strchr(text, ':'), *save = NULL, *tok;
	struct flavor_quotas *fq;
	size_t cap = 0;

	T_ASSERT_PTR(colon, !=, NULL);
	*colon = '\0';
	g->flavors = xrealloc(g->flavors,
			      (g->nflavors + 1) * sizeof(*g->flavors));
	fq = &g->flavors[g->nflavors++];
	memset(fq, 0, sizeof(*fq));
	fq->name = xstrdup(text);
	for (tok = strtok_r(colon + 1, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		T_ASSERT_PTR(eq, !=, NULL);
		*eq = '\0';
		XGROW(fq->res, cap, fq->nres + 1);
		parse_quota(tok, eq + 1, &fq->res[fq->nres++]);
	}
	if (g->nflavors == 1) {
		g->ncovered = fq->nres;
		g->covered = xcalloc(fq->nres, sizeof(*g->covered));
		for (size_t i = 0; i < fq->nres; i++)
			g->covered[i] = xstrdup(fq->res[i].name);
	}
	T_ASSERT_UINT(fq->nres, ==, g->ncovered);
}

void spec_groups(const char *spec, struct resource_group **out,
			 size_t *n)
{
	char *buf, *gsave = NULL, *gtok;

	*out = NULL;
	*n = 0;
	if (!spec || !*spec)
		return;
	buf = xstrdup(spec);
	for (gtok = strtok_r(buf, ";", &gsave); gtok;
	     gtok = strtok_r(NULL, ";", &gsave)) {
		struct resource_group *g;
		char *fsave = NULL, *ftok;

		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		g = &(*out)[(*n)++];
		memset(g, 0, sizeof(*g));
		for (ftok = strtok_r(gtok, " ", &fsave); ftok;
		     ftok = strtok_r(NULL, " ", &fsave))
			parse_flavor_quotas(g, ftok);
		T_ASSERT_UINT(g->nflavors, >=, 1);
	}
	free(buf);
}
