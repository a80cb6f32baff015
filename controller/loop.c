/*
 * loop: the one event loop of cueue-manager, and the only thread of the
 * controller.
 *
 * Everything the controller does (informers, reconcilers, the scheduler,
 * status writes) runs on the thread that calls loop_run, inside one of the
 * callbacks below, and no lock guards controller state: no other thread
 * touches it. What the loop shares with the webhook's and the metrics
 * servers' threads (README "Threads") is immutable or behind a leaf lock:
 * the webhook's namespace view, which the loop publishes whole and
 * requests take a reference to under snap_lock (webhook/webhook.c); the
 * metrics registry (atomic values, one mutex per family and one for the
 * family list, never two held at once); the readiness flags (atomics).
 * Background work (loop_work_start: certificate key generation) runs on
 * a thread of its own that sees only its argument; it reports back by
 * setting its record's atomic done flag and writing a 0 byte to the
 * self-pipe (signals are never 0), and the loop joins it and runs its
 * done callback in step 1. The records' list is the loop's alone.
 * Adding a thread or a lock means editing this text and the README first.
 *
 * Each iteration, in this order (nginx's ngx_process_events_and_timers,
 * Redis' beforeSleep):
 *   0. wait in epoll_wait() for the sockets libcurl asked to watch, the
 *      signal self-pipe, libcurl's own timeout, or the nearest timer of
 *      the heap (capped by max_wait_ms), then read `now` (monotonic and
 *      wall clock) once; every callback of this iteration sees that value;
 *   1. drain finished and streaming transfers: curl_multi_socket_action()
 *      for each ready socket (and for libcurl's timeout when due) feeds
 *      body bytes to their owners, which decode watch events and hand them
 *      to the store and cache; then every finished transfer's done
 *      callback runs (replies, retries, re-lists);
 *   2. fire due timers (rate-limit waits, backoff retries, resyncs);
 *   3. the before-sleep hooks (the manager's: if anything changed, run
 *      one scheduling cycle and queue the resulting writes).
 * A signal (SIGINT/SIGTERM) only writes a byte to the self-pipe; step 0
 * notices it and the loop finishes the iteration and returns.
 *
 * DESIGN. libcurl's socket interface (CURLMOPT_SOCKETFUNCTION and
 * TIMERFUNCTION, kept in an epoll set) rather than curl_multi_poll and
 * curl_multi_perform, which poll every socket of every transfer on each
 * call, a dozen idle watches included: only the transfers whose sockets
 * are ready run.
 *
 * libcurl refuses multi calls made from inside its own callbacks
 * (CURLM_RECURSIVE_API_CALL), yet a watch event delivered from a body
 * callback may well start a request or stop an informer. So the body and
 * header callbacks go through trampolines that count the nesting; a start
 * or stop made inside is recorded on the transfer and applied by
 * sync_pending() as soon as each curl_multi_socket_action() call has
 * returned, and a stopped transfer's later bytes are refused without
 * reaching its owner.
 */
#include "controller/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/dlist.h"

#define DEFAULT_MAX_WAIT_MS 10000
#define MAX_EVENTS 64 /* epoll events taken per wait */

struct loop_transfer {
	struct loop *l;                     /* borrowed */
	CURL *easy;                         /* owned */
	const struct loop_transfer_ops *ops; /* borrowed */
	void *ud;                           /* borrowed */
	bool added;     /* in the multi handle */
	bool stopped;   /* stopped inside a callback; freed by sync_pending */
	bool finishing; /* its done callback is running */
	struct dlist link;                  /* on the loop's transfers */
};

struct loop_work {
	struct loop *l;               /* borrowed */
	loop_work_fn *work;
	loop_work_done_fn *done;
	void *arg;                    /* the work's until done */
	pthread_t thread;
	atomic_bool finished;         /* set by the thread as it ends */
	bool cancelled;
	struct dlist link;            /* on the loop's works */
};

struct loop {
	CURLM *multi;             /* owned */
	int epfd;                 /* owned; curl's sockets and pipe_rd */
	int64_t multi_due_ms;      /* CLOCK_MONOTONIC time libcurl wants its
				     timeout action; -1: none */
	struct timers timers;     /* borrowed timers of the owners */
	int pipe_rd, pipe_wr;     /* the signal self-pipe; non-blocking */
	bool signals;             /* handlers installed (old ones saved) */
	struct sigaction old_int, old_term;
	bool stopping;            /* loop_run returns after this iteration */
	int signal;               /* the signal that stopped it, or 0 */
	int64_t now_ms;           /* CLOCK_MONOTONIC, cached per iteration */
	int64_t wall_ms;          /* CLOCK_REALTIME, cached at the same time */
	int64_t max_wait_ms;      /* > 0 */
	uint64_t iterations;
	struct {
		loop_hook_fn *fn;
		void *ud;
	} hooks[LOOP_HOOKS_MAX];  /* before-sleep steps, in order added */
	size_t nhooks;
	int in_callback;          /* nesting of curl byte callbacks */
	bool pending;             /* a transfer waits for add or removal */
	struct dlist transfers;     /* every loop_transfer, newest first */
	size_t ntransfers;        /* started, not ended or stopped */
	CURL *easy_pool[LOOP_EASY_POOL]; /* owned; reset handles of ended
					    transfers (loop_easy_new) */
	size_t neasy;
	struct dlist works;       /* every loop_work not yet done */
	size_t nworks;
};

/* The write end of the self-pipe of the loop that handles signals. A
 * signal handler can reach nothing else. */
static volatile sig_atomic_t sig_fd = -1;

static void on_signal(int signo)
{
	int saved = errno;
	unsigned char b = (unsigned char)signo;

	if (sig_fd >= 0 && write(sig_fd, &b, 1) < 0) {
		/* pipe full: a stop is already pending */
	}
	errno = saved;
}

static int64_t clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void read_clocks(struct loop *l)
{
	l->now_ms = clock_ms(CLOCK_MONOTONIC);
	l->wall_ms = clock_ms(CLOCK_REALTIME);
}

static int set_nonblock_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static int install_signals(struct loop *l, struct err *err)
{
	struct sigaction sa;

	if (sig_fd >= 0)
		return err_set(err, "another loop already handles signals");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sig_fd = l->pipe_wr;
	if (sigaction(SIGINT, &sa, &l->old_int) < 0)
		goto fail;
	if (sigaction(SIGTERM, &sa, &l->old_term) < 0) {
		sigaction(SIGINT, &l->old_int, NULL);
		goto fail;
	}
	l->signals = true;
	return 0;
fail:
	sig_fd = -1;
	return err_set(err, "sigaction: %s", strerror(errno));
}

/* CURLMOPT_SOCKETFUNCTION: keeps the epoll set as libcurl asks. */
static int sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
		   void *socketp)
{
	struct loop *l = userp;
	struct epoll_event ev;

	(void)easy;
	(void)socketp;
	if (what == CURL_POLL_REMOVE) {
		/* fails harmlessly when libcurl already closed it */
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		return 0;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0) |
		    ((what & CURL_POLL_OUT) ? EPOLLOUT : 0);
	ev.data.fd = fd;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
		return 0;
	if (errno == EEXIST && epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) == 0)
		return 0;
	return -1;
}

/* CURLMOPT_TIMERFUNCTION: when libcurl wants socket_action(TIMEOUT). */
static int timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct loop *l = userp;

	(void)multi;
	l->multi_due_ms = timeout_ms < 0 ? -1
			 : clock_ms(CLOCK_MONOTONIC) + timeout_ms;
	return 0;
}

struct loop *loop_new(const struct loop_opts *o, struct err *err)
{
	struct loop *l = xcalloc(1, sizeof(*l));
	int fds[2];

	dlist_init(&l->transfers);
	dlist_init(&l->works);
	l->pipe_rd = l->pipe_wr = -1;
	l->epfd = -1;
	l->multi_due_ms = -1;
	timers_init(&l->timers);
	l->max_wait_ms = o && o->max_wait_ms > 0 ? o->max_wait_ms
						 : DEFAULT_MAX_WAIT_MS;
	read_clocks(l);
	if (curl_global_init_mem(CURL_GLOBAL_DEFAULT, xmalloc, free, xrealloc,
				 xstrdup, xcalloc) != CURLE_OK) {
		free(l);
		err_set(err, "curl_global_init failed");
		return NULL;
	}
	l->multi = curl_multi_init();
	if (!l->multi) {
		err_set(err, "curl_multi_init failed");
		goto fail;
	}
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		err_set(err, "epoll_create1: %s", strerror(errno));
		goto fail;
	}
	curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
	curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
	/*
	 * At most LOOP_MAX_HOST_CONNS connections per API server; more
	 * transfers wait inside libcurl for a free one. Without a cap a burst
	 * of writes opens hundreds of connections and runs into the server's
	 * connection limit (client-go shares a few HTTP/2 connections). The
	 * long-lived watches (about a dozen) hold theirs for good.
	 */
	curl_multi_setopt(l->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
			  (long)LOOP_MAX_HOST_CONNS);
	/* Keep every one of them open between bursts: libcurl's default
	 * cache (four per easy handle added at the time) closed idle
	 * connections whenever few transfers were running, and each new
	 * one cost a TLS handshake (about six a second under a stream of
	 * workloads). */
	curl_multi_setopt(l->multi, CURLMOPT_MAXCONNECTS,
			  (long)LOOP_MAX_HOST_CONNS * 2);
	if (pipe(fds) < 0) {
		err_set(err, "pipe: %s", strerror(errno));
		goto fail;
	}
	l->pipe_rd = fds[0];
	l->pipe_wr = fds[1];
	if (set_nonblock_cloexec(l->pipe_rd) < 0 ||
	    set_nonblock_cloexec(l->pipe_wr) < 0) {
		err_set(err, "fcntl: %s", strerror(errno));
		goto fail;
	}
	{
		struct epoll_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.fd = l->pipe_rd;
		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->pipe_rd, &ev) < 0) {
			err_set(err, "epoll_ctl: %s", strerror(errno));
			goto fail;
		}
	}
	if (o && o->handle_signals && install_signals(l, err) < 0)
		goto fail;
	return l;
fail:
	loop_free(l);
	return NULL;
}

/* Takes t out of the multi handle and frees it and its easy handle. */
/* reuse: the transfer ran to its end, so its handle may serve another
 * (loop_easy_new) once reset; a stopped one is cleaned up. */
static void transfer_destroy(struct loop *l, struct loop_transfer *t,
			     bool reuse)
{
	if (t->added)
		curl_multi_remove_handle(l->multi, t->easy);
	if (reuse && l->neasy < LOOP_EASY_POOL) {
		curl_easy_reset(t->easy);
		l->easy_pool[l->neasy++] = t->easy;
	} else {
		curl_easy_cleanup(t->easy);
	}
	dlist_remove(&t->link);
	if (t->ops->release)
		t->ops->release(t->ud);
	free(t);
}

static void works_reap(struct loop *l, bool wait);

void loop_free(struct loop *l)
{
	if (!l)
		return;
	works_reap(l, true);
	while (!dlist_empty(&l->transfers))
		transfer_destroy(l, DLIST_ENTRY(l->transfers.next,
						struct loop_transfer, link),
				 false);
	while (l->neasy)
		curl_easy_cleanup(l->easy_pool[--l->neasy]);
	if (l->signals) {
		sigaction(SIGINT, &l->old_int, NULL);
		sigaction(SIGTERM, &l->old_term, NULL);
		sig_fd = -1;
	}
	if (l->pipe_rd >= 0)
		close(l->pipe_rd);
	if (l->pipe_wr >= 0)
		close(l->pipe_wr);
	timers_release(&l->timers);
	if (l->multi)
		curl_multi_cleanup(l->multi); /* may still call sock_cb */
	if (l->epfd >= 0)
		close(l->epfd);
	curl_global_cleanup();
	free(l);
}

/* ---- clocks, stop, hook, timers ---- */

int64_t loop_now_ms(const struct loop *l)
{
	return l->now_ms;
}

int64_t loop_wall_ms(const struct loop *l)
{
	return l->wall_ms;
}

void loop_stop(struct loop *l)
{
	l->stopping = true;
}

void loop_resume(struct loop *l)
{
	l->stopping = false;
	l->signal = 0;
}

bool loop_is_stopping(const struct loop *l)
{
	return l->stopping;
}

int loop_signal(const struct loop *l)
{
	return l->signal;
}

uint64_t loop_iterations(const struct loop *l)
{
	return l->iterations;
}

void loop_before_sleep_add(struct loop *l, loop_hook_fn *fn, void *ud)
{
	for (size_t i = 0; i < l->nhooks; i++)
		if (l->hooks[i].fn == fn && l->hooks[i].ud == ud)
			BUG("before-sleep hook added twice");
	if (l->nhooks == LOOP_HOOKS_MAX)
		BUG("more than LOOP_HOOKS_MAX before-sleep hooks");
	l->hooks[l->nhooks].fn = fn;
	l->hooks[l->nhooks].ud = ud;
	l->nhooks++;
}

void loop_before_sleep_remove(struct loop *l, loop_hook_fn *fn, void *ud)
{
	for (size_t i = 0; i < l->nhooks; i++)
		if (l->hooks[i].fn == fn && l->hooks[i].ud == ud) {
			memmove(&l->hooks[i], &l->hooks[i + 1],
				(l->nhooks - i - 1) * sizeof(l->hooks[0]));
			l->nhooks--;
			return;
		}
}

void loop_timer_arm(struct loop *l, struct timer *t, int64_t delay_ms)
{
	loop_timer_arm_at(l, t, l->now_ms + (delay_ms > 0 ? delay_ms : 0));
}

void loop_timer_arm_at(struct loop *l, struct timer *t, int64_t due_ms)
{
	timers_arm(&l->timers, t, due_ms);
}

void loop_timer_cancel(struct loop *l, struct timer *t)
{
	timers_cancel(&l->timers, t);
}

/* ---- transfers ---- */

CURL *loop_easy_new(struct loop *l)
{
	if (l->neasy)
		return l->easy_pool[--l->neasy];
	return curl_easy_init();
}

static size_t body_cb(char *data, size_t size, size_t n, void *ud)
{
	struct loop_transfer *t = ud;
	size_t len = size * n, rc;

	if (t->stopped)
		return len ? 0 : 1; /* abort; its owner is gone */
	t->l->in_callback++;
	rc = t->ops->body(t->ud, data, len);
	t->l->in_callback--;
	return rc;
}

static size_t header_cb(char *data, size_t size, size_t n, void *ud)
{
	struct loop_transfer *t = ud;
	size_t len = size * n, rc;

	if (t->stopped)
		return len ? 0 : 1;
	if (!t->ops->header)
		return len;
	t->l->in_callback++;
	rc = t->ops->header(t->ud, data, len);
	t->l->in_callback--;
	return rc;
}

size_t loop_transfer_count(const struct loop *l)
{
	return l->ntransfers;
}

static void transfer_add(struct loop *l, struct loop_transfer *t)
{
	CURLMcode mc = curl_multi_add_handle(l->multi, t->easy);

	if (mc != CURLM_OK)
		BUG("curl_multi_add_handle: %s", curl_multi_strerror(mc));
	t->added = true;
}

struct loop_transfer *loop_transfer_start(struct loop *l, CURL *easy,
					  const struct loop_transfer_ops *ops,
					  void *ud)
{
	struct loop_transfer *t = xcalloc(1, sizeof(*t));

	if (!ops->body || !ops->done)
		BUG("transfer without body or done callback");
	t->l = l;
	t->easy = easy;
	t->ops = ops;
	t->ud = ud;
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, t);
	curl_easy_setopt(easy, CURLOPT_PRIVATE, t);
	dlist_insert_after(&l->transfers, &t->link);
	l->ntransfers++;
	if (l->in_callback)
		l->pending = true;
	else
		transfer_add(l, t);
	return t;
}

void loop_transfer_stop(struct loop *l, struct loop_transfer *t)
{
	if (t->finishing)
		BUG("transfer stopped from its own done callback");
	if (t->stopped)
		BUG("transfer stopped twice");
	l->ntransfers--;
	if (l->in_callback) {
		t->stopped = true;
		l->pending = true;
		return;
	}
	transfer_destroy(l, t, false);
}

/* Applies the starts and stops recorded inside curl callbacks. */
static void sync_pending(struct loop *l)
{
	struct dlist *pos, *tmp;

	if (!l->pending)
		return;
	l->pending = false;
	DLIST_FOREACH_SAFE(pos, tmp, &l->transfers) {
		struct loop_transfer *t =
			DLIST_ENTRY(pos, struct loop_transfer, link);

		if (t->stopped)
			transfer_destroy(l, t, false);
		else if (!t->added)
			transfer_add(l, t);
	}
}

/* Step 1: run the transfers whose sockets are ready (evs) and libcurl's
 * timeout when due, then end the finished ones. */
static int drain(struct loop *l, const struct epoll_event *evs, int nev,
		 struct err *err)
{
	CURLMcode mc;
	CURLMsg *msg;
	int running, left;

	sync_pending(l);
	for (int i = 0; i < nev; i++) {
		int fd = evs[i].data.fd, mask = 0;

		if (fd == l->pipe_rd)
			continue;
		if (evs[i].events & EPOLLIN)
			mask |= CURL_CSELECT_IN;
		if (evs[i].events & EPOLLOUT)
			mask |= CURL_CSELECT_OUT;
		if (evs[i].events & (EPOLLERR | EPOLLHUP))
			mask |= CURL_CSELECT_ERR;
		/* a socket closed by an earlier action is ignored */
		mc = curl_multi_socket_action(l->multi, fd, mask, &running);
		sync_pending(l);
		if (mc != CURLM_OK)
			return err_set(err, "curl_multi_socket_action: %s",
				       curl_multi_strerror(mc));
	}
	if (l->multi_due_ms >= 0 && l->multi_due_ms <= l->now_ms) {
		l->multi_due_ms = -1; /* timer_cb may set the next one */
		mc = curl_multi_socket_action(l->multi, CURL_SOCKET_TIMEOUT, 0,
					      &running);
		sync_pending(l);
		if (mc != CURLM_OK)
			return err_set(err, "curl_multi_socket_action: %s",
				       curl_multi_strerror(mc));
	}
	while ((msg = curl_multi_info_read(l->multi, &left)) != NULL) {
		CURL *easy = msg->easy_handle;
		CURLcode rc = msg->data.result;
		struct loop_transfer *t;
		char *priv = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
		t = (struct loop_transfer *)(void *)priv;
		if (!t)
			BUG("finished transfer without its loop record");
		curl_multi_remove_handle(l->multi, easy);
		t->added = false;
		if (!t->stopped) {
			l->ntransfers--;
			t->finishing = true;
			t->ops->done(t->ud, easy, rc);
		}
		transfer_destroy(l, t, !t->stopped);
	}
	sync_pending(l);
	return 0;
}

/* ---- background work ---- */

void loop_wake(struct loop *l)
{
	unsigned char zero = 0;

	/* signals are never 0: drain_signals ignores the byte */
	if (write(l->pipe_wr, &zero, 1) < 0) {
	}
}

static void *work_main(void *p)
{
	struct loop_work *w = p;

	w->work(w->arg);
	atomic_store(&w->finished, true);
	/* A full pipe already holds a wake-up; the loop reaps every
	 * finished work whichever byte woke it. */
	loop_wake(w->l);
	return NULL;
}

struct loop_work *loop_work_start(struct loop *l, loop_work_fn *work,
				  loop_work_done_fn *done, void *arg,
				  struct err *err)
{
	struct loop_work *w = xcalloc(1, sizeof(*w));
	int rc;

	w->l = l;
	w->work = work;
	w->done = done;
	w->arg = arg;
	atomic_init(&w->finished, false);
	rc = pthread_create(&w->thread, NULL, work_main, w);
	if (rc != 0) {
		free(w);
		err_set(err, "pthread_create: %s", strerror(rc));
		return NULL;
	}
	dlist_insert_after(&l->works, &w->link);
	l->nworks++;
	return w;
}

void loop_work_cancel(struct loop *l, struct loop_work *w)
{
	(void)l;
	if (w)
		w->cancelled = true;
}

size_t loop_work_running(const struct loop *l)
{
	return l->nworks;
}

/* Joins the finished works (every one when wait) and runs their done
 * callbacks. A done callback may start or cancel works. */
static void works_reap(struct loop *l, bool wait)
{
	for (;;) {
		struct loop_work *w = NULL;
		struct dlist *pos;

		DLIST_FOREACH(pos, &l->works) {
			struct loop_work *c =
				DLIST_ENTRY(pos, struct loop_work, link);

			if (wait || atomic_load(&c->finished)) {
				w = c;
				break;
			}
		}
		if (!w)
			return;
		pthread_join(w->thread, NULL);
		dlist_remove(&w->link);
		l->nworks--;
		w->done(w->arg, w->cancelled || wait);
		free(w);
	}
}

/* Reads every byte of the self-pipe; each is a signal number. */
static void drain_signals(struct loop *l)
{
	unsigned char buf[64];
	ssize_t n;

	while ((n = read(l->pipe_rd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == SIGINT || buf[i] == SIGTERM) {
				l->stopping = true;
				if (!l->signal)
					l->signal = buf[i];
			}
		}
	}
}

int loop_run_once(struct loop *l, int64_t max_wait_ms, struct err *err)
{
	struct epoll_event evs[MAX_EVENTS];
	int64_t wait = max_wait_ms, next = timers_next_due(&l->timers);
	int64_t now;
	int nev;

	sync_pending(l);
	/* 0. Wait. The timeout uses a fresh clock reading, so a slow
	 * iteration does not oversleep the next timer. */
	now = clock_ms(CLOCK_MONOTONIC);
	if (next != INT64_MAX && next - now < wait)
		wait = next - now;
	if (l->multi_due_ms >= 0 && l->multi_due_ms - now < wait)
		wait = l->multi_due_ms - now;
	if (l->stopping || wait < 0)
		wait = 0;
	if (wait > INT32_MAX)
		wait = INT32_MAX;
	nev = epoll_wait(l->epfd, evs, MAX_EVENTS, (int)wait);
	if (nev < 0) {
		if (errno != EINTR)
			return err_set(err, "epoll_wait: %s",
				       strerror(errno));
		nev = 0;
	}
	read_clocks(l);
	for (int i = 0; i < nev; i++)
		if (evs[i].data.fd == l->pipe_rd)
			drain_signals(l);
	/* 1. Transfers: streaming bytes, then the finished ones; then
	 * finished background work. */
	if (drain(l, evs, nev, err) < 0)
		return -1;
	if (l->nworks)
		works_reap(l, false);
	/* 2. Due timers. */
	timers_fire_due(&l->timers, l->now_ms);
	/* 3. Before sleep. */
	for (size_t i = 0; i < l->nhooks; i++)
		l->hooks[i].fn(l->hooks[i].ud);
	l->iterations++;
	return 0;
}

int loop_run(struct loop *l, struct err *err)
{
	while (!l->stopping) {
		if (loop_run_once(l, l->max_wait_ms, err) < 0)
			return -1;
	}
	/* A loop_stop is consumed, so the loop can be run again; a signal
	 * stays, and the next run returns at once. */
	if (!l->signal)
		l->stopping = false;
	return 0;
}
