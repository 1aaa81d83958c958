# Model-based phase evidence per bounce (non-straddled and slow straddled), phase31 scratch.
import sys; sys.path.insert(0,'/tmp/phase31'); from est import *
import rlfit
M=rlfit.Model('ball')
NA=100
def state(x,v,om,k): return np.concatenate([x[k],v[k],om[k]])
def invert(row,a):
    t0=row.copy()
    if a==0: return t0
    for _ in range(3):
        t1=M.step_ticks(t0,1)[1]
        t0=row-(t1-t0)*a
    return t0
def blend(ticks,T):
    j=int(np.floor(T)); f=T-j
    return ticks[j]*(1-f)+ticks[j+1]*f
def curve(x,v,om,cr,kpre,kpost,nrows=2):
    """for a grid of p0 (phase of row 0 in ticks): feasible (the model's bounce falls whole
    between rows kpre and kpre+1 ... ) and position error at rows kpre+1..kpre+nrows"""
    row=state(x,v,om,kpre)
    err=np.zeros(NA); feas=np.zeros(NA,bool)
    dvfree=None
    for i in range(NA):
        p0=i/NA
        a=(p0+cr[kpre]*TPCR)%1.0
        t0=invert(row,a)
        n=int(np.ceil(a+(cr[kpre+nrows]-cr[kpre])*TPCR))+2
        tk=M.step_ticks(t0,n)
        e=0.0
        for r in range(kpre+1,kpre+nrows+1):
            T=a+(cr[r]-cr[kpre])*TPCR
            b=blend(tk,T)
            e+=np.linalg.norm(b[0:3]-x[r])
        err[i]=e
        # contact step: first tick step whose velocity jump off free flight > 100
        dv=np.diff(tk[:,3:6],axis=0); dv[:,2]-=G/120.0
        jj=np.where(np.linalg.norm(dv,axis=1)>100)[0]
        if len(jj):
            B=jj[0]  # step B -> B+1 bounces
            J0=int(np.floor(a)); J1=int(np.floor(a+(cr[kpost]-cr[kpre])*TPCR))
            # rows kpre..kpost-1 show none, row kpost the whole: B >= J0+1 and B+1 <= J1
            feas[i]= (B>=J0+1) and (B+1<=J1)
    return err,feas
out=[]
eps=sorted(glob.glob(D+'/episode_*.csv'))
for p in eps:
    t,x,v,J,cr,strad,nons=analyse(p)
    a=np.loadtxt(p,delimiter=',',ndmin=2); om=a[:,10:13]
    ep=int(p[-10:-4])
    p0=circmean([(f-cr[k]*TPCR)%1 for k,f,_ in strad]) if strad else None
    _,_,_,_,_,slow,_=analyse(p,minb=200.0)
    slow=[s for s in slow if s[2]<800]
    rec=dict(ep=ep,p0=p0,nstrad=len(strad),slow=[(k,f,w,(f-cr[k]*TPCR)%1) for k,f,w in slow],b=[])
    for k in nons:
        if k+3>=len(t): continue
        err,feas=curve(x,v,om,cr,k,k+1)
        rec['b'].append(dict(k=int(k),w=float(np.linalg.norm(J[k])),err=err.tolist(),feas=feas.tolist()))
    out.append(rec)
    print(ep,p0,len(rec['b']),len(slow),flush=True)
json.dump(out,open('/tmp/phase31/m2.json','w'))
