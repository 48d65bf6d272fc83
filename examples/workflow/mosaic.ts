/**
 * Tasks added while the workflow runs: five tiles are projected, then a task finds which of them
 * overlap and adds a task per overlapping pair and one gathering their results (Montage's mDiffFit
 * and mConcatFit stages, whose sizes AME learns only at run time). Run it again in the same directory
 * and nothing runs; the overlaps task's additions are remembered with its completion.
 *
 *   npx tsx examples/workflow/mosaic.ts [SHARED_DIR]
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../../src/index.js';
import { WorkflowBuilder, runWorkflow } from '../../src/frameworks/workflow/index.js';

const shared = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'mosaic-'));
// Each raw tile: where it starts on the sky, how wide it is, its background level (written once: a rewritten input is a changed one).
const tiles = ['0 10 1', '8 10 3', '16 10 2', '30 5 7', '33 4 4'];
tiles.forEach((t, i) => existsSync(join(shared, `raw-${i}.txt`)) || writeFileSync(join(shared, `raw-${i}.txt`), `${t}\n`));

const module = new URL('./mosaic-tasks.ts', import.meta.url).href;
const builder = new WorkflowBuilder('mosaic');
tiles.forEach((_, i) => builder.fn(`project-${i}`, { module, export: 'project' }, { args: [`${i}`], inputs: [`raw-${i}.txt`], outputs: [`proj-${i}.json`] }));
builder.fn('overlaps', { module, export: 'overlaps' }, { args: tiles.map((_, i) => `${i}`), inputs: tiles.map((_, i) => `proj-${i}.json`), outputs: ['pairs.txt'] });

const cluster = await Cluster.embedded({ nodes: 2, workers: 1 });
try {
  const result = await runWorkflow(cluster, builder.build(), { builder, shared, nodes: 2 });
  const read = (name: string) => readFileSync(join(shared, name), 'utf8').trim();
  console.log(JSON.stringify({ tasks: result.tasks, ...(result.nothingToDo ? { nothingToDo: true } : {}), pairs: read('pairs.txt').split('\n'), fit: Number(read('fit.txt')) }));
} finally {
  await cluster.close();
}
