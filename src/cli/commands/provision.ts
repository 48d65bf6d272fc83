import { LocalDriver } from '../../runtime/providers/local-driver.js';
import { secretText, type NodeDriver, type ProviderEvent } from '../../runtime/providers/node-provider.js';
import { Provisioner } from '../../runtime/providers/provisioner.js';
import { SlurmDriver } from '../../runtime/providers/slurm-driver.js';
import { SshDriver } from '../../runtime/providers/ssh-driver.js';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { log } from '../../util/log.js';
import { jsonOption, zkOptions } from '../common-options.js';
import { connectZk } from '../connection.js';
import { UsageError } from '../errors.js';
import { clusterSecret } from '../options.js';
import { formatDuration } from '../settings/durations.js';
import { duration, kinds, oneOf } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';

interface ProvisionFlags {
  zk: string;
  timeout: number;
  provider: Provider;
  maxNodes: number;
  minNodes: number;
  /** Milliseconds. */
  idle: number;
  workers?: number;
  secretFile?: string;
  hosts?: string;
  remoteCommand?: string;
  identity?: string;
  sshOption?: string[];
  nodesPerHost: number;
  sbatchArg?: string[];
  outputDir?: string;
  nodeArg?: string[];
  /** Milliseconds. */
  startTimeout: number;
  json?: boolean;
}

export const PROVIDERS = ['local', 'ssh', 'slurm'] as const;
type Provider = typeof PROVIDERS[number];

/**
 * `tidepool provision`: runs a node provider for a cluster. It follows the scheduler: when jobs wait
 * for nodes it starts `tidepool node`s (child processes here, on SSH hosts, or as Slurm jobs), up to
 * --max-nodes, and it drains and stops those idle for --idle. On SIGINT/SIGTERM it drains and stops
 * every node it started, then exits.
 */
export function registerProvisionCommand(program: SettingsCommand): void {
  jsonOption(zkOptions(program.command('provision')
    .description('start and stop nodes as jobs wait and nodes idle: local child processes, hosts over SSH, or Slurm jobs'),
  'the cluster\'s ZooKeeper ensemble (also what the nodes it starts join)', 'the provider follows a cluster registered on ZooKeeper'), 'print one JSON line per event (node states, retries)')
    .setting('--provider <name>', `where nodes run: ${PROVIDERS.join(', ')}`, oneOf(PROVIDERS), 'local')
    .setting('--max-nodes <n>', 'at most this many nodes started by this provider at once', kinds.positiveInt, '4')
    .setting('--min-nodes <n>', 'keep at least this many of them, even idle', kinds.count, '0')
    .setting('--idle <duration>', 'drain and stop a node of this provider idle for this long', duration('s'), '60s')
    .setting('--workers <n>', 'worker threads per node (default: the node\'s own, one per core)', kinds.positiveInt)
    .option('--secret-file <file>', 'the cluster secret (or $TIDEPOOL_SECRET): local nodes read it from the environment, ssh nodes on their standard input, Slurm nodes in their job environment')
    .setting('--hosts <list>', 'ssh: the hosts, comma-separated ([user@]host)', kinds.text)
    .setting('--remote-command <words>', 'ssh, slurm: the tidepool command there (default "tidepool")', kinds.text)
    .setting('--identity <file>', 'ssh: private key (ssh -i)', kinds.file)
    .setting('--ssh-option <arg...>', 'ssh: more ssh arguments (repeatable), e.g. --ssh-option=-oStrictHostKeyChecking=accept-new', kinds.list)
    .setting('--nodes-per-host <n>', 'ssh: nodes per host', kinds.positiveInt, '1')
    .setting('--sbatch-arg <arg...>', 'slurm: more sbatch arguments (repeatable), e.g. --sbatch-arg=--partition=compute', kinds.list)
    .setting('--output-dir <dir>', 'slurm: where each node\'s output goes (a directory on a shared file system)', kinds.path)
    .setting('--node-arg <arg...>', 'more `tidepool node` arguments for every node (repeatable), e.g. --node-arg=--listen=0.0.0.0', kinds.list)
    .setting('--start-timeout <duration>', 'a node not in the cluster this long after it was asked for has failed (it is stopped, and another is tried)', duration('s', true), '2m')
    .addHelpText('after', [
      '',
      'Runs until SIGINT/SIGTERM, then drains and stops the nodes it started.',
      '',
      'Examples:',
      '  tidepool provision --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --provider local --max-nodes 2 --idle 30s',
      '  tidepool provision --zk 10.0.0.11:2181 --secret-file ~/.tidepool/secret --provider ssh --hosts node-a,node-b --max-nodes 2',
      '  tidepool provision --zk 10.0.0.11:2181 --secret-file ~/.tidepool/secret --provider slurm --sbatch-arg=--partition=compute --max-nodes 16',
    ].join('\n'))
    .action(async (flags: ProvisionFlags) => {
      // Listening for SIGTERM before anything is announced: a signal right after the ready line must stop the nodes.
      const stopping = stopSignal();
      const { maxNodes, minNodes } = flags;
      if (minNodes > maxNodes) throw new UsageError(`--min-nodes ${minNodes} exceeds --max-nodes ${maxNodes}`);
      const secret = clusterSecret(flags.secretFile);
      const driver = makeDriver(flags, secret);
      const client = await connectZk(flags.zk, flags.timeout, { secret });
      const provider = await Provisioner.start({
        client, driver, spec: { zk: flags.zk, ...(flags.workers !== undefined ? { workers: flags.workers } : {}), ...(flags.nodeArg ? { args: flags.nodeArg } : {}) },
        scale: { maxNodes, minNodes, idleMs: flags.idle }, pool: { startTimeoutMs: flags.startTimeout },
      });
      provider.on((e) => {
        if (flags.json) process.stdout.write(`${JSON.stringify(e)}\n`);
        else process.stdout.write(`${describe(e)}\n`);
      });
      if (minNodes > 0) provider.provision(minNodes);
      process.stdout.write(flags.json
        ? `${JSON.stringify({ provider: driver.name, zk: flags.zk, maxNodes, minNodes, idleSeconds: flags.idle / 1000 })}\n`
        : `${driver.name} provider for ${flags.zk}: up to ${maxNodes} node(s), idle ones stopped after ${formatDuration(flags.idle)}; Ctrl-C stops them all\n`);
      client.onState((s) => {
        if (s === 'expired') log.error('provider', 'coordination session expired: no more provisioning; stopping the nodes it started');
      });
      log.info('provider', `${await stopping}: draining the nodes it started`);
      await provider.stop();
      await client.close();
    });
}

function makeDriver(flags: ProvisionFlags, secret: ClusterSecret): NodeDriver {
  const only = (flag: string, value: unknown, provider: string) => {
    if (value !== undefined && flags.provider !== provider) throw new UsageError(`${flag} is for --provider ${provider}`);
  };
  only('--hosts', flags.hosts, 'ssh');
  only('--identity', flags.identity, 'ssh');
  only('--ssh-option', flags.sshOption, 'ssh');
  only('--sbatch-arg', flags.sbatchArg, 'slurm');
  only('--output-dir', flags.outputDir, 'slurm');
  if (flags.provider === 'local') {
    if (flags.remoteCommand !== undefined) throw new UsageError('--remote-command is for --provider ssh or slurm');
    return new LocalDriver({ env: { ...process.env, TIDEPOOL_SECRET: secretText(secret) } });
  }
  if (flags.provider === 'ssh') {
    const hosts = (flags.hosts ?? '').split(',').map((h) => h.trim()).filter(Boolean);
    if (hosts.length === 0) throw new UsageError('--provider ssh needs --hosts host[,host…]');
    return new SshDriver({
      hosts, secret, nodesPerHost: flags.nodesPerHost,
      ...(flags.remoteCommand !== undefined ? { command: flags.remoteCommand } : {}),
      ...(flags.identity !== undefined ? { identityFile: flags.identity } : {}),
      ...(flags.sshOption ? { sshOptions: flags.sshOption } : {}),
    });
  }
  return new SlurmDriver({
    secret,
    ...(flags.remoteCommand !== undefined ? { command: flags.remoteCommand } : {}),
    ...(flags.sbatchArg ? { sbatchArgs: flags.sbatchArg } : {}),
    ...(flags.outputDir !== undefined ? { outputDir: flags.outputDir } : {}),
  });
}

function describe(e: ProviderEvent): string {
  if (e.type === 'retry') return `${e.failures} start(s) failed in a row; next attempt at ${new Date(e.after).toISOString()}`;
  return `node ${e.node} ${e.state}${e.where ? ` on ${e.where}` : ''}${e.error ? `: ${e.error}` : ''}`;
}
