/**
 * RUPER-LB moves work (RUPER-LB §2.1–2.2, Fig. 6–7), end to end on two `tidepool node` processes
 * × 2 worker threads over ZooKeeper and real TCP. The application is paced by the test: each chunk of
 * 50 iterations sleeps 5 ms, except on node B's worker slot 0, where it sleeps 20 ms — one thread four
 * times slower, whatever the machine's load. Static would leave every thread a quarter of the blocks
 * (B's slow thread working four times as long as the others); the test asserts, from the application's
 * own log of which thread ran which chunk and when (not from the balancer's figures), that iterations
 * moved from the slow thread to the fast thread of its node and from the slow node to the fast one,
 * that the four threads finished within Δt_pc of each other (each thread's finish is the end of its
 * last chunk, to the millisecond), and that the result is bit-identical to the sequential fold.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { iterateSequentially, submitIterative, type IterativeOptions } from '../../../src/frameworks/iterative/run-iterative.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';
import paced from './apps/paced.js';
import type { Checksum } from './apps/checksum.js';

const APP = { module: new URL('./apps/paced.ts', import.meta.url).href, export: 'default' };
const DT_PC = 0.5;
/**
 * 1,600 blocks of 2 chunks: a fast thread runs 100 blocks/s, the slow one 25, so the balanced job
 * takes about 1600 / 325 ≈ 5 s (10 Δt_pc) and a static one 16 s.
 */
const OPTS: IterativeOptions<{ work: number; chunkMs: number }> = {
  iterations: 160_000, params: { work: 2, chunkMs: 5 }, blockSize: 100, chunkSize: 50, balance: 'ruper',
  ruper: { checkpointInterval: DT_PC, minRemaining: 0.1 },
};
const N = OPTS.iterations!;

interface Chunk { slot: number; first: number; count: number; end: number }

const readLog = (file: string): Chunk[] =>
  readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => {
    const [slot, first, count, end] = line.split(' ').map(Number);
    return { slot: slot!, first: first!, count: count!, end: end! };
  });

/** Each thread's runs of consecutive blocks and when it ran them (s from the first chunk): what a failure shows. */
function timeline(logs: Record<string, Chunk[]>): string {
  const t0 = Math.min(...Object.values(logs).flatMap((log) => log.map((c) => c.end)));
  const B = OPTS.blockSize!;
  return Object.entries(logs).flatMap(([node, log]) => [0, 1].map((slot) => {
    const runs: Array<{ lo: number; hi: number; from: number; to: number }> = [];
    for (const c of log.filter((x) => x.slot === slot).sort((x, y) => x.end - y.end)) {
      const last = runs[runs.length - 1];
      if (last && last.hi === c.first) Object.assign(last, { hi: c.first + c.count, to: c.end });
      else runs.push({ lo: c.first, hi: c.first + c.count, from: c.end, to: c.end });
    }
    const s = (ms: number) => ((ms - t0) / 1000).toFixed(2);
    return `  ${node} thread ${slot}: ${runs.map((r) => `blocks ${r.lo / B}-${Math.ceil(r.hi / B) - 1} ${s(r.from)}-${s(r.to)} s`).join(', ')}`;
  })).join('\n');
}

describe('RUPER moves work from a slow thread and node to fast ones', () => {
  let zk: ZkEnsemble;
  let cluster: Cluster;
  let dir: string;
  const nodes: NodeProcess[] = [];

  before(async () => {
    zk = await startEnsemble({ size: 1 });
    dir = mkdtempSync(join(tmpdir(), 'tidepool-ruper-moves-'));
    const secret = secretFile();
    nodes.push(...await Promise.all([
      startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 2, env: { PACED_CHUNK_MS: '5,5', PACED_LOG: join(dir, 'A.log') } }),
      startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 2, env: { PACED_CHUNK_MS: '20,5', PACED_LOG: join(dir, 'B.log') } }),
    ]));
    cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
  });
  after(async () => {
    await cluster?.close();
    for (const n of nodes) n.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    await zk?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('moves iterations to the fast node and thread, finishes within Δt_pc, bit-identical', { timeout: 180_000 }, async (t) => {
    await waitFor(async () => (await cluster.nodes()).filter((x) => x.assignment === '').length >= 2, 'two idle nodes', 60_000);
    const job = await submitIterative(cluster, APP, { ...OPTS, nodes: 2 });
    const r = await withDeadline(job.result<{ n: number; v: Checksum }>(), 'the ruper job\'s result', 120_000);
    assert.equal(r.v.count, N, 'every iteration counted once');
    assert.deepEqual(r.v, iterateSequentially(paced, OPTS).value, 'bit-identical to the sequential fold');

    const a = readLog(join(dir, 'A.log'));
    const b = readLog(join(dir, 'B.log'));
    const did = (log: Chunk[], slot?: number) => log.filter((c) => slot === undefined || c.slot === slot).reduce((s, c) => s + c.count, 0);
    const [onA, slow, fastOfB] = [did(a), did(b, 0), did(b, 1)];
    const shares = `A ${onA} (threads ${did(a, 0)} + ${did(a, 1)}), B's slow thread ${slow}, B's fast thread ${fastOfB}, of ${N}\n${timeline({ A: a, B: b })}`;
    assert.equal(onA + slow + fastOfB, N, `every iteration ran once (no chunk run twice): ${shares}`);
    // At the start each node holds N/2 and each thread N/4. Balanced, A's share is 200/325 ≈ 62 %,
    // the slow thread's 25/325 ≈ 8 % and B's fast thread's 100/325 ≈ 31 %.
    assert.ok(onA >= 0.55 * N, `iterations moved from node B to node A: ${shares}`);
    assert.ok(slow <= 0.15 * N, `iterations moved away from the slow thread: ${shares}`);
    assert.ok(fastOfB > N / 4, `B's fast thread took some of the slow thread's iterations: ${shares}`);

    // Each thread's finish: the end of its last chunk (ms since the epoch, one machine's clock).
    const finishes = [...[0, 1].map((s) => ['A', s, a] as const), ...[0, 1].map((s) => ['B', s, b] as const)].map(([node, s, log]) => ({
      thread: `${node} thread ${s}`, at: Math.max(...log.filter((c) => c.slot === s).map((c) => c.end)),
    }));
    const first = Math.min(...finishes.map((f) => f.at));
    const spread = (Math.max(...finishes.map((f) => f.at)) - first) / 1000;
    const when = finishes.map((f) => `${f.thread} +${((f.at - first) / 1000).toFixed(3)} s`).join(', ');
    t.diagnostic(`finish spread ${spread.toFixed(3)} s (${when}); ${shares.split('\n')[0]}`);
    assert.ok(spread <= DT_PC, `the threads finished within Δt_pc = ${DT_PC} s of each other: ${spread.toFixed(3)} s (${when}; ${shares})`);
  });
});
