#!/usr/bin/env bash
# podsready: Kueue's waitForPodsReady and maximumExecutionTimeSeconds end to
# end (kueue-scheduler.md §1.2, §1.5, §5, §6; kueue-api.md §7.4-7.6, §12.7,
# §13, §14) with batch/v1 Jobs through the real webhook and the real
# kubectl. The devserver's job runner plays the pods:
# cueue.dev/ready-after (a duration or never) and cueue.dev/unready-after
# (devserver/README.md); a never-ready Job that has shown what it must
# gets ready-after=1s, so that it ends up running and its counters stop
# moving.
#
# The manager runs with Configurations written here (the shipped one plus
# waitForPodsReady): A, timeout 3s, recoveryTimeout 2s, blockAdmission
# false, requeuingStrategy {timestamp Eviction, backoffLimitCount 2,
# backoffBaseSeconds 2, backoffMaxSeconds 10}; before it 0, A with a
# timeout of 10m, under which the queue policies of scenarios 4 and 8 are
# set while their Jobs run not ready (no race with a 3 s timeout, however
# loaded the machine); after it B, A with a timeout of 8s (a Job made
# ready-after=1s must be PodsReady before it, however loaded the machine:
# the timeout counts from a whole-second timestamp, so it can fire up to
# a second early), blockAdmission true, timestamp Creation and
# backoffBaseSeconds and backoffMaxSeconds 20 (a manager restart and
# the checks after it must end inside it, however loaded the machine),
# for scenarios 7, 4c and 3. Each
# scenario has its namespace sN and its queues
# (manifests/podsready/setup.yaml); those of configuration A run at the
# same time, their timers overlapping:
#  1. timeout and requeue: a never-ready Job is evicted PodsReadyTimeout 3 s
#     after its admission (Kueue's message, event, Job suspended, quota
#     released with Requeued=False), requeueState count 1 and requeueAt =
#     eviction + 2 s; not admitted again before requeueAt, then Requeued=True
#     BackoffFinished and admitted; the second requeueAt is eviction + 4 s;
#     a Job ready after 1 s is PodsReady=True Started and never evicted;
#  2. deactivation at the third timeout (backoffLimitCount 2): spec.active
#     false, Evicted DeactivatedDueToRequeuingLimitExceeded, requeueState
#     gone, quota released while another Job gets in; reactivated with
#     `kubectl patch workload`: Requeued=True Reactivated, count afresh;
#  4. queue order: with timestamp Eviction a timed-out Job queues behind
#     one created after it but before its eviction (4e); with Creation
#     ahead of it (4c); stopPolicy Hold keeps both pending until then;
#     the first timeouts of 4 and of 8's Hold case happen at the restart
#     into A (their Jobs were admitted 3 s before and more);
#  5. recoveryTimeout: ready, then unready (PodsReady False
#     WaitForRecovery), evicted 2 s later (underlying cause WaitForRecovery),
#     twice, then deactivated;
#  6. maximumExecutionTimeSeconds from the Job's label: deactivated with
#     DeactivatedDueToMaximumExecutionTimeExceeded and the Warning event;
#     accumulatedPastExecutionTimeSeconds carried across a LocalQueue
#     HoldAndDrain eviction shortens the next admission;
#  8. stopPolicy: Hold keeps a Job out after its backoff; HoldAndDrain of a
#     ClusterQueue and of a LocalQueue evicts an admitted, not ready Job
#     (ClusterQueueStopped / LocalQueueStopped); started again, it is
#     admitted with its PodsReady timer afresh;
#  9. the metrics of all that (kueue_evicted_workloads_total by reason and
#     underlying cause, the PodsReady histograms), scraped before the
#     restart resets them;
#  7. the manager restarted (by a watcher, at once) when a Job's timeout
#     is written: requeueAt and the count unchanged and honoured;
#  3. blockAdmission: five Jobs that all fit, created (one second apart)
#     while their queue is held: admitted one at a time in queue order,
#     each once the one before is ready, the next one QuotaReserved=False
#     WaitingForPodsReady meanwhile; a never-ready one blocks until its
#     timeout evicts it;
# 10. `kubectl get workloads` and `kubectl describe workload` along the way.
#
# Short-lived states (a backoff lasts 2 s) are read from a recorded
# `kubectl get workloads -w` (history.py allstates), and durations from
# the objects' own timestamps (lastTransitionTime, requeueState.requeueAt;
# second precision, hence tolerances of a second or two). cueue-invariants runs at
# the observation points and, through history.py, on every state the
# Workload and Job watches recorded; every eviction held its quota until
# its Job was suspended with no active pods.
#
# MANAGER_BIN / DEVSERVER_BIN / INVARIANTS_BIN test other binaries;
# PODSREADY_WAIT (tenths of a second, default 300) bounds each wait.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init podsready

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
history_py=$e2e_dir/history.py
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
# How long (tenths of a second, wall time) a change may take to show.
T=${PODSREADY_WAIT:-300}
cd "$e2e_dir/manifests/podsready" || exit 1

on_exit_stop_clusters "$cluster"

# ---------------------------------------------------------------------
# Helpers (jp, cond_line, wait_until, expect_eventually, match_eventually,
# invariants, wl_name and metrics_url are lib.bash's)

# mkcfg FILE TIMEOUT BLOCK-ADMISSION TIMESTAMP BACKOFF-BASE: the shipped
# Configuration with the suite's waitForPodsReady.
mkcfg() {
	{
		cat "$e2e_top/manifests/config/controller_manager_config.yaml"
		printf '%s\n' 'waitForPodsReady:' "  timeout: $2" \
			'  recoveryTimeout: 2s' "  blockAdmission: $3" \
			'  requeuingStrategy:' "    timestamp: $4" \
			'    backoffLimitCount: 2' "    backoffBaseSeconds: $5" \
			"    backoffMaxSeconds: $(($5 > 10 ? $5 : 10))"
	} >"$1"
}

# jobfile NS NAME QUEUE PAR [ANNOTATION=VALUE | label:KEY=VALUE]...: the
# Job's manifest (job.tmpl) in $work/NS-NAME.yaml.
jobfile() {
	local ns=$1 n=$2 q=$3 par=$4 a f=$work/$1-$2.yaml
	shift 4
	sed -e '/^#/d' -e "s/NAME/$n/" -e "s/NS/$ns/" -e "s/QUEUE/$q/" \
		-e "s/PAR/$par/" job.tmpl >"$f"
	for a; do
		case $a in
		label:*)
			a=${a#label:}
			sed -i "/^  labels:/a\\    ${a%%=*}: \"${a#*=}\"" "$f" ;;
		*)
			sed -i "/^  annotations:/a\\    ${a%%=*}: \"${a#*=}\"" "$f" ;;
		esac
	done
}

# create NS/JOB...: creates the Jobs of their jobfiles with one kubectl
# create, one check each (suspended by the webhook), and caches their
# Workloads' names (wl_name's cache) from the answer.
create() {
	local nn files=() line h
	for nn; do
		files+=(-f "$work/${nn%/*}-${nn#*/}.yaml")
	done
	run_cmd kubectl create "${files[@]}" \
		-o jsonpath='{.metadata.namespace}/{.metadata.name} {.spec.suspend} {.metadata.uid}{"\n"}'
	for nn; do
		line=$(grep "^$nn true " <<<"$out")
		if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
			pass "create job $nn: suspended"
			h=$(printf 'Job\nbatch\n%s\n%s' "${nn#*/}" "${line##* }" | sha1sum | cut -c1-5)
			wl_cache[$nn]=job-${nn#*/}-$h
		else
			fail "create job $nn: suspended" "exit $rc: $out"
		fi
	done
}
# w NS JOB: the Job's Workload's name.
w() {
	wl_name "$2" "$1"
}
# wlc NS JOB TYPE: the Workload's condition TYPE, "status reason: message".
wlc() {
	cond_line "workload/$(w "$1" "$2")" "$3" "$1"
}
# state NS JOB: "suspend active-pods" (status.active is omitted at 0).
state() {
	local s
	s=$(jp "job/$2" '{.spec.suspend} {.status.active}' "$1")
	[ "${s% }" != "$s" ] && s+=0
	echo "$s"
}
# annotate NS JOB KEY=VALUE: sets a Job annotation (the job runner reads
# it when it plans the Job's next step).
annotate() {
	run_cmd kubectl annotate --overwrite -n "$1" job "$2" "$3"
	[ "$rc" -eq 0 ] || fail "annotate $1/$2 $3" "$out"
}
# stop_policy KIND NAME POLICY [NS]: patches spec.stopPolicy, one check.
stop_policy() {
	expect "${4:+$4/}$2 stopPolicy $3" 0 kubectl patch "$1" "$2" ${4:+-n "$4"} \
		--type=merge -p "{\"spec\":{\"stopPolicy\":\"$3\"}}" \
		-o jsonpath='{.spec.stopPolicy}' <<<"$3"
}
# same NAME WANT GOT: one check, GOT is WANT.
same() {
	if [ "$2" == "$3" ]; then
		pass "$1"
	else
		fail "$1" "want: $2
got:  $3"
	fi
}
# within NAME LO HI VALUE: one check, LO <= VALUE <= HI (integers).
within() {
	if [[ $4 =~ ^-?[0-9]+$ ]] && [ "$4" -ge "$2" ] && [ "$4" -le "$3" ]; then
		pass "$1 ($4 s)"
	else
		fail "$1" "want $2..$3, got '$4'"
	fi
}
# past EPOCH: the wall clock is at or past EPOCH (seconds).
past() {
	[ "$(date +%s)" -ge "$1" ]
}
# epoch_of NS OBJ JSONPATH: a timestamp of OBJ in epoch seconds.
epoch_of() {
	date -d "$(jp "$2" "$3" "$1")" +%s
}
# wl_created NS JOB: the creationTimestamp (epoch s) of the Job's
# Workload, the queue-order time, once the manager created it.
wl_created() {
	wait_until "$T" kubectl get workload "$(w "$1" "$2")" -n "$1"
	epoch_of "$1" "workload/$(w "$1" "$2")" '{.metadata.creationTimestamp}'
}
# events_of NS NAME REASON: "TYPE COUNT: MESSAGE" of the events REASON of
# object NAME, the counts of identical ones added up (client-go folds
# repeats into one Event with a count; one Event each is as good).
events_of() {
	kubectl get events -n "$1" -o jsonpath="{range .items[?(@.involvedObject.name==\"$2\")]}{.reason}|{.type}|{.count}|{.message}{\"\\n\"}{end}" 2>&1 |
		awk -F'|' -v r="$3" '$1 == r { n[$2 " " $4] += $3 }
			END { for (k in n) { t = k; sub(/ .*/, "", t)
				m = substr(k, length(t) + 2); print t " " n[k] ": " m } }' |
		sort
}
# EVICTIONS: status.schedulingStats.evictions as "reason/cause=count ...".
EVICTIONS='{range .status.schedulingStats.evictions[*]}{.reason}/{.underlyingCause}={.count} {end}'
# evictions_of NS JOB: the Workload's EVICTIONS.
evictions_of() {
	jp "workload/$(w "$1" "$2")" "$EVICTIONS" "$1" | sed 's/ *$//'
}

# --- The recorded Workload watch -------------------------------------
# states_refresh: every Workload's distinct states in the watch, one
# file each in $work/states (history.py allstates), made again only when
# the stream has grown since (st_size; a refresh in a subshell is lost,
# so a poll calls it itself).
st_size=-1
states_refresh() {
	local s
	s=$(stat -c %s "$work/wl.stream")
	[ "$s" != "$st_size" ] || return 0
	rm -rf "$work/states"
	mkdir "$work/states"
	python3 "$history_py" allstates "$work/wl.stream" "$work/states"
	st_size=$s
}
# states NS JOB: those states of the Job's Workload, one line each.
states() {
	states_refresh
	cat "$work/states/${1}_$(w "$1" "$2")" 2>/dev/null
}
# find_state NS JOB ERE AFTER-RV: sets $st to the first state after
# AFTER-RV that matches ERE, $st_rv to its rv; status 1 when none. The
# files hold a prefix of the history (the stream up to some rv), so a
# match found there is the first one: the stream is read again only when
# none is.
st=
st_rv=0
find_state() {
	find_in_files "$@" && return 0
	states_refresh
	find_in_files "$@"
}
find_in_files() {
	st=$(cat "$work/states/${1}_$(w "$1" "$2")" 2>/dev/null |
		awk -v a="$4" '{ r = substr($1, 4) + 0 } r > a' |
		grep -E -m1 -- "$3")
	[ -n "$st" ] || return 1
	st_rv=${st%% *}
	st_rv=${st_rv#rv=}
}
# seen NAME TENTHS NS JOB ERE [AFTER-RV]: one check: the watch comes to
# record a state of the Job's Workload after AFTER-RV (default 0) that
# matches ERE; $st and $st_rv as find_state (on failure $st is empty and
# $st_rv unchanged).
seen() {
	local name=$1 n=$2 ns=$3 j=$4 pat=$5 after=${6:-0} keep=$st_rv
	if wait_until "$n" find_state "$ns" "$j" "$pat" "$after"; then
		pass "$name"
		return
	fi
	st=
	st_rv=$keep
	fail "$name" "no state after rv $after matches: $pat
last states:
$(states "$ns" "$j" | tail -4 | cut -c1-400)"
}
# sv KEY: rv, active, count, at or acc of $st ("-" when absent); with
# KEY TYPE@, the lastTransitionTime (epoch s) of condition TYPE.
sv() {
	case $1 in
	*@) sed -nE "s/.* ${1%@}=[A-Za-z]+\/[A-Za-z]*@([0-9]+)\{.*/\1/p" <<<"$st" ;;
	*) awk -v k="$1" '{ for (i = 1; i <= 5; i++) { split($i, kv, "=")
		if (kv[1] == k) print kv[2] } }' <<<"$st" ;;
	esac
}
# sc TYPE: condition TYPE of $st as "Status/Reason{message}" ("-" when absent).
sc() {
	local c
	c=$(sed -nE "s/.* $1=([A-Za-z]+\/[A-Za-z]*)@[0-9]+(\{[^}]*\}).*/\1\2/p" <<<"$st")
	echo "${c:--}"
}
# count_states NS JOB ERE FROM [TO]: how many states after FROM (up to TO)
# match ERE.
count_states() {
	states "$1" "$2" |
		awk -v a="$4" -v b="${5:-999999999}" '{ r = substr($1, 4) + 0 } r > a && r <= b' |
		grep -cE -- "$3"
}

# --- History of every state (as preemption.sh) -------------------------
hist_rv=0
hist_seq=0
mkdir -p "$work/hist"
# last_rv STREAM: the resourceVersion of the stream's last complete event.
last_rv() {
	awk '/}$/ { l = $0 } END {
		if (match(l, /"resourceVersion":"[0-9]+"/))
			print substr(l, RSTART + 19, RLENGTH - 20)
		else
			print 0 }' "$1"
}
# hist_sync: prints the resourceVersion up to which both streams are
# complete: a marker of each kind is touched and both streams waited for.
hist_sync() {
	local rw rj lw lj
	hist_seq=$((hist_seq + 1))
	rw=$(kubectl annotate --overwrite workload mark -n marks cueue.dev/mark="$hist_seq" \
		-o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
	rj=$(kubectl annotate --overwrite job mark -n marks cueue.dev/mark="$hist_seq" \
		-o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
	[ -n "$rw" ] && [ -n "$rj" ] || return 1
	hist_past() {
		lw=$(last_rv "$work/wl.stream")
		lj=$(last_rv "$work/job.stream")
		[ "$lw" -ge "$rw" ] && [ "$lj" -ge "$rj" ]
	}
	wait_until "$T" hist_past || return 1
	hist_past
	echo $((lw < lj ? lw : lj))
}
# The victims whose evictions history_stops checks: NS/WORKLOAD=JOB -> count.
declare -A victims=()
# victim NS JOB N: the Job's Workload was evicted N times.
victim() {
	victims[$1/$(w "$1" "$2")=$2]=$3
}
# history_start LABEL / history_finish: one check, every state since
# the last one passes cueue-invariants; then one per victim recorded
# since: at each of its evictions it held its quota until its Job was
# suspended with no active pods (kueue-scheduler.md §5). history.py runs
# in the background in between (scenario 7 goes on meanwhile).
hist_label=
hist_pid=
hist_keys=()
victims_now=()
# hist_run CUT NS/WORKLOAD=JOB...: history.py check and stops, into
# $work/hist-out.{check,rc,stops}.
hist_run() {
	local cut=$1
	shift
	python3 "$history_py" check "$inv_bin" "$work/queues.json" "$work/wl.stream" \
		"$work/job.stream" "$hist_rv" "$cut" "$work/hist" >"$work/hist-out.check" 2>&1
	echo $? >"$work/hist-out.rc"
	python3 "$history_py" stops "$work/wl.stream" "$work/job.stream" "$@" \
		>"$work/hist-out.stops" 2>&1
}
history_start() {
	local cut v
	hist_label=$1
	hist_pid=
	if ! kill -0 "$wl_watch" 2>/dev/null || ! kill -0 "$job_watch" 2>/dev/null; then
		fail "history: $1" "a watch ended: $(tail -3 "$work/wl.stream" "$work/job.stream")"
		return
	fi
	if ! cut=$(hist_sync); then
		fail "history: $1" "the watches did not deliver the markers"
		return
	fi
	kubectl get clusterqueues,cohorts,resourceflavors,localqueues -A -o json \
		>"$work/queues.json" 2>"$work/queues.err"
	mapfile -t hist_keys < <(printf '%s\n' "${!victims[@]}" | sort)
	victims_now=()
	for v in "${hist_keys[@]}"; do
		victims_now+=("$v=${victims[$v]}")
	done
	victims=()
	e2e_bg hist_run "$cut" "${hist_keys[@]}"
	hist_pid=$e2e_bg_pid
	hist_rv=$cut
}
history_finish() {
	local v n want line out
	[ -n "$hist_pid" ] || return
	wait "$hist_pid"
	out=$(cat "$work/hist-out.check")
	if [ "$(cat "$work/hist-out.rc")" = 0 ]; then
		pass "history: $hist_label: every state passes cueue-invariants (${out#states })"
	else
		fail "history: $hist_label: every state passes cueue-invariants" "$out"
	fi
	out=$(cat "$work/hist-out.stops")
	for v in "${victims_now[@]}"; do
		n=${v##*=}
		v=${v%=*}
		want=$(printf 'held+stopped %.0s' $(seq 1 "$n"))
		line=$(grep -F "${v%=*}: " <<<"$out")
		same "history: ${v%=*}: quota held until its Job stopped, at each of its $n eviction(s)" \
			"${v%=*}: ${want% }" "$line"
	done
}

# --- Metrics ------------------------------------------------------------
# scrape: the manager's /metrics into $work/metrics.txt.
scrape() {
	curl -sf --max-time 5 "$(metrics_url)/metrics" >"$work/metrics.txt"
}
# series NAME: the scraped series NAME (exactly: a histogram's _count and
# _sum are NAME_count, NAME_sum) of the suite's queues but cq-7, sorted.
series() {
	grep "^$1{" "$work/metrics.txt" | grep 'cluster_queue="cq-' |
		grep -v 'cluster_queue="cq-7"' | sort
}
# metric NAME LABEL-ERE: the sum of the scraped series NAME whose labels
# match LABEL-ERE (0 when none).
metric() {
	awk -v n="$1" -v l="$2" 'BEGIN { v = 0 }
			index($1, n "{") == 1 && $1 ~ l { v += $2 }
			END { print v }' "$work/metrics.txt"
}

# ---------------------------------------------------------------------
# The cluster and the recorders. Three Configurations: 0 (a PodsReady
# timeout of 10m, so that the queue policies of scenarios 4e and 8 are
# set while their Jobs are admitted and not ready, whatever the load), A
# (the first configuration proper) and B (the second; backoff base and
# maximum 20 s: s7's manager restart, and the checks after it, must end
# before r's requeueAt; a loaded make check saw the restart alone take
# 13 s, and r readmitted before its Job got its ready-after annotation).

mkcfg "$work/config-0.yaml" 10m false Eviction 2
mkcfg "$work/config-a.yaml" 3s false Eviction 2
mkcfg "$work/config-b.yaml" 8s true Creation 20
export DEVCLUSTER_CONFIG=$work/config-0.yaml
job_cluster_start

# The recorders start before anything exists; kubectl prints one event a line.
e2e_bg kubectl get workloads -A -w --output-watch-events -o json \
	>"$work/wl.stream" 2>"$work/wl.err"
wl_watch=$e2e_bg_pid
e2e_bg kubectl get jobs.batch -A -w --output-watch-events -o json \
	>"$work/job.stream" 2>"$work/job.err"
job_watch=$e2e_bg_pid

run_cmd kubectl apply -f setup.yaml
if [ "$rc" -eq 0 ]; then
	pass "apply the namespaces, the flavor, the queues and the markers"
else
	fail "apply the setup" "$out"
	e2e_finish
fi

# restart CONFIG NAME: restarts the manager with CONFIG, one check NAME.
restart() {
	run_cmd env DEVCLUSTER_CONFIG="$1" "$devcluster" restart-manager "$cluster"
	if [ "$rc" -eq 0 ]; then
		pass "$2"
	else
		fail "$2" "$out"
	fi
}
# not_admitted NS/JOB...: those whose Workload does not hold quota (one call).
not_admitted() {
	local all nn
	all=$(kubectl get workloads -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}={.status.conditions[?(@.type=="QuotaReserved")].status}{"\n"}{end}')
	for nn; do
		grep -qx "${nn%/*}/$(w "${nn%/*}" "${nn#*/}")=True" <<<"$all" || echo "$nn"
	done
}

# ---------------------------------------------------------------------
# Configuration 0: five never-ready Jobs admitted; d's ClusterQueue and
# e's LocalQueue drained, the ClusterQueues of h, x and x2 held (they
# keep running); y and y2 created after x and x2 (creationTimestamp has
# second precision) wait.

NEVER=cueue.dev/ready-after=never
jobfile s8 h qh 1 "$NEVER"
jobfile s8 d q 1 "$NEVER"
jobfile s8 e ql 1 "$NEVER"
jobfile s4 x q 1 "$NEVER"
jobfile s4 x2 qc 1 "$NEVER"
create s8/h s8/d s8/e s4/x s4/x2
expect_eventually "the never-ready s8/d, s8/e, s8/h, s4/x and s4/x2 admitted" "$T" "" \
	not_admitted s8/d s8/e s8/h s4/x s4/x2
stop_policy clusterqueue cq-8 HoldAndDrain
stop_policy localqueue ql HoldAndDrain s8
stop_policy clusterqueue cq-8h Hold
stop_policy clusterqueue cq-4 Hold
stop_policy clusterqueue cq-4c Hold
x_cr=$(wl_created s4 x)
x2_cr=$(wl_created s4 x2)
wait_until 20 past $(((x_cr > x2_cr ? x_cr : x2_cr) + 1))
jobfile s4 y q 1
jobfile s4 y2 qc 1
create s4/y s4/y2
match_eventually "s4e: y pending, cq-4 held" "$T" '^False (Inadmissible|Pending): ' \
	wlc s4 y QuotaReserved
match_eventually "s4c: y2 pending, cq-4c held" "$T" '^False (Inadmissible|Pending): ' \
	wlc s4 y2 QuotaReserved
expect_eventually "s8: d evicted: ClusterQueueStopped" "$T" \
	"True ClusterQueueStopped: The ClusterQueue is stopped" wlc s8 d Evicted
expect_eventually "s8: e evicted: LocalQueueStopped" "$T" \
	"True LocalQueueStopped: The LocalQueue is stopped" wlc s8 e Evicted
expect_eventually "s8: d suspended, its pods gone" "$T" "true 0" state s8 d
expect_eventually "s8: e suspended, its pods gone" "$T" "true 0" state s8 e
expect_eventually "s8: d's reservation cleared: Requeued=False ClusterQueueStopped" "$T" \
	"False ClusterQueueStopped: The ClusterQueue is stopped" wlc s8 d Requeued
expect_eventually "s8: e's reservation cleared: Requeued=False LocalQueueStopped" "$T" \
	"False LocalQueueStopped: The LocalQueue is stopped" wlc s8 e Requeued
expect "s8: d evicted by its queue" 0 evictions_of s8 d <<<'ClusterQueueStopped/=1'
expect "s8: e evicted by its queue" 0 evictions_of s8 e <<<'LocalQueueStopped/=1'
expect "s8: h keeps running while cq-8h is held" 0 state s8 h <<<'false 1'
seen "s8: d's first admission recorded" "$T" s8 d 'QuotaReserved=True/'
d_adm1=$(sv Admitted@)
d_rv1=$st_rv
seen "s8: e's first admission recorded" "$T" s8 e 'QuotaReserved=True/'
e_adm1=$(sv Admitted@)
e_rv1=$st_rv
invariants "s8, s4e: queues held and drained"

# ---------------------------------------------------------------------
# Configuration A: h, x and x2, admitted more than 3 s ago, time out at
# once; d and e (admitted 4 s ago or more) are started again; then the
# Jobs of scenarios 1, 2, 5 and 6, and the five of scenario 3 (cq-3 is
# held: they wait for the second configuration).

restart "$work/config-a.yaml" "manager restarted with the first configuration"
wait_until "$T" past $((d_adm1 + 4))
wait_until "$T" past $((e_adm1 + 4))
stop_policy clusterqueue cq-8 None
stop_policy localqueue ql None s8

jobfile s1 a q 1 "$NEVER"
jobfile s1 b q 2 cueue.dev/ready-after=1s
jobfile s5 rcv q 1 cueue.dev/ready-after=1s cueue.dev/unready-after=1s
jobfile s6 m q 1 label:kueue.x-k8s.io/max-exec-time-seconds=3
jobfile s6 acc q2 1 label:kueue.x-k8s.io/max-exec-time-seconds=15
create s1/a s1/b s5/rcv s6/m s6/acc

# 6: acc runs ready; after 2 s admitted at least (of its 15), its
# LocalQueue q2 is drained, so that its admitted seconds are carried over.
seen "s6: acc admitted" "$T" s6 acc 'QuotaReserved=True/.*PodsReady=True/Started'
acc_adm1=$(sv Admitted@)
wait_until "$T" past $((acc_adm1 + 3))
stop_policy localqueue q2 HoldAndDrain s6
expect_eventually "s6: acc evicted: LocalQueueStopped" "$T" \
	"True LocalQueueStopped: The LocalQueue is stopped" wlc s6 acc Evicted
seen "s6: acc's reservation cleared" "$T" s6 acc 'QuotaReserved=False/'
acc_clr=$(sv QuotaReserved@)
acc_n=$(sv acc)
within "s6: acc's accumulatedPastExecutionTimeSeconds: its admitted whole seconds (cleared - admitted = $((acc_clr - acc_adm1)) s)" \
	$((acc_clr - acc_adm1 - 1)) $((acc_clr - acc_adm1)) "$acc_n"
within "s6: ... 2 s at least" 2 13 "$acc_n"
[[ $acc_n =~ ^[0-9]+$ ]] || acc_n=0
stop_policy localqueue q2 None s6

# 3: p1, p2, p3 (ready 1 s after their start), n (never ready) and p5
# (ready at once), created one second apart: their queue order.
# create_next NAME ARGS...: jobfile s3 NAME q 1 ARGS, created once the
# second in which the last Workload was created is over.
s3_last=0
create_next() {
	local n=$1
	shift
	wait_until 20 past $((s3_last + 1))
	jobfile s3 "$n" q 1 "$@"
	create "s3/$n"
	s3_last=$(wl_created s3 "$n")
}
create_next p1 cueue.dev/ready-after=1s
create_next p2 cueue.dev/ready-after=1s
create_next p3 cueue.dev/ready-after=1s
create_next n "$NEVER"
create_next p5

# ---------------------------------------------------------------------
# 1. Timeout and requeue with backoff (s1: a never ready, b ready after 1 s).

aw=$(w s1 a)
amsg="Exceeded the PodsReady timeout s1/$aw"
seen "s1: a admitted" "$T" s1 a 'QuotaReserved=True/'
a_adm=$(sv Admitted@)
same "s1: a admitted with PodsReady=False WaitForStart" \
	"False/WaitForStart{Not all pods are ready or succeeded}" "$(sc PodsReady)"
seen "s1: a evicted by the timeout, requeueState count 1" "$T" s1 a \
	'count=1 .*Evicted=True/PodsReadyTimeout'
a_ev=$(sv Evicted@)
same "s1: a's Evicted=True PodsReadyTimeout with Kueue's message" \
	"True/PodsReadyTimeout{$amsg}" "$(sc Evicted)"
within "s1: a evicted 3 s (the timeout) after its admission" 3 4 $((a_ev - a_adm))
seen "s1: a's reservation released: Requeued=False PodsReadyTimeout" "$T" s1 a \
	'Requeued=False/PodsReadyTimeout' "$st_rv"
a_rv=$st_rv
a_at=$(sv at)
same "s1: a's QuotaReserved=False Pending with the eviction message" \
	"False/Pending{$amsg}" "$(sc QuotaReserved)"
same "s1: a's Admitted=False NoReservation" \
	"False/NoReservation{The workload has no reservation}" "$(sc Admitted)"
same "s1: a's Requeued=False PodsReadyTimeout" "False/PodsReadyTimeout{$amsg}" "$(sc Requeued)"
same "s1: a's requeueState count 1" 1 "$(sv count)"
within "s1: a's requeueAt = eviction + 2 s (backoffBaseSeconds)" 2 3 $((a_at - a_ev))
seen "s1: a's backoff finished: Requeued=True BackoffFinished" "$T" s1 a \
	'Requeued=True/BackoffFinished' "$a_rv"
same "s1: BackoffFinished message" "True/BackoffFinished{The workload backoff was finished}" "$(sc Requeued)"
same "s1: BackoffFinished clears requeueAt, keeps count 1" "1 -" "$(sv count) $(sv at)"
within "s1: BackoffFinished at or after requeueAt" 0 2 $(($(sv Requeued@) - a_at))
seen "s1: a admitted again" "$T" s1 a 'QuotaReserved=True/' "$a_rv"
a_adm2=$(sv Admitted@)
within "s1: a not admitted again before requeueAt" 0 3 $((a_adm2 - a_at))
same "s1: a's Evicted flipped on admission" "False/QuotaReserved{Previously: $amsg}" "$(sc Evicted)"
seen "s1: a's second timeout: count 2" "$T" s1 a 'count=2 .*Requeued=False/PodsReadyTimeout' "$st_rv"
a_rv=$st_rv
a_at2=$(sv at)
a_ev2=$(sv Evicted@)
within "s1: a's second eviction 3 s after its second admission" 3 4 $((a_ev2 - a_adm2))
within "s1: a's second requeueAt = eviction + 4 s (2 x base)" 4 5 $((a_at2 - a_ev2))
seen "s1: a admitted a third time" "$T" s1 a 'QuotaReserved=True/' "$a_rv"
a_adm3=$(sv Admitted@)
within "s1: ... not before its second requeueAt" 0 3 $((a_adm3 - a_at2))
same "s1: a's count still 2" 2 "$(sv count)"
# b: ready after 1 s, never evicted.
seen "s1: b admitted with PodsReady=False WaitForStart" "$T" s1 b \
	'QuotaReserved=True/.*PodsReady=False/WaitForStart'
b_adm=$(sv Admitted@)
seen "s1: b PodsReady=True Started" "$T" s1 b 'PodsReady=True/'
same "s1: b's PodsReady condition" \
	"True/Started{All pods reached readiness and the workload is running}" "$(sc PodsReady)"
within "s1: b ready about 1 s (ready-after) after its admission" 1 3 $(($(sv PodsReady@) - b_adm))
invariants "s1: a in its third admission, b ready"

# ---------------------------------------------------------------------
# 2. The third timeout deactivates a (backoffLimitCount 2).

seen "s2: a marked DeactivationTarget=True RequeuingLimitExceeded" "$T" s1 a \
	'active=true .*DeactivationTarget=True/RequeuingLimitExceeded' "$a_rv"
same "s2: DeactivationTarget message" \
	"True/RequeuingLimitExceeded{exceeding the maximum number of re-queuing retries}" \
	"$(sc DeactivationTarget)"
within "s2: ... at its third timeout, 3 s after its third admission" 3 4 \
	$(($(sv DeactivationTarget@) - a_adm3))
dmsg="The workload is deactivated due to exceeding the maximum number of re-queuing retries"
seen "s2: a deactivated, evicted and released" "$T" s1 a \
	'active=false .*QuotaReserved=False/.*Evicted=True/DeactivatedDueToRequeuingLimitExceeded' "$a_rv"
a_rv=$st_rv
# cline TYPE: a jsonpath line with condition TYPE as cond_line prints it.
cline() {
	echo "{range .status.conditions[?(@.type==\"$1\")]}{.status} {.reason}: {.message}{end}"
}
v=$(jp "workload/$aw" "{.spec.active} [{.status.requeueState}]
$(cline Evicted)
$(cline QuotaReserved)
$(cline Requeued)
[$(cline DeactivationTarget)]
$EVICTIONS" s1)
same "s2: a's spec.active false, requeueState gone" 'false []' "$(sed -n 1p <<<"$v")"
same "s2: a's Evicted=True DeactivatedDueToRequeuingLimitExceeded" \
	"True DeactivatedDueToRequeuingLimitExceeded: $dmsg" "$(sed -n 2p <<<"$v")"
same "s2: a's QuotaReserved=False Pending" "False Pending: $dmsg" "$(sed -n 3p <<<"$v")"
same "s2: a's Requeued=False DeactivatedDueToRequeuingLimitExceeded" \
	"False DeactivatedDueToRequeuingLimitExceeded: $dmsg" "$(sed -n 4p <<<"$v")"
same "s2: a's DeactivationTarget removed" '[]' "$(sed -n 5p <<<"$v")"
same "s2: a's schedulingStats.evictions" \
	'PodsReadyTimeout/WaitForStart=2 Deactivated/RequeuingLimitExceeded=1' \
	"$(sed -n 6p <<<"$v" | sed 's/ *$//')"
expect "s2: a's Job suspended, no pods" 0 state s1 a <<<'true 0'
expect_eventually "s2: a's events: two EvictedDueToPodsReadyTimeout" "$T" \
	"Normal 2: $amsg" events_of s1 "$aw" EvictedDueToPodsReadyTimeout
expect_eventually "s2: a's event EvictedDueToDeactivatedDueToRequeuingLimitExceeded" "$T" \
	"Normal 1: $dmsg" events_of s1 "$aw" EvictedDueToDeactivatedDueToRequeuingLimitExceeded
expect_eventually "s2: Job a's Stopped events (one per eviction)" "$T" \
	"Normal 1: $dmsg
Normal 2: $amsg" events_of s1 a Stopped
# Others keep flowing: cq-1 holds only b's 2 cpu now, and c gets in.
expect_eventually "s2: a's quota released (cq-1 reserves b's 2 cpu)" "$T" "1 2" \
	jp clusterqueue/cq-1 '{.status.reservingWorkloads} {.status.flavorsReservation[0].resources[0].total}'
jobfile s1 c q 1
create s1/c
expect_eventually "s2: c admitted and running meanwhile" "$T" "false 1" state s1 c
seen "s2: c PodsReady=True Started" "$T" s1 c 'PodsReady=True/Started'
invariants "s2: a deactivated, c runs"
# 10: what a user sees.
expect_table "s2: kubectl get workloads" 0 kubectl get workloads -n s1 <<EOF
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
$aw | q |  | False |  | <age>
$(w s1 b) | q | cq-1 | True |  | <age>
$(w s1 c) | q | cq-1 | True |  | <age>
EOF
run_cmd kubectl describe workload "$aw" -n s1
desc_a=$out
for pat in '^  Active: +false$' \
	'^    Reason: +DeactivatedDueToRequeuingLimitExceeded$' \
	"^    Message: +$dmsg\$" \
	'^    Reason: +WaitForStart$' \
	'^      Reason: +PodsReadyTimeout$' '^      Underlying Cause: +WaitForStart$' \
	"^  Normal +EvictedDueToPodsReadyTimeout +.* +kueue-admission +$amsg\$" \
	"^  Normal +EvictedDueToDeactivatedDueToRequeuingLimitExceeded +.* +$dmsg\$"; do
	if grep -Eq -- "$pat" <<<"$desc_a"; then
		pass "s2: kubectl describe workload a: /$pat/"
	else
		fail "s2: kubectl describe workload a: /$pat/" "$desc_a"
	fi
done
if grep -q 'Requeue State' <<<"$desc_a"; then
	fail "s2: kubectl describe workload a: no Requeue State" "$desc_a"
else
	pass "s2: kubectl describe workload a: no Requeue State"
fi
# Reactivation: the count starts afresh.
expect "s2: reactivate a (kubectl patch workload spec.active=true)" 0 \
	kubectl patch workload "$aw" -n s1 --type=merge -p '{"spec":{"active":true}}' \
	-o jsonpath='{.spec.active}' <<<'true'
seen "s2: a requeued: Requeued=True Reactivated" "$T" s1 a \
	'active=true .*Requeued=True/Reactivated' "$a_rv"
same "s2: Reactivated message" "True/Reactivated{The workload was reactivated}" "$(sc Requeued)"
seen "s2: a admitted after its reactivation" "$T" s1 a 'QuotaReserved=True/' "$st_rv"
a_adm4=$(sv Admitted@)
seen "s2: a's next timeout: count 1 again" "$T" s1 a 'Requeued=False/PodsReadyTimeout' "$st_rv"
same "s2: ... requeueState count 1 (afresh)" 1 "$(sv count)"
within "s2: ... requeueAt = eviction + 2 s (the base again)" 2 3 $(($(sv at) - $(sv Evicted@)))
within "s2: ... 3 s after that admission" 3 4 $(($(sv Evicted@) - a_adm4))
a_rv=$st_rv
# a goes on: count 2, then deactivated again (checked below).

# ---------------------------------------------------------------------
# 4e. Queue order with timestamp Eviction: x (never ready) times out and
# queues behind y, created after x but before x's eviction.

seen "s4e: x evicted by its timeout" "$T" s4 x 'count=1 .*Evicted=True/PodsReadyTimeout'
x_ev=$(sv Evicted@)
x_rv=$st_rv
x_cr=$(wl_created s4 x)
y_cr=$(wl_created s4 y)
if [ "$x_cr" -lt "$y_cr" ] && [ "$y_cr" -lt "$x_ev" ]; then
	pass "s4e: y created after x, before x's eviction ($x_cr < $y_cr < $x_ev)"
else
	fail "s4e: y created after x, before x's eviction" "x created $x_cr, y created $y_cr, x evicted $x_ev"
fi
seen "s4e: x's backoff finished" "$T" s4 x 'Requeued=True/BackoffFinished' "$x_rv"
match "s4e: y pending while cq-4 is held" 0 '^False (Inadmissible|Pending): ' wlc s4 y QuotaReserved
stop_policy clusterqueue cq-4 None
expect_eventually "s4e: y admitted first, and runs" "$T" "false 1" state s4 y
match_eventually "s4e: x pending behind y" "$T" '^False Pending: couldn.t assign flavors' \
	wlc s4 x QuotaReserved
same "s4e: x not admitted since its eviction" 0 "$(count_states s4 x 'QuotaReserved=True/' "$x_rv")"
invariants "s4e: y runs, x pending"

# ---------------------------------------------------------------------
# 5. recoveryTimeout: rcv ready after 1 s, unready 1 s later.

seen "s5: rcv PodsReady=True Started" "$T" s5 rcv 'QuotaReserved=True/.*PodsReady=True/Started'
same "s5: rcv's PodsReady" "True/Started{All pods reached readiness and the workload is running}" \
	"$(sc PodsReady)"
seen "s5: rcv PodsReady=False WaitForRecovery" "$T" s5 rcv \
	'QuotaReserved=True/.*PodsReady=False/WaitForRecovery' "$st_rv"
same "s5: WaitForRecovery message" \
	"False/WaitForRecovery{At least one pod has failed, waiting for recovery}" "$(sc PodsReady)"
r_wfr=$(sv PodsReady@)
seen "s5: rcv evicted PodsReadyTimeout" "$T" s5 rcv 'Evicted=True/PodsReadyTimeout' "$st_rv"
same "s5: Kueue's message" "True/PodsReadyTimeout{Exceeded the PodsReady timeout s5/$(w s5 rcv)}" \
	"$(sc Evicted)"
within "s5: evicted 2 s (recoveryTimeout) after WaitForRecovery" 2 3 $(($(sv Evicted@) - r_wfr))
# Each readmission runs the same way: two timeouts, then deactivated.
seen "s5: rcv deactivated after its second recovery timeout" "$T" s5 rcv \
	'active=false .*QuotaReserved=False/.*Evicted=True/DeactivatedDueToRequeuingLimitExceeded' "$st_rv"
expect "s5: rcv's schedulingStats.evictions: underlying cause WaitForRecovery" 0 evictions_of s5 rcv \
	<<<'PodsReadyTimeout/WaitForRecovery=2 Deactivated/RequeuingLimitExceeded=1'
invariants "s5: rcv deactivated"

# ---------------------------------------------------------------------
# 6. maximumExecutionTimeSeconds.

mw=$(w s6 m)
expect "s6: m's Workload: spec.maximumExecutionTimeSeconds 3 (from the Job's label)" 0 \
	jp "workload/$mw" '{.spec.maximumExecutionTimeSeconds}' s6 <<<'3'
seen "s6: m admitted and ready" "$T" s6 m 'QuotaReserved=True/.*PodsReady=True/Started'
m_adm=$(sv Admitted@)
seen "s6: m marked DeactivationTarget=True MaximumExecutionTimeExceeded" "$T" s6 m \
	'DeactivationTarget=True/MaximumExecutionTimeExceeded' "$st_rv"
same "s6: DeactivationTarget message" \
	"True/MaximumExecutionTimeExceeded{exceeding the maximum execution time}" "$(sc DeactivationTarget)"
within "s6: m deactivated 3 s after its admission" 3 4 $(($(sv DeactivationTarget@) - m_adm))
xmsg="The workload is deactivated due to exceeding the maximum execution time"
seen "s6: m deactivated, evicted, released" "$T" s6 m \
	'active=false .*QuotaReserved=False/.*Evicted=True/DeactivatedDueToMaximumExecutionTimeExceeded' "$st_rv"
expect "s6: m's Evicted=True DeactivatedDueToMaximumExecutionTimeExceeded" 0 wlc s6 m Evicted \
	<<<"True DeactivatedDueToMaximumExecutionTimeExceeded: $xmsg"
expect "s6: m's spec.active false" 0 jp "workload/$mw" '{.spec.active}' s6 <<<'false'
expect "s6: m's Job suspended, no pods" 0 state s6 m <<<'true 0'
expect_eventually "s6: m's Warning event MaximumExecutionTimeExceeded" "$T" \
	"Warning 1: The maximum execution time (3s) exceeded" events_of s6 "$mw" MaximumExecutionTimeExceeded
run_cmd kubectl describe workload "$mw" -n s6
for pat in '^  Maximum Execution Time Seconds: +3$' \
	'^  Warning +MaximumExecutionTimeExceeded +.* +The maximum execution time \(3s\) exceeded$' \
	'^    Reason: +DeactivatedDueToMaximumExecutionTimeExceeded$'; do
	if grep -Eq -- "$pat" <<<"$out"; then
		pass "s6: kubectl describe workload m: /$pat/"
	else
		fail "s6: kubectl describe workload m: /$pat/" "$out"
	fi
done
# acc (15 s): admitted again with acc_n seconds already counted.
seen "s6: acc requeued: Requeued=True LocalQueueRestarted" "$T" s6 acc \
	'Requeued=True/LocalQueueRestarted' 0
seen "s6: acc admitted again" "$T" s6 acc 'QuotaReserved=True/' "$st_rv"
acc_adm2=$(sv Admitted@)
same "s6: ... with accumulatedPastExecutionTimeSeconds $acc_n" "$acc_n" "$(sv acc)"
seen "s6: acc marked DeactivationTarget MaximumExecutionTimeExceeded" "$T" s6 acc \
	'DeactivationTarget=True/MaximumExecutionTimeExceeded' "$st_rv"
within "s6: acc deactivated after the 15 - $acc_n s left" $((15 - acc_n)) $((17 - acc_n)) \
	$(($(sv DeactivationTarget@) - acc_adm2))
seen "s6: acc deactivated, evicted, released" "$T" s6 acc \
	'active=false .*QuotaReserved=False/.*Evicted=True/DeactivatedDueToMaximumExecutionTimeExceeded' "$st_rv"
expect_eventually "s6: acc's Warning event" "$T" \
	"Warning 1: The maximum execution time (15s) exceeded" events_of s6 "$(w s6 acc)" MaximumExecutionTimeExceeded
expect "s6: acc's schedulingStats.evictions" 0 evictions_of s6 acc \
	<<<'LocalQueueStopped/=1 Deactivated/MaximumExecutionTimeExceeded=1'
invariants "s6: m and acc deactivated"

# ---------------------------------------------------------------------
# 8. stopPolicy.

# h: timed out (at the restart) while cq-8h was held; its backoff ends,
# it stays out.
match "s8: cq-8h inactive (Hold)" 0 '^False Stopped' active_of cq-8h
seen "s8: h evicted by its timeout" "$T" s8 h 'count=1 .*Requeued=False/PodsReadyTimeout'
h_rv=$st_rv
seen "s8: h's backoff finished" "$T" s8 h 'Requeued=True/BackoffFinished' "$h_rv"
wait_until "$T" past $(($(sv Requeued@) + 2))
same "s8: Hold: h not admitted after its backoff (2 s and more)" 0 \
	"$(count_states s8 h 'QuotaReserved=True/' "$h_rv")"
expect "s8: h pending: its ClusterQueue is inactive" 0 wlc s8 h QuotaReserved \
	<<<'False Inadmissible: ClusterQueue cq-8h is inactive'
annotate s8 h cueue.dev/ready-after=1s
stop_policy clusterqueue cq-8h None
seen "s8: h admitted once cq-8h runs again" "$T" s8 h 'QuotaReserved=True/' "$h_rv"
seen "s8: h ready (its pods come up this time)" "$T" s8 h 'PodsReady=True/Started' "$st_rv"
# d and e, started again after their drain (configuration A): admitted
# with their PodsReady timer afresh, then timed out twice more and
# deactivated.
for v in d:ClusterQueueRestarted:$d_rv1:$d_adm1:ClusterQueueStopped e:LocalQueueRestarted:$e_rv1:$e_adm1:LocalQueueStopped; do
	IFS=: read -r j why rv0 adm1 stop <<<"$v"
	seen "s8: $j requeued: Requeued=True $why" "$T" s8 "$j" "Requeued=True/$why" "$rv0"
	seen "s8: $j admitted again" "$T" s8 "$j" 'QuotaReserved=True/' "$st_rv"
	adm2=$(sv Admitted@)
	within "s8: $j's second admission 4 s or more after its first" 4 600 $((adm2 - adm1))
	seen "s8: $j evicted PodsReadyTimeout" "$T" s8 "$j" 'count=1 .*Evicted=True/PodsReadyTimeout' "$st_rv"
	within "s8: ... 3 s after its second admission (the timer started afresh)" 3 5 \
		$(($(sv Evicted@) - adm2))
	seen "s8: $j deactivated after two more timeouts" "$T" s8 "$j" \
		'active=false .*QuotaReserved=False/.*Evicted=True/DeactivatedDueToRequeuingLimitExceeded' "$st_rv"
	expect "s8: $j's schedulingStats.evictions" 0 evictions_of s8 "$j" \
		<<<"$stop/=1 PodsReadyTimeout/WaitForStart=2 Deactivated/RequeuingLimitExceeded=1"
done

# The end of scenarios 1 and 2: a deactivated again, b never evicted.
seen "s2: a deactivated again after two timeouts (its count counted afresh)" "$T" s1 a \
	'active=false .*QuotaReserved=False/.*Evicted=True/DeactivatedDueToRequeuingLimitExceeded' "$a_rv"
expect "s2: a's schedulingStats.evictions" 0 evictions_of s1 a \
	<<<'PodsReadyTimeout/WaitForStart=4 Deactivated/RequeuingLimitExceeded=2'
expect "s1: b never evicted" 0 evictions_of s1 b <<<''
expect "s1: b still runs" 0 state s1 b <<<'false 2'

victim s1 a 6
victim s4 x 1
victim s5 rcv 3
victim s6 m 1
victim s6 acc 2
victim s8 h 1
victim s8 d 4
victim s8 e 4
invariants "first configuration, quiet: statuses agree" --status

# ---------------------------------------------------------------------
# 9. Metrics, before the restart resets them (the restart into
# configuration A already did: d's and e's drains are not counted).

if scrape; then
	pass "s9: scraped $(metrics_url)/metrics"
else
	fail "s9: scrape $(metrics_url)/metrics" "$(tail -5 "$cluster/manager.log")"
fi
expect "s9: kueue_evicted_workloads_total by queue, reason and underlying cause" 0 \
	series kueue_evicted_workloads_total <<'EOF'
kueue_evicted_workloads_total{cluster_queue="cq-1",priority_class="",reason="Deactivated",underlying_cause="RequeuingLimitExceeded"} 2
kueue_evicted_workloads_total{cluster_queue="cq-1",priority_class="",reason="PodsReadyTimeout",underlying_cause="WaitForStart"} 4
kueue_evicted_workloads_total{cluster_queue="cq-4",priority_class="",reason="PodsReadyTimeout",underlying_cause="WaitForStart"} 1
kueue_evicted_workloads_total{cluster_queue="cq-4c",priority_class="",reason="PodsReadyTimeout",underlying_cause="WaitForStart"} 1
kueue_evicted_workloads_total{cluster_queue="cq-5",priority_class="",reason="Deactivated",underlying_cause="RequeuingLimitExceeded"} 1
kueue_evicted_workloads_total{cluster_queue="cq-5",priority_class="",reason="PodsReadyTimeout",underlying_cause="WaitForRecovery"} 2
kueue_evicted_workloads_total{cluster_queue="cq-6",priority_class="",reason="Deactivated",underlying_cause="MaximumExecutionTimeExceeded"} 2
kueue_evicted_workloads_total{cluster_queue="cq-6",priority_class="",reason="LocalQueueStopped",underlying_cause=""} 1
kueue_evicted_workloads_total{cluster_queue="cq-8",priority_class="",reason="Deactivated",underlying_cause="RequeuingLimitExceeded"} 1
kueue_evicted_workloads_total{cluster_queue="cq-8",priority_class="",reason="PodsReadyTimeout",underlying_cause="WaitForStart"} 2
kueue_evicted_workloads_total{cluster_queue="cq-8h",priority_class="",reason="PodsReadyTimeout",underlying_cause="WaitForStart"} 1
kueue_evicted_workloads_total{cluster_queue="cq-8l",priority_class="",reason="Deactivated",underlying_cause="RequeuingLimitExceeded"} 1
kueue_evicted_workloads_total{cluster_queue="cq-8l",priority_class="",reason="PodsReadyTimeout",underlying_cause="WaitForStart"} 2
EOF
# Evictions of ready workloads only (m, acc twice): how long they were ready.
expect "s9: kueue_pods_ready_to_evicted_time_seconds_count" 0 \
	series kueue_pods_ready_to_evicted_time_seconds_count <<'EOF'
kueue_pods_ready_to_evicted_time_seconds_count{cluster_queue="cq-6",reason="Deactivated",underlying_cause="MaximumExecutionTimeExceeded"} 2
kueue_pods_ready_to_evicted_time_seconds_count{cluster_queue="cq-6",reason="LocalQueueStopped",underlying_cause=""} 1
EOF
# sum_in NAME SERIES LO HI: one check, the scraped SERIES (its labels
# included) is within [LO, HI] (seconds, floats).
sum_in() {
	local v
	v=$(awk -v s="$2" 'index($0, s " ") == 1 { print $2 }' "$work/metrics.txt")
	if [ -n "$v" ] && awk -v v="$v" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }'; then
		pass "$1 ($v)"
	else
		fail "$1" "$2: want $3..$4, got '$v'"
	fi
}
sum_in "s9: ... LocalQueueStopped: acc was ready about $acc_n s" \
	'kueue_pods_ready_to_evicted_time_seconds_sum{cluster_queue="cq-6",reason="LocalQueueStopped",underlying_cause=""}' \
	$((acc_n - 2)) $((acc_n + 2))
sum_in "s9: ... MaximumExecutionTimeExceeded: m about 3 s, acc about $((15 - acc_n)) s" \
	'kueue_pods_ready_to_evicted_time_seconds_sum{cluster_queue="cq-6",reason="Deactivated",underlying_cause="MaximumExecutionTimeExceeded"}' \
	$((18 - acc_n - 3)) $((18 - acc_n + 3))
# Each PodsReady=True: b and c; y; rcv thrice (1 s each); m, acc twice; h.
for name in kueue_admitted_until_ready_wait_time_seconds kueue_ready_wait_time_seconds; do
	expect "s9: ${name}_count: one per PodsReady=True" 0 series "${name}_count" <<EOF
${name}_count{cluster_queue="cq-1",priority_class=""} 2
${name}_count{cluster_queue="cq-4",priority_class=""} 1
${name}_count{cluster_queue="cq-5",priority_class=""} 3
${name}_count{cluster_queue="cq-6",priority_class=""} 3
${name}_count{cluster_queue="cq-8h",priority_class=""} 1
EOF
done
sum_in "s9: kueue_admitted_until_ready_wait_time_seconds: rcv ready 1 s after each admission" \
	'kueue_admitted_until_ready_wait_time_seconds_sum{cluster_queue="cq-5",priority_class=""}' 2 6
sum_in "s9: kueue_admitted_until_ready_wait_time_seconds: b 1 s, c at once" \
	'kueue_admitted_until_ready_wait_time_seconds_sum{cluster_queue="cq-1",priority_class=""}' 0.5 5
# y was created while x ran and waited for it (5 s and more), then ready
# at once: its wait is its PodsReady time after its creation (or its last
# requeue), as the object says.
yw=$(w s4 y)
y_ready=$(epoch_of s4 "workload/$yw" '{.status.conditions[?(@.type=="PodsReady")].lastTransitionTime}')
y_from=$(jp "workload/$yw" '{.status.conditions[?(@.type=="Requeued")].lastTransitionTime}' s4)
if [ -n "$y_from" ]; then
	y_from=$(date -d "$y_from" +%s)
else
	y_from=$(epoch_of s4 "workload/$yw" '{.metadata.creationTimestamp}')
fi
sum_in "s9: kueue_ready_wait_time_seconds: y waited for x's timeout and backoff, $((y_ready - y_from)) s by its object" \
	'kueue_ready_wait_time_seconds_sum{cluster_queue="cq-4",priority_class=""}' \
	$((y_ready - y_from - 2)) $((y_ready - y_from + 2))
sum_in "s9: kueue_admitted_until_ready_wait_time_seconds: y ready at once" \
	'kueue_admitted_until_ready_wait_time_seconds_sum{cluster_queue="cq-4",priority_class=""}' 0 1.5

history_start "first configuration"

# ---------------------------------------------------------------------
# 7. The second configuration (backoff base 20 s); the manager restarted
# (with it again) in the middle of r's first backoff.

restart "$work/config-b.yaml" "manager restarted with the second configuration"
# restart_at_count1 WL OFFSET: restarts the manager (second configuration)
# as soon as the Workload watch, after byte OFFSET, records WL with
# requeueState count 1 (its timeout's eviction written; polled every
# 50 ms), so that the restart lands early in the 20 s backoff. Status 1
# if not seen within T.
restart_at_count1() {
	local end=$(($(now_ms) + T * 100))
	while [ "$(now_ms)" -lt "$end" ]; do
		if tail -c +"$(($2 + 1))" "$work/wl.stream" | grep -F "\"name\":\"$1\"" |
			grep -qF '"requeueState":{"count":1,'; then
			DEVCLUSTER_CONFIG=$work/config-b.yaml "$devcluster" \
				restart-manager "$cluster" >"$work/restart.out" 2>&1
			return
		fi
		sleep 0.05
	done
	return 1
}
jobfile s7 r q 1 "$NEVER"
create s7/r
rw=$(w s7 r)
e2e_bg restart_at_count1 "$rw" "$(stat -c %s "$work/wl.stream")"
restarter=$e2e_bg_pid
if wait "$restarter"; then
	pass "s7: r's timeout written; the manager restarted at once"
else
	fail "s7: the manager restarted at r's timeout" "$(cat "$work/restart.out" 2>/dev/null)
$(states s7 r | tail -3 | cut -c1-300)"
fi
# What the restarted manager left on r, read at once (checked below).
r_live=$(jp "workload/$rw" '{.status.requeueState.count} {.status.requeueState.requeueAt}' s7)
run_cmd kubectl describe workload "$rw" -n s7
r_desc=$out
r_read=$(date +%s)
seen "s7: r evicted: count 1, Requeued=False PodsReadyTimeout" "$T" s7 r \
	'count=1 .*Requeued=False/PodsReadyTimeout'
r_rv=$st_rv
r_at=$(sv at)
within "s7: r's requeueAt = eviction + 20 s (the second configuration's base)" 20 21 \
	$((r_at - $(sv Evicted@)))
if [ "$r_read" -lt "$r_at" ]; then
	pass "s7: the restart ended before r's requeueAt, r read again $((r_at - r_read)) s before it"
else
	fail "s7: the restart ended before r's requeueAt" "r read at $r_read, requeueAt $r_at"
fi
same "s7: after the restart: count 1 and requeueAt as the old manager wrote them" \
	"1 $(date -u -d "@$r_at" +%FT%TZ)" "$r_live"
if grep -Eq '^  Requeue State:$' <<<"$r_desc" && grep -Eq '^    Count: +1$' <<<"$r_desc" &&
	grep -Eq "^    Requeue At: +$(date -u -d "@$r_at" +%FT%TZ)\$" <<<"$r_desc"; then
	pass "s7: kubectl describe workload r: Requeue State, Count 1, Requeue At"
else
	fail "s7: kubectl describe workload r: Requeue State (run during the backoff)" "$r_desc"
fi
# this time r's pods will come up, so that it blocks nothing afterwards
annotate s7 r cueue.dev/ready-after=1s
seen "s7: r's backoff finished" "$T" s7 r 'Requeued=True/BackoffFinished' "$r_rv"
within "s7: ... not before requeueAt" 0 2 $(($(sv Requeued@) - r_at))
same "s7: ... count still 1" 1 "$(sv count)"
same "s7: requeueAt never rewritten meanwhile (states with another one)" 0 \
	"$(states s7 r | awk -v a="$r_rv" -v b="$st_rv" -v t="at=$r_at" '
		{ r = substr($1, 4) + 0 } r > a && r < b && $4 != t' | wc -l)"
seen "s7: r admitted after requeueAt" "$T" s7 r 'QuotaReserved=True/' "$st_rv"
within "s7: ... at or after requeueAt" 0 3 $(($(sv Admitted@) - r_at))
seen "s7: r ready (its pods come up this time)" "$T" s7 r 'PodsReady=True/' "$st_rv"
expect "s7: r's requeueState: count 1 kept, no requeueAt" 0 \
	jp "workload/$rw" '{.status.requeueState}' s7 <<<'{"count":1}'
expect "s7: r's schedulingStats.evictions" 0 evictions_of s7 r <<<'PodsReadyTimeout/WaitForStart=1'
victim s7 r 1
invariants "s7: r runs"
history_finish

# ---------------------------------------------------------------------
# 4c. Queue order with timestamp Creation: x2 timed out (at the restart
# into configuration A) and still goes ahead of y2, created after it.

seen "s4c: x2 evicted by its timeout" "$T" s4 x2 'count=1 .*Evicted=True/PodsReadyTimeout'
x_ev=$(sv Evicted@)
x_rv=$st_rv
x_cr=$(wl_created s4 x2)
y_cr=$(wl_created s4 y2)
if [ "$x_cr" -lt "$y_cr" ] && [ "$y_cr" -lt "$x_ev" ]; then
	pass "s4c: y2 created after x2, before x2's eviction ($x_cr < $y_cr < $x_ev)"
else
	fail "s4c: y2 created after x2, before x2's eviction" "x2 created $x_cr, y2 created $y_cr, x2 evicted $x_ev"
fi
seen "s4c: x2's backoff finished" "$T" s4 x2 'Requeued=True/BackoffFinished' "$x_rv"
match "s4c: y2 pending while cq-4c is held" 0 '^False (Inadmissible|Pending): ' wlc s4 y2 QuotaReserved
# this time x2's pods come up, so that it blocks nothing afterwards
annotate s4 x2 cueue.dev/ready-after=1s
stop_policy clusterqueue cq-4c None
seen "s4c: x2 admitted first (its creation time)" "$T" s4 x2 'QuotaReserved=True/' "$x_rv"
seen "s4c: x2 ready" "$T" s4 x2 'PodsReady=True/' "$st_rv"
match "s4c: y2 pending behind x2" 0 '^False ' wlc s4 y2 QuotaReserved
same "s4c: y2 never admitted" 0 "$(count_states s4 y2 'QuotaReserved=True/' 0)"
victim s4 x2 1
invariants "s4c: x2 runs, y2 pending"

# ---------------------------------------------------------------------
# 3. blockAdmission: cq-3 runs now; its five Jobs (created above, one
# second apart) all fit but are admitted one at a time, in queue order,
# each once the one before is ready; n blocks p5 until its timeout
# evicts it.

s3_rv=$(last_rv "$work/wl.stream")
stop_policy clusterqueue cq-3 None
expect_eventually "s3: p5 waits for n: QuotaReserved=False WaitingForPodsReady" "$T" \
	"False WaitingForPodsReady: waiting for all admitted workloads to be in PodsReady condition" \
	wlc s3 p5 QuotaReserved
match "s3: kubectl describe workload p5: WaitingForPodsReady" 0 \
	'^    Reason: +WaitingForPodsReady$' kubectl describe workload "$(w s3 p5)" -n s3
seen "s3: n evicted by its timeout" "$T" s3 n 'Evicted=True/PodsReadyTimeout'
n_ev_rv=$st_rv
n_ev=$(sv Evicted@)
within "s3: ... 8 s after its admission" 8 10 $((n_ev - $(sv Admitted@)))
seen "s3: p5 admitted" "$T" s3 p5 'QuotaReserved=True/'
p5_rv=$st_rv
if [ "$p5_rv" -gt "$n_ev_rv" ] && [ "$(sv Admitted@)" -ge "$n_ev" ]; then
	pass "s3: p5 admitted only after n's eviction"
else
	fail "s3: p5 admitted only after n's eviction" "p5 admitted at rv $p5_rv, n evicted at rv $n_ev_rv"
fi
seen "s3: p5 ready" "$T" s3 p5 'PodsReady=True/' "$p5_rv"
s3_end=$st_rv
# first_rv NS JOB ERE: $frv, the rv of the first state matching ERE (0: none).
first_rv() {
	frv=0
	! find_state "$1" "$2" "$3" 0 || frv=$st_rv
}
prev_ready=0
prev=
for j in p1 p2 p3 n p5; do
	first_rv s3 "$j" 'QuotaReserved=True/'
	if [ "$frv" -gt "$prev_ready" ]; then
		pass "s3: $j admitted after ${prev:-the start}${prev:+ was ready} (rv $frv > $prev_ready)"
	else
		fail "s3: $j admitted after ${prev:-the start}${prev:+ was ready}" \
			"$j admitted at rv $frv, ${prev:-start} ready at rv $prev_ready"
	fi
	if [ "$j" = n ]; then
		prev_ready=$n_ev_rv
	else
		first_rv s3 "$j" 'PodsReady=True/'
		prev_ready=$frv
	fi
	prev=$j
done
for j in p2 p3 n p5; do
	find_state s3 "$j" 'QuotaReserved=False/WaitingForPodsReady' 0
	same "s3: $j waited with QuotaReserved=False WaitingForPodsReady" \
		"False/WaitingForPodsReady{waiting for all admitted workloads to be in PodsReady condition}" \
		"$(sc QuotaReserved)"
done
run_cmd python3 "$history_py" notready "$work/wl.stream" "$s3_rv" "$s3_end"
same "s3: never two admitted workloads not ready at once" 'max 1' "${out%% at*}"
expect_table "s3: kubectl get workloads" 0 kubectl get workloads -n s3 <<EOF
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
$(w s3 n) | q |  | False |  | <age>
$(w s3 p1) | q | cq-3 | True |  | <age>
$(w s3 p2) | q | cq-3 | True |  | <age>
$(w s3 p3) | q | cq-3 | True |  | <age>
$(w s3 p5) | q | cq-3 | True |  | <age>
EOF
victim s3 n 1
# n would block the queue again after its backoff: deleted.
expect "s3: delete n" 0 kubectl delete job n -n s3 <<<'job.batch "n" deleted'

# ---------------------------------------------------------------------

invariants "the end, statuses agree" --status
history_start "second configuration"
history_finish
kill "$wl_watch" "$job_watch" 2>/dev/null
devcluster_stop
e2e_finish
