import { protectClusterTree } from '../../runtime/job/cluster-root.js';
import { DEFAULT_ROOT } from '../../runtime/job/job-paths.js';
import { ClusterSecret } from '../../util/cluster-secret.js';
import { jsonOption, secretOption, zkOptions } from '../common-options.js';
import { withZk } from '../connection.js';
import { UsageError } from '../errors.js';
import { clusterSecret } from '../options.js';
import { printLine } from '../output.js';
import { kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';

interface SecretFlags {
  zk: string;
  timeout: number;
  secretFile?: string;
  root: string;
  json?: boolean;
}

/** `tidepool secret new|monitor|protect`: make a cluster secret, derive its read-only monitor credential, secure a tree (docs/security.md). */
export function registerSecretCommands(program: SettingsCommand): void {
  const secret = program.command('secret').description('the cluster secret: make one, derive its read-only monitor credential, give a cluster\'s znodes its access list (docs/security.md)');

  jsonOption(secret.command('new')
    .description('print a new random cluster secret (32 random bytes, base64url); keep it in a file only its owner reads (chmod 600)'))
    .addHelpText('after', '\nExample:\n  tidepool secret new > tidepool.secret && chmod 600 tidepool.secret')
    .action((flags: SecretFlags) => {
      const text = ClusterSecret.newText();
      printLine(flags.json, { secret: text }, text);
    });

  jsonOption(secretOption(secret.command('monitor')
    .description('print the read-only monitor credential derived from the cluster secret: with it, status, jobs, coord and the monitor read the cluster and change nothing'),
  'file holding the cluster secret (or the secret itself in $TIDEPOOL_SECRET)'))
    .addHelpText('after', '\nExample:\n  tidepool secret monitor --secret-file ~/.tidepool/secret > tidepool.monitor')
    .action((flags: SecretFlags) => {
      const credential = clusterSecret(flags.secretFile).monitorCredential();
      printLine(flags.json, { credential }, credential);
    });

  jsonOption(secretOption(zkOptions(secret.command('protect')
    .description('give the cluster\'s root znode and every znode under it the access list of the secret(s) in --secret-file: to secure a tree made before access lists, and twice while rotating the secret (docs/security.md)'),
  'the cluster\'s ZooKeeper ensemble', 'protect acts on a cluster registered on ZooKeeper'),
  'file holding the cluster secret(s), one a line, the current one first (or in $TIDEPOOL_SECRET)'))
    .setting('--root <path>', 'the cluster\'s root znode', kinds.text, DEFAULT_ROOT)
    .addHelpText('after', '\nExample:\n  tidepool secret protect --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret')
    .action(async (flags: SecretFlags) => {
      const secretValue = clusterSecret(flags.secretFile);
      const { root } = flags;
      if (!/^(\/[^/\s]+)+$/.test(root)) throw new UsageError(`--root: "${root}" is not a znode path (like ${DEFAULT_ROOT})`);
      await withZk(flags.zk, flags.timeout, secretValue, async (client) => {
        if (!(await client.exists(root))) throw new UsageError(`no znode at ${root}: nothing to protect (nodes create the root with the cluster's access list)`);
        const result = await protectClusterTree(client, root, secretValue);
        if (flags.json) process.stdout.write(`${JSON.stringify({ root, ...result })}\n`);
        else {
          process.stdout.write(`${root}: ${result.protected} znode(s) now carry the access list of ${secretValue.accepted.length} secret(s); ${result.resigned} job spec(s) signed again with the current secret\n`);
          if (result.unsigned.length > 0) process.stdout.write(`job specs no accepted secret signed (no node runs them): ${result.unsigned.join(' ')}\n`);
          if (result.refused.length > 0) process.stdout.write(`refused (this secret may not change them): ${result.refused.slice(0, 10).join(' ')}${result.refused.length > 10 ? ' …' : ''}\n`);
        }
        if (result.refused.length > 0) process.exitCode = 1;
      });
    });
}
