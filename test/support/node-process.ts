/**
 * Test support: tidepool node processes (`tidepool node`) started from the sources with tsx,
 * so that tests exercise the real CLI, real TCP and real ZooKeeper.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeProcess as start, type NodeProcess } from '../../src/runtime/client/node-processes.js';
import { childEnv } from './child-env.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';

export type { NodeProcess };

// From the sources even when this file runs compiled (dist/test/support, as the benchmarks do).
const RUN = fileURLToPath(new URL(import.meta.url.includes('/dist/test/') ? '../../../src/cli/run.ts' : '../../src/cli/run.ts', import.meta.url));

/** Writes a random cluster secret to a private file and returns its path. */
export function secretFile(): string {
  const dir = mkdtempSync(join(os.tmpdir(), 'tidepool-secret-'));
  const file = join(dir, 'secret');
  writeFileSync(file, `${ClusterSecret.newText()}\n`, { mode: 0o600 });
  return file;
}

/** The secret a secret file holds (what a client of those nodes connects with). */
export function secretIn(file: string): ClusterSecret {
  return ClusterSecret.parse(readFileSync(file, 'utf8'), file);
}

/** Starts `tidepool node` from the sources and resolves once it printed its ready line. */
export function startNodeProcess(opts: { zk: string; secretFile: string; workers?: number; id?: string; extraArgs?: string[]; timeoutMs?: number; env?: Record<string, string> }): Promise<NodeProcess> {
  const { env, ...rest } = opts;
  return start({
    ...rest,
    entry: { execArgv: ['--import', 'tsx'], script: RUN },
    env: childEnv({ TIDEPOOL_LOG: process.env.TIDEPOOL_LOG ?? 'warn', ...env }),
  });
}
