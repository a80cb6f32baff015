/*
 * fault: the devserver's fault injection (cueue's own flags, off by
 * default), for chaos tests of the clients: answers 429 and 500 instead
 * of serving a request, delays answers, cuts watch streams, answers a
 * resumed watch 410 Expired, and makes admission webhook calls time out.
 *
 * Every decision is a draw from its own deterministic stream: the n-th
 * decision of kind k is a hash of (--fault-seed, k, n), hit when it falls
 * below the kind's rate. The same seed and the same sequence of requests
 * (one client at a time) give the same faults; kinds do not disturb each
 * other's streams. Rate 0 never hits (and draws nothing), rate 1 always.
 *
 * Counters of decisions taken and faults injected per kind are kept for
 * GET /debug/faults (fault_json) and the log line at exit (fault_report).
 *
 * Threads: any. The draw counters and the tallies are atomics; no lock.
 */
#ifndef DEVSERVER_FAULT_H
#define DEVSERVER_FAULT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/errors.h"

enum fault_kind {
	FAULT_429,             /* --fault-429: 429 TooManyRequests */
	FAULT_500,             /* --fault-500: 500 InternalError */
	FAULT_WATCH_DROP,      /* --fault-watch-drop: per watch event */
	FAULT_GONE,            /* --fault-gone: per resumed watch */
	FAULT_SLOW,            /* --fault-slow: per answer, delay slow_ms */
	FAULT_WEBHOOK_TIMEOUT, /* --fault-webhook-timeout: per call */
	FAULT_KINDS
};

struct fault_opts {
	uint64_t seed;             /* --fault-seed (the flag's default: 1) */
	double rate[FAULT_KINDS];  /* each in [0, 1]; 0: off */
	int64_t slow_ms;           /* --fault-slow's delay; >= 0 */
};

struct faults;

/* New; o may be NULL (every fault off). */
struct faults *fault_new(const struct fault_opts *o);
void fault_free(struct faults *f);

/* Draws the next decision of kind k: true when the fault is to be
 * injected now (and counted). f may be NULL: false. Any thread. */
bool fault_hit(struct faults *f, enum fault_kind k);
/* --fault-slow's delay in ms. */
int64_t fault_slow_ms(const struct faults *f);
/* True when some rate is above 0. */
bool fault_enabled(const struct faults *f);

/* The flag name of k without "--fault-" ("429", "watch-drop", ...);
 * static. */
const char *fault_name(enum fault_kind k);

/* {"seed":N,"faults":{"<name>":{"rate":R,"checked":N,"injected":N},...}}
 * ("slow" adds "delayMs"); new reference. f may be NULL (all zero). */
json_t *fault_json(const struct faults *f);
/* One line per enabled kind to out: "fault <name>: <injected> injected
 * of <checked> (rate R)". */
void fault_report(const struct faults *f, FILE *out);

/* A rate: a decimal number in [0, 1]. Returns 0, or -1 + err. */
int fault_parse_rate(const char *s, double *rate, struct err *err)
	MUST_CHECK;

#endif
