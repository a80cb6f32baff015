#!/usr/bin/env python3
"""check.py: proves the chaos suite's invariants on everything record.py
saw, and measures the run.

  check.py INV DIR

INV is cueue-invariants; DIR the run's directory (chaos.sh): the
recordings rec/workloads.rec, rec/jobs.rec, rec/leases.rec (record.py), queues.json
(the queue kinds after setup), plan.json and created.log (stream.py),
actions.log (chaos.sh: one JSON object a line per kill, stop, restart and
exit it saw). Prints one line per check ("ok   NAME" or "FAIL NAME" with
"     | " detail lines, as lib.bash), then writes DIR/results.json (the
figures).

Replay. The devserver's resourceVersions are one counter over every kind
and survive its restarts, so the Workload and Job recordings merge, in
resourceVersion order, into the sequence of the cluster's states. A
LIST (a re-list after a 410) replaces its kind's objects; between the
stream's last event before it and the list, that kind is unknown, so a
state whose resourceVersion falls in such a gap of the Workload or the
Job stream is not checked against the other kind (a Workload stream
alone is still exact: a list is a consistent snapshot of every
Workload).

Checks:
  over-admission  every distinct state: cueue-invariants (a)-(c) and (e)
                  on the Workloads holding quota, the Jobs that can run
                  pods and the Workloads those own, with the queue kinds;
  admitted twice  no Job owns two Workloads holding quota at once; no
                  Workload's admission is replaced while it holds quota
                  without an eviction in between (a state without the
                  reservation, or, across a gap, its eviction count
                  grown);
  preemptions     every eviction for preemption names a preemptor UID
                  that existed, was pending at that moment (not holding
                  quota; across a gap: reserved no earlier than the
                  eviction), and was admitted afterwards or is pending at
                  the end; InClusterQueue: same ClusterQueue, strictly
                  higher priority; InCohortReclamation: another
                  ClusterQueue of the cohort while the victim's borrowed
                  (its usage above nominal in a flavor it holds, at that
                  state or a later one before the victim's reservation
                  went: admissions written before the eviction may land
                  after it); other
                  reasons are not configured and fail. A victim that did
                  not hold quota when its eviction was written (the
                  leader had only assumed its admission, whose write
                  then lost the race) is counted
                  (preempted_unreserved), not failed: no quota moved;
                  likewise a reclamation whose victim's ClusterQueue
                  borrowed only when the Workloads of it that finished
                  in the 5 s before the eviction are counted back (the
                  leader's cache had not yet seen those Finished
                  writes: its job reconciler races its scheduler, as
                  Kueue's do) is counted (preempted_stale_view);
  no Job lost     at the end every planned Job exists with one Workload:
                  "run" Jobs Complete (Workload Finished); "never-ready"
                  ones deactivated after a PodsReady timeout (Kueue's
                  message, the Job suspended); "impossible" ones pending
                  in their queue with a message whose figures are true
                  (request and the ClusterQueue's maximum capacity);
  stream          every Job of the plan was created (after retries).

Figures (results.json): states checked, evictions in flight, the faults
the recorder saw (cut streams, 410s, errors), the stream's retries,
failover times per action kind (from the action to the first admission
on the watch written after the next leader took the Lease: SIGKILL,
SIGTERM; after a devserver restart, the first admission once it was
back), p50 and max, the Lease takeover times, Jobs completed, the
makespan (first create to last completion on the watch) and throughput.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

PASSED, FAILED = [0], [0]


def ok(name):
    PASSED[0] += 1
    print('ok   %s' % name)


def fail(name, detail=''):
    FAILED[0] += 1
    print('FAIL %s' % name)
    for line in str(detail).splitlines()[:40]:
        print('     | %s' % line)


def check(name, bad, limit=20):
    """One check: bad, a list of problem lines (empty: passed)."""
    if bad:
        more = len(bad) - limit
        fail('%s (%d problem(s))' % (name, len(bad)),
             '\n'.join(bad[:limit]) + ('\n... %d more' % more
                                      if more > 0 else ''))
    else:
        ok(name)


def cond(o, t):
    for c in (o.get('status') or {}).get('conditions') or []:
        if c.get('type') == t:
            return c
    return None


def is_true(o, t):
    c = cond(o, t)
    return c is not None and c.get('status') == 'True'


def holds(w):
    return is_true(w, 'QuotaReserved') and not is_true(w, 'Finished')


def job_runs(j):
    st = j.get('status') or {}
    if (st.get('active') or 0) > 0:
        return True
    return not (j.get('spec') or {}).get('suspend') and \
        not is_true(j, 'Complete') and not is_true(j, 'Failed')


def owner_uid(w):
    for r in (w.get('metadata') or {}).get('ownerReferences') or []:
        if r.get('kind') == 'Job':
            return r.get('uid')
    return None


def evictions(w):
    return sum(e.get('count', 0) for e in
               ((w.get('status') or {}).get('schedulingStats') or {})
               .get('evictions') or [])


def rv_of(o):
    return int((o.get('metadata') or {}).get('resourceVersion') or 0)


def pct(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return round(xs[lo] + (xs[hi] - xs[lo]) * (k - lo), 2)


def read_rec(path, kind):
    """A recording's records: (rv, order, rec) with rec['kind'] set."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for n, line in enumerate(f):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue  # the recorder was killed mid-line
            r['kind'] = kind
            if r['type'] == 'LIST':
                for o in r['items']:
                    o['kind'] = kind
                out.append((int(r['rv'] or 0), 1, n, r))
            elif r['type'] in ('ADDED', 'MODIFIED', 'DELETED'):
                r['object']['kind'] = kind
                out.append((rv_of(r['object']), 0, n, r))
            else:
                out.append((None, 0, n, r))
    return out


def load_json_lines(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
    return out


class Queues:
    """The queue kinds: LocalQueue -> ClusterQueue, quotas, cohorts."""

    def __init__(self, items):
        self.items = items
        self.lq = {}
        self.cq = {}
        for o in items:
            m = o['metadata']
            if o['kind'] == 'LocalQueue':
                self.lq[(m['namespace'], m['name'])] = \
                    o['spec']['clusterQueue']
            elif o['kind'] == 'ClusterQueue':
                self.cq[m['name']] = o['spec']

    def cq_of(self, w):
        m, sp = w['metadata'], w.get('spec') or {}
        return self.lq.get((m.get('namespace'), sp.get('queueName')))

    def quota(self, cq, flavor, res):
        """(nominal, borrowingLimit or None, lendingLimit or None), in
        milli-units."""
        for g in self.cq.get(cq, {}).get('resourceGroups') or []:
            for f in g.get('flavors') or []:
                if f['name'] != flavor:
                    continue
                for r in f.get('resources') or []:
                    if r['name'] == res:
                        return (milli(r.get('nominalQuota', 0)),
                                milli(r['borrowingLimit'])
                                if 'borrowingLimit' in r else None,
                                milli(r['lendingLimit'])
                                if 'lendingLimit' in r else None)
        return (0, None, None)

    def max_capacity(self, cq, flavor, res):
        """What cq may use of (flavor, res) with its cohort idle."""
        nom, bl, _ = self.quota(cq, flavor, res)
        coh = self.cq.get(cq, {}).get('cohortName')
        if not coh:
            return nom
        lend = 0
        for other, sp in self.cq.items():
            if other == cq or sp.get('cohortName') != coh:
                continue
            n, _, ll = self.quota(other, flavor, res)
            lend += n if ll is None else min(n, ll)
        return nom + (lend if bl is None else min(lend, bl))


def milli(q):
    s = str(q)
    m = re.fullmatch(r'(\d+(?:\.\d+)?)(m?)', s)
    if not m:
        raise ValueError('quantity %r' % s)
    v = float(m.group(1))
    return int(round(v if m.group(2) else v * 1000))


def wl_usage(adm):
    """{(flavor, resource): milli} of one admission."""
    u = {}
    for psa in adm.get('podSetAssignments') or []:
        fl = psa.get('flavors') or {}
        for res, q in (psa.get('resourceUsage') or {}).items():
            key = (fl.get(res), res)
            u[key] = u.get(key, 0) + milli(q)
    return u


# How far back a leader's view may lag the store for the reclamation
# check: the Finished writes of its own job reconciler, racing its
# scheduler (seen only within a few seconds of a takeover, when a new
# leader finds the Jobs that completed while nobody led).
STALE_S = 5.0


def usage_of(objs, cq):
    """{(flavor, resource): milli} of the Workloads holding quota in cq."""
    u = {}
    for k, w in objs.items():
        if k[0] != 'Workload' or not holds(w):
            continue
        adm = (w.get('status') or {}).get('admission') or {}
        if adm.get('clusterQueue') != cq:
            continue
        for key, v in wl_usage(adm).items():
            u[key] = u.get(key, 0) + v
    return u


PMSG = re.compile(r'Preempted to accommodate a workload \(UID: ([^,]*), '
                  r'JobUID: ([^)]*)\) due to (.*?); preemptor path: '
                  r'([^;]*); preemptee path: (.*)$')


class Replay:
    def __init__(self, inv, d):
        self.inv, self.dir = inv, d
        with open(os.path.join(d, 'queues.json')) as f:
            qitems = json.load(f)['items']
        self.queues = Queues(qitems)
        self.qitems = qitems
        self.objs = {}
        self.wl_by_uid = {}      # uid -> key
        self.wl_by_owner = {}    # job uid -> set of keys
        self.gaps = {'Workload': [], 'Job': []}
        self.notes = {}
        self.states = 0
        self.in_flight = 0
        self.last_digest = None
        self.bad_inv, self.bad_twice, self.bad_replace = [], [], []
        self.bad_preempt = []
        self.preemptions = []    # open records, judged at the end
        self.prev_wl = {}        # key -> (held adm json, evictions)
        self.admissions = []     # (t, rv, key): reservations taken
        self.completions = {}    # job key -> t of Complete
        self.first_held_after = {}  # wl uid -> [rv, ...] of reservations
        self.leases = []         # (t, rv, holder)
        self.evsig = {}          # key -> the last preemption seen
        self.open_borrow = []    # reclamations not yet seen borrowing
        self.finished_recent = []  # (t, cq, usage) of finishes
        self.tmp = tempfile.mkdtemp(prefix='chaos-check.', dir=d)

    # -- state --

    def key(self, o):
        m = o['metadata']
        return (o['kind'], m.get('namespace', ''), m['name'])

    def put(self, o):
        k = self.key(o)
        self.drop(k)
        self.objs[k] = o
        if k[0] == 'Workload':
            uid = o['metadata'].get('uid')
            if uid:
                self.wl_by_uid[uid] = k
            ou = owner_uid(o)
            if ou:
                self.wl_by_owner.setdefault(ou, set()).add(k)
        return k

    def drop(self, k):
        o = self.objs.pop(k, None)
        if o is not None and k[0] == 'Workload':
            ou = owner_uid(o)
            if ou and ou in self.wl_by_owner:
                self.wl_by_owner[ou].discard(k)

    def in_gap(self, rv):
        for kind in ('Workload', 'Job'):
            for lo, hi in self.gaps[kind]:
                if lo < rv < hi:
                    return True
        return False

    # -- the run --

    def run(self):
        rec = os.path.join(self.dir, 'rec')
        recs = read_rec(os.path.join(rec, 'workloads.rec'), 'Workload') \
            + read_rec(os.path.join(rec, 'jobs.rec'), 'Job')
        for name in ('workloads', 'jobs', 'leases'):
            for _, _, _, r in read_rec(os.path.join(rec, name + '.rec'),
                                       name):
                if r['type'] == 'NOTE':
                    self.notes[r['what']] = self.notes.get(r['what'], 0) + 1
        for _, _, _, r in read_rec(os.path.join(rec, 'leases.rec'),
                                   'Lease'):
            if r['type'] in ('ADDED', 'MODIFIED'):
                o = r['object']
                self.leases.append((r['t'], rv_of(o),
                                    (o.get('spec') or {})
                                    .get('holderIdentity') or ''))
            elif r['type'] == 'LIST':
                for o in r['items']:
                    self.leases.append((r['t'], rv_of(o),
                                        (o.get('spec') or {})
                                        .get('holderIdentity') or ''))
        self.final = {}
        self.relists = 0
        for name in ('workloads', 'jobs', 'leases'):
            rr = [r for _, _, _, r in read_rec(os.path.join(rec, name +
                                                          '.rec'), name)
                  if r['type'] != 'NOTE']
            self.final[name] = bool(rr) and rr[-1]['type'] == 'LIST'
            # the lists but the first and the final one
            self.relists += max(0, sum(r['type'] == 'LIST'
                                       for r in rr) - 2)
        recs = [x for x in recs if x[0] is not None]
        # gaps: a LIST at L after the stream's last event P
        for rv, _, _, r in recs:
            if r['type'] == 'LIST':
                p = int(r['prev']) if r.get('prev') else -1
                if p < rv:
                    self.gaps[r['kind']].append((p, rv))
        # A LIST at L is the state of its kind at L, so it goes before
        # any event of the other kind with the same resourceVersion (L
        # is the latest version when listed: it can be that event's).
        recs.sort(key=lambda x: (x[0], x[3]['type'] != 'LIST', x[1],
                                 x[3]['kind'], x[2]))
        for rv, _, _, r in recs:
            changed = self.apply(r)
            self.after(rv, r, changed)
        return self

    def apply(self, r):
        """Applies one record; returns the Workload keys it changed."""
        if r['type'] == 'LIST':
            kind = r['kind']
            for k in [k for k in self.objs if k[0] == kind]:
                self.drop(k)
            ks = [self.put(o) for o in r['items']]
            return [k for k in ks if k[0] == 'Workload'], True
        o = r['object']
        if r['type'] == 'DELETED':
            k = self.key(o)
            self.drop(k)
            return ([k] if k[0] == 'Workload' else []), False
        k = self.put(o)
        return ([k] if k[0] == 'Workload' else []), False

    def after(self, rv, r, changed):
        keys, is_list = changed
        t = r['t']
        for k in keys:
            self.workload_step(k, rv, t, is_list)
        if self.open_borrow:
            self.borrow_step()
        if r['kind'] == 'Job' and r['type'] != 'DELETED':
            for o in (r['items'] if is_list else [r['object']]):
                jk = self.key(o)
                if is_true(o, 'Complete') and jk not in self.completions:
                    self.completions[jk] = t
        if not self.in_gap(rv):
            self.check_state(rv, r)

    def workload_step(self, k, rv, t, is_list):
        w = self.objs.get(k)
        prev = self.prev_wl.get(k)
        if w is None:
            self.prev_wl.pop(k, None)
            return
        adm = json.dumps((w.get('status') or {}).get('admission'),
                         sort_keys=True)
        held, ev = holds(w), evictions(w)
        if held:
            if prev is None or prev[0] is None:
                self.admissions.append((t, rv_of(w), k))
                self.first_held_after.setdefault(
                    w['metadata'].get('uid'), []).append(rv_of(w))
            elif prev[0] != adm and ev <= prev[1]:
                self.bad_replace.append(
                    'rv %d: %s/%s: admission replaced while holding quota, '
                    'no eviction in between: %s -> %s' %
                    (rv, k[1], k[2], prev[0], adm))
            # two Workloads of one Job holding quota
            ou = owner_uid(w)
            if ou:
                n = [x for x in self.wl_by_owner.get(ou, ())
                     if x in self.objs and holds(self.objs[x])]
                if len(n) > 1:
                    self.bad_twice.append('rv %d: Job uid %s: %s hold quota'
                                          % (rv, ou, sorted(n)))
        if not held and prev is not None and prev[0] is not None and \
                is_true(w, 'Finished'):
            # released by finishing: what it held, for stale views
            a = (w.get('status') or {}).get('admission') or {}
            self.finished_recent.append((t, a.get('clusterQueue'),
                                         wl_usage(a)))
        self.prev_wl[k] = (adm if held else None, ev)
        self.preempt_step(k, w, rv, is_list, t)

    def preempt_step(self, k, w, rv, is_list, t):
        ev = cond(w, 'Evicted')
        if not ev or ev.get('status') != 'True' or \
                ev.get('reason') != 'Preempted':
            return
        sig = (ev.get('lastTransitionTime'), ev.get('message'))
        if self.evsig.get(k) == sig:
            return
        self.evsig[k] = sig
        m = PMSG.search(ev.get('message') or '')
        pc = cond(w, 'Preempted')
        why = pc.get('reason') if pc else None
        rec = {'rv': rv, 'victim': '%s/%s' % (k[1], k[2]), 'why': why,
               'msg': ev.get('message'), 'list': is_list,
               'at': ev.get('lastTransitionTime')}
        self.preemptions.append(rec)
        if not m:
            rec['bad'] = 'message names no preemptor: %r' % ev.get('message')
            return
        uid = m.group(1)
        rec['uid'] = uid
        pk = self.wl_by_uid.get(uid)
        p = self.objs.get(pk) if pk else None
        if p is None:
            rec['bad'] = 'preemptor %s does not exist' % uid
            return
        rec['preemptor'] = '%s/%s' % (pk[1], pk[2])
        if holds(p):
            qr = cond(p, 'QuotaReserved') or {}
            if not (is_list and (qr.get('lastTransitionTime') or '') >=
                    (ev.get('lastTransitionTime') or '')):
                got = [x for x in self.first_held_after.get(uid, [])
                       if x < rv]
                rec['bad'] = ('preemptor %s already held quota when the '
                              'eviction was written (reserved at rv %s): '
                              'the eviction landed after its admission' %
                              (rec['preemptor'], got[-1] if got else '?'))
                return
        vcq = ((w.get('status') or {}).get('admission') or {}) \
            .get('clusterQueue') or self.queues.cq_of(w)
        pcq = self.queues.cq_of(p)
        pp = (p.get('spec') or {}).get('priority', 0)
        vp = (w.get('spec') or {}).get('priority', 0)
        if not holds(w):
            # the leader preempted a Workload whose admission it had
            # only assumed: the eviction was written before the
            # reservation (which then failed on the precondition). A
            # figure, not a failure: no quota moved.
            rec['unreserved'] = True
        if why == 'InClusterQueue':
            if pcq != vcq or pp <= vp:
                rec['bad'] = ('InClusterQueue: preemptor %s (cq %s, '
                              'priority %s), victim cq %s priority %s' %
                              (rec['preemptor'], pcq, pp, vcq, vp))
        elif why == 'InCohortReclamation':
            if pcq == vcq:
                rec['bad'] = ('InCohortReclamation: preemptor %s in the '
                              'victim\'s ClusterQueue %s' %
                              (rec['preemptor'], vcq))
            elif not rec.get('unreserved'):
                # the victim's ClusterQueue borrows: judged on this state
                # and the next ones until the victim's reservation goes
                # (admissions the leader wrote before the eviction may
                # land after it)
                rec['borrow'] = (k, vcq)
                rec['stale_ok'] = self.borrowing_stale(k, vcq, t)
                self.open_borrow.append(rec)
                self.borrow_step()
        else:
            rec['bad'] = 'reason %s is not configured' % why

    def borrowing(self, k, cq):
        """Workload k's ClusterQueue cq uses more than its nominal quota
        in a flavor k holds: (bool, usage)."""
        w = self.objs.get(k) or {}
        u = usage_of(self.objs, cq)
        adm = (w.get('status') or {}).get('admission') or {}
        for psa in adm.get('podSetAssignments') or []:
            for res, fl in (psa.get('flavors') or {}).items():
                if u.get((fl, res), 0) > self.queues.quota(cq, fl, res)[0]:
                    return True, u
        return False, u

    def borrowing_stale(self, k, cq, t):
        """Whether cq borrowed in a flavor k holds when the Workloads of
        cq that finished in the STALE_S seconds before t are counted
        back: the view of a leader whose cache had not yet seen those
        Finished writes (its own job reconciler's, racing its
        scheduler, as Kueue's do)."""
        u = dict(usage_of(self.objs, cq))
        back = False
        for ft, fcq, fu in self.finished_recent:
            if fcq == cq and t - STALE_S <= ft <= t:
                back = True
                for key, v in fu.items():
                    u[key] = u.get(key, 0) + v
        if not back:
            return False
        w = self.objs.get(k) or {}
        adm = (w.get('status') or {}).get('admission') or {}
        for psa in adm.get('podSetAssignments') or []:
            for res, fl in (psa.get('flavors') or {}).items():
                if u.get((fl, res), 0) > self.queues.quota(cq, fl, res)[0]:
                    return True
        return False

    def borrow_step(self):
        """The open reclamation checks, on the current state."""
        still = []
        for rec in self.open_borrow:
            k, cq = rec['borrow']
            w = self.objs.get(k)
            if w is None or not holds(w):
                if rec.get('stale_ok'):
                    rec['stale'] = True
                    continue
                rec['bad'] = ('InCohortReclamation: victim cq %s never '
                              'above its nominal quota until the victim '
                              'released its own (usage %s)' %
                              (cq, rec.get('usage')))
                continue
            b, u = self.borrowing(k, cq)
            rec['usage'] = u
            if not b:
                still.append(rec)
        self.open_borrow = still

    def check_state(self, rv, r):
        """cueue-invariants on the state, when what it reads changed."""
        live = []
        jobs = []
        for k, o in self.objs.items():
            if k[0] == 'Workload' and holds(o):
                live.append(k)
            elif k[0] == 'Job' and job_runs(o):
                jobs.append(k)
        for jk in jobs:
            uid = self.objs[jk]['metadata'].get('uid')
            for wk in self.wl_by_owner.get(uid, ()):
                if wk in self.objs and wk not in live:
                    live.append(wk)
        keys = sorted(set(live)) + sorted(jobs)
        digest = json.dumps([(k, self.digest(self.objs[k])) for k in keys],
                            sort_keys=True, default=str)
        if digest == self.last_digest:
            return
        self.last_digest = digest
        self.states += 1
        if any(is_true(self.objs[k], 'Evicted') for k in live
               if k[0] == 'Workload'):
            self.in_flight += 1
        path = os.path.join(self.tmp, 'state.json')
        with open(path, 'w') as f:
            json.dump({'apiVersion': 'v1', 'kind': 'List',
                       'items': self.qitems +
                       [self.objs[k] for k in keys]}, f)
        p = subprocess.run([self.inv, path], capture_output=True, text=True)
        if p.returncode != 0:
            keep = os.path.join(self.dir, 'state-%d.json' % rv)
            os.replace(path, keep)
            what = r.get('object', {}).get('metadata', {}).get('name', 'LIST')
            self.bad_inv.append('rv %d (%s %s %s): %s (state kept in %s)' % (
                rv, r['type'], r['kind'], what,
                (p.stdout + p.stderr).strip().replace('\n', '; '), keep))

    @staticmethod
    def digest(o):
        st = o.get('status') or {}
        if o['kind'] == 'Workload':
            return ([(c.get('type'), c.get('status'))
                     for c in st.get('conditions') or []
                     if c.get('type') in ('QuotaReserved', 'Finished')],
                    (o.get('spec') or {}).get('active'),
                    st.get('admission'))
        sp = o.get('spec') or {}
        return (sp.get('suspend'), sp.get('parallelism'),
                o['metadata'].get('generation'), st.get('active'),
                [(c.get('type'), c.get('status'))
                 for c in st.get('conditions') or []
                 if c.get('type') in ('Complete', 'Failed')])


def judge_preemptions(rp):
    bad = []
    for rec in rp.open_borrow:
        if rec.get('stale_ok'):
            rec['stale'] = True
            continue
        rec['bad'] = ('InCohortReclamation: victim cq %s never above its '
                      'nominal quota (usage %s)' % (rec['borrow'][1],
                                                    rec.get('usage')))
    for rec in rp.preemptions:
        if 'bad' not in rec:
            uid = rec['uid']
            later = [x for x in rp.first_held_after.get(uid, [])
                     if x > rec['rv']]
            pk = rp.wl_by_uid.get(uid)
            p = rp.objs.get(pk) if pk else None
            if later or (p is not None and holds(p)):
                rec['outcome'] = 'admitted'
            elif p is not None and is_true(p, 'Finished'):
                rec['outcome'] = 'admitted'  # and done, in a gap
            elif p is not None and (cond(p, 'QuotaReserved') or {}) \
                    .get('status') == 'False':
                rec['outcome'] = 'pending'
            else:
                rec['bad'] = 'preemptor %s never admitted, not pending ' \
                    'at the end' % rec.get('preemptor')
        if 'bad' in rec:
            bad.append('rv %d: victim %s (%s): %s' % (
                rec['rv'], rec['victim'], rec['why'], rec['bad']))
    return bad


DEACT = 'The workload is deactivated due to exceeding the maximum number ' \
    'of re-queuing retries'
CAP = re.compile(r"^couldn't assign flavors to pod set main: insufficient "
                 r"quota for cpu in flavor (\S+), previously considered "
                 r"podsets requests \((\S+)\) \+ current podset request "
                 r"\((\S+)\) > maximum capacity \((\S+)\)$")


def judge_jobs(rp, plan, created):
    bad, done, never, impossible = [], 0, 0, 0
    for j in plan:
        jk = ('Job', j['ns'], j['name'])
        job = rp.objs.get(jk)
        name = '%s/%s (%s)' % (j['ns'], j['name'], j['kind'])
        if job is None:
            bad.append('%s: no such Job at the end' % name)
            continue
        uid = job['metadata']['uid']
        wls = [rp.objs[k] for k in rp.wl_by_owner.get(uid, ())
               if k in rp.objs]
        if len(wls) != 1:
            bad.append('%s: %d Workloads at the end' % (name, len(wls)))
            continue
        w = wls[0]
        qr = cond(w, 'QuotaReserved') or {}
        js = job.get('spec') or {}
        if j['kind'] == 'run':
            if is_true(job, 'Complete') and is_true(w, 'Finished'):
                done += 1
            else:
                bad.append('%s: not Complete: Job suspend=%s active=%s; '
                           'Workload QuotaReserved=%s %s: %s' % (
                               name, js.get('suspend'),
                               (job.get('status') or {}).get('active'),
                               qr.get('status'), qr.get('reason'),
                               qr.get('message')))
        elif j['kind'] == 'never-ready':
            ev = {(e.get('reason'), e.get('underlyingCause', '')):
                  e.get('count') for e in
                  ((w.get('status') or {}).get('schedulingStats') or {})
                  .get('evictions') or []}
            good = ((w.get('spec') or {}).get('active') is False and
                    qr.get('status') == 'False' and
                    qr.get('message') == DEACT and
                    ev.get(('PodsReadyTimeout', 'WaitForStart'), 0) >= 1 and
                    js.get('suspend') is True and
                    not (job.get('status') or {}).get('active'))
            if good:
                never += 1
            else:
                bad.append('%s: not deactivated after its PodsReady '
                           'timeouts: active=%s QuotaReserved=%s: %s; '
                           'evictions %s; Job suspend=%s' % (
                               name, (w.get('spec') or {}).get('active'),
                               qr.get('status'), qr.get('message'), ev,
                               js.get('suspend')))
        else:
            cq = rp.queues.lq.get((j['ns'], j['queue']))
            m = CAP.match(qr.get('message') or '')
            want_req = j['cpu'] * j['par'] * 1000
            good = (qr.get('status') == 'False' and
                    qr.get('reason') == 'Pending' and m is not None and
                    (w.get('spec') or {}).get('queueName') == j['queue'] and
                    js.get('suspend') is True)
            if good:
                fl = m.group(1)
                good = (milli(m.group(2)) == 0 and
                        milli(m.group(3)) == want_req and
                        milli(m.group(4)) ==
                        rp.queues.max_capacity(cq, fl, 'cpu'))
            if good:
                impossible += 1
            else:
                bad.append('%s: not pending with a true reason: '
                           'QuotaReserved=%s %s: %s (cq %s, max capacity '
                           '%s m)' % (name, qr.get('status'),
                                      qr.get('reason'), qr.get('message'),
                                      cq, rp.queues.max_capacity(
                                          cq, 'od', 'cpu')))
    return bad, done, never, impossible


def failovers(rp, actions):
    """Per action: seconds to the first admission written by the next
    leader (kill, stop) or once the devserver is back."""
    out = []
    for a in actions:
        if a.get('action') not in ('sigkill', 'sigterm', 'devserver'):
            continue
        t0 = a['t']
        floor_rv, t_lease = 0, None
        if a['action'] in ('sigkill', 'sigterm'):
            old = a.get('holder') or ''
            for t, rv, h in rp.leases:
                if t > t0 and h and h != old:
                    floor_rv, t_lease = rv, t
                    break
            if t_lease is None:
                out.append(dict(a, failover=None, lease=None))
                continue
        t_up = a.get('t_up', t0)
        fo = None
        for t, rv, _ in rp.admissions:
            if t > t0 and t >= t_up and rv > floor_rv:
                fo = round(t - t0, 2)
                break
        out.append(dict(a, failover=fo,
                        lease=round(t_lease - t0, 2) if t_lease else None))
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    inv, d = argv
    with open(os.path.join(d, 'plan.json')) as f:
        plan = json.load(f)
    created = load_json_lines(os.path.join(d, 'created.log'))
    actions = load_json_lines(os.path.join(d, 'actions.log'))
    rp = Replay(inv, d).run()

    check('recordings complete: every stream ends with its final list, '
          'no recorder thread died (%d re-lists)' % rp.relists,
          ['%s: no final list' % k for k, v in sorted(rp.final.items())
           if not v] +
          ['%d recorder thread(s) died' % rp.notes['died']]
          if rp.notes.get('died') or not all(rp.final.values()) else [])
    errs = [c for c in created if c.get('error')]
    names = {(c['ns'], c['name']) for c in created}
    miss = ['%s/%s not created' % (j['ns'], j['name']) for j in plan
            if (j['ns'], j['name']) not in names]
    check('stream: every planned Job created (%d)' % len(plan),
          ['%s/%s: %s' % (c['ns'], c['name'], c['error']) for c in errs] +
          miss)
    check('over-admission: cueue-invariants on every observed state '
          '(%d states, %d with an eviction in flight)' %
          (rp.states, rp.in_flight), rp.bad_inv)
    check('admitted twice: no Job with two Workloads holding quota at once',
          rp.bad_twice)
    check('admitted twice: no admission replaced while holding quota '
          'without an eviction', rp.bad_replace)
    pbad = judge_preemptions(rp)
    check('preemptions: each had a pending preemptor that needed it and '
          'got in (%d preemptions)' % len(rp.preemptions), pbad)
    jbad, done, never, impossible = judge_jobs(rp, plan, created)
    check('no Job lost: %d Complete, %d never-ready deactivated, %d '
          'impossible pending with a true reason' %
          (done, never, impossible), jbad)

    fos = failovers(rp, actions)
    by = {}
    for f in fos:
        by.setdefault(f['action'], []).append(f)
    fig = {}
    for kind, fs in sorted(by.items()):
        xs = [f['failover'] for f in fs if f['failover'] is not None]
        ls = [f['lease'] for f in fs if f.get('lease') is not None]
        fig[kind] = {'count': len(fs), 'measured': len(xs),
                     'p50': pct(xs, 50), 'max': max(xs) if xs else None,
                     'lease_p50': pct(ls, 50),
                     'lease_max': max(ls) if ls else None,
                     'each': [f['failover'] for f in fs]}
    t_first = min((c['t'] for c in created), default=None)
    t_last = max(rp.completions.values(), default=None)
    makespan = round(t_last - t_first, 2) if t_first and t_last else None
    retries = {}
    for c in created:
        for k, v in (c.get('retries') or {}).items():
            retries[k] = retries.get(k, 0) + v
    res = {
        'states': rp.states, 'in_flight_states': rp.in_flight,
        'preemptions': len(rp.preemptions),
        'preemption_reasons': {},
        'preempted_unreserved': sum(1 for r in rp.preemptions
                                    if r.get('unreserved')),
        'preempted_stale_view': sum(1 for r in rp.preemptions
                                    if r.get('stale')),
        'recorder_notes': rp.notes,
        'recorder_relists': rp.relists,
        'stream_retries': retries,
        'jobs': len(plan), 'completed': done, 'deactivated': never,
        'impossible_pending': impossible,
        'makespan_s': makespan,
        'throughput_jobs_per_min': round(done * 60.0 / makespan, 2)
        if makespan else None,
        'failover': fig,
        'leaderless_s': round(sum(f['lease'] for f in fos
                                  if f.get('lease') is not None), 1),
        'actions': fos,
        'passed': PASSED[0], 'failed': FAILED[0],
    }
    for rec in rp.preemptions:
        res['preemption_reasons'][rec['why']] = \
            res['preemption_reasons'].get(rec['why'], 0) + 1
    with open(os.path.join(d, 'results.json'), 'w') as f:
        json.dump(res, f, indent=1)
    try:
        os.remove(os.path.join(rp.tmp, 'state.json'))
        os.rmdir(rp.tmp)
    except OSError:
        pass
    return 1 if FAILED[0] else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
