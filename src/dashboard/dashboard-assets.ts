import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chartPackageFile } from './dashboard-dependencies.js';

export interface Asset {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * The page's files, loaded once into memory: ours from `src/dashboard/assets` (found from the
 * sources or from the compiled `dist/`), and uPlot's, vega's and vega-lite's from node_modules. Only these are served:
 * request paths never reach the file system.
 */
export function loadDashboardAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const dir = assetsDir();
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (type) assets.set(`/assets/${name}`, { body: readFileSync(join(dir, name)), type });
  }
  const vendor = (pkg: string, file: string) => {
    const name = file.slice(file.lastIndexOf('/') + 1);
    assets.set(`/assets/vendor/${name}`, { body: readFileSync(chartPackageFile(pkg, file)), type: TYPES[extname(name)]! });
  };
  for (const file of ['dist/uPlot.iife.min.js', 'dist/uPlot.min.css']) vendor('uplot', file);
  // The kinds' charts (figures over time, Gantts, breakdowns): vega-lite compiles in the page, vega renders.
  vendor('vega', 'build/vega.min.js');
  vendor('vega-lite', 'build/vega-lite.min.js');
  const index = assets.get('/assets/index.html');
  if (!index) throw new Error(`dashboard assets are missing: no index.html in ${dir}`);
  assets.set('/', index);
  return assets;
}

function assetsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // From the sources: ./assets; from dist/src/dashboard: the sources' copy shipped in the package.
  for (const candidate of [join(here, 'assets'), join(here, '..', '..', '..', 'src', 'dashboard', 'assets')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  throw new Error(`dashboard assets not found next to ${here}`);
}
