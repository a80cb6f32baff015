#!/usr/bin/env bash
# config: what bin/cueue-manager says at startup about its Configuration.
# Every setting it accepts but does not honour yet (config/
# config_warnings.c) is logged once, as a warning naming the file, the
# key's line and column, the key and what the manager does instead; keys
# left to their defaults say nothing. The suite starts a devcluster (no
# webhook) three times over the same devserver, each with another
# --config, and reads the manager's log of each start:
#
#   1. test/fixtures/config/unhonoured-v1beta2.yaml, which sets every such
#      key: one warning per key, in the table's order, and the manager
#      still starts and lists everything;
#   2. the shipped manifests/config/controller_manager_config.yaml: its
#      controller.groupKindConcurrency, nothing else (its leaderElection
#      is honoured);
#   3. a file with only apiVersion and kind: no warning at all.
#
# (The texts and positions of every key in both API versions are
# test/unit/check_config.c's; this suite checks that the binary logs
# them.) MANAGER_BIN / DEVSERVER_BIN test other binaries.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init config

manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
cluster=$work/cluster
on_exit_stop_clusters "$cluster"

if [ ! -x "$manager_src" ]; then
	fail "cueue-manager built" "$manager_src missing (run make all)"
	e2e_finish
fi
cp "$manager_src" "$work/cueue-manager"
export MANAGER_BIN=$work/cueue-manager
export DEVCLUSTER_WEBHOOK=0

# latest_start: the manager log since devcluster's last "manager start".
latest_start() {
	awk '/^=== devcluster: manager start / { buf = ""; next }
		{ buf = buf $0 "\n" } END { printf "%s", buf }' \
		"$cluster/manager.log"
}

# expect_warnings NAME FILE KEY...: the latest start logged one config
# warning per KEY, in this order, each naming FILE with a position, and
# no other config warning.
expect_warnings() {
	local name=$1 file=$2 log lines want got nfile
	shift 2
	log=$(latest_start)
	lines=$(grep -F 'level=warn component=config ' <<<"$log")
	got=$(sed -nE 's/^.* msg="[^"]*:[0-9]+:[0-9]+: ([A-Za-z.]+): .*$/\1/p' \
		<<<"$lines")
	want=$(printf '%s\n' "$@")
	nfile=$(grep -cF -- "msg=\"$file:" <<<"$lines")
	if [ "$got" = "$want" ] && [ "$nfile" -eq "$#" ] &&
		[ "$(grep -c . <<<"$lines")" -eq "$#" ]; then
		pass "$name"
	else
		fail "$name" "want the keys:
$want
got (lines naming $file: $nfile):
$lines"
	fi
}

# 1. Every key the manager does not honour yet.
every=$e2e_top/test/fixtures/config/unhonoured-v1beta2.yaml
export DEVCLUSTER_CONFIG=$every
devcluster_start "devcluster start with every unhonoured setting"
match "the manager listed everything" 0 'msg="caches synced' latest_start
expect_warnings "one warning per unhonoured key, in table order" "$every" \
	pprofBindAddress metrics.localQueueMetrics \
	metrics.customLabels controller.groupKindConcurrency \
	controller.cacheSyncTimeout multiKueue \
	tls.minVersion tls.curvePreferences
match "a warning's whole text" 0 \
	"level=warn component=config msg=\"$every:8:1: pprofBindAddress: profiling is not implemented; nothing listens on this address\"\$" \
	latest_start

# 2. The shipped Configuration.
shipped=$e2e_top/manifests/config/controller_manager_config.yaml
run_cmd env DEVCLUSTER_CONFIG="$shipped" "$devcluster" restart-manager "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "restart the manager with the shipped Configuration"
else
	fail "restart the manager with the shipped Configuration" "$out"
fi
expect_warnings "the shipped Configuration: groupKindConcurrency only" \
	"$shipped" controller.groupKindConcurrency

# 3. Nothing set, nothing said (v1beta2 defaults waitForPodsReady and
# leaderElect on; defaults never warn).
printf 'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n' \
	>"$work/minimal.yaml"
run_cmd env DEVCLUSTER_CONFIG="$work/minimal.yaml" "$devcluster" \
	restart-manager "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "restart the manager with a minimal Configuration"
else
	fail "restart the manager with a minimal Configuration" "$out"
fi
expect_warnings "a minimal Configuration: no warning" "$work/minimal.yaml"
match "the manager listed everything" 0 'msg="caches synced' latest_start

run_cmd "$devcluster" stop "$cluster"
if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
	pass "devcluster stop (SIGTERM was enough)"
else
	fail "devcluster stop" "exit $rc: $out"
fi
e2e_finish
