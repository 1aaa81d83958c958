# new34 scratch: per episode (fold coefficients of crossval folds 4, /tmp/base34/folds4): the
# departure (tail30's rule, the replay's), the recorded contact it follows (the step c -> c + 1
# off free flight by > 20 uu/s, the last at or before the departure, c its run's first row), the
# open loop's |dx| at c - 3, and the born test: the model from the recorded row c - 3 at the
# replay's own phase (|dv| at c + 8 < 5 uu/s: reproduced) and at 100 phases; |dx| 1 s on from
# c - 3 (and the open loop's), the last row from c - 3 and from c + 4 (what is left after it).
import sys, csv, json, math, numpy as np, tk
OUT = '/tmp/base34/folds4'
summ = {e['name']: e for e in json.load(open(OUT + '/replay_summary.json'))['episodes']}
def openloop(ep):
    rows = list(csv.reader(open('%s/episode_%06d.csv' % (OUT, ep))))[1:]
    A = np.array([[float(x) for x in r[4:22]] for r in rows])
    return A[:, 0:3], A[:, 3:6], A[:, 9:12], A[:, 12:15]
def run(ep, c=None):
    tk.use_fold(ep)
    e = tk.load(ep); S = e['states']; N = len(S) - 1; cr = tk.clock_rows(e)
    o, how = tk.origin(e)
    px, pv, rx, rv = openloop(ep)
    dx = np.linalg.norm(px - rx, axis=1)
    dep = summ['episode_%06d.csv' % ep]['departure']
    d = dep['row'] if dep else None
    J = [float(np.linalg.norm(j)) for j in tk.jumps(e)]
    if c is None:
        if d is None: return dict(ep=ep, last=round(float(dx[-1]), 1), departs=None)
        k = d
        while k > 0 and J[k] <= 20: k -= 1
        while k > 0 and J[k - 1] > 20 and d - k < 12: k -= 1
        c = k
    s0 = max(c - 3, 0); r8 = min(c + 8, N)
    at = {}
    P, T, a0, rs = tk.rollout(e, o, s0, N)
    dv8 = float(np.linalg.norm(P[r8 - s0, 3:6] - S[r8, 3:6]))
    one = min(s0 + 61, N)
    good = []
    for a in np.linspace(0, 0.99, 100):
        Pa, _, _, _ = tk.rollout(e, o, s0, r8, a=a, rule=False)
        if np.linalg.norm(Pa[-1, 3:6] - S[r8, 3:6]) < 5: good.append(a)
    # where: the first tick of the restart whose contact pushes (the model's view)
    where = '-'
    for k in range(len(T) - 1):
        bc = tk.m.ball_contact(T[k, :3])
        if bc['hit'] and k >= 1 and np.linalg.norm(T[k + 1, 3:6] - T[k, 3:6]) > 20:
            n = np.array(bc['normal']); where = 'tris %d n(%.2f,%.2f,%.2f) x(%.0f,%.0f,%.0f)' % (bc['triangles'], n[0], n[1], n[2], *T[k, :3]); break
    ca = min(c + 4, N)
    P4, _, _, _ = tk.rollout(e, o, ca, N)
    return dict(where=where, ep=ep, how=how, last=round(float(dx[-1]), 1), departs=d, c=c, jump_c=round(J[c], 0),
                v_c=round(float(np.linalg.norm(S[c, 3:6])), 0), z_c=round(float(S[c, 2]), 0),
                dx_in=round(float(dx[s0]), 2), a_rep=round(a0, 3), dv8_rep=round(dv8, 1),
                n_good=len(good), good=('%.2f-%.2f' % (min(good), max(good))) if good else '-',
                dx1s_rec=round(float(np.linalg.norm(P[one - s0, :3] - S[one, :3])), 1), dx1s_ol=round(float(dx[one] - dx[s0]), 1),
                last_from_cm3=round(float(np.linalg.norm(P[-1, :3] - S[N, :3])), 1),
                last_from_cp4=round(float(np.linalg.norm(P4[-1, :3] - S[N, :3])), 1))
if __name__ == '__main__':
    for arg in sys.argv[1:]:
        if '@' in arg: ep, c = map(int, arg.split('@'))
        else: ep, c = int(arg), None
        print(json.dumps(run(ep, c)), flush=True)
