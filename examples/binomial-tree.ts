/**
 * Count the nodes of a UTS binomial tree on an embedded tidepool cluster (an irregular, deep and narrow
 * tree whose work is found only while it runs; see examples/tasks/binomial-tree.ts):
 *
 *   npx tsx examples/binomial-tree.ts [small|t3|t3-100m] [nodes] [workers-per-node]
 *
 * Prints {"tree", "nodes", "leaves", "tasks", "sequentialNodes", "seconds"}: the parallel count and the count of the
 * same tree in a plain loop on this thread, which must agree. t3 has 4,112,897 nodes (UTS's T3).
 */
import { Cluster } from '../src/index.js';
import { countSequentially, rootTask, TREES, type TreeCount } from './tasks/binomial-tree.js';

const name = process.argv[2] ?? 'small';
const nodes = Number(process.argv[3] ?? 2);
const workers = Number(process.argv[4] ?? 1);
if (!Object.hasOwn(TREES, name)) {
  process.stderr.write(`error: unknown tree "${name}": choose one of ${Object.keys(TREES).join(', ')}\n`);
  process.exit(2);
}
const shape = TREES[name as keyof typeof TREES];

const cluster = await Cluster.embedded({ nodes, workers });
const started = performance.now();
// The specifier is this file's sibling under tsx (.ts) and once built (.js).
const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const job = await cluster.submit({ module: new URL(`./tasks/binomial-tree${ext}`, import.meta.url).href, export: 'default' }, rootTask(shape));
const outcome = await job.outcome();
const seconds = (performance.now() - started) / 1000;
await cluster.close();
if (outcome.status !== 'done') throw new Error(`the job ended ${outcome.status}`);
const count = outcome.value as TreeCount;
console.log(JSON.stringify({ tree: name, ...count, tasks: outcome.completions, sequentialNodes: countSequentially(shape).nodes, seconds }));
