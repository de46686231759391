#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the raw results of tests/bench/bench-inner.sh into docs/BENCHMARKS.md.

    tests/bench/report.py OUTDIR [--raw-dir PATH] [--see-also REPORT]... > BENCHMARKS.md
    tests/bench/report.py OUTDIR --json          > summary.json
    tests/bench/report.py OUTDIR --aa OUTDIR2 ...  > BENCHMARKS.md

OUTDIR is what bench.sh collected (env.tsv, host.tsv, pipe.tsv, raw/...).
--raw-dir names the folder where the run kept its raw files (bench.sh:
build/bench-results/<release> from the top of the tree; default OUTDIR
as given); they are not committed, so the report names it as text, with
the command that made it.  --see-also names the reports of other full
runs (the same benchmarks on other kernels; paths relative to the
report), listed under the setup.  --aa names a second run of the same
command and checkout (BENCH_MODE=icount makes one): the report adds
section "A/A", every figure of both runs side by side, and how far
apart they are.  Every figure is computed here from
the raw files, so the report can be regenerated and checked.
"""
import json
import os
import statistics
import sys

# The checkout: paths under it are shown relative to it (a report names no
# developer's machine).
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rel(text):
    return text.replace(TOP + '/', '')

TARGET_COLD = 20.0
TARGET_WARM = 200.0
TARGET_PIPE_LOSS = 1.0         # % at 19 Hz, at most
TARGET_OFFCPU_LOSS = 20.0      # % for offcputime, at least
TARGET_CPU_SHARE = 5.0         # % of one CPU, 20,000 threads at 9 Hz
TARGET_FLOOR = 2.0             # warm tick per thread, at most this times the floor
TARGET_FLAT = 1.2              # sampler CPU per tick, pipe running / idle
# In instruction counts (BENCH_MODE=icount, issue 52): a count repeats
# within 1-2%, so flatness is held to 5%, and a cold capture (user stacks
# from cached tables) to a number of instructions.
TARGET_FLAT_ICOUNT = 1.05
TARGET_COLD_INSTR = 2000


def read_tsv(path):
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.rstrip('\n')
                if '\t' in line:
                    k, v = line.split('\t', 1)
                    d[k] = v
    return d


def tick_costs(d):
    """Ticks, visits and the per-tick wall and sampler CPU time of a window."""
    return {'ticks': d['ticks'], 'visited': d['threads_visited'],
            'tick': d['tick_ns_total'] / d['ticks'],
            'cpu_tick': d['sampler_cpu_ns'] / d['ticks']}


def read_rows(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.rstrip('\n')
                if line:
                    rows.append(line.split('\t'))
    return rows


def read_stats(path):
    d = {}
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                try:
                    d[parts[0]] = int(parts[1])
                except ValueError:
                    try:
                        d[parts[0]] = float(parts[1])
                    except ValueError:
                        d[parts[0]] = parts[1]
    return d


def read_meminfo(path):
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                k, v = line.split(':', 1)
                d[k] = int(v.split()[0])
    return d


def kv_lines(path, first):
    """Lines 'first I k v k v ...' -> list of dicts."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p or p[0] != first:
                continue
            d = {'i': int(p[1])}
            for j in range(2, len(p) - 1, 2):
                d[p[j]] = int(p[j + 1])
            out.append(d)
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# BENCH_MODE=icount (host.tsv "mode"): guest time is QEMU's instruction
# count, one nanosecond per executed guest instruction, and every time the
# report prints is shown as the count it is.
ICOUNT = False


def fmt_ns(ns):
    if ns is None:
        return 'n/a'
    if ICOUNT:
        for scale, unit in ((1e9, 'G'), (1e6, 'M'), (1e3, 'k')):
            if ns >= scale:
                return '%.*f %sinstr' % (2 if scale == 1e9 else 1, ns / scale, unit)
        return '%.0f instr' % ns
    if ns >= 1e9:
        return '%.2f s' % (ns / 1e9)
    if ns >= 1e6:
        return '%.1f ms' % (ns / 1e6)
    if ns >= 1e3:
        return '%.1f µs' % (ns / 1e3)
    return '%.0f ns' % ns


def fmt_x(x):
    if x is None:
        return 'n/a'
    return '%.1f×' % x if x < 100 else '%.0f×' % x


def fmt_pct(x, sign=False):
    if x is None:
        return 'n/a'
    return ('%+.1f%%' if sign else '%.1f%%') % x


def fmt_int(x):
    return 'n/a' if x is None else '{:,}'.format(int(x))


def fmt_bytes(b):
    if b is None:
        return 'n/a'
    if abs(b) >= 1 << 20:
        return '%.1f MiB' % (b / (1 << 20))
    if abs(b) >= 1 << 10:
        return '%.1f KiB' % (b / (1 << 10))
    return '%d B' % b


def verdict(ok):
    return '**met**' if ok else '**MISSED**'


# The tick section's windows (bench-inner.sh tick_window labels), in report order:
# cold, cold without the kernel stack cache (0.5.4), cold with kernel stacks only, warm.
TICK_MODES = ('cold', 'coldnc', 'coldk', 'warm')

class Bench:
    def __init__(self, out):
        self.out = out
        self.raw = os.path.join(out, 'raw')
        self.env = read_tsv(os.path.join(out, 'env.tsv'))
        self.host = read_tsv(os.path.join(out, 'host.tsv'))
        self.hostload = read_rows(os.path.join(out, 'host-load.tsv'))
        self.commands = read_rows(os.path.join(out, 'commands.txt'))

    def r(self, name):
        return os.path.join(self.raw, name)

    # ---- tick
    def delta(self, label):
        a = read_stats(self.r(label + '.0.stats'))
        b = read_stats(self.r(label + '.1.stats'))
        if not a or not b:
            return None

        def tot(st, avg, cnt):
            return st.get(avg, 0) * st.get(cnt, 0)
        d = {k: b[k] - a[k] for k in b
             if isinstance(b.get(k), int) and isinstance(a.get(k), int)}
        d['tick_ns_total'] = tot(b, 'tick_ns_avg', 'ticks') - tot(a, 'tick_ns_avg', 'ticks')
        d['hit_ns_total'] = tot(b, 'thread_ns_hit', 'cache_hits') - tot(a, 'thread_ns_hit', 'cache_hits')
        if 'full_ns_total' not in d:	# exact since 0.5.2
            d['full_ns_total'] = tot(b, 'thread_ns_full', 'cache_misses') - tot(a, 'thread_ns_full', 'cache_misses')
        d['memory_bytes_now'] = b.get('memory_bytes')
        d['hz'] = b.get('hz')
        d['after'] = b
        return d

    def floor(self, label):
        """An empty walk (tests/bench/walkfloor): ns per thread."""
        f = {}
        try:
            with open(self.r(label + '.floor')) as fh:
                for line in fh:
                    k, _, v = line.partition(' ')
                    f[k] = int(v)
        except (OSError, ValueError):
            return None
        if not f.get('walks') or not f.get('threads'):
            return None
        f['per_thread'] = f['ns_total'] / f['walks'] / f['threads']
        return f

    def model(self):
        """Tick time = a * threads + b * changed, least squares."""
        pts = []
        for n in [int(x) for x in self.env.get('model_sizes', '').split()]:
            for pct in [int(x) for x in self.env.get('model_pcts', '').split()]:
                d = self.delta('model-%d-%d' % (n, pct))
                if not d or not d.get('ticks'):
                    continue
                t = d['ticks']
                pts.append({'n': n, 'pct': pct, 'threads': d['threads_visited'] / t,
                            'changed': d.get('cache_misses', 0) / t,
                            'tick_ns': d['tick_ns_total'] / t, 'ticks': t,
                            'cpu_ns': d['sampler_cpu_ns'] / t,
                            'walk': d.get('tick_walk_ns_total', 0) / t,
                            'visit': d.get('tick_visit_ns_total', 0) / t,
                            'end': d.get('tick_end_ns_total', 0) / t})
        if len(pts) < 2:
            return None
        # Normal equations of tick = a * threads + b * changed (no constant).
        sxx = sum(p['threads'] ** 2 for p in pts)
        syy = sum(p['changed'] ** 2 for p in pts)
        sxy = sum(p['threads'] * p['changed'] for p in pts)
        sxt = sum(p['threads'] * p['tick_ns'] for p in pts)
        syt = sum(p['changed'] * p['tick_ns'] for p in pts)
        det = sxx * syy - sxy * sxy
        if not det:
            return None
        a = (sxt * syy - syt * sxy) / det
        b = (syt * sxx - sxt * sxy) / det
        for p in pts:
            p['fit'] = a * p['threads'] + b * p['changed']
        return {'a': a, 'b': b, 'points': pts}

    def tick(self):
        sizes = [int(x) for x in self.env.get('sizes', '').split()]
        res = []
        for n in sizes:
            passes = kv_lines(self.r('tick-%d.procpass' % n), 'pass')
            steady = passes[1:] if len(passes) >= 3 else passes
            row = {'n': n, 'passes': passes}
            if steady:
                row['proc_threads'] = med([p['threads'] for p in steady])
                row['proc_wall'] = med([p['wall_ns'] / p['threads'] for p in steady])
                row['proc_cpu'] = med([p['cpu_ns'] / p['threads'] for p in steady])
                row['proc_pass_wall'] = med([p['wall_ns'] for p in steady])
                row['proc_first_wall'] = passes[0]['wall_ns'] / passes[0]['threads']
                row['proc_wall_range'] = (min(p['wall_ns'] / p['threads'] for p in steady),
                                          max(p['wall_ns'] / p['threads'] for p in steady))
            fl = [self.floor('tick-%d-floor%d' % (n, k)) for k in (0, 1)]
            fl = [f for f in fl if f]
            if fl:
                row['floor'] = med([f['per_thread'] for f in fl])
                row['floors'] = fl
            for mode in TICK_MODES:
                label = 'tick-%d-%s' % (n, mode)
                d = self.delta(label)
                if not d or not d.get('threads_visited'):
                    row[mode] = None
                    continue
                m = {
                    'ticks': d['ticks'],
                    'overrun': d.get('ticks_overrun', 0),
                    'visited': d['threads_visited'],
                    'per_tick_visited': d['threads_visited'] / max(d['ticks'], 1),
                    'wall': d['tick_ns_total'] / d['threads_visited'],
                    'cpu': d['sampler_cpu_ns'] / d['threads_visited'],
                    'tick_ns': d['tick_ns_total'] / max(d['ticks'], 1),
                    'elapsed_ns': d['mono_ns'],
                    'cpu_frac': d['sampler_cpu_ns'] / d['mono_ns'] if d['mono_ns'] else None,
                    'hz': d['hz'],
                    'hits': d.get('cache_hits', 0),
                    'misses': d.get('cache_misses', 0),
                    'hit_ns': d['hit_ns_total'] / d['cache_hits'] if d.get('cache_hits') else None,
                    'full_ns': d['full_ns_total'] / d['cache_misses'] if d.get('cache_misses') else None,
                    'user_ns': d['user_ns_total'] / d['user_walks'] if d.get('user_walks') else None,
                    'user_walks': d.get('user_walks', 0),
                    'memory': d['memory_bytes_now'],
                    'stats': d['after'],
                }
                m['share_acct'] = m['tick_ns'] * m['hz'] / 1e9 * 100 if m['hz'] else None
                for ph in ('walk', 'visit', 'end'):
                    k = 'tick_%s_ns_total' % ph
                    m[ph] = d[k] / d['threads_visited'] if k in d else None
                m['walk_hits'] = d.get('cache_hits_walk')
                # 0.5.2: a full capture's parts, per capture.
                if d.get('cache_misses') and 'full_pin_ns' in d:
                    c = d['cache_misses']
                    m['parts'] = {k: d.get(k, 0) / c for k in
                                  ('full_enter_ns', 'full_pin_ns', 'full_kstack_ns',
                                   'full_uwalk_ns', 'user_ns_total')}
                    m['parts']['full'] = d['full_ns_total'] / c
                    # 0.5.4: kernel stacks taken from the stack cache.
                    kc = d.get('kstack_cache_hits', 0) + d.get('kstack_cache_misses', 0)
                    m['parts']['kc_hit'] = d.get('kstack_cache_hits', 0) / kc if kc else None
                    # 0.5.5: user stacks taken from the memo of the process.
                    uw = d.get('user_walks', 0)
                    m['parts']['us_memo'] = (d['user_stack_memo_hits'] / uw
                                             if uw and 'user_stack_memo_hits' in d else None)
                if row.get('floor'):
                    m['floor_ratio'] = m['wall'] / row['floor']
                if row.get('proc_wall'):
                    m['ratio'] = row['proc_wall'] / m['wall']
                    m['ratio_cpu'] = row['proc_cpu'] / m['cpu'] if m['cpu'] else None
                before = read_meminfo(self.r(label + '.before.meminfo'))
                loaded = read_meminfo(self.r(label + '.loaded.meminfo'))
                after = read_meminfo(self.r(label + '.after.meminfo'))
                if before and loaded:
                    m['slab_kb'] = loaded.get('Slab', 0) - before.get('Slab', 0)
                    m['vmalloc_kb'] = loaded.get('VmallocUsed', 0) - before.get('VmallocUsed', 0)
                    m['unload_slab_kb'] = (after.get('Slab', 0) - loaded.get('Slab', 0)) if after else None
                row[mode] = m
            res.append(row)
        return res

    # ---- pipe
    def pipe(self, name='pipe.tsv',
             confs=('offsample19', 'offsample99', 'offcputime', 'perfrecord')):
        rows = read_rows(os.path.join(self.out, name))
        runs = []
        for r in rows:
            try:
                runs.append({'round': int(r[0]), 'conf': r[1], 'ops': float(r[2]),
                             'us': float(r[3]) if len(r) > 3 and r[3] else None})
            except (ValueError, IndexError):
                continue
        if not runs:
            return None
        seq = [x for x in runs if x['conf'] != 'warmup']
        base = [x['ops'] for x in seq if x['conf'] == 'base']
        res = {'runs': runs, 'base': base, 'confs': {}}
        bmed = med(base)
        res['base_med'] = bmed
        # A/A: every base run against the mean of the base runs around it.
        aa = []
        bidx = [i for i, x in enumerate(seq) if x['conf'] == 'base']
        for j in range(1, len(bidx) - 1):
            nb = (seq[bidx[j - 1]]['ops'] + seq[bidx[j + 1]]['ops']) / 2
            aa.append((1 - seq[bidx[j]]['ops'] / nb) * 100)
        res['aa'] = aa
        res['aa_abs_med'] = med([abs(x) for x in aa])
        res['aa_range'] = (min(aa), max(aa)) if aa else None
        res['base_spread'] = ((max(base) - min(base)) / bmed * 100) if base and bmed else None
        for conf in confs:
            xs = [i for i, x in enumerate(seq) if x['conf'] == conf]
            if not xs:
                continue
            ops = [seq[i]['ops'] for i in xs]
            paired = []
            for i in xs:
                nb = [seq[k]['ops'] for k in (i - 1, i + 1)
                      if 0 <= k < len(seq) and seq[k]['conf'] == 'base']
                if nb:
                    paired.append((1 - seq[i]['ops'] / (sum(nb) / len(nb))) * 100)
            c = {'ops': ops, 'med': med(ops), 'paired': paired,
                 'paired_med': med(paired),
                 'loss_med': (1 - med(ops) / bmed) * 100 if bmed else None}
            if conf.startswith('offsample'):
                c['flat'] = self.flat(conf)
            res['confs'][conf] = c
        res['offcputime_startup_ms'] = [int(r[1]) for r in
                                        read_rows(os.path.join(self.out, 'offcputime-startup.tsv'))
                                        if len(r) > 1]
        return res

    def flat(self, conf):
        """Sampler CPU time per tick, idle window vs during the pipe run."""
        idle, busy, idle_t, busy_t, steady, steady_t = [], [], [], [], [], []
        rnd = 1
        while True:
            s0 = read_stats(self.r('pipe-%d-%s.0.stats' % (rnd, conf)))
            if s0 is None:
                if rnd > 50:
                    break
                rnd += 1
                continue
            s1 = read_stats(self.r('pipe-%d-%s.1.stats' % (rnd, conf)))
            s2 = read_stats(self.r('pipe-%d-%s.2.stats' % (rnd, conf)))
            rnd += 1
            if not s1 or not s2:
                continue

            def per_tick(a, b, key):
                dt = b['ticks'] - a['ticks']
                if dt <= 0:
                    return None
                if key == 'tick':
                    return (b['tick_ns_avg'] * b['ticks'] - a['tick_ns_avg'] * a['ticks']) / dt
                return (b[key] - a[key]) / dt
            idle.append(per_tick(s0, s1, 'sampler_cpu_ns'))
            busy.append(per_tick(s1, s2, 'sampler_cpu_ns'))
            idle_t.append(per_tick(s0, s1, 'tick'))
            busy_t.append(per_tick(s1, s2, 'tick'))
            s3 = read_stats(self.r('pipe-%d-%s.3.stats' % (rnd - 1, conf)))
            s4 = read_stats(self.r('pipe-%d-%s.4.stats' % (rnd - 1, conf)))
            if s3 and s4:
                steady.append(per_tick(s3, s4, 'sampler_cpu_ns'))
                steady_t.append(per_tick(s3, s4, 'tick'))
            last = s2
        if not idle:
            return None
        return {'idle_cpu': med(idle), 'busy_cpu': med(busy),
                'idle_tick': med(idle_t), 'busy_tick': med(busy_t),
                'steady_cpu': med(steady) if steady else None,
                'steady_tick': med(steady_t) if steady_t else None,
                'n': len(idle), 'visited': last.get('threads_visited', 0) / max(last.get('ticks', 1), 1)}

    # ---- read
    def read(self):
        sizes = [int(x) for x in self.env.get('read_sizes', '').split()]
        res = []
        for n in sizes:
            reads = kv_lines(self.r('read-%d.reads' % n), 'read')
            content = read_tsv(self.r('read-%d.content' % n))
            loaded = read_stats(self.r('read-%d.loaded.stats' % n))
            row = {'n': n, 'reads': []}
            for rd in reads:
                i = rd['i']
                a = read_stats(self.r('read-%d-%d.0.stats' % (n, i)))
                b = read_stats(self.r('read-%d-%d.1.stats' % (n, i)))
                if not a or not b:
                    continue
                frames = b['sym_lookups'] - a['sym_lookups']
                hits = b['sym_hits'] - a['sym_hits']
                row['reads'].append({'i': i, 'bytes': rd['bytes'], 'wall': rd['wall_ns'],
                                     'cpu': rd['cpu_ns'], 'frames': frames,
                                     'kallsyms': frames - hits,
                                     'sym_entries': b.get('sym_entries'),
                                     'memory': b.get('memory_bytes')})
            row['records'] = int(content.get('records', 0) or 0)
            row['addrs'] = int(content.get('distinct_kernel_frames', 0) or 0)
            row['kstacks'] = int(content.get('distinct_kstacks', 0) or 0)
            row['ustacks'] = int(content.get('distinct_ustacks', 0) or 0)
            row['loaded'] = loaded
            before = read_meminfo(self.r('read-%d.before.meminfo' % n))
            lm = read_meminfo(self.r('read-%d.loaded.meminfo' % n))
            if before and lm:
                row['slab_kb'] = lm.get('Slab', 0) - before.get('Slab', 0)
                row['vmalloc_kb'] = lm.get('VmallocUsed', 0) - before.get('VmallocUsed', 0)
            res.append(row)
        return res

    # ---- cfi
    def cfi(self):
        build = read_stats(self.r('cfi-build.stats'))
        if not build:
            return None
        files = read_rows(self.r('cfi-files.tsv'))
        res = {'built': build.get('cfi_built', 0), 'failed': build.get('cfi_failed', 0),
               'too_big': build.get('cfi_too_big', 0),
               'build_ns': build.get('cfi_build_ns', 0), 'bytes': build.get('cfi_bytes', 0),
               'tables': build.get('cfi_tables', 0), 'cap_mb': build.get('cfi_cache_mb', 0),
               'files': [(f[0], int(f[1])) for f in files if len(f) == 2 and f[1].isdigit()],
               'threads': int(self.env.get('cfi_threads', 0) or 0)}
        # One program alone (sleep: its files are sleep, libc, ld.so).
        alone = read_stats(self.r('cfi-alone.stats'))
        if alone:
            res['alone'] = {
                'built': alone.get('cfi_built', 0), 'failed': alone.get('cfi_failed', 0),
                'build_ns': alone.get('cfi_build_ns', 0), 'bytes': alone.get('cfi_bytes', 0),
                'files': [(f[0], int(f[1]), int(f[2]) if f[2].isdigit() else 0,
                           int(f[3]) if f[3].isdigit() else 0)
                          for f in read_rows(self.r('cfi-alone-files.tsv')) if len(f) == 4],
            }
        for mode in ('on', 'off'):
            d = self.delta('cfi-' + mode)
            if not d or not d.get('threads_visited'):
                res[mode] = None
                continue
            res[mode] = {
                'ticks': d['ticks'], 'visited': d['threads_visited'],
                'wall': d['tick_ns_total'] / d['threads_visited'],
                'cpu': d['sampler_cpu_ns'] / d['threads_visited'],
                'walks': d.get('user_walks', 0),
                'frames_per_walk': d.get('user_frames', 0) / max(d.get('user_walks', 0), 1),
                'cfi_frames': d.get('user_cfi_frames', 0),
                'memory': d.get('memory_bytes_now'),
            }
        return res

    # ---- oncpu
    def oncpu(self):
        res = {}
        for mode in ('on', 'off'):
            d = self.delta('oncpu-warm-%s' % mode)
            if not d or not d.get('ticks'):
                res[mode] = None
                continue
            res[mode] = dict(tick_costs(d), **{
                'sampled': d.get('oncpu_sampled', 0),
                'missed': d.get('oncpu_missed', 0),
                'oncpu_ns': d.get('oncpu_ns_total', 0),
            })
        res['pipe'] = self.pipe('oncpu-pipe.tsv', ('oncpu1', 'oncpu0'))
        if res['on'] is None and res['off'] is None and not res['pipe']:
            return None
        return res

    # ---- blockers
    def blockers(self):
        res = {'threads': int(self.env.get('blk_threads', 0) or 0)}
        for temp in ('warm', 'cold'):
            for mode in ('on', 'off'):
                d = self.delta('blk-%s-%s' % (temp, mode))
                if not d or not d.get('threads_visited') or not d.get('ticks'):
                    res[temp + '-' + mode] = None
                    continue
                res[temp + '-' + mode] = dict(tick_costs(d), **{
                    'looked': d.get('blocker_looked', 0),
                    'found': d.get('blocker_found', 0),
                    'blk_ns': d.get('blocker_ns_total', 0),
                })
        if all(res.get(k) is None for k in ('warm-on', 'warm-off', 'cold-on', 'cold-off')):
            return None
        return res

    # ---- waitfor
    def waitfor(self):
        res = {}
        for mode in ('on', 'off'):
            d = self.delta('wf-warm-%s' % mode)
            if not d or not d.get('threads_visited') or not d.get('ticks'):
                res[mode] = None
                continue
            res[mode] = dict(tick_costs(d), **{
                'looked': d.get('blocker_looked', 0),
                'found': d.get('blocker_found', 0),
                'blk_ns': d.get('blocker_ns_total', 0),
            })
        if res['on'] is None and res['off'] is None:
            return None
        return res

    # ---- python
    def python(self):
        res = {'threads': int(self.env.get('py_threads', 0) or 0),
               'depth': int(self.env.get('py_depth', 0) or 0),
               'version': self.env.get('py_version', '')}
        for label in ('cold-on', 'cold-off', 'warm-on', 'warm-off', 'cold-native',
                      'names-on', 'names-off'):
            d = self.delta('py-' + label)
            if not d or not d.get('ticks') or not d.get('threads_visited'):
                res[label] = None
                continue
            caps = d.get('cache_misses', 0)
            res[label] = dict(tick_costs(d), **{
                'captures': caps,
                'full': d.get('full_ns_total', 0) / caps if caps else 0,
                'pin': d.get('full_pin_ns', 0) / caps if caps else 0,
                'uwalk': d.get('full_uwalk_ns', 0) / caps if caps else 0,
                'umap': d.get('user_ns_total', 0) / caps if caps else 0,
                'frames': d.get('user_frames', 0) / max(d.get('user_walks', 0), 1),
                'py_frames': d.get('py_frames', 0) / caps if caps else 0,
                'py_errors': d.get('py_errors', 0),
                'memo_hits': d.get('py_code_memo_hits', 0),
                'py_total': d.get('py_frames', 0),
                'names': d['after'].get('py_names_unique', 0),
                'names_bytes': d['after'].get('py_names_bytes'),
                'memory': d.get('memory_bytes_now'),
                'dropped': d.get('py_names_dropped', 0) + d.get('user_dropped', 0),
            })
        try:
            with open(self.r('py-stack.txt')) as f:
                res['stack'] = rel(f.read().strip())
        except OSError:
            res['stack'] = ''
        if all(res.get(k) is None for k in ('cold-on', 'cold-off', 'names-on')):
            return None
        return res

    def profile(self, label, kind, limit=14):
        path = self.r('%s.profile-%s' % (label, kind))
        lines = []
        if not os.path.exists(path):
            return lines
        with open(path) as f:
            for line in f:
                if line.startswith('#') or '%' not in line:
                    continue
                lines.append(line.rstrip())
                if len(lines) >= limit:
                    break
        return lines


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out = args[0]
    rawdir = out.rstrip('/') or out
    as_json = '--json' in args
    if '--raw-dir' in args:
        rawdir = args[args.index('--raw-dir') + 1]
    see_also = [args[i + 1] for i, a in enumerate(args[:-1]) if a == '--see-also']
    aa = args[args.index('--aa') + 1] if '--aa' in args[:-1] else None
    b = Bench(out)
    global ICOUNT
    ICOUNT = b.host.get('mode') == 'icount'
    r = sections(b)
    if as_json:
        json.dump(results(b, r), sys.stdout, indent=1, default=str)
        return
    write_md(b, r['tick'], r['pipe'], r['read'], rawdir, r['cfi'], r['blockers'],
             r['oncpu'], r['model'], see_also, r['python'], r['waitfor'])
    if aa:
        b2 = Bench(aa)
        write_aa(results(b, r), results(b2, sections(b2)), aa)


def sections(b):
    """Every section's figures of a run, each read from its raw files once."""
    return {'tick': b.tick(), 'pipe': b.pipe(), 'read': b.read(), 'cfi': b.cfi(),
            'blockers': b.blockers(), 'oncpu': b.oncpu(), 'model': b.model(),
            'python': b.python(), 'waitfor': b.waitfor()}


def results(b, r):
    """Every figure of a run, as --json prints it (r: its sections())."""
    def clean(o):
        if isinstance(o, dict):
            return {k: clean(v) for k, v in o.items() if k != 'stats' and k != 'loaded'}
        if isinstance(o, list):
            return [clean(x) for x in o]
        return o
    return clean(dict({'env': b.env, 'host': b.host}, **r))


def leaves(o, path=''):
    """(path, number) for every number in a results tree."""
    if isinstance(o, dict):
        for k, v in o.items():
            yield from leaves(v, '%s/%s' % (path, k) if path else str(k))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from leaves(v, '%s[%d]' % (path, i))
    elif isinstance(o, (int, float)) and not isinstance(o, bool):
        yield path, o


# Leaves that are settings, counts of what was set up or when: the same
# by construction or meaningless to compare (indexes, clocks, sizes asked).
AA_SKIP = ('env/', 'host/')
AA_SETTINGS = ('/i', '/n', '/hz', '/walks', '/ticks', '/threads', '/elapsed_ns')


def write_aa(ra, rb, aa_dir):
    """Section A/A: the figures of two runs of the same command side by side."""
    w = sys.stdout.write
    a = dict(p for p in leaves(ra) if not p[0].startswith(AA_SKIP))
    bb = dict(p for p in leaves(rb) if not p[0].startswith(AA_SKIP))
    pairs = []
    for k, va in a.items():
        vb = bb.get(k)
        if vb is None or k.endswith(AA_SETTINGS) or (va == 0 and vb == 0):
            continue
        pairs.append((k, va, vb, abs(vb - va) / max(abs(va), abs(vb))))
    only = sorted(set(a) ^ set(bb))
    w('## A/A: the same command run again\n\n')
    w('A second guest ran the same command on the same checkout right after\n'
      'this one (raw results: `%s/`).  %s figures of this report are in both\n'
      '(settings, sizes and clocks of the run left out); how far apart each\n'
      'pair is, as |second - first| / the larger:\n\n'
      % (rel(aa_dir.rstrip('/')), fmt_int(len(pairs))))
    if not pairs:
        w('No figure to compare.\n\n')
        return
    apart = {p[0]: p[3] for p in pairs}
    ds = sorted(apart.values())

    def within(x):
        return fmt_int(sum(1 for d in ds if d <= x))
    w('| median | 90th percentile | largest | within 1% | within 5% |\n'
      '|---:|---:|---:|---:|---:|\n')
    w('| %.2f%% | %.2f%% | %.2f%% | %s of %s | %s of %s |\n\n'
      % (100 * statistics.median(ds), 100 * ds[int(0.9 * (len(ds) - 1))], 100 * ds[-1],
         within(0.01), fmt_int(len(ds)), within(0.05), fmt_int(len(ds))))
    w('The tick figures the targets are stated on (per visited thread; the\n'
      'floor: an empty walk), both runs:\n\n')
    w('| threads | figure | first run | second run | apart |\n'
      '|---:|---|---:|---:|---:|\n')
    for i, row in enumerate(ra.get('tick') or []):
        for key, name in (('floor', 'floor'), ('cold/cpu', 'cold'),
                          ('coldnc/cpu', 'cold, no stack cache'),
                          ('coldk/cpu', 'cold, kernel only'), ('warm/cpu', 'warm'),
                          ('cold/parts/full_uwalk_ns', 'cold: user walk'),
                          ('cold/parts/full_kstack_ns', 'cold: kernel unwind'),
                          ('cold/parts/user_ns_total', 'cold: user stack to files')):
            k = 'tick[%d]/%s' % (i, key)
            if k in a and k in bb:	# both 0: not a pair, 0% apart
                w('| %s | %s | %s | %s | %.2f%% |\n'
                  % (fmt_int(row.get('n')), name, fmt_ns(a[k]), fmt_ns(bb[k]),
                     100 * apart.get(k, 0.0)))
    w('\nThe 15 pairs furthest apart (the path names the figure in\n'
      '`tests/bench/report.py OUTDIR --json`):\n\n')
    w('| figure | first run | second run | apart |\n|---|---:|---:|---:|\n')
    for k, va, vb, d in sorted(pairs, key=lambda p: -p[3])[:15]:
        w('| `%s` | %.6g | %.6g | %.2f%% |\n' % (k, va, vb, 100 * d))
    w('\n')
    if only:
        w('In one run only: %s.\n\n' % ', '.join('`%s`' % k for k in only[:20]))


def write_md(b, tick, pipe, read, rawdir, cfi=None, blk=None, onc=None, model=None,
             see_also=(), py=None, wf=None):
    env, host = b.env, b.host
    w = sys.stdout.write
    quick = env.get('quick') == '1'
    guest = host.get('where', '') == 'guest'

    w('# offsample benchmarks\n\n')
    w('Generated by `%s` (tests/bench/, mk/bench.mk) from one run; every figure\n'
      'below comes from the raw files that run kept in\n'
      '`%s/` (not committed: the same command makes them again)\n'
      'and can be recomputed from them with `tests/bench/report.py %s`.%s\n\n'
      % (host.get('make_command', 'make bench'), rawdir, rawdir,
         ' **This is a BENCH_QUICK smoke run: small sizes, few repetitions.**' if quick else ''))

    # ---- setup
    w('## Setup\n\n')
    w('| | |\n|---|---|\n')
    w('| kernel (where the module ran) | `%s` (%s, clocksource %s) |\n'
      % (env.get('kernel'), env.get('preempt') or 'no PREEMPT flag in uname -v', env.get('clocksource')))
    w('| where | %s |\n' % env.get('where'))
    w('| clock | %s |\n' % (
        '**instruction count** (`BENCH_MODE=icount`: QEMU `-icount shift=0`, one vCPU): '
        'guest time advances 1 ns per executed guest instruction, so every time below, '
        'wall or CPU, is a number of guest instructions (`instr`) and repeats from run '
        'to run' if ICOUNT else
        'wall time of the emulated machine (`BENCH_MODE=wall`)'))
    w('| CPUs | %s × `%s`, %s MiB RAM |\n'
      % (env.get('cpus'), env.get('cpu_model'), fmt_int(int(env.get('mem_total_kb', 0)) // 1024)))
    w('| host | `%s`, %s × `%s` |\n' % (host.get('host_kernel'), host.get('host_cpus'),
                                       host.get('host_cpu_model')))
    w('| date | %s → %s (%s s for the whole `make bench`, guest boot included) |\n'
      % (host.get('start'), host.get('end'), host.get('duration_s')))
    w('| offsample | %s%s |\n' % (env.get('module_version'),
                                  ', commit %s' % host['commit'] if host.get('commit') else ''))
    w('| peers | %s; bpfcc-tools %s |\n' % (env.get('perf'), env.get('bcc')))
    if b.hostload:
        q = [int(r[1]) for r in b.hostload if len(r) > 2 and r[1].isdigit()]
        la = [float(r[2]) for r in b.hostload if len(r) > 2]
        own = 1 if guest else 0
        others = max(q) - own if q else 0
        w('| other load on the host | %s other QEMU guests at most (sampled every 20 s), '
          'host load average %.1f median / %.1f max |\n'
          % (others, med(la) or 0, max(la) if la else 0))
    w('\n')
    if see_also:
        w('The same benchmarks on other kernels (each its own full run): %s.\n\n'
          % ', '.join('[%s](%s)' % (os.path.basename(x), x) for x in see_also))
    if guest and ICOUNT:
        w('The host kernel cannot load modules, so everything ran inside one QEMU guest\n'
          'with **software emulation (TCG, no KVM)** counting instructions: every figure\n'
          'is a number of guest instructions, whatever else the host does (two runs of\n'
          'the tick section from one checkout agreed within 1.5%; a third from another\n'
          'checkout, its files at other paths, gave cold captures 10% dearer: compare\n'
          'runs of one checkout; 2026-12-05, issue 52).\n'
          'An instruction count is not a time on hardware: a cache miss costs one\n'
          'instruction here.  It tells where the module executes more code than it must,\n'
          'not how long a tick takes on a real machine.\n\n')
    elif guest:
        w('The host kernel cannot load modules, so everything ran inside one QEMU guest\n'
          'with **software emulation (TCG, no KVM)**.  Emulation does not slow all code\n'
          'alike, so **only ratios taken inside this one guest run mean anything**, and\n'
          'even they are the ratios of this emulated machine (see "Reading these\n'
          'numbers" at the end).  Absolute times below are emulated times.\n\n')

    # ---- headline
    w('## Targets (issue 17; the pipe and read rows: issue 6)\n\n')
    w('| target | result | verdict |\n|---|---|---|\n')
    t_rows = []
    colds = [(r['n'], r['cold']) for r in tick if r.get('cold') and r['cold'].get('ratio')]
    coldks = [(r['n'], r['coldk']) for r in tick if r.get('coldk') and r['coldk'].get('ratio')]
    warms = [(r['n'], r['warm']) for r in tick if r.get('warm') and r['warm'].get('ratio')]
    if colds:
        worst = min(m['ratio'] for _, m in colds)
        ok = worst >= TARGET_COLD
        t_rows.append(('cold capture ≥ %d× cheaper per thread than the /proc pass' % TARGET_COLD,
                       ', '.join('%s: %s' % (fmt_int(n), fmt_x(m['ratio'])) for n, m in colds)
                       + (' (kernel stacks only: ' + ', '.join(fmt_x(m['ratio']) for _, m in coldks) + ')'
                          if coldks else '')
                       + ('' if ok else '; missed by a factor of %.1f' % (TARGET_COLD / worst)),
                       verdict(ok)))
    if colds and ICOUNT:
        worst = max(m['cpu'] for _, m in colds)
        ok = worst <= TARGET_COLD_INSTR
        t_rows.append(('cold capture at most %s instructions per thread (user stacks from cached tables)'
                       % fmt_int(TARGET_COLD_INSTR),
                       ', '.join('%s: %s' % (fmt_int(n), fmt_ns(m['cpu'])) for n, m in colds)
                       + (' (kernel stacks only: ' + ', '.join(fmt_ns(m['cpu']) for _, m in coldks) + ')'
                          if coldks else '')
                       + ('' if ok else '; over by a factor of %.2f' % (worst / TARGET_COLD_INSTR)),
                       verdict(ok)))
    if warms:
        worst = min(m['ratio'] for _, m in warms)
        ok = worst >= TARGET_WARM
        fl = [(r['n'], r['proc_wall'] / r['floor']) for r in tick if r.get('floor') and r.get('proc_wall')]
        t_rows.append(('warm ≥ %d× cheaper per thread' % TARGET_WARM,
                       ', '.join('%s: %s' % (fmt_int(n), fmt_x(m['ratio'])) for n, m in warms)
                       + ('' if ok else '; missed by a factor of %.1f' % (TARGET_WARM / worst))
                       + ('' if not fl else '; the floor itself (an empty walk, below) is %s cheaper than '
                          'the /proc pass here' % ', '.join('%s×' % fmt_int(x) for _, x in fl)),
                       verdict(ok)))
    floors = [(r['n'], r['warm']) for r in tick if r.get('warm') and r['warm'].get('floor_ratio')]
    if floors:
        worst = max(m['floor_ratio'] for _, m in floors)
        ok = worst <= TARGET_FLOOR
        t_rows.append(('warm within %g× of the floor (an empty walk of the same threads)' % TARGET_FLOOR,
                       ', '.join('%s: %.2f× (floor %s per thread, %s against the /proc pass)'
                                 % (fmt_int(n), m['floor_ratio'],
                                    fmt_ns(m['wall'] / m['floor_ratio']),
                                    fmt_x(m['ratio'] * m['floor_ratio']) if m.get('ratio') else 'n/a')
                                 for n, m in floors)
                       + ('' if ok else '; missed by a factor of %.2f' % (worst / TARGET_FLOOR)),
                       verdict(ok)))
    if model:
        t_rows.append(('cost model: tick time = a × threads + b × changed threads',
                       'a = %s per thread, b = %s per changed thread (least squares over %d warm '
                       'windows with 0, 10 and 100%% of the threads running between ticks; see a2.)'
                       % (fmt_ns(model['a']), fmt_ns(model['b']), len(model['points'])),
                       '**reported**'))
    if pipe and pipe['confs'] and pipe['confs'].get('offsample19', {}).get('flat'):
        f = pipe['confs']['offsample19']['flat']
        # The verdict is on the steady window (the load running before
        # and after it); the timed run's window, which also holds perf's
        # start, is given beside it.
        load = f['steady_cpu'] if f.get('steady_cpu') is not None else f['busy_cpu']
        if f['idle_cpu'] and load is not None:
            ratio = load / f['idle_cpu']
            flat = TARGET_FLAT_ICOUNT if ICOUNT else TARGET_FLAT
            ok = ratio <= flat
            t_rows.append(('flat in the context-switch rate: sampler CPU per tick with `perf bench sched pipe` '
                           'running / idle ≤ %g (19 Hz)' % flat,
                           '%.2f (%s / %s per tick, %s threads, medians of %d rounds%s)'
                           % (ratio, fmt_ns(load), fmt_ns(f['idle_cpu']),
                              fmt_int(f['visited']), f['n'],
                              '; over the timed run, which also starts perf: %.2f' % (f['busy_cpu'] / f['idle_cpu'])
                              if f.get('steady_cpu') is not None and f['busy_cpu'] is not None else '')
                           + ('' if ok else '; over by a factor of %.2f' % (ratio / flat)),
                           verdict(ok)))
    if pipe and pipe['confs']:
        c19 = pipe['confs'].get('offsample19')
        co = pipe['confs'].get('offcputime')
        if c19 and co:
            l19, lo = c19['paired_med'], co['paired_med']
            ok = l19 is not None and lo is not None and l19 <= TARGET_PIPE_LOSS and lo >= TARGET_OFFCPU_LOSS
            noise = pipe.get('aa_abs_med')
            note = ''
            if l19 is not None and l19 > TARGET_PIPE_LOSS:
                note += '; 19 Hz loss over the %d%% bound by %.1f points' % (TARGET_PIPE_LOSS, l19 - TARGET_PIPE_LOSS)
            if lo is not None and lo < TARGET_OFFCPU_LOSS:
                note += '; offcputime loss short of %d%% by %.1f points' % (TARGET_OFFCPU_LOSS, TARGET_OFFCPU_LOSS - lo)
            resolvable = noise is not None and noise <= TARGET_PIPE_LOSS
            if lo is not None and lo < TARGET_OFFCPU_LOSS:
                pverdict = verdict(False)
            elif resolvable:
                pverdict = verdict(ok)
            else:
                pverdict = ('**not resolvable here**: offcputime part met, offsample\'s %s '
                            'is inside the ±%.1f%% noise' % (fmt_pct(l19, True), noise or 0))
            t_rows.append(('`perf bench sched pipe` loss ≤ %d%% at 19 Hz while offcputime loses ≥ %d%%'
                           % (TARGET_PIPE_LOSS, TARGET_OFFCPU_LOSS),
                           'offsample 19 Hz %s, offcputime %s (paired medians; A/A noise ±%.1f%%%s)%s'
                           % (fmt_pct(l19, True), fmt_pct(lo, True), noise or 0,
                              '' if resolvable else
                              ', so a 1% loss cannot be resolved here: see the flat-cost table in b.',
                              note),
                           pverdict))
    big = [r for r in tick if r['n'] == 20000 and r.get('warm')]
    if not big and tick and tick[-1].get('warm'):
        big = [tick[-1]]
    if big:
        m = big[0]['warm']
        share = m['share_acct']
        ok = share is not None and share < TARGET_CPU_SHARE and m['hz'] == 9
        t_rows.append(('%s threads at 9 Hz below %d%% of one CPU (module\'s own accounting)'
                       % (fmt_int(big[0]['n']), TARGET_CPU_SHARE),
                       '%s of one CPU at %s Hz (tick %s × hz; sampler thread CPU time: %s)%s'
                       % (fmt_pct(share), m['hz'], fmt_ns(m['tick_ns']),
                          fmt_pct(m['cpu_frac'] * 100 if m['cpu_frac'] is not None else None),
                          '' if ok else '; missed by a factor of %.1f' % (share / TARGET_CPU_SHARE))
                       + ('; the floor alone (an empty walk of the same threads) would take %s'
                          % fmt_pct(big[0]['floor'] * m['per_tick_visited'] * m['hz'] / 1e9 * 100)
                          if big[0].get('floor') and m['hz'] else ''),
                       verdict(ok)))
    rbig = [r for r in read if r['reads']]
    if rbig:
        r = rbig[-1]
        first = r['reads'][0]
        later = [x['kallsyms'] for x in r['reads'][1:]]
        ok = first['kallsyms'] <= r['addrs'] and all(x == 0 for x in later)
        t_rows.append(('reading %s stacks: at most one symbol lookup per unique address' % fmt_int(r['records']),
                       'first read: %s kallsyms lookups for %s distinct kernel addresses (%s frames printed); '
                       'later reads: %s lookups'
                       % (fmt_int(first['kallsyms']), fmt_int(r['addrs']), fmt_int(first['frames']),
                          ', '.join(fmt_int(x) for x in later) or 'n/a'),
                       verdict(ok)))
    for t in t_rows:
        w('| %s | %s | %s |\n' % t)
    w('\n')

    # ---- a. tick
    w('## a. Cost of a sampler tick per thread vs a /proc/*/task/*/stack pass\n\n')
    w('N threads of `offsample-sleepers -m same` sleep in `nanosleep` for good.  The\n'
      '/proc pass opens, reads and closes `/proc/PID/task/TID/stack` for every thread\n'
      'on the system (median of passes 2..%s; the first pass, which also creates the\n'
      'proc inodes, is shown separately).  The module figures are deltas of its own\n'
      'counters over %s (cold) / %s (warm) ticks at %s Hz, after the first two ticks,\n'
      'between snapshots taken at tick boundaries (`enabled=0` returns once the tick\n'
      'in progress has ended; sampling resumes right after the snapshot):\n'
      '`tick_ns` (wall time of whole ticks: snapshot, every visit, sweep) divided by\n'
      '`threads_visited`, and the sampler thread\'s CPU time (`sampler_cpu_ns`) divided\n'
      'the same way.  *cold* = `thread_cache=0` (every thread pinned, unwound,\n'
      'classified, user stack walked and resolved to file+offset); *cold, no stack\n'
      'cache* = the same with `kstack_cache=0` (0.5.4: every kernel stack unwound);\n'
      '*cold, kernel only*\n'
      '= also `user_stacks=0`; *warm* = cache on, no thread changed.\n\n'
      % (env.get('proc_passes'), env.get('ticks_cold'), env.get('ticks_warm'), env.get('tick_hz')))
    w('| threads visited | /proc pass per thread | mode | module per thread (wall) | ratio | module per thread (CPU) | ratio (CPU) | tick | ticks (overrun) |\n')
    w('|---:|---:|---|---:|---:|---:|---:|---:|---:|\n')
    names = {'cold': 'cold', 'coldnc': 'cold, no stack cache', 'coldk': 'cold, kernel only', 'warm': 'warm'}
    for r in tick:
        for mode in TICK_MODES:
            m = r.get(mode)
            if not m and mode == 'coldnc':
                continue	# not measured before 0.5.4
            if not m:
                w('| %s | | %s | failed | | | | | |\n' % (fmt_int(r['n']), names[mode]))
                continue
            w('| %s | %s | %s | %s | **%s** | %s | %s | %s | %d (%d) |\n'
              % (fmt_int(m['per_tick_visited']) if mode == 'cold' else '',
                 (fmt_ns(r.get('proc_wall')) + ' (first pass %s)' % fmt_ns(r.get('proc_first_wall')))
                 if mode == 'cold' else '',
                 names[mode], fmt_ns(m['wall']), fmt_x(m.get('ratio')), fmt_ns(m['cpu']),
                 fmt_x(m.get('ratio_cpu')), fmt_ns(m['tick_ns']), m['ticks'], m['overrun']))
    w('\n')
    w('**The floor.**  `tests/bench/walkfloor` is a test-only module that walks every\n'
      'thread the way a tick does (one RCU read-side section, `for_each_process_thread()`)\n'
      'and reads the fields a tick reads to decide that a thread has not changed (flags,\n'
      'ids, start time, state, `on_rq`, `on_cpu`, switch counts, exit state, both names,\n'
      'cgroup id), nothing else: %s walks %s ms apart, loaded before the cold window and\n'
      'after the warm one with the same threads (median of the two).  Nothing that\n'
      'visits every thread can cost less.\n\n' % (env.get('ticks_warm'), 1000 // int(env.get('tick_hz') or 9)))
    w('| threads | floor per thread | warm per thread | warm / floor | /proc pass / floor | floor walks (per thread) |\n')
    w('|---:|---:|---:|---:|---:|---|\n')
    for r in tick:
        wm = r.get('warm')
        w('| %s | %s | %s | %s | %s | %s |\n'
          % (fmt_int(r['n']), fmt_ns(r.get('floor')), fmt_ns(wm and wm['wall']),
             '%.2f×' % wm['floor_ratio'] if wm and wm.get('floor_ratio') else 'n/a',
             fmt_x(r['proc_wall'] / r['floor']) if r.get('floor') and r.get('proc_wall') else 'n/a',
             ', '.join(fmt_ns(f['per_thread']) for f in r.get('floors', []))))
    w('\n')
    w('Where a tick\'s time goes, per visited thread (module counters `tick_walk_ns_total`:\n'
      'the RCU walk, where unchanged threads are counted; `tick_visit_ns_total`: visits\n'
      'of the other threads; `tick_end_ns_total`: folding the walk\'s counts into the\n'
      'table, lock holders, GAPP, cache sweep), and inside a visit (`thread_ns_full`,\n'
      '`user_ns_total`):\n\n')
    w('| threads | mode | walk | visits | tick end | counted in the walk | full capture | of which user-stack walk |\n')
    w('|---:|---|---:|---:|---:|---:|---:|---:|\n')
    for r in tick:
        for mode in TICK_MODES:
            m = r.get(mode)
            if not m:
                continue
            w('| %s | %s | %s | %s | %s | %s | %s | %s |\n'
              % (fmt_int(r['n']) if mode == 'cold' else '', names[mode], fmt_ns(m.get('walk')),
                 fmt_ns(m.get('visit')), fmt_ns(m.get('end')),
                 '%s of %s' % (fmt_int(m['walk_hits']), fmt_int(m['visited']))
                 if m.get('walk_hits') is not None else 'n/a',
                 fmt_ns(m['full_ns']), fmt_ns(m['user_ns'])))
    w('\n')
    # Full captures happen in the cold windows only (warm: none to break down).
    parts = [(r, mode, r[mode]['parts']) for r in tick for mode in TICK_MODES
             if mode != 'warm' and r.get(mode) and r[mode].get('parts')]
    if parts:
        w('Inside a full capture (module counters of 0.5.2, per capture): entering the\n'
          'thread\'s address space (`full_enter_ns`); pinned, `pi_lock` held with IRQs\n'
          'off (`full_pin_ns`, retries and on-CPU captures included), of which the\n'
          'kernel unwind (`full_kstack_ns`; since 0.5.4 the share of kernel stacks\n'
          'taken from the stack cache is shown next to it, `kstack_cache_hits`) and\n'
          'the user-stack walk (`full_uwalk_ns`);\n'
          'then, unpinned, the user stack mapped to files and interned\n'
          '(`user_ns_total`; since 0.5.5 with the share of user stacks taken from the\n'
          'memo of the process\'s stacks in the tick, `user_stack_memo_hits`); the rest\n'
          '(names, wait object, lock holder, recording).  Since 0.5.5 these counters\n'
          'are estimates from one full capture in 8 (`full_timed`).\n\n')
        w('| threads | mode | full capture | enter mm | pinned | kernel unwind | kernel stacks remembered | user walk | pinned, other | user stack to files | rest |\n')
        w('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n')
        for r, mode, p in parts:
            other = p['full_pin_ns'] - p['full_kstack_ns'] - p['full_uwalk_ns']
            rest = p['full'] - p['full_enter_ns'] - p['full_pin_ns'] - p['user_ns_total']
            kc = '%.0f%%' % (100.0 * p['kc_hit']) if p.get('kc_hit') is not None else '-'
            us = fmt_ns(p['user_ns_total'])
            if p.get('us_memo') is not None:
                us += ' (%.0f%% from the memo)' % (100.0 * p['us_memo'])
            w('| %s | %s | %s | %s | %s (%.0f%%) | %s | %s | %s | %s | %s | %s |\n'
              % (fmt_int(r['n']), names[mode], fmt_ns(p['full']), fmt_ns(p['full_enter_ns']),
                 fmt_ns(p['full_pin_ns']), 100.0 * p['full_pin_ns'] / max(p['full'], 1),
                 fmt_ns(p['full_kstack_ns']), kc, fmt_ns(p['full_uwalk_ns']), fmt_ns(other),
                 us, fmt_ns(rest)))
        w('\n')
        w('The same breakdown before and during the redesign of the tick (0.5.0-0.5.5,\n'
          'partial runs of the `tick` section) is in\n'
          '[BENCHMARKS-tick.md](BENCHMARKS-tick.md).\n\n')
    w('/proc pass details (per thread, all passes, wall): ')
    w('; '.join('%s threads: %s' % (fmt_int(r.get('proc_threads')),
                                   ', '.join(fmt_ns(p['wall_ns'] / p['threads']) for p in r['passes']))
                for r in tick))
    w('.\n\n')

    # ---- a2. model
    w('## a2. Cost model: tick time = a × threads + b × changed threads\n\n')
    if not model:
        w('Not measured.\n\n')
    else:
        w('N threads of `offsample-sleepers -m same -w PCT`: PCT%% of them wake up every\n'
          '100 ms and go back to `nanosleep`, so at %s Hz each has run between any two\n'
          'ticks; the others sleep for good.  Thread cache on, %s ticks per window\n'
          'each; *changed* = full captures per tick (`cache_misses`), which also counts\n'
          'the few other threads of the guest that ran.  a and b are the least-squares\n'
          'fit of tick time over all windows (no constant term).\n\n'
          % (env.get('tick_hz'), env.get('model_ticks', env.get('ticks_warm'))))
        w('**a = %s per thread, b = %s per changed thread** (b / a = %.0f).\n\n'
          % (fmt_ns(model['a']), fmt_ns(model['b']), model['b'] / model['a'] if model['a'] else 0))
        w('| threads | running between ticks | threads per tick | changed per tick | tick (measured) | tick (model) | walk | visits | tick end | sampler CPU per tick |\n')
        w('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n')
        for p in model['points']:
            w('| %s | %d%% | %s | %s | %s | %s | %s | %s | %s | %s |\n'
              % (fmt_int(p['n']), p['pct'], fmt_int(p['threads']), fmt_int(p['changed']),
                 fmt_ns(p['tick_ns']), fmt_ns(p['fit']), fmt_ns(p['walk']), fmt_ns(p['visit']),
                 fmt_ns(p['end']), fmt_ns(p['cpu_ns'])))
        w('\n')

    # ---- b. pipe
    w('## b. `perf bench sched pipe` throughput with each tool running\n\n')
    if not pipe:
        w('Not measured.\n\n')
    else:
        w('%s sleeping threads (`offsample-sleepers -m same`) for the whole section.  Each\n'
          'run is `taskset -c 0 perf bench sched pipe -l %s` (two processes passing a\n'
          'token through a pipe: two context switches per loop, both on CPU 0, which\n'
          'under emulation is far less noisy than letting them bounce between vCPUs;\n'
          '%s).  %s  Runs are interleaved, base between\n'
          'every two tool runs (base, offsample 19 Hz, base, offsample 99 Hz, base,\n'
          'offcputime, base, perf record, ... × %s rounds).  Loss is given two ways: the\n'
          'median of the tool\'s runs against the median of all base runs, and the\n'
          'median of *paired* losses (each tool run against the mean of the two base runs\n'
          'around it, which cancels slow drift).  The A/A line applies the paired method\n'
          'to base runs themselves: that is the noise floor.\n\n'
          % (fmt_int(int(env.get('pipe_threads', 0))), env.get('pipe_loops'),
             'with one vCPU, the tools\' own threads share it' if env.get('cpus') == '1'
             else 'the tools\' own threads are free to run on the other CPU',
             'An offsample run loads the module, lets perf run once untimed and\n'
             'waits until the `.eh_frame` tables of perf\'s files are built (a module\n'
             'loaded for good has them), then times one run.'
             if any(f.endswith('.first') for f in os.listdir(b.raw))
             else '**An offsample run loads the module and times the first run after\n'
             'it**: the module then builds the `.eh_frame` tables of perf and its\n'
             'libraries during that run (make bench since 2026-12-05 runs perf once\n'
             'untimed first).',
             env.get('pipe_rounds')))
        w('| configuration | median ops/s | runs (ops/s) | loss vs base median | paired loss (median) | paired losses |\n')
        w('|---|---:|---|---:|---:|---|\n')
        w('| base (nothing running) | %s | %s | | A/A ±%s (median abs) | %s |\n'
          % (fmt_int(pipe['base_med']), ' '.join(fmt_int(x) for x in pipe['base']),
             fmt_pct(pipe['aa_abs_med']), ' '.join('%+.1f' % x for x in pipe['aa'])))
        labels = {'offsample19': 'offsample, 19 Hz', 'offsample99': 'offsample, 99 Hz',
                  'offcputime': '`offcputime-bpfcc` (bcc %s)' % env.get('bcc', ''),
                  'perfrecord': '`perf record -e sched:sched_switch -a -g`'}
        for conf in ('offsample19', 'offsample99', 'offcputime', 'perfrecord'):
            c = pipe['confs'].get(conf)
            if not c:
                w('| %s | not measured | | | | |\n' % labels[conf])
                continue
            w('| %s | %s | %s | %s | **%s** | %s |\n'
              % (labels[conf], fmt_int(c['med']), ' '.join(fmt_int(x) for x in c['ops']),
                 fmt_pct(c['loss_med'], True), fmt_pct(c['paired_med'], True),
                 ' '.join('%+.1f' % x for x in c['paired'])))
        w('\nBase spread (max − min) / median: %s.  ' % fmt_pct(pipe['base_spread']))
        if pipe['offcputime_startup_ms']:
            w('offcputime needed %s s (median) from start to "Tracing" (BPF compile under\n'
              'emulation); that time is not part of its runs.  '
              % ('%.0f' % (med(pipe['offcputime_startup_ms']) / 1000)))
        w('\n\n**Flat cost.**  The sampler\'s own CPU time per tick (`sampler_cpu_ns`), in an\n'
          'idle window right after loading, during the timed pipe run that follows (its\n'
          'window also holds the start of perf: new processes whose mappings are copied\n'
          'for the first time), and in a steady window taken like the idle one while an\n'
          'untimed pipe load runs before and after it; same rounds (medians).  The\n'
          'verdict is on the steady window:\n\n')
        w('| hz | threads per tick | CPU per tick, idle | during the timed run | ratio | steady load | ratio | tick wall time, idle | timed run | steady |\n')
        w('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n')
        for conf in ('offsample19', 'offsample99'):
            c = pipe['confs'].get(conf)
            f = c and c.get('flat')
            if not f:
                continue
            sc = f.get('steady_cpu')
            w('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n'
              % (conf[9:], fmt_int(f['visited']), fmt_ns(f['idle_cpu']), fmt_ns(f['busy_cpu']),
                 '%.2f' % (f['busy_cpu'] / f['idle_cpu']) if f['idle_cpu'] else 'n/a',
                 fmt_ns(sc) if sc is not None else 'n/a',
                 '%.2f' % (sc / f['idle_cpu']) if f['idle_cpu'] and sc is not None else 'n/a',
                 fmt_ns(f['idle_tick']), fmt_ns(f['busy_tick']),
                 fmt_ns(f['steady_tick']) if f.get('steady_tick') is not None else 'n/a'))
        w('\n')

    # ---- c. read
    w('## c. Reading /proc/offsample/stacks\n\n')
    w('N threads of `offsample-sleepers -m distinct`: thread *i* descends 16 calls whose\n'
      'call sites spell *i* in binary and then blocks in one of 8 ways (nanosleep,\n'
      'futex, pipe read, poll, epoll_wait, select, pause, sigwaitinfo), so every thread\n'
      'is meant to be its own record (distinct user stack) over 8 kernel stacks; the\n'
      'table gives the records actually printed.  Loaded with\n'
      '`hz=19 max_stacks=<enough>`; after two ticks sampling is paused (`enabled=0`) and\n'
      'the file is read %s times with `offsample-benchtool read` (64 KiB reads).  The\n'
      'module\'s read-side symbol cache starts empty (fresh load) and is kept between\n'
      'reads.  *kallsyms lookups* = Δ`sym_lookups` − Δ`sym_hits` (frames formatted\n'
      'minus cache hits); *distinct kernel addresses* are counted in the output\n'
      '(distinct `func+0xoff/0xsize` strings).\n\n' % env.get('reads'))
    w('| records | read | bytes | wall time | CPU time | kernel frames printed | kallsyms lookups | distinct kernel addresses |\n')
    w('|---:|---:|---:|---:|---:|---:|---:|---:|\n')
    for r in read:
        for x in r['reads']:
            w('| %s | %d | %s | %s | %s | %s | %s | %s |\n'
              % (fmt_int(r['records']) if x['i'] == 1 else '', x['i'], fmt_int(x['bytes']),
                 fmt_ns(x['wall']), fmt_ns(x['cpu']), fmt_int(x['frames']),
                 fmt_int(x['kallsyms']), fmt_int(r['addrs']) if x['i'] == 1 else ''))
    w('\n')
    for r in read:
        if r['reads']:
            lat = [x['wall'] for x in r['reads'][1:]] or [r['reads'][0]['wall']]
            w('- %s records (%s distinct kernel stacks, %s distinct user stacks): first read %s, '
              'later reads %s median, %s per record.\n'
              % (fmt_int(r['records']), fmt_int(r['kstacks']), fmt_int(r['ustacks']),
                 fmt_ns(r['reads'][0]['wall']), fmt_ns(med(lat)),
                 fmt_ns(med(lat) / max(r['records'], 1))))
    w('\n')

    # ---- d. memory
    w('## d. Kernel memory used by the module\n\n')
    w('`memory_bytes` from /proc/offsample/stats (what the module allocated: tables,\n'
      'thread cache, snapshot array, interned user stacks and paths, symbol cache),\n'
      'at the end of each measurement window, and the change of /proc/meminfo `Slab`\n'
      'and `VmallocUsed` between just before `insmod` and that moment (includes\n'
      'unrelated kernel activity such as proc inodes; indicative only).\n\n')
    w('| load | memory_bytes | Slab Δ | VmallocUsed Δ |\n|---|---:|---:|---:|\n')
    for r in tick:
        for mode in TICK_MODES:
            m = r.get(mode)
            if m:
                w('| %s sleeping threads, %s | %s | %s | %s |\n'
                  % (fmt_int(r['n']), names[mode], fmt_bytes(m['memory']),
                     fmt_bytes(m.get('slab_kb', 0) * 1024), fmt_bytes(m.get('vmalloc_kb', 0) * 1024)))
    for r in read:
        if r['reads']:
            last = r['reads'][-1]
            w('| %s unique stacks, after %d reads | %s | %s | %s |\n'
              % (fmt_int(r['records']), len(r['reads']), fmt_bytes(last['memory']),
                 fmt_bytes(r.get('slab_kb', 0) * 1024), fmt_bytes(r.get('vmalloc_kb', 0) * 1024)))
    w('\n')

    # ---- e. .eh_frame tables
    if cfi:
        w('## e. User stacks without frame pointers (.eh_frame tables)\n\n')
        total = sum(sz for _, sz in cfi['files'])
        w('perl, python3, bash (waiting on a FIFO) and the %s-thread sleeper program\n'
          'run while the module is loaded; together they map %d files executable\n'
          '(%s: %s).  Each file\'s `.eh_frame` is compiled once into a table, in a\n'
          'background work item, the first time a process mapping it is sampled;\n'
          'the cost is paid once per file, not per sample.  Every process in the\n'
          'guest is sampled, so tables are built for the files of the others too\n'
          '(init, udev, shells): the counts below are all of them, until no build\n'
          'was pending.\n\n'
          % (fmt_int(cfi['threads']), len(cfi['files']), fmt_bytes(total),
             ', '.join(os.path.basename(f) for f, _ in cfi['files'])))
        w('| tables built | failed | too big | build time, total | per table | table memory |\n'
          '|---:|---:|---:|---:|---:|---:|\n')
        w('| %d | %d | %d | %s | %s | %s |\n\n'
          % (cfi['built'], cfi['failed'], cfi['too_big'],
             fmt_ns(cfi['build_ns']), fmt_ns(cfi['build_ns'] / max(cfi['built'], 1)),
             fmt_bytes(cfi['bytes'])))
        a = cfi.get('alone')
        if a:
            w('One program alone: `sleep` in a cgroup of its own, the module loaded with\n'
              '`cgroup=` naming it, so that only its files are compiled.  Table sizes per\n'
              'file are those of the same compiler (module/ucfi.c) built for user space\n'
              '(tests/ucfi/cfi-dump.c) on the same files; the build time is the module\'s,\n'
              'for the %d tables together (%d failed).\n\n' % (a['built'], a['failed']))
            w('| file | size | `.eh_frame` | table |\n|---|---:|---:|---:|\n')
            for f, sz, eh, tb in a['files']:
                w('| %s | %s | %s | %s |\n'
                  % (os.path.basename(f), fmt_bytes(sz), fmt_bytes(eh), fmt_bytes(tb)))
            w('| **module: %d tables** | | | **%s**, built in **%s** |\n\n'
              % (a['built'], fmt_bytes(a['bytes']), fmt_ns(a['build_ns'])))
        w('Cold ticks (`thread_cache=0`: every thread unwound at every tick) over the\n'
          'same processes, with the tables (default) and with frame pointers only\n'
          '(`cfi_cache_mb=0`):\n\n')
        w('| user stacks | threads visited | wall / thread | CPU / thread | user frames / walk | frames found with a table |\n'
          '|---|---:|---:|---:|---:|---:|\n')
        for mode, title in (('on', '.eh_frame tables'), ('off', 'frame pointers only')):
            m = cfi.get(mode)
            if m:
                w('| %s | %s | %s | %s | %.1f | %s |\n'
                  % (title, fmt_int(m['visited']), fmt_ns(m['wall']), fmt_ns(m['cpu']),
                     m['frames_per_walk'], fmt_int(m['cfi_frames'])))
        if cfi.get('on') and cfi.get('off'):
            w('\nWith the tables a cold capture costs %s the frame-pointer walk per thread\n'
              'and finds %.1f× the user frames.\n'
              % (fmt_x(cfi['on']['wall'] / max(cfi['off']['wall'], 1)),
                 cfi['on']['frames_per_walk'] / max(cfi['off']['frames_per_walk'], 0.01)))
        w('\n')

    # ---- f. blocker attribution
    if blk:
        w('## f. Naming lock holders (blocker attribution)\n\n')
        w('%s threads wait in `pthread_mutex_lock()` for one mutex the main thread\n'
          'holds (`offsample-sleepers -m lock`); the same process is sampled with\n'
          '`blockers=1` (each waiter\'s lock words read and its holder looked up at\n'
          'every tick, cache hits included) and `blockers=0`, warm (thread cache on:\n'
          'the waiters are unchanged) and cold (`thread_cache=0`).  Time per tick\n'
          'from the module\'s counters; `blocker_ns_total` is the time inside the\n'
          'lookups alone.\n\n' % fmt_int(blk['threads']))
        w('| ticks | blockers | threads visited / tick | tick wall | sampler CPU / tick | holders looked up / found | time in lookups, per lock-waiting thread |\n'
          '|---|---|---:|---:|---:|---:|---:|\n')
        for temp in ('warm', 'cold'):
            for mode in ('on', 'off'):
                m = blk.get(temp + '-' + mode)
                if not m:
                    continue
                per = m['blk_ns'] / m['looked'] if m['looked'] else 0
                w('| %s | %s | %s | %s | %s | %s / %s | %s |\n'
                  % (temp, '1' if mode == 'on' else '0',
                     fmt_int(m['visited'] / m['ticks']), fmt_ns(m['tick']), fmt_ns(m['cpu_tick']),
                     fmt_int(m['looked']), fmt_int(m['found']),
                     fmt_ns(per) if m['looked'] else '-'))
        for temp in ('warm', 'cold'):
            on, off = blk.get(temp + '-on'), blk.get(temp + '-off')
            if on and off and blk['threads']:
                w('\n%s: the tick costs %s with `blockers=1`; the difference per\n'
                  'lock-waiting thread is %s.'
                  % (temp.capitalize(), fmt_x(on['tick'] / max(off['tick'], 1)),
                     fmt_ns((on['tick'] - off['tick']) / blk['threads'])))
        w('\n\n')
    if wf:
        w('### Waits in the kernel\n\n'
          '`build/offsample-waitfor` (tests/workload/offsample-waitfor.c): threads\n'
          'waiting for a child, for `mmap_lock`, for a file\'s kernel locks, for a\n'
          'UNIX socket\'s peer, for file locks, for the other end of a pipe, a FIFO\n'
          'or a local TCP or UDP connection; warm ticks with `blockers=1` and\n'
          '`blockers=0`.\n\n')
        w('| blockers | threads visited / tick | tick wall | sampler CPU / tick | waits looked up / found, per tick | time in lookups, per wait |\n'
          '|---|---:|---:|---:|---:|---:|\n')
        for mode in ('on', 'off'):
            m = wf.get(mode)
            if not m:
                continue
            per = m['blk_ns'] / m['looked'] if m['looked'] else 0
            w('| %s | %s | %s | %s | %s / %s | %s |\n'
              % ('1' if mode == 'on' else '0', fmt_int(m['visited'] / m['ticks']),
                 fmt_ns(m['tick']), fmt_ns(m['cpu_tick']),
                 '%.1f' % (m['looked'] / m['ticks']), '%.1f' % (m['found'] / m['ticks']),
                 fmt_ns(per) if m['looked'] else '-'))
        on, off = wf.get('on'), wf.get('off')
        if on and off and on['looked']:
            w('\nThe tick costs %s with `blockers=1`; the difference per wait looked\n'
              'up is %s.\n'
              % (fmt_x(on['tick'] / max(off['tick'], 1)),
                 fmt_ns((on['tick'] - off['tick']) / (on['looked'] / on['ticks']))))
        w('\n')

    # ---- g. on-CPU samples
    if onc:
        w('## g. Sampling running threads (oncpu)\n\n')
        w('One spinning `bash` loop per CPU; warm ticks with `oncpu=1` (each running\n'
          'thread captured on its CPU: one synchronous IPI, the kernel stack unwound\n'
          'from the interrupted context, the user stack from its registers) and\n'
          '`oncpu=0` (running threads counted, not sampled).  `oncpu_ns_total` is the\n'
          'time from sending the IPI to its return, capture included.\n\n')
        w('| oncpu | threads visited / tick | tick wall | sampler CPU / tick | captured / tick | missed | time per capture |\n'
          '|---|---:|---:|---:|---:|---:|---:|\n')
        for mode in ('on', 'off'):
            m = onc.get(mode)
            if not m:
                continue
            w('| %s | %s | %s | %s | %s | %s | %s |\n'
              % ('1' if mode == 'on' else '0', fmt_int(m['visited'] / m['ticks']),
                 fmt_ns(m['tick']), fmt_ns(m['cpu_tick']),
                 '%.2f' % (m['sampled'] / m['ticks']), fmt_int(m['missed']),
                 fmt_ns(m['oncpu_ns'] / m['sampled']) if m['sampled'] else '-'))
        on, off = onc.get('on'), onc.get('off')
        if on and off and on['sampled']:
            per = on['sampled'] / on['ticks']
            if on['tick'] > off['tick']:
                w('\nPer running thread (= per busy CPU) and tick, on-CPU sampling adds %s\n'
                  'to the tick (%s with it on).\n'
                  % (fmt_ns((on['tick'] - off['tick']) / per),
                     fmt_x(on['tick'] / max(off['tick'], 1))))
            else:
                # The two windows differ by more than the captures cost.
                w('\nThe tick was not longer with on-CPU sampling (%s on, %s off): the\n'
                  'difference between the two windows is noise larger than its cost.\n'
                  'The IPI round trips themselves (`oncpu_ns_total`) took %s per tick\n'
                  '(%.2f captures of %s).\n'
                  % (fmt_ns(on['tick']), fmt_ns(off['tick']),
                     fmt_ns(on['oncpu_ns'] / on['ticks']), per,
                     fmt_ns(on['oncpu_ns'] / on['sampled'])))
        p = onc.get('pipe')
        if p and p.get('base_med'):
            w('\n`perf bench sched pipe` (both ends on CPU 0) alone and with the module at\n'
              '19 Hz, interleaved; median ops/s and the median loss against the base runs\n'
              'around each run:\n\n'
              '| run | median ops/s | median loss (paired) |\n|---|---:|---:|\n')
            w('| alone | %s | - |\n' % fmt_int(p['base_med']))
            for conf, lbl in (('oncpu1', 'offsample 19 Hz, oncpu=1'), ('oncpu0', 'offsample 19 Hz, oncpu=0')):
                c = p['confs'].get(conf)
                if c:
                    w('| %s | %s | %s |\n' % (lbl, fmt_int(c['med']), fmt_pct(c['paired_med'])))
            if p.get('aa_abs_med') is not None:
                w('\nA/A noise (base against the base runs around it): median |%s|.\n'
                  % fmt_pct(p['aa_abs_med']))
        w('\n')

    # ---- h. Python frames
    if py:
        w('## h. Python frames\n\n')
        w('%s threads of Debian\'s python3 (%s), each sleeping %d Python calls deep\n'
          '(`tests/bench/pysleepers.py`), alone in a cgroup the module samples alone\n'
          '(`cgroup=`).  A capture is one thread unwound in full (`thread_cache=0`);\n'
          'its time from the module\'s own counters (`full_ns_total`, of which pinned\n'
          '`full_pin_ns` and the user walk `full_uwalk_ns`; after the pin, mapping the\n'
          'stack to files and reading and interning the Python names, `user_ns_total`;\n'
          'all estimated from one capture in 8).  `python_stacks=0` is the same native\n'
          'walk of the same threads without the frame chain; the last row is the same\n'
          'number of C threads (`offsample-sleepers -m same`) as a native reference.\n\n'
          % (fmt_int(py['threads']), py['version'] or '?', py['depth']))
        w('| workload | ticks | python_stacks | captures / tick | time / capture | pinned | user walk | mapping and names | native frames / walk | Python frames / capture | tick wall | sampler CPU / tick |\n'
          '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n')
        for label, who, temp, ps in (('cold-on', 'Python', 'cold', '1'),
                                     ('cold-off', 'Python', 'cold', '0'),
                                     ('cold-native', 'C', 'cold', '-'),
                                     ('warm-on', 'Python', 'warm', '1'),
                                     ('warm-off', 'Python', 'warm', '0')):
            m = py.get(label)
            if not m:
                continue
            cap = m['captures'] / m['ticks']
            w('| %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %s | %s |\n'
              % (who, temp, ps, fmt_int(cap),
                 fmt_ns(m['full']) if m['captures'] else '-',
                 fmt_ns(m['pin']) if m['captures'] else '-',
                 fmt_ns(m['uwalk']) if m['captures'] else '-',
                 fmt_ns(m['umap']) if m['captures'] else '-',
                 m['frames'], m['py_frames'], fmt_ns(m['tick']), fmt_ns(m['cpu_tick'])))
        on, off, nat = py.get('cold-on'), py.get('cold-off'), py.get('cold-native')
        if on and off and off['full']:
            w('\nA cold capture of a Python thread costs %s with its Python frames\n'
              'against %s without them (%s; %s more per capture, %s per Python frame)'
              % (fmt_ns(on['full']), fmt_ns(off['full']), fmt_x(on['full'] / off['full']),
                 fmt_ns(on['full'] - off['full']),
                 fmt_ns((on['full'] - off['full']) / on['py_frames']) if on['py_frames'] else '-'))
            if nat and nat['full']:
                w(', and %s a C thread\'s capture (%s)' % (fmt_x(on['full'] / nat['full']),
                                                          fmt_ns(nat['full'])))
            w('.  ')
            if on['py_total']:
                w('Of the Python frames, %s were named from the window\'s memo (the\n'
                  'threads wait at the same place: each code object is read once a tick).  '
                  % fmt_pct(100.0 * on['memo_hits'] / on['py_total']))
            w('Errors reading the frame chains in that window: %d.\n' % on['py_errors'])
        won, woff = py.get('warm-on'), py.get('warm-off')
        if won and woff:
            w('Warm ticks (the threads sleep: counted from the thread cache, no capture)\n'
              'cost %s per tick with Python frames and %s without.\n'
              % (fmt_ns(won['tick']), fmt_ns(woff['tick'])))
        if py.get('stack'):
            w('\nOne thread\'s user stack as the module prints it (innermost first):\n\n```\n%s\n```\n'
              % py['stack'][:1500])
        non, noff = py.get('names-on'), py.get('names-off')
        if non:
            w('\n**Memory of names.** With `--distinct` every thread runs functions of its\n'
              'own: %s x %d names.  Names interned: %s, taking %s (`py_names_bytes`,\n'
              '%s a name, as allocated); `memory_bytes` %s with Python frames, %s\n'
              'without (the stacks that hold them included).  Names not stored: %d.\n'
              'Each name is charged at most %s against `max_stacks` (qualified name\n'
              'of 256 bytes and file of 512, as allocated), so names can never take\n'
              'more than `max_stacks` of those.\n'
              % (fmt_int(py['threads']), py['depth'], fmt_int(non['names']),
                 fmt_bytes(non['names_bytes'] or 0),
                 fmt_bytes((non['names_bytes'] or 0) / max(non['names'], 1)),
                 fmt_bytes(non['memory'] or 0),
                 fmt_bytes(noff['memory'] or 0) if noff else '-', non['dropped'],
                 fmt_bytes(1024)))
            if non['full'] and noff and noff['full']:
                w('Cold captures of those threads (no frame shared, the memo finds none\n'
                  'after the first thread\'s bootstrap frames): %s with Python frames, %s\n'
                  'without.\n' % (fmt_ns(non['full']), fmt_ns(noff['full'])))
        w('\n')

    # ---- profiles
    w('## Where the time goes\n\n')
    w('perf (`cpu-clock`, call graphs) on the sampler kernel thread alone, at the\n'
      'largest size, during the cold and warm windows; and on one /proc pass.\n'
      'Self time per function, then time including callees (top lines).  A\n'
      '`cpu-clock` sample cannot land while interrupts are off, so the time a\n'
      'full capture spends with the thread pinned (`p->pi_lock` held, IRQs off:\n'
      'the kernel-stack unwind) is charged to `_raw_spin_unlock_irqrestore`.\n'
      'Under emulation the first touch of a page costs a software TLB refill,\n'
      'charged to whichever function touches it first; that is probably why\n'
      '`offs_tc_lookup` (the first to read a thread\'s `pid` and `start_time`, and\n'
      'its cache entry) leads the warm profile (not verified here).\n\n')
    last = tick[-1]['n'] if tick else None
    for label, title in (('tick-%s-cold' % last, 'sampler, cold (thread_cache=0)'),
                         ('tick-%s-warm' % last, 'sampler, warm'),
                         ('tick-%s-procpass' % last, '/proc/*/task/*/stack pass')):
        selfp = b.profile(label, 'self', 16)
        child = b.profile(label, 'children', 16)
        if not selfp and not child:
            continue
        w('### %s, %s threads\n\n' % (title, fmt_int(last)))
        w('```\nself:\n%s\n\nincluding callees:\n%s\n```\n\n' % ('\n'.join(selfp), '\n'.join(child)))

    # ---- commands
    w('## Exact commands\n\n')
    w('On the host: `%s`, which runs `tests/lib/deps.sh build vm test bench`,\n'
      '`make KVER=%s module`, `make workload bench-helpers`, then\n'
      % (host.get('make_command', 'make bench'), env.get('kernel')))
    if guest:
        w('`tests/vm/run-guest.sh --memory 4G --cpus 2 %s build/bench/run -- tests/bench/bench-inner.sh build/bench/run`\n'
          '(virtme-ng: `vng --run /boot/vmlinuz-%s --disable-kvm --cpus 2 --memory 4G ...`)\n'
          % (env.get('kernel'), env.get('kernel')))
    else:
        w('`tests/bench/bench-inner.sh build/bench/run` on the host\n')
    w('and `tests/bench/report.py`.  Inside, as root (sizes: %s threads; pipe: %s threads, %s rounds):\n\n'
      % (env.get('sizes'), env.get('pipe_threads'), env.get('pipe_rounds')))
    w('```\n')
    w('sysctl -w kernel.threads-max=200000 kernel.pid_max=4194304 vm.max_map_count=1048576\n')
    for row in b.commands:
        if len(row) >= 2:
            w('%-8s %s\n' % (row[0] + ':', rel(row[1])))
    w('```\n\n')

    # ---- caveats
    w('## Reading these numbers\n\n')
    procs = [r.get('proc_wall') for r in tick if r.get('proc_wall')]
    proc_range = ('%s to %s' % (fmt_ns(min(procs)), fmt_ns(max(procs)))) if procs else 'n/a'
    if ICOUNT:
        w('- Instruction counts: one vCPU under QEMU `-icount shift=0`; the guest\n'
          '  clocks (clocksource `%s`, schedstat, ktime) advance 1 ns per instruction\n'
          '  executed while the vCPU runs (idle, they follow the host\'s clock).\n'
          '  Every figure counts instructions: a memory access costs one whatever the\n'
          '  caches would do, so these say how much code runs (the /proc pass: %s\n'
          '  per thread), not how long it takes on hardware.  Throughput figures (the\n'
          '  pipe section, a busy vCPU) are operations per 10^9 guest instructions.\n'
          % (env.get('clocksource'), proc_range))
    else:
        w('- Software emulation: the guest\'s clocksource is `%s`, every guest memory\n'
          '  access goes through QEMU\'s software TLB, and a guest page-table walk is C\n'
          '  code.  The /proc pass cost %s per thread here; issue 6 quotes 21-43 µs on\n'
          '  real hardware, so that syscall-and-format work is slowed only about 2×.\n'
          '  Code that touches many distinct pages per unit of work (a sampler visiting\n'
          '  thousands of task_structs, kernel stacks and user stacks) is probably slowed\n'
          '  much more; how much was not measured here (no bare-metal machine that can\n'
          '  load modules).  The ratios above are the ratios *of this emulated machine*.\n'
          '  (Issue 6\'s anchor of ~2 ms per thread for the /proc pass under emulation\n'
          '  was measured some other way, not recorded here; this C loop of\n'
          '  open/read/close gives the figures above.)\n'
          % (env.get('clocksource'), proc_range))
    noise = pipe.get('aa_abs_med') if pipe else None
    w('- `perf bench sched pipe` is noisy under emulation: in this run base runs\n'
      '  differed from their neighbours by %s (median of the A/A paired losses;\n'
      '  spread of all base runs %s).  A loss smaller than that cannot be read\n'
      '  from the throughput table; the flat-cost table (sampler CPU per tick idle\n'
      '  vs under a switch-heavy load) is the evidence that offsample\'s cost does\n'
      '  not depend on the context-switch rate.\n'
      % (fmt_pct(noise), fmt_pct(pipe.get('base_spread') if pipe else None)))
    q = [int(r[1]) for r in b.hostload if len(r) > 2 and r[1].isdigit()]
    others = (max(q) - (1 if guest else 0)) if q else 0
    if others > 0:
        w('- Up to %d other QEMU guest(s) ran on the same host during the run (see\n'
          '  Setup); their load shifts absolute times and adds noise to every ratio.\n'
          % others)
    else:
        w('- Nothing else ran a QEMU guest on the host during the run (sampled every\n'
          '  20 s, see Setup); the host load average is in the Setup table.\n')
    w('- Raw results (module stats before/after every window, /proc pass\n'
      '  timings, pipe runs, perf profiles, meminfo): `%s/` on the machine\n'
      '  that ran `%s`; not committed.\n' % (rawdir, host.get('make_command', 'make bench')))


if __name__ == '__main__':
    main()
