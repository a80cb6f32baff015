/*
 * doctor: the checks of `kubectl cueue doctor`, over decoded objects
 * (model/objects.h) and, for the checks that need the scheduler's
 * arithmetic, the scheduling state: silent misconfigurations of a
 * queueing setup, each found with a severity, the object, what is wrong
 * and the fix. Pure: no I/O, no clock (now is passed in), so each check
 * is unit tested with plain structs (test/unit/check_doctor.c).
 *
 * The checks (id: severity):
 *  missing-flavor: error          a ClusterQueue or Cohort names a
 *                                 ResourceFlavor that does not exist
 *  missing-clusterqueue: error    a LocalQueue names a missing
 *                                 ClusterQueue
 *  invalid-clusterqueue: error    a ClusterQueue failed validation
 *  inactive-clusterqueue: error   a ClusterQueue is inactive for another
 *                                 reason than a stopPolicy
 *  cohort-cycle: error            Cohort parents form a cycle
 *  never-fits: error              pending workloads whose request is
 *                                 above anything their queue can reach
 *  selector-matches-nothing: warning  a ClusterQueue whose
 *                                 namespaceSelector selects no namespace
 *  untolerated-taint: warning     a flavor taint that none of the
 *                                 pending workloads of the queues using
 *                                 the flavor tolerates
 *  borrow-within-cohort-unusable: warning  borrowWithinCohort set where
 *                                 the queue can never borrow
 *  nothing-lendable: warning      lendingLimits of 0 on every quota of a
 *                                 queue in a cohort
 *  preemption-without-cohort: warning  reclaimWithinCohort or
 *                                 borrowWithinCohort without a cohort
 *  stopped-clusterqueue: info     a stopPolicy holds the queue
 *  unused-localqueue: info        a LocalQueue no workload uses
 */
#ifndef CLI_DOCTOR_H
#define CLI_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/objects.h"
#include "model/smap.h"

struct sched;

enum doctor_sev {
	DOC_INFO = 0,
	DOC_WARNING,
	DOC_ERROR,
};

struct doctor_ns {
	const char *name;
	const struct smap *labels;
};

/* Everything borrowed. cq_invalid[i]: why cqs[i] failed validation, or
 * NULL. s may be NULL: the never-fits and inactive checks are skipped. */
struct doctor_input {
	const struct resource_flavor *const *rfs;
	size_t nrf;
	const struct cohort *const *cohorts;
	size_t ncohort;
	const struct cluster_queue *const *cqs;
	const char *const *cq_invalid;
	size_t ncq;
	const struct doctor_ns *nss;
	size_t nns;
	const struct local_queue *const *lqs;
	size_t nlq;
	const struct workload *const *wls;
	size_t nwl;
	struct sched *s;
	int64_t now_ms;
};

struct doctor_finding {
	enum doctor_sev sev;
	const char *check;  /* static id */
	char *object;       /* owned: "ClusterQueue/x", "LocalQueue/ns/q" */
	char *message;      /* owned */
	char *fix;          /* owned */
};

struct doctor_report {
	struct doctor_finding *v; /* owned; errors first, then warnings,
				     then info; by object within each */
	size_t n, cap;
};

void doctor_run(const struct doctor_input *in, struct doctor_report *out);
void doctor_report_release(struct doctor_report *r);
/* "error", "warning", "info". */
const char *doctor_sev_name(enum doctor_sev s);
/* The findings of check id (tests). */
size_t doctor_count(const struct doctor_report *r, const char *check);

#endif
