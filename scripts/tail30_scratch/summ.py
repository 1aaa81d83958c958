import json, sys, numpy as np
def load(p): return [json.loads(l) for l in open(p)]
runs = [(p, load(p)) for p in sys.argv[1:]]
patches = {}
for r in runs[0][1]: patches[r['patch']] = patches.get(r['patch'], 0) + 1
def s(a): a = np.asarray(a); return f"{np.median(a):.2f} ({np.percentile(a,90):.1f})"
print("| patch | n | " + " | ".join(f"{p} dv | dvn med | dw" for p,_ in runs) + " |")
for pa, n in sorted(patches.items(), key=lambda x: -x[1]):
    cells = []
    for p, rs in runs:
        sel = [r for r in rs if r['patch'] == pa]
        cells.append(f"{s([r['dv'] for r in sel])} | {np.median([r['dvn'] for r in sel]):+.2f} | {np.median([r['dw'] for r in sel]):.3f} ({np.percentile([r['dw'] for r in sel],90):.3f})")
    print(f"| {pa} | {n} | " + " | ".join(cells) + " |")
