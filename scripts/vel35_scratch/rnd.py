# vel35 scratch: free flight from row 0's tick pair, the model's ticks (Model.step_ticks) against
# a plain tick loop v' = v e + g dt, x' = x + v' dt with v' rounded to 0.01 uu/s after each tick.
import sys, math, numpy as np, tk
ep=int(sys.argv[1]); n=int(sys.argv[2]); q=float(sys.argv[3]) if len(sys.argv)>3 else 0.01
tk.use_fold(ep); e=tk.load(ep); o,tier=tk.origin(e); S=e['states']; cr=tk.clock_rows(e)
a0=tk.frac(o,0); t0,t1=tk.pair(S[0],a0)
C=tk.C; dt=1/120.; E=math.exp(C['drag']*dt); g=np.array([0,0,C.get('gravity_z',-650.0)])
def run(s,N,rnd):
    x=s[:3].copy(); v=s[3:6].copy(); out=[np.r_[x,v]]
    if rnd: v=np.round(v/q)*q
    for i in range(N):
        v=v*E+g*dt; x=x+v*dt
        if rnd: v=np.round(v/q)*q
        out.append(np.r_[x,v])
    return np.array(out)
N=int(a0+sum(cr[:n])*tk.TPR)+3
A=run(t0,N,False); B=run(t0,N,True); M=tk.m.step_ticks(t0,N)
def rows(T):
    out=[]
    for r in range(n):
        t=a0+sum(cr[:r])*tk.TPR; k=int(t); f=t-k; out.append((1-f)*T[k,:6]+f*T[k+1,:6])
    return np.array(out)
ra,rb,rm=rows(A),rows(B),rows(M)
print('tier',tier,'a0',round(a0,4),'t0 v',t0[3:6])
for r in range(0,n,10):
    print(r,'model dx',np.round(rm[r,:3]-S[r,:3],3),'dv',np.round(rm[r,3:6]-S[r,3:6],3),'| plain dv',np.round(ra[r,3:6]-S[r,3:6],3),'| rounded dx',np.round(rb[r,:3]-S[r,:3],3),'dv',np.round(rb[r,3:6]-S[r,3:6],3))
