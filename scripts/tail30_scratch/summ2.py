import json, sys, numpy as np
rs = [json.loads(l) for l in open(sys.argv[1])]
def s(a): a = np.asarray(a); return f"{np.median(a):.2f} ({np.percentile(a,90):.1f})" if len(a) else '-'
for pa in ['floor','side wall','back wall','ceiling','side ramp','corner ramp','back ramp','corner curve','goal floor']:
    sel = [r for r in rs if r['patch']==pa]
    sl = [r for r in sel if abs(r['vin_n'])<300]; fa=[r for r in sel if abs(r['vin_n'])>=300]
    print(f"{pa:12s} n {len(sel):4d} |dvn| {s([abs(r['dvn']) for r in sel])} dvt {s([r['dvt'] for r in sel])} dxn {s([abs(r['dxn']) for r in sel])} | slow<300 n {len(sl)} dv {s([r['dv'] for r in sl])} | fast n {len(fa)} dv {s([r['dv'] for r in fa])}")
