import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The TSPLIB instances shipped in the package's `data/tsplib` (see data/README.md), with their published optima. */
export const DEMO_INSTANCE = 'gr48';
export const QUICK_INSTANCE = 'att48';

/** The package's `data/tsplib` directory, found upwards from this module (sources or dist). */
export function bundledDir(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, 'data', 'tsplib');
    if (existsSync(join(candidate, 'optima.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error('the bundled instances (data/tsplib) are missing from this installation');
  }
}

export function bundledInstance(name: string): string {
  return join(bundledDir(), `${name}.tsp`);
}

/** Published optimum of a bundled instance by its NAME, or null for anything else. */
export function knownOptimum(name: string): number | null {
  const optima = JSON.parse(readFileSync(join(bundledDir(), 'optima.json'), 'utf8')) as Record<string, { optimal_tour_length: number }>;
  return optima[name]?.optimal_tour_length ?? null;
}
