import numpy as np, math, sys
DRAG=math.log(0.97); G=-650.0
ep=int(sys.argv[1]); n=int(sys.argv[2])
d=np.loadtxt('/work/shared/datasets/lobot/ball_trajectories/episode_%06d.csv'%ep,delimiter=',')
v=d[:,4:7]; w=d[:,10:13]
# 120 ticks = 61 rows: v' = v e^(drag*61 rows) over 1 s exactly (drag-only horizontally)
e=math.exp(DRAG/61.0)
j=v[1:n+1]-v[:n]*e; j[:,2]-=G/61.0*1.0  # approx for z
c=np.cumsum(j,axis=0)
for k in range(0,n,4): print(k, np.round(c[k],3), np.round(j[k],4))
print('w',w[0],np.linalg.norm(w[0]))
