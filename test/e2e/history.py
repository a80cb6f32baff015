#!/usr/bin/env python3
"""history.py: every state a watch saw, for preemption.sh and podsready.sh.

The suite records `kubectl get workloads -A -w --output-watch-events -o
json` and the same for jobs.batch into two files (one event a line). The
devserver's resourceVersions are one counter over every kind, so the two
streams merge, in resourceVersion order, into the exact sequence of the
cluster's states: every state between two polls, the short-lived ones of an
eviction in flight included (the victim still holding quota while its Job
stops).

  history.py check INV QUEUES WL JOBS FROM TO DIR
      runs cueue-invariants INV on every state after resourceVersion FROM
      up to TO: the Workloads and Jobs of that state plus the queue kinds
      of QUEUES (a `kubectl get ... -o json` List; they do not change in
      the suite but for preemption policies). States that differ from the
      one before only in what the checker does not read are skipped. Prints
      "states N, K with an eviction in flight" (a Workload Evicted=True
      still holding quota) and, for each state that fails,
      "rv R: <checker output>"
      (the state's List is kept in DIR); exit 1 when one fails.
  history.py stops WL JOBS NS/WORKLOAD=JOB...
      for each victim, "NS/WORKLOAD: ..." with, for each of its
      evictions (Evicted turning True), whether it still held quota when
      the eviction was written and whether its Job was suspended with no
      active pods when the reservation went (QuotaReserved turning
      False): "held+stopped" each time is Kueue's order.
  history.py pending WL NS/NAME...
      for each Workload, "NS/NAME: M1 | M2 ..." with its QuotaReserved=False
      Pending messages before its first reservation ("NS/NAME: ?" when the
      stream has no reservation of it).
  history.py states WL NS/NAME
      every distinct state of one Workload, one line each, in
      resourceVersion order (a line is printed when it differs from the
      one before but for rv):
      "rv=R active=true|false count=N at=E acc=N TYPE=STATUS/REASON@E{MESSAGE} ..."
      with count/at the requeueState, acc accumulatedPastExecutionTimeSeconds
      ("-" when absent), E a time in epoch seconds, and one TYPE for each
      of QuotaReserved, Admitted, PodsReady, Evicted, Requeued,
      DeactivationTarget ("TYPE=-" when absent). WL "-" is standard
      input (say, only the stream's lines that name the Workload).
  history.py allstates WL DIR
      the same for every Workload, into DIR/NS_NAME (one file each).
  history.py notready WL FROM TO
      the most Workloads that held quota (QuotaReserved=True, not
      Finished) without PodsReady=True at once, in any state after
      resourceVersion FROM up to TO: "max N at rv R: NS/NAME ...".

Each stream is complete up to its last event (a watch delivers in order),
so the suite only asks for states up to what both streams have reached
(it writes a marker object of each kind and waits for both).
"""
import calendar
import json
import os
import subprocess
import sys
import time


def events(path):
    """The watch events of a stream file ("-": standard input)."""
    out = []
    with (sys.stdin if path == '-' else open(path)) as f:
        for line in f:
            line = line.strip()
            if not line.startswith('{'):
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue  # a line being written
            obj = ev.get('object') or {}
            rv = (obj.get('metadata') or {}).get('resourceVersion')
            if ev.get('type') in ('ADDED', 'MODIFIED', 'DELETED') and rv:
                out.append((int(rv), ev['type'], obj))
    return out


def key(obj):
    m = obj['metadata']
    return (obj.get('kind'), m.get('namespace', ''), m['name'])


def cond(obj, t):
    for c in (obj.get('status') or {}).get('conditions') or []:
        if c.get('type') == t:
            return c
    return None


def digest(objs):
    """What cueue-invariants reads of the Workloads and Jobs (a Workload's
    reservation, a Job's running pods), and Evicted."""
    d = []
    for k in sorted(objs):
        o = objs[k]
        st = o.get('status') or {}
        if k[0] == 'Workload':
            d.append((k, [(c.get('type'), c.get('status'))
                          for c in st.get('conditions') or []
                          if c.get('type') in ('QuotaReserved', 'Finished',
                                               'Evicted')],
                      (o.get('spec') or {}).get('active'),
                      st.get('admission')))
        else:
            sp = o.get('spec') or {}
            d.append((k, sp.get('suspend'), sp.get('parallelism'),
                      (o.get('metadata') or {}).get('labels'),
                      st.get('active'),
                      [(c.get('type'), c.get('status'))
                       for c in st.get('conditions') or []
                       if c.get('type') in ('Complete', 'Failed')]))
    return json.dumps(d, sort_keys=True, default=str)


def in_flight(objs):
    """An eviction in flight: a Workload Evicted=True still holding quota."""
    for k, o in objs.items():
        if k[0] != 'Workload':
            continue
        qr, ev = cond(o, 'QuotaReserved'), cond(o, 'Evicted')
        if qr and ev and qr.get('status') == 'True' and \
                ev.get('status') == 'True':
            return True
    return False


def check(inv, queues, wl, jobs, lo, hi, outdir):
    with open(queues) as f:
        qitems = json.load(f)['items']
    evs = sorted(events(wl) + events(jobs), key=lambda e: e[0])
    objs, last, n, bad, nflight = {}, None, 0, 0, 0
    path = os.path.join(outdir, 'state.json')
    for rv, typ, obj in evs:
        if rv > hi:
            break
        k = key(obj)
        if typ == 'DELETED':
            objs.pop(k, None)
        else:
            objs[k] = obj
        if rv <= lo:
            continue
        d = digest(objs)
        if d == last:
            continue
        last = d
        n += 1
        nflight += in_flight(objs)
        with open(path, 'w') as f:
            json.dump({'apiVersion': 'v1', 'kind': 'List',
                       'items': qitems + list(objs.values())}, f)
        r = subprocess.run([inv, path], capture_output=True, text=True)
        if r.returncode != 0:
            bad += 1
            keep = os.path.join(outdir, 'state-%d.json' % rv)
            os.replace(path, keep)
            print('rv %d (%s %s/%s): %s' % (rv, typ, k[1], k[2],
                                            (r.stdout + r.stderr).strip()))
    print('states %d, %d with an eviction in flight' % (n, nflight))
    return 1 if bad else 0


def stops(wl, jobs, victims):
    evs = sorted(events(wl) + events(jobs), key=lambda e: e[0])
    for v in victims:
        nn, job = v.split('=', 1)
        ns, name = nn.split('/', 1)
        jk, wk = ('Job', ns, job), ('Workload', ns, name)
        objs, res, prev, open_ = {}, [], False, False
        for rv, typ, obj in evs:
            k = key(obj)
            if k not in (jk, wk):
                continue
            if typ == 'DELETED':
                objs.pop(k, None)
            else:
                objs[k] = obj
            if k != wk or wk not in objs:
                continue
            ev = cond(objs[wk], 'Evicted')
            qr = cond(objs[wk], 'QuotaReserved')
            ev_true = ev is not None and ev.get('status') == 'True'
            qr_true = qr is not None and qr.get('status') == 'True'
            if ev_true and not prev:
                # the eviction is written
                if qr_true:
                    open_ = True
                else:
                    res.append('released-with-the-eviction')
            elif open_ and not qr_true:
                # the reservation goes
                j = objs.get(jk) or {}
                stopped = (j.get('spec') or {}).get('suspend') is True and \
                    not (j.get('status') or {}).get('active')
                res.append('held+' + ('stopped' if stopped else
                                      'RELEASED-WHILE-RUNNING'))
                open_ = False
            prev = ev_true
        print('%s: %s' % (nn, ' '.join(res) if res else 'no eviction'))
    return 0


def pending(wl, names):
    evs = sorted(events(wl), key=lambda e: e[0])
    for nn in names:
        ns, name = nn.split('/', 1)
        msgs, seen = [], False
        for rv, typ, obj in evs:
            m = obj['metadata']
            if m.get('namespace') != ns or m['name'] != name:
                continue
            c = cond(obj, 'QuotaReserved')
            if c is None:
                continue
            if c.get('status') == 'True':
                seen = True
                break
            if c.get('reason') == 'Pending' and c.get('message') not in msgs:
                msgs.append(c.get('message'))
        print('%s: %s' % (nn, ' | '.join(msgs) if seen else '?'))
    return 0


STATE_CONDS = ('QuotaReserved', 'Admitted', 'PodsReady', 'Evicted',
               'Requeued', 'DeactivationTarget')


def epoch(ts):
    """An RFC 3339 time (second precision or finer) in epoch seconds."""
    return calendar.timegm(time.strptime(ts[:19], '%Y-%m-%dT%H:%M:%S'))


def state_line(obj):
    st = obj.get('status') or {}
    rq = st.get('requeueState') or {}
    active = (obj.get('spec') or {}).get('active', True)
    at = rq.get('requeueAt')
    f = ['active=%s' % ('false' if active is False else 'true'),
         'count=%s' % rq.get('count', '-'),
         'at=%s' % (epoch(at) if at else '-'),
         'acc=%s' % st.get('accumulatedPastExecutionTimeSeconds', '-')]
    for t in STATE_CONDS:
        c = cond(obj, t)
        if c is None:
            f.append('%s=-' % t)
        else:
            f.append('%s=%s/%s@%d{%s}' % (t, c.get('status'), c.get('reason'),
                                         epoch(c['lastTransitionTime']),
                                         c.get('message', '')))
    return ' '.join(f)


def all_states(wl):
    """{(ns, name): [line...]}: every Workload's distinct states."""
    out, last = {}, {}
    for rv, typ, obj in sorted(events(wl), key=lambda e: e[0]):
        m = obj['metadata']
        k = (m.get('namespace', ''), m['name'])
        if typ == 'DELETED':
            continue
        line = state_line(obj)
        if line != last.get(k):
            out.setdefault(k, []).append('rv=%d %s' % (rv, line))
            last[k] = line
    return out


def states(wl, nn):
    ns, name = nn.split('/', 1)
    for line in all_states(wl).get((ns, name), []):
        print(line)
    return 0


def states_dir(wl, outdir):
    for (ns, name), lines in all_states(wl).items():
        with open(os.path.join(outdir, '%s_%s' % (ns, name)), 'w') as f:
            f.write(''.join(line + '\n' for line in lines))
    return 0


def notready(wl, lo, hi):
    objs, best, at, who = {}, 0, 0, []
    for rv, typ, obj in sorted(events(wl), key=lambda e: e[0]):
        if rv > hi:
            break
        k = key(obj)
        if typ == 'DELETED':
            objs.pop(k, None)
        else:
            objs[k] = obj
        if rv <= lo:
            continue
        held = []
        for kk, o in objs.items():
            qr, pr, fin = (cond(o, t) for t in
                           ('QuotaReserved', 'PodsReady', 'Finished'))
            if qr and qr.get('status') == 'True' and \
                    not (fin and fin.get('status') == 'True') and \
                    not (pr and pr.get('status') == 'True'):
                held.append('%s/%s' % (kk[1], kk[2]))
        if len(held) > best:
            best, at, who = len(held), rv, sorted(held)
    print('max %d at rv %d: %s' % (best, at, ' '.join(who)))
    return 0


def main(argv):
    if len(argv) == 8 and argv[0] == 'check':
        return check(argv[1], argv[2], argv[3], argv[4], int(argv[5]),
                     int(argv[6]), argv[7])
    if len(argv) >= 3 and argv[0] == 'stops':
        return stops(argv[1], argv[2], argv[3:])
    if len(argv) >= 2 and argv[0] == 'pending':
        return pending(argv[1], argv[2:])
    if len(argv) == 3 and argv[0] == 'states':
        return states(argv[1], argv[2])
    if len(argv) == 3 and argv[0] == 'allstates':
        return states_dir(argv[1], argv[2])
    if len(argv) == 4 and argv[0] == 'notready':
        return notready(argv[1], int(argv[2]), int(argv[3]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
