import numpy as np,sys
ep=int(sys.argv[1]); r1=int(sys.argv[2]) if len(sys.argv)>2 else 150
d=np.genfromtxt(''+(sys.argv[3] if len(sys.argv)>3 else '/tmp/base35/folds4')+'/episode_%06d.csv'%ep,delimiter=',',names=True)
P=np.c_[d['x'],d['y'],d['z']]; R=np.c_[d['rec_x'],d['rec_y'],d['rec_z']]
V=np.c_[d['vx'],d['vy'],d['vz']]; RV=np.c_[d['rec_vx'],d['rec_vy'],d['rec_vz']]
for k in list(range(0,r1,5)):
    print(k, int(d['source_row'][k]), np.round(P[k]-R[k],3), np.round(V[k]-RV[k],3))
