# vel35 scratch: per-episode last-row |dx| (uu) of two crossval folds-4 runs; the episodes above 60 in either
import numpy as np, glob, sys
def last(d):
    out={}
    for f in sorted(glob.glob(d+'/episode_*.csv')):
        a=np.genfromtxt(f,delimiter=',',names=True)
        out[int(f[-10:-4])]=float(np.linalg.norm([a['x'][-1]-a['rec_x'][-1],a['y'][-1]-a['rec_y'][-1],a['z'][-1]-a['rec_z'][-1]]))
    return out
b=last(sys.argv[1]); c=last(sys.argv[2])
ab=sorted(k for k in b if b[k]>60); ac=sorted(k for k in c if c[k]>60)
print('above 60: base',len(ab),'cand',len(ac))
print('out:',' '.join('%d (%.1f -> %.1f)'%(k,b[k],c[k]) for k in ab if c[k]<=60))
print('in:',' '.join('%d (%.1f -> %.1f)'%(k,b[k],c[k]) for k in ac if b[k]<=60))
print('stay:',' '.join('%d (%.1f -> %.1f)'%(k,b[k],c[k]) for k in ab if c[k]>60))
