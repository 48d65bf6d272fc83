import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { usableCores } from '../util/capacity.js';
import { UsageError } from './errors.js';

/** The text of the file a flag names, or a UsageError naming the flag and why it cannot be read. */
export function readFlagFile(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The cluster secret from --secret-file or $TIDEPOOL_SECRET (the file's first line: see clusterSecrets). */
export function clusterSecret(file: string | undefined): Buffer {
  return clusterSecrets(file)[0]!;
}

/**
 * Every secret of --secret-file, one per line (blank lines ignored), or $TIDEPOOL_SECRET: the first is
 * the current one; lines after it are the secrets a node still accepts during a rotation
 * (docs/security.md, "Rotating the secret").
 */
export function clusterSecrets(file: string | undefined): Buffer[] {
  if (file !== undefined) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (err) {
      throw new UsageError(`--secret-file: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    const lines = bytes.toString('utf8').split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
    if (lines.length === 0) throw new UsageError(`--secret-file: ${file} is empty; a cluster secret needs at least 16 bytes`);
    return lines.map((line, i) => {
      const secret = Buffer.from(line);
      if (secret.length < 16) throw new UsageError(`--secret-file: ${file}:${i + 1} holds ${secret.length} bytes; a cluster secret needs at least 16`);
      return secret;
    });
  }
  const env = process.env.TIDEPOOL_SECRET;
  if (env !== undefined) {
    if (env.length < 16) throw new UsageError('TIDEPOOL_SECRET needs at least 16 characters');
    return [Buffer.from(env)];
  }
  throw new UsageError('a cluster secret is required: --secret-file FILE (or TIDEPOOL_SECRET); every node of a cluster uses the same one');
}

/**
 * The secret of node processes a command starts for itself (`solve --zk --nodes N`): the user's when
 * given (--secret-file or $TIDEPOOL_SECRET, checked now), else a fresh random one. A fresh one goes into
 * this process's environment, which the children inherit — never onto their command lines, which `ps`
 * shows to every user of the machine. Returns which it is.
 */
export function secretForLocalNodes(file: string | undefined): 'given' | 'fresh' {
  if (file !== undefined || process.env.TIDEPOOL_SECRET !== undefined) {
    clusterSecret(file);
    return 'given';
  }
  process.env.TIDEPOOL_SECRET = randomBytes(32).toString('base64url');
  return 'fresh';
}

/** One worker per usable core: the scheduler's count, lowered by a cgroup CPU quota (src/util/capacity.ts). */
export function defaultWorkers(): number {
  return usableCores();
}
