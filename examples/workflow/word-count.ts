/**
 * A workflow built in code: real programs (sort, uniq, wc, cat) and one JavaScript function, each
 * task reading and writing named files; tidepool works out the dependencies from the files, runs
 * the tasks on an embedded cluster of two nodes and leaves the final outputs in the shared directory.
 *
 *   npx tsx examples/workflow/word-count.ts [SHARED_DIR]
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/index.js';
import { WorkflowBuilder, runWorkflow } from '../../src/frameworks/workflow/index.js';

const shared = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'word-count-'));
writeFileSync(join(shared, 'words.txt'), 'pear\napple\nfig\napple\nkiwi\nfig\n');

const builder = new WorkflowBuilder('word-count')
  .command('sort', ['sort', 'words.txt', '-o', 'sorted.txt'], { inputs: ['words.txt'], outputs: ['sorted.txt'] })
  .command('uniq', ['sh', '-c', 'uniq -c sorted.txt > counts.txt'], { inputs: ['sorted.txt'], outputs: ['counts.txt'] })
  .command('distinct', ['sh', '-c', 'wc -l < counts.txt | tr -d " " > distinct.txt'], { inputs: ['counts.txt'], outputs: ['distinct.txt'] })
  .fn('top', { module: new URL('./top-word.ts', import.meta.url).href, export: 'topWord' }, { inputs: ['counts.txt'], outputs: ['top.txt'] });

const cluster = await Cluster.embedded({ nodes: 2, workers: 1 });
try {
  const result = await runWorkflow(cluster, builder.build(), { builder, shared, nodes: 2 });
  const read = (name: string) => readFileSync(join(shared, name), 'utf8').trim();
  console.log(JSON.stringify({ tasks: result.tasks, distinct: Number(read('distinct.txt')), top: read('top.txt') }));
} finally {
  await cluster.close();
}
