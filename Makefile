# cueue: one non-recursive Makefile (STYLE P13).
#
#   make deps            install the Debian packages the build, tests and
#                        demo need (nothing when all are present)
#   make all             the libraries, bin/cueue-manager, bin/cueue-devserver,
#                        bin/cueue-demo, both Check runners, test tools and
#                        bench programs
#   make demo            deps + all + demo/demo.sh (demo/README.md)
#   make check           deps + `make test`: all, both Check runners
#                        (unit, devserver-tests), check-headers, check-deps,
#                        e2e and the quick bench (in three steps: see test)
#   make unit            the unit runner (CK_RUN_SUITE / CK_RUN_CASE filter;
#                        UNIT_JOBS suites at a time)
#   make devserver-tests the devserver runner (DSTEST_JOBS at a time)
#   make asan            both Check runners under AddressSanitizer + UBSan
#   make e2e             test/e2e/run.sh: every end-to-end suite
#   make e2e-devserver   the devserver's smoke suite alone
#   make bench           test/bench/run.sh; rewrites BENCHMARKS.md's figures
#                        (QUICK=1: the reduced run; bench-quick writes none)
#   make check-headers   every header compiles alone
#   make check-deps      model/ and flavors/ include no I/O library
#   make clean           remove build/ and bin/
#
# Objects live in build/<config>/ (default, asan) so flag sets never mix.
# mk/<name>.mk, included last, adds the rules of the demo and bench programs.

CFG ?= default
BUILD := build/$(CFG)

PKGS := gcc make pkg-config libmicrohttpd-dev libgnutls28-dev libssl-dev \
	libjansson-dev libcurl4-openssl-dev libyaml-dev check python3-kubernetes \
	kubectl prometheus
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

CC ?= cc
WARN := -Wall -Wextra -Wpedantic -Wstrict-prototypes -Wmissing-prototypes \
	-Wshadow -Wvla -Wwrite-strings -fno-common -Werror
CFLAGS := -std=c17 -g $(WARN) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	-I. -MMD -MP
ifeq ($(CFG),asan)
SANITIZE ?= address,undefined
endif
ifneq ($(SANITIZE),)
CFLAGS += -O1 -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
else
CFLAGS += -O2
endif

CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

# base/: the small pure layer below everything (allocation policy, string
# buffer, hash map, list, base64), built into libcore with the core. Its one
# JSON module, base/jx.c (the accessors of the layers outside the core),
# is kept out of libcore in its own libjx.a, linked only into programs of
# the non-core libraries.
BASE_SRC := $(filter-out base/jx.c,$(wildcard base/*.c))
JX_OBJ := $(BUILD)/base/jx.o
LIBJX := $(BUILD)/libjx.a

# The scheduling core: base/ + model/ + flavors/. Links with jansson
# (codec.c only) and libcrypto (SHA-1 for workload names) and nothing else.
CORE_SRC := $(BASE_SRC) $(wildcard model/*.c flavors/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
LIBCORE := $(BUILD)/libcore.a
CORE_LIBS := -ljansson -lcrypto -lm

# config/: the manager's Configuration and the YAML -> JSON reader.
CONFIG_SRC := $(wildcard config/*.c)
CONFIG_OBJ := $(CONFIG_SRC:%.c=$(BUILD)/%.o)
LIBCONFIG := $(BUILD)/libconfig.a
CONFIG_LIBS := -lyaml

# devserver/: the API server stand-in (libmicrohttpd + GnuTLS, libcurl
# for webhook calls, OpenSSL for its certificates). GnuTLS is linked
# directly for one call pair: http.c corks a small answer into one record.
DEVSERVER_SRC := $(filter-out devserver/main.c,$(wildcard devserver/*.c))
DEVSERVER_OBJ := $(DEVSERVER_SRC:%.c=$(BUILD)/%.o)
LIBDEVSERVER := $(BUILD)/libdevserver.a
DEVSERVER_LIBS := -lmicrohttpd -lgnutls -lcurl -lssl -lcrypto -lpthread
# bin/ holds the default build's programs; other configs (asan, ...) keep
# theirs under build/<cfg>/bin so a sanitizer build never replaces the
# binary that the e2e tests, the demo and the benchmarks run.
BINDIR := $(if $(filter default,$(CFG)),bin,$(BUILD)/bin)
DEVSERVER_BIN := $(BINDIR)/cueue-devserver

# controller/: the manager (event loop, kubeconfig, REST client,
# informers, reconcilers, status writers) on libcurl multi; main.c is
# bin/cueue-manager. The unit tests search this library without -lcurl,
# so only its pure modules (timers, linebuf, ...) can link into them.
CONTROLLER_SRC := $(filter-out controller/main.c,$(wildcard controller/*.c))
CONTROLLER_OBJ := $(CONTROLLER_SRC:%.c=$(BUILD)/%.o)
LIBCONTROLLER := $(BUILD)/libcontroller.a
CONTROLLER_LIBS := -lcurl
MANAGER_BIN := $(BINDIR)/cueue-manager

# cli/: kubectl cueue (bin/kubectl-cueue; kubectl finds it on PATH): the
# manager's library in inspect mode (cli/cli.h). cli/doctor.c is pure, so
# the unit tests link it.
CLI_SRC := $(filter-out cli/main.c,$(wildcard cli/*.c))
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
CLI_PURE_OBJ := $(BUILD)/cli/doctor.o
CLI_BIN := $(BINDIR)/kubectl-cueue

# webhook/: the manager's admission and conversion webhook server
# (libmicrohttpd + GnuTLS) and its certificates (OpenSSL).
WEBHOOK_SRC := $(wildcard webhook/*.c)
WEBHOOK_OBJ := $(WEBHOOK_SRC:%.c=$(BUILD)/%.o)
LIBWEBHOOK := $(BUILD)/libwebhook.a
WEBHOOK_LIBS := -lmicrohttpd -lssl -lcrypto -lpthread

# Unit tests: one Check suite per module. test/unit/check_<module>.c
# links only the core and config (proving the core needs no I/O library);
# test/devserver/check_<module>.c links the devserver library.
SUPPORT_SRC := $(wildcard test/support/*.c)
SUPPORT_OBJ := $(SUPPORT_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard test/unit/*.c)
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/%.o)
UNIT_SUITES := $(patsubst test/unit/check_%.c,%,$(wildcard test/unit/check_*.c))
# The demo's state and stream (demo/dash.c, demo/feed.c) are pure
# (jansson and the core), so their suites link them like the core.
UNIT_DEMO_OBJ := $(BUILD)/demo/dash.o $(BUILD)/demo/feed.o
UNIT := $(BUILD)/unit-tests
DSTEST_SRC := $(wildcard test/devserver/*.c)
DSTEST_OBJ := $(DSTEST_SRC:%.c=$(BUILD)/%.o)
DSTEST_SUITES := $(patsubst test/devserver/check_%.c,%,$(wildcard test/devserver/check_*.c))
DSTEST := $(BUILD)/devserver-tests
SUITES_H := $(BUILD)/gen/unit/suites.h
# Test tools (test/tools/<name>.c -> $(BUILD)/tools/cueue-<name>): small
# programs the e2e scripts run, such as the invariant checker. They link
# the core and config only.
TOOL_SRC := $(wildcard test/tools/*.c)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)
TOOLS := $(patsubst test/tools/%.c,$(BUILD)/tools/cueue-%,$(TOOL_SRC))
CORE_BENCH := $(BUILD)/core-bench
CORE_BENCH_OBJ := $(BUILD)/test/bench/core_bench.o
DSSUITES_H := $(BUILD)/gen/devserver/suites.h

ALL_OBJ := $(CORE_OBJ) $(JX_OBJ) $(CONFIG_OBJ) $(CONTROLLER_OBJ) $(DEVSERVER_OBJ) \
	$(SUPPORT_OBJ) $(UNIT_OBJ) $(DSTEST_OBJ) $(BUILD)/devserver/main.o \
	$(BUILD)/controller/main.o $(TOOL_OBJ) $(CORE_BENCH_OBJ) $(WEBHOOK_OBJ) \
	$(CLI_OBJ) $(BUILD)/cli/main.o
DEPS := $(ALL_OBJ:.o=.d)

.PHONY: all deps test check asan clean check-headers check-deps unit \
	devserver-tests

# Programs and suites join `all` as their sources appear.
ALL_TARGETS := $(LIBCORE) $(LIBJX) $(LIBCONFIG) $(UNIT)
ifneq ($(wildcard devserver/main.c),)
ALL_TARGETS += $(DEVSERVER_BIN)
endif
ifneq ($(wildcard controller/main.c),)
ALL_TARGETS += $(MANAGER_BIN)
endif
ifneq ($(wildcard cli/main.c),)
ALL_TARGETS += $(CLI_BIN)
endif
ifneq ($(DSTEST_SUITES),)
ALL_TARGETS += $(DSTEST)
DEVSERVER_TESTS := devserver-tests
endif

all: $(ALL_TARGETS) $(TOOLS)

# A tool's object is reached only through the pattern rule below, so in a
# fresh tree (no .d file read yet) make took it for an intermediate file,
# deleted it after the build, and the next make (make test's next step)
# compiled and linked the tool again.
.SECONDARY: $(TOOL_OBJ)
$(BUILD)/tools/cueue-%: $(BUILD)/test/tools/%.o $(LIBCONFIG) $(LIBJX) \
		$(LIBCORE)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBCONFIG) $(LIBJX) $(LIBCORE) \
	  $(CONFIG_LIBS) $(CORE_LIBS)

deps:
	@missing=""; for p in $(PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
	    grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  $(SUDO) apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y $$missing; \
	else echo "deps: all packages present"; fi

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/test/support/%.o: test/support/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -DTOP_SRCDIR='"$(CURDIR)"' -c $< -o $@

$(BUILD)/test/unit/%.o: test/unit/%.c $(SUITES_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -I$(BUILD)/gen/unit \
	  -DTOP_SRCDIR='"$(CURDIR)"' -c $< -o $@

$(BUILD)/test/devserver/%.o: test/devserver/%.c $(DSSUITES_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -I$(BUILD)/gen/devserver \
	  -DTOP_SRCDIR='"$(CURDIR)"' \
	  -DDEVSERVER_BIN_PATH='"$(CURDIR)/$(DEVSERVER_BIN)"' -c $< -o $@

$(LIBCORE): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBJX): $(JX_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBCONFIG): $(CONFIG_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBDEVSERVER): $(DEVSERVER_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBCONTROLLER): $(CONTROLLER_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIBWEBHOOK): $(WEBHOOK_OBJ)
	@rm -f $@ && mkdir -p $(@D)
	$(if $^,ar rcs $@ $^,printf '!<arch>\n' > $@)

$(DEVSERVER_BIN): $(BUILD)/devserver/main.o $(LIBDEVSERVER) $(LIBCONFIG) \
		$(LIBJX) $(LIBCORE)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBDEVSERVER) $(LIBCONFIG) $(LIBJX) \
	  $(LIBCORE) $(DEVSERVER_LIBS) $(CONFIG_LIBS) $(CORE_LIBS)

$(MANAGER_BIN): $(BUILD)/controller/main.o $(LIBCONTROLLER) $(LIBWEBHOOK) \
		$(LIBCONFIG) $(LIBJX) $(LIBCORE)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBCONTROLLER) $(LIBWEBHOOK) $(LIBCONFIG) \
	  $(LIBJX) $(LIBCORE) $(CONTROLLER_LIBS) $(WEBHOOK_LIBS) \
	  $(CONFIG_LIBS) $(CORE_LIBS)

$(CLI_BIN): $(BUILD)/cli/main.o $(CLI_OBJ) $(LIBCONTROLLER) $(LIBCONFIG) \
		$(LIBJX) $(LIBCORE)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(CLI_OBJ) $(LIBCONTROLLER) $(LIBCONFIG) \
	  $(LIBJX) $(LIBCORE) $(CONTROLLER_LIBS) $(CONFIG_LIBS) $(CORE_LIBS)

# Suite lists are generated from the file names, so adding a module's
# tests never means editing a shared file. $(call suites_h,NAMES)
define suites_h
	@mkdir -p $(@D)
	@{ echo '/* generated by the Makefile from the check_*.c names */'; \
	   echo '#include <check.h>'; \
	   for s in $(1); do echo "Suite *$${s}_suite(void);"; done; \
	   echo '#define FOR_EACH_SUITE(X) \'; \
	   for s in $(1); do echo "  X($$s) \\"; done; \
	   echo '  /* end */'; } > $@.tmp && mv $@.tmp $@
endef

$(SUITES_H): $(wildcard test/unit/check_*.c) Makefile
	$(call suites_h,$(UNIT_SUITES))

$(DSSUITES_H): $(wildcard test/devserver/check_*.c) Makefile
	$(call suites_h,$(DSTEST_SUITES))

$(UNIT): $(UNIT_OBJ) $(SUPPORT_OBJ) $(UNIT_DEMO_OBJ) $(CLI_PURE_OBJ) \
		$(LIBCONTROLLER) $(LIBCONFIG) $(LIBJX) $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $(UNIT_OBJ) $(SUPPORT_OBJ) $(UNIT_DEMO_OBJ) \
	  $(CLI_PURE_OBJ) \
	  $(LIBCONTROLLER) $(LIBCONFIG) $(LIBJX) $(LIBCORE) $(CONFIG_LIBS) \
	  $(CORE_LIBS) \
	  $(CHECK_LIBS)

# The devserver suites share test/unit/main.c's runner.
$(DSTEST): $(DSTEST_OBJ) $(BUILD)/test/devserver/main.o $(SUPPORT_OBJ) \
		$(LIBCONTROLLER) $(LIBWEBHOOK) $(LIBDEVSERVER) $(LIBCONFIG) \
		$(LIBJX) $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $(DSTEST_OBJ) $(BUILD)/test/devserver/main.o \
	  $(SUPPORT_OBJ) $(LIBCONTROLLER) $(LIBWEBHOOK) $(LIBDEVSERVER) \
	  $(LIBCONFIG) $(LIBJX) $(LIBCORE) $(CONTROLLER_LIBS) $(WEBHOOK_LIBS) \
	  $(DEVSERVER_LIBS) $(CONFIG_LIBS) $(CORE_LIBS) $(CHECK_LIBS)

$(BUILD)/test/devserver/main.o: test/unit/main.c $(DSSUITES_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) -I$(BUILD)/gen/devserver -c $< -o $@

# The runners run their suites UNIT_JOBS / DSTEST_JOBS at a time
# (TEST_JOBS, test/unit/main.c). The unit suites compute, so two (the
# cores); the devserver suites mostly wait on servers, sockets and timers
# (a sixth of a core each), so six.
UNIT_JOBS ?= 2
DSTEST_JOBS ?= 6
# Check's per-test timeouts guard against hangs; with eight suites on two
# cores a correct test can be starved past them, so they are stretched
# (x3 unless the caller says otherwise) rather than made to flake.
# `make asan` asks for x10 (sanitized code runs several times slower);
# the caller's own value wins over both.
ifeq ($(CFG),asan)
CK_TIMEOUT_MULTIPLIER ?= 10
else
CK_TIMEOUT_MULTIPLIER ?= 3
endif
export CK_TIMEOUT_MULTIPLIER

unit: $(UNIT)
	TEST_JOBS=$(UNIT_JOBS) ./$(UNIT)

# Suite "crash" runs this config's devserver program (kill -9), so the
# runner needs it built too.
devserver-tests: $(DSTEST) $(DEVSERVER_BIN)
	TEST_JOBS=$(DSTEST_JOBS) ./$(DSTEST)

# e2e and the quick bench join `test` once their runners exist.
ifneq ($(wildcard test/e2e/run.sh),)
E2E := e2e
endif
ifneq ($(wildcard test/bench/run.sh),)
QUICK_BENCH := bench-quick
endif
.PHONY: bench-quick
bench-quick: all
	QUICK=1 BENCH_NO_WRITE=1 BENCH_JOBS=2 test/bench/run.sh

# `make test` in three steps, so that the 2-core machine CI runs it on
# (`make check`, under 10 minutes) is busy throughout: the build with
# CHECK_JOBS jobs; then the Check runners, check-headers, check-deps and
# the quick bench side by side (together about one core: mostly they
# wait; -Otarget prints each one's output whole when it ends); then the
# e2e suites, which keep both cores busy by themselves. A failed step
# stops the next, as a failed prerequisite stopped `test` before.
CHECK_JOBS ?= 2
TEST_SIDE := unit $(DEVSERVER_TESTS) check-headers check-deps $(QUICK_BENCH)
test:
	@$(MAKE) --no-print-directory -j$(CHECK_JOBS) all
	@$(MAKE) --no-print-directory -j$(words $(TEST_SIDE)) -Otarget \
	  $(TEST_SIDE)
	@$(if $(E2E),$(MAKE) --no-print-directory $(E2E),:)

check: deps
	@$(MAKE) --no-print-directory test

# Sanitized code runs several times slower: Check's per-test timeouts
# are stretched so a loaded machine does not fail a correct test.
asan:
	@$(MAKE) --no-print-directory CFG=asan unit $(DEVSERVER_TESTS)

# Every header must compile on its own (STYLE P9).
HEADERS := $(wildcard base/*.h model/*.h flavors/*.h config/*.h \
	controller/*.h webhook/*.h devserver/*.h cli/*.h)
check-headers:
	@for h in $(HEADERS); do \
	  echo "#include \"$$h\"" | $(CC) $(filter-out -MMD -MP,$(CFLAGS)) \
	    -fsyntax-only -x c - || { echo "check-headers: $$h"; exit 1; }; \
	done; echo "check-headers: $(words $(HEADERS)) headers compile alone"

# The scheduling core does no I/O and sees no JSON outside the codec; base/
# sits below it: it includes only itself (and libc), and only base/jx.*
# sees jansson.
check-deps:
	@bad=$$(grep -lE '#include <(curl/|microhttpd\.h|yaml\.h|pthread\.h)' \
	  base/*.[ch] model/*.[ch] flavors/*.[ch] 2>/dev/null); \
	bad="$$bad $$(grep -H '#include "' base/*.[ch] 2>/dev/null | \
	  grep -v '#include "base/' | cut -d: -f1)"; \
	bad="$$bad $$(grep -l '<jansson\.h>' base/*.[ch] 2>/dev/null | \
	  grep -v '^base/jx\.')"; \
	bad="$$bad $$(grep -l '"base/jx\.h"' model/*.[ch] flavors/*.[ch] \
	  2>/dev/null)"; \
	bad="$$bad $$(grep -lE '#include (<jansson\.h>|"model/codec\.h")' \
	  flavors/*.[ch] 2>/dev/null)"; \
	bad="$$bad $$(grep -l '<jansson\.h>' model/*.[ch] 2>/dev/null | \
	  grep -v '^model/codec')"; \
	if [ -n "$$(echo $$bad)" ]; then \
	  echo "check-deps: forbidden include in:$$bad"; exit 1; fi; \
	echo "check-deps: base and core are free of I/O libraries"

clean:
	rm -rf build bin

-include $(DEPS)

# Pieces with their own rules (the demo, extra bench programs) live in
# mk/<name>.mk, each written by the module that needs it.
-include $(sort $(wildcard mk/*.mk))

# End-to-end: the real kubectl (the dispatcher on PATH, plus the versioned
# binaries beside it) and python3-kubernetes against bin/cueue-devserver.
# test/e2e/run.sh runs every test/e2e/*.sh suite and prints one verdict.
.PHONY: e2e e2e-devserver bench
e2e-devserver: $(DEVSERVER_BIN)
	test/e2e/devserver-smoke.sh $(CURDIR)/$(DEVSERVER_BIN)

e2e: all
	test/e2e/run.sh

# Benchmarks print figures and write BENCHMARKS.md; QUICK=1 is the reduced
# run `make check` uses to keep the harness alive (no thresholds).
bench: all
	QUICK=$(QUICK) test/bench/run.sh

# ---- bench programs (test/bench/; run by test/bench/run.sh) ----
# dsbench: the devserver load generator. It links libcurl, pthreads and
# test/bench/benchlib.o (the bench programs' shared client code). run.sh
# finds the programs in $(BUILD) through BENCH_BUILD.
DSBENCH := $(BUILD)/dsbench
all: $(DSBENCH)
$(DSBENCH): $(BUILD)/test/bench/dsbench.o $(BUILD)/test/bench/benchlib.o $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/test/bench/benchlib.o $(LIBCORE) -lcurl -lpthread $(CORE_LIBS)
# scenario-bench: Kueue's scheduler performance scenarios (baseline,
# large scale) end to end against a devcluster: generator, fake job
# runner and recorder in one program (libcurl + jansson).
SCENARIO_BENCH := $(BUILD)/scenario-bench
ifneq ($(wildcard test/bench/scenario.c),)
all: $(SCENARIO_BENCH)
endif
$(SCENARIO_BENCH): $(BUILD)/test/bench/scenario.o $(BUILD)/test/bench/benchlib.o $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/test/bench/benchlib.o $(LIBCORE) -lcurl -lpthread $(CORE_LIBS)
-include $(BUILD)/test/bench/scenario.d
# deepq-bench: freed quota -> next admission with one ClusterQueue 100 /
# 1,000 / 10,000 deep, against a devcluster (libcurl + jansson).
DEEPQ_BENCH := $(BUILD)/deepq-bench
ifneq ($(wildcard test/bench/deepq.c),)
all: $(DEEPQ_BENCH)
endif
$(DEEPQ_BENCH): $(BUILD)/test/bench/deepq.o $(BUILD)/test/bench/benchlib.o $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/test/bench/benchlib.o $(LIBCORE) -lcurl -lpthread $(CORE_LIBS)
-include $(BUILD)/test/bench/deepq.d

# cli-bench: kubectl cueue's answer times with 10,000 pending workloads
# in 100 ClusterQueues, against a devcluster (test/bench/cli.sh).
CLI_BENCH := $(BUILD)/cli-bench
ifneq ($(wildcard test/bench/cli_bench.c),)
all: $(CLI_BENCH)
endif
$(CLI_BENCH): $(BUILD)/test/bench/cli_bench.o $(BUILD)/test/bench/benchlib.o $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/test/bench/benchlib.o $(LIBCORE) -lcurl -lpthread $(CORE_LIBS)
-include $(BUILD)/test/bench/cli_bench.d

# core-bench: the scheduling core in memory (flavors/sched), no I/O.
ifneq ($(wildcard test/bench/core_bench.c),)
all: $(CORE_BENCH)
endif
$(CORE_BENCH): $(CORE_BENCH_OBJ) $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBCORE) $(CORE_LIBS)
bench bench-quick: export BENCH_BUILD = $(CURDIR)/$(BUILD)
-include $(BUILD)/test/bench/dsbench.d
