/**
 * The curated data set some benchmarks read (TSPLIB, DIMACS clique graphs, workflows, spot-price and
 * failure traces: about 30 MB of public files with their provenance in its README, not in this
 * repository). Its root is given on the command line as `--data DIR`; there is no default location.
 * The tests never need it: they read the small copies in test/data.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** The WfInstances Montage 0.5° run (1,738 tasks) of AME's Tables 1–2, relative to the set's root. */
export const MONTAGE_05D = 'workflows/wfformat-v1.5/pegasus/montage/montage-chameleon-2mass-05d-001.json';

/** The parseArgs option every such benchmark declares. */
export const DATA_OPTION = { data: { type: 'string' } } as const;

/**
 * DIR/relative for the file (or directory) a benchmark needs, or the process ends with exit code 2
 * and one line saying what is missing: no `--data` at all, or a DIR without that file.
 */
export function curatedPath(dir: string | undefined, relative: string, bench: string): string {
  if (dir === undefined || dir === '') refuse(`${bench} reads ${relative} from the curated data set: give the set's root with --data DIR`);
  const path = resolve(dir, relative);
  if (!existsSync(path)) refuse(`--data ${dir}: there is no ${relative} in it (--data is the curated data set's root, the directory holding tsplib/, clique/, workflows/ and traces/)`);
  return path;
}

function refuse(message: string): never {
  console.error(`error: ${message}`);
  process.exit(2);
}
