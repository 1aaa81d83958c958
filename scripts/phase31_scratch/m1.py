import sys; sys.path.insert(0,'/tmp/phase31'); from est import *
rows=[]
for p in sorted(glob.glob(D+'/episode_*.csv')):
    t,x,v,J,cr,strad,nons=analyse(p)
    ep=int(p[-10:-4])
    if not strad: rows.append(dict(ep=ep,p0=None,nons=len(nons))); continue
    ph=[(f-cr[k]*TPCR)%1 for k,f,_ in strad]
    p0=circmean(ph)
    # crossing for straddled: pre row k-1, post row k+1; tick clock pos of crossing
    res=[]
    for k,f,_ in strad:
        s=crossing(x,v,t,k-1,k+1)
        T=p0+cr[k-1]*TPCR+s*120.0  # clock position in ticks of the crossing
        res.append(wrap(T))  # relative to nearest tick
    resn=[]
    for k in nons:
        s=crossing(x,v,t,k,k+1)
        T=p0+cr[k]*TPCR+s*120.0
        resn.append(wrap(T))
    rows.append(dict(ep=ep,p0=p0,strad=len(strad),res=res,nons=len(nons),resn=resn))
json.dump(rows,open('/tmp/phase31/m1.json','w'))
R=np.concatenate([r['res'] for r in rows if r['p0'] is not None])
Rn=np.concatenate([r['resn'] for r in rows if r['p0'] is not None and r['resn']])
for name,a in (('straddled',R),('nonstraddled',Rn)):
    print(name,len(a),'mean',a.mean(),'median',np.median(a),'pcts',np.percentile(a,[5,10,25,50,75,90,95]))
print('no phase',sum(r['p0'] is None for r in rows),'of which with nons',sum(r['p0'] is None and r['nons']>0 for r in rows))
