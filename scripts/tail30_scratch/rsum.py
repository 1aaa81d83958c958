import json, sys, numpy as np
rs = [json.loads(l) for l in open(sys.argv[1])]
def s(a): a=np.asarray(a); return f"{np.median(a):+.3f} ({np.percentile(a,10):+.2f}..{np.percentile(a,90):+.2f})"
pats = {}
for r in rs: pats.setdefault(r['patch'], []).append(r)
print("| patch | rows | load uu/s^2 median | recorded gap | model gap | model - recorded |")
for pa, sel in sorted(pats.items(), key=lambda x: -len(x[1])):
    if len(sel) < 10: continue
    print(f"| {pa} | {len(sel)} | {np.median([r['load'] for r in sel]):.0f} | {s([r['gap'] for r in sel])} | {s([r['model_gap'] for r in sel])} | {s([r['model_gap']-r['gap'] for r in sel])} |")
# ramps: gap vs load
for pa in ('side ramp','corner ramp','back ramp','floor'):
    sel = pats.get(pa, [])
    if not sel: continue
    L = np.array([r['load'] for r in sel]); G = np.array([r['gap'] for r in sel]); M = np.array([r['model_gap'] for r in sel])
    for lo, hi in ((300, 800), (800, 2000), (2000, 5000), (5000, 1e9)):
        w = (L >= lo) & (L < hi)
        if w.sum() >= 5: print(pa, f"load {lo}-{hi}: n {w.sum()} rec gap {np.median(G[w]):+.3f} model gap {np.median(M[w]):+.3f} load*dt^2 {np.median(L[w])/14400:.3f}")
