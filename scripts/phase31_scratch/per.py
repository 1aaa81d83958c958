import json,sys
def load(d):
    per={}
    for e in json.load(open(d+'/replay_summary.json'))['errors']:
        if e['quantity']=='dx' and e['mode']=='open_loop' and e['episode'] and e['horizon_s'] is None:
            per[int(e['episode'][8:14])]=e['median']
    return per
def q(xs,p):
    xs=sorted(xs);k=(len(xs)-1)*p;f=int(k);c=min(f+1,len(xs)-1);return xs[f]+(xs[c]-xs[f])*(k-f)
b=load(sys.argv[1]); c=load(sys.argv[2])
pl=[int(l.split(',')[0][1:]) for l in open('/tmp/phase31/list57.txt') if l.startswith('(')]
above=sorted([e for e in b if b[e]>60],key=lambda e:-b[e])
print('above 60 base',len(above),'cand',sum(1 for e in c if c[e]>60))
for e in above: print(e, round(b[e],1), round(c[e],1), 'placed' if e in pl else '', 'CHANGED' if abs(b[e]-c[e])>1e-9 else '')
new=[e for e in c if c[e]>60 and b[e]<=60]; print('new above 60:',[(e,round(b[e],1),round(c[e],1)) for e in new])
import statistics
d=[c[e]-b[e] for e in pl]; print('47 placed: last-row change median %.3f; better %d worse %d'%(statistics.median(d),sum(x<0 for x in d),sum(x>0 for x in d)))
print('47 placed base median %.2f p90 %.1f, cand median %.2f p90 %.1f'%(q([b[e] for e in pl],.5),q([b[e] for e in pl],.9),q([c[e] for e in pl],.5),q([c[e] for e in pl],.9)))
others=[e for e in b if e not in pl]; print('others changed:',sum(abs(b[e]-c[e])>1e-9 for e in others))
