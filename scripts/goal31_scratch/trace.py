# goal31 scratch: tick-by-tick trace of the model from row c-3 at the replay's phase: contacts,
# kinds, normal; and the recorded rows against the blend.
import sys, math, numpy as np
import goal, phase
m = goal.m; TPR = phase.TPR; TICK = goal.TICK; G = goal.G
ep, c, nrows = map(int, sys.argv[1:4])
e = goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (goal.ROOT, ep))[0]
S = e['states']; dt = e['step_dt_s']; s0 = c - 3
cr = [int(round(d * 60.96)) for d in dt]
o, cnt = phase.origin(e)
t0 = (o + sum(cr[:s0])) * TPR; a = t0 - math.floor(t0)
if len(sys.argv) > 4: a = float(sys.argv[4])
rows = list(range(s0, min(c + nrows, len(S))))
offs = [sum(cr[s0:r]) * TPR for r in rows]
nt = int(offs[-1]) + 4
st = S[s0].copy(); st[0:3] -= st[3:6] * a * TICK; st[2] -= 0.5 * G * (a * TICK) ** 2; st[5] -= G * a * TICK
T = m.step_ticks(st, nt)
P = goal.rows_from(T, a, offs)
print('a %.3f' % a)
for i, r in enumerate(rows):
    print('row %d  rec x %s v %s | dv %.1f dx %.2f' % (r, np.round(S[r, :3], 1), np.round(S[r, 3:6], 1), np.linalg.norm(P[i, 3:6] - S[r, 3:6]), np.linalg.norm(P[i, :3] - S[r, :3])))
for k in range(nt):
    bc = m.ball_contact(T[k, :3])
    if not bc['hit']: continue
    ks = []
    for cc in bc['contacts']:
        kd, nf = goal.kind(cc, T[k, :3]); fi = goal.file_index(cc['vertices'])
        ks.append('%d:%s:%s:d%.2f:nf%s' % (fi + 1, goal.piece(fi), kd, cc['depth'], np.round(nf, 3)))
    print('tick %d (row+%.2f) x %s v %s n %s tris %d | %s' % (k, k - a, np.round(T[k, :3], 1), np.round(T[k, 3:6], 1), np.round(bc['normal'], 3), bc['triangles'], ' ; '.join(ks)))
