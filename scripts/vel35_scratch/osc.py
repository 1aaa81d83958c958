# vel35 scratch: the open loop's velocity error (model - record) over the free flight before
# the first recorded contact, fitted per axis by c + A cos(w t) + B sin(w t) with w scanned;
# best w against the ball's recorded |omega|.
import numpy as np, glob, math, sys
DRAG=math.log(0.97); G=-650.0
def first_contact(R, RV, dts):
    for k in range(len(R)-1):
        v=RV[k].copy(); v[2]+=G*dts[k]; v*=math.exp(DRAG*dts[k])
        if np.linalg.norm(RV[k+1]-v)>5: return k
    return len(R)-1
out=[]
for f in sorted(glob.glob('/tmp/base35/folds4/episode_*.csv')):
    ep=int(f[-10:-4]); d=np.genfromtxt(f,delimiter=',',names=True)
    t=d['t_s']; R=np.c_[d['rec_x'],d['rec_y'],d['rec_z']]; RV=np.c_[d['rec_vx'],d['rec_vy'],d['rec_vz']]
    V=np.c_[d['vx'],d['vy'],d['vz']]; P=np.c_[d['x'],d['y'],d['z']]
    W=np.c_[d['rec_wx'],d['rec_wy'],d['rec_wz']]
    c=first_contact(R,RV,np.diff(t)*60.96/61)
    if c<60: continue
    n=c-1; tt=t[:n]*60.96/61; dv=V[:n]-RV[:n]
    best=None
    for w in np.arange(0.5,12.01,0.05):
        X=np.c_[np.ones(n),np.cos(w*tt),np.sin(w*tt)]
        res=0; coef=[]
        for a in range(3):
            b,_,_,_=np.linalg.lstsq(X,dv[:,a],rcond=None); res+=np.sum((dv[:,a]-X@b)**2); coef.append(b)
        if best is None or res<best[0]: best=(res,w,coef)
    res,w,coef=best
    amp=[math.hypot(b[1],b[2]) for b in coef]
    tot=np.sum((dv-dv.mean(0))**2)
    sp=np.linalg.norm(RV[0,:2])
    out.append((ep,c,n/61,np.linalg.norm(W[0]),w,amp,[b[0] for b in coef],1-res/max(tot,1e-12),sp,np.linalg.norm(P[n-1]-R[n-1]),np.linalg.norm(dv[-1])))
    print('%3d c=%3d %.2fs |w|=%.3f best=%.2f amp=%s mean=%s R2=%.2f vh=%.0f dx=%.3f dv=%.3f'%(ep,c,n/61,np.linalg.norm(W[0]),w,np.round(amp,3),np.round([b[0] for b in coef],3),1-res/max(tot,1e-12),sp,np.linalg.norm(P[n-1]-R[n-1]),np.linalg.norm(dv[-1])))
import json; json.dump([[float(x) if not isinstance(x,list) else [float(y) for y in x] for x in o] for o in out],open('osc.json','w'))
