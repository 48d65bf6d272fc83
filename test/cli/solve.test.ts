/**
 * `tidepool solve` as a user runs it (the built CLI): results as JSON on real instances, clear
 * errors for malformed input (file:line, exit 2), scaling mid-run, and a run on node processes
 * registered on ZooKeeper.
 */
import assert from 'node:assert/strict';
import { assertCleanError, tidepool } from '../support/cli.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { knapsackByDynamicProgramming, randomKnapsack } from '../../src/frameworks/search/knapsack/knapsack-format.js';
import { NQUEENS_SOLUTIONS } from '../../src/frameworks/search/nqueens/known-counts.js';
import { secretForLocalNodes } from '../../src/cli/options.js';
import { secretFile, startNodeProcess, type NodeProcess } from '../support/node-process.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { waitFor } from '../support/wait.js';
import { childEnv } from '../support/child-env.js';

const DATA = fileURLToPath(new URL('../data/', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/tidepool.mjs', import.meta.url));

/** The live child processes of `pid` (Linux /proc). */
function childPids(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}



interface SolveJson { problem: string; objective: number; solution: number[] | null; verified: boolean | null; stats: Record<string, number> }

async function solveJson(args: string[]): Promise<SolveJson> {
  const run = await tidepool(['solve', ...args, '--json']);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as SolveJson;
}

function tmpFile(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tp-solve-')), name);
  writeFileSync(file, text);
  return file;
}


describe('the secret of local node processes', () => {
  it('a fresh random one in the environment unless the user gave one; a given one is checked', () => {
    const saved = process.env.TIDEPOOL_SECRET;
    try {
      delete process.env.TIDEPOOL_SECRET;
      assert.equal(secretForLocalNodes(undefined), 'fresh');
      const first = process.env.TIDEPOOL_SECRET!;
      assert.ok(Buffer.from(first, 'base64url').length >= 32, 'at least 32 random bytes');
      delete process.env.TIDEPOOL_SECRET;
      assert.equal(secretForLocalNodes(undefined), 'fresh');
      assert.notEqual(process.env.TIDEPOOL_SECRET, first, 'fresh each time');
      assert.equal(secretForLocalNodes(undefined), 'given', 'a secret in the environment wins');
      assert.equal(secretForLocalNodes(tmpFile('s', 'a-secret-of-enough-length\n')), 'given');
      assert.throws(() => secretForLocalNodes(tmpFile('s', 'short')), /--secret-file .*: line 1 holds 5 bytes; a cluster secret needs at least 16/);
      process.env.TIDEPOOL_SECRET = 'short';
      assert.throws(() => secretForLocalNodes(undefined), /TIDEPOOL_SECRET: line 1 holds \d+ bytes; a cluster secret needs at least 16/);
    } finally {
      if (saved === undefined) delete process.env.TIDEPOOL_SECRET;
      else process.env.TIDEPOOL_SECRET = saved;
    }
  });
});

describe('tidepool solve', () => {
  it('TSP on a TSPLIB instance: optimum, tour from city 1, verified, all stats', { timeout: 120_000 }, async () => {
    const r = await solveJson(['tsp', join(DATA, 'tsplib/burma14.tsp'), '--nodes', '2', '--workers', '1']);
    assert.equal(r.problem, 'tsp');
    assert.equal(r.objective, 3323);
    assert.equal(r.verified, true);
    assert.equal(r.solution![0], 1);
    assert.deepEqual([...r.solution!].sort((a, b) => a - b), Array.from({ length: 14 }, (_, i) => i + 1));
    for (const key of ['seconds', 'searchNodes', 'tasks', 'steals', 'migrations', 'nodesJoined', 'nodesLeft']) assert.equal(typeof r.stats[key], 'number', key);
  });

  it('clique, knapsack and n-queens', { timeout: 120_000 }, async () => {
    const c = await solveJson(['clique', join(DATA, 'clique/johnson8-4-4.clq')]);
    assert.equal(c.objective, 14);
    assert.equal(c.verified, true);
    const k = randomKnapsack(40, 5);
    const file = tmpFile('k.txt', `# random\n${k.values.length} ${k.capacity}\n${k.values.map((v, i) => `${v} ${k.weights[i]}`).join('\n')}\n`);
    const ks = await solveJson(['knapsack', file, '--nodes', '2', '--workers', '1']);
    assert.equal(ks.objective, knapsackByDynamicProgramming(k).value);
    assert.equal(ks.verified, true);
    const q = await solveJson(['nqueens', '9']);
    assert.equal(q.objective, NQUEENS_SOLUTIONS[9]);
  });

  it('--no-prune with a scale schedule: nodes join and drain mid-run, the optimum stays exact', { timeout: 180_000 }, async () => {
    const pruned = await solveJson(['tsp', 'random:11:4']);
    const r = await solveJson(['tsp', 'random:11:4', '--no-prune', '--nodes', '1', '--workers', '1', '--scale', '200ms:+2,1200ms:-2']);
    assert.equal(r.objective, pruned.objective);
    assert.equal(r.stats.searchNodes, 1 + 10 + 10 * 9 + 10 * 9 * 8 + 10 * 9 * 8 * 7 + 10 * 9 * 8 * 7 * 6 + 30240 * 5 + 151200 * 4 + 604800 * 3 + 1814400 * 2 + 3628800, 'fixed work: every path expanded once');
  });

  it('--pool-memory: a budget the job fits solves exactly; one smaller than a task\'s share is refused naming it', { timeout: 120_000 }, async () => {
    const q = await solveJson(['nqueens', '9', '--pool-memory', String(64 * 1024 * 1024)]);
    assert.equal(q.objective, NQUEENS_SOLUTIONS[9]);
    const small = await tidepool(['solve', 'nqueens', '9', '--pool-memory', '100']);
    assert.notEqual(small.code, 0);
    assert.match(small.stderr, /poolMemoryBytes must be a whole number of bytes ≥ 512 \(one task's share\), not 100/);
  });

  it('malformed input and bad flags: one clear line naming file and line, exit 2', { timeout: 60_000 }, async () => {
    assertCleanError(await tidepool(['solve', 'tsp', tmpFile('a.tsp', 'NAME: a\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\nEOF\n')]), /error: .*a\.tsp:\d+: .*DIMENSION/);
    assertCleanError(await tidepool(['solve', 'tsp', tmpFile('b.tsp', 'NAME: b\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: MANHATTAN_9D\n')]), /error: .*b\.tsp:3: .*MANHATTAN_9D/);
    assertCleanError(await tidepool(['solve', 'tsp', tmpFile('c.tsp', 'NAME: c\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 x1\n3 2 2\nEOF\n')]), /error: .*c\.tsp:6: .*"x1"/);
    assertCleanError(await tidepool(['solve', 'tsp', tmpFile('d.tsp', 'NAME: d\nDIMENSION: 4\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\nEOF\n')]), /error: .*d\.tsp:\d+: .*(too few|expected 4)/i);
    assertCleanError(await tidepool(['solve', 'clique', tmpFile('e.clq', 'c test\np edge 3 1\ne 1 4\n')]), /error: .*e\.clq:3: .*4/);
    assertCleanError(await tidepool(['solve', 'tsp', '/nonexistent/x.tsp']), /error: \/nonexistent\/x\.tsp: cannot read: ENOENT/);
    assertCleanError(await tidepool(['solve', 'sudoku', 'x']), /unknown problem "sudoku"/);
    assertCleanError(await tidepool(['solve', 'nqueens', 'eight']), /board size/);
    assertCleanError(await tidepool(['solve', 'tsp', 'random:10', '--scale', '2s+1']), /--scale: "2s\+1"/);
    assertCleanError(await tidepool(['solve', 'tsp', 'random:10', '--nodes', '0']), /--nodes: "0"/);
    assertCleanError(await tidepool(['solve', 'tsp']), /missing required argument 'input'/);
  });

  describe('on node processes registered on ZooKeeper', () => {
    let zk: ZkEnsemble;
    let secret: string;
    const nodes: NodeProcess[] = [];
    before(async () => {
      zk = await startEnsemble({ size: 3 });
      secret = secretFile();
      nodes.push(...(await Promise.all([0, 1].map(() => startNodeProcess({ zk: zk.connectionString, secretFile: secret })))));
    });
    after(async () => {
      for (const n of nodes) n.kill('SIGKILL');
      await Promise.all(nodes.map((n) => n.exited));
      await zk.stop();
    });

    it('solve --zk runs jobs on the registered nodes: TSPLIB optima', { timeout: 120_000 }, async () => {
      for (const [name, optimum] of [['gr17', 2085], ['ulysses22', 7013], ['bays29', 2020]] as const) {
        const r = await solveJson(['tsp', join(DATA, `tsplib/${name}.tsp`), '--zk', zk.connectionString, '--secret-file', secret]);
        assert.equal(r.objective, optimum, name);
        assert.equal(r.verified, true);
      }
    });

    it('clique and knapsack on the ZooKeeper cluster; a node added and one drained mid-run (--scale)', { timeout: 180_000 }, async () => {
      for (const [name, omega] of [['keller4', 11], ['brock200_2', 12], ['MANN_a9', 16]] as const) {
        const c = await solveJson(['clique', join(DATA, `clique/${name}.clq`), '--zk', zk.connectionString, '--secret-file', secret]);
        assert.equal(c.objective, omega, name);
        assert.equal(c.verified, true);
      }
      const k = randomKnapsack(50, 8);
      const file = tmpFile('k.txt', `${k.values.length} ${k.capacity}\n${k.values.map((v, i) => `${v} ${k.weights[i]}`).join('\n')}\n`);
      const ks = await solveJson(['knapsack', file, '--zk', zk.connectionString, '--secret-file', secret]);
      assert.equal(ks.objective, knapsackByDynamicProgramming(k).value);
      const plain = await solveJson(['tsp', 'random:11:6']);
      const r = await solveJson(['tsp', 'random:11:6', '--no-prune', '--zk', zk.connectionString, '--scale', '300ms:+1,1500ms:-1', '--secret-file', secret]);
      assert.equal(r.objective, plain.objective);
      assert.equal(r.stats.searchNodes, 9864101, 'fixed work: every path expanded exactly once through the join and the drain');
      assert.ok((r.stats.steals ?? 0) > 0, 'steals counted on the remote nodes reach the client (their job tallies)');
    });

    it('solve --zk --nodes 1 adds a local node process for the run and stops it afterwards', { timeout: 120_000 }, async () => {
      const plain = await solveJson(['tsp', 'random:10:3']);
      const r = await solveJson(['tsp', 'random:10:3', '--no-prune', '--zk', zk.connectionString, '--nodes', '1', '--secret-file', secret]);
      assert.equal(r.objective, plain.objective);
      assert.equal(r.stats.searchNodes, 986410, 'fixed work: 1 + 9 + 9·8 + … + 9! search nodes');
      const registered = JSON.stringify(nodes.map((n) => n.id).sort());
      await waitFor(async () => {
        const status = JSON.parse((await tidepool(['status', '--zk', zk.connectionString, '--secret-file', secret, '--json'])).stdout) as { nodes: Array<{ id: string }> };
        return JSON.stringify(status.nodes.map((n) => n.id).sort()) === registered;
      }, 'the local node to leave with the run', 30_000);
      assertCleanError(await tidepool(['solve', 'tsp', 'random:10', '--zk', zk.connectionString, '--nodes', '1']), /holds a cluster secured by its own secret: --secret-file \(or TIDEPOOL_SECRET\) is needed/);
    });

    it('solve --zk --nodes 2 with no secret: its own node processes share a fresh one (in their environment, not on their command line) and steal from each other', { timeout: 120_000 }, async () => {
      const fresh = `${zk.connectionString}/fresh-secret`; // a cluster with no other nodes, on the same ensemble
      const plain = await solveJson(['tsp', 'random:10:3']);
      const solve = spawn(process.execPath, [BIN, 'solve', 'tsp', 'random:10:3', '--no-prune', '--zk', fresh, '--nodes', '2', '--workers', '1', '--json'], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() }); // no TIDEPOOL_SECRET to inherit
      let stdout = '';
      let stderr = '';
      solve.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      solve.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => solve.once('close', resolve));
      // The job starts only once both node processes are ready, so they live until it ends.
      let children: string[] = [];
      // Both started (past exec: a child between fork and exec still shows the parent's environment at its start).
      const isNode = (pid: string) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('\0node\0--zk\0');
        } catch {
          return false;
        }
      };
      await waitFor(() => (children = childPids(solve.pid!)).length === 2 && children.every(isNode), 'two local node processes', 60_000);
      const secrets = children.map((pid) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((v) => v.startsWith('TIDEPOOL_SECRET=')));
      assert.ok(secrets[0] && secrets[0].length >= 'TIDEPOOL_SECRET='.length + 43, 'a secret of 32 random bytes');
      assert.equal(secrets[1], secrets[0], 'one secret for both');
      for (const pid of children) assert.ok(!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(secrets[0]!.slice('TIDEPOOL_SECRET='.length)), 'not on the command line');
      assert.equal(await exited, 0, stderr);
      const r = JSON.parse(stdout) as SolveJson;
      assert.equal(r.objective, plain.objective);
      assert.equal(r.stats.searchNodes, 986410, 'fixed work: every search node once');
      // One worker each: a task splits only for a steal request from the other node, which needs the shared secret.
      assert.ok((r.stats.tasks ?? 0) >= 2, `the nodes talked to each other (tasks: ${r.stats.tasks})`);
      const freshSecret = tmpFile('fresh-secret', secrets[0]!.slice('TIDEPOOL_SECRET='.length));
      await waitFor(async () => {
        const status = JSON.parse((await tidepool(['status', '--zk', fresh, '--secret-file', freshSecret, '--json'])).stdout) as { nodes: unknown[] };
        return status.nodes.length === 0;
      }, 'the local nodes to leave with the run', 30_000);
    });
  });
});
