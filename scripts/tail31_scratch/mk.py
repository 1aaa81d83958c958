import json
rs = {json.loads(l)['ep']: json.loads(l) for l in open('eps.jsonl')}
cu = {int(k): v for k, v in json.load(open('cut.json')).items()}
inj = {}
for l in open('inj.txt'):
    f = l.split(); ep = int(f[0])
    inj[ep] = dict(start=float(f[5]), last=float(l.split('inj: 1s ')[1].split(' last ')[1].split()[0]), dep=l.split('inj: ')[1].split('dep ')[1].split()[0])
inc = {}
for l in open('inc.txt'):
    f = l.split()
    if 'no touch' in l: continue
    inc[int(f[0])] = (int(f[6]), int(f[14]), float(l.split('normal angle ')[1].split()[0]))
cause = {328: 'fast corner ramp', 141: 'fast corner ramp', 73: 'fast corner ramp', 37: 'fast corner ramp',
         242: 'fast side ramp', 325: 'fast side ramp', 102: 'fast side ramp, knife-edge',
         13: 'back ramp (1 facet)', 308: 'back ramp', 129: 'back ramp', 153: 'back ramp',
         190: 'ceiling edge (1 facet)', 65: 'goal roof', 197: 'goal side net', 338: 'goal side net',
         88: 'goal side net, knife-edge', 114: 'goal side net', 29: 'rolling over the goal line',
         169: 'rolling over the goal line', 149: 'rolling over the goal line', 306: 'floor-side ramp seam, 2033 uu/s',
         205: 'slow corner ramp, knife-edge', 0: 'incoming (corner ramp @82)', 48: 'incoming (floor @163)',
         156: 'incoming (0.1 uu) at ceiling edge', 164: 'incoming (side wall @103)', 58: 'incoming (goal floor @253)',
         62: 'incoming (floor @184)', 266: 'incoming (1.2 uu) at floor-corner seam', 50: 'incoming (side ramp @374)', 182: 'incoming (side wall @214)'}
print('| ep | last | departs row (s) | contact: patch @row, tris (open loop), v.n, \\|v\\|, \\|w\\| | dx in | from recorded c-3: 1 s (open loop) | from open loop c-3: last, departs | born | left after it | cause |')
print('|---|---|---|---|---|---|---|---|---|---|')
for ep in sorted(rs, key=lambda e: -rs[e]['last']):
    r = rs[ep]
    if r.get('c_row') is None:
        print('| %d | %.1f | never (\\|dv\\| max 15.2) | - | - | - | - | - | - | slow drift after sliding along the back wall @200 |' % (ep, r['last'])); continue
    c = cu[ep]; p3 = c['pre3']; s = p3['s']; full = c['full']
    ol = full['dxs'][min(s + 61, len(full['dxs']) - 1)] - full['dxs'][s]
    born = 'contact' if (p3['dep'] is not None and abs(p3['dep'] - r['dep_row']) <= 2) else 'incoming'
    tr = '%d (%d)' % (inc[ep][1], inc[ep][0]) if ep in inc else str(r.get('n_tris'))
    left = c['post']['last'] if born == 'contact' else p3['last']
    i = inj[ep]
    print('| %d | %.1f | %d (%.2f) | %s @%d, %s, %.0f, %.0f, %.1f | %.1f | %.1f (%.1f) | %.1f, %s | %s | %.1f | %s |' % (
        ep, r['last'], r['dep_row'], r['dep_t'], r['c_patch'], r['c_row'], tr, r['vn'], r['speed'], r['w'], i['start'],
        p3['dx1'], ol, i['last'], i['dep'], born, left, cause[ep]))
