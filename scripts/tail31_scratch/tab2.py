import json
rs = {json.loads(l)['ep']: json.loads(l) for l in open('eps.jsonl')}
cu = {int(k): v for k, v in json.load(open('cut.json')).items()}
order = sorted(rs, key=lambda e: -rs[e]['last'])
rows = []
for e in order:
    r = rs[e]; c = cu[e]; full = c['full']
    if 'pre3' not in c:
        print(e, 'no departure'); continue
    p3 = c['pre3']; s = p3['s']
    ol = full['dxs'][min(s + 61, len(full['dxs']) - 1)] - full['dxs'][s]
    born = 'contact' if (p3['dep'] is not None and abs(p3['dep'] - r['dep_row']) <= 2) else 'incoming'
    print('%4d %7.1f | %4d %5.2f | %-22s %2s %6.0f %5.0f %5.2f %5.2f | %5.1f %5.1f | %-32s | %6.1f (%6.1f) %4s %7.1f | %6.1f %6.1f | %7.1f %s' % (
        e, r['last'], r['dep_row'], r['dep_t'], r['c_patch'] + '@' + str(r['c_row']), r.get('n_tris'), r.get('vn', 0), r.get('speed', 0), r.get('w', 0), r.get('depth', 0),
        r['dx_before'], r['dv_before'], str(r['small']), p3['dx1'], ol, p3['dep'], p3['last'], c['post']['last'], c['post4']['last'], full['last'], born))
