/**
 * The monitoring endpoint on real ZooKeeper: `tidepool node --metrics-port` processes (the flag, and
 * the same setting from the environment) serve /metrics whose task run times add up to the job's tasks;
 * a node whose coordination traffic is held (a partition by a TCP proxy) answers /readyz 503 until it
 * has joined the cluster, while /healthz says it is alive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../../src/coord/connect.js';
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { newNodeId, TidepoolNode } from '../../../src/runtime/node/node.js';
import type { TaskRef } from '../../../src/runtime/worker/task.js';
import { TcpTransport } from '../../../src/transport/tcp-transport.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../../support/node-process.js';
import { parsePrometheusText, valueOf } from '../../support/prometheus-text.js';
import { startTcpProxy } from '../../support/tcp-proxy.js';
import { deferred, waitFor, withDeadline } from '../../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../../support/zk-ensemble.js';

const TIMED_FAN: TaskRef = { module: new URL('../apps/timed-fan.ts', import.meta.url).href, export: 'default' };
const T = { timeout: 180_000 };

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

describe('node monitoring endpoint on ZooKeeper', () => {
  let zk: ZkEnsemble;
  let secret: string;
  const processes: NodeProcess[] = [];

  before(async () => {
    zk = await startEnsemble({ size: 1 });
    secret = secretFile();
  });
  after(async () => {
    for (const p of processes) p.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await zk.stop();
  });

  it('node processes started with --metrics-port (or TIDEPOOL_NODE_METRICS_PORT) serve /metrics, /healthz, /readyz', T, async () => {
    const [flagged, fromEnv] = await Promise.all([
      startNodeProcess({ zk: zk.connectionString, secretFile: secret, extraArgs: ['--metrics-port', '0'] }),
      startNodeProcess({ zk: zk.connectionString, secretFile: secret, env: { TIDEPOOL_NODE_METRICS_PORT: '0' } }),
    ]);
    processes.push(flagged, fromEnv);
    for (const p of [flagged, fromEnv]) {
      assert.match(p.metrics ?? '', /^http:\/\/127\.0\.0\.1:\d+$/, 'the ready line names the endpoint');
      assert.deepEqual(await get(`${p.metrics!}/healthz`), { status: 200, text: '{"ok":true}' });
      assert.deepEqual(await get(`${p.metrics!}/readyz`), { status: 200, text: '{"ready":true}' });
    }
    const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
    try {
      await waitFor(async () => (await cluster.nodes()).length === 2, 'both nodes to be seen');
      const fanout = 24;
      const job = await cluster.submit(TIMED_FAN, { fanout, ms: 10, root: true }, { nodes: 2 });
      assert.equal(await withDeadline(job.result<number>(), 'the job', 120_000), fanout + 1);
      await waitFor(async () => (await cluster.nodes()).every((n) => n.assignment === ''), 'both nodes to leave the job');
      let tasks = 0;
      for (const p of [flagged, fromEnv]) {
        const scraped = await get(`${p.metrics!}/metrics`);
        assert.equal(scraped.status, 200);
        const families = parsePrometheusText(scraped.text);
        assert.ok(families.has('tidepool_node_process_cpu_user_seconds_total'), 'the process figures of the node');
        assert.equal(valueOf(families, 'tidepool_node_info', { node: p.id }), 1);
        tasks += valueOf(families, 'tidepool_task_duration_seconds_count', { kind: 'task-pool' });
      }
      assert.equal(tasks, fanout + 1, 'the two nodes\' run times: one per task');
    } finally {
      await cluster.close();
    }
    for (const p of [flagged, fromEnv]) p.kill('SIGTERM');
    assert.deepEqual(await Promise.all([flagged.exited, fromEnv.exited]), [0, 0]);
  });

  it('/readyz is 503 until the node has joined the cluster (its coordination held back), then 200; /healthz 200 throughout', T, async () => {
    const server = zk.servers[0]!;
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: server.clientPort });
    const cluster = secretIn(secret); // the same cluster as the node processes above
    const client = await connect(`zk://${proxy.address}`, { sessionTimeoutMs: 30_000, secret: cluster });
    const id = newNodeId();
    const listening = deferred<string>();
    proxy.setBlackhole(true); // the node's requests to ZooKeeper get no answer until it is lifted
    const starting = TidepoolNode.start({
      client, transport: new TcpTransport({ nodeId: id, secret: cluster.current }), workers: 1, nodeId: id, secret: cluster,
      metrics: { port: 0, processMetrics: false, onListening: (url) => listening.resolve(url) },
    });
    let node: TidepoolNode | undefined;
    try {
      const url = await withDeadline(listening.promise, 'the endpoint to listen');
      assert.deepEqual(await get(`${url}/readyz`), { status: 503, text: '{"ready":false,"reason":"the node has not joined the cluster yet"}' });
      assert.deepEqual(await get(`${url}/healthz`), { status: 200, text: '{"ok":true}' });
      const families = parsePrometheusText((await get(`${url}/metrics`)).text);
      assert.equal(valueOf(families, 'tidepool_node_ready'), 0);
      proxy.setBlackhole(false);
      node = await withDeadline(starting, 'the node to join once its requests get through');
      assert.deepEqual(await get(`${url}/readyz`), { status: 200, text: '{"ready":true}' });
      assert.equal(valueOf(parsePrometheusText((await get(`${url}/metrics`)).text), 'tidepool_node_ready'), 1);
    } finally {
      proxy.setBlackhole(false);
      await (node ?? (await starting.catch(() => undefined)))?.shutdown();
      await client.close();
      await proxy.close();
    }
  });
});
