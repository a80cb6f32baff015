/*
 * timestamp: RFC 3339 <-> epoch milliseconds (see timestamp.h). Uses the
 * days-from-civil algorithm rather than timegm() so results never depend
 * on the process' time zone or locale.
 */
#include "model/timestamp.h"

#include <ctype.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(int y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30,
				      31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

static int digits(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)**p))
			return -1;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	*out = v;
	return 0;
}

int timestamp_parse(const char *s, int64_t *ms)
{
	const char *p = s;
	int y, mo, d, h, mi, se, frac_ms = 0;
	int64_t t;

	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) ||
	    *p++ != '-' || digits(&p, 2, &d) || (*p != 'T' && *p != 't'))
		return -1;
	p++;
	if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) ||
	    *p++ != ':' || digits(&p, 2, &se))
		return -1;
	/* Go's time.Parse: no leap second, no "February 31". */
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
	    mi > 59 || se > 59)
		return -1;
	if (*p == '.') {
		int scale = 100, n = 0;

		p++;
		while (isdigit((unsigned char)*p)) {
			frac_ms += (*p - '0') * scale;
			scale /= 10;
			p++;
			n++;
		}
		if (!n)
			return -1;
	}
	t = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se) * 1000 +
	    frac_ms;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '+' ? 1 : -1, oh, om;

		p++;
		if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
			return -1;
		t -= sign * (int64_t)(oh * 3600 + om * 60) * 1000;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	*ms = t;
	return 0;
}

static void split(int64_t ms, int64_t *y, int *mo, int *d, int *h, int *mi,
		  int *se, int *msr)
{
	/* Floor division written without negating, which would overflow
	 * for INT64_MIN. */
	int64_t secs = ms / 1000 - (ms % 1000 < 0);
	int64_t days = secs / 86400 - (secs % 86400 < 0);
	int64_t rem = secs - days * 86400;

	*msr = (int)(ms % 1000 + (ms % 1000 < 0 ? 1000 : 0));
	civil_from_days(days, y, mo, d);
	*h = (int)(rem / 3600);
	*mi = (int)(rem % 3600 / 60);
	*se = (int)(rem % 60);
}

char *timestamp_format(int64_t ms, char *buf, size_t n)
{
	int64_t y;
	int mo, d, h, mi, se, msr;

	split(ms, &y, &mo, &d, &h, &mi, &se, &msr);
	snprintf(buf, n, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h,
		 mi, se);
	return buf;
}

char *timestamp_format_micro(int64_t ms, char *buf, size_t n)
{
	int64_t y;
	int mo, d, h, mi, se, msr;

	split(ms, &y, &mo, &d, &h, &mi, &se, &msr);
	snprintf(buf, n, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d.%03d000Z", y,
		 mo, d, h, mi, se, msr);
	return buf;
}
