/*
 * procstat: /proc/self/stat, /proc/stat's btime, /proc/self/fd and the
 * resource limits, turned into the Go client's process_* metrics.
 */
#include "controller/procstat.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "controller/metrics.h"

struct procstat {
	double btime;             /* boot time, epoch s; < 0 when unknown */
	long ticks;               /* _SC_CLK_TCK */
	long page;                /* page size in bytes */
	struct metric *cpu;       /* borrowed handles of unlabelled families */
	struct metric *rss;
	struct metric *vsize;
	struct metric *vmax;
	struct metric *fds;
	struct metric *max_fds;
	struct metric *start;
};

int procstat_parse_stat(const char *text, long ticks, long page,
			double btime, struct procstat_sample *out,
			struct err *err)
{
	const char *p = strrchr(text, ')');
	unsigned long long v[24];
	int field = 3;
	char *end;

	if (!p || ticks <= 0 || page <= 0)
		return err_set(err,
			       "/proc/self/stat: no ')' after the command");
	p++;
	/* Fields 3 (state) .. 24 (rss); we keep 14, 15, 22, 23, 24. */
	while (field <= 24) {
		while (*p == ' ')
			p++;
		if (!*p)
			return err_set(err, "/proc/self/stat: only %d fields",
				       field - 1);
		if (field == 3) {
			while (*p && *p != ' ')
				p++;
		} else {
			errno = 0;
			v[field - 1] = strtoull(p, &end, 10);
			if (end == p || errno)
				return err_set(err, "/proc/self/stat: field %d "
					       "is not a number", field);
			/* rss (24) may be negative in theory; clamp. */
			if (*p == '-')
				v[field - 1] = 0;
			p = end;
		}
		field++;
	}
	out->cpu_seconds = (double)(v[13] + v[14]) / (double)ticks;
	out->start_time_s = (double)v[21] / (double)ticks + btime;
	out->vsize_bytes = (double)v[22];
	out->rss_bytes = (double)v[23] * (double)page;
	return 0;
}

int procstat_parse_btime(const char *text, double *btime, struct err *err)
{
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, "btime ", 6)) {
			char *end;
			unsigned long long b = strtoull(p + 6, &end, 10);

			if (end == p + 6)
				break;
			*btime = (double)b;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return err_set(err, "/proc/stat: no btime line");
}

/* Reads a small /proc file into buf (NUL-terminated). 0 or -1 + err. */
static int slurp(const char *path, char *buf, size_t cap, struct err *err)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return err_set(err, "%s: %s", path, strerror(errno));
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

/* /proc/stat holds one line per CPU before btime; read until found. */
static int read_btime(double *btime, struct err *err)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[512];

	if (!f)
		return err_set(err, "/proc/stat: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "btime ", 6)) {
			fclose(f);
			return procstat_parse_btime(line, btime, err);
		}
	}
	fclose(f);
	return err_set(err, "/proc/stat: no btime line");
}

static int count_fds(double *out, struct err *err)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	double n = 0;

	if (!d)
		return err_set(err, "/proc/self/fd: %s", strerror(errno));
	/* The directory's own descriptor is counted, as Go's procfs
	 * does. */
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	*out = n;
	return 0;
}

static double limit_value(int resource)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) != 0)
		return -1;
	/* Go converts the uint64 soft limit; RLIM_INFINITY is 2^64 - 1. */
	return (double)(uint64_t)rl.rlim_cur;
}

static int read_sample(long ticks, long page, double btime,
		       struct procstat_sample *out, struct err *err)
{
	char buf[2048];

	if (slurp("/proc/self/stat", buf, sizeof(buf), err) < 0 ||
	    procstat_parse_stat(buf, ticks, page, btime, out, err) < 0 ||
	    count_fds(&out->open_fds, err) < 0)
		return -1;
	out->max_fds = limit_value(RLIMIT_NOFILE);
	out->vmax_bytes = limit_value(RLIMIT_AS);
	return 0;
}

int procstat_read(struct procstat_sample *out, struct err *err)
{
	double btime;

	if (read_btime(&btime, err) < 0)
		return -1;
	return read_sample(sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE), btime,
			   out, err);
}

static void collect(void *ud)
{
	struct procstat *p = ud;
	struct procstat_sample s;
	struct err err;

	if (p->btime < 0 ||
	    read_sample(p->ticks, p->page, p->btime, &s, &err) < 0)
		return;
	metric_set(p->cpu, s.cpu_seconds);
	metric_set(p->rss, s.rss_bytes);
	metric_set(p->vsize, s.vsize_bytes);
	metric_set(p->vmax, s.vmax_bytes);
	metric_set(p->fds, s.open_fds);
	metric_set(p->max_fds, s.max_fds);
	metric_set(p->start, s.start_time_s);
}

static struct metric *one(struct metric_family *f)
{
	return metric_family_get(f, METRIC_NO_LABELS);
}

struct procstat *procstat_register(struct metrics *m)
{
	struct procstat *p = xcalloc(1, sizeof(*p));
	struct err err;

	p->ticks = sysconf(_SC_CLK_TCK);
	p->page = sysconf(_SC_PAGESIZE);
	if (p->ticks <= 0 || p->page <= 0 || read_btime(&p->btime, &err) < 0)
		p->btime = -1;
	p->cpu = one(metrics_counter(m, "process_cpu_seconds_total",
		"Total user and system CPU time spent in seconds.",
		METRIC_NO_LABELS));
	p->fds = one(metrics_gauge(m, "process_open_fds",
		"Number of open file descriptors.", METRIC_NO_LABELS));
	p->max_fds = one(metrics_gauge(m, "process_max_fds",
		"Maximum number of open file descriptors.",
		METRIC_NO_LABELS));
	p->vsize = one(metrics_gauge(m, "process_virtual_memory_bytes",
		"Virtual memory size in bytes.", METRIC_NO_LABELS));
	p->vmax = one(metrics_gauge(m, "process_virtual_memory_max_bytes",
		"Maximum amount of virtual memory available in bytes.",
		METRIC_NO_LABELS));
	p->rss = one(metrics_gauge(m, "process_resident_memory_bytes",
		"Resident memory size in bytes.", METRIC_NO_LABELS));
	p->start = one(metrics_gauge(m, "process_start_time_seconds",
		"Start time of the process since unix epoch in seconds.",
		METRIC_NO_LABELS));
	metrics_add_collector(m, collect, p);
	return p;
}

void procstat_free(struct procstat *p)
{
	free(p);
}
