/*
 * store: the devserver's objects, its resourceVersion counter, the event
 * log watches read, and the write-ahead log (see store.h for the contract).
 *
 * It owns every published object (one reference each, never modified
 * after publication), the event histories and the files in data_dir. It
 * must never hold the lock across I/O other than the WAL append of the
 * write in progress (and, once per compaction, the rename that rotates
 * the WAL), and never call back into its callers except through
 * store_filter_fn and store_visit_fn, which run under the lock.
 *
 * DESIGN
 *
 * Maps. A resource ("batch/jobs") holds its objects twice, intrusively:
 * a chained hash table keyed by the "ns/name" bytes for O(1) get and
 * update, and an AVL tree ordered by the same bytes, augmented with
 * subtree sizes, so list pages start in O(log n) and an unfiltered
 * `remaining` is two rank queries. Byte order of "ns/name" is etcd's key
 * order (/registry/<res>/<ns>/<name>), which is what the real server
 * lists in; cluster-scoped keys are "/name". A namespace is a contiguous
 * key range ["ns/", "ns0"). An ns containing '/' could alias another key,
 * so store_create refuses it (see key_ok).
 *
 * Writes. Every persisted write takes the next RV (s->rv + 1) and pushes
 * exactly one event (struct store_rec), which is kept in its resource's
 * history: a deque of that resource's events in RV order, with one
 * reference each. Retention is per resource (see store_opts): a push
 * drops at most EVICT_MAX of the resource's oldest events (one when it
 * is over its cap, more only when an event past the count has aged out
 * of the time window), so memory follows the caps and a write costs O(1).
 * r->hist_base is the RV of the last event of r that was dropped; a
 * reader filtered on r is GONE when its cursor is below it (or below
 * open_rv, the RV found on open: the previous process's history is
 * gone); finding its next event is a binary search over r's deque.
 *
 * Unfiltered readers (gc.c, api_read.c) need every event in RV order.
 * s->hist_base is the highest RV dropped from any resource (at least
 * open_rv), so every event in (hist_base, rv] is still kept by its
 * resource; s->ring holds borrowed pointers to exactly those, one per
 * RV, so the event after a cursor is an index computation and GONE is
 * `cursor < hist_base`. A drop raises hist_base to the dropped RV and
 * pops the ring's front up to it (O(1): the ring entries there are
 * borrowed), before the dropped event can be freed. The ring is never
 * longer than the events kept in all, and always covers the last
 * watch_history events of all resources together (each of them is
 * within the last watch_history of its own resource).
 *
 * Deques and ring are power-of-two circular arrays that double when
 * full (amortized O(1) per push; a doubling copies pointers under the
 * lock, at most log2(cap) times in the process's life) and never shrink.
 * A write whose WAL append fails takes no RV and leaves no event.
 *
 * Old versions are cheap: store_update makes the new tree share every
 * subtree equal to the current version's (share_equal), so a status
 * update of a kept object costs the changed parts, not a second copy of
 * its spec and metadata. A kept event far behind the newest of its
 * resource (MEMO_KEEP events) loses its memo bytes (serialised watch
 * lines) when no reader holds it; a late reader serialises it again.
 *
 * Work is moved out of the lock where it is safe: the WAL line (mostly
 * the object's serialization) is built before the lock is taken, with a
 * hole at its front for the "rv" that is only known under the lock;
 * store_update compares against the current object (and shares its
 * subtrees) outside the lock and re-checks under it only when the
 * object changed meanwhile; the old versions and memo bytes that a push
 * drops are freed after unlocking.
 *
 * WAL format (DIR/wal): one JSON object per line, appended with write(2)
 * under the lock before the write is published or acknowledged:
 *   {"rv":N,"op":"put","res":R,"ns":NS,"name":NAME,"obj":{...}}
 *   {"rv":N,"op":"del","res":R,"ns":NS,"name":NAME}
 * "obj" omits metadata.resourceVersion; replay sets it from "rv".
 * A line is in the page cache once write(2) returns, so an acknowledged
 * write survives kill -9 of the process. Surviving power loss needs the
 * data on disk: CUEUE_DEVSERVER_FSYNC=1 in the environment (or
 * -DCUEUE_DEVSERVER_FSYNC=1 at compile time; the environment wins)
 * fdatasync()s each append, at the cost of one disk flush per write.
 * On open, a last line that is torn (no newline, or not a valid record)
 * is dropped and the file truncated before it, so later appends never
 * glue onto garbage; a bad line followed by good ones is corruption and
 * store_new fails rather than silently losing writes.
 *
 * Snapshot format (DIR/snapshot): {"snapshot":1,"rv":S}, one "put" line
 * per live object (its own RV in "rv"), then {"end":true,"count":K}. S is
 * the global RV when it was taken, so the counter never goes backwards
 * even when the newest writes were deletions. Replay loads the snapshot,
 * then DIR/wal.old and DIR/wal, skipping lines with rv <= S.
 *
 * Compaction runs when the WAL is at least CUEUE_STORE_COMPACT_BYTES
 * (default 64 MiB; the environment knob exists for tests) AND at least 4x
 * the live data (the sum of each live object's last line): the WAL then
 * holds mostly dead versions, and rewriting the live set costs at most a
 * quarter of what was appended. The writer that crosses the threshold
 * does it, after releasing the lock, in this crash-safe order:
 *  1. under the lock: take a reference to every live object and note
 *     S = rv; rotate: create DIR/wal.new, rename DIR/wal -> DIR/wal.old,
 *     rename DIR/wal.new -> DIR/wal, append to the new file from now on
 *     (wal.old then holds exactly the lines <= S);
 *  2. without the lock: write DIR/snapshot.tmp, fsync it, rename it to
 *     DIR/snapshot, fsync DIR;
 *  3. unlink DIR/wal.old.
 * A crash anywhere leaves a readable state: before 2 completes, the old
 * snapshot + wal.old + wal hold everything; after it, the new snapshot
 * covers wal.old's lines, which replay skips. snapshot.tmp and wal.new
 * found on open are leftovers and are removed; a wal.old found on open is
 * folded into a fresh snapshot at once. If step 2 fails, wal.old stays
 * and the next compaction writes a snapshot without rotating.
 *
 * A lock file (DIR/lock, flock) keeps a second process off the data dir.
 *
 * Contention. Every request thread, every watch and the controllers take
 * the one mutex, for a few microseconds each, so it is an adaptive mutex
 * (a short spin before sleeping: the holder is usually running on the
 * other core). s->rv is stored atomically under the lock so a look
 * without a wait (store_next_events with timeout 0) can tell "nothing
 * new" without taking the lock. Readers share each event (struct
 * store_rec) by reference and take them in batches.
 */
#define _GNU_SOURCE /* PTHREAD_MUTEX_ADAPTIVE_NP */
#include "devserver/store.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "devserver/jsonw.h"

#ifndef CUEUE_DEVSERVER_FSYNC
#define CUEUE_DEVSERVER_FSYNC 0
#endif

#define COMPACT_BYTES_DEFAULT (64u << 20)
#define COMPACT_LIVE_FACTOR 4
#define RV_ROOM 32          /* reserved at a line's front for {"rv":N */
#define FLUSH_BYTES (1u << 20) /* snapshot write chunk */
#define ITER_DEPTH 96       /* > max AVL height for any size_t count */
#define EVICT_MAX 2         /* events one push may drop */
#define MEMO_KEEP 1024      /* newest events of a resource keeping memos */

struct node {
	struct node *hnext;   /* hash chain */
	struct node *left;    /* AVL: keys < key */
	struct node *right;   /* AVL: keys > key */
	int height;           /* AVL: 1 for a leaf */
	size_t size;          /* nodes in this subtree, this one included */
	uint64_t hash;        /* key_hash of key */
	uint64_t rv;          /* RV of obj; == its metadata.resourceVersion */
	size_t bytes;         /* length of the WAL/snapshot line that wrote
			       * obj; the live-data estimate */
	json_t *obj;          /* owned ref; published, immutable */
	size_t ns_len;        /* bytes of ns; key[ns_len] == '/' */
	size_t key_len;       /* strlen(key) */
	char key[];           /* "ns/name\0ns\0": sort key, then ns alone */
};

/*
 * A circular array of events in RV order: slot (head + i) & (cap - 1)
 * holds the i-th oldest. cap is 0 or a power of two.
 */
struct hist {
	struct store_rec **v;  /* owned array of cap */
	size_t cap;
	size_t head;
	size_t n;
};

struct resource {
	char *name;            /* owned; "<group>/<plural>" */
	struct node **buckets; /* owned; nbuckets chains */
	size_t nbuckets;       /* power of two, >= 16 */
	size_t n;              /* objects; == root->size */
	struct node *root;     /* AVL tree of the same nodes */
	uint64_t last_rv;      /* RV of the last write here since open;
				* 0: none (store_resource_rv) */
	struct hist hist;      /* this resource's kept events, one
				* reference each */
	uint64_t hist_base;    /* RV of its last dropped event; 0: none */
	pthread_cond_t cond;   /* broadcast on this resource's events and
				* wake_all: wakes the waiters filtered on it */
};

/*
 * One published event. Immutable once pushed, except for the memo slots
 * (set once each, atomically). Shared, with an atomic reference count,
 * by the ring and by every struct store_event handed out for it, so a
 * reader takes it with one increment and copies nothing.
 */
struct store_rec {
	atomic_size_t refs;         /* the history's, plus one per
				     * store_event */
	enum store_event_type type;
	uint64_t rv;
	uint64_t ms;                /* clock at push; 0 without a window */
	const struct resource *res; /* borrowed; resources live until free */
	json_t *obj;                /* owned ref */
	json_t *prev;               /* owned ref or NULL */
	/* owned, or NULL: set once, by compare-and-swap */
	_Atomic(struct store_memo *) memo[STORE_MEMO_SLOTS];
	size_t ns_len;
	size_t key_len;
	char key[];                 /* "ns/name\0ns\0", as struct node */
};

/* One memo slot's bytes. */
struct store_memo {
	size_t len;                 /* bytes used of bytes[] */
	char bytes[];
};

/* One compaction's captured state (step 1 of the DESIGN list). */
struct snap_item {
	const char *res; /* borrowed from struct resource */
	char *ns;        /* owned "ns\0name": ns, then name at ns_len + 1 */
	size_t ns_len;
	uint64_t rv;
	json_t *obj;     /* owned ref */
};

struct compaction {
	uint64_t rv;            /* S: the global RV at capture */
	struct snap_item *v;    /* owned array of n */
	size_t n;
	bool unlink_old;        /* wal.old exists and is covered by S */
};

struct store {
	pthread_mutex_t mu;
	pthread_cond_t cond;      /* broadcast on every event and wake_all:
				   * wakes unfiltered waiters (a waiter
				   * filtered on a resource not yet created
				   * creates it, empty, and sleeps on its
				   * cond) */
	uint64_t rv;              /* the last RV given out */
	struct resource **res;    /* owned array of nres, never shrinks */
	size_t nres, capres;

	struct hist ring;         /* borrowed: the events (hist_base, rv],
				   * one per RV; ring.n == rv - hist_base */
	uint64_t hist_base;       /* every event with rv > hist_base is kept:
				   * max(open_rv, highest dropped RV) */
	uint64_t open_rv;         /* the RV found on open */
	size_t keep_n;            /* watch_history, >= 1 */
	size_t keep_max;          /* watch_history_max, >= keep_n */
	uint64_t keep_ms;         /* watch_history_ms; 0: no window */
	store_clock_fn *clock;
	void *clock_ctx;
	uint64_t wake_gen;        /* bumped by store_wake_all */

	char *dir;                /* owned; NULL: memory only. Immutable:
				   * what code outside the lock tests */
	int wal_fd;               /* -1: memory only */
	int lock_fd;              /* flock on DIR/lock, or -1 */
	bool fsync_each;          /* fdatasync after each append */
	bool wal_broken;          /* a failed append could not be undone */
	uint64_t wal_bytes;       /* size of DIR/wal */
	uint64_t live_bytes;      /* sum of node->bytes */
	uint64_t compact_min;     /* CUEUE_STORE_COMPACT_BYTES */
	uint64_t compact_retry_at; /* no compaction before wal_bytes >= it */
	bool compacting;          /* a compaction is between steps 1 and 3 */
	bool old_pending;         /* DIR/wal.old exists */
};

/* ---- small helpers ---- */

static void lock(struct store *s)
{
	if (pthread_mutex_lock(&s->mu) != 0)
		BUG("store: mutex lock failed");
}

static void unlock(struct store *s)
{
	pthread_mutex_unlock(&s->mu);
}

static json_t *must(json_t *j)
{
	if (!j)
		BUG("store: jansson allocation failed");
	return j;
}

static uint64_t key_hash(const char *ns, const char *name)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */
	const unsigned char *p;

	for (p = (const unsigned char *)ns; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	h = (h ^ '/') * 1099511628211ULL;
	for (p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static bool utf8_ok(const char *str)
{
	const unsigned char *p = (const unsigned char *)str;

	while (*p) {
		size_t n, i;
		uint32_t cp;

		if (*p < 0x80) {
			p++;
			continue;
		}
		if ((*p & 0xe0) == 0xc0) {
			n = 1;
			cp = *p & 0x1f;
		} else if ((*p & 0xf0) == 0xe0) {
			n = 2;
			cp = *p & 0x0f;
		} else if ((*p & 0xf8) == 0xf0) {
			n = 3;
			cp = *p & 0x07;
		} else {
			return false;
		}
		for (i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
		    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

/*
 * Keys the WAL can write as JSON strings and the key order can tell
 * apart. Kubernetes names are ASCII, so only a caller that skipped name
 * validation can fail this; store_create answers STORE_IO (the WAL could
 * not represent the write) rather than crash or corrupt the log.
 */
static bool key_ok(const char *res, const char *ns, const char *name)
{
	return !strchr(ns, '/') && utf8_ok(res) && utf8_ok(ns) &&
	       utf8_ok(name);
}

static char *path_in(const struct store *s, const char *file)
{
	return xasprintf("%s/%s", s->dir, file);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* ---- WAL lines ---- */

struct line {
	struct sbuf b; /* RV_ROOM bytes reserved at the front */
	size_t start;  /* after line_seal: offset of the line's '{' */
};

/* Appends str as a JSON string. str is valid UTF-8 (key_ok). */
static void add_json_text(struct sbuf *b, const char *str)
{
	const char *run = str;
	char esc[8];

	sbuf_addch(b, '"');
	for (; *str; str++) {
		unsigned char c = (unsigned char)*str;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		sbuf_add(b, run, (size_t)(str - run));
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		sbuf_adds(b, esc);
		run = str + 1;
	}
	sbuf_add(b, run, (size_t)(str - run));
	sbuf_addch(b, '"');
}

/*
 * Starts l as everything of a record after its rv: op, keys and, for a
 * put, the object. Returns 0, or -1 when jansson cannot serialize obj.
 */
static int line_build(struct line *l, const char *op, const char *res,
		      const char *ns, const char *name, const json_t *obj)
{
	static const char room[RV_ROOM];

	sbuf_reset(&l->b);
	sbuf_add(&l->b, room, RV_ROOM);
	sbuf_adds(&l->b, ",\"op\":\"");
	sbuf_adds(&l->b, op);
	sbuf_adds(&l->b, "\",\"res\":");
	add_json_text(&l->b, res);
	sbuf_adds(&l->b, ",\"ns\":");
	add_json_text(&l->b, ns);
	sbuf_adds(&l->b, ",\"name\":");
	add_json_text(&l->b, name);
	if (obj) {
		sbuf_adds(&l->b, ",\"obj\":");
		if (jsonw_append(obj, &l->b) != 0)
			return -1;
	}
	sbuf_adds(&l->b, "}\n");
	return 0;
}

/* Writes {"rv":N into the reserve, right before the rest. */
static void line_seal(struct line *l, uint64_t rv)
{
	char head[RV_ROOM];
	int n = snprintf(head, sizeof(head), "{\"rv\":%" PRIu64, rv);

	l->start = RV_ROOM - (size_t)n;
	memcpy(l->b.buf + l->start, head, (size_t)n);
}

static size_t line_size(const struct line *l)
{
	return l->b.len - l->start;
}

/*
 * Appends a sealed line to DIR/wal. Under the lock. On failure the file
 * is cut back to where it was, so a half line never stays behind; when
 * even that fails every later write answers STORE_IO.
 */
static int wal_append(struct store *s, const struct line *l)
{
	size_t n = line_size(l);

	if (s->wal_broken)
		return -1;
	if (write_all(s->wal_fd, l->b.buf + l->start, n) != 0 ||
	    (s->fsync_each && fdatasync(s->wal_fd) != 0)) {
		if (ftruncate(s->wal_fd, (off_t)s->wal_bytes) != 0)
			s->wal_broken = true;
		return -1;
	}
	s->wal_bytes += n;
	return 0;
}

/* ---- maps ---- */

static int height(const struct node *n)
{
	return n ? n->height : 0;
}

static size_t size(const struct node *n)
{
	return n ? n->size : 0;
}

static void fix(struct node *n)
{
	int hl = height(n->left), hr = height(n->right);

	n->height = 1 + (hl > hr ? hl : hr);
	n->size = 1 + size(n->left) + size(n->right);
}

static struct node *rot_right(struct node *y)
{
	struct node *x = y->left;

	y->left = x->right;
	x->right = y;
	fix(y);
	fix(x);
	return x;
}

static struct node *rot_left(struct node *x)
{
	struct node *y = x->right;

	x->right = y->left;
	y->left = x;
	fix(x);
	fix(y);
	return y;
}

static struct node *balance(struct node *n)
{
	int b;

	fix(n);
	b = height(n->left) - height(n->right);
	if (b > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rot_left(n->left);
		return rot_right(n);
	}
	if (b < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rot_right(n->right);
		return rot_left(n);
	}
	return n;
}

static struct node *avl_insert(struct node *t, struct node *n)
{
	if (!t) {
		n->left = NULL;
		n->right = NULL;
		fix(n);
		return n;
	}
	if (strcmp(n->key, t->key) < 0)
		t->left = avl_insert(t->left, n);
	else
		t->right = avl_insert(t->right, n);
	return balance(t);
}

static struct node *avl_remove_min(struct node *t, struct node **min)
{
	if (!t->left) {
		*min = t;
		return t->right;
	}
	t->left = avl_remove_min(t->left, min);
	return balance(t);
}

static struct node *avl_remove(struct node *t, const char *key)
{
	int c;

	if (!t)
		BUG("store: key %s missing from the tree", key);
	c = strcmp(key, t->key);
	if (c < 0) {
		t->left = avl_remove(t->left, key);
	} else if (c > 0) {
		t->right = avl_remove(t->right, key);
	} else {
		struct node *l = t->left, *r = t->right, *m;

		if (!r)
			return l;
		r = avl_remove_min(r, &m);
		m->left = l;
		m->right = r;
		return balance(m);
	}
	return balance(t);
}

/* Nodes with key < k (or <= k when or_equal). */
static size_t avl_rank(const struct node *t, const char *k, bool or_equal)
{
	size_t c = 0;

	while (t) {
		int d = strcmp(t->key, k);

		if (d < 0 || (or_equal && d == 0)) {
			c += size(t->left) + 1;
			t = t->right;
		} else {
			t = t->left;
		}
	}
	return c;
}

/* In-order iteration with an explicit stack. */
struct iter {
	struct node *stack[ITER_DEPTH];
	int n;
};

/* Positions it on the first node > k (>= k when inclusive; k NULL: the
 * first node). */
static void iter_seek(struct iter *it, struct node *t, const char *k,
		      bool inclusive)
{
	it->n = 0;
	while (t) {
		int d = k ? strcmp(t->key, k) : 1;

		if (d > 0 || (inclusive && d == 0)) {
			if (it->n == ITER_DEPTH)
				BUG("store: tree deeper than %d", ITER_DEPTH);
			it->stack[it->n++] = t;
			t = t->left;
		} else {
			t = t->right;
		}
	}
}

static struct node *iter_next(struct iter *it)
{
	struct node *n, *t;

	if (it->n == 0)
		return NULL;
	n = it->stack[--it->n];
	for (t = n->right; t; t = t->left) {
		if (it->n == ITER_DEPTH)
			BUG("store: tree deeper than %d", ITER_DEPTH);
		it->stack[it->n++] = t;
	}
	return n;
}

static const char *node_ns(const struct node *n)
{
	return n->key + n->key_len + 1;
}

static const char *node_name(const struct node *n)
{
	return n->key + n->ns_len + 1;
}

static struct node *node_new(const char *ns, const char *name, uint64_t h)
{
	size_t nl = strlen(ns), ml = strlen(name);
	struct node *n = xcalloc(1, sizeof(*n) + 2 * nl + ml + 3);

	memcpy(n->key, ns, nl);
	n->key[nl] = '/';
	memcpy(n->key + nl + 1, name, ml + 1);
	memcpy(n->key + nl + ml + 2, ns, nl);
	n->key[2 * nl + ml + 2] = '\0';
	n->ns_len = nl;
	n->key_len = nl + 1 + ml;
	n->hash = h;
	return n;
}

static struct resource *resource_find(struct store *s, const char *name)
{
	for (size_t i = 0; i < s->nres; i++)
		if (strcmp(s->res[i]->name, name) == 0)
			return s->res[i];
	return NULL;
}

static void cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

static struct resource *resource_get(struct store *s, const char *name)
{
	struct resource *r = resource_find(s, name);

	if (r)
		return r;
	r = xcalloc(1, sizeof(*r));
	cond_init_mono(&r->cond);
	r->name = xstrdup(name);
	r->nbuckets = 16;
	r->buckets = xcalloc(r->nbuckets, sizeof(*r->buckets));
	XGROW(s->res, s->capres, s->nres + 1);
	s->res[s->nres++] = r;
	return r;
}

static struct node *find(const struct resource *r, const char *ns,
			 const char *name, uint64_t h)
{
	size_t nl = strlen(ns);
	struct node *n;

	if (!r)
		return NULL;
	for (n = r->buckets[h & (r->nbuckets - 1)]; n; n = n->hnext)
		if (n->hash == h && n->ns_len == nl &&
		    memcmp(n->key, ns, nl) == 0 &&
		    strcmp(n->key + nl + 1, name) == 0)
			return n;
	return NULL;
}

static void rehash(struct resource *r)
{
	size_t nb = r->nbuckets * 2;
	struct node **b = xcalloc(nb, sizeof(*b));

	for (size_t i = 0; i < r->nbuckets; i++) {
		struct node *n = r->buckets[i], *next;

		for (; n; n = next) {
			next = n->hnext;
			n->hnext = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(r->buckets);
	r->buckets = b;
	r->nbuckets = nb;
}

static void node_insert(struct resource *r, struct node *n)
{
	struct node **b;

	if (r->n >= r->nbuckets)
		rehash(r);
	b = &r->buckets[n->hash & (r->nbuckets - 1)];
	n->hnext = *b;
	*b = n;
	r->root = avl_insert(r->root, n);
	r->n++;
}

/* Unlinks n from both structures; the caller owns it afterwards. */
static void node_unlink(struct resource *r, struct node *n)
{
	struct node **p = &r->buckets[n->hash & (r->nbuckets - 1)];

	while (*p != n)
		p = &(*p)->hnext;
	*p = n->hnext;
	r->root = avl_remove(r->root, n->key);
	r->n--;
}

/* Checks a tree: order, heights, sizes; returns its size or aborts. */
static size_t tree_check(const struct node *t, const char *lo,
			 const char *hi)
{
	size_t l, r;

	if (!t)
		return 0;
	if ((lo && strcmp(t->key, lo) <= 0) || (hi && strcmp(t->key, hi) >= 0))
		BUG("store: tree order broken at %s", t->key);
	l = tree_check(t->left, lo, t->key);
	r = tree_check(t->right, t->key, hi);
	if (t->size != l + r + 1 ||
	    t->height != 1 + (height(t->left) > height(t->right) ?
			      height(t->left) : height(t->right)) ||
	    abs(height(t->left) - height(t->right)) > 1)
		BUG("store: tree shape broken at %s", t->key);
	return t->size;
}

static struct store_rec *hist_at(const struct hist *h, size_t i);

/* P15: every structure agrees with the others. O(n); for open and free. */
static bool invariants_ok(const struct store *s)
{
	uint64_t live = 0;

	for (size_t i = 0; i < s->nres; i++) {
		const struct resource *r = s->res[i];
		size_t n = 0;

		for (size_t b = 0; b < r->nbuckets; b++)
			for (const struct node *x = r->buckets[b]; x;
			     x = x->hnext) {
				n++;
				live += x->bytes;
			}
		if (n != r->n || tree_check(r->root, NULL, NULL) != n ||
		    r->hist.n > s->keep_max || r->hist_base > s->hist_base)
			return false;
		for (size_t k = 1; k < r->hist.n; k++)
			if (hist_at(&r->hist, k - 1)->rv >=
			    hist_at(&r->hist, k)->rv)
				return false;
		if (r->hist.n && hist_at(&r->hist, 0)->rv <= r->hist_base)
			return false;
	}
	for (size_t i = 0; i < s->ring.n; i++)
		if (hist_at(&s->ring, i)->rv != s->hist_base + 1 + i)
			return false;
	return s->ring.n == s->rv - s->hist_base &&
	       s->open_rv <= s->hist_base && live == s->live_bytes;
}

/* ---- objects ---- */

static void set_rv(json_t *obj, uint64_t rv)
{
	char buf[24];
	json_t *md = json_object_get(obj, "metadata");

	if (!json_is_object(md)) {
		md = must(json_object());
		json_object_set_new(obj, "metadata", md);
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, rv);
	json_object_set_new(md, "resourceVersion", must(json_string(buf)));
}

static size_t refs(const json_t *j)
{
	return __atomic_load_n(&j->refcount, __ATOMIC_ACQUIRE);
}

/*
 * Makes obj's top level and its metadata exclusively ours, so setting
 * metadata.resourceVersion can never touch a tree another thread sees
 * (a patched object may share metadata with the published one), and
 * drops the resourceVersion the caller left in it. Takes obj, returns
 * the object to use.
 */
static json_t *own(json_t *obj)
{
	json_t *md;

	if (!json_is_object(obj))
		BUG("store: a stored object must be a JSON object");
	if (refs(obj) > 1) {
		json_t *c = must(json_copy(obj));

		json_decref(obj);
		obj = c;
	}
	md = json_object_get(obj, "metadata");
	if (!json_is_object(md))
		json_object_set_new(obj, "metadata", must(json_object()));
	else if (refs(md) > 1)
		json_object_set_new(obj, "metadata", must(json_copy(md)));
	json_object_del(json_object_get(obj, "metadata"), "resourceVersion");
	return obj;
}

/* metadata objects equal except for resourceVersion */
static bool meta_equal(const json_t *a, const json_t *b)
{
	const char *k;
	json_t *v;
	size_t na, nb;

	if (!json_is_object(a) || !json_is_object(b))
		return json_equal(a, b);
	na = json_object_size(a) - !!json_object_get(a, "resourceVersion");
	nb = json_object_size(b) - !!json_object_get(b, "resourceVersion");
	if (na != nb)
		return false;
	/* jansson's iterators take non-const; nothing is modified */
	json_object_foreach((json_t *)a, k, v) {
		json_t *w;

		if (strcmp(k, "resourceVersion") == 0)
			continue;
		w = json_object_get(b, k);
		if (!w || !json_equal(v, w))
			return false;
	}
	return true;
}

/*
 * json_equal ignoring metadata.resourceVersion, modifying neither.
 * metadata goes last: a real change is usually in spec or status, while
 * metadata is the biggest part (managedFields) and the least likely to
 * differ.
 */
static bool equal_ignoring_rv(const json_t *a, const json_t *b)
{
	const char *k;
	json_t *v;

	if (json_object_size(a) != json_object_size(b))
		return false;
	json_object_foreach((json_t *)a, k, v) {
		json_t *w = json_object_get(b, k);

		if (!w)
			return false;
		if (strcmp(k, "metadata") != 0 && !json_equal(v, w))
			return false;
	}
	return meta_equal(json_object_get(a, "metadata"),
			  json_object_get(b, "metadata"));
}

/*
 * Makes dst share old's subtrees wherever they are equal: an equal
 * member of dst is replaced by a new reference to old's, and a member
 * that differs is searched the same way when dst alone holds it. dst
 * must be exclusively ours (refs 1 under a parent that is, as own()
 * makes the top level and metadata); old is published and only gains
 * references. Returns true when dst equals old. One pass over dst, as
 * json_equal; run outside the lock. This is what makes a kept old
 * version of a patched object cheap: patches deep-copy the whole tree.
 */
static bool share_equal(json_t *dst, json_t *old)
{
	bool eq;

	if (dst == old)
		return true;
	if (json_is_object(dst) && json_is_object(old)) {
		eq = json_object_size(dst) == json_object_size(old);
		for (void *it = json_object_iter(dst); it;
		     it = json_object_iter_next(dst, it)) {
			json_t *v = json_object_iter_value(it);
			json_t *w = json_object_get(old,
						    json_object_iter_key(it));
			bool same;

			if (!w) {
				eq = false;
				continue;
			}
			same = refs(v) == 1 ? share_equal(v, w) :
					      json_equal(v, w);
			if (same && v != w)
				json_object_iter_set_new(dst, it,
							 json_incref(w));
			eq = eq && same;
		}
		return eq;
	}
	if (json_is_array(dst) && json_is_array(old)) {
		size_t nd = json_array_size(dst), no = json_array_size(old);

		eq = nd == no;
		for (size_t i = 0; i < nd && i < no; i++) {
			json_t *v = json_array_get(dst, i);
			json_t *w = json_array_get(old, i);
			bool same = refs(v) == 1 ? share_equal(v, w) :
						   json_equal(v, w);

			if (same && v != w)
				json_array_set_new(dst, i, json_incref(w));
			eq = eq && same;
		}
		return eq;
	}
	return json_equal(dst, old);
}

/* ---- event histories ---- */

static void event_put(struct store_rec *e)
{
	if (!e || atomic_fetch_sub_explicit(&e->refs, 1,
					    memory_order_acq_rel) != 1)
		return;
	json_decref(e->obj);
	json_decref(e->prev);
	for (size_t i = 0; i < STORE_MEMO_SLOTS; i++)
		free(atomic_load_explicit(&e->memo[i], memory_order_acquire));
	free(e);
}

static struct store_rec *hist_at(const struct hist *h, size_t i)
{
	return h->v[(h->head + i) & (h->cap - 1)];
}

static void hist_push(struct hist *h, struct store_rec *e)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 16;
		struct store_rec **v = xmalloc(cap * sizeof(*v));

		for (size_t i = 0; i < h->n; i++)
			v[i] = hist_at(h, i);
		free(h->v);
		h->v = v;
		h->cap = cap;
		h->head = 0;
	}
	h->v[(h->head + h->n) & (h->cap - 1)] = e;
	h->n++;
}

/* Drops the k oldest entries (k <= n). */
static void hist_pop(struct hist *h, size_t k)
{
	h->head = (h->head + k) & (h->cap - 1);
	h->n -= k;
}

/* Index of the first event with RV > rv (h->n when none). O(log n). */
static size_t hist_after(const struct hist *h, uint64_t rv)
{
	size_t lo = 0, hi = h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hist_at(h, mid)->rv <= rv)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void hist_release(struct hist *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/* What one push drops, freed by the caller after unlocking. */
struct evicted {
	struct store_rec *recs[EVICT_MAX];
	size_t nrecs;
	struct store_memo *memos[STORE_MEMO_SLOTS];
};

static void evicted_free(struct evicted *ev)
{
	for (size_t i = 0; i < ev->nrecs; i++)
		event_put(ev->recs[i]);
	for (size_t i = 0; i < STORE_MEMO_SLOTS; i++)
		free(ev->memos[i]);
}

static uint64_t clock_ms(const struct store *s)
{
	struct timespec ts;

	if (s->clock)
		return s->clock(s->clock_ctx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Drops r's oldest event: it and every event before it leave the
 * unfiltered ring too. */
static void drop_oldest(struct store *s, struct resource *r,
			struct evicted *ev)
{
	struct store_rec *o = hist_at(&r->hist, 0);

	hist_pop(&r->hist, 1);
	r->hist_base = o->rv;
	if (o->rv > s->hist_base) {
		hist_pop(&s->ring, (size_t)(o->rv - s->hist_base));
		s->hist_base = o->rv;
	}
	ev->recs[ev->nrecs++] = o;
}

/*
 * Applies the retention rule to r after a push: over keep_max, or over
 * keep_n and outside the window (or with no window), the oldest goes; at
 * most EVICT_MAX per push, so an aged-out backlog drains over the next
 * writes instead of in one long lock hold.
 */
static void trim(struct store *s, struct resource *r, uint64_t now,
		 struct evicted *ev)
{
	while (r->hist.n > s->keep_n && ev->nrecs < EVICT_MAX) {
		const struct store_rec *o = hist_at(&r->hist, 0);

		if (r->hist.n <= s->keep_max && s->keep_ms &&
		    now < o->ms + s->keep_ms)
			break;
		drop_oldest(s, r, ev);
	}
}

/*
 * The event MEMO_KEEP behind r's newest gives up its memo bytes when no
 * reader holds it: under the lock, refs == 1 means only the history does,
 * and readers take references only under the lock (store_next_events),
 * so nobody can be reading the bytes.
 */
static void trim_memo(struct resource *r, struct evicted *ev)
{
	struct store_rec *e;

	if (r->hist.n <= MEMO_KEEP)
		return;
	e = hist_at(&r->hist, r->hist.n - 1 - MEMO_KEEP);
	if (atomic_load_explicit(&e->refs, memory_order_acquire) != 1)
		return;
	for (size_t i = 0; i < STORE_MEMO_SLOTS; i++)
		ev->memos[i] = atomic_exchange_explicit(&e->memo[i], NULL,
							memory_order_acq_rel);
}

/*
 * Takes obj and prev. Under the lock, right after s->rv moved to rv.
 * What the push drops from the history goes to *ev, for the caller to
 * free after unlocking: freeing old versions is work nobody needs to
 * wait for.
 */
static void event_push(struct store *s, enum store_event_type type,
		       struct resource *r, const struct node *n,
		       json_t *obj, json_t *prev, struct evicted *ev)
{
	size_t kb = n->key_len + 1 + n->ns_len + 1;
	struct store_rec *e = xmalloc(sizeof(*e) + kb);
	uint64_t now = s->keep_ms ? clock_ms(s) : 0;

	atomic_init(&e->refs, 1);
	e->type = type;
	e->rv = s->rv;
	e->ms = now;
	e->res = r;
	e->obj = obj;
	e->prev = prev;
	for (size_t i = 0; i < STORE_MEMO_SLOTS; i++)
		atomic_init(&e->memo[i], NULL);
	e->ns_len = n->ns_len;
	e->key_len = n->key_len;
	memcpy(e->key, n->key, kb);
	hist_push(&r->hist, e);
	hist_push(&s->ring, e);
	r->last_rv = s->rv;
	trim(s, r, now, ev);
	trim_memo(r, ev);
	assert(s->ring.n == s->rv - s->hist_base);
	pthread_cond_broadcast(&s->cond);
	pthread_cond_broadcast(&r->cond);
}

/* ---- compaction ---- */

static void compaction_free(struct compaction *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].ns);
		json_decref(c->v[i].obj);
	}
	free(c->v);
	free(c);
}

/*
 * Points DIR/wal at a new empty file and the old one at DIR/wal.old.
 * Under the lock; metadata operations only. Returns 0, or -1 having
 * changed nothing visible.
 */
static int wal_rotate(struct store *s)
{
	char *wal = path_in(s, "wal"), *old = path_in(s, "wal.old");
	char *tmp = path_in(s, "wal.new");
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		      0644);
	int rc = -1;

	if (fd < 0)
		goto out;
	if (rename(wal, old) != 0) {
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, wal) != 0) {
		/* the open fd still writes the file now called wal.old */
		if (rename(old, wal) != 0)
			s->wal_broken = true; /* appends would go to wal.old */
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (s->fsync_each)
		fsync_dir(s->dir);
	close(s->wal_fd);
	s->wal_fd = fd;
	s->wal_bytes = 0;
	s->compact_retry_at = 0;
	s->old_pending = true;
	rc = 0;
out:
	free(wal);
	free(old);
	free(tmp);
	return rc;
}

/* Step 1, under the lock: capture the live set and rotate the WAL. */
static struct compaction *compaction_begin(struct store *s, bool rotate)
{
	struct compaction *c = xcalloc(1, sizeof(*c));
	size_t total = 0, k = 0;

	for (size_t i = 0; i < s->nres; i++)
		total += s->res[i]->n;
	c->rv = s->rv;
	c->v = xcalloc(total ? total : 1, sizeof(*c->v));
	for (size_t i = 0; i < s->nres; i++) {
		struct iter it;
		struct node *n;

		iter_seek(&it, s->res[i]->root, NULL, false);
		for (n = iter_next(&it); n; n = iter_next(&it)) {
			struct snap_item *e = &c->v[k++];

			e->res = s->res[i]->name;
			e->ns = xstrndup(n->key, n->key_len);
			e->ns[n->ns_len] = '\0';
			e->ns_len = n->ns_len;
			e->rv = n->rv;
			e->obj = json_incref(n->obj);
		}
	}
	c->n = k;
	if (rotate && !s->old_pending && wal_rotate(s) != 0)
		s->compact_retry_at = s->wal_bytes + s->compact_min;
	c->unlink_old = s->old_pending;
	s->compacting = true;
	return c;
}

/* Step 2, without the lock: write, fsync and rename the snapshot. */
static int snapshot_write(const struct store *s, const struct compaction *c)
{
	char *tmp = path_in(s, "snapshot.tmp"), *dst = path_in(s, "snapshot");
	struct line l = { 0 };
	struct sbuf out = SBUF_INIT;
	char buf[96];
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = -1;

	if (fd < 0)
		goto out;
	snprintf(buf, sizeof(buf), "{\"snapshot\":1,\"rv\":%" PRIu64 "}\n",
		 c->rv);
	sbuf_adds(&out, buf);
	for (size_t i = 0; i < c->n; i++) {
		const struct snap_item *e = &c->v[i];

		if (line_build(&l, "put", e->res, e->ns,
			       e->ns + e->ns_len + 1, e->obj) != 0)
			goto out;
		line_seal(&l, e->rv);
		sbuf_add(&out, l.b.buf + l.start, line_size(&l));
		if (out.len >= FLUSH_BYTES) {
			if (write_all(fd, out.buf, out.len) != 0)
				goto out;
			sbuf_reset(&out);
		}
	}
	snprintf(buf, sizeof(buf), "{\"end\":true,\"count\":%zu}\n", c->n);
	sbuf_adds(&out, buf);
	if (write_all(fd, out.buf, out.len) != 0 || fsync(fd) != 0)
		goto out;
	if (close(fd) != 0) {
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, dst) != 0 || fsync_dir(s->dir) != 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		unlink(tmp);
	sbuf_release(&out);
	sbuf_release(&l.b);
	free(tmp);
	free(dst);
	return rc;
}

/* Steps 2 and 3; takes c. Returns 0 or -1 (the store keeps working). */
static int compaction_finish(struct store *s, struct compaction *c)
{
	int rc = snapshot_write(s, c);

	if (rc == 0 && c->unlink_old) {
		char *old = path_in(s, "wal.old");

		unlink(old);
		free(old);
	}
	lock(s);
	s->compacting = false;
	if (rc == 0 && c->unlink_old)
		s->old_pending = false;
	if (rc != 0)
		s->compact_retry_at = s->wal_bytes + s->compact_min;
	unlock(s);
	compaction_free(c);
	return rc;
}

/* Under the lock, after a write: starts a compaction when due. */
static struct compaction *compaction_due(struct store *s)
{
	if (!s->dir || s->compacting || s->wal_bytes < s->compact_min ||
	    s->wal_bytes < COMPACT_LIVE_FACTOR * s->live_bytes ||
	    s->wal_bytes < s->compact_retry_at)
		return NULL;
	return compaction_begin(s, true);
}

/* ---- writes ---- */

/*
 * Publishes obj (taken) at key under the lock: appends the sealed line,
 * sets the RV, replaces or inserts the node, pushes the event. Returns
 * STORE_OK or STORE_IO (obj released).
 */
static enum store_rc commit_put(struct store *s, struct resource *r,
				struct node *n, const char *ns,
				const char *name, uint64_t h, json_t *obj,
				struct line *l, json_t **out,
				struct evicted *evicted)
{
	uint64_t rv = s->rv + 1;
	json_t *prev = NULL;

	if (s->dir) {
		line_seal(l, rv);
		if (wal_append(s, l) != 0) {
			json_decref(obj);
			return STORE_IO;
		}
	}
	set_rv(obj, rv);
	__atomic_store_n(&s->rv, rv, __ATOMIC_RELEASE);
	if (n) {
		prev = n->obj;
		s->live_bytes -= n->bytes;
	} else {
		n = node_new(ns, name, h);
		node_insert(r, n);
	}
	n->obj = obj;
	n->rv = rv;
	n->bytes = s->dir ? line_size(l) : 0;
	s->live_bytes += n->bytes;
	if (out)
		*out = json_incref(obj);
	event_push(s, prev ? STORE_MODIFIED : STORE_ADDED, r, n,
		   json_incref(obj), prev, evicted);
	return STORE_OK;
}

enum store_rc store_create(struct store *s, const char *res, const char *ns,
			   const char *name, json_t *obj, json_t **out)
{
	struct line l = { 0 };
	struct compaction *c = NULL;
	struct evicted evicted = { .nrecs = 0 };
	uint64_t h = key_hash(ns, name);
	struct resource *r;
	enum store_rc rc;

	obj = own(obj);
	if (!key_ok(res, ns, name) ||
	    (s->dir && line_build(&l, "put", res, ns, name, obj) != 0)) {
		json_decref(obj);
		sbuf_release(&l.b);
		return STORE_IO;
	}
	lock(s);
	r = resource_get(s, res);
	if (find(r, ns, name, h)) {
		json_decref(obj);
		rc = STORE_EXISTS;
	} else {
		rc = commit_put(s, r, NULL, ns, name, h, obj, &l, out,
				&evicted);
		if (rc == STORE_OK)
			c = compaction_due(s);
	}
	unlock(s);
	evicted_free(&evicted);
	sbuf_release(&l.b);
	if (c)
		compaction_finish(s, c);
	return rc;
}

enum store_rc store_update(struct store *s, const char *res, const char *ns,
			   const char *name, uint64_t expect_rv, json_t *obj,
			   json_t **out)
{
	struct line l = { 0 };
	struct compaction *c = NULL;
	struct evicted evicted = { .nrecs = 0 };
	uint64_t h = key_hash(ns, name);
	json_t *seen = NULL;
	struct resource *r;
	struct node *n;
	enum store_rc rc = STORE_OK;
	bool same;

	obj = own(obj);
	/* 1. Peek at the current object: most of the work needs no lock. */
	lock(s);
	n = find(resource_find(s, res), ns, name, h);
	if (!n)
		rc = STORE_NOT_FOUND;
	else if (expect_rv != 0 && n->rv != expect_rv)
		rc = STORE_CONFLICT;
	else
		seen = json_incref(n->obj);
	unlock(s);
	if (!seen) {
		json_decref(obj);
		return rc;
	}
	/* 2. Compare, share and serialize outside the lock. */
	same = equal_ignoring_rv(obj, seen);
	if (!same)
		(void)share_equal(obj, seen);
	if (!same && s->dir &&
	    line_build(&l, "put", res, ns, name, obj) != 0) {
		rc = STORE_IO;
		json_decref(obj);
		goto out;
	}
	/* 3. Commit, re-checking what may have changed meanwhile. */
	lock(s);
	r = resource_find(s, res);
	n = find(r, ns, name, h);
	if (!n) {
		rc = STORE_NOT_FOUND;
	} else if (expect_rv != 0 && n->rv != expect_rv) {
		rc = STORE_CONFLICT;
	} else {
		if (n->obj != seen) {
			same = equal_ignoring_rv(obj, n->obj);
			if (!same && s->dir && !l.b.buf &&
			    line_build(&l, "put", res, ns, name, obj) != 0) {
				unlock(s);
				rc = STORE_IO;
				json_decref(obj);
				goto out;
			}
		}
		if (same) {
			if (out)
				*out = json_incref(n->obj);
			rc = STORE_OK;
		} else {
			rc = commit_put(s, r, n, ns, name, h, obj, &l, out,
					&evicted);
			obj = NULL;
			if (rc == STORE_OK)
				c = compaction_due(s);
		}
	}
	unlock(s);
	json_decref(obj);
	evicted_free(&evicted);
out:
	json_decref(seen);
	sbuf_release(&l.b);
	if (c)
		compaction_finish(s, c);
	return rc;
}

enum store_rc store_delete(struct store *s, const char *res, const char *ns,
			   const char *name, uint64_t expect_rv, json_t **last)
{
	struct line l = { 0 };
	struct compaction *c = NULL;
	struct evicted evicted = { .nrecs = 0 };
	uint64_t h = key_hash(ns, name), rv;
	struct resource *r;
	struct node *n;
	json_t *fin, *md;
	enum store_rc rc = STORE_OK;

	lock(s);
	r = resource_find(s, res);
	n = find(r, ns, name, h);
	if (!n) {
		rc = STORE_NOT_FOUND;
		goto unlock;
	}
	if (expect_rv != 0 && n->rv != expect_rv) {
		rc = STORE_CONFLICT;
		goto unlock;
	}
	rv = s->rv + 1;
	if (s->dir) {
		/* a delete line is short: build it here (cannot fail) */
		(void)line_build(&l, "del", res, ns, name, NULL);
		line_seal(&l, rv);
		if (wal_append(s, &l) != 0) {
			rc = STORE_IO;
			goto unlock;
		}
	}
	__atomic_store_n(&s->rv, rv, __ATOMIC_RELEASE);
	/* The last state, at the deletion's RV, shares all but the top
	 * level and metadata with the stored object. */
	fin = must(json_copy(n->obj));
	md = must(json_copy(json_object_get(fin, "metadata")));
	json_object_set_new(fin, "metadata", md);
	set_rv(fin, rv);
	if (last)
		*last = json_incref(fin);
	node_unlink(r, n);
	s->live_bytes -= n->bytes;
	event_push(s, STORE_DELETED, r, n, fin, n->obj, &evicted);
	free(n);
	c = compaction_due(s);
unlock:
	unlock(s);
	evicted_free(&evicted);
	sbuf_release(&l.b);
	if (c)
		compaction_finish(s, c);
	return rc;
}

/* ---- reads ---- */

uint64_t store_rv(struct store *s)
{
	uint64_t rv;

	lock(s);
	rv = s->rv;
	unlock(s);
	return rv;
}

json_t *store_get(struct store *s, const char *res, const char *ns,
		  const char *name)
{
	uint64_t h = key_hash(ns, name);
	struct node *n;
	json_t *obj = NULL;

	lock(s);
	n = find(resource_find(s, res), ns, name, h);
	if (n)
		obj = json_incref(n->obj);
	unlock(s);
	return obj;
}

/*
 * Keys are "ns/name" ("/name" when cluster-scoped); an `after` without a
 * '/' is taken as a cluster-scoped name. `next` is in the same form.
 */
void store_list(struct store *s, const char *res,
		const struct store_list_opts *o, struct store_list_result *out)
{
	static const struct store_list_opts all;
	char *prefix = NULL, *after = NULL;
	size_t plen = 0, taken = 0;
	struct resource *r;
	struct node *n, *last = NULL;
	struct iter it;

	if (!o)
		o = &all;
	memset(out, 0, sizeof(*out));
	out->items = must(json_array());
	if (o->ns && *o->ns) {
		prefix = xasprintf("%s/", o->ns);
		plen = strlen(prefix);
	}
	if (o->after)
		after = strchr(o->after, '/') ? xstrdup(o->after) :
						xasprintf("/%s", o->after);
	lock(s);
	out->rv = s->rv;
	r = resource_find(s, res);
	if (!r)
		goto unlock;
	if (after && (!prefix || strcmp(after, prefix) >= 0))
		iter_seek(&it, r->root, after, false);
	else
		iter_seek(&it, r->root, prefix, true);
	while (o->limit == 0 || taken < o->limit) {
		n = iter_next(&it);
		if (!n || (prefix && strncmp(n->key, prefix, plen) != 0))
			goto unlock;
		if (o->filter && !o->filter(o->ctx, n->obj))
			continue;
		json_array_append(out->items, n->obj);
		taken++;
		last = n;
	}
	/* The page is full: count what matches after it, exactly. */
	if (o->filter) {
		for (n = iter_next(&it); n; n = iter_next(&it)) {
			if (prefix && strncmp(n->key, prefix, plen) != 0)
				break;
			if (o->filter(o->ctx, n->obj))
				out->remaining++;
		}
	} else if (prefix) {
		prefix[plen - 1] = '0'; /* ["ns/", "ns0") is the namespace */
		out->remaining = avl_rank(r->root, prefix, false) -
				 avl_rank(r->root, last->key, true);
	} else {
		out->remaining = r->n - avl_rank(r->root, last->key, true);
	}
	if (out->remaining > 0)
		out->next = xstrndup(last->key, last->key_len);
unlock:
	unlock(s);
	free(prefix);
	free(after);
}

void store_list_result_release(struct store_list_result *r)
{
	json_decref(r->items);
	free(r->next);
	memset(r, 0, sizeof(*r));
}

static void visit(const struct node *t, store_visit_fn *fn, void *ctx)
{
	if (!t)
		return;
	visit(t->left, fn, ctx);
	fn(ctx, node_ns(t), node_name(t), t->obj);
	visit(t->right, fn, ctx);
}

void store_visit(struct store *s, const char *res, store_visit_fn *fn,
		 void *ctx)
{
	struct resource *r;

	lock(s);
	r = resource_find(s, res);
	if (r)
		visit(r->root, fn, ctx);
	unlock(s);
}

size_t store_count(struct store *s, const char *res)
{
	struct resource *r;
	size_t n;

	lock(s);
	r = resource_find(s, res);
	n = r ? r->n : 0;
	unlock(s);
	return n;
}

uint64_t store_resource_rv(struct store *s, const char *res)
{
	struct resource *r;
	uint64_t rv;

	lock(s);
	r = resource_find(s, res);
	rv = r ? r->last_rv : 0;
	unlock(s);
	return rv;
}

/* ---- watch ---- */

void store_event_release(struct store_event *ev)
{
	event_put(ev->rec);
	memset(ev, 0, sizeof(*ev));
}

const char *store_event_memo(const struct store_event *ev, unsigned slot,
			     size_t *len)
{
	struct store_memo *m;

	if (slot >= STORE_MEMO_SLOTS)
		BUG("store: memo slot %u out of range", slot);
	m = atomic_load_explicit(&ev->rec->memo[slot], memory_order_acquire);
	if (!m)
		return NULL;
	*len = m->len;
	return m->bytes;
}

const char *store_event_memo_set(const struct store_event *ev,
				 unsigned slot, const char *bytes,
				 size_t len, size_t *out_len)
{
	struct store_memo *m = xmalloc(sizeof(*m) + len), *seen = NULL;

	if (slot >= STORE_MEMO_SLOTS)
		BUG("store: memo slot %u out of range", slot);
	m->len = len;
	memcpy(m->bytes, bytes, len);
	if (!atomic_compare_exchange_strong_explicit(
		    &ev->rec->memo[slot], &seen, m, memory_order_acq_rel,
		    memory_order_acquire)) {
		free(m); /* another reader was first: the bytes are equal */
		m = seen;
	}
	*out_len = m->len;
	return m->bytes;
}

/* Fills ev from e, taking one reference. Under the lock (or not: e is
 * immutable and the caller holds a reference). */
static void event_out(struct store_rec *e, struct store_event *ev)
{
	atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
	ev->type = e->type;
	ev->rv = e->rv;
	ev->res = e->res->name;
	ev->ns = e->key + e->key_len + 1;
	ev->name = e->key + e->ns_len + 1;
	ev->obj = e->obj;
	ev->prev = e->prev;
	ev->rec = e;
}

/*
 * timeout_ms < 0 waits without a deadline; 0 only looks. store_wake_all
 * ends every wait in progress with STORE_TIMEOUT; it is not sticky, so a
 * caller that checks its own shutdown flag before calling can still sleep
 * once for up to timeout_ms.
 */
enum store_rc store_next_events(struct store *s, uint64_t *cursor,
				const char *res, int timeout_ms,
				struct store_event *evs, size_t max,
				size_t *got)
{
	struct timespec deadline;
	enum store_rc rc;
	uint64_t gen;
	size_t n = 0;

	if (max == 0)
		BUG("store: store_next_events with max 0");
	*got = 0;
	/* Nothing after the cursor: a cursor at or past rv cannot be older
	 * than any history (every base is <= rv), so no GONE to report. */
	if (timeout_ms == 0 &&
	    *cursor >= __atomic_load_n(&s->rv, __ATOMIC_ACQUIRE))
		return STORE_TIMEOUT;
	if (timeout_ms > 0) {
		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += timeout_ms / 1000;
		deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
	lock(s);
	gen = s->wake_gen;
	for (;;) {
		struct resource *r = res ? resource_find(s, res) : NULL;
		pthread_cond_t *c;
		int w;

		if (!res) {
			if (*cursor < s->hist_base) {
				rc = STORE_GONE;
				goto unlock;
			}
			while (*cursor < s->rv && n < max) {
				struct store_rec *e = hist_at(
					&s->ring,
					(size_t)(*cursor - s->hist_base));

				*cursor = e->rv;
				event_out(e, &evs[n++]);
			}
		} else {
			size_t i;

			if (*cursor < s->open_rv ||
			    (r && *cursor < r->hist_base)) {
				rc = STORE_GONE;
				goto unlock;
			}
			/* A filter on a resource that does not exist yet
			 * matches nothing so far: skip to the end. */
			i = r ? hist_after(&r->hist, *cursor) : 0;
			for (; r && i < r->hist.n && n < max; i++) {
				struct store_rec *e = hist_at(&r->hist, i);

				*cursor = e->rv;
				event_out(e, &evs[n++]);
			}
			/* nothing of r after the cursor: skip the rest */
			if (n == 0 && *cursor < s->rv)
				*cursor = s->rv;
		}
		if (n) {
			rc = STORE_OK;
			goto unlock;
		}
		if (gen != s->wake_gen || timeout_ms == 0) {
			rc = STORE_TIMEOUT;
			goto unlock;
		}
		/* A filtered waiter sleeps on its resource's condition, so
		 * other resources' events do not wake it (the resource is
		 * made, empty, if it has never been written yet). */
		if (res && !r)
			r = resource_get(s, res);
		c = r ? &r->cond : &s->cond;
		if (timeout_ms < 0) {
			pthread_cond_wait(c, &s->mu);
			continue;
		}
		w = pthread_cond_timedwait(c, &s->mu, &deadline);
		if (w == ETIMEDOUT)
			timeout_ms = 0; /* one last look, then give up */
	}
unlock:
	unlock(s);
	*got = n;
	return rc;
}

enum store_rc store_next_event(struct store *s, uint64_t *cursor,
			       const char *res, int timeout_ms,
			       struct store_event *ev)
{
	size_t n;

	return store_next_events(s, cursor, res, timeout_ms, ev, 1, &n);
}

void store_wake_all(struct store *s)
{
	lock(s);
	s->wake_gen++;
	pthread_cond_broadcast(&s->cond);
	for (size_t i = 0; i < s->nres; i++)
		pthread_cond_broadcast(&s->res[i]->cond);
	unlock(s);
}

/* ---- open, replay, free ---- */

/* mkdir -p */
static int make_dir(const char *dir, struct err *err)
{
	char *p;
	int rc = 0;

	if (!*dir)
		return err_set(err, "store: the data dir is an empty path");
	p = xstrdup(dir);
	for (char *q = p + 1;; q++) {
		bool end = *q == '\0';

		if (*q != '/' && !end)
			continue;
		*q = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			rc = err_set(err, "store: mkdir %s: %s", p,
				     strerror(errno));
			break;
		}
		if (end)
			break;
		*q = '/';
	}
	free(p);
	return rc;
}

/* Applies one record; rv <= floor only raises *max_rv. Returns 0, or -1
 * when the record is malformed. */
static int apply_record(struct store *s, json_t *rec, size_t bytes,
			uint64_t floor, uint64_t *max_rv)
{
	json_t *jrv = json_object_get(rec, "rv");
	json_t *obj = json_object_get(rec, "obj");
	const char *op = json_string_value(json_object_get(rec, "op"));
	const char *res = json_string_value(json_object_get(rec, "res"));
	const char *ns = json_string_value(json_object_get(rec, "ns"));
	const char *name = json_string_value(json_object_get(rec, "name"));
	struct resource *r;
	struct node *n;
	uint64_t rv, h;
	bool put;

	if (!json_is_integer(jrv) || json_integer_value(jrv) < 1 || !op ||
	    !res || !ns || !name || !key_ok(res, ns, name))
		return -1;
	put = strcmp(op, "put") == 0;
	if ((put && !json_is_object(obj)) || (!put && strcmp(op, "del") != 0))
		return -1;
	rv = (uint64_t)json_integer_value(jrv);
	if (rv > *max_rv)
		*max_rv = rv;
	if (rv <= floor)
		return 0;
	r = resource_get(s, res);
	h = key_hash(ns, name);
	n = find(r, ns, name, h);
	if (!put) {
		if (n) {
			node_unlink(r, n);
			s->live_bytes -= n->bytes;
			json_decref(n->obj);
			free(n);
		}
		return 0;
	}
	obj = json_incref(obj); /* fresh from the parser: ours to modify */
	set_rv(obj, rv);
	if (n) {
		json_decref(n->obj);
		s->live_bytes -= n->bytes;
	} else {
		n = node_new(ns, name, h);
		node_insert(r, n);
	}
	n->obj = obj;
	n->rv = rv;
	n->bytes = bytes;
	s->live_bytes += n->bytes;
	return 0;
}

/*
 * Replays one WAL file (a missing one is empty). *good_end gets the
 * offset after the last valid line: a torn last line is ignored, a bad
 * line with good ones after it is an error.
 */
static int replay_wal(struct store *s, const char *path, uint64_t floor,
		      uint64_t *max_rv, off_t *good_end, struct err *err)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	off_t off = 0;
	unsigned lineno = 0, bad = 0;
	char why[JSON_ERROR_TEXT_LENGTH] = "";
	int rc = 0;

	*good_end = 0;
	if (!f)
		return errno == ENOENT ? 0 :
		       err_set(err, "store: %s: %s", path, strerror(errno));
	for (;;) {
		ssize_t len = getline(&buf, &cap, f);
		json_error_t je;
		json_t *rec;

		if (len < 0)
			break;
		lineno++;
		if (buf[len - 1] != '\n')
			break; /* torn: the last line by definition */
		rec = json_loadb(buf, (size_t)len, JSON_ALLOW_NUL, &je);
		if (bad) {
			/* garbage may span lines; a record after it may not */
			bool record = json_is_integer(json_object_get(rec,
								      "rv"));

			json_decref(rec);
			if (!record)
				continue;
			rc = err_set(err, "store: %s: line %u: corrupt record "
				     "(%s) followed by more records", path,
				     bad, why);
			goto out;
		}
		if (!rec || apply_record(s, rec, (size_t)len, floor,
					 max_rv) != 0) {
			bad = lineno;
			snprintf(why, sizeof(why), "%s",
				 rec ? "not a store record" : je.text);
		} else {
			off += len;
		}
		json_decref(rec);
	}
	if (ferror(f))
		rc = err_set(err, "store: reading %s: %s", path,
			     strerror(errno));
	*good_end = off;
out:
	fclose(f);
	free(buf);
	return rc;
}

/* Loads DIR/snapshot when present; *snap_rv gets its RV (0: none). */
static int load_snapshot(struct store *s, uint64_t *snap_rv,
			 struct err *err)
{
	char *path = path_in(s, "snapshot");
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, count = 0;
	unsigned lineno = 0;
	uint64_t ignored = 0;
	bool ended = false;
	int rc = 0;

	*snap_rv = 0;
	if (!f) {
		if (errno != ENOENT)
			rc = err_set(err, "store: %s: %s", path,
				     strerror(errno));
		free(path);
		return rc;
	}
	for (;;) {
		ssize_t len = getline(&buf, &cap, f);
		json_error_t je;
		json_t *rec;
		bool ok;

		if (len < 0)
			break;
		lineno++;
		rec = json_loadb(buf, (size_t)len, JSON_ALLOW_NUL, &je);
		if (ended || !rec) {
			ok = false;
		} else if (lineno == 1) {
			json_t *jrv = json_object_get(rec, "rv");

			ok = json_is_integer(json_object_get(rec, "snapshot")) &&
			     json_is_integer(jrv) && json_integer_value(jrv) >= 0;
			if (ok)
				*snap_rv = (uint64_t)json_integer_value(jrv);
		} else if (json_object_get(rec, "end")) {
			json_t *jc = json_object_get(rec, "count");

			ended = true;
			ok = json_is_integer(jc) &&
			     (size_t)json_integer_value(jc) == count;
		} else {
			ok = apply_record(s, rec, (size_t)len, 0, &ignored) == 0;
			count++;
		}
		json_decref(rec);
		if (!ok) {
			rc = err_set(err, "store: %s: line %u: corrupt snapshot",
				     path, lineno);
			goto out;
		}
	}
	if (!ended)
		rc = err_set(err, "store: %s: truncated snapshot", path);
out:
	fclose(f);
	free(buf);
	free(path);
	return rc;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtoull(v, &end, 10);
	return errno != 0 || *end != '\0' ? dflt : (uint64_t)x;
}

static int open_dir(struct store *s, struct err *err)
{
	char *p = NULL, *wal = path_in(s, "wal"), *old = path_in(s, "wal.old");
	uint64_t snap_rv, max_rv = 0;
	off_t end, old_end;
	struct stat st;
	int rc = -1;

	if (make_dir(s->dir, err) != 0)
		goto out;
	p = path_in(s, "lock");
	s->lock_fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (s->lock_fd < 0) {
		err_set(err, "store: %s: %s", p, strerror(errno));
		goto out;
	}
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		err_set(err, "store: %s is in use by another process (%s)",
			s->dir, strerror(errno));
		goto out;
	}
	/* Leftovers of an interrupted compaction (see DESIGN). */
	free(p);
	p = path_in(s, "snapshot.tmp");
	unlink(p);
	free(p);
	p = path_in(s, "wal.new");
	unlink(p);
	if (load_snapshot(s, &snap_rv, err) != 0)
		goto out;
	max_rv = snap_rv;
	s->old_pending = stat(old, &st) == 0;
	if (s->old_pending &&
	    replay_wal(s, old, snap_rv, &max_rv, &old_end, err) != 0)
		goto out;
	if (replay_wal(s, wal, snap_rv, &max_rv, &end, err) != 0)
		goto out;
	s->wal_fd = open(wal, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (s->wal_fd < 0 || fstat(s->wal_fd, &st) != 0) {
		err_set(err, "store: %s: %s", wal, strerror(errno));
		goto out;
	}
	if (st.st_size > end && ftruncate(s->wal_fd, end) != 0) {
		err_set(err, "store: dropping the torn end of %s: %s", wal,
			strerror(errno));
		goto out;
	}
	s->wal_bytes = (uint64_t)end;
	__atomic_store_n(&s->rv, max_rv, __ATOMIC_RELEASE);
	s->hist_base = max_rv;
	s->open_rv = max_rv;
	if (s->old_pending) {
		/* Fold wal.old into a snapshot now; if that fails, replay
		 * still reads it next time. */
		compaction_finish(s, compaction_begin(s, false));
	}
	rc = 0;
out:
	free(p);
	free(wal);
	free(old);
	return rc;
}

struct store *store_new(const struct store_opts *opts, struct err *err)
{
	struct store *s = xcalloc(1, sizeof(*s));
	pthread_mutexattr_t ma;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&s->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	cond_init_mono(&s->cond);
	s->keep_n = opts->watch_history ? opts->watch_history : 1;
	s->keep_ms = opts->watch_history_ms;
	s->keep_max = opts->watch_history_max > s->keep_n ?
		      opts->watch_history_max : s->keep_n;
	s->clock = opts->clock;
	s->clock_ctx = opts->clock_ctx;
	s->wal_fd = -1;
	s->lock_fd = -1;
	s->fsync_each = env_u64("CUEUE_DEVSERVER_FSYNC",
				CUEUE_DEVSERVER_FSYNC) != 0;
	s->compact_min = env_u64("CUEUE_STORE_COMPACT_BYTES",
				 COMPACT_BYTES_DEFAULT);
	if (s->compact_min == 0)
		s->compact_min = COMPACT_BYTES_DEFAULT;
	if (opts->data_dir) {
		s->dir = xstrdup(opts->data_dir);
		if (open_dir(s, err) != 0) {
			store_free(s);
			return NULL;
		}
	}
	assert(invariants_ok(s));
	return s;
}

void store_free(struct store *s)
{
	if (!s)
		return;
	assert(invariants_ok(s));
	hist_release(&s->ring); /* borrowed entries */
	for (size_t i = 0; i < s->nres; i++) {
		struct resource *r = s->res[i];

		for (size_t k = 0; k < r->hist.n; k++)
			event_put(hist_at(&r->hist, k));
		hist_release(&r->hist);

		for (size_t b = 0; b < r->nbuckets; b++) {
			struct node *n = r->buckets[b], *next;

			for (; n; n = next) {
				next = n->hnext;
				json_decref(n->obj);
				free(n);
			}
		}
		free(r->buckets);
		free(r->name);
		pthread_cond_destroy(&r->cond);
		free(r);
	}
	free(s->res);
	if (s->wal_fd >= 0)
		close(s->wal_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s->dir);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
