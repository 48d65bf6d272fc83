/**
 * A large spawned fan recorded on a real ZooKeeper without stalling its node (spawn flow control,
 * RunRequest.spawnWindow). One node with one worker runs in this process: its root task spawns 150,000
 * children as fast as it can, far faster than the ledger records them. Without flow control the node's
 * thread took in thousands of spawn batches in one turn of its event loop (a 1,000,000-task fan stalled it
 * for 5-13 s, near the coordination session's 10 s); with it, the worker waits while a window of its batches
 * is unrecorded, and each turn takes in at most a window.
 *
 * Asserted while the fan is recorded and run: the longest event-loop delay of this thread stays under a
 * bound generous for a loaded 2-core machine (wall time: other processes' load inflates it), and — on Linux,
 * where a thread's CPU time can be read — the CPU time this thread spent inside any one gap between two
 * timer ticks stays under a bound that load does not inflate (a turn's work, not its wait for a core);
 * every child counts exactly once (a checksum of the values 1..n).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { TidepoolNode } from '../../src/runtime/node/node.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { InProcessNetwork, InProcessTransport } from '../../src/transport/in-process-transport.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';
import { checksumRoot, type Tally } from './apps/spawn-checksum.js';

const N = 150_000;
/** Wall-clock bound on the event loop's longest delay (ms): generous, since a loaded machine lends this thread a core late. */
const MAX_DELAY_MS = 3_000;
/** CPU time of this thread within one gap between ticks (ms): without flow control one took 220 ms at this size, with it about 70 (a collection, say). */
const MAX_TURN_CPU_MS = 150;
const CHECKSUM = new URL('./apps/spawn-checksum.ts', import.meta.url).href;
const STAT = `/proc/self/task/${process.pid}/stat`;

/** This (main) thread's CPU time so far (ms), from Linux's per-thread stat (utime + stime, in 1/100 s); undefined elsewhere. */
function mainThreadCpuMs(): number | undefined {
  if (!existsSync(STAT)) return undefined;
  const fields = readFileSync(STAT, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

describe('a large spawned fan on a real ZooKeeper', () => {
  let zk: ZkEnsemble;
  let admin: CoordClient;
  let nodeClient: CoordClient;
  let node: TidepoolNode;
  const secret = ClusterSecret.random();
  before(async () => {
    // The ledger holds up to N records at once: more than the tests' default 128 MiB server carries.
    zk = await startEnsemble({ size: 1, heapMb: 1024 });
    admin = await connect(zk.connectionString, { secret });
    nodeClient = await connect(zk.connectionString, { secret });
    node = await TidepoolNode.start({
      client: nodeClient, transport: new InProcessTransport('n-fan', InProcessNetwork.get(`fan-${randomBytes(3).toString('hex')}`)),
      workers: 1, nodeId: 'n-fan', secret, submittedHere: new Set([CHECKSUM]),
    });
  });
  after(async () => {
    await node?.shutdown({ handOver: false });
    await nodeClient?.close();
    await admin?.close();
    await zk?.stop();
  });

  it(`${N} children spawned at once are recorded a window at a time: the node's event loop keeps turning, every child counts once`, { timeout: 180_000 }, async (t) => {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    let lastCpu = mainThreadCpuMs();
    let mostCpu = 0;
    const ticks = setInterval(() => {
      const cpu = mainThreadCpuMs();
      if (cpu === undefined || lastCpu === undefined) return;
      mostCpu = Math.max(mostCpu, cpu - lastCpu);
      lastCpu = cpu;
    }, 5);
    delay.enable();
    try {
      const spec = await submitJob(admin, { ...taskPoolJob({ module: CHECKSUM, export: 'default' }, checksumRoot(N)), nodes: 1, secret });
      const outcome = await withDeadline(awaitOutcome(admin, spec.id), `the fan of ${N}`, 150_000);
      assert.equal(outcome.status, 'done', JSON.stringify(outcome).slice(0, 300));
      assert.deepEqual(outcome.status === 'done' && (outcome.value as Tally), { count: N, sum: (N * (N + 1)) / 2 }, 'every child once');
    } finally {
      delay.disable();
      clearInterval(ticks);
    }
    const longest = delay.max / 1e6;
    t.diagnostic(`longest event-loop delay ${longest.toFixed(0)} ms; most CPU of this thread between two ticks ${lastCpu === undefined ? 'not measured' : `${mostCpu} ms`}`);
    assert.ok(longest < MAX_DELAY_MS, `the event loop stalled ${longest.toFixed(0)} ms (bound ${MAX_DELAY_MS} ms)`);
    if (lastCpu !== undefined) assert.ok(mostCpu <= MAX_TURN_CPU_MS, `this thread spent ${mostCpu} ms of CPU between two ticks (bound ${MAX_TURN_CPU_MS} ms)`);
  });
});
