#!/usr/bin/env python3
"""report.py: the figures of a chaos.sh run as Markdown (the
"Reliability" section of test/chaos/RESULTS.md).

  report.py WORK PROFILE SEED QUIET_S CHAOS_S LEASE_EXITS COMMAND

WORK holds chaos/ (and quiet/ with --baseline): results.json (check.py),
faults.txt ("KIND INJECTED CHECKED" per devserver fault kind, summed over
the devserver's runs), actions.log. QUIET_S / CHAOS_S are the runs' wall
times in seconds ("" when not run), LEASE_EXITS the replicas that exited
on their own after losing the Lease. Prints to stdout.
"""
import json
import os
import sys
import time


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def fmt(x, unit=' s'):
    return '-' if x is None else '%s%s' % (x, unit)


def main(argv):
    if len(argv) != 7:
        sys.stderr.write(__doc__)
        return 2
    work, profile, seed, quiet_s, chaos_s, lease_exits, cmd = argv
    ch = load(os.path.join(work, 'chaos', 'results.json'))
    qu = load(os.path.join(work, 'quiet', 'results.json'))
    if ch is None:
        sys.stderr.write('report.py: no chaos/results.json\n')
        return 1
    faults = []
    try:
        with open(os.path.join(work, 'chaos', 'faults.txt')) as f:
            faults = [line.split() for line in f if line.strip()]
    except OSError:
        pass
    acts = {}
    for a in ch.get('actions') or []:
        acts[a['action']] = acts.get(a['action'], 0) + 1
    out = []
    p = out.append
    p('### Reliability: the chaos suite (%s profile, seed %s)' %
      (profile, seed))
    p('')
    p('`%s`, %s, on the shared 2-core machine (other builds running). '
      'Two manager replicas against the devserver; the figures are '
      'check.py\'s (`results.json` of the run).' %
      (cmd.strip(), time.strftime('%Y-%m-%d', time.gmtime())))
    p('')
    p('| | |')
    p('|---|---|')
    p('| wall time | chaos run %s s%s |' % (
        chaos_s or '?', ', quiet run %s s' % quiet_s if quiet_s else ''))
    p('| Jobs | %d planned: %d Complete, %d never-ready deactivated, '
      '%d impossible pending with a true reason |' % (
          ch['jobs'], ch['completed'], ch['deactivated'],
          ch['impossible_pending']))
    p('| actions | %d SIGKILL of the leader, %d SIGTERM of the leader, '
      '%d devserver restarts; %s replica exit(s) on a lost Lease, '
      'restarted |' % (acts.get('sigkill', 0), acts.get('sigterm', 0),
                       acts.get('devserver', 0), lease_exits))
    if faults:
        p('| devserver faults injected | %s |' % ', '.join(
            '%s %s of %s' % (k, n, c) for k, n, c in faults))
    else:
        p('| devserver faults injected | none (no --fault-* flags) |')
    rn = ch.get('recorder_notes') or {}
    p('| the recorder survived | %d cut watch streams, %d 410 Expired '
      '(re-lists), %d failed requests |' % (
          rn.get('cut', 0), rn.get('gone', 0), rn.get('error', 0)))
    sr = ch.get('stream_retries') or {}
    p('| Job creates retried | %s |' % (', '.join(
        '%s %d' % (k, v) for k, v in sorted(sr.items())) or 'none'))
    p('| states checked | %d distinct states (%d with an eviction in '
      'flight) through cueue-invariants |' % (
          ch['states'], ch['in_flight_states']))
    p('| preemptions checked | %d (%s)%s |' % (
        ch['preemptions'], ', '.join('%s %d' % (k, v) for k, v in
                                     sorted((ch.get('preemption_reasons')
                                             or {}).items(),
                                            key=lambda x: str(x[0])))
        or 'none', ('; %d of a Workload whose admission was still in '
                    'flight' % ch['preempted_unreserved']
                    if ch.get('preempted_unreserved') else '') +
        ('; %d decided on a view that had not yet seen Finished writes'
         % ch['preempted_stale_view']
         if ch.get('preempted_stale_view') else '')))
    fo = ch.get('failover') or {}
    for kind, what in (('sigkill', 'failover after SIGKILL'),
                       ('sigterm', 'failover after SIGTERM'),
                       ('devserver', 'first admission after a devserver '
                        'restart')):
        f = fo.get(kind)
        if not f:
            continue
        lease = ''
        if f.get('lease_p50') is not None:
            lease = ' (Lease taken over: p50 %s, max %s)' % (
                fmt(f['lease_p50']), fmt(f['lease_max']))
        p('| %s | p50 %s, max %s over %d%s |' % (
            what, fmt(f['p50']), fmt(f['max']), f['measured'], lease))
    if ch.get('leaderless_s'):
        p('| time without a leader | %s s (from each kill or stop to the '
          'next Lease holder) |' % ch['leaderless_s'])
    if qu and qu.get('throughput_jobs_per_min') and \
            ch.get('throughput_jobs_per_min'):
        loss = 1 - ch['throughput_jobs_per_min'] / \
            qu['throughput_jobs_per_min']
        p('| throughput | quiet %s Jobs/min (makespan %s), chaos %s '
          'Jobs/min (makespan %s): %.0f%% lost |' % (
              qu['throughput_jobs_per_min'], fmt(qu['makespan_s']),
              ch['throughput_jobs_per_min'], fmt(ch['makespan_s']),
              100 * loss))
    else:
        p('| throughput | chaos %s Jobs/min (makespan %s; no quiet run to '
          'compare: --baseline) |' % (ch.get('throughput_jobs_per_min'),
                                      fmt(ch.get('makespan_s'))))
    p('| checks | %d passed, %d failed (check.py) |' % (
        ch['passed'], ch['failed']))
    p('')
    aims = []
    k, t = fo.get('sigkill'), fo.get('sigterm')
    if t and t.get('p50') is not None:
        aims.append('failover p50 after SIGTERM %s s: %s (aim <= 3 s)' % (
            t['p50'], 'met' if t['p50'] <= 3 else 'NOT met'))
    if k and k.get('p50') is not None:
        aims.append('after SIGKILL %s s: %s (aim <= leaseDuration + 2 = '
                    '17 s)' % (k['p50'], 'met' if k['p50'] <= 17
                               else 'NOT met'))
    if aims:
        p('Aims: ' + '; '.join(aims) + '.')
    print('\n'.join(out))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
