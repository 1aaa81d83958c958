import sys, json, numpy as np
def load(p): return {(r['ep'], r['k']): r for r in map(json.loads, open(p))}
base = load('/tmp/solver30/today.jsonl')
def st(x): x = np.asarray(x); return f"{np.median(x):6.1f} ({np.percentile(x,90):6.1f}) {x.max():6.0f}"
def stw(x): x = np.asarray(x); return f"{np.median(x):.3f} ({np.percentile(x,90):.3f})"
print(f"{'variant':28s} | seams(96) dv today -> var  b/w | dw today -> var | all(1159) dv today -> var b/w | changed n: dv today -> var")
for p in sys.argv[1:]:
    v = load(p); keys = list(base)
    seam = [k for k in keys if base[k]['seam']]
    def part(ks):
        a = [base[k]['dv'] for k in ks]; b = [v[k]['dv'] for k in ks]
        bw = sum(y < x - 0.5 for x, y in zip(a, b)), sum(y > x + 0.5 for x, y in zip(a, b))
        return a, b, bw
    a, b, bw = part(seam)
    aw = [base[k]['dw'] for k in seam]; bwv = [v[k]['dw'] for k in seam]
    A, B, BW = part(keys)
    ch = [k for k in keys if abs(v[k]['dv'] - base[k]['dv']) > 1e-6]
    ca, cb, cbw = part(ch) if ch else ([0], [0], (0, 0))
    print(f"{p.split('/')[-1][:-6]:28s} | {st(a)} -> {st(b)} {bw[0]}/{bw[1]} | {stw(aw)} -> {stw(bwv)} | {np.median(A):.2f} ({np.percentile(A,90):.1f}) -> {np.median(B):.2f} ({np.percentile(B,90):.1f}) {BW[0]}/{BW[1]} | {len(ch)}: {st(ca)} -> {st(cb)} {cbw[0]}/{cbw[1]}")
