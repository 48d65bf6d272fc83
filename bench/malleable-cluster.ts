/** Node processes on loopback over a 1-server ZooKeeper, for the malleable benchmarks. */
import { Cluster } from '../src/runtime/client/cluster.js';
import { secretFile, secretIn, startNodeProcess, type NodeProcess } from '../test/support/node-process.js';
import { startEnsemble } from '../test/support/zk-ensemble.js';

/** Runs `run` on `count` fresh `tidepool node` processes (`workers` worker threads each, default 1); everything is torn down afterwards, the nodes' logs printed on failure. */
export async function withNodeProcesses<T>(count: number, run: (cluster: Cluster, procs: NodeProcess[]) => Promise<T>, workers = 1): Promise<T> {
  const zk = await startEnsemble({ size: 1 });
  const secret = secretFile();
  const procs = await Promise.all(Array.from({ length: count }, () => startNodeProcess({ zk: zk.connectionString, secretFile: secret, workers })));
  const cluster = await Cluster.connect(zk.connectionString, { secret: secretIn(secret) });
  try {
    return await run(cluster, procs);
  } catch (err) {
    for (const p of procs) process.stderr.write(`--- node ${p.id} ---\n${p.stderr().slice(-4000)}\n`);
    throw err;
  } finally {
    await cluster.close();
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    await zk.stop();
  }
}
