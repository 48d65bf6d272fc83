/**
 * Test support: a one-machine Slurm cluster from Debian's slurm-wlm, with MUNGE for authentication:
 * munged, slurmctld and slurmd as child processes of the test, each with its own configuration,
 * key, socket, state and logs in a temporary directory, on free ports (the packages' services and
 * /etc are never used). `env` (SLURM_CONF) is what sbatch, squeue and scancel need to reach it.
 * Everything is killed when the test process exits.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from './hosts.js';
import { waitFor } from './wait.js';
import { freePorts } from './zk-ensemble.js';

export interface SlurmCluster {
  /** The environment Slurm's commands need (SLURM_CONF and the rest of this process's). */
  env: NodeJS.ProcessEnv;
  /** The one compute node's name. */
  nodeName: string;
  dir: string;
  /** Runs a Slurm command (squeue, sinfo, …) and returns its output. */
  command(program: string, args: readonly string[]): string;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let hook = false;

function daemon(program: string, args: readonly string[], env: NodeJS.ProcessEnv, log: string): ChildProcess {
  const child = spawn(program, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  child.once('exit', () => {
    live.delete(child);
    writeFileSync(log, err, { flag: 'a' });
  });
  live.add(child);
  if (!hook) {
    hook = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  return child;
}

export async function startSlurm(): Promise<SlurmCluster> {
  execFileSync('bash', [path.join(PROJECT_ROOT, 'scripts/ensure-slurm.sh')], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 15 * 60_000 });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tidepool-slurm-'));
  chmodSync(dir, 0o755); // munged refuses a socket directory others cannot reach
  for (const d of ['munge', 'state', 'spool', 'log']) mkdirSync(path.join(dir, d), { recursive: true, mode: 0o755 });
  const key = path.join(dir, 'munge', 'munge.key');
  writeFileSync(key, randomBytes(1024), { mode: 0o400 });
  const socket = path.join(dir, 'munge', 'munge.socket');
  const nodeName = os.hostname().split('.')[0]!;
  const [ctldPort, slurmdPort] = await freePorts(2);
  const conf = path.join(dir, 'slurm.conf');
  writeFileSync(conf, [
    'ClusterName=tidepooltest',
    `SlurmctldHost=${nodeName}(127.0.0.1)`,
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${slurmdPort}`,
    'SlurmUser=root',
    'SlurmdUser=root',
    'AuthType=auth/munge',
    `AuthInfo=socket=${socket}`,
    'CredType=cred/munge',
    `StateSaveLocation=${path.join(dir, 'state')}`,
    `SlurmdSpoolDir=${path.join(dir, 'spool')}`,
    `SlurmctldPidFile=${path.join(dir, 'slurmctld.pid')}`,
    `SlurmdPidFile=${path.join(dir, 'slurmd.pid')}`,
    `SlurmctldLogFile=${path.join(dir, 'log', 'slurmctld.log')}`,
    `SlurmdLogFile=${path.join(dir, 'log', 'slurmd.log')}`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'SchedulerType=sched/builtin',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_CPU',
    'MpiDefault=none',
    'ReturnToService=2',
    // The one machine stands for a node with 4 CPUs whatever it has (jobs here are tidepool nodes with 1 worker).
    'SlurmdParameters=config_overrides',
    'KillWait=5',
    'MinJobAge=30',
    `NodeName=${nodeName} NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN`,
    'PartitionName=tidepool Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
    '',
  ].join('\n'));
  const env = { ...process.env, SLURM_CONF: conf };
  const log = (name: string) => path.join(dir, 'log', `${name}.stderr`);
  const daemons = [
    daemon('/usr/sbin/munged', ['-F', '-f', `--socket=${socket}`, `--key-file=${key}`, `--log-file=${path.join(dir, 'log', 'munged.log')}`, `--pid-file=${path.join(dir, 'munge', 'munged.pid')}`, `--seed-file=${path.join(dir, 'munge', 'seed')}`], env, log('munged')),
  ];
  const command = (program: string, args: readonly string[]) => execFileSync(program, args, { env, timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  const cluster: SlurmCluster = {
    env, nodeName, dir, command,
    async stop() {
      for (const d of daemons) d.kill('SIGTERM');
      await Promise.all(daemons.map((d) => (d.exitCode !== null || d.signalCode !== null ? undefined : new Promise((r) => d.once('exit', r)))));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(async () => {
      try {
        execFileSync('munge', ['-S', socket, '-n'], { stdio: ['ignore', 'ignore', 'ignore'] });
        return true;
      } catch {
        return false;
      }
    }, 'munged to answer');
    daemons.push(daemon('slurmctld', ['-D', '-i', '-f', conf], env, log('slurmctld')));
    daemons.push(daemon('slurmd', ['-D', '-f', conf, '-N', nodeName], env, log('slurmd')));
    await waitFor(() => {
      for (const d of daemons) if (d.exitCode !== null) throw new Error(`a Slurm daemon ended (${d.spawnfile} ${d.exitCode}); logs in ${path.join(dir, 'log')}`);
      try {
        return /^idle/m.test(command('sinfo', ['-h', '-o', '%T']));
      } catch {
        return false;
      }
    }, 'the Slurm node to be idle', 60_000);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
