/*
 * metrics: a small Prometheus registry (client_golang's model, in C):
 * counters, gauges and histograms with fixed bucket layouts, each a
 * family with label names and children keyed by label values, and their
 * exposition in the text format 0.0.4.
 *
 * The registry owns its families, and each family its children and their
 * label-value copies. A child handle (struct metric *) stays valid until
 * the child is removed (metric_family_remove*, metrics_free); nothing
 * else ever moves or frees it, so removals must be ordered with every use
 * of their handles (in the manager: both on the loop thread; the scrape
 * never keeps a handle past its family's lock). Updating a child through its handle
 * allocates nothing, formats nothing and takes no lock; looking a child
 * up by label values allocates only the first time that child exists.
 *
 * Output is deterministic and shaped as Go's client writes it: families
 * sorted by name, label pairs sorted by label name, children sorted by
 * their label values in that order, "le" last on bucket lines, values in
 * Go's shortest float form (+Inf, NaN). A family without children prints
 * nothing, not even HELP/TYPE; a family without labels has its one child
 * from registration on.
 *
 * THREADS. Lock-free updates, one leaf mutex per family. Values are C11
 * atomics (relaxed order): any thread updates a child through its handle
 * without a lock, and a scrape reads the values without stopping anyone.
 * Each family has one leaf mutex guarding its child table, taken by
 * lookup, creation and removal of children and by the scrape while it
 * renders that family; the registry has one more guarding its lists of
 * families and collectors. No two locks are ever held at once, and none
 * while a collector runs, so the loop thread updating never waits longer
 * than one family's render by the HTTP thread scraping. A histogram's
 * _count is the sum of its buckets as read, so +Inf always equals _count;
 * _sum may lag one concurrent observation.
 *
 * Programmer errors (bad metric or label names, duplicate families, a
 * wrong number of label values, negative counter increments) are BUG()s.
 * No I/O; pure enough for test/unit.
 */
#ifndef CONTROLLER_METRICS_H
#define CONTROLLER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct metrics;        /* the registry */
struct metric_family;  /* one metric name: type, help, label names */
struct metric;         /* one child: a series, or one histogram */

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

/* Label names and values are NULL-terminated arrays of strings. These
 * build them in place: METRIC_LABELS("cluster_queue", "status"). */
#define METRIC_LABELS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define METRIC_NO_LABELS ((const char *const[]){ NULL })
#define METRIC_VALUES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The Prometheus client's DefBuckets: .005 .01 .025 .05 .1 .25 .5 1 2.5
 * 5 10 (seconds). */
extern const double metrics_default_buckets[11];

/* new: an empty registry. free: frees every family and child; NULL ok.
 * No scrape may be running (stop the HTTP server first). */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/*
 * Registers a family and returns it (borrowed; lives as long as m).
 * name and label names must be valid Prometheus names
 * ([a-zA-Z_:][a-zA-Z0-9_:]*, labels without ':' and not starting with
 * "__"), unique in m; help is any text. All three are copied. labels may
 * be METRIC_NO_LABELS, and then the family's single child exists at once
 * (metric_family_get(f, METRIC_NO_LABELS) returns it). Histograms take
 * nbounds finite, strictly increasing upper bounds (copied; +Inf is
 * implied) and may not have a label named "le". Any thread.
 */
struct metric_family *metrics_counter(struct metrics *m, const char *name,
				      const char *help,
				      const char *const *labels);
struct metric_family *metrics_gauge(struct metrics *m, const char *name,
				    const char *help,
				    const char *const *labels);
struct metric_family *metrics_histogram(struct metrics *m, const char *name,
					const char *help,
					const char *const *labels,
					const double *bounds, size_t nbounds);

/* The family registered under name, or NULL. Borrowed. */
struct metric_family *metrics_find(struct metrics *m, const char *name);

/* A family's facts. The strings are borrowed for the family's life. */
const char *metric_family_name(const struct metric_family *f);
enum metric_type metric_family_type(const struct metric_family *f);
size_t metric_family_nlabels(const struct metric_family *f);
const char *metric_family_label(const struct metric_family *f, size_t i);
size_t metric_family_nbounds(const struct metric_family *f);
double metric_family_bound(const struct metric_family *f, size_t i);
/* Children now. */
size_t metric_family_size(struct metric_family *f);

/*
 * The child for these label values (as many as the family has labels,
 * in registration order), created at zero when absent. Returns a handle,
 * borrowed until that child is removed. Values are copied at creation;
 * any byte string is accepted (escaped at exposition). Takes the
 * family's lock; allocates only when creating.
 */
struct metric *metric_family_get(struct metric_family *f,
				 const char *const *values);
/* The child, or NULL when absent; never creates. */
struct metric *metric_family_find(struct metric_family *f,
				  const char *const *values);
/* Removes the child with exactly these values; returns whether it
 * existed. Its handle dies with it. */
bool metric_family_remove(struct metric_family *f, const char *const *values);
/* Removes every child whose label `label` has value `value` (Go's
 * DeletePartialMatch with one label); returns how many. BUG when the
 * family has no such label. */
size_t metric_family_remove_matching(struct metric_family *f,
				     const char *label, const char *value);
/* The same with several labels (at most 8; NULL-terminated, values in
 * the same order): removes every child that has all of them. */
size_t metric_family_remove_partial(struct metric_family *f,
				    const char *const *labels,
				    const char *const *values);
/* Removes every child (a family without labels keeps its one child,
 * reset to zero). */
void metric_family_clear(struct metric_family *f);

/* ---- the update path: lock-free, allocation-free; any thread ---- */

/* Counters and gauges. add: v >= 0 for a counter (BUG otherwise). set:
 * gauges, and counters that mirror an outside monotonic source (the
 * process CPU time). */
void metric_inc(struct metric *c);
void metric_add(struct metric *c, double v);
void metric_set(struct metric *c, double v);
/* Histograms: counts v in the first bucket whose bound is >= v (NaN and
 * values above the last bound only in +Inf) and adds it to the sum. */
void metric_observe(struct metric *c, double v);

/* Reading back, for tests and for the manager's own use. value: counter
 * or gauge. count/sum/bucket: histograms; bucket i is cumulative
 * (observations <= bound i; i == nbounds is +Inf). */
double metric_value(const struct metric *c);
uint64_t metric_hist_count(const struct metric *c);
double metric_hist_sum(const struct metric *c);
uint64_t metric_hist_bucket(const struct metric *c, size_t i);

/* ---- exposition ---- */

/*
 * A collector runs at the start of every scrape, on the scraping thread,
 * before any family is rendered: it refreshes values that are read rather
 * than counted (the process_* gauges). It must be safe to run on that
 * thread concurrently with the loop. Registered before the first scrape.
 */
typedef void metrics_collect_fn(void *ud);
void metrics_add_collector(struct metrics *m, metrics_collect_fn *fn,
			   void *ud);

/*
 * Runs the collectors, then renders every family in the text format
 * 0.0.4 (Content-Type "text/plain; version=0.0.4; charset=utf-8").
 * Returns a new NUL-terminated buffer (caller frees); *len (may be NULL)
 * its length. Any thread, concurrently with updates.
 */
char *metrics_render(struct metrics *m, size_t *len);

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Escaping and number rules of the format, exposed for tests. Each
 * appends to out (cap bytes, always NUL-terminated when cap > 0) and
 * returns the length the full text needs (snprintf-like). */
size_t metrics_escape_label_value(const char *s, char *out, size_t cap);
size_t metrics_escape_help(const char *s, char *out, size_t cap);
/* Go's expfmt float form: "0", "1", "-1", "2.5", "1e+06", "+Inf", "NaN".
 * buf must hold METRICS_FLOAT_BUF bytes. */
#define METRICS_FLOAT_BUF 40
void metrics_format_float(double v, char *buf);

/* True when name is a valid metric name / label name as described at
 * metrics_counter. */
bool metrics_is_valid_name(const char *name);
bool metrics_is_valid_label(const char *name);

/* STYLE P15: children sorted and unique, label counts right, histogram
 * buckets sized. Takes each family's lock in turn. */
bool metrics_check(struct metrics *m);

#endif
