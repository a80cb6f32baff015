/*
 * doctor_cmd: `kubectl cueue doctor`, the checks of doctor.h over the
 * inspected manager's caches and scheduling state. Exit code 0 when
 * clean (info findings allowed), 1 with warnings, 2 with errors.
 */
#include "cli/cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/doctor.h"
#include "controller/manager.h"

struct gather {
	const struct resource_flavor **rfs;
	size_t nrf, caprf;
	const struct cohort **cos;
	size_t nco, capco;
	const struct cluster_queue **cqs;
	const char **inv;
	size_t ncq, capcq, capinv;
	struct doctor_ns *nss;
	size_t nns, capns;
	const struct local_queue **lqs;
	size_t nlq, caplq;
	const struct workload **wls;
	size_t nwl, capwl;
};

#define PUSH(arr, n, cap, v)                      \
	do {                                      \
		if ((n) == (cap))                 \
			XGROW(arr, cap, (n) + 1); \
		(arr)[(n)++] = (v);               \
	} while (0)

static void visit(void *ud, enum manager_kind kind, const char *name,
		  const void *obj, const char *invalid)
{
	struct gather *g = ud;

	switch (kind) {
	case MK_FLAVOR:
		PUSH(g->rfs, g->nrf, g->caprf, obj);
		break;
	case MK_COHORT:
		PUSH(g->cos, g->nco, g->capco, obj);
		break;
	case MK_CLUSTER_QUEUE: {
		size_t n = g->ncq;

		PUSH(g->cqs, g->ncq, g->capcq, obj);
		PUSH(g->inv, n, g->capinv, invalid);
		break;
	}
	case MK_NAMESPACE: {
		struct doctor_ns ns = { .name = name, .labels = obj };

		PUSH(g->nss, g->nns, g->capns, ns);
		break;
	}
	case MK_LOCAL_QUEUE:
		PUSH(g->lqs, g->nlq, g->caplq, obj);
		break;
	case MK_WORKLOAD:
		PUSH(g->wls, g->nwl, g->capwl, obj);
		break;
	}
}

int cli_doctor(struct cli *c, int argc, char **argv)
{
	struct gather g = { 0 };
	struct doctor_input in;
	struct doctor_report rep = { 0 };
	size_t nerr = 0, nwarn = 0;
	int rc;

	(void)argv;
	if (argc) {
		fprintf(stderr, "kubectl-cueue: doctor takes no arguments\n");
		return CLI_FAIL;
	}
	manager_visit(c->m, visit, &g);
	in = (struct doctor_input){
		.rfs = g.rfs, .nrf = g.nrf, .cohorts = g.cos, .ncohort = g.nco,
		.cqs = g.cqs, .cq_invalid = g.inv, .ncq = g.ncq,
		.nss = g.nss, .nns = g.nns, .lqs = g.lqs, .nlq = g.nlq,
		.wls = g.wls, .nwl = g.nwl, .s = c->s, .now_ms = c->now_ms,
	};
	doctor_run(&in, &rep);
	for (size_t i = 0; i < rep.n; i++) {
		nerr += rep.v[i].sev == DOC_ERROR;
		nwarn += rep.v[i].sev == DOC_WARNING;
	}
	if (c->o.json) {
		json_t *o = json_object(), *a = json_array();

		for (size_t i = 0; i < rep.n; i++)
			json_array_append_new(
				a, json_pack("{s:s, s:s, s:s, s:s, s:s}",
					     "severity",
					     doctor_sev_name(rep.v[i].sev),
					     "check", rep.v[i].check, "object",
					     rep.v[i].object, "message",
					     rep.v[i].message, "fix",
					     rep.v[i].fix));
		json_object_set_new(o, "findings", a);
		json_object_set_new(o, "errors", json_integer((json_int_t)nerr));
		json_object_set_new(o, "warnings",
				    json_integer((json_int_t)nwarn));
		cli_print_json(o);
		json_decref(o);
	} else if (!rep.n) {
		printf("No problems found in %zu ClusterQueue(s), %zu "
		       "LocalQueue(s), %zu ResourceFlavor(s), %zu "
		       "Cohort(s).\n", g.ncq, g.nlq, g.nrf, g.nco);
	} else {
		for (size_t i = 0; i < rep.n; i++) {
			const struct doctor_finding *f = &rep.v[i];

			printf("%-8s %s (%s): %s\n", doctor_sev_name(f->sev),
			       f->object, f->check, f->message);
			printf("         fix: %s\n", f->fix);
		}
		printf("%zu error(s), %zu warning(s)\n", nerr, nwarn);
	}
	rc = nerr ? CLI_NEVER : nwarn ? CLI_WAITS : CLI_OK;
	doctor_report_release(&rep);
	free(g.rfs);
	free(g.cos);
	free(g.cqs);
	free(g.inv);
	free(g.nss);
	free(g.lqs);
	free(g.wls);
	return rc;
}
