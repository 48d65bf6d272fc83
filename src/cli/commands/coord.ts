import type { Command } from 'commander';
import { connect } from '../../coord/connect.js';
import { CONNECTION_STRING_HELP } from '../../coord/connection-string.js';
import { isCoordError } from '../../coord/errors.js';
import { joinPath, validatePath } from '../../coord/paths.js';
import type { CoordClient } from '../../coord/types.js';
import { UsageError } from '../errors.js';
import { positiveInt, zookeeperConnection } from '../options.js';

interface CoordOptions {
  zk?: string;
  json?: boolean;
  depth?: string;
  timeout?: string;
}

/** `tidepool coord …`: inspect the coordination state of a running cluster on ZooKeeper. */
export function registerCoordCommands(program: Command): void {
  const coord = program
    .command('coord')
    .description('inspect the coordination state (znodes) of a cluster on ZooKeeper')
    .addHelpText('after', '\nExamples:\n  tidepool coord ls / --zk zk://127.0.0.1:2181 --depth 3\n  tidepool coord get /tidepool/jobs/j1/vars/incumbent --zk zk://127.0.0.1:2181 --json');

  const common = (cmd: Command) =>
    cmd
      .option('--zk <conn>', `cluster connection string (${CONNECTION_STRING_HELP})`)
      .option('--timeout <ms>', 'how long to wait for the ensemble', '10000')
      .option('--json', 'print one JSON object');

  common(coord.command('ls').argument('[path]', 'znode path', '/').description('list the znodes under PATH as a tree'))
    .option('--depth <n>', 'how many levels to descend', '1')
    .addHelpText('after', '\nExample:\n  tidepool coord ls /tidepool --zk zk://127.0.0.1:2181 --depth 3')
    .action(async (path: string, opts: CoordOptions) => {
      const depth = positiveInt(opts.depth ?? '1', '--depth');
      await withClient(opts, path, async (client) => {
        const tree = await listTree(client, path, depth);
        if (opts.json) print({ path, tree });
        else printTree(path, tree, '');
      });
    });

  common(coord.command('get').argument('<path>', 'znode path').description('print the data and version of a znode'))
    .addHelpText('after', '\nExample:\n  tidepool coord get /tidepool/jobs/j-lx3k2-1a2b3c/result --zk zk://127.0.0.1:2181 --json')
    .action(async (path: string, opts: CoordOptions) => {
      await withClient(opts, path, async (client) => {
        const { data, stat } = await client.getData(path);
        const text = data.toString('utf8');
        if (opts.json) print({ path, data: text, version: stat.version, numChildren: stat.numChildren, ephemeralOwner: stat.ephemeralOwner });
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
  const conn = zookeeperConnection(opts.zk, 'coord commands inspect a running cluster');
  try {
    validatePath(path);
  } catch {
    throw new UsageError(`path "${path}" is not an absolute znode path (like /tidepool/jobs)`);
  }
  const timeout = positiveInt(opts.timeout ?? '10000', '--timeout');
  const client = await connect(conn, { connectTimeoutMs: timeout });
  try {
    await run(client);
  } catch (err) {
    if (isCoordError(err, 'NO_NODE')) throw new UsageError(`no znode at ${path}`);
    throw err;
  } finally {
    await client.close();
  }
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
