#!/usr/bin/env bash
# demo_mig: `make demo SCENARIO=mig` (demo/demo.sh with SCENARIO=mig) run
# as a script would run it, with no terminal, in a temporary state dir:
#  - demo/manager-config-mig.yaml is the shipped Configuration plus
#    resources.transformations, one Replace per MIG profile;
#  - the walk-through exits 0: the four first Jobs admitted, mig-pool
#    reserving 10 of 14 slices and 120Gi; big-train (7g.80gb) waits with
#    Kueue's message naming both transformed resources; kubectl cueue
#    explain shows its transformed per-pod request; it is admitted once
#    the gang ends (11 slices); all five finish;
#  - the store, read back with the devserver alone: every Workload
#    admitted with resourceUsage in slices and memory and no MIG profile,
#    all Finished; cueue-invariants (--config: the same transformations)
#    passes on it;
#  - nothing is left running.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init demo_mig

devcluster=$e2e_dir/devcluster
inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
state=$work/state
cfg=$e2e_top/demo/manager-config-mig.yaml
export SCENARIO=mig DEMO_STATE=$state
export KUBECACHEDIR=$work/kcache
out=$work/run.out
on_exit_stop_clusters "$state"

got=$(python3 -c 'import sys, yaml
demo, shipped = (yaml.safe_load(open(f)) for f in sys.argv[1:])
r = demo.pop("resources", {})
print("same" if demo == shipped else "differs", list(r),
      [(t["input"], t.get("strategy")) for t in r.get("transformations", [])])' \
	"$cfg" "$e2e_top/manifests/config/controller_manager_config.yaml" 2>&1)
if [ "$got" = "same ['transformations'] [('nvidia.com/mig-1g.10gb', 'Replace'), ('nvidia.com/mig-2g.20gb', 'Replace'), ('nvidia.com/mig-3g.40gb', 'Replace'), ('nvidia.com/mig-7g.80gb', 'Replace')]" ]; then
	pass "demo/manager-config-mig.yaml: the shipped Configuration plus one Replace per MIG profile"
else
	fail "demo/manager-config-mig.yaml: the shipped Configuration plus one Replace per MIG profile" "got: $got"
fi

"$e2e_top/demo/demo.sh" </dev/null >"$out" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
	pass "exit status 0"
else
	fail "exit status 0" "exit $rc; output:
$(tail -30 "$out")"
fi
has() { # NAME ERE: some line of the output matches
	if grep -Eq -- "$2" "$out"; then
		pass "$1"
	else
		fail "$1" "pattern: $2; output:
$(tail -40 "$out")"
	fi
}
has "the four first Jobs: mig-pool reserves 10 slices" '^  platform\.example\.com/gpu-slices: 10$'
has "... and 120Gi" '^  platform\.example\.com/gpu-memory: 128849018880 \(120Gi\)$'
has "big-train waits on both transformed resources, in Kueue's words" \
	"^  couldn't assign flavors to pod set main: insufficient unused quota for platform\.example\.com/gpu-memory in flavor a100-mig, 42949672960 more needed, insufficient unused quota for platform\.example\.com/gpu-slices in flavor a100-mig, 3 more needed$"
has "kubectl cueue explain: the transformed request per pod" \
	'^Pod set main: 1 pods, per pod cpu=2 platform\.example\.com/gpu-memory=85899345920 platform\.example\.com/gpu-slices=7$'
has "kubectl cueue explain: what to free" '^    free 3 of platform\.example\.com/gpu-slices in flavor a100-mig$'
has "once the gang ends: 11 slices reserved" '^  platform\.example\.com/gpu-slices: 11$'
has "all five finished" '^demo: mig done: 5 Jobs admitted and finished'

# the store, read back with the devserver alone (nothing changes it)
if DEVCLUSTER_NO_MANAGER=1 "$devcluster" start "$state" >/dev/null 2>&1; then
	export KUBECONFIG=$state/kubeconfig
	expect "the store: every Workload admitted in slices and memory, no profile, Finished" 0 \
		kubectl get workloads -n team-ml -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name} {.status.admission.podSetAssignments[0].count} {.status.admission.podSetAssignments[0].resourceUsage} {.status.conditions[?(@.type=="Finished")].status}{"\n"}{end}' <<'EOF'
big-train 1 {"cpu":"2","platform.example.com/gpu-memory":"85899345920","platform.example.com/gpu-slices":"7"} True
eval 1 {"cpu":"2","platform.example.com/gpu-memory":"21474836480","platform.example.com/gpu-slices":"2"} True
finetune 2 {"cpu":"4","platform.example.com/gpu-memory":"85899345920","platform.example.com/gpu-slices":"6"} True
notebook-a 1 {"cpu":"2","platform.example.com/gpu-memory":"10737418240","platform.example.com/gpu-slices":"1"} True
notebook-b 1 {"cpu":"2","platform.example.com/gpu-memory":"10737418240","platform.example.com/gpu-slices":"1"} True
EOF
	if snapshot "$work/snap.json"; then
		run_cmd "$inv_bin" --config "$cfg" "$work/snap.json"
		[ "$rc" -eq 0 ] && pass "invariants on the store (--config: the demo's transformations)" ||
			fail "invariants on the store" "$out"
	else
		fail "invariants on the store" "snapshot failed"
	fi
	"$devcluster" stop "$state" >/dev/null 2>&1
else
	fail "the store: read back with the devserver alone" "devcluster start (devserver only) failed"
fi

left=$(pgrep -af -- "$state/" 2>/dev/null | grep -v pgrep)
if [ -z "$left" ]; then
	pass "nothing left running"
else
	fail "nothing left running" "$left"
fi
e2e_finish
