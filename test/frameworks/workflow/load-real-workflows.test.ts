/**
 * Every workflow file in test/data/workflows (a subset of the curated data set: each format and quirk
 * the loaders handle) loads with the task, edge and file counts, total runtime, depth and critical
 * path the curators computed independently (SUMMARY.computed.json: edges are the file's explicit
 * edges, the critical path the longest chain of recorded runtimes). The loader's enforced
 * dependencies (explicit ∪ file-implied) add nothing on these files once names written by several
 * tasks are resolved per writer. (The whole curated set, 41 files, loads in bench/workflow-load.ts
 * given `--data DIR`.)
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadWorkflow } from '../../../src/frameworks/workflow/load-workflow.js';

const DIR = fileURLToPath(new URL('../../data/workflows/', import.meta.url));
interface Expected { tasks: number; edges: number; files?: number; critical_path_s: number; total_runtime_s: number; depth: number; jobCount_attr?: string }
const summary = JSON.parse(readFileSync(DIR + 'SUMMARY.computed.json', 'utf8')) as Record<string, Expected>;
/** Every workflow file here (licence texts and the summary apart), as a path relative to DIR. */
const FILES = (readdirSync(DIR, { recursive: true }) as string[])
  .filter((f) => /\.(xml|json)$/.test(f) && f !== 'SUMMARY.computed.json')
  .sort();

describe('real workflow files', () => {
  it('the in-repo subset covers every format and each file has the curators\' figures', () => {
    for (const prefix of ['pegasus-dax-2.1/', 'wfformat-v1.5/', 'wfcommons-v1.4/']) assert.ok(FILES.some((f) => f.startsWith(prefix)), prefix);
    assert.ok(FILES.length >= 20, `${FILES.length} files`);
    for (const f of FILES) assert.ok(summary[f], `${f} has an entry in SUMMARY.computed.json`);
  });

  for (const path of FILES) {
    const want = summary[path];
    if (!want) continue; // reported by the test above
    it(path, async () => {
      const wf = await loadWorkflow(DIR + path);
      const c = wf.counts;
      assert.equal(c.tasks, want.tasks, 'tasks');
      assert.equal(c.explicitEdges, want.edges, 'explicit edges');
      assert.equal(c.edges, want.edges, 'enforced edges (explicit ∪ file-implied)');
      if (want.files !== undefined) assert.equal(c.files, want.files, 'distinct files');
      assert.ok(Math.abs(c.criticalPath - want.critical_path_s) < 0.006, `critical path ${c.criticalPath} vs ${want.critical_path_s}`);
      assert.ok(Math.abs(c.totalRuntime - want.total_runtime_s) < 0.01, `total runtime ${c.totalRuntime} vs ${want.total_runtime_s}`);
      assert.equal(c.depth, want.depth, 'depth');
      if (want.jobCount_attr !== undefined && Number(want.jobCount_attr) !== want.tasks) {
        assert.ok(wf.warnings.some((w) => w.includes(`jobCount says ${want.jobCount_attr}`)), 'the unreliable jobCount is reported');
      }
      // The order puts every parent before its children.
      const position = new Int32Array(c.tasks);
      wf.order.forEach((t, i) => (position[t] = i));
      for (let t = 0; t < c.tasks; t++) for (const p of wf.tasks[t]!.parents) assert.ok(position[p]! < position[t]!);
    });
  }

  it('WfFormat 1.4 (parents by name, inline files) and 1.5 (parents by id, runtimes apart) give the same graph', async () => {
    const old = await loadWorkflow(DIR + 'wfcommons-v1.4/montage-chameleon-2mass-005d-001.json');
    const cur = await loadWorkflow(DIR + 'wfformat-v1.5/pegasus/montage/montage-chameleon-2mass-005d-001.json');
    assert.equal(old.format, 'WfFormat 1.4');
    assert.equal(cur.format, 'WfFormat 1.5');
    const edges = (w: typeof old) => new Set(w.tasks.flatMap((t) => t.parents.map((p) => `${w.tasks[p]!.name}>${t.name}`)));
    assert.deepEqual(edges(old), edges(cur));
    const sizes = (w: typeof old) => new Map(w.files.map((f) => [f.name, f.size]));
    assert.deepEqual(sizes(old), sizes(cur));
    assert.equal(cur.tasks[cur.taskIndex('mProject_ID0000001')]!.runtime, 16.712, 'runtime from the execution list');
  });

  it('jobs out of dependency order (epigenomics 1.5) still order parents first', async () => {
    const wf = await loadWorkflow(DIR + 'wfformat-v1.5/pegasus/epigenomics/epigenomics-chameleon-hep-1seq-100k-001.json');
    const late = wf.tasks.some((t, i) => t.parents.some((p) => p > i));
    assert.ok(late, 'the file lists some child before its parent');
  });
});
