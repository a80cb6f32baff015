# mk/fairbench.mk: build rules of the fair sharing benchmark of the
# scheduling core (test/bench/fair_bench.c: fairness of the achieved
# usage shares, and the cost per admission as ClusterQueues grow, through
# flavors/sched with a simulated clock). Links libcore only.
# Included by the Makefile's last line; sees its variables.
FAIR_BENCH := $(BUILD)/fair-bench
ifneq ($(wildcard test/bench/fair_bench.c),)
all: $(FAIR_BENCH)
endif
$(FAIR_BENCH): $(BUILD)/test/bench/fair_bench.o $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $< $(LIBCORE) $(CORE_LIBS)
-include $(BUILD)/test/bench/fair_bench.d
