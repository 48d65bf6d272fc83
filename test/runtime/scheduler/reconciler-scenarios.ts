/**
 * End-to-end scenarios of the scheduler's reconciler on a real coordination backend. Nodes are fakes
 * that register as a node does (ephemeral membership with JSON meta, then the assignment znode), each
 * in its own session so that a crash is a session expiry.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { it } from 'node:test';
import { isCoordError } from '../../../src/coord/errors.js';
import { joinPath } from '../../../src/coord/paths.js';
import { mkdirp } from '../../../src/coord/tree-ops.js';
import type { CoordClient } from '../../../src/coord/types.js';
import { encode } from '../../../src/util/codec.js';
import { jobPaths } from '../../../src/runtime/job/job-paths.js';
import type { JobSpec } from '../../../src/runtime/job/job-spec.js';
import { assignNamedNode, setDesiredSize } from '../../../src/runtime/scheduler/job-sizing.js';
import { Reconciler } from '../../../src/runtime/scheduler/reconciler.js';
import { schedulerPaths } from '../../../src/runtime/scheduler/scheduler-paths.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import type { Backend } from '../../coord/backends.js';

const T = { timeout: 90_000 };
type Open = (sessionTimeoutMs?: number) => Promise<CoordClient>;

export interface Fixture {
  root: string;
  admin: CoordClient;
  nodes: Map<string, CoordClient>;
}

export async function fixture(open: Open): Promise<Fixture> {
  const admin = await open();
  return { root: `/sched/${randomUUID()}`, admin, nodes: new Map() };
}

/** Registers a fake node the way a node does: membership first, then its (idle) assignment. */
export async function addNode(f: Fixture, open: Open, id: string): Promise<CoordClient> {
  const c = await open();
  const p = schedulerPaths(f.root);
  await mkdirp(c, p.nodes);
  await mkdirp(c, p.assignments);
  await c.create(joinPath(p.nodes, id), Buffer.from(JSON.stringify({ address: 'fake', workers: 1, job: null })), 'ephemeral');
  await c.create(joinPath(p.assignments, id), Buffer.alloc(0));
  f.nodes.set(id, c);
  return c;
}

export async function addJob(f: Fixture, id: string, spec: { nodes: number; minNodes?: number; maxNodes?: number; createdAt?: number }): Promise<void> {
  const p = jobPaths(id, f.root);
  await mkdirp(f.admin, p.base);
  const full: JobSpec = {
    id, kind: { module: 'unused', export: 'default' }, kindSpec: null, label: 'unused', createdAt: spec.createdAt ?? Date.now(),
    nodes: { requested: spec.nodes, min: spec.minNodes ?? 1, ...(spec.maxNodes !== undefined ? { max: spec.maxNodes } : {}) },
  };
  await f.admin.create(p.spec, encode(full));
}

export const finishJob = (f: Fixture, id: string) => f.admin.create(jobPaths(id, f.root).result, encode({ status: 'done', value: null, finishedAt: Date.now(), completions: 0 }));

/** node → job ('' idle), as `reader` sees it now. */
export async function assignments(reader: CoordClient, root: string): Promise<Map<string, string>> {
  const dir = schedulerPaths(root).assignments;
  const out = new Map<string, string>();
  for (const id of await reader.getChildren(dir)) {
    try {
      out.set(id, (await reader.getData(joinPath(dir, id))).data.toString('utf8'));
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE')) throw err;
    }
  }
  return out;
}

export const nodesOf = (a: Map<string, string>, job: string) => [...a].filter(([, j]) => j === job).map(([n]) => n).sort();

/** Waits until `job` holds exactly `count` nodes (as the admin session sees it); returns them. */
export async function waitForSize(f: Fixture, job: string, count: number, timeoutMs = 30_000): Promise<string[]> {
  let last: string[] = [];
  await waitFor(async () => (last = nodesOf(await assignments(f.admin, f.root), job)).length === count, `job ${job} to hold ${count} nodes`, timeoutMs);
  return last;
}

/** Resolves after a pass of `r` whose view includes `job` (so a later assertion reflects it). */
export function seenJob(r: Reconciler, job: string): Promise<void> {
  return withDeadline(new Promise<void>((resolve) => {
    const off = r.on('planned', ({ view }) => {
      if (view.jobs.some((j) => j.id === job)) {
        off();
        resolve();
      }
    });
  }), `a pass that sees job ${job}`);
}

/** `client`, logging each read it makes ('data PATH', 'children PATH', 'exists PATH'). */
function loggingReads(client: CoordClient, log: string[]): CoordClient {
  const kinds: Record<string, string> = { getData: 'data', getChildren: 'children', exists: 'exists' };
  return new Proxy(client, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const kind = typeof prop === 'string' ? kinds[prop] : undefined;
      if (!kind) return value.bind(target);
      return (path: string, ...rest: unknown[]) => {
        log.push(`${kind} ${path}`);
        return (value as (...a: unknown[]) => unknown).call(target, path, ...rest);
      };
    },
  });
}

export function reconcilerScenarios(backend: () => Backend, open: Open): void {
  const started: Reconciler[] = [];
  const reconciler = async (f: Fixture, client?: CoordClient) => {
    const r = new Reconciler(client ?? (await open()), { root: f.root });
    started.push(r);
    await r.start();
    return r;
  };

  it('reconciler: a job queued while every node is busy starts when a job finishes', T, async () => {
    const f = await fixture(open);
    await addNode(f, open, 'n1');
    await addNode(f, open, 'n2');
    const r = await reconciler(f);
    await addJob(f, 'a', { nodes: 2, createdAt: 1 });
    assert.deepEqual(await waitForSize(f, 'a', 2), ['n1', 'n2']);
    const seen = seenJob(r, 'b');
    await addJob(f, 'b', { nodes: 2, createdAt: 2 });
    await seen;
    await r.idle();
    assert.deepEqual(nodesOf(await assignments(f.admin, f.root), 'b'), [], 'b waits while a holds every node');
    await finishJob(f, 'a');
    assert.deepEqual(await waitForSize(f, 'b', 2), ['n1', 'n2']);
    assert.ok(await f.admin.exists(schedulerPaths(f.root).started('b')), 'b is marked started');
    r.stop();
  });

  it('reconciler: in a steady cluster a pass reads the epoch, not every node and job again', T, async () => {
    const f = await fixture(open);
    for (const id of ['n1', 'n2', 'n3']) await addNode(f, open, id);
    const reads: string[] = [];
    const r = await reconciler(f, loggingReads(await open(), reads));
    await addJob(f, 'd', { nodes: 2 });
    assert.deepEqual(await waitForSize(f, 'd', 2), ['n1', 'n2']);
    await r.idle();
    // The job asks for a third node: the watch on its size brings the change, a pass plans and commits it.
    reads.length = 0;
    const { passes, commits } = r.stats;
    await setDesiredSize(f.admin, 'd', 3, f.root);
    assert.deepEqual(await waitForSize(f, 'd', 3), ['n1', 'n2', 'n3']);
    await r.idle();
    assert.ok(r.stats.passes > passes && r.stats.commits === commits + 1, 'a pass planned and committed the growth');
    const p = schedulerPaths(f.root);
    const again = reads.filter((x) => [`children ${p.nodes}`, `children ${p.assignments}`, `children ${p.jobs}`, `exists ${p.started('d')}`, `exists ${jobPaths('d', f.root).result}`].includes(x) ||
      (x.startsWith(`data ${p.assignments}/`) && x !== `data ${p.assignments}/n3`));
    assert.deepEqual(again, [], 'no pass re-read the node, assignment or job lists, the other nodes\' assignments or the job\'s markers');
    assert.ok(reads.includes(`data ${p.epoch}`), 'each pass reads the epoch');
    r.stop();
  });

  it('reconciler: a crashed node is replaced and its stale assignment removed', T, async () => {
    const f = await fixture(open);
    for (const id of ['n1', 'n2', 'n3']) await addNode(f, open, id);
    const r = await reconciler(f);
    const removed: string[] = [];
    r.on('removed', (id) => removed.push(id));
    await addJob(f, 'c', { nodes: 2, minNodes: 2, maxNodes: 3 });
    const first = await waitForSize(f, 'c', 2);
    assert.deepEqual(first, ['n1', 'n2']);
    await backend().expire(f.nodes.get('n1')!);
    await waitFor(async () => !(await assignments(f.admin, f.root)).has('n1'), 'the dead node\'s assignment to be deleted');
    assert.deepEqual(await waitForSize(f, 'c', 2), ['n2', 'n3'], 'n3 replaces the crashed n1 (a started job needs no min to resume)');
    assert.deepEqual(removed, ['n1']);
    // A node that registers again under the same id is a node like any other.
    await addNode(f, open, 'n1');
    await setDesiredSize(f.admin, 'c', 3, f.root);
    await waitForSize(f, 'c', 3);
    r.stop();
  });

  it('reconciler: min gates the start, max caps growth, shrinking releases the newest', T, async () => {
    const f = await fixture(open);
    await addNode(f, open, 'n1');
    await addNode(f, open, 'n2');
    const r = await reconciler(f);
    const seen = seenJob(r, 'm');
    await addJob(f, 'm', { nodes: 3, minNodes: 3, maxNodes: 4 });
    await seen;
    await r.idle();
    assert.deepEqual(nodesOf(await assignments(f.admin, f.root), 'm'), [], 'two nodes are not enough for min 3');
    await addNode(f, open, 'n3');
    assert.deepEqual(await waitForSize(f, 'm', 3), ['n1', 'n2', 'n3']);
    await addNode(f, open, 'n4');
    await addNode(f, open, 'n5');
    await setDesiredSize(f.admin, 'm', 10, f.root);
    assert.deepEqual(await waitForSize(f, 'm', 4), ['n1', 'n2', 'n3', 'n4'], 'grows to max 4, not 10');
    await r.idle();
    assert.equal((await assignments(f.admin, f.root)).get('n5'), '', 'n5 stays idle: max reached');
    await setDesiredSize(f.admin, 'm', 1, f.root);
    assert.deepEqual(await waitForSize(f, 'm', 3), ['n1', 'n2', 'n3'], 'desired 1 is clamped to min 3; n4, assigned last, goes');
    r.stop();
  });

  it('reconciler: a named node is assigned with the desired size, so it is kept', T, async () => {
    const f = await fixture(open);
    for (const id of ['n1', 'n2', 'n3']) await addNode(f, open, id);
    const r = await reconciler(f);
    await addJob(f, 'p', { nodes: 1, maxNodes: 2 });
    await addJob(f, 'q', { nodes: 1 });
    await waitForSize(f, 'p', 1);
    await waitForSize(f, 'q', 1);
    await assignNamedNode(f.admin, 'n3', 'p', f.root);
    assert.equal((await f.admin.getData(schedulerPaths(f.root).size('p'))).data.toString(), '2');
    await r.idle();
    assert.deepEqual(await waitForSize(f, 'p', 2), ['n1', 'n3']);
    await assert.rejects(assignNamedNode(f.admin, 'n2', 'p', f.root), /node n2 is assigned to job q; drain it first/);
    await assert.rejects(assignNamedNode(f.admin, 'n9', 'p', f.root), /no node n9 in the cluster/);
    await assert.rejects(assignNamedNode(f.admin, 'n1', 'nope', f.root), /no job nope/);
    await assert.rejects(setDesiredSize(f.admin, 'p', -1, f.root), /whole number ≥ 0, got -1/);
    await finishJob(f, 'q');
    await waitForSize(f, 'q', 0);
    await assert.rejects(assignNamedNode(f.admin, 'n2', 'p', f.root), /job p already wants its maximum of 2 nodes/);
    await assert.rejects(assignNamedNode(f.admin, 'n2', 'q', f.root), /job q has finished/);
    r.stop();
  });

  it('reconciler: two at once never give a job two plans\' nodes (the epoch fences stale plans)', T, async () => {
    const f = await fixture(open);
    for (const id of ['n1', 'n2', 'n3']) await addNode(f, open, id);
    await addJob(f, 'k', { nodes: 1, createdAt: 1 });
    await addJob(f, 'j', { nodes: 1, maxNodes: 2, createdAt: 2 });
    // B's commits can be held at a gate, so that B's plan is made before, and committed after, A's work.
    let gate: Promise<void> | undefined;
    let open_ = () => undefined as void;
    let arrived = () => undefined as void;
    const atGate = new Promise<void>((resolve) => (arrived = resolve));
    const raw = await open();
    const gated = new Proxy(raw, {
      get(target, key) {
        if (key === 'multi' && gate) {
          const held = gate;
          return async (ops: Parameters<CoordClient['multi']>[0]) => {
            arrived();
            await held;
            return target.multi(ops);
          };
        }
        const v: unknown = Reflect.get(target, key, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const b = await reconciler(f, gated);
    assert.deepEqual(await waitForSize(f, 'k', 1), ['n1']);
    assert.deepEqual(await waitForSize(f, 'j', 1), ['n2']);
    gate = new Promise<void>((resolve) => (open_ = resolve));
    await setDesiredSize(f.admin, 'j', 2, f.root);
    await withDeadline(atGate, 'B to plan n3 → j and reach its commit');
    // Meanwhile k finishes, its node n1 clears its own assignment (as a node does), and A (not gated)
    // gives n1, the lowest idle id, to j — a plan disjoint from B's.
    await finishJob(f, 'k');
    await f.admin.setData(joinPath(schedulerPaths(f.root).assignments, 'n1'), Buffer.alloc(0));
    const a = await reconciler(f);
    assert.deepEqual(await waitForSize(f, 'j', 2), ['n1', 'n2']);
    await a.idle();
    a.stop();
    const bCommitted: string[] = [];
    b.on('committed', (ds) => bCommitted.push(...ds.map((d) => `${d.node}:${d.from}>${d.to}`)));
    gate = undefined;
    open_();
    await b.idle();
    assert.ok(b.stats.conflicts >= 1, 'B\'s stale plan failed');
    assert.deepEqual(bCommitted, [], 'B committed nothing after its stale plan');
    assert.deepEqual(nodesOf(await assignments(f.admin, f.root), 'j'), ['n1', 'n2'], 'j (max 2) never got B\'s node as well');
    b.stop();
  });

  it('reconciler: two running together converge on one assignment per job', T, async () => {
    const f = await fixture(open);
    for (let i = 1; i <= 6; i++) await addNode(f, open, `n${i}`);
    const rs = await Promise.all([reconciler(f), reconciler(f)]);
    const decided: string[] = [];
    for (const r of rs) r.on('committed', (ds) => decided.push(...ds.map((d) => `${d.node}:${d.from}>${d.to}`)));
    await Promise.all([addJob(f, 'x', { nodes: 2, createdAt: 1 }), addJob(f, 'y', { nodes: 3, createdAt: 2 }), addJob(f, 'z', { nodes: 2, minNodes: 2, createdAt: 3 })]);
    await waitForSize(f, 'x', 2);
    await waitForSize(f, 'y', 3);
    await Promise.all(rs.map((r) => r.idle()));
    assert.deepEqual(nodesOf(await assignments(f.admin, f.root), 'z'), [], 'z (2) waits: one node is left');
    assert.ok(decided.every((d) => !d.endsWith('>')), `no node was released as surplus: ${decided.join(' ')}`);
    assert.equal(decided.length, 5, `each node was assigned once: ${decided.join(' ')}`);
    await finishJob(f, 'x');
    await waitForSize(f, 'z', 2);
    for (const r of rs) r.stop();
  });

  it('reconciler: ends when its session expires', T, async () => {
    const f = await fixture(open);
    const c = await open();
    const r = await reconciler(f, c);
    const ended = new Promise((resolve) => r.on('ended', resolve));
    await backend().expire(c);
    assert.equal(await withDeadline(ended, 'the reconciler to end', 30_000), 'expired');
  });
}
