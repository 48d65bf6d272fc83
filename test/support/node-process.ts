/**
 * Test support: tidepool node processes (`tidepool node`) started from the sources with tsx,
 * so that tests exercise the real CLI, real TCP and real ZooKeeper.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUN = fileURLToPath(new URL('../../src/cli/run.ts', import.meta.url));

export interface NodeProcess {
  id: string;
  address: string;
  process: ChildProcess;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  stderr(): string;
  kill(signal?: NodeJS.Signals): void;
}

/** Writes a random cluster secret to a private file and returns its path. */
export function secretFile(): string {
  const dir = mkdtempSync(join(os.tmpdir(), 'tidepool-secret-'));
  const file = join(dir, 'secret');
  writeFileSync(file, `${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}-test-secret`, { mode: 0o600 });
  return file;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** Starts `tidepool node` and resolves once it printed its ready line. */
export function startNodeProcess(opts: { zk: string; secretFile: string; workers?: number; id?: string; extraArgs?: string[]; timeoutMs?: number }): Promise<NodeProcess> {
  const args = ['--import', 'tsx', RUN, 'node', '--zk', opts.zk, '--secret-file', opts.secretFile, '--workers', String(opts.workers ?? 1), '--json'];
  if (opts.id) args.push('--id', opts.id);
  args.push(...(opts.extraArgs ?? []));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TIDEPOOL_LOG: process.env.TIDEPOOL_LOG ?? 'warn' } });
  live.add(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => {
    live.delete(child);
    resolve(code ?? signal ?? 'unknown');
  }));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node process not ready within ${opts.timeoutMs ?? 30_000} ms; stderr:\n${stderr}`));
    }, opts.timeoutMs ?? 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      const ready = JSON.parse(line) as { node: string; address: string };
      resolve({ id: ready.node, address: ready.address, process: child, exited, stderr: () => stderr, kill: (s = 'SIGKILL') => child.kill(s) });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`node process exited (${code}) before it was ready; stderr:\n${stderr}`));
    });
  });
}
