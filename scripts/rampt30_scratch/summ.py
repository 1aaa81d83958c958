import json,sys,numpy as np
L=[json.loads(l) for l in open(sys.argv[1])]
def q(a): a=np.array(a,float); return "%.2f (%.2f) %.2f"%(np.median(a),np.percentile(a,90),a.max()) if len(a) else "-"
for p in ['side ramp','corner ramp',None]:
    S=[r for r in L if p is None or r['patch']==p]
    print('==',p,len(S), 'vn', q([-r['vn'] for r in S]))
    print(' fit_res',q([r['fit_res'] for r in S]),' e',q([r['e'] for r in S]),' e_fit',q([r['e_fit'] for r in S]))
    print(' ntri',np.bincount([r['ntri'] for r in S]),'nfaces',np.bincount([r['nfaces'] for r in S]))
    print(' depth0',q([r['depths'][0] for r in S]))
    for d in ['-1','0','1']:
        print(' mis tick',d,'n',q([r['res'][d]['mis_n'] for r in S]),'t',q([r['res'][d]['mis_t'] for r in S]))
    print(' cone',q([r['cone'] for r in S]))
    print(' dvt',q([r['dvt'] for r in S]))
    for k in ['eq_int','wavg4','eqR-2','eqR-1','eqR-0.5','eqR-0.2','eqR+0.2','eqR+0.5','eqR+1','eqR+2','eqS-0.5','eqS+0.5','eqS+1','pts0.5','pts0.5_4','pts1','pts1_4','pts2','pts2_4','pts5','pts5_4','eq_tris','eq_tris4','eq_cf4','eq_cf','deepest','wavg','wavg_cf','eq_faces','w2','wslop','mid','wavg_rb','circle','tick-1','tick+1']:
        v=[r['err'][k] for r in S if k in r['err']]
        a=[r['ang'][k] for r in S if k in r.get('ang',{})]
        print('  %-8s n=%2d |dv| %s   ang %s'%(k,len(v),q(v),q(a) if a else ''))
