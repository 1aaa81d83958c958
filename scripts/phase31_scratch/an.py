import sys; sys.path.insert(0,'/tmp/phase31'); from est import *
R=json.load(open('/tmp/phase31/m2.json'))
NA=100; grid=np.arange(NA)/NA
def interval_est(bs):
    f=np.ones(NA,bool)
    for b in bs: f&=np.array(b['feas'])
    if not f.any(): return None,0,f
    return circmean(grid[f]),f.sum()/NA,f
def fit_est(bs):
    e=np.zeros(NA)
    for b in bs: e+=np.array(b['err'])
    return grid[np.argmin(e)]
E=dict(interval=[],fit=[],feasw=[],slow=[],half=[],single_iv=[],single_fit=[],empty=0,nb=[])
for r in R:
    if r['p0'] is None or not r['b']: continue
    p0=r['p0']; bs=r['b']
    iv,w,f=interval_est(bs)
    if iv is None: E['empty']+=1
    else:
        E['interval'].append(wrap(iv-p0)); E['feasw'].append(w)
    E['fit'].append(wrap(fit_est(bs)-p0)); E['half'].append(wrap(0.5-p0)); E['nb'].append(len(bs))
    for b in bs:
        ff=np.array(b['feas'])
        if ff.any(): E['single_iv'].append(wrap(circmean(grid[ff])-p0))
        E['single_fit'].append(wrap(grid[np.argmin(b['err'])]-p0))
for r in R:
    if r['p0'] is None: continue
    for k,f,w,ph in r['slow']: E['slow'].append(wrap(ph-r['p0']))
def st(a):
    a=np.abs(np.array(a)); return 'n %d median %.3f p90 %.3f max %.3f'%(len(a),np.median(a),np.percentile(a,90),a.max()) if len(a) else 'n 0'
for k in ('interval','fit','half','single_iv','single_fit','slow'): print(k,st(E[k]))
print('empty intersections',E['empty'],'feasible width median',np.median(E['feasw']),'p90',np.percentile(E['feasw'],90))
# the 57
n57=[r for r in R if r['p0'] is None]
print('no-phase episodes',len(n57),'with nonstraddled bounces',sum(1 for r in n57 if r['b']),'with slow straddled',sum(1 for r in n57 if r['slow']))
ws=[];emp=0
for r in n57:
    if not r['b']: continue
    iv,w,f=interval_est(r['b'])
    if iv is None: emp+=1
    else: ws.append(w)
print('57: interval empty',emp,'width median',np.median(ws),'p90',np.percentile(ws,90),'max',max(ws))
