import sys; sys.path.insert(0,'/tmp/phase31'); from est import *
eps=sorted(glob.glob(D+'/episode_*.csv'))
data=[]
for p in eps:
    t,x,v,J,cr,strad,nons=analyse(p)
    p0=circmean([(f-cr[k]*TPCR)%1 for k,f,_ in strad]) if strad else None
    data.append((int(p[-10:-4]),p,p0,cr))
for lo in (400,200,100,50,30):
  for free in (5.0,):
    errs=[];eperr=[];placed=0;spread=[]
    for ep,p,p0,cr in data:
        _,_,_,_,_,sl,_=analyse(p,minb=lo,free=free)
        sl=[s for s in sl if s[2]<800]
        if not sl: continue
        ph=[(f-cr[k]*TPCR)%1 for k,f,_ in sl]
        if p0 is None:
            placed+=1; m=circmean(ph); spread.append(max(abs(wrap(q-m)) for q in ph)); continue
        errs+= [abs(wrap(q-p0)) for q in ph]; eperr.append(abs(wrap(circmean(ph)-p0)))
    errs=np.array(errs); eperr=np.array(eperr)
    print('min %4d: per bounce n %d med %.4f p90 %.4f max %.3f >0.05: %d | per episode n %d med %.4f p90 %.4f max %.3f | 57 placed %d, their own spread med %.4f max %.3f'%(lo,len(errs),np.median(errs),np.percentile(errs,90),errs.max(),(errs>0.05).sum(),len(eperr),np.median(eperr),np.percentile(eperr,90),eperr.max(),placed,np.median(spread) if spread else -1,max(spread) if spread else -1))
print('weighted by w^2')
for lo in (200,100,50,30):
    eperr=[];placed=0;out=[]
    for ep,p,p0,cr in data:
        _,_,_,_,_,sl,_=analyse(p,minb=lo)
        sl=[s for s in sl if s[2]<800]
        if not sl: continue
        ph=[(f-cr[k]*TPCR)%1 for k,f,_ in sl]; w=[s[2]**2 for s in sl]
        if p0 is None: placed+=1; continue
        e=abs(wrap(circmean(ph,w)-p0)); eperr.append(e)
        if e>0.02: out.append((ep,round(e,3),[(k,round(f,3),round(ww)) for k,f,ww in sl]))
    eperr=np.array(eperr)
    print('min %d: per episode n %d med %.4f p90 %.4f max %.3f >0.02 %d placed57 %d'%(lo,len(eperr),np.median(eperr),np.percentile(eperr,90),eperr.max(),(eperr>0.02).sum(),placed))
    if lo in (200,100): print(out)
