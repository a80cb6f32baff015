# mk/soak.mk: build rules of engineer "soak": the soak benchmark of the
# scheduling core (test/bench/soak_bench.c: a million workloads through
# flavors/sched, RSS and record counts at checkpoints). Links libcore only.
# Included by the Makefile's last line; sees its variables.
SOAK_BENCH := $(BUILD)/soak-bench
ifneq ($(wildcard test/bench/soak_bench.c),)
all: $(SOAK_BENCH)
endif
$(SOAK_BENCH): $(BUILD)/test/bench/soak_bench.o $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBCORE) $(CORE_LIBS)
-include $(BUILD)/test/bench/soak_bench.d
