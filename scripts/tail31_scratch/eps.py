# tail31 scratch: the episodes above 50 uu at the last row (crossval folds 4, /tmp/rampt30/cv_eq):
# departure row, the contact there, its situation, restarts before/after it, uncovered rows.
import sys, os, json, numpy as np
sys.path.insert(0, '/work/wt/tail31/scripts')
import rlfit, mesh_patches, ball_classes as bc
root = '/work/shared/datasets/lobot'
CV = sys.argv[1] if len(sys.argv) > 1 else '/tmp/rampt30/cv_eq'
THR = 50.0
mesh = mesh_patches.Mesh(mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat')))
arena = rlfit.Arena(root)
m = rlfit.Model('ball')
names = list(m.coefficients['names']) if isinstance(m.coefficients, dict) else None
R = float(m.coefficients['values'][names.index('contact_radius')])
TICK = rlfit.TICK_S

def load(ep):
    return np.genfromtxt(os.path.join(CV, ep), delimiter=',', names=True, dtype=None, encoding=None)

def patch(p):
    f = mesh.nearest(p); best, lab = p[2], 'floor'
    if f is not None and f[0] < best: best, lab = f[0], mesh.labels[f[2]]
    return lab, best

out = []
summ = json.load(open(os.path.join(CV, 'replay_summary.json')))
for fn in sorted(f for f in os.listdir(CV) if f.startswith('episode_')):
    a = load(fn)
    v = np.stack([a['vx'], a['vy'], a['vz']], 1); rv = np.stack([a['rec_vx'], a['rec_vy'], a['rec_vz']], 1)
    x = np.stack([a['x'], a['y'], a['z']], 1); rx = np.stack([a['rec_x'], a['rec_y'], a['rec_z']], 1)
    dx = np.linalg.norm(x - rx, axis=1); dv = np.linalg.norm(v - rv, axis=1)
    last = dx[-1]
    if last <= THR: continue
    ep = int(fn[8:14])
    regimes = sorted(set(a['regime'])) ; ncov = int(np.sum(a['covered']))
    e = rlfit.read_recording(os.path.join(root, 'ball_trajectories', fn))[0]
    S = e['states']; t = e['t_s']; ex = e['x']; evv = e['v']; sdt = e['step_dt_s']
    src = a['source_row']  # 1-based data line? map csv row i -> recording row
    big = dv > 20
    ks = [i for i in range(len(big) - 3) if big[i:i + 4].all()]
    sm = dv > 5
    ks5 = [i for i in range(len(sm) - 3) if sm[i:i + 4].all()]
    small = None
    if ks5:
        k5 = ks5[0]
        ev5 = [ev for ev in bc.contacts(mesh, np.stack([a['rec_x'], a['rec_y'], a['rec_z']], 1), rv, np.diff(a['t_s']))[0] if ev[0] <= k5 + 1]
        small = (int(k5), ev5[-1][2] if ev5 else 'none', int(ev5[-1][0]) if ev5 else None, round(float(dx[k5]), 2))
    rec = dict(small=small, ep=ep, last=float(last), n=len(a), ncov=ncov, regimes=regimes,
               src0=int(src[0]), srcN=int(src[-1]), nrec=len(S))
    # glitches: step dt, duplicated rows, free residual away from the mesh (car touch)
    r = bc.free_residual(evv, sdt)
    far = np.array([patch(p)[1] for p in ex])
    jumps = [int(i) for i in np.where(np.nan_to_num(r) > 50)[0] if far[i] > R + 40 and far[i + 1] > R + 40]
    rec['car_touch_rows'] = jumps
    dts = np.diff(t)
    rec['dt_min'] = float(dts.min()); rec['dt_max'] = float(dts.max())
    rec['dup_rows'] = int(np.sum(np.all(np.diff(S[:, :6], axis=0) == 0, axis=1)))
    events, rolling = bc.contacts(mesh, ex, evv, sdt)
    if ks:
        k = ks[0]
        # contact: last event starting at or before k+1
        cand = [ev for ev in events if ev[0] <= k + 1]
        ev = cand[-1] if cand else None
        rec.update(dep_row=int(k), dep_t=float(t[k]), dx_dep=float(dx[k]),
                   dv_before=float(dv[max(0, k - 10):k].max()) if k > 0 else 0.0,
                   dx_before=float(dx[max(0, k - 1)]))
        if ev:
            ck, cj, cp = ev
            rec.update(c_row=int(ck), c_end=int(cj), c_patch=cp, c_lag=int(k - ck))
            # incoming state and model contact tick from a restart 1 row before
            # free flight from the recorded row ck (before the contact) tick by tick to the
            # first tick within R of the mesh: the facets there, the incoming normal speed
            p = S[ck, 0:3].copy(); vv = S[ck, 3:6].copy(); hitd = None
            for it in range(12):
                col = arena.collide(p, R)
                if col['hit']:
                    hitd = col; break
                vv = vv * np.exp(-0.0304592 * TICK); vv[2] -= 650.0 * TICK; p = p + vv * TICK
            if hitd is not None:
                nrm = np.array(hitd['normal'])
                rec.update(n_tris=int(hitd['triangles']), vn=float(vv @ nrm), speed=float(np.linalg.norm(vv)),
                           w=float(np.linalg.norm(S[ck, 6:9])), depth=float(hitd['depth']),
                           nrm=[round(float(q), 3) for q in nrm], c_patch2=patch(p)[0])
            # the error already there: restart 3 rows before the contact, compare 61 rows on
            for tag, s in (('pre3', max(0, ck - 3)), ('post', cj + 2)):
                if s >= len(S) - 1: continue
                H = min(61, len(S) - 1 - s)
                tr = m.predict(S[s], (H + 0.5) * sdt[s], dt_s=sdt[s])
                d1 = np.linalg.norm(tr[H, 1:4] - S[s + H, 0:3])
                rec[tag + '_1s'] = float(d1)
                rec[tag + '_ol1s'] = float(dx[s + H] - dx[s]) if s + H < len(dx) else None
                Hl = len(S) - 1 - s
                tr = m.predict(S[s], (Hl + 0.5) * sdt[s], dt_s=sdt[s])
                rec[tag + '_last'] = float(np.linalg.norm(tr[Hl, 1:4] - S[-1, 0:3]))
                dvv = np.linalg.norm(tr[:Hl + 1, 4:7] - S[s:s + Hl + 1, 3:6], axis=1)
                bb = dvv > 20
                kk = [i for i in range(len(bb) - 3) if bb[i:i + 4].all()]
                rec[tag + '_dep'] = int(s + kk[0]) if kk else None
        # contacts before the departure with open-loop |dv| > 5 after them (earlier small errors)
        rec['prev_events'] = [(int(a0), int(b0), p0) for a0, b0, p0 in events if b0 < (ev[0] if ev else k)][-3:]
    out.append(rec)
    print(json.dumps(rec), flush=True)
