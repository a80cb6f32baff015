# podsready-bench: waitForPodsReady under load against a devcluster
# (test/bench/podsready.c; test/bench/podsready.sh starts the cluster with
# the Configuration the program prints). libcurl + jansson + benchlib, as
# the other devcluster bench programs. Included by the Makefile's last
# line; sees its variables (BENCHLIB_OBJ: mk/jobpath.mk).
PODSREADY_BENCH := $(BUILD)/podsready-bench
ifneq ($(wildcard test/bench/podsready.c),)
all: $(PODSREADY_BENCH)
endif
$(PODSREADY_BENCH): $(BUILD)/test/bench/podsready.o \
		$(BUILD)/test/bench/benchlib.o $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/test/bench/benchlib.o $(LIBCORE) \
	  -lcurl -lpthread $(CORE_LIBS)
-include $(BUILD)/test/bench/podsready.d
