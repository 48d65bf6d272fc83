import type { Command } from 'commander';
import { connect } from '../../coord/connect.js';
import { ClusterMonitor } from '../../dashboard/cluster-monitor.js';
import { startDashboard } from '../../dashboard/dashboard-server.js';
import { pruneFinishedJobs } from '../../runtime/job-retention.js';
import { log } from '../../util/log.js';
import { nonNegativeInt, port, positiveInt, zookeeperConnection } from '../options.js';
import { stopSignal } from '../stop-signal.js';

interface CoordinatorFlags {
  zk?: string;
  dashboard: string | boolean;
  host: string;
  interval: string;
  retainJobs: string;
  json?: boolean;
}

export const COORDINATOR_PORT = 7470;

/**
 * `tidepool coordinator`: the operator's process of a cluster on ZooKeeper. It watches nodes and
 * jobs through the coordination service and serves the live dashboard and Prometheus metrics.
 * It holds no job state: it can restart, or run twice, without affecting any computation.
 */
export function registerCoordinatorCommand(program: Command): void {
  program
    .command('coordinator')
    .description('serve the live dashboard and Prometheus metrics (/metrics) of a cluster registered on ZooKeeper')
    .option('--zk <conn>', 'ZooKeeper ensemble, zk://host:port[,host:port…][/chroot]')
    .option('--dashboard [port]', `HTTP port of the dashboard and /metrics (default ${COORDINATOR_PORT}; 0 = any free port)`, true)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--interval <ms>', 'how often to read the cluster', '1000')
    .option('--retain-jobs <n>', 'keep the znodes of the N most recently finished jobs; older ones are removed every minute', '100')
    .option('--json', 'print one JSON line when ready')
    .addHelpText('after', '\nExample:\n  tidepool coordinator --zk zk://10.0.0.5:2181 --dashboard 8080 --host 0.0.0.0\n  curl http://127.0.0.1:8080/metrics')
    .action(async (flags: CoordinatorFlags) => {
      const conn = zookeeperConnection(flags.zk, 'the coordinator watches a cluster registered on ZooKeeper');
      const httpPort = flags.dashboard === true ? COORDINATOR_PORT : port(String(flags.dashboard), '--dashboard');
      const intervalMs = positiveInt(flags.interval, '--interval');
      const retain = nonNegativeInt(flags.retainJobs, '--retain-jobs');
      const client = await connect(conn, { connectTimeoutMs: 10_000 });
      const monitor = new ClusterMonitor(client, { intervalMs });
      await monitor.start();
      const server = await startDashboard(monitor, { host: flags.host, port: httpPort });
      const metrics = new URL('metrics', server.url).href;
      // Finished jobs' trees (with a transaction marker per ledger commit) would otherwise grow forever.
      const prune = () => pruneFinishedJobs(client, { keep: retain }).then(
        (removed) => removed.length > 0 && log.info('coordinator', `removed ${removed.length} finished job(s)`, removed),
        (err: unknown) => log.warn('coordinator', 'could not remove finished jobs', err),
      );
      void prune();
      const pruning = setInterval(() => void prune(), 60_000);
      process.stdout.write(flags.json
        ? `${JSON.stringify({ dashboard: server.url, metrics, zk: conn })}\n`
        : `coordinator for ${conn}\ndashboard ${server.url}\nmetrics   ${metrics}\n`);
      client.onState((s) => {
        if (s !== 'expired') return;
        log.error('coordinator', 'coordination session expired; exiting (3) for the supervisor to restart us');
        process.exit(3);
      });
      log.info('coordinator', `${await stopSignal()}: stopping`);
      clearInterval(pruning);
      await server.close();
      await monitor.stop();
      await client.close();
    });
}
