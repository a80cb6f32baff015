#!/usr/bin/env python3
"""stream.py: the chaos suite's Job stream: a fixed plan of batch/v1 Jobs
(the same for a seed and a profile, so a quiet run and a chaos run play
the same stream), created through the API server and so through the
manager's webhook, each at its planned offset (or as soon as the server
takes it: creates that fail are retried).

  stream.py plan PROFILE SEED             prints the plan (JSON)
  stream.py run KUBECONFIG PLAN OUT       creates the plan's Jobs

Profiles (the queues are setup.yaml's: team-a -> cq-a (od 4 + spot 2
cpu), team-b -> cq-b (od 4), team-c -> cq-c (od 4, borrowingLimit 2),
all in cohort "chaos"; priorities low 100, mid 500, high 1000):
  short  60 Jobs over 80 s: team-a and team-c steadily, team-b in
         two bursts (so cq-a and cq-c borrow its quota, then it
         reclaims), priorities mixed (so higher ones preempt within a
         queue), 1 Job that is never ready (cueue.dev/ready-after: never:
         waitForPodsReady evicts it, then deactivates it) and 1 that can
         never fit (10 cpu in cq-c, whose maximum is 6);
  full   236 Jobs over 8 minutes, the same shape, 4 never ready,
         2 that never fit.
Both bring more work than the cohort's 14 cpu run in their span once the
leaderless time of the kills is counted, so that Jobs wait at every
action (the failover time is measured to the next admission).
A Job's kind ("run", "never-ready", "impossible") is in the plan for
check.py. Runtimes (cueue.dev/runtime, counted by the devserver's job
runner from the pods' readiness) are 8-16 s (short) or 10-25 s (full).

`run` writes OUT, one line per Job once created:
  {"name": N, "ns": NS, "uid": U, "t": T, "planned": P, "tries": K,
   "retries": {"429": n, "500": n, "transport": n, "webhook": n}}
("uid" null when the create answered 409 AlreadyExists after a lost
answer: check.py finds the Job by name). A create that gets a 4xx other
than 409 and 429 is a failure: "error" in its line and exit 1.
"""
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kapi  # noqa: E402

IMAGE = 'registry.k8s.io/e2e-test-images/agnhost:2.53'

PROFILES = {
    # n steady Jobs over `span` s, team-b bursts at `bursts` (s),
    # runtime range, never-ready and impossible counts
    'short': {'n': 50, 'span': 80, 'bursts': [8, 45], 'burst_n': 4,
              'rt': (8, 16), 'never': 1, 'impossible': 1},
    'full': {'n': 200, 'span': 480, 'bursts': [30, 130, 230, 330, 430],
             'burst_n': 6, 'rt': (10, 25), 'never': 4, 'impossible': 2},
}


def plan(profile, seed):
    p = PROFILES[profile]
    rnd = random.Random(seed)
    jobs = []

    def add(t, ns, queue, prio, cpu, par, runtime, kind):
        jobs.append({'t': round(t, 2), 'ns': ns, 'queue': queue,
                     'prio': prio, 'cpu': cpu, 'par': par,
                     'runtime': runtime, 'kind': kind})

    def prio():
        x = rnd.random()
        return 'low' if x < 0.5 else 'mid' if x < 0.85 else 'high'

    lo, hi = p['rt']
    for i in range(p['n']):
        t = p['span'] * i / p['n'] + rnd.random()
        if rnd.random() < 0.6:
            ns, q = 'team-a', rnd.choice(['main', 'batch'])
        else:
            ns, q = 'team-c', 'main'
        add(t, ns, q, prio(), rnd.choice([1, 1, 2]), rnd.choice([1, 1, 2]),
            rnd.randint(lo, hi), 'run')
    for b in p['bursts']:
        for k in range(p['burst_n']):
            add(b + k * 0.3, 'team-b', 'main', prio(), rnd.choice([1, 2]),
                1, rnd.randint(lo, hi), 'run')
    for k in range(p['never']):
        add(1 + k * p['span'] / max(1, p['never']), 'team-a', 'main', 'high',
            1, 1, 5, 'never-ready')
    for k in range(p['impossible']):
        add(2 + k * 5, 'team-c', 'main', 'low', 10, 1, 5, 'impossible')
    jobs.sort(key=lambda j: j['t'])
    for i, j in enumerate(jobs):
        j['name'] = 'j%04d' % i
    return jobs


def manifest(j):
    ann = {'cueue.dev/runtime': '%ds' % j['runtime']}
    if j['kind'] == 'never-ready':
        ann['cueue.dev/ready-after'] = 'never'
    return {
        'apiVersion': 'batch/v1', 'kind': 'Job',
        'metadata': {'name': j['name'], 'namespace': j['ns'],
                     'labels': {'kueue.x-k8s.io/queue-name': j['queue'],
                                'kueue.x-k8s.io/priority-class': j['prio']},
                     'annotations': ann},
        'spec': {'parallelism': j['par'], 'completions': j['par'],
                 'template': {'spec': {
                     'restartPolicy': 'Never',
                     'containers': [{
                         'name': 'c', 'image': IMAGE,
                         'resources': {'requests': {
                             'cpu': str(j['cpu'])}}}]}}},
    }


def run(kubeconfig, plan_path, out):
    with open(plan_path) as f:
        jobs = json.load(f)
    cl = kapi.Cluster(kubeconfig)
    t0 = time.time()
    rc = 0
    with open(out, 'a') as o:
        for j in jobs:
            d = t0 + j['t'] - time.time()
            if d > 0:
                time.sleep(d)
            stats = {}
            path = '/apis/batch/v1/namespaces/%s/jobs' % j['ns']
            st, body = cl.call('POST', path, manifest(j), deadline_s=300,
                               stats=stats)
            rec = {'name': j['name'], 'ns': j['ns'], 't': time.time(),
                   'planned': t0 + j['t'], 'tries': 1 + sum(stats.values()),
                   'retries': stats, 'uid': None}
            if st == 201:
                rec['uid'] = body['metadata']['uid']
            elif st != 409:
                rec['error'] = 'status %s: %s' % (
                    st, (body or {}).get('message'))
                rc = 1
            o.write(json.dumps(rec) + '\n')
            o.flush()
    return rc


def main(argv):
    if len(argv) == 3 and argv[0] == 'plan':
        json.dump(plan(argv[1], int(argv[2])), sys.stdout, indent=0)
        sys.stdout.write('\n')
        return 0
    if len(argv) == 4 and argv[0] == 'run':
        return run(argv[1], argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
