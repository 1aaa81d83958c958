# Phase estimators for the ball's tick clock (phase31 scratch).
import numpy as np, glob, os, json, sys
G=-650.0; DRAG=np.log(0.97); TPCR=120.0/61.0; RATE=60.96
D=os.environ.get('RLFIT_DATA','/work/shared/datasets/lobot')+'/ball_trajectories'
def load(p):
    a=np.loadtxt(p,delimiter=',',ndmin=2)
    return a[:,0],a[:,1:4],a[:,4:7]
def jumps(t,x,v):
    dt=np.diff(t); vv=v[:-1].copy(); vv[:,2]+=G*dt; vv*=np.exp(DRAG*dt)[:,None]
    return v[1:]-vv, dt
def analyse(p, minb=800.0, free=5.0, minf=0.03):
    t,x,v=load(p); n=len(t)
    J,dt=jumps(t,x,v)
    cr=np.concatenate([[0],np.cumsum(np.rint(dt*RATE))])  # clock rows to row k
    strad=[]; nons=[]
    for k in range(2,n-2):
        w=J[k-1]+J[k]; w2=w@w
        if w2<minb*minb: continue
        if np.linalg.norm(J[k-2])>free or np.linalg.norm(J[k+1])>free: continue
        f=J[k-1]@w/w2
        if minf<f<1-minf:
            strad.append((k,f,np.sqrt(w2)))
    # non-straddled: jump entirely in step k->k+1, free before and after
    for k in range(1,n-2):
        w=J[k]
        if w@w<minb*minb: continue
        if np.linalg.norm(J[k-1])>free or np.linalg.norm(J[k+1])>free: continue
        nons.append(k)
    return t,x,v,J,cr,strad,nons
def circmean(ph,w=None):
    ph=np.asarray(ph); w=np.ones(len(ph)) if w is None else np.asarray(w)
    c=(w*np.cos(2*np.pi*ph)).sum(); s=(w*np.sin(2*np.pi*ph)).sum()
    return (np.arctan2(s,c)/(2*np.pi))%1.0
def wrap(d): return (d+0.5)%1.0-0.5
def crossing(x,v,t,kpre,kpost):
    # time (s after row kpre) where the pre row's free path and the post row's free path
    # (extrapolated back) cross along the jump direction
    dtr=t[kpost]-t[kpre]
    dv=v[kpost]-v[kpre]; dv[2]-=G*dtr
    nrm=dv/np.linalg.norm(dv)
    # pre: x_pre(s)=x0+v0 s+ g s^2/2 ; post: x_post(s)=x1+v1 (s-dtr)+g (s-dtr)^2/2
    # difference along n (gravity terms: g/2 (s^2-(s-dtr)^2) = g/2 (2 s dtr - dtr^2))
    gv=np.array([0,0,G])
    # solve (x_post - x_pre).n = 0, linear in s
    a0=(x[kpost]-v[kpost]*dtr+gv*dtr*dtr/2-x[kpre])@nrm
    a1=(v[kpost]-gv*dtr-v[kpre])@nrm
    return -a0/a1
