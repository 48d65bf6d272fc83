/**
 * Reruns are never wrong, on an embedded cluster: random workflows of function tasks (apps/mix.ts,
 * each writing a digest of its inputs and salt) are run, edited at random and run again in the same
 * shared directory — a task's arguments changed, a task deleted, one added, a file the last run left
 * deleted, a workflow input changed (or only touched, compared by content), the workflow renamed,
 * and another random workflow of the same name and the same file names swapped in. After each rerun:
 * the tasks that ran (each task logs its id, apart from the runtime's journal) are exactly those a
 * reference model of the rules expects, each once; `--dry-run`'s list is that set; every final output
 * equals what evaluating the workflow afresh gives; and a further run has nothing to do.
 *
 * The reference model knows tasks by a structural identity (salt, file names, its workflow inputs'
 * stamps and its producers' identities, as strings) and what the earlier runs observably did (which
 * tasks logged, and the stamps of the files they left), not by the fingerprints and journal under test.
 */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { plannedTasks } from '../../../src/frameworks/workflow/prepare-run.js';
import { planWorkflowRun, runWorkflow } from '../../../src/frameworks/workflow/run-workflow.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import { Rng } from '../../../src/util/rng.js';
import { testSeeds } from '../../support/seeds.js';
import { mixContent } from './apps/mix.js';
import { embeddedFixture } from './embedded-fixture.js';

const MIX = { module: new URL('./apps/mix.ts', import.meta.url).href, export: 'mix' };
const INPUTS = ['in0', 'in1', 'in2'];
const T = { timeout: 300_000 };

interface TaskSpec { id: string; salt: string; inputs: string[]; outputs: string[]; parents: string[] }
interface Spec { name: string; tasks: TaskSpec[] }
type Storage = 'collocated' | 'shared';
type Detection = 'mtime' | 'content';

let fileSeq = 0;
function randomSpec(rng: Rng, name: string, firstFile = 0): Spec {
  fileSeq = firstFile;
  const tasks: TaskSpec[] = [];
  const n = rng.int(4, 9);
  for (let i = 0; i < n; i++) {
    const available = [...INPUTS, ...tasks.flatMap((t) => t.outputs)];
    const inputs = [...new Set(Array.from({ length: rng.int(0, 2) }, () => rng.pick(available)))];
    const outputs = Array.from({ length: rng.int(1, 2) }, () => `f${fileSeq++}`);
    const parents = i > 0 && rng.chance(0.25) ? [rng.pick(tasks).id] : [];
    tasks.push({ id: `t${i}`, salt: `s${rng.int(0, 999)}`, inputs, outputs, parents });
  }
  return { name, tasks };
}

function build(spec: Spec, log: string): WorkflowBuilder {
  const b = new WorkflowBuilder(spec.name);
  for (const t of spec.tasks) b.fn(t.id, MIX, { inputs: t.inputs, outputs: t.outputs, args: [log, t.salt, ...t.outputs], parents: t.parents });
  return b;
}

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const stampNow = (path: string) => {
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  return st ? `${st.size}:${st.mtimeNs}` : undefined;
};

/** What the earlier runs observably did: identities of tasks that logged, stamps of the files they left. */
interface Observed { done: Set<string>; written: Map<string, string> }

/** The reference model: which tasks must run (and which run again only to recreate files), from identities. */
function expectedRun(spec: Spec, shared: string, observed: Observed, storage: Storage, detection: Detection) {
  const byId = new Map(spec.tasks.map((t) => [t.id, t]));
  const producer = new Map<string, TaskSpec>();
  for (const t of spec.tasks) for (const o of t.outputs) producer.set(o, t);
  const readers = new Set(spec.tasks.flatMap((t) => t.inputs));
  const idents = new Map<string, string>();
  const ident = (t: TaskSpec): string => {
    let id = idents.get(t.id);
    if (id === undefined) {
      const ins = t.inputs.map((n) => {
        const p = producer.get(n);
        if (p) return `${n}=${ident(p)}`;
        return `${n}=input:${detection === 'content' ? sha(readFileSync(join(shared, n))) : stampNow(join(shared, n))}`;
      });
      id = `${t.salt}|out:${t.outputs.join(',')}|in:${ins.join(',')}|par:${t.parents.map((p) => ident(byId.get(p)!)).join(',')}`;
      idents.set(t.id, id);
    }
    return id;
  };
  const intact = (t: TaskSpec, name: string) => {
    const recorded = observed.written.get(`${ident(t)}\u0000${name}`);
    return recorded !== undefined && recorded === stampNow(join(shared, name));
  };
  const runs = new Set<string>();
  for (const t of spec.tasks) {
    const must = !observed.done.has(ident(t)) || t.parents.some((p) => runs.has(p)) || t.inputs.some((n) => producer.has(n) && runs.has(producer.get(n)!.id)) ||
      t.outputs.some((o) => !readers.has(o) && !intact(t, o));
    if (must) runs.add(t.id);
  }
  const recreate = new Set<string>();
  for (const t of [...spec.tasks].reverse()) {
    if (!runs.has(t.id) && !recreate.has(t.id)) continue;
    for (const n of t.inputs) {
      const p = producer.get(n);
      if (p && !runs.has(p.id) && !intact(p, n)) recreate.add(p.id);
    }
  }
  return { runs, recreate, ident, writesShared: (name: string) => !readers.has(name) || storage === 'shared' };
}

/** The final outputs as a fresh evaluation of the workflow gives them (mix's content, from the inputs in `shared`). */
function freshOutputs(spec: Spec, shared: string): Map<string, string> {
  const content = new Map<string, Uint8Array>();
  for (const n of INPUTS) content.set(n, readFileSync(join(shared, n)));
  for (const t of spec.tasks) {
    const inputs = Object.fromEntries(t.inputs.map((n) => [n, content.get(n)!]));
    for (const o of t.outputs) content.set(o, new TextEncoder().encode(mixContent(o, t.salt, inputs)));
  }
  const readers = new Set(spec.tasks.flatMap((t) => t.inputs));
  const out = new Map<string, string>();
  for (const t of spec.tasks) for (const o of t.outputs) if (!readers.has(o)) out.set(o, new TextDecoder().decode(content.get(o)));
  return out;
}

const EDITS = ['args', 'delete-task', 'add-task', 'delete-file', 'input', 'rename', 'swap'] as const;
type Edit = (typeof EDITS)[number] | 'touch';

function applyEdit(edit: Edit, spec: Spec, rng: Rng, shared: string, storage: Storage): Spec {
  const tasks = spec.tasks.map((t) => ({ ...t, inputs: [...t.inputs], outputs: [...t.outputs], parents: [...t.parents] }));
  switch (edit) {
    case 'args': {
      const t = rng.pick(tasks);
      t.salt = `${t.salt}x`;
      return { ...spec, tasks };
    }
    case 'delete-task': {
      const gone = rng.pick(tasks);
      const left = tasks.filter((t) => t !== gone);
      for (const t of left) {
        t.inputs = t.inputs.filter((n) => !gone.outputs.includes(n));
        t.parents = t.parents.filter((p) => p !== gone.id);
      }
      return { ...spec, tasks: left };
    }
    case 'add-task': {
      const available = [...INPUTS, ...tasks.flatMap((t) => t.outputs)];
      const inputs = [...new Set([rng.pick(available), rng.pick(available)])];
      tasks.push({ id: `added${tasks.length}-${rng.int(0, 999)}`, salt: 'new', inputs, outputs: [`g${fileSeq++}`], parents: [] });
      return { ...spec, tasks };
    }
    case 'delete-file': {
      // A file the last run left in the shared directory: an intermediate one in the shared storage mode, else a final output.
      const readers = new Set(tasks.flatMap((t) => t.inputs));
      const written = tasks.flatMap((t) => t.outputs).filter((n) => stampNow(join(shared, n)) !== undefined);
      const intermediates = written.filter((n) => readers.has(n));
      const candidates = storage === 'shared' && intermediates.length > 0 ? intermediates : written.filter((n) => !readers.has(n));
      unlinkSync(join(shared, rng.pick(candidates)));
      return spec;
    }
    case 'input':
      appendFileSync(join(shared, rng.pick(INPUTS)), `changed ${rng.int(0, 1e6)}\n`);
      return spec;
    case 'touch': {
      const later = new Date(Date.now() + 5_000);
      utimesSync(join(shared, rng.pick(INPUTS)), later, later);
      return spec;
    }
    case 'rename':
      return { ...spec, name: `${spec.name}-renamed` };
    case 'swap':
      return randomSpec(rng, spec.name);
  }
}

describe('reruns on an embedded cluster: exactly the affected tasks, outputs as a fresh run', () => {
  const fixture = embeddedFixture({ nodes: 2, workers: 1, prefix: 'wf-rerun-' });

  for (const seed of testSeeds([101, 202, 303, 404, 505, 606, 707, 808, 909, 1010])) {
    const storage: Storage = seed % 2 === 0 ? 'shared' : 'collocated';
    const detection: Detection = seed % 5 === 0 ? 'content' : 'mtime';
    it(`seed ${seed}: ${storage} storage, changes by ${detection}: every edit in turn`, T, async () => {
      const rng = new Rng(seed);
      const shared = fixture.fresh();
      const log = join(fixture.fresh(), 'ran.log');
      for (const n of INPUTS) writeFileSync(join(shared, n), `${n} of seed ${seed}\n`);
      const observed: Observed = { done: new Set(), written: new Map() };
      let spec = randomSpec(rng, 'test');
      const edits: Edit[] = [...EDITS].sort(() => rng.next() - 0.5);
      if (detection === 'content') edits.splice(rng.int(0, edits.length), 0, 'touch');

      for (const edit of ['initial', ...edits] as const) {
        if (edit !== 'initial') spec = applyEdit(edit, spec, rng, shared, storage);
        const what = `after edit "${edit}" (seed ${seed})`;
        const builder = build(spec, log);
        const wf = builder.build();
        const expected = expectedRun(spec, shared, observed, storage, detection);
        const opts = { builder, shared, nodes: 2, storage, detection };
        const prepared = await planWorkflowRun(wf, opts);
        const planned = plannedTasks(prepared);
        assert.deepEqual(new Set(planned.filter((p) => !p.recreate).map((p) => p.id)), expected.runs, `tasks planned to run ${what}`);
        assert.deepEqual(new Set(planned.filter((p) => p.recreate).map((p) => p.id)), expected.recreate, `tasks planned to recreate files ${what}`);
        writeFileSync(log, '');
        const result = await runWorkflow(fixture.cluster, wf, { ...opts, prepared });
        const ran = readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
        assert.deepEqual([...ran].sort(), [...expected.runs, ...expected.recreate].sort(), `tasks that ran ${what}, each once`);
        assert.equal(result.nothingToDo === true, ran.length === 0, `nothing to do exactly when nothing ran ${what}`);
        for (const [name, content] of freshOutputs(spec, shared)) assert.equal(readFileSync(join(shared, name), 'utf8'), content, `final output ${name} ${what}`);
        // What the reference model learns from this run: who logged, and the files they left (stamped now).
        for (const id of ran) {
          const t = spec.tasks.find((x) => x.id === id)!;
          const ident = expected.ident(t);
          observed.done.add(ident);
          for (const o of t.outputs) if (expected.writesShared(o)) observed.written.set(`${ident}\u0000${o}`, stampNow(join(shared, o))!);
        }
        writeFileSync(log, '');
        const again = await runWorkflow(fixture.cluster, wf, opts);
        assert.equal(again.nothingToDo, true, `a complete workflow has nothing to do ${what}`);
        assert.equal(readFileSync(log, 'utf8'), '', `nothing ran on the run after ${what}`);
      }
    });
  }
});
