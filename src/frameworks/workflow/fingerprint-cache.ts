/**
 * The fingerprints of the last plan of a workflow kept compiled (compiled-workflow.ts), so that a
 * rerun hashes only the tasks an input change reaches: `<state>/compiled/<content key>.fingerprints`
 * holds every task's fingerprint with the input stamps and settings they were computed with. A task
 * keeps its fingerprint when none of its inputs' stamps changed and none of its parents' fingerprints
 * was computed again; everything else is computed as computeFingerprints would (same function). The
 * content key names the workflow file's (and its sub-workflows') stamps, so an edited file has no
 * kept fingerprints; the settings are the replay scale, how inputs are compared, and the programs the
 * catalogs resolved (a different executable changes a task's recipe).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { computeFingerprints, fingerprintOf, type FingerprintInputs } from './fingerprint.js';
import type { Workflow } from './workflow.js';

const FORMAT = 1;
const WIDTH = 32;

interface Kept {
  format: number;
  settings: string;
  tasks: number;
  /** Each workflow input's stamp as fingerprinted, by file number ('' for other files). */
  stamps: string[];
  fingerprints: string;
}

const keptPath = (stateDir: string, contentKey: string) => join(stateDir, 'compiled', `${contentKey}.fingerprints`);

function settingsOf(workflow: Workflow, how: FingerprintInputs): string {
  const programs = createHash('sha256');
  if (how.replay === undefined) for (const t of workflow.tasks) if (t.command) programs.update(`${t.command.program}\u0000`);
  return `${FORMAT}\u0000${how.replay ?? 'no'}\u0000${programs.digest('hex')}`;
}

/**
 * Every task's fingerprint as computeFingerprints gives it, from the kept ones where nothing they
 * depend on changed (a workflow without a content key is fingerprinted in full). Keeps the result.
 */
export function fingerprintsReusing(workflow: Workflow, how: FingerprintInputs, stateDir: string): string[] {
  const key = workflow.contentKey;
  if (key === undefined || how.programStamp) return computeFingerprints(workflow, how);
  const settings = settingsOf(workflow, how);
  const stamps: string[] = new Array(workflow.files.length).fill('');
  for (let f = 0; f < workflow.files.length; f++) {
    const file = workflow.files[f]!;
    if (file.producer < 0 && !file.marker) stamps[f] = how.inputStamp(f);
  }
  let kept: Kept | undefined;
  try {
    kept = JSON.parse(readFileSync(keptPath(stateDir, key), 'utf8')) as Kept;
  } catch {
    kept = undefined;
  }
  let fps: string[];
  if (!kept || kept.format !== FORMAT || kept.settings !== settings || kept.tasks !== workflow.tasks.length || kept.stamps.length !== stamps.length) {
    fps = computeFingerprints(workflow, how);
  } else {
    fps = new Array(workflow.tasks.length);
    const again = new Uint8Array(workflow.tasks.length);
    for (const t of workflow.order) {
      const task = workflow.tasks[t]!;
      let changed = false;
      for (const f of task.inputs) {
        const file = workflow.files[f]!;
        if (file.producer >= 0 ? again[file.producer] === 1 : !file.marker && stamps[f] !== kept.stamps[f]) {
          changed = true;
          break;
        }
      }
      if (changed) {
        fps[t] = fingerprintOf(workflow, t, fps, how);
        again[t] = fps[t] !== kept.fingerprints.slice(t * WIDTH, (t + 1) * WIDTH) ? 1 : 0;
      } else fps[t] = kept.fingerprints.slice(t * WIDTH, (t + 1) * WIDTH);
    }
  }
  try {
    mkdirSync(join(stateDir, 'compiled'), { recursive: true });
    const path = keptPath(stateDir, key);
    writeFileSync(`${path}.tmp`, JSON.stringify({ format: FORMAT, settings, tasks: fps.length, stamps, fingerprints: fps.join('') } satisfies Kept));
    renameSync(`${path}.tmp`, path);
  } catch {
    // Not kept (a read-only state directory): the next plan fingerprints every task.
  }
  return fps;
}
