#!/usr/bin/env bash
# chaos: the short run of the chaos suite (test/chaos/README.md) inside
# make check: two manager replicas, about 60 Jobs through the webhook in
# a cohort with borrowing and preemption, 3 SIGKILLs and 1 SIGTERM of the
# leader, 1 devserver restart, light devserver faults (a fixed seed);
# every state a recorded Workload + Job watch saw through cueue-invariants,
# no Job admitted twice, every preemption justified, no Job lost. About
# 2.5 minutes of wall time on a loaded 2-core machine. `make chaos` runs
# the full version. Prints one line per check, "N passed, M failed" last.
exec "$(dirname "$0")/../chaos/chaos.sh" --profile short "$@"
