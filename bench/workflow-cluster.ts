/**
 * Node processes on loopback (one worker thread each) with a local one-server ZooKeeper, for the
 * workflow benchmarks, and `measure`: run a workflow and take its span from the members' traces
 * (first task start to last task end, so job start-up is not counted) and each stage's span.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWorkflow, type RunWorkflowOptions } from '../src/frameworks/workflow/run-workflow.js';
import type { MemberReport, WorkflowResult } from '../src/frameworks/workflow/workflow-kind.js';
import type { Workflow } from '../src/frameworks/workflow/workflow.js';
import { Cluster } from '../src/runtime/client/cluster.js';
import { secretFile, secretIn, startNodeProcess } from '../test/support/node-process.js';
import { fourLetterWord, startEnsemble } from '../test/support/zk-ensemble.js';

export interface Measured {
  result: WorkflowResult; wall: number; span: number; stages: Map<string, { first: number; last: number; runtime: number }>;
  /** Requests ZooKeeper received during the run (every client: job start and end, membership, node stats, pings). */
  zkRequests: number;
}

export const sumOf = (ms: MemberReport[], k: 'bytesToShared' | 'bytesFromShared' | 'bytesPeer') => ms.reduce((n, m) => n + m[k], 0);

export async function startBenchCluster(count: number) {
  const tmp = mkdtempSync(join(tmpdir(), 'bench-workflow-'));
  const zk = await startEnsemble({ size: 1 });
  const secret = secretFile();
  const nodes = await Promise.all(Array.from({ length: count }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers: 1 })));
  const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
  /** What ZooKeeper's `mntr` says it has received so far. */
  const zkPackets = async () => Number(/zk_packets_received\s+(\d+)/.exec(await fourLetterWord(zk.servers[0]!.clientPort, 'mntr'))?.[1] ?? NaN);
  const idle = async () => {
    while ((await cluster.nodes()).filter((n) => n.job === null && n.assignment === '').length < count) await new Promise((r) => setTimeout(r, 50));
  };
  return {
    tmp,
    cluster,
    /** `work`, or an error naming the node process that exited meanwhile, with the end of its stderr (a bench never waits on a dead node). */
    whileNodesLive<T>(work: Promise<T>): Promise<T> {
      return Promise.race([work, ...nodes.map((n) => n.exited.then((code) => {
        throw new Error(`node process ${n.id} exited (${code}) during the run; the end of its stderr:\n${n.stderr().slice(-2000)}`);
      }))]);
    },
    /** ZooKeeper requests per second while the cluster is idle (sessions, node statistics): the floor under a run's count. */
    async zkIdleRate(seconds = 5): Promise<number> {
      await idle();
      const before = await zkPackets();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      return ((await zkPackets()) - before) / seconds;
    },
    async measure(wf: Workflow, opts: Omit<RunWorkflowOptions, 'shared'> & { shared?: string }): Promise<Measured> {
      await idle();
      const packets = await zkPackets();
      const t0 = performance.now();
      const result = await runWorkflow(cluster, wf, { shared: opts.shared ?? mkdtempSync(join(tmp, 'run-')), nodes: count, trace: true, fresh: true, ...opts });
      const wall = (performance.now() - t0) / 1000;
      const zkRequests = (await zkPackets()) - packets;
      let first = Infinity;
      let last = 0;
      const stages = new Map<string, { first: number; last: number; runtime: number }>();
      for (const m of result.members) for (const [t, s, e] of m.trace) {
        first = Math.min(first, s);
        last = Math.max(last, e);
        const st = stages.get(wf.tasks[t]!.category) ?? { first: Infinity, last: 0, runtime: 0 };
        st.first = Math.min(st.first, s);
        st.last = Math.max(st.last, e);
        st.runtime += Math.max(0, wf.tasks[t]!.runtime);
        stages.set(wf.tasks[t]!.category, st);
      }
      return { result, wall, span: (last - first) / 1000, stages, zkRequests };
    },
    async close() {
      await cluster.close();
      for (const n of nodes) n.kill('SIGKILL');
      await Promise.all(nodes.map((n) => n.exited));
      await zk.stop();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
