import json, sys, numpy as np
sys.argv = [sys.argv[0], 'x']
exec(open('fitn.py').read().split("ang = lambda")[0].replace("out = open", "#"))
sr = np.where(labels == 'side ramp')[0]
sel = sr[(cent[sr, 0] > 0)]
print(len(sel), 'side ramp +x facets; normals nz range', fn[sel, 2].min(), fn[sel, 2].max())
# 2D circle from facet normal lines in (x,z)
M = np.zeros((2, 2)); b = np.zeros(2)
for t in sel:
    n = fn[t][[0, 2]]; n /= np.linalg.norm(n); P = np.eye(2) - np.outer(n, n); M += P; b += P @ cent[t][[0, 2]]
print('circle centre x,z', np.linalg.solve(M, b))
y = cent[sel, 1]; print('facet y extent', np.percentile(np.ptp(tris[sel][:, :, 1], axis=1), [10, 50, 90]))
for lab, ax in [('side ramp', 1), ('back ramp', 0)]:
    s2 = np.where((labels == lab) & (np.abs(fn[:, ax]) < 1e-3))[0]
    s2 = s2[cent[s2, 1 - ax] > 0]
    o = [1 - ax, 2]
    M = np.zeros((2, 2)); b = np.zeros(2)
    for t in s2:
        n = fn[t][o]; n /= np.linalg.norm(n); P = np.eye(2) - np.outer(n, n); M += P; b += P @ cent[t][o]
    c = np.linalg.solve(M, b)
    rad = [np.abs(np.linalg.norm(tris[t][:, o] - c, axis=1)) for t in s2]
    print(lab, len(s2), 'pure facets, centre', c, 'vertex radius', np.percentile(np.concatenate(rad), [0, 50, 100]), 'distinct nz', len(np.unique(np.round(np.abs(fn[s2, 2]), 4))))
print('--- Kasa fit on vertices')
for lab, ax in [('side ramp', 1), ('back ramp', 0)]:
    s2 = np.where((labels == lab) & (np.abs(fn[:, ax]) < 1e-3))[0]
    s2 = s2[cent[s2, 1 - ax] > 0]
    o = [1 - ax, 2]
    P = np.unique(tris[s2][:, :, o].reshape(-1, 2), axis=0)
    Am = np.c_[2 * P, np.ones(len(P))]; sol = np.linalg.lstsq(Am, (P ** 2).sum(1), rcond=None)[0]
    c = sol[:2]; r = np.sqrt(sol[2] + c @ c)
    print(lab, len(P), 'vertices, centre', c, 'r', r, 'resid max', np.abs(np.linalg.norm(P - c, axis=1) - r).max())
print('---')
for lab, ax in [('side ramp', 1), ('back ramp', 0)]:
    s2 = np.where((labels == lab) & (np.abs(fn[:, ax]) < 1e-3))[0]
    s2 = s2[cent[s2, 1 - ax] > 0]
    o = [1 - ax, 2]
    P = np.unique(np.round(tris[s2][:, :, o].reshape(-1, 2), 2), axis=0); print(lab, P.tolist())
