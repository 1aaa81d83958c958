# Scratch (tail30): flat_bounces.py's per-bounce law at the ceiling (z = 2048, normal -z):
# contact tick = first tick whose centre is above 2048 - R; d = R - (2048 - z_c);
# e = -vz_{c+1} / vz_c (pre-gravity); push = -(z_{c+1} - z_c) + vz_{c+1} dt (along -z).
import glob, math, os, sys, numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import flat_bounces as fb
CEIL = 2048.0
R = float(os.environ.get('R', '93.1504')); DRAG = -0.030533
BOX = (3000.0, 4000.0)
out = []
for path in sorted(glob.glob(os.environ['RLFIT_DATA'] + '/ball_trajectories/episode_*.csv')):
    x, v, crow = fb.load(path)
    jump = fb.jumps(x, v, crow, DRAG)
    origin = fb.clock_origin(jump, crow)
    if origin is None: continue
    tau = (origin + np.concatenate([[0], np.cumsum(crow)])) * fb.TICKS_PER_ROW
    jn = np.linalg.norm(jump, axis=1); n = len(x); k = 0
    while k < n - 1:
        if not (jn[k] > fb.CONTACT_UU_S and x[k, 2] > 1800.0 and jump[k, 2] < 0.0):
            k += 1; continue
        k0 = k1 = k
        while k1 + 1 < n - 1 and jn[k1 + 1] > fb.FREE_UU_S: k1 += 1
        k = k1 + 1
        F = fb.FREE_ROWS
        if k1 - k0 > 2 or k0 - F < 0 or k1 + 1 + F >= n: continue
        span = range(k0 - F, k1 + 1 + F)
        free = list(range(k0 - F, k0)) + list(range(k1 + 1, k1 + 1 + F))
        if any(jn[i] >= fb.FREE_UU_S for i in free) or any(crow[i] != 1 for i in span): continue
        if any(abs(x[r, 0]) >= BOX[0] or abs(x[r, 1]) >= BOX[1] for r in (k0, k1 + 1)): continue
        jin, jout = math.floor(tau[k0]), math.floor(tau[k1 + 1])
        s_in, r_in = fb.fit_arc(range(k0 - F + 1, k0 + 1), tau, x[:, 2], v[:, 2], jin, DRAG)
        s_out, r_out = fb.fit_arc(range(k1 + 1, k1 + 1 + F), tau, x[:, 2], v[:, 2], jout, DRAG)
        if max(r_in, r_out) > fb.FIT_TOL: continue
        z, vz = s_in; c = jin
        while c < jout and CEIL - z >= R:
            z, vz = fb.free_step(z, vz, DRAG); c += 1
        if c >= jout: continue
        z_out, vz_out = fb.state_at(s_out[0], s_out[1], jout, c + 1, DRAG)
        out.append((os.path.basename(path), R - (CEIL - z), vz, -vz_out / vz, -(z_out - z) + vz_out * fb.TICK_S))
a = np.array([o[1:] for o in out])
print(len(out), 'ceiling bounces')
if len(out):
    d, vin, e, push = a.T
    res = push - 0.8 * np.maximum(0, d - 1.9)
    print('vz_in %.0f..%.0f; d median %.2f (max %.2f), d > 1.9: %d' % (vin.min(), vin.max(), np.median(d), d.max(), (d > 1.9).sum()))
    print('e median %.4f p10-p90 %.4f-%.4f' % (np.median(e), np.percentile(e, 10), np.percentile(e, 90)))
    print('|push - 0.8 max(0, d - 1.9)| median %.3f p90 %.3f max %.3f' % (np.median(abs(res)), np.percentile(abs(res), 90), abs(res).max()))
    print('|push - 0.021 d| (old) median %.3f p90 %.3f' % (np.median(abs(push - 0.021 * d)), np.percentile(abs(push - 0.021 * d), 90)))
    for o in sorted(out, key=lambda o: -abs(o[4] - 0.8 * max(0, o[1] - 1.9)))[:5]: print(o)
