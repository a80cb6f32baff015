/*
 * Suite "crash": acknowledged writes survive kill -9 of the process.
 *
 * bin/cueue-devserver runs as a child with --data-dir; writer threads
 * create and update ConfigMaps over HTTP as fast as they can and record
 * every acknowledged write (201/200) with its resourceVersion; the server
 * is killed with SIGKILL in the middle of the stream and started again on
 * the same directory. Then every acknowledged object must be there with
 * the RV its acknowledgement carried (an object whose last write was in
 * flight at the kill may show that write instead: it may have been
 * stored and not yet answered), new writes must get RVs above every old
 * one, and a watch from an RV of the old process ends with 410 Expired
 * (the store keeps no event history across a restart; store.h).
 *
 * Uses the binary `make all` builds for this build config
 * (DEVSERVER_BIN_PATH: bin/cueue-devserver, or build/<cfg>/bin/...).
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "suites.h"
#include "test/devserver/dsclient.h"
#include "test/support/support.h"

#define WRITERS 4
#define MAX_ACKS 100000

/* ---- the server process ---- */

struct child {
	pid_t pid;
	char url[64];
};

/* Starts bin/cueue-devserver on dir and waits for its "listening on"
 * line. */
static void spawn(const char *dir, struct child *c)
{
	char *bin = xstrdup(DEVSERVER_BIN_PATH);
	char line[256];
	int p[2];
	FILE *f;
	struct stat sb;

	ck_assert_msg(stat(bin, &sb) == 0 && (sb.st_mode & S_IXUSR),
		      "%s is missing: run make all", bin);
	ck_assert_int_eq(pipe(p), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		/* never outlive a failed test */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execl(bin, bin, "--listen", "127.0.0.1:0", "--data-dir", dir,
		      "--no-job-runner", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(fgets(line, sizeof(line), f) != NULL,
		      "the devserver did not start");
	fclose(f);
	ck_assert_int_eq(sscanf(line, "listening on %63s", c->url), 1);
	free(bin);
}

static void kill_child(struct child *c, int sig)
{
	int status;

	ck_assert_int_eq(kill(c->pid, sig), 0);
	ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
	if (sig == SIGKILL)
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	else
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "status %d", status);
}

/* ---- the writers ---- */

struct ack {
	char name[32];
	unsigned long long rv;
	int value;            /* data.v of the acknowledged write */
};

struct writer {
	int id;
	struct ack *acks;     /* MAX_ACKS */
	size_t nacks;
	int in_flight;        /* data.v of the write in flight, or -1 */
	char in_flight_name[32];
	volatile bool *stop;
	pthread_t thread;
};

static unsigned long long rv_of(const struct ds_resp *r)
{
	const char *rv = ds_rv(r);

	return rv ? strtoull(rv, NULL, 10) : 0;
}

/* Creates w-<id>-<n> and, every other step, updates w-<id>-counter; the
 * first failed transfer means the server is gone. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (int n = 0; !*w->stop && w->nacks < MAX_ACKS - 1; n++) {
		bool update = n % 2 == 1;
		char name[32];
		char *body;
		struct ds_resp r;

		snprintf(name, sizeof(name), update ? "w-%d-counter" : "w-%d-%d",
			 w->id, n);
		body = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
				 "\"metadata\":{\"name\":\"%s\"},\"data\":"
				 "{\"v\":\"%d\"}}", name, n);
		w->in_flight = n;
		snprintf(w->in_flight_name, sizeof(w->in_flight_name), "%s",
			 name);
		if (update) {
			char *path = xasprintf(CMS "/%s", name);

			if (n == 1) {
				free(path);
				path = xstrdup(CMS);
			}
			if (ds_try_call(n == 1 ? "POST" : "PUT", path,
					"application/json", body, &r) != 0) {
				free(path);
				free(body);
				break;
			}
			free(path);
		} else if (ds_try_call("POST", CMS, "application/json", body,
				       &r) != 0) {
			free(body);
			break;
		}
		free(body);
		if (r.code == 200 || r.code == 201) {
			struct ack *a = &w->acks[w->nacks++];

			snprintf(a->name, sizeof(a->name), "%s", name);
			a->rv = rv_of(&r);
			a->value = n;
		}
		w->in_flight = -1;
		ds_resp_free(&r);
	}
	return NULL;
}

/* The newest acknowledgement of name among w's (NULL: none). */
static const struct ack *last_ack(const struct writer *w, const char *name)
{
	for (size_t i = w->nacks; i-- > 0;)
		if (!strcmp(w->acks[i].name, name))
			return &w->acks[i];
	return NULL;
}

START_TEST(kill9_keeps_acknowledged_writes)
{
	char dir[] = "/tmp/cueue-crash-XXXXXX";
	struct writer ws[WRITERS];
	volatile bool stop = false;
	struct child c;
	struct ds_resp r;
	unsigned long long max_rv = 0, first_rv = 0;
	size_t total = 0;
	char *cmd, *path;
	json_t *evs;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	spawn(dir, &c);
	DS.url = c.url;
	/* 1. write from several threads; kill -9 in the middle */
	for (int i = 0; i < WRITERS; i++) {
		ws[i] = (struct writer){ .id = i, .in_flight = -1,
					 .stop = &stop };
		ws[i].acks = xcalloc(MAX_ACKS, sizeof(*ws[i].acks));
		ck_assert_int_eq(pthread_create(&ws[i].thread, NULL,
						writer_main, &ws[i]), 0);
	}
	usleep(700 * 1000);
	kill_child(&c, SIGKILL);
	stop = true;
	for (int i = 0; i < WRITERS; i++) {
		pthread_join(ws[i].thread, NULL);
		total += ws[i].nacks;
		for (size_t k = 0; k < ws[i].nacks; k++) {
			if (ws[i].acks[k].rv > max_rv)
				max_rv = ws[i].acks[k].rv;
			if (!first_rv || ws[i].acks[k].rv < first_rv)
				first_rv = ws[i].acks[k].rv;
		}
	}
	ck_assert_msg(total > 20, "only %zu writes before the kill", total);
	/* 2. restart on the same directory */
	spawn(dir, &c);
	DS.url = c.url;
	/* 3. every acknowledged object, with its acknowledged RV */
	for (int i = 0; i < WRITERS; i++)
		for (size_t k = 0; k < ws[i].nacks; k++) {
			const struct ack *a = &ws[i].acks[k];
			const struct ack *last = last_ack(&ws[i], a->name);
			char want[16];

			if (last != a)
				continue; /* an older write of the counter */
			path = xasprintf(CMS "/%s", a->name);
			r = GET(path);
			free(path);
			ds_code(r, 200);
			snprintf(want, sizeof(want), "%d", a->value);
			if (ws[i].in_flight >= 0 &&
			    !strcmp(ws[i].in_flight_name, a->name) &&
			    rv_of(&r) > a->rv) {
				/* the write in flight was stored */
				snprintf(want, sizeof(want), "%d",
					 ws[i].in_flight);
			} else {
				ck_assert_uint_eq(rv_of(&r), a->rv);
			}
			ck_assert_str_eq(ds_sget(r.json, "data.v"), want);
			ds_resp_free(&r);
		}
	/* 4. new writes get RVs above every acknowledged one */
	r = POST(CMS, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		 "\"metadata\":{\"name\":\"after\"}}");
	ds_code(r, 201);
	ck_assert_uint_gt(rv_of(&r), max_rv);
	ds_resp_free(&r);
	/* 5. a watch from the old process's history: 410 Expired */
	path = xasprintf(CMS "?watch=true&timeoutSeconds=2&resourceVersion=%llu",
			 first_rv);
	evs = ds_watch_events(path, NULL);
	free(path);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(ds_ev_type(evs, 0), "ERROR");
	ck_assert_int_eq(json_integer_value(ds_jget(json_array_get(evs, 0),
						    "object.code")), 410);
	ck_assert_str_eq(ds_sget(json_array_get(evs, 0), "object.reason"),
			 "Expired");
	ck_assert(!strncmp(ds_sget(json_array_get(evs, 0), "object.message"),
			   "too old resource version: ", 26));
	json_decref(evs);
	printf("crash: %zu writes acknowledged before kill -9 (RVs %llu..%llu), "
	       "all there after the restart\n", total, first_rv, max_rv);
	kill_child(&c, SIGTERM);
	DS.url = NULL;
	for (int i = 0; i < WRITERS; i++)
		free(ws[i].acks);
	cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

static void setup(void)
{
	memset(&DS, 0, sizeof(DS));
	signal(SIGPIPE, SIG_IGN);
	/* before the writer threads: curl_easy_init's implicit global
	 * init is not thread-safe */
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

Suite *crash_suite(void)
{
	Suite *s = suite_create("crash");
	TCase *tc;

	tc = tcase_create("kill-9");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, kill9_keeps_acknowledged_writes);
	suite_add_tcase(s, tc);
	return s;
}
