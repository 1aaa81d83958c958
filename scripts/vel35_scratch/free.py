# vel35 scratch: the open loop's |dx| (uu) and |dv| (uu/s) at the last row before the first
# recorded contact (a row step off drag + gravity by > 5 uu/s), episodes with >= 1 s of free
# flight from row 0, in two crossval folds-4 runs (base, candidate); median / p90 / max, and
# the horizontal |dv| growth per second by speed.
import numpy as np, glob, math, sys
DRAG=math.log(0.97); G=-650.0
def fc(RV):
    for k in range(len(RV)-1):
        v=RV[k].copy(); v[2]+=G/61; v*=math.exp(DRAG/61)
        if np.linalg.norm(RV[k+1]-v)>5: return k
    return len(RV)-1
res={}
for name in sys.argv[1:]:
    rows=[]
    for f in sorted(glob.glob(name+'/episode_*.csv')):
        d=np.genfromtxt(f,delimiter=',',names=True)
        R=np.c_[d['rec_x'],d['rec_y'],d['rec_z']]; RV=np.c_[d['rec_vx'],d['rec_vy'],d['rec_vz']]
        P=np.c_[d['x'],d['y'],d['z']]; V=np.c_[d['vx'],d['vy'],d['vz']]
        c=fc(RV)
        if c<61: continue
        n=c-1
        rows.append((int(f[-10:-4]),n,np.linalg.norm(P[n]-R[n]),np.linalg.norm(V[n]-RV[n]),np.linalg.norm(V[n,:2]-RV[n,:2]),np.linalg.norm(RV[0,:2])))
    A=np.array(rows); res[name]=A
    q=lambda x: '%.3f / %.3f / %.3f'%(np.median(x),np.percentile(x,90),x.max())
    print(name,'episodes',len(A),'free s median %.2f'%np.median(A[:,1]/61),'|dx|',q(A[:,2]),'|dv|',q(A[:,3]),'|dv_h| per s',q(A[:,4]/(A[:,1]/61)))
    for lo,hi in ((0,500),(500,1000),(1000,1500),(1500,2500)):
        m=(A[:,5]>=lo)&(A[:,5]<hi)
        if m.sum(): print('   speed %d-%d: n %d |dx| %s |dv_h|/s %s'%(lo,hi,m.sum(),q(A[m,2]),q(A[m,4]/(A[m,1]/61))))
