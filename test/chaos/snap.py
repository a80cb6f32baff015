#!/usr/bin/env python3
"""snap.py: the chaos suite's looks at the live cluster, while the chaos
runs (the API server may fail or be down: every list is retried,
kapi.py).

  snap.py snapshot KUBECONFIG OUT
  snap.py progress KUBECONFIG PLAN

snapshot: one snapshot for cueue-invariants. OUT: a JSON List of the Jobs, then ClusterQueues, Cohorts, Workloads,
ResourceFlavors and LocalQueues, then the Jobs again, as lib.bash's
`snapshot` does: the checker takes a Job for running only when both of
its copies run (check (e)), and a Job present in one list only is left
out. Exit 1 when a list failed for 60 s.

progress: "DONE TOTAL": of the plan's Jobs (stream.py) that can end,
those that did: "run" Jobs Complete, "never-ready" ones whose Workload
was deactivated (spec.active false). The "impossible" ones never end.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kapi  # noqa: E402

KQ = '/apis/kueue.x-k8s.io/v1beta2/'
QUEUES = [KQ + r for r in ('clusterqueues', 'cohorts', 'workloads',
                           'resourceflavors', 'localqueues')]
JOBS = '/apis/batch/v1/jobs'


def items(cl, path, kind, api):
    st, body = cl.call('GET', path, deadline_s=60)
    if st != 200 or body is None:
        raise SystemExit('snap.py: GET %s: status %s' % (path, st))
    out = body.get('items') or []
    for o in out:
        # a List's items carry no kind of their own on the wire
        o.setdefault('kind', kind)
        o.setdefault('apiVersion', api)
    return out


def progress(kubeconfig, plan_path):
    with open(plan_path) as f:
        plan = json.load(f)
    cl = kapi.Cluster(kubeconfig)
    jobs = {(o['metadata']['namespace'], o['metadata']['name']): o
            for o in items(cl, JOBS, 'Job', 'batch/v1')}
    inactive = set()
    for w in items(cl, KQ + 'workloads', 'Workload',
                   'kueue.x-k8s.io/v1beta2'):
        if (w.get('spec') or {}).get('active') is False:
            for r in w['metadata'].get('ownerReferences') or []:
                inactive.add(r.get('uid'))
    done = total = 0
    for j in plan:
        if j['kind'] == 'impossible':
            continue
        total += 1
        o = jobs.get((j['ns'], j['name']))
        if o is None:
            continue
        if j['kind'] == 'run':
            done += any(c.get('type') == 'Complete' and
                        c.get('status') == 'True' for c in
                        (o.get('status') or {}).get('conditions') or [])
        elif o['metadata']['uid'] in inactive:
            done += 1
    print(done, total)
    return 0


def main(argv):
    if len(argv) == 3 and argv[0] == 'progress':
        return progress(argv[1], argv[2])
    if len(argv) != 3 or argv[0] != 'snapshot':
        sys.stderr.write(__doc__)
        return 2
    argv = argv[1:]
    cl = kapi.Cluster(argv[0])
    j1 = items(cl, JOBS, 'Job', 'batch/v1')
    q = []
    for p in QUEUES:
        kind = {'clusterqueues': 'ClusterQueue', 'cohorts': 'Cohort',
                'workloads': 'Workload', 'resourceflavors': 'ResourceFlavor',
                'localqueues': 'LocalQueue'}[p.rsplit('/', 1)[1]]
        q += items(cl, p, kind, 'kueue.x-k8s.io/v1beta2')
    j2 = items(cl, JOBS, 'Job', 'batch/v1')
    both = {o['metadata']['uid'] for o in j1} & \
        {o['metadata']['uid'] for o in j2}
    keep = [o for o in j1 if o['metadata']['uid'] in both] + q + \
        [o for o in j2 if o['metadata']['uid'] in both]
    kapi.write_atomic(argv[1], json.dumps({'apiVersion': 'v1', 'kind': 'List',
                                           'items': keep}))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
