/*
 * log: logfmt lines on stderr (see log.h). Owns the process-wide level
 * and stream; never allocates, so it can report any failure.
 */
#include "controller/log.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

static enum log_level level = LOG_INFO;
static FILE *stream;

int log_set_level_name(const char *name)
{
	static const struct {
		const char *name;
		enum log_level lv;
	} names[] = {
		{ "debug", LOG_DEBUG }, { "info", LOG_INFO },
		{ "warn", LOG_WARN },   { "warning", LOG_WARN },
		{ "error", LOG_ERROR }, { "off", LOG_OFF },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(name, names[i].name)) {
			level = names[i].lv;
			return 0;
		}
	}
	return -1;
}

void log_set_level(enum log_level lv)
{
	level = lv;
}

bool log_enabled(enum log_level lv)
{
	return lv >= level && lv < LOG_OFF;
}

void log_set_stream(FILE *f)
{
	stream = f;
}

/* Appends s to buf[*n..cap) as a logfmt value: bare when it has no
 * space, quote, '=' or control byte, else quoted with escapes. */
static void put_value(char *buf, size_t *n, size_t cap, const char *s)
{
	bool quote = !*s;

	for (const char *p = s; *p && !quote; p++)
		quote = *p == ' ' || *p == '"' || *p == '=' ||
			(unsigned char)*p < 0x20;
	if (quote && *n < cap)
		buf[(*n)++] = '"';
	for (const char *p = s; *p && *n + 2 < cap; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"' || c == '\\') {
			buf[(*n)++] = '\\';
			buf[(*n)++] = (char)c;
		} else if (c == '\n') {
			buf[(*n)++] = '\\';
			buf[(*n)++] = 'n';
		} else if (c < 0x20) {
			buf[(*n)++] = ' ';
		} else {
			buf[(*n)++] = (char)c;
		}
	}
	if (quote && *n < cap)
		buf[(*n)++] = '"';
}

static void put_raw(char *buf, size_t *n, size_t cap, const char *s)
{
	size_t len = strlen(s);

	if (len > cap - *n)
		len = cap - *n;
	memcpy(buf + *n, s, len);
	*n += len;
}

void log_msg(enum log_level lv, const char *component, const char *ns,
	     const char *name, const char *fmt, ...)
{
	static const char *const lvname[] = { "debug", "info", "warn",
					      "error", "off" };
	char line[4096], msg[3072], ts[64], obj[512];
	struct timespec now;
	struct tm tm;
	size_t n = 0, cap = sizeof(line) - 2;
	va_list ap;

	if (!log_enabled(lv))
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)(now.tv_nsec / 1000000));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	put_raw(line, &n, cap, "time=");
	put_raw(line, &n, cap, ts);
	put_raw(line, &n, cap, " level=");
	put_raw(line, &n, cap, lvname[lv]);
	if (component) {
		put_raw(line, &n, cap, " component=");
		put_value(line, &n, cap, component);
	}
	if (name) {
		if (ns && *ns)
			snprintf(obj, sizeof(obj), "%s/%s", ns, name);
		else
			snprintf(obj, sizeof(obj), "%s", name);
		put_raw(line, &n, cap, " object=");
		put_value(line, &n, cap, obj);
	}
	put_raw(line, &n, cap, " msg=");
	put_value(line, &n, cap, msg);
	line[n++] = '\n';
	fwrite(line, 1, n, stream ? stream : stderr);
	fflush(stream ? stream : stderr);
}
