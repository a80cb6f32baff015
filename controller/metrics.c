/*
 * metrics: the registry, its children and the text exposition (see
 * metrics.h for the contract and the THREADS rule).
 *
 * DESIGN. A family keeps its children in an array of pointers sorted by
 * label values in label-name order, which is the order the exposition
 * wants; lookups are a binary search (a handful of strcmp), creation and
 * removal a memmove (both rare: a ClusterQueue appears or goes). Each
 * child carries its label pairs pre-rendered and escaped ("a=\"x\",b=\"y\""),
 * so a scrape is mostly memcpy plus number formatting. Values are doubles
 * stored as their bit patterns in _Atomic uint64_t, updated with relaxed
 * atomics (a CAS loop for additions): a scrape needs no ordering between
 * series, only untorn values.
 */
#include "controller/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "model/goparse.h"

const double metrics_default_buckets[11] = {
	.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10,
};

struct metric {
	const struct metric_family *f; /* borrowed; its bounds */
	char **values;             /* owned; f->nlabels copies */
	char *pairs;               /* owned; escaped pairs in name order */
	size_t npairs;             /* strlen(pairs) */
	_Atomic uint64_t bits;     /* counter/gauge: the double's bits */
	_Atomic uint64_t sum_bits; /* histogram: the sum's bits */
	_Atomic uint64_t *buckets; /* histogram: owned; nbounds + 1
				      non-cumulative counts; NULL otherwise */
};

struct metric_family {
	char *name;               /* owned; valid metric name */
	char *help;               /* owned */
	enum metric_type type;
	char **labels;            /* owned; nlabels names */
	size_t nlabels;
	size_t *order;            /* owned; label indices sorted by name */
	double *bounds;           /* owned; histograms; strictly increasing */
	size_t nbounds;
	pthread_mutex_t lock;     /* leaf: children, n, cap */
	struct metric **children; /* owned; sorted by cmp_values, unique */
	size_t n;
	size_t cap;
};

struct collector {
	metrics_collect_fn *fn;
	void *ud;
};

struct metrics {
	pthread_mutex_t lock;         /* leaf: fams, nfams, colls, ncolls */
	struct metric_family **fams;  /* owned; sorted by name, unique */
	size_t nfams;
	size_t capfams;
	struct collector *colls;      /* owned */
	size_t ncolls;
	size_t capcolls;
};

/* ---- doubles in atomics ---- */

static uint64_t d2u(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double u2d(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

static void atomic_add_double(_Atomic uint64_t *a, double v)
{
	uint64_t old = atomic_load_explicit(a, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(
		a, &old, d2u(u2d(old) + v), memory_order_relaxed,
		memory_order_relaxed))
		;
}

/* ---- names, escaping, numbers ---- */

static bool is_alpha_(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

bool metrics_is_valid_name(const char *name)
{
	if (!name || !(is_alpha_(*name) || *name == ':'))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!is_alpha_(*p) && !is_digit(*p) && *p != ':')
			return false;
	return true;
}

bool metrics_is_valid_label(const char *name)
{
	if (!name || !is_alpha_(*name) || !strncmp(name, "__", 2))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!is_alpha_(*p) && !is_digit(*p))
			return false;
	return true;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the bytes
 * there are not one (overlong, surrogate, truncated, > U+10FFFF). */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 ||
		    (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/* Appends s escaped: backslash and newline always, the double quote in
 * label values; invalid UTF-8 becomes U+FFFD (the format is UTF-8 and
 * Prometheus refuses anything else). */
static void escape_into(struct sbuf *b, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_len(p);

		if (*p == '\\')
			sbuf_add(b, "\\\\", 2);
		else if (*p == '\n')
			sbuf_add(b, "\\n", 2);
		else if (*p == '"' && quote)
			sbuf_add(b, "\\\"", 2);
		else if (n == 0)
			sbuf_add(b, "\xef\xbf\xbd", 3);
		else
			sbuf_add(b, (const char *)p, n);
		p += n ? n : 1;
	}
}

static size_t escape_out(const char *s, bool quote, char *out, size_t cap)
{
	struct sbuf b = SBUF_INIT;
	size_t len;

	escape_into(&b, s, quote);
	len = b.len;
	if (cap) {
		size_t k = len < cap - 1 ? len : cap - 1;

		memcpy(out, sbuf_cstr(&b), k);
		out[k] = '\0';
	}
	sbuf_release(&b);
	return len;
}

size_t metrics_escape_label_value(const char *s, char *out, size_t cap)
{
	return escape_out(s, true, out, cap);
}

size_t metrics_escape_help(const char *s, char *out, size_t cap)
{
	return escape_out(s, false, out, cap);
}

void metrics_format_float(double v, char *buf)
{
	/* Integers below 1e6 print as Go prints them, without the costly
	 * shortest-round-trip search; everything else goes through it. */
	if (v == 0) {
		strcpy(buf, "0");
	} else if (v < 1e6 && v > -1e6 && v == (double)(int64_t)v) {
		int64_t i = (int64_t)v;
		char tmp[24];
		size_t n = 0, o = 0;
		uint64_t u = i < 0 ? (uint64_t)-i : (uint64_t)i;

		do {
			tmp[n++] = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (i < 0)
			buf[o++] = '-';
		while (n)
			buf[o++] = tmp[--n];
		buf[o] = '\0';
	} else {
		goparse_format_float(v, buf, METRICS_FLOAT_BUF);
	}
}

static void add_float(struct sbuf *b, double v)
{
	char buf[METRICS_FLOAT_BUF];

	metrics_format_float(v, buf);
	sbuf_adds(b, buf);
}

/* ---- registry ---- */

struct metrics *metrics_new(void)
{
	struct metrics *m = xcalloc(1, sizeof(*m));

	pthread_mutex_init(&m->lock, NULL);
	return m;
}

static void child_free(struct metric *c, size_t nlabels)
{
	if (!c)
		return;
	for (size_t i = 0; i < nlabels; i++)
		free(c->values[i]);
	free(c->values);
	free(c->pairs);
	free(c->buckets);
	free(c);
}

static void family_free(struct metric_family *f)
{
	for (size_t i = 0; i < f->n; i++)
		child_free(f->children[i], f->nlabels);
	free(f->children);
	for (size_t i = 0; i < f->nlabels; i++)
		free(f->labels[i]);
	free(f->labels);
	free(f->order);
	free(f->bounds);
	free(f->name);
	free(f->help);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nfams; i++)
		family_free(m->fams[i]);
	free(m->fams);
	free(m->colls);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* Compares values (a lookup key, registration order) with child c in
 * the family's label-name order. */
static int cmp_key(const struct metric_family *f, const char *const *values,
		   const struct metric *c)
{
	for (size_t k = 0; k < f->nlabels; k++) {
		size_t i = f->order[k];
		int r = strcmp(values[i], c->values[i]);

		if (r)
			return r;
	}
	return 0;
}

/* Index of the child equal to values, or (found false) where it goes.
 * Caller holds f->lock. */
static size_t search(const struct metric_family *f,
		     const char *const *values, bool *found)
{
	size_t lo = 0, hi = f->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = cmp_key(f, values, f->children[mid]);

		if (r == 0) {
			*found = true;
			return mid;
		}
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*found = false;
	return lo;
}

static void check_values(const struct metric_family *f,
			 const char *const *values)
{
	for (size_t i = 0; i < f->nlabels; i++)
		if (!values[i])
			BUG("%s: %zu label values given, %zu expected",
			    f->name, i, f->nlabels);
	if (values[f->nlabels])
		BUG("%s: more than %zu label values given", f->name,
		    f->nlabels);
}

static struct metric *child_new(const struct metric_family *f,
				const char *const *values)
{
	struct metric *c = xcalloc(1, sizeof(*c));
	struct sbuf b = SBUF_INIT;

	c->f = f;
	c->values = xcalloc(f->nlabels ? f->nlabels : 1, sizeof(char *));
	for (size_t i = 0; i < f->nlabels; i++)
		c->values[i] = xstrdup(values[i]);
	for (size_t k = 0; k < f->nlabels; k++) {
		size_t i = f->order[k];

		if (k)
			sbuf_addch(&b, ',');
		sbuf_adds(&b, f->labels[i]);
		sbuf_add(&b, "=\"", 2);
		escape_into(&b, values[i], true);
		sbuf_addch(&b, '"');
	}
	c->pairs = sbuf_detach(&b, &c->npairs);
	atomic_init(&c->bits, d2u(0));
	atomic_init(&c->sum_bits, d2u(0));
	if (f->type == METRIC_HISTOGRAM) {
		c->buckets = xcalloc(f->nbounds + 1, sizeof(*c->buckets));
		for (size_t i = 0; i <= f->nbounds; i++)
			atomic_init(&c->buckets[i], 0);
	}
	return c;
}

static void child_reset(struct metric *c)
{
	atomic_store_explicit(&c->bits, d2u(0), memory_order_relaxed);
	atomic_store_explicit(&c->sum_bits, d2u(0), memory_order_relaxed);
	if (c->buckets)
		for (size_t i = 0; i <= c->f->nbounds; i++)
			atomic_store_explicit(&c->buckets[i], 0,
					      memory_order_relaxed);
}

/* Insertion-sorts label indices by name (a family has a handful). */
static void sort_order(struct metric_family *f)
{
	for (size_t i = 0; i < f->nlabels; i++)
		f->order[i] = i;
	for (size_t i = 1; i < f->nlabels; i++)
		for (size_t j = i; j > 0 &&
		     strcmp(f->labels[f->order[j - 1]],
			    f->labels[f->order[j]]) > 0; j--) {
			size_t t = f->order[j];

			f->order[j] = f->order[j - 1];
			f->order[j - 1] = t;
		}
}

static struct metric_family *reg(struct metrics *m, enum metric_type type,
				 const char *name, const char *help,
				 const char *const *labels,
				 const double *bounds, size_t nbounds)
{
	struct metric_family *f;
	size_t n = 0, lo = 0, hi;

	if (!metrics_is_valid_name(name))
		BUG("invalid metric name '%s'", name ? name : "(null)");
	while (labels[n]) {
		if (!metrics_is_valid_label(labels[n]))
			BUG("%s: invalid label name '%s'", name, labels[n]);
		if (type == METRIC_HISTOGRAM && !strcmp(labels[n], "le"))
			BUG("%s: a histogram cannot have a label 'le'", name);
		for (size_t j = 0; j < n; j++)
			if (!strcmp(labels[j], labels[n]))
				BUG("%s: duplicate label '%s'", name,
				    labels[n]);
		n++;
	}
	for (size_t i = 0; i < nbounds; i++)
		if (!isfinite(bounds[i]) || (i && !(bounds[i] > bounds[i - 1])))
			BUG("%s: bucket bounds must be finite and increasing",
			    name);
	if (type == METRIC_HISTOGRAM && nbounds == 0)
		BUG("%s: a histogram needs at least one bucket", name);

	f = xcalloc(1, sizeof(*f));
	f->name = xstrdup(name);
	f->help = xstrdup(help ? help : "");
	f->type = type;
	f->nlabels = n;
	f->labels = xcalloc(n ? n : 1, sizeof(char *));
	f->order = xcalloc(n ? n : 1, sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		f->labels[i] = xstrdup(labels[i]);
	sort_order(f);
	if (nbounds) {
		f->bounds = xmalloc(nbounds * sizeof(double));
		memcpy(f->bounds, bounds, nbounds * sizeof(double));
		f->nbounds = nbounds;
	}
	pthread_mutex_init(&f->lock, NULL);
	if (n == 0) {
		XGROW(f->children, f->cap, 1);
		f->children[0] = child_new(f, METRIC_NO_LABELS);
		f->n = 1;
	}

	pthread_mutex_lock(&m->lock);
	hi = m->nfams;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(name, m->fams[mid]->name);

		if (r == 0)
			BUG("metric %s registered twice", name);
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	XGROW(m->fams, m->capfams, m->nfams + 1);
	memmove(m->fams + lo + 1, m->fams + lo,
		(m->nfams - lo) * sizeof(*m->fams));
	m->fams[lo] = f;
	m->nfams++;
	pthread_mutex_unlock(&m->lock);
	return f;
}

struct metric_family *metrics_counter(struct metrics *m, const char *name,
				      const char *help,
				      const char *const *labels)
{
	return reg(m, METRIC_COUNTER, name, help, labels, NULL, 0);
}

struct metric_family *metrics_gauge(struct metrics *m, const char *name,
				    const char *help,
				    const char *const *labels)
{
	return reg(m, METRIC_GAUGE, name, help, labels, NULL, 0);
}

struct metric_family *metrics_histogram(struct metrics *m, const char *name,
					const char *help,
					const char *const *labels,
					const double *bounds, size_t nbounds)
{
	return reg(m, METRIC_HISTOGRAM, name, help, labels, bounds, nbounds);
}

struct metric_family *metrics_find(struct metrics *m, const char *name)
{
	struct metric_family *f = NULL;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->nfams; i++)
		if (!strcmp(m->fams[i]->name, name)) {
			f = m->fams[i];
			break;
		}
	pthread_mutex_unlock(&m->lock);
	return f;
}

const char *metric_family_name(const struct metric_family *f)
{
	return f->name;
}

enum metric_type metric_family_type(const struct metric_family *f)
{
	return f->type;
}

size_t metric_family_nlabels(const struct metric_family *f)
{
	return f->nlabels;
}

const char *metric_family_label(const struct metric_family *f, size_t i)
{
	return i < f->nlabels ? f->labels[i] : NULL;
}

size_t metric_family_nbounds(const struct metric_family *f)
{
	return f->nbounds;
}

double metric_family_bound(const struct metric_family *f, size_t i)
{
	return i < f->nbounds ? f->bounds[i] : INFINITY;
}

size_t metric_family_size(struct metric_family *f)
{
	size_t n;

	pthread_mutex_lock(&f->lock);
	n = f->n;
	pthread_mutex_unlock(&f->lock);
	return n;
}

/* ---- children ---- */

struct metric *metric_family_get(struct metric_family *f,
				 const char *const *values)
{
	struct metric *c;
	bool found;
	size_t at;

	check_values(f, values);
	pthread_mutex_lock(&f->lock);
	at = search(f, values, &found);
	if (found) {
		c = f->children[at];
	} else {
		c = child_new(f, values);
		XGROW(f->children, f->cap, f->n + 1);
		memmove(f->children + at + 1, f->children + at,
			(f->n - at) * sizeof(*f->children));
		f->children[at] = c;
		f->n++;
	}
	pthread_mutex_unlock(&f->lock);
	return c;
}

struct metric *metric_family_find(struct metric_family *f,
				  const char *const *values)
{
	struct metric *c = NULL;
	bool found;
	size_t at;

	check_values(f, values);
	pthread_mutex_lock(&f->lock);
	at = search(f, values, &found);
	if (found)
		c = f->children[at];
	pthread_mutex_unlock(&f->lock);
	return c;
}

/* Removes children[at] (caller holds the lock). A family without labels
 * keeps its one child, zeroed. */
static void remove_at(struct metric_family *f, size_t at)
{
	if (f->nlabels == 0) {
		child_reset(f->children[at]);
		return;
	}
	child_free(f->children[at], f->nlabels);
	memmove(f->children + at, f->children + at + 1,
		(f->n - at - 1) * sizeof(*f->children));
	f->n--;
}

bool metric_family_remove(struct metric_family *f, const char *const *values)
{
	bool found;
	size_t at;

	check_values(f, values);
	pthread_mutex_lock(&f->lock);
	at = search(f, values, &found);
	if (found)
		remove_at(f, at);
	pthread_mutex_unlock(&f->lock);
	return found;
}

size_t metric_family_remove_partial(struct metric_family *f,
				    const char *const *labels,
				    const char *const *values)
{
	size_t li[8], nl = 0, removed = 0, w = 0;

	for (; labels[nl]; nl++) {
		size_t i;

		if (nl == sizeof(li) / sizeof(li[0]))
			BUG("%s: more than 8 labels to match", f->name);
		for (i = 0; i < f->nlabels; i++)
			if (!strcmp(f->labels[i], labels[nl]))
				break;
		if (i == f->nlabels)
			BUG("%s has no label '%s'", f->name, labels[nl]);
		li[nl] = i;
	}
	pthread_mutex_lock(&f->lock);
	for (size_t r = 0; r < f->n; r++) {
		struct metric *c = f->children[r];
		bool match = true;

		for (size_t k = 0; k < nl && match; k++)
			match = !strcmp(c->values[li[k]], values[k]);
		if (match) {
			child_free(c, f->nlabels);
			removed++;
		} else {
			f->children[w++] = c;
		}
	}
	f->n = w;
	pthread_mutex_unlock(&f->lock);
	return removed;
}

size_t metric_family_remove_matching(struct metric_family *f,
				     const char *label, const char *value)
{
	return metric_family_remove_partial(f, METRIC_LABELS(label),
					    METRIC_VALUES(value));
}

void metric_family_clear(struct metric_family *f)
{
	pthread_mutex_lock(&f->lock);
	while (f->n && f->nlabels)
		remove_at(f, f->n - 1);
	if (f->nlabels == 0)
		child_reset(f->children[0]);
	pthread_mutex_unlock(&f->lock);
}

/* ---- update path ---- */

void metric_inc(struct metric *c)
{
	atomic_add_double(&c->bits, 1);
}

void metric_add(struct metric *c, double v)
{
	if (c->f->type == METRIC_COUNTER && v < 0)
		BUG("%s: counter decreased by %g", c->f->name, v);
	atomic_add_double(&c->bits, v);
}

void metric_set(struct metric *c, double v)
{
	atomic_store_explicit(&c->bits, d2u(v), memory_order_relaxed);
}

void metric_observe(struct metric *c, double v)
{
	const struct metric_family *f = c->f;
	size_t lo = 0, hi = f->nbounds;

	/* First bound >= v; NaN compares false everywhere and lands in
	 * +Inf. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v <= f->bounds[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	if (isnan(v))
		lo = f->nbounds;
	atomic_fetch_add_explicit(&c->buckets[lo], 1, memory_order_relaxed);
	atomic_add_double(&c->sum_bits, v);
}

double metric_value(const struct metric *c)
{
	return u2d(atomic_load_explicit(&((struct metric *)c)->bits,
					memory_order_relaxed));
}

uint64_t metric_hist_bucket(const struct metric *c, size_t i)
{
	uint64_t n = 0;

	if (!c->buckets)
		return 0;
	for (size_t k = 0; k <= i && k <= c->f->nbounds; k++)
		n += atomic_load_explicit(&c->buckets[k], memory_order_relaxed);
	return n;
}

uint64_t metric_hist_count(const struct metric *c)
{
	return c->buckets ? metric_hist_bucket(c, c->f->nbounds) : 0;
}

double metric_hist_sum(const struct metric *c)
{
	return u2d(atomic_load_explicit(&((struct metric *)c)->sum_bits,
					memory_order_relaxed));
}

/* ---- exposition ---- */

void metrics_add_collector(struct metrics *m, metrics_collect_fn *fn,
			   void *ud)
{
	pthread_mutex_lock(&m->lock);
	XGROW(m->colls, m->capcolls, m->ncolls + 1);
	m->colls[m->ncolls].fn = fn;
	m->colls[m->ncolls].ud = ud;
	m->ncolls++;
	pthread_mutex_unlock(&m->lock);
}

static const char *type_name(enum metric_type t)
{
	switch (t) {
	case METRIC_COUNTER:
		return "counter";
	case METRIC_GAUGE:
		return "gauge";
	case METRIC_HISTOGRAM:
		return "histogram";
	}
	return "untyped";
}

/* name{pairs[,extra]} with the braces left out when empty. */
static void series(struct sbuf *b, const char *name, const char *suffix,
		   const struct metric *c, const char *extra)
{
	sbuf_adds(b, name);
	if (suffix)
		sbuf_adds(b, suffix);
	if (c->npairs || extra) {
		sbuf_addch(b, '{');
		sbuf_add(b, c->pairs, c->npairs);
		if (extra) {
			if (c->npairs)
				sbuf_addch(b, ',');
			sbuf_adds(b, extra);
		}
		sbuf_addch(b, '}');
	}
	sbuf_addch(b, ' ');
}

static void render_histogram(struct sbuf *b, const struct metric_family *f,
			     const struct metric *c)
{
	uint64_t cum = 0;
	char le[METRICS_FLOAT_BUF + 8];

	for (size_t i = 0; i <= f->nbounds; i++) {
		char num[METRICS_FLOAT_BUF];

		cum += atomic_load_explicit(&c->buckets[i],
					    memory_order_relaxed);
		if (i < f->nbounds)
			metrics_format_float(f->bounds[i], num);
		else
			strcpy(num, "+Inf");
		snprintf(le, sizeof(le), "le=\"%s\"", num);
		series(b, f->name, "_bucket", c, le);
		sbuf_addu64(b, cum);
		sbuf_addch(b, '\n');
	}
	series(b, f->name, "_sum", c, NULL);
	add_float(b, metric_hist_sum(c));
	sbuf_addch(b, '\n');
	series(b, f->name, "_count", c, NULL);
	sbuf_addu64(b, cum);
	sbuf_addch(b, '\n');
}

static void render_family(struct sbuf *b, struct metric_family *f)
{
	pthread_mutex_lock(&f->lock);
	if (f->n == 0)
		goto out;
	sbuf_adds(b, "# HELP ");
	sbuf_adds(b, f->name);
	sbuf_addch(b, ' ');
	escape_into(b, f->help, false);
	sbuf_adds(b, "\n# TYPE ");
	sbuf_adds(b, f->name);
	sbuf_addch(b, ' ');
	sbuf_adds(b, type_name(f->type));
	sbuf_addch(b, '\n');
	for (size_t i = 0; i < f->n; i++) {
		const struct metric *c = f->children[i];

		if (f->type == METRIC_HISTOGRAM) {
			render_histogram(b, f, c);
		} else {
			series(b, f->name, NULL, c, NULL);
			add_float(b, metric_value(c));
			sbuf_addch(b, '\n');
		}
	}
out:
	pthread_mutex_unlock(&f->lock);
}

char *metrics_render(struct metrics *m, size_t *len)
{
	struct sbuf b = SBUF_INIT;
	struct collector *colls;
	struct metric_family **fams;
	size_t ncolls, nfams;

	/* 1. Copy the collector and family lists; both only grow, and
	 *    families live as long as m, so the copies stay valid. */
	pthread_mutex_lock(&m->lock);
	ncolls = m->ncolls;
	colls = xmalloc((ncolls ? ncolls : 1) * sizeof(*colls));
	if (ncolls)
		memcpy(colls, m->colls, ncolls * sizeof(*colls));
	nfams = m->nfams;
	fams = xmalloc((nfams ? nfams : 1) * sizeof(*fams));
	if (nfams)
		memcpy(fams, m->fams, nfams * sizeof(*fams));
	pthread_mutex_unlock(&m->lock);

	/* 2. Collectors refresh read-on-scrape values, no lock held. */
	for (size_t i = 0; i < ncolls; i++)
		colls[i].fn(colls[i].ud);

	/* 3. One family at a time under its own lock, into a buffer that
	 *    starts at 4 KiB (an exposition is rarely smaller). */
	sbuf_grow(&b, 4096);
	for (size_t i = 0; i < nfams; i++)
		render_family(&b, fams[i]);
	free(colls);
	free(fams);
	return sbuf_detach(&b, len);
}

bool metrics_check(struct metrics *m)
{
	struct metric_family **fams;
	size_t nfams;
	bool ok = true;

	pthread_mutex_lock(&m->lock);
	nfams = m->nfams;
	fams = xmalloc((nfams ? nfams : 1) * sizeof(*fams));
	if (nfams)
		memcpy(fams, m->fams, nfams * sizeof(*fams));
	pthread_mutex_unlock(&m->lock);
	for (size_t i = 0; ok && i < nfams; i++) {
		struct metric_family *f = fams[i];

		if (i && strcmp(fams[i - 1]->name, f->name) >= 0)
			ok = false;
		pthread_mutex_lock(&f->lock);
		if (f->nlabels == 0 && f->n != 1)
			ok = false;
		for (size_t k = 0; ok && k < f->n; k++) {
			const struct metric *c = f->children[k];

			if (c->f != f || !c->values || !c->pairs ||
			    (f->type == METRIC_HISTOGRAM) != !!c->buckets)
				ok = false;
			else if (k && cmp_key(f, (const char *const *)
					      f->children[k - 1]->values,
					      c) >= 0)
				ok = false;
		}
		pthread_mutex_unlock(&f->lock);
	}
	free(fams);
	return ok;
}
