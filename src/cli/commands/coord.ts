import { isCoordError } from '../../coord/errors.js';
import { joinPath, validatePath } from '../../coord/paths.js';
import type { CoordClient } from '../../coord/types.js';
import { jsonOption, secretOption, zkOptions } from '../common-options.js';
import { withZk } from '../connection.js';
import { UsageError } from '../errors.js';
import { clusterCredential } from '../options.js';
import { printJson } from '../output.js';
import { kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';

interface CoordOptions {
  zk: string;
  timeout: number;
  secretFile?: string;
  json?: boolean;
  depth?: number;
}

/** `tidepool coord …`: inspect the coordination state of a running cluster on ZooKeeper. */
export function registerCoordCommands(program: SettingsCommand): void {
  const coord = program
    .command('coord')
    .description('inspect the coordination state (znodes) of a cluster on ZooKeeper')
    .addHelpText('after', '\nExamples:\n  tidepool coord ls / --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --depth 3\n  tidepool coord get /tidepool/nodes --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --json');

  const common = (cmd: SettingsCommand) => jsonOption(secretOption(zkOptions(cmd, 'the cluster\'s ZooKeeper ensemble', 'coord commands inspect a running cluster'), 'read'));

  common(coord.command('ls').argument('[path]', 'znode path', '/').description('list the znodes under PATH as a tree'))
    .setting('--depth <n>', 'how many levels to descend', kinds.positiveInt, '1')
    .addHelpText('after', '\nExample:\n  tidepool coord ls /tidepool --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --depth 3')
    .action(async (path: string, opts: CoordOptions) => {
      const depth = opts.depth ?? 1;
      await withClient(opts, path, async (client) => {
        const tree = await listTree(client, path, depth);
        if (opts.json) printJson({ path, tree });
        else printTree(path, tree, '');
      });
    });

  common(coord.command('get').argument('<path>', 'znode path').description('print the data and version of a znode'))
    .addHelpText('after', '\nExample:\n  tidepool coord get /tidepool/nodes --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --json')
    .action(async (path: string, opts: CoordOptions) => {
      await withClient(opts, path, async (client) => {
        const { data, stat } = await client.getData(path);
        const text = data.toString('utf8');
        if (opts.json) printJson({ path, data: text, version: stat.version, numChildren: stat.numChildren, ephemeralOwner: stat.ephemeralOwner });
        else process.stdout.write(`${text}\n(version ${stat.version}, ${stat.numChildren} children${stat.ephemeralOwner ? `, ephemeral of session ${stat.ephemeralOwner}` : ''})\n`);
      });
    });
}

type Tree = { [name: string]: Tree | null };

async function listTree(client: CoordClient, path: string, depth: number): Promise<Tree> {
  const children = (await client.getChildren(path)).sort();
  const out: Tree = {};
  for (const child of children) out[child] = depth > 1 ? await listTree(client, joinPath(path, child), depth - 1) : null;
  return out;
}

function printTree(path: string, tree: Tree, indent: string): void {
  if (indent === '') process.stdout.write(`${path}\n`);
  for (const [name, sub] of Object.entries(tree)) {
    process.stdout.write(`${indent}  ${name}\n`);
    if (sub) printTree(name, sub, `${indent}  `);
  }
}

async function withClient(opts: CoordOptions, path: string, run: (client: CoordClient) => Promise<void>): Promise<void> {
  try {
    validatePath(path);
  } catch {
    throw new UsageError(`path "${path}" is not an absolute znode path (like /tidepool/jobs)`);
  }
  await withZk(opts.zk, opts.timeout, clusterCredential(opts.secretFile), async (client) => {
    try {
      await run(client);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) throw new UsageError(`no znode at ${path}`);
      throw err;
    }
  });
}
