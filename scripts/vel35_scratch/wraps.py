# vel35 scratch: where the recorded horizontal velocity's free-flight residual per row
# (j = v[k+1] - v[k] exp(drag/61)) wraps (jumps by > 0.012 uu/s between neighbouring free rows)
import numpy as np, math, glob
e=math.exp(math.log(0.97)/61)
W=[]
for f in sorted(glob.glob('/work/shared/datasets/lobot/ball_trajectories/episode_*.csv')):
    ep=int(f[-10:-4]); d=np.loadtxt(f,delimiter=',')
    t=d[:,0]; x=d[:,1:4]; v=d[:,4:7]
    ok=np.round(np.diff(t)*4096)==68
    j=v[1:]-v[:-1]*e
    for k in range(1,len(j)-2):
        if not (ok[k-1] and ok[k] and ok[k+1]): continue
        if np.any(np.abs(j[k-1:k+3,:2])>0.05): continue   # not free flight
        for a in range(2):
            if abs(j[k+1,a]-j[k-1,a])>0.012:
                W.append((ep,k,a,x[k,a],v[k,a],j[k-1,a],j[k+1,a]))
import collections
print(len(W))
for w in W[:60]: print(w[0],w[1],'xy'[w[2]],round(w[3],1),round(w[4],1),round(w[5],4),round(w[6],4))
np.save('wraps.npy',np.array([[w[0],w[1],w[2],w[3],w[4],w[5],w[6]] for w in W]))
