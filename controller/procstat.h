/*
 * procstat: the process_* metrics the Prometheus Go client exports on
 * Linux, read from /proc at each scrape: process_cpu_seconds_total,
 * process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_virtual_memory_max_bytes, process_open_fds, process_max_fds and
 * process_start_time_seconds, with the Go client's names, help texts and
 * types, so dashboards built on them keep working.
 *
 * The parsers are pure (unit-tested on fixed text); procstat_read does
 * the I/O. procstat_register hooks a collector into a registry that runs
 * on the scraping thread; it shares nothing mutable with the loop.
 */
#ifndef CONTROLLER_PROCSTAT_H
#define CONTROLLER_PROCSTAT_H

#include <stdint.h>

#include "base/alloc.h"
#include "model/errors.h"

struct metrics;

struct procstat_sample {
	double cpu_seconds;    /* utime + stime, seconds */
	double rss_bytes;      /* resident set */
	double vsize_bytes;    /* virtual memory size */
	double vmax_bytes;     /* RLIMIT_AS soft limit (2^64 when none) */
	double open_fds;       /* entries of /proc/self/fd */
	double max_fds;        /* RLIMIT_NOFILE soft limit */
	double start_time_s;   /* since the Unix epoch */
};

/*
 * Parses the text of /proc/<pid>/stat (the command may hold spaces and
 * parentheses: fields are counted after the last ')'). ticks is
 * sysconf(_SC_CLK_TCK), page the page size in bytes, btime the boot time
 * ("btime" of /proc/stat, epoch seconds). Fills cpu_seconds, rss_bytes,
 * vsize_bytes and start_time_s. Returns 0, or -1 + err on malformed
 * text.
 */
int procstat_parse_stat(const char *text, long ticks, long page,
			double btime, struct procstat_sample *out,
			struct err *err) MUST_CHECK;
/* The "btime N" line of /proc/stat's text. 0, or -1 + err. */
int procstat_parse_btime(const char *text, double *btime, struct err *err)
	MUST_CHECK;

/* Reads the whole sample for this process. 0, or -1 + err (no /proc). */
int procstat_read(struct procstat_sample *out, struct err *err) MUST_CHECK;

/*
 * Registers the process_* families in m and a collector that refreshes
 * them at every scrape (values whose read fails keep their last value).
 * Returns the collector's state (new; free with procstat_free after m
 * has stopped being scraped; m must outlive it).
 */
struct procstat *procstat_register(struct metrics *m);
void procstat_free(struct procstat *p);

#endif
