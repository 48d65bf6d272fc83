import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseLanlCsv } from '../../../../src/frameworks/malleable/manager/traces/failure-trace.js';
import { simulateFaultTolerance } from '../../../../src/frameworks/malleable/manager/traces/proactive-ft.js';

const HEADER = 'System,machine type,nodes,procstot,procsinnode,nodenum,nodenumz,node install,node prod,node decom,fru type,mem,cputype,memtype,num intercon,purpose,Prob Started,Prob Fixed,Down Time,Facilities,Hardware,Human Error,Network,Undetermined,Software,Same Event';

describe('failure traces and proactive fault tolerance', () => {
  it('parses LANL outages (node, start, end) and names file:line and column of a bad row', () => {
    const csv = `${HEADER}\n2,cluster,49,6152,80,0,0,5-Apr,5-Jun,current,part,80,1,1,0,graphics.fe,6/21/2005 10:54,6/21/2005 11:00,6,,Graphics Accel Hdwr,,,,,No\n`;
    assert.deepEqual(parseLanlCsv(csv, 'lanl.csv'), [{ system: '2', node: '0', start: Date.UTC(2005, 5, 21, 10, 54), end: Date.UTC(2005, 5, 21, 11, 0) }]);
    // A row of the real file (line 12781): system 17 down as a whole, no node.
    assert.deepEqual(parseLanlCsv(`${HEADER}
17,,,,,,,,,,,,,,,,1/8/1997 8:40,1/8/1997 8:50,10,,Other,,,,,No
`, 'lanl.csv')[0]?.node, null);
    assert.throws(() => parseLanlCsv(`${csv}2,cluster,49,6152,80,0,0,5-Apr,5-Jun,current,part,80,1,1,0,x,13/40/2005 1:00,6/21/2005 11:00,6\n`, 'lanl.csv'), /lanl\.csv:3: "Prob Started": "13\/40\/2005 1:00" is not m\/d\/yyyy h:mm/);
    assert.throws(() => parseLanlCsv('a,b\n', 'lanl.csv'), /lanl\.csv:1: no "System" column/);
  });

  // Pool a, b; b is down over [50, 70) s; warnings 10 s ahead; shrink 1 s, expand 2 s; checkpoints every 40 s; restart 5 s.
  const costs = { lead: 10, shrink: 1, expand: 2, interval: 40, restart: 5 };
  const outages = [{ node: 'b', start: 50, end: 70, warned: true }];

  it('proactive: the warning vacates b (no rollback), b\'s return expands the job (hand-computed)', () => {
    const r = simulateFaultTolerance(['a', 'b'], outages, 100, costs, 'proactive');
    // 0–40 on 2 nodes (80); vacate 40–41 stalls 2; 41–70 on a (29); expand 70–72 stalls 4; 72–100 on 2 (56).
    assert.deepEqual([r.usefulWork, r.lostWork, r.stalled, r.crashes, r.vacates, r.expands], [165, 0, 6, 0, 1, 1]);
  });

  it('reactive: b crashes at 50 s, 10 s of work on 2 nodes roll back to the checkpoint at 40 s', () => {
    const r = simulateFaultTolerance(['a', 'b'], outages, 100, costs, 'reactive');
    // 0–40 (80); 40–50 on 2 (20) lost; restart 50–55 on a stalls 5; 55–70 on a (15); expand stalls 4; 72–100 on 2 (56).
    assert.deepEqual([r.usefulWork, r.lostWork, r.stalled, r.crashes, r.vacates, r.expands], [151, 20, 9, 1, 0, 1]);
  });

  it('a warning that comes too late to vacate in time is a crash as well', () => {
    const r = simulateFaultTolerance(['a', 'b'], [{ node: 'b', start: 50, end: 70, warned: true }], 100, { ...costs, lead: 0.5 }, 'proactive');
    assert.equal(r.crashes, 1);
    assert.ok(r.lostWork > 0);
  });
});
