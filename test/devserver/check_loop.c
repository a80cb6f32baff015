/*
 * Suite "loop": the controller's event loop (controller/loop.h) without
 * an API server. Transfers are file:// reads (and one loopback socket that
 * never answers), so the tests see the iteration order of STYLE P7 —
 * transfers, then timers, then the before-sleep hook — the clock cached
 * per iteration, starts and stops made inside libcurl's callbacks,
 * loop_stop, SIGTERM through the self-pipe, the wait bounded by the
 * nearest timer, and background work (loop_work_start) that leaves the
 * loop turning and reports back on the loop's thread.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "controller/loop.h"
#include "controller/timers.h"
#include "suites.h"
#include "test/support/support.h"

static struct loop *L;
static char g_file[64];

static void setup(void)
{
	struct err err = { "" };
	FILE *f;
	int fd;

	L = loop_new(NULL, &err);
	ck_assert_msg(L != NULL, "%s", err.msg);
	snprintf(g_file, sizeof(g_file), "/tmp/cueue-loop-XXXXXX");
	fd = mkstemp(g_file);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs("hello, loop\n", f);
	fclose(f);
}

static void teardown(void)
{
	loop_free(L);
	L = NULL;
	unlink(g_file);
}

static CURL *file_easy(void)
{
	CURL *e = curl_easy_init();
	char *url = xasprintf("file://%s", g_file);

	curl_easy_setopt(e, CURLOPT_URL, url);
	free(url);
	return e;
}

/* ---- what happened, with the iteration it happened in ---- */

struct ev {
	char what;      /* B body, D done, T timer, H hook */
	uint64_t iter;
	int64_t now;
	int64_t wall;
};

static struct {
	struct ev v[256];
	size_t n;
	int releases;
	struct timer t;
	struct loop_transfer *start_b;  /* started from A's body callback */
	struct loop_transfer *stop_c;   /* stopped from A's body callback */
	bool armed_from_body;
} R;

static void note(char what)
{
	ck_assert_uint_lt(R.n, 256);
	R.v[R.n].what = what;
	R.v[R.n].iter = loop_iterations(L);
	R.v[R.n].now = loop_now_ms(L);
	R.v[R.n].wall = loop_wall_ms(L);
	R.n++;
}

static void on_timer(void *ud, int64_t now)
{
	(void)ud;
	ck_assert_int_eq(now, loop_now_ms(L));
	note('T');
}

static void on_hook(void *ud)
{
	(void)ud;
	note('H');
}

static size_t on_body(void *ud, const char *d, size_t n)
{
	(void)ud;
	(void)d;
	note('B');
	if (!R.armed_from_body) {
		R.armed_from_body = true;
		/* the clock does not move within an iteration */
		usleep(20 * 1000);
		loop_timer_arm(L, &R.t, 0);
	}
	return n;
}

static void on_done(void *ud, CURL *e, CURLcode rc)
{
	(void)ud;
	(void)e;
	ck_assert_int_eq(rc, CURLE_OK);
	note('D');
}

static void on_release(void *ud)
{
	(void)ud;
	R.releases++;
}

static const struct loop_transfer_ops plain_ops = {
	.body = on_body, .done = on_done, .release = on_release,
};

/* Index of the first event what, or -1. */
static int find(char what)
{
	for (size_t i = 0; i < R.n; i++)
		if (R.v[i].what == what)
			return (int)i;
	return -1;
}

START_TEST(iteration_order)
{
	struct err err = { "" };
	int b, d, t;

	memset(&R, 0, sizeof(R));
	timers_setup(&R.t, on_timer, NULL);
	loop_before_sleep_add(L, on_hook, NULL);
	loop_transfer_start(L, file_easy(), &plain_ops, NULL);
	ck_assert_uint_eq(loop_transfer_count(L), 1);
	for (int i = 0; i < 50 && find('D') < 0; i++)
		ck_assert_int_eq(loop_run_once(L, 100, &err), 0);
	b = find('B');
	d = find('D');
	t = find('T');
	ck_assert_int_ge(b, 0);
	ck_assert_int_ge(d, 0);
	ck_assert_int_ge(t, 0);
	/* the timer armed (delay 0) from the body callback fires in the
	 * same iteration, after step 1, and saw the same cached clocks */
	ck_assert_uint_eq(R.v[t].iter, R.v[b].iter);
	ck_assert_int_gt(t, b);
	ck_assert_int_eq(R.v[t].now, R.v[b].now);
	ck_assert_int_eq(R.v[t].wall, R.v[b].wall);
	/* within each iteration: transfers, then timers, then the hook,
	 * which runs exactly once and last */
	for (size_t i = 0; i < R.n; i++) {
		if (R.v[i].what == 'H') {
			ck_assert(i + 1 == R.n ||
				  R.v[i + 1].iter == R.v[i].iter + 1);
			continue;
		}
		ck_assert(i + 1 < R.n && R.v[i + 1].iter == R.v[i].iter);
		if (R.v[i].what == 'T')
			ck_assert(R.v[i + 1].what != 'B' &&
				  R.v[i + 1].what != 'D');
	}
	ck_assert_uint_eq(loop_transfer_count(L), 0);
	ck_assert_int_eq(R.releases, 1);
	/* the clock moves between iterations */
	ck_assert_int_eq(loop_run_once(L, 30, &err), 0);
	ck_assert_int_gt(loop_now_ms(L), R.v[t].now);
}
END_TEST

static void on_hook2(void *ud)
{
	(void)ud;
	note('h');
}

/* Two hooks (two replicas on one loop, as the lease tests run them) both
 * run every iteration in the order added; removing one keeps the other. */
START_TEST(before_sleep_hooks_stack)
{
	struct err err = { "" };
	size_t h = 0, h2 = 0;

	memset(&R, 0, sizeof(R));
	loop_before_sleep_add(L, on_hook, NULL);
	loop_before_sleep_add(L, on_hook2, NULL);
	ck_assert_int_eq(loop_run_once(L, 0, &err), 0);
	ck_assert_uint_eq(R.n, 2);
	ck_assert_int_eq(R.v[0].what, 'H');
	ck_assert_int_eq(R.v[1].what, 'h');
	ck_assert_uint_eq(R.v[0].iter, R.v[1].iter);
	loop_before_sleep_remove(L, on_hook, NULL);
	loop_before_sleep_remove(L, on_hook, NULL); /* absent: nothing */
	ck_assert_int_eq(loop_run_once(L, 0, &err), 0);
	ck_assert_int_eq(loop_run_once(L, 0, &err), 0);
	for (size_t i = 0; i < R.n; i++) {
		h += R.v[i].what == 'H';
		h2 += R.v[i].what == 'h';
	}
	ck_assert_uint_eq(h, 1);
	ck_assert_uint_eq(h2, 3);
	loop_before_sleep_remove(L, on_hook2, NULL);
}
END_TEST

/* A listening socket that never accepts: a transfer to it never ends. */
static int g_sink_fd = -1;

static CURL *stuck_easy(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	CURL *e = curl_easy_init();
	char *url;

	if (g_sink_fd < 0) {
		g_sink_fd = socket(AF_INET, SOCK_STREAM, 0);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ck_assert_int_eq(bind(g_sink_fd, (struct sockaddr *)&sa,
				      sizeof(sa)), 0);
		ck_assert_int_eq(listen(g_sink_fd, 8), 0);
	}
	ck_assert_int_eq(getsockname(g_sink_fd, (struct sockaddr *)&sa, &len),
			 0);
	url = xasprintf("http://127.0.0.1:%u/", ntohs(sa.sin_port));
	curl_easy_setopt(e, CURLOPT_URL, url);
	free(url);
	return e;
}

static size_t never_body(void *ud, const char *d, size_t n)
{
	(void)ud;
	(void)d;
	(void)n;
	ck_abort_msg("a stopped transfer got bytes");
	return 0;
}

static void never_done(void *ud, CURL *e, CURLcode rc)
{
	(void)ud;
	(void)e;
	(void)rc;
	ck_abort_msg("a stopped transfer finished");
}

static const struct loop_transfer_ops stuck_ops = {
	.body = never_body, .done = never_done, .release = on_release,
};

/* A's body callback starts B and stops C: libcurl forbids both from in
 * there, so the loop defers them to the end of step 1. */
static size_t a_body(void *ud, const char *d, size_t n)
{
	(void)ud;
	(void)d;
	note('B');
	if (R.stop_c) {
		loop_transfer_stop(L, R.stop_c);
		R.stop_c = NULL;
		R.start_b = loop_transfer_start(L, file_easy(), &plain_ops,
						NULL);
	}
	return n;
}

static const struct loop_transfer_ops a_ops = {
	.body = a_body, .done = on_done, .release = on_release,
};

START_TEST(start_and_stop_inside_callbacks)
{
	struct err err = { "" };
	struct loop_transfer *c2;
	int dones = 0;

	memset(&R, 0, sizeof(R));
	R.armed_from_body = true;
	R.stop_c = loop_transfer_start(L, stuck_easy(), &stuck_ops, NULL);
	c2 = loop_transfer_start(L, stuck_easy(), &stuck_ops, NULL);
	ck_assert_int_eq(loop_run_once(L, 50, &err), 0);
	loop_transfer_start(L, file_easy(), &a_ops, NULL);
	ck_assert_uint_eq(loop_transfer_count(L), 3);
	for (int i = 0; i < 100 && dones < 2; i++) {
		ck_assert_int_eq(loop_run_once(L, 50, &err), 0);
		dones = 0;
		for (size_t j = 0; j < R.n; j++)
			dones += R.v[j].what == 'D';
	}
	ck_assert_int_eq(dones, 2); /* A and the B it started */
	ck_assert_ptr_nonnull(R.start_b);
	ck_assert_ptr_null(R.stop_c);
	ck_assert_int_eq(R.releases, 3); /* A, B, and the stopped C */
	ck_assert_uint_eq(loop_transfer_count(L), 1);
	/* stopping outside callbacks is immediate */
	loop_transfer_stop(L, c2);
	ck_assert_int_eq(R.releases, 4);
	ck_assert_uint_eq(loop_transfer_count(L), 0);
	close(g_sink_fd);
	g_sink_fd = -1;
}
END_TEST

static void stop_timer(void *ud, int64_t now)
{
	(void)now;
	loop_stop(ud);
}

/* The handle of an ended transfer is reset and handed out again. */
START_TEST(easy_handles_reused)
{
	struct err err = { "" };
	CURL *e1, *e2, *e3;
	char *url = xasprintf("file://%s", g_file);

	memset(&R, 0, sizeof(R));
	timers_setup(&R.t, on_timer, NULL);
	e1 = loop_easy_new(L);
	curl_easy_setopt(e1, CURLOPT_URL, url);
	loop_transfer_start(L, e1, &plain_ops, NULL);
	for (int i = 0; i < 50 && find('D') < 0; i++)
		ck_assert_int_eq(loop_run_once(L, 100, &err), 0);
	ck_assert_int_ge(find('D'), 0);
	e2 = loop_easy_new(L);
	ck_assert_ptr_eq(e2, e1); /* reused */
	/* reset, and it runs a second transfer */
	curl_easy_setopt(e2, CURLOPT_URL, url);
	loop_timer_cancel(L, &R.t);
	memset(&R, 0, sizeof(R));
	timers_setup(&R.t, on_timer, NULL);
	loop_transfer_start(L, e2, &plain_ops, NULL);
	for (int i = 0; i < 50 && find('D') < 0; i++)
		ck_assert_int_eq(loop_run_once(L, 100, &err), 0);
	ck_assert_int_ge(find('B'), 0);
	ck_assert_int_ge(find('D'), 0);
	/* a stopped transfer's handle is freed, not pooled (nothing to
	 * see but that it does not crash or leak under ASan) */
	e3 = loop_easy_new(L);
	curl_easy_setopt(e3, CURLOPT_URL, url);
	loop_transfer_stop(L, loop_transfer_start(L, e3, &plain_ops, NULL));
	free(url);
}
END_TEST

START_TEST(stop_and_run_again)
{
	struct err err = { "" };
	struct timer t = TIMER_INIT(stop_timer, NULL);
	int64_t t0 = loop_now_ms(L); /* delays count from the cached now */

	t.ud = L;
	loop_timer_arm(L, &t, 50);
	ck_assert_int_eq(loop_run(L, &err), 0);
	ck_assert_int_ge(t_mono_ms() - t0, 50);
	ck_assert_int_eq(loop_signal(L), 0);
	ck_assert(!loop_is_stopping(L));
	/* the stop was consumed: a second run waits for a second stop */
	loop_timer_arm(L, &t, 50);
	ck_assert_int_eq(loop_run(L, &err), 0);
	ck_assert_int_ge(t_mono_ms() - t0, 100);
}
END_TEST

START_TEST(waits_are_bounded)
{
	struct err err = { "" };
	struct timer t = TIMER_INIT(on_timer, NULL);
	int64_t t0 = t_mono_ms();

	memset(&R, 0, sizeof(R));
	/* nothing to do: the wait lasts max_wait_ms */
	ck_assert_int_eq(loop_run_once(L, 100, &err), 0);
	ck_assert_int_ge(t_mono_ms() - t0, 90);
	/* a timer cuts a long wait short */
	t0 = loop_now_ms(L);
	loop_timer_arm(L, &t, 60);
	while (find('T') < 0)
		ck_assert_int_eq(loop_run_once(L, 5000, &err), 0);
	ck_assert_int_ge(t_mono_ms() - t0, 60);
	ck_assert_int_lt(t_mono_ms() - t0, 4000);
	/* no wait at all */
	t0 = t_mono_ms();
	ck_assert_int_eq(loop_run_once(L, 0, &err), 0);
	ck_assert_int_lt(t_mono_ms() - t0, 1000);
}
END_TEST

static void raise_timer(void *ud, int64_t now)
{
	(void)ud;
	(void)now;
	note('T');
	raise(SIGTERM);
}

START_TEST(sigterm_stops_the_loop)
{
	struct loop_opts o = { .handle_signals = true };
	struct err err = { "" };
	struct timer t = TIMER_INIT(raise_timer, NULL);
	struct sigaction before, now;
	struct loop *l2;

	loop_free(L); /* the fixture's loop handles no signals */
	ck_assert_int_eq(sigaction(SIGTERM, NULL, &before), 0);
	L = loop_new(&o, &err);
	ck_assert_msg(L != NULL, "%s", err.msg);
	/* one loop per process may own the signals */
	l2 = loop_new(&o, &err);
	ck_assert_ptr_null(l2);
	ck_assert_ptr_nonnull(strstr(err.msg, "another loop"));
	memset(&R, 0, sizeof(R));
	loop_before_sleep_add(L, on_hook, NULL);
	loop_timer_arm(L, &t, 20);
	ck_assert_int_eq(loop_run(L, &err), 0);
	ck_assert_int_eq(loop_signal(L), SIGTERM);
	ck_assert(loop_is_stopping(L));
	/* the iteration that raised it finished (its hook ran) */
	ck_assert_int_ge(find('H'), find('T'));
	/* a signal is sticky: running again returns at once */
	ck_assert_int_eq(loop_run(L, &err), 0);
	loop_free(L);
	L = NULL;
	/* the old handler is back */
	ck_assert_int_eq(sigaction(SIGTERM, NULL, &now), 0);
	ck_assert(now.sa_handler == before.sa_handler);
	L = loop_new(NULL, &err);
}
END_TEST

/* ---- background work ---- */

struct bg {
	atomic_int go;        /* the work spins until this is set */
	atomic_int ran;       /* the work ran */
	int done_calls;
	bool cancelled;
	pthread_t done_thread;
	int ticks;            /* timer firings while the work waited */
	struct timer tick;
};

static void bg_work(void *arg)
{
	struct bg *b = arg;

	while (!atomic_load(&b->go)) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	atomic_store(&b->ran, 1);
}

static void bg_done(void *arg, bool cancelled)
{
	struct bg *b = arg;

	b->done_calls++;
	b->cancelled = cancelled;
	b->done_thread = pthread_self();
}

/* Ticks on the loop; the fifth lets the work finish. */
static void bg_tick(void *ud, int64_t now)
{
	struct bg *b = ud;

	(void)now;
	if (++b->ticks == 5)
		atomic_store(&b->go, 1);
	else
		loop_timer_arm(L, &b->tick, 10);
}

START_TEST(background_work)
{
	struct err err = { "" };
	struct bg b;
	struct loop_work *w;
	int64_t t0;

	memset(&b, 0, sizeof(b));
	b.tick = (struct timer)TIMER_INIT(bg_tick, &b);
	w = loop_work_start(L, bg_work, bg_done, &b, &err);
	ck_assert_msg(w != NULL, "%s", err.msg);
	ck_assert_uint_eq(loop_work_running(L), 1);
	/* the loop keeps turning (timers fire) while the work runs, and
	 * the work's end wakes a long wait at once */
	loop_timer_arm(L, &b.tick, 10);
	t0 = t_mono_ms();
	while (!b.done_calls)
		ck_assert_int_eq(loop_run_once(L, 5000, &err), 0);
	ck_assert_int_lt(t_mono_ms() - t0, 4000);
	ck_assert_int_eq(b.ticks, 5);
	ck_assert_int_eq(atomic_load(&b.ran), 1);
	ck_assert_int_eq(b.done_calls, 1);
	ck_assert(!b.cancelled);
	ck_assert(pthread_equal(b.done_thread, pthread_self()));
	ck_assert_uint_eq(loop_work_running(L), 0);
	/* nothing more is called */
	ck_assert_int_eq(loop_run_once(L, 0, &err), 0);
	ck_assert_int_eq(b.done_calls, 1);
}
END_TEST

START_TEST(background_work_cancelled)
{
	struct err err = { "" };
	struct bg b, c;
	struct loop_work *w;

	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	w = loop_work_start(L, bg_work, bg_done, &b, &err);
	ck_assert_msg(w != NULL, "%s", err.msg);
	loop_work_cancel(L, w);
	loop_work_cancel(L, NULL);
	/* a cancelled work still ends: done(arg, true) once it has */
	ck_assert_int_eq(loop_run_once(L, 20, &err), 0);
	ck_assert_int_eq(b.done_calls, 0);
	atomic_store(&b.go, 1);
	while (!b.done_calls)
		ck_assert_int_eq(loop_run_once(L, 5000, &err), 0);
	ck_assert(b.cancelled);
	ck_assert_int_eq(atomic_load(&b.ran), 1);
	/* loop_free waits for a running work and cancels it */
	ck_assert_ptr_nonnull(loop_work_start(L, bg_work, bg_done, &c, &err));
	atomic_store(&c.go, 1);
	loop_free(L);
	L = NULL;
	ck_assert_int_eq(c.done_calls, 1);
	ck_assert(c.cancelled);
	L = loop_new(NULL, &err);
	ck_assert_msg(L != NULL, "%s", err.msg);
}
END_TEST

Suite *loop_suite(void)
{
	Suite *s = suite_create("loop");
	TCase *tc = tcase_create("iteration");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, iteration_order);
	tcase_add_test(tc, before_sleep_hooks_stack);
	tcase_add_test(tc, easy_handles_reused);
	tcase_add_test(tc, start_and_stop_inside_callbacks);
	tcase_add_test(tc, stop_and_run_again);
	tcase_add_test(tc, waits_are_bounded);
	tcase_add_test(tc, sigterm_stops_the_loop);
	tcase_add_test(tc, background_work);
	tcase_add_test(tc, background_work_cancelled);
	suite_add_tcase(s, tc);
	return s;
}
