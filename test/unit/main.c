/*
 * The Check runner of test/unit and test/devserver: every check_<module>.c
 * suite, one verdict. Suites are found by the Makefile (suites.h is
 * generated), so adding a module's tests needs no edit here.
 *
 * Fork mode isolates tests and enforces timeouts; run with CK_FORK=no to
 * debug a test in gdb. CK_RUN_SUITE / CK_RUN_CASE select a subset.
 *
 * TEST_JOBS=N (the Makefile's unit and devserver-tests targets set it)
 * runs the suites N at a time, each in a worker process of its own with
 * its output in a temporary file. The outputs are printed whole and in
 * suite order as the workers end, then one total line in Check's format.
 * Most devserver suites wait on servers, timers and sockets rather than
 * compute, so several at a time finish in a fraction of the serial time.
 * Without TEST_JOBS, or with CK_FORK=no, CK_RUN_SUITE or one of Check's
 * log files (CK_LOG_FILE_NAME, CK_XML_LOG_FILE_NAME, CK_TAP_LOG_FILE_NAME:
 * workers would overwrite each other's) set, every suite runs in one
 * SRunner in this process, as before.
 *
 * DESIGN: a suite is the unit of work because suites share nothing but
 * this binary: each test is already a forked child of its SRunner, uses
 * its own mkdtemp() directories and binds port 0. The workers report
 * their counts through a pipe; a worker that dies (a signal outside a
 * test) or ends with another status than 0 (Check's own errors,
 * LeakSanitizer) counts as one error of its suite.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"

typedef Suite *suite_fn(void);

struct job {
	const char *name;	/* the suite's name, as in suites.h */
	suite_fn *make;		/* builds the suite (in the worker) */
	pid_t pid;		/* worker; 0 before start and after reaping */
	FILE *out;		/* the worker's stdout+stderr; NULL once
				 * printed */
	int report;		/* read end of the worker's count pipe, or -1 */
	int run, failures, errors;	/* counts; valid once reaped */
	double secs;		/* wall time from start to reaping */
	struct timespec t0;	/* start (CLOCK_MONOTONIC) */
	bool done;		/* reaped */
	int lost;		/* the worker's wait status when it failed
				 * (-1: exit 0 without a report), else 0 */
};

#define JOB(n) { .name = #n, .make = n##_suite, .report = -1 },
static struct job jobs[] = { FOR_EACH_SUITE(JOB) };
#undef JOB
#define NJOBS (sizeof(jobs) / sizeof(jobs[0]))

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The failures and errors among an SRunner's results. */
static void count_results(SRunner *sr, int *failures, int *errors)
{
	TestResult **r = srunner_results(sr);
	int n = srunner_ntests_run(sr);

	*failures = *errors = 0;
	for (int i = 0; i < n; i++) {
		if (tr_rtype(r[i]) == CK_FAILURE)
			(*failures)++;
		else if (tr_rtype(r[i]) == CK_ERROR)
			(*errors)++;
	}
	free(r);
}

/* The worker of job j (never returns): its suite in an SRunner of its
 * own, output to j->out, "run failures errors" to fd. */
static void worker(struct job *j, int fd)
{
	SRunner *sr;
	char line[64];
	int f, e, n;

	fflush(stdout);
	if (dup2(fileno(j->out), STDOUT_FILENO) < 0 ||
	    dup2(fileno(j->out), STDERR_FILENO) < 0)
		_exit(127);
	sr = srunner_create(j->make());
	srunner_run_all(sr, CK_NORMAL);
	count_results(sr, &f, &e);
	n = snprintf(line, sizeof(line), "%d %d %d\n",
		     srunner_ntests_run(sr), f, e);
	srunner_free(sr);
	fflush(stdout);
	if (write(fd, line, (size_t)n) != n)
		_exit(126);
	/* exit, not _exit: LeakSanitizer checks the suite's unchecked
	 * fixtures at exit, as it checks the serial runner's */
	exit(0);
}

/* Starts job j's worker. Returns 0, or -1 with errno set. */
static int start(struct job *j)
{
	int p[2];

	j->out = tmpfile();
	if (!j->out || pipe(p) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &j->t0);
	/* nothing buffered that a child's exit() could write twice */
	fflush(NULL);
	j->pid = fork();
	if (j->pid < 0)
		return -1;
	if (j->pid == 0) {
		close(p[0]);
		worker(j, p[1]);
	}
	close(p[1]);
	j->report = p[0];
	return 0;
}

/* Reads job j's report once its worker (status st) has ended. */
static void reap(struct job *j, int st)
{
	char line[64];
	ssize_t n = read(j->report, line, sizeof(line) - 1);

	close(j->report);
	j->report = -1;
	j->pid = 0;
	j->done = true;
	j->secs = since(&j->t0);
	line[n > 0 ? n : 0] = '\0';
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    sscanf(line, "%d %d %d", &j->run, &j->failures, &j->errors) != 3) {
		j->lost = st ? st : -1;
		j->run++;
		j->errors++;
	}
}

/* Copies job j's output to stdout and closes it. */
static void print(struct job *j)
{
	char buf[8192];
	size_t n;

	rewind(j->out);
	while ((n = fread(buf, 1, sizeof(buf), j->out)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(j->out);
	j->out = NULL;
	if (j->lost == -1)
		printf("%s: worker ended without a report: counted as one "
		       "error\n", j->name);
	else if (WIFSIGNALED(j->lost))
		printf("%s: worker killed by signal %d: counted as one "
		       "error\n", j->name, WTERMSIG(j->lost));
	else if (j->lost)
		printf("%s: worker exit status %d: counted as one error\n",
		       j->name, WEXITSTATUS(j->lost));
	fflush(stdout);
}

/* Every suite, at most njobs at a time. Returns the number of failed
 * checks (errors included). */
static int run_parallel(size_t njobs)
{
	size_t next = 0, running = 0, printed = 0;
	int run = 0, failures = 0, errors = 0;
	struct timespec t0;
	pid_t pid;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (printed < NJOBS) {
		while (running < njobs && next < NJOBS) {
			if (start(&jobs[next]) < 0) {
				perror("test runner: starting a worker");
				exit(EXIT_FAILURE);
			}
			next++;
			running++;
		}
		pid = wait(&st);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			perror("test runner: wait");
			exit(EXIT_FAILURE);
		}
		for (size_t i = 0; i < next; i++) {
			if (jobs[i].pid == pid) {
				reap(&jobs[i], st);
				running--;
			}
		}
		/* in suite order: what ended after every suite before it */
		while (printed < next && jobs[printed].done) {
			struct job *j = &jobs[printed++];

			print(j);
			printf("(%s: %.1f s)\n", j->name, j->secs);
			run += j->run;
			failures += j->failures;
			errors += j->errors;
		}
	}
	printf("Total (%zu suites, %zu at a time, %.1f s): %d%%: Checks: %d, "
	       "Failures: %d, Errors: %d\n", NJOBS, njobs, since(&t0),
	       run ? (run - failures - errors) * 100 / run : 100, run,
	       failures, errors);
	return failures + errors;
}

static int run_serial(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	for (size_t i = 0; i < NJOBS; i++)
		srunner_add_suite(sr, jobs[i].make());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed;
}

static bool is_set(const char *var)
{
	const char *v = getenv(var);

	return v && *v;
}

int main(void)
{
	const char *s = getenv("TEST_JOBS"), *fork_mode = getenv("CK_FORK");
	long n = s ? strtol(s, NULL, 10) : 1;
	int failed;

	if (n <= 1 || (fork_mode && !strcmp(fork_mode, "no")) ||
	    is_set("CK_RUN_SUITE") || is_set("CK_LOG_FILE_NAME") ||
	    is_set("CK_XML_LOG_FILE_NAME") || is_set("CK_TAP_LOG_FILE_NAME"))
		failed = run_serial();
	else
		failed = run_parallel((size_t)n);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
