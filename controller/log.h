/*
 * log: the manager's logger, one logfmt line per event on stderr:
 *
 *   time=2026-11-30T09:00:00.123Z level=info component=scheduler
 *       object=team-a/job-1 msg="admitted in ClusterQueue cq-a"
 *
 * (one line; wrapped here). Quiet at steady state: callers log what
 * happened to an object once, never per loop turn or per retry. The level
 * (--log-level) is process-wide state set once by main.c before the loop
 * starts; library modules never log (STYLE P6), only the manager's
 * reconcilers and main.c do. Loop thread only.
 */
#ifndef CONTROLLER_LOG_H
#define CONTROLLER_LOG_H

#include <stdbool.h>
#include <stdio.h>

#include "base/alloc.h"

enum log_level {
	LOG_DEBUG = 0,
	LOG_INFO,
	LOG_WARN,
	LOG_ERROR,
	LOG_OFF, /* nothing at all (tests) */
};

/* "debug", "info", "warn" (or "warning"), "error", "off" -> level;
 * returns 0, or -1 for an unknown name (level unchanged). */
int log_set_level_name(const char *name) MUST_CHECK;
void log_set_level(enum log_level lv);
bool log_enabled(enum log_level lv);
/* Where lines go; NULL: stderr. Borrowed until the next call. */
void log_set_stream(FILE *f);

/*
 * Writes one line at level lv when enabled. component names the part
 * ("scheduler", "clusterqueue", "informer"); ns and name (either may be
 * NULL) name the object as object=ns/name; fmt is the message, quoted
 * and escaped as logfmt wants.
 */
void log_msg(enum log_level lv, const char *component, const char *ns,
	     const char *name, const char *fmt, ...) PRINTF_LIKE(5, 6);

#endif
