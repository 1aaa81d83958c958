# goal31 scratch: candidate normals at the departing tick against the fitted one.
import json, math, numpy as np
import goal
m = goal.m
def ang(a, b): a = a / np.linalg.norm(a); b = b / np.linalg.norm(b); return math.degrees(math.acos(max(-1, min(1, a @ b))))
for arg in ['65@123', '197@412', '114@179', '197@152', '338@314']:
    ep, c = map(int, arg.split('@'))
    r = goal.analyse(ep, c)
    e = goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (goal.ROOT, ep))[0]
    S = e['states']; s0 = c - 3; a = r['a']
    st = S[s0].copy(); st[0:3] -= st[3:6] * a * goal.TICK; st[2] -= 0.5 * goal.G * (a * goal.TICK) ** 2; st[5] -= goal.G * a * goal.TICK
    T = m.step_ticks(st, 20); k = r['tick']; x = T[k, :3]
    bc = m.ball_contact(x); nfit = np.array(r['n_fit'])
    raw = sum(cc['normal'] for cc in bc['contacts']); adj = sum(cc['adjusted'] for cc in bc['contacts'])
    faces = []
    for cc in bc['contacts']:
        _, nf = goal.kind(cc, x); faces.append(nf)
    # all triangles within the radius, brute force on the file triangles (every touching one)
    allf = []; allraw = []
    for i, t in enumerate(goal.tris):
        # closest point on triangle
        import itertools
        q = closest = None
        A, B, C_ = t
        ab, ac, ap = B - A, C_ - A, x - A
        # Ericson 5.1.5
        d1, d2 = ab @ ap, ac @ ap
        if np.linalg.norm(x - A) > 400: continue
        def cp():
            if d1 <= 0 and d2 <= 0: return A
            bp = x - B; d3, d4 = ab @ bp, ac @ bp
            if d3 >= 0 and d4 <= d3: return B
            vc = d1 * d4 - d3 * d2
            if vc <= 0 and d1 >= 0 and d3 <= 0: return A + d1 / (d1 - d3) * ab
            cpp = x - C_; d5, d6 = ab @ cpp, ac @ cpp
            if d6 >= 0 and d5 <= d6: return C_
            vb = d5 * d2 - d1 * d6
            if vb <= 0 and d2 >= 0 and d6 <= 0: return A + d2 / (d2 - d6) * ac
            va = d3 * d6 - d5 * d4
            if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0: return B + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (C_ - B)
            den = 1 / (va + vb + vc); return A + ab * vb * den + ac * vc * den
        q = cp(); d = np.linalg.norm(x - q)
        if d <= bc['radius']:
            nf = np.cross(ab, ac); nf /= np.linalg.norm(nf)
            if nf @ (x - q) < 0: nf = -nf
            allf.append(nf); allraw.append((x - q) / d)
    print(arg, 'collide', bc['triangles'], 'manifold', len(bc['contacts']), 'touching', len(allf),
          '| model %.2f raw-avg %.2f face-avg(manifold) %.2f face-avg(all) %.2f raw-avg(all) %.2f deepest-raw %.2f' % (
              ang(np.array(r['n_model']), nfit), ang(raw, nfit), ang(sum(faces), nfit), ang(sum(allf), nfit), ang(sum(allraw), nfit), ang(bc['contacts'][0]['normal'], nfit)),
          '| faces', [list(np.round(f, 3)) for f in allf], 'fit', list(nfit), flush=True)
