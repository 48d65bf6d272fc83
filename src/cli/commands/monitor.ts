import { isCoordError } from '../../coord/errors.js';
import { ClusterMonitor } from '../../dashboard/cluster-monitor.js';
import { ClusterReader } from '../../dashboard/cluster-reader.js';
import { startDashboard } from '../../dashboard/dashboard-server.js';
import { pruneFinishedJobs } from '../../runtime/client/job-retention.js';
import { log } from '../../util/log.js';
import { addressKind, listenAddress, type HostPort } from '../addresses.js';
import { jsonOption, secretOption, zkOptions } from '../common-options.js';
import { connectZk } from '../connection.js';
import { UsageError } from '../errors.js';
import { clusterCredential } from '../options.js';
import { duration, kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';

interface MonitorFlags {
  zk: string;
  timeout: number;
  secretFile?: string;
  dashboard: boolean | number;
  listen?: HostPort;
  interval: number;
  retainJobs: number;
  json?: boolean;
}

export const MONITOR_PORT = 7470;

/**
 * `tidepool monitor` (formerly `tidepool coordinator`): the operator's process of a cluster on
 * ZooKeeper. It watches nodes and jobs through the coordination service and serves the live
 * dashboard and Prometheus metrics. It holds no job state: it can restart, or run twice, without
 * affecting any computation.
 */
export function registerMonitorCommand(program: SettingsCommand): void {
  const monitor = jsonOption(secretOption(zkOptions(program.command('monitor')
    .description('serve the live dashboard and Prometheus metrics (/metrics) of a cluster registered on ZooKeeper'),
  'the cluster\'s ZooKeeper ensemble', 'the monitor watches a cluster registered on ZooKeeper'),
  'file holding the cluster secret, or a monitor credential (`tidepool secret monitor`: reads only, finished jobs are then not removed), or either in $TIDEPOOL_SECRET'),
  'print one JSON line when ready')
    .setting('--dashboard [port]', `HTTP port of the dashboard and /metrics (default ${MONITOR_PORT}; 0 = any free port)`, kinds.optionalPort, true)
    .setting('--listen <addr[:port]>', 'address (and port) of the dashboard and /metrics; 0.0.0.0 = every interface (default 127.0.0.1)', addressKind)
    .deprecatedFlag('--host <host>', 'listen')
    .setting('--interval <duration>', 'how often to read the cluster', duration('ms', true), '1s')
    .setting('--retain-jobs <n>', 'keep the znodes of the N most recently finished jobs; older ones are removed every minute', kinds.count, '100')
    .addHelpText('after', `
Runs until SIGINT/SIGTERM. Old name: tidepool coordinator; old flag: --host ADDR (now --listen). Both still
work, with a note, for one release.

It reads the cluster with --secret-file: the cluster secret, or the read-only monitor credential
(\`tidepool secret monitor\`), with which it changes nothing (finished jobs are then not removed).

Example:
  tidepool secret monitor --secret-file ~/.tidepool/secret > tidepool.monitor
  tidepool monitor --zk 127.0.0.1:2181 --listen 0.0.0.0:8080 --secret-file tidepool.monitor
  curl http://127.0.0.1:8080/metrics`);
  monitor.deprecatedName('coordinator');
  monitor.action(async (flags: MonitorFlags) => {
    if (flags.dashboard === false) throw new UsageError('--dashboard: the monitor serves the dashboard and /metrics; give a port, or leave it out for the default');
    const listen = listenAddress({ ...(flags.listen ? { listen: flags.listen } : {}), ...(flags.dashboard !== true ? { port: flags.dashboard } : {}) }, { host: '127.0.0.1', port: MONITOR_PORT }, '--dashboard');
    // Listening for SIGTERM before anything is announced: a signal right after the ready line must stop us cleanly.
    const stopping = stopSignal();
    const secret = clusterCredential(flags.secretFile);
    const client = await connectZk(flags.zk, flags.timeout, secret ? { secret } : {});
    // A monitor that may not read the cluster (no credential, or another cluster's secret) says so and
    // stops, rather than serve an empty dashboard; other errors pass (its reads retry every interval).
    await new ClusterReader(client).read().catch(async (err: unknown) => {
      if (!isCoordError(err, 'NO_AUTH')) return;
      await client.close();
      throw err;
    });
    const watcher = new ClusterMonitor(client, { intervalMs: flags.interval });
    await watcher.start();
    const server = await startDashboard(watcher, { host: listen.host!, port: listen.port });
    const metrics = new URL('metrics', server.url).href;
    // Finished jobs' trees (with a transaction marker per ledger commit) would otherwise grow forever.
    const prune = () => pruneFinishedJobs(client, { keep: flags.retainJobs }).then(
      (removed) => removed.length > 0 && log.info('monitor', `removed ${removed.length} finished job(s)`, removed),
      (err: unknown) => log.warn('monitor', 'could not remove finished jobs', err),
    );
    // Removing needs the secret; with a monitor credential the monitor only reads.
    const mayPrune = secret === undefined || secret.isSecret;
    if (mayPrune) void prune();
    else log.info('monitor', 'a monitor credential only reads: finished jobs are not removed (run it with the cluster secret for that)');
    const pruning = setInterval(() => void (mayPrune && prune()), 60_000);
    process.stdout.write(flags.json
      ? `${JSON.stringify({ dashboard: server.url, metrics, zk: flags.zk })}\n`
      : `monitor for ${flags.zk}\ndashboard ${server.url}\nmetrics   ${metrics}\n`);
    client.onState((s) => {
      if (s !== 'expired') return;
      log.error('monitor', 'coordination session expired; exiting (3) for the supervisor to restart us');
      process.exit(3);
    });
    log.info('monitor', `${await stopping}: stopping`);
    clearInterval(pruning);
    await server.close();
    await watcher.stop();
    await client.close();
  });
}
