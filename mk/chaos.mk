# mk/chaos.mk: `make chaos`, the full chaos suite (test/chaos/README.md):
# a quiet run of the Job stream, then the same stream against two manager
# replicas under 20 SIGKILLs and 5 SIGTERMs of the leader, 3 devserver
# restarts and the devserver's fault injection; the invariants on every
# recorded state; the figures written to $(CHAOS_SUMMARY) (the Markdown of
# BENCHMARKS.md's "Reliability" section). About 25 minutes. CHAOS_SEED picks the stream
# and the faults. The short run is test/e2e/chaos.sh (make check).
# Included by the Makefile's last line; sees its variables.
CHAOS_SEED ?= 19
CHAOS_SUMMARY ?= $(BUILD)/chaos-summary.md

.PHONY: chaos
chaos: all
	@mkdir -p $(BUILD)
	test/chaos/chaos.sh --profile full --baseline --seed $(CHAOS_SEED) \
	  --summary $(CURDIR)/$(CHAOS_SUMMARY)
