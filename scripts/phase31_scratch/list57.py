import sys; sys.path.insert(0,'/tmp/phase31'); from est import *
pl=[];un=[]
for p in sorted(glob.glob(D+'/episode_*.csv')):
    t,x,v,J,cr,strad,nons=analyse(p)
    if strad: continue
    _,_,_,_,_,sl,_=analyse(p,minb=200)
    ep=int(p[-10:-4])
    if sl:
        ph=[(f-cr[k]*TPCR)%1 for k,f,_ in sl]; m=circmean(ph)
        pl.append((ep,len(sl),round(m,3),round(wrap(m-0.5),3),round(max(abs(wrap(q-m)) for q in ph),3)))
    else: un.append(ep)
print('placed',len(pl)); 
for r in pl: print(r)
print('unplaced',un)
d=np.array([abs(r[3]) for r in pl]); print('|new - half| ticks median %.3f p90 %.3f max %.3f'%(np.median(d),np.percentile(d,90),d.max()))
