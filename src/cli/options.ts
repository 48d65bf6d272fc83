import { readFileSync } from 'node:fs';
import { ClusterSecret } from '../util/cluster-secret.js';
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

/** --secret-file's help on commands that change the cluster, and on those that only read it. */
export const SECRET_FILE_TO_WRITE = 'file holding the cluster secret (or the secret itself in $TIDEPOOL_SECRET): required, this command changes the cluster';
export const SECRET_FILE_TO_READ = 'file holding the cluster secret or a monitor credential (`tidepool secret monitor`), or either in $TIDEPOOL_SECRET: reading a cluster needs one';

/**
 * What --secret-file (or $TIDEPOOL_SECRET) holds: the cluster secret — one per line (blank lines ignored),
 * the first current, the others still accepted during a rotation (docs/security.md, "Rotating the
 * secret") — or a read-only monitor credential; undefined when neither is given.
 */
export function clusterCredential(file: string | undefined): ClusterSecret | undefined {
  if (file !== undefined) return parsed(readFlagFile(file, '--secret-file'), `--secret-file ${file}`);
  const env = process.env.TIDEPOOL_SECRET;
  return env === undefined ? undefined : parsed(env, 'TIDEPOOL_SECRET');
}

function parsed(text: string, where: string): ClusterSecret {
  try {
    return ClusterSecret.parse(text, where);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The cluster secret from --secret-file or $TIDEPOOL_SECRET, for commands that write (a monitor credential does not do). */
export function clusterSecret(file: string | undefined): ClusterSecret {
  const secret = clusterCredential(file);
  if (secret === undefined) throw new UsageError('a cluster secret is required: --secret-file FILE (or TIDEPOOL_SECRET); every node and writing client of a cluster uses the same one');
  if (!secret.isSecret) throw new UsageError(`${file !== undefined ? `--secret-file ${file}` : 'TIDEPOOL_SECRET'} holds a read-only monitor credential; this command changes the cluster and needs the cluster secret`);
  return secret;
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
  process.env.TIDEPOOL_SECRET = ClusterSecret.newText();
  return 'fresh';
}

/** One worker per usable core: the scheduler's count, lowered by a cgroup CPU quota (src/util/capacity.ts). */
export function defaultWorkers(): number {
  return usableCores();
}
