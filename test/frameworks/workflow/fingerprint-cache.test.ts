/**
 * Kept fingerprints (fingerprint-cache.ts): a rerun of a workflow whose content is the same computes
 * again exactly the fingerprints an input change reaches and takes the others from the last plan; the
 * result always equals a full computation. That the others were taken, not computed, is shown by
 * altering the kept ones. Other settings (a replay scale), another content key or a damaged file mean a
 * full computation.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { computeFingerprints, fingerprintOf, type FingerprintInputs } from '../../../src/frameworks/workflow/fingerprint.js';
import { fingerprintsReusing } from '../../../src/frameworks/workflow/fingerprint-cache.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import type { Workflow } from '../../../src/frameworks/workflow/workflow.js';

/** Two chains: a0 → a1 → … reading in0, b0 → b1 → … reading in1; and a task reading both ends. */
function twoChains(n: number): Workflow {
  const b = new WorkflowBuilder('chains');
  for (const c of ['a', 'b']) {
    for (let i = 0; i < n; i++) b.command(`${c}${i}`, ['step', c, String(i)], { inputs: [i === 0 ? `in${c === 'a' ? 0 : 1}` : `${c}${i - 1}.out`], outputs: [`${c}${i}.out`] });
  }
  b.command('join', ['join'], { inputs: [`a${n - 1}.out`, `b${n - 1}.out`], outputs: ['joined'] });
  const wf = b.build();
  wf.contentKey = 'chains-content';
  return wf;
}

const stampsHow = (stamps: Record<string, string>, replay?: number): FingerprintInputs => ({ inputStamp: (f) => stamps[`f${f}`] ?? 'none', ...(replay !== undefined ? { replay } : {}) });

describe('kept fingerprints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-fp-cache-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('only what an input change reaches is computed again; the result equals a full computation', () => {
    const state = join(dir, 'one');
    const wf = twoChains(20);
    const in0 = wf.files.findIndex((f) => f.name === 'in0');
    const in1 = wf.files.findIndex((f) => f.name === 'in1');
    const before = stampsHow({ [`f${in0}`]: '10:1', [`f${in1}`]: '10:1' });
    assert.deepEqual(fingerprintsReusing(wf, before, state), computeFingerprints(wf, before));
    assert.deepEqual(fingerprintsReusing(wf, before, state), computeFingerprints(wf, before), 'nothing changed');

    // Alter the kept fingerprint of every b task: if they are taken from the file, the alteration shows.
    const path = join(state, 'compiled', 'chains-content.fingerprints');
    const kept = JSON.parse(readFileSync(path, 'utf8')) as { fingerprints: string };
    const bTasks = wf.tasks.map((t, i) => [t.id, i] as const).filter(([id]) => id.startsWith('b')).map(([, i]) => i);
    let fps = kept.fingerprints;
    for (const t of bTasks) fps = fps.slice(0, t * 32) + 'f'.repeat(32) + fps.slice((t + 1) * 32);
    writeFileSync(path, JSON.stringify({ ...kept, fingerprints: fps }));

    const touched = stampsHow({ [`f${in0}`]: '10:2', [`f${in1}`]: '10:1' });
    const full = computeFingerprints(wf, touched);
    const reused = fingerprintsReusing(wf, touched, state);
    wf.tasks.forEach((task, t) => {
      if (task.id.startsWith('b')) assert.equal(reused[t], 'f'.repeat(32), `${task.id} was taken from the kept file`);
      else if (task.id === 'join') assert.equal(reused[t], fingerprintOf(wf, t, reused, touched), 'join computed again, from a19 computed again and b19 as kept');
      else assert.equal(reused[t], full[t], `${task.id} (below in0) computed again`);
    });
  });

  it('other settings, another content or a damaged file: computed in full', () => {
    const state = join(dir, 'two');
    const wf = twoChains(5);
    const how = stampsHow({});
    fingerprintsReusing(wf, how, state);
    const path = join(state, 'compiled', 'chains-content.fingerprints');
    const alter = () => {
      const kept = JSON.parse(readFileSync(path, 'utf8')) as { fingerprints: string };
      writeFileSync(path, JSON.stringify({ ...kept, fingerprints: 'f'.repeat(kept.fingerprints.length) }));
    };
    alter();
    assert.ok(fingerprintsReusing(wf, how, state).every((fp) => fp === 'f'.repeat(32)), 'the kept ones are read while nothing changed');
    alter();
    const replay = stampsHow({}, 0.5);
    assert.deepEqual(fingerprintsReusing(wf, replay, state), computeFingerprints(wf, replay), 'a replay scale');
    alter();
    wf.contentKey = 'other-content';
    assert.deepEqual(fingerprintsReusing(wf, how, state), computeFingerprints(wf, how), 'another content key');
    wf.contentKey = 'chains-content';
    writeFileSync(path, '{"damaged');
    assert.deepEqual(fingerprintsReusing(wf, how, state), computeFingerprints(wf, how), 'a damaged file');
    wf.tasks[0]!.command!.program = '/elsewhere/step';
    alter();
    assert.deepEqual(fingerprintsReusing(wf, how, state), computeFingerprints(wf, how), 'a program the catalogs resolved elsewhere');
  });
});
