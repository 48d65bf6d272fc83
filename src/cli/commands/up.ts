import os from 'node:os';
import path from 'node:path';
import { log } from '../../util/log.js';
import { jsonOption } from '../common-options.js';
import { UsageError } from '../errors.js';
import { alive, LocalCluster, readRecord, recordFile, stopRecordedCluster } from '../local-cluster/local-cluster.js';
import { defaultWorkers } from '../options.js';
import { kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';
import { MONITOR_PORT } from './monitor.js';

interface UpFlags {
  nodes: number;
  zkServers: number;
  workers?: number;
  dashboard: number;
  dir?: string;
  json?: boolean;
}

/** Where `tidepool up` keeps its cluster's record, secret and logs unless --dir says otherwise. */
export function defaultUpDir(): string {
  return path.join(os.homedir(), '.tidepool', 'up');
}

/**
 * `tidepool up`: a ZooKeeper ensemble, N nodes, the monitor and its dashboard on this machine, in
 * one command; it prints how to connect and submit, and runs until Ctrl-C or `tidepool down`.
 * `tidepool down`: stops a cluster `tidepool up` started (even if `up` itself was killed).
 */
export function registerUpCommands(program: SettingsCommand): void {
  jsonOption(program
    .command('up')
    .description('start a cluster on this machine: ZooKeeper, nodes, the monitor and its dashboard; Ctrl-C (or tidepool down) stops it all')
    .setting('--nodes <n>', 'tidepool nodes to start', kinds.positiveInt, '2')
    .setting('--zk-servers <n>', 'ZooKeeper servers (1, or 3 for an ensemble that survives one failure)', kinds.positiveInt, '1')
    .setting('--workers <n>', 'worker threads per node (default: usable cores / nodes, at least 1)', kinds.positiveInt)
    .setting('--dashboard <port>', 'port of the dashboard and /metrics on 127.0.0.1 (0 = any free port)', kinds.port, String(MONITOR_PORT))
    .setting('--dir <dir>', `where the cluster's record, secret and logs go (default ${path.join('~', '.tidepool', 'up')})`, kinds.path), 'print one JSON line when ready')
    .addHelpText('after', [
      '',
      'Needs Debian\'s zookeeper package and a Java runtime (apt-get install zookeeper default-jre-headless).',
      '',
      'For a 3-server ensemble that survives the loss of one server: --zk-servers 3.',
      '',
      'Examples:',
      '  tidepool up --nodes 2 --dashboard 0 --dir ./cluster',
      '  tidepool down --dir ./cluster        # from another terminal, or Ctrl-C in this one',
    ].join('\n'))
    .action(async (flags: UpFlags) => {
      // Listening for SIGTERM before anything starts: a signal while it starts must stop what has started.
      const stopping = stopSignal();
      const { nodes, zkServers } = flags;
      const workers = flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / nodes));
      const dashboardPort = flags.dashboard;
      const dir = path.resolve(flags.dir ?? defaultUpDir());
      const existing = readRecord(dir);
      if (existing && alive(existing.pid)) throw new UsageError(`a cluster is already up in ${dir} (tidepool up, pid ${existing.pid}): tidepool down${flags.dir ? ` --dir ${flags.dir}` : ''} first, or --dir elsewhere`);
      if (existing) await stopRecordedCluster(dir); // a crashed `up`: what it left running goes first
      const cluster = await LocalCluster.start({ dir, nodes, zkServers, workers, dashboardPort });
      const r = cluster.record;
      const downHint = `tidepool down${flags.dir ? ` --dir ${flags.dir}` : ''}`;
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ zk: r.zk, secretFile: r.secretFile, dashboard: r.dashboard, nodes: r.nodes.map((n) => n.id), zookeeper: r.zookeeper.map((z) => z.port), dir, pid: process.pid })}\n`);
      } else {
        process.stdout.write([
          `tidepool cluster up: ${zkServers} ZooKeeper server(s), ${nodes} node(s) with ${workers} worker(s) each`,
          `  ZooKeeper  ${r.zk}`,
          `  secret     ${r.secretFile}`,
          `  dashboard  ${r.dashboard}`,
          `  logs       ${path.join(dir, 'logs')}`,
          '',
          'Submit work to it:',
          `  tidepool solve tsp test/data/tsplib/gr17.tsp --zk ${r.zk} --secret-file ${r.secretFile}`,
          `  tidepool status --zk ${r.zk} --secret-file ${r.secretFile}`,
          '',
          `Stop it: Ctrl-C here, or ${downHint}`,
          '',
        ].join('\n'));
      }
      log.info('up', `${await stopping}: stopping the cluster`);
      await cluster.stop();
      if (!flags.json) process.stdout.write('tidepool cluster stopped\n');
    });

  jsonOption(program
    .command('down')
    .description('stop the cluster tidepool up started: nodes drain, then the monitor and ZooKeeper stop')
    .setting('--dir <dir>', `the directory tidepool up was given (default ${path.join('~', '.tidepool', 'up')})`, kinds.path), 'print what was stopped as one JSON line')
    .addHelpText('after', [
      '',
      'Example:',
      '  tidepool up --nodes 1 --dashboard 0 --dir ./cluster   # in one terminal',
      '  tidepool down --dir ./cluster --json                  # in another',
    ].join('\n'))
    .action(async (flags: { dir?: string; json?: boolean }) => {
      const dir = path.resolve(flags.dir ?? defaultUpDir());
      if (!readRecord(dir)) throw new UsageError(`no cluster is up in ${dir} (no ${recordFile(dir)})`);
      const { record, stopped } = await stopRecordedCluster(dir);
      process.stdout.write(flags.json ? `${JSON.stringify({ zk: record.zk, stopped })}\n` : `stopped the cluster at ${record.zk}${stopped.length ? `: ${stopped.join(', ')}` : ''}\n`);
    });
}
