/**
 * The package as a stranger gets it: `npm pack`, the tarball installed into an empty project, and then
 * the README's first program (its code blocks that name a file, taken from README.md so that the test
 * and the README cannot drift), `npx tidepool demo --quick --json`, an import of every entry point, and
 * a part used without its optional packages. Needs `npm run build` (the tarball holds dist/). npm
 * installs from its cache where it can (`--prefer-offline`); dependencies it has never fetched come
 * from the registry.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCommand, type Run } from '../support/cli.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const PKG = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  name: string; exports: Record<string, unknown>; dependencies: Record<string, string>; peerDependencies: Record<string, string>;
};
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
/** π(10^7), the number of primes below ten million. */
const PRIMES_BELOW_TEN_MILLION = 664579;
/** att48's published optimal tour length (TSPLIB95, bestSolutions.txt): the quick demo's instance. */
const ATT48_OPTIMUM = 10628;

let work: string;
let app: string;
let tarFiles: string[];

/**
 * npm and node as a user runs them: nothing inherited from an npm that runs this test (npm_* variables
 * would point the child's npm at this repository) nor from the caller's TIDEPOOL_* settings.
 */
function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|tidepool_|init_cwd$)/i.test(k)));
}

async function run(command: string, args: string[], cwd: string, timeoutMs = 180_000): Promise<Run> {
  const result = await runCommand(command, args, { cwd, timeoutMs, env: userEnv() });
  return result;
}

function ok(result: Run, what: string): Run {
  assert.equal(result.code, 0, `${what} failed (exit ${result.code}):\n${result.stderr}\n${result.stdout}`);
  return result;
}

const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], cwd);

before(async () => {
  assert.ok(existsSync(path.join(REPO, 'dist', 'src', 'index.js')), 'dist/ is missing: run `npm run build` first');
  work = mkdtempSync(path.join(os.tmpdir(), 'tidepool-pack-'));
  // --ignore-scripts: dist/ is built already (prepare would build it again).
  const packed = ok(await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], REPO), 'npm pack');
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarFiles = info!.files.map((f) => f.path);
  app = path.join(work, 'app');
  mkdirSync(app);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'stranger-app', private: true, type: 'module' }));
  ok(await npm(['install', '--prefer-offline', path.join(work, info!.filename)], app), 'npm install of the tarball');
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the tarball holds the built code, its sources, types, licences and notices, and nothing of the repository', () => {
  for (const file of ['package.json', 'README.md', 'LICENSE', 'THIRD_PARTY_NOTICES', 'LICENSES/LGPL-3.0.txt', 'LICENSES/GPL-3.0.txt',
    'bin/tidepool.mjs', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/cli/main.js', 'src/index.ts', 'src/dashboard/assets/index.html']) {
    assert.ok(tarFiles.includes(file), `${file} is in the tarball`);
  }
  const stray = tarFiles.filter((f) => /^(test|bench|examples|docs|scripts|node_modules|\.ci)\//.test(f) || /^dist\/(test|bench|examples)\//.test(f));
  assert.deepEqual(stray, [], 'no tests, benches, examples or repository tooling');
  // Every data file shipped is accounted for in THIRD_PARTY_NOTICES.
  const notices = readFileSync(path.join(REPO, 'THIRD_PARTY_NOTICES'), 'utf8');
  const data = tarFiles.filter((f) => f.startsWith('data/'));
  assert.ok(data.length > 0);
  for (const file of data) assert.ok(notices.includes(file), `${file} is named in THIRD_PARTY_NOTICES`);
});

test('every source map of the installed package resolves to a source file that is there', () => {
  const installed = path.join(app, 'node_modules', PKG.name);
  const maps = tarFiles.filter((f) => f.endsWith('.map'));
  assert.ok(maps.some((m) => m.endsWith('.js.map')) && maps.some((m) => m.endsWith('.d.ts.map')), 'source and declaration maps are shipped');
  for (const map of maps) {
    const { sources } = JSON.parse(readFileSync(path.join(installed, map), 'utf8')) as { sources: string[] };
    for (const source of sources) {
      const file = path.resolve(path.dirname(path.join(installed, map)), source);
      assert.ok(existsSync(file), `${map}: source ${source} is in the package`);
    }
  }
});

test('the core installs without native builds and without the optional parts\' packages', () => {
  const modules = path.join(app, 'node_modules');
  for (const optional of Object.keys(PKG.peerDependencies)) {
    assert.ok(!existsSync(path.join(modules, optional)), `${optional} (optional) was not installed`);
  }
  for (const dependency of Object.keys(PKG.dependencies)) assert.ok(existsSync(path.join(modules, dependency)), `${dependency} installed`);
  // What may run at install time: only msgpackr's optional accelerator, whose script picks its prebuilt
  // binary (a package per platform) and compiles nothing when one matches.
  const withScripts: string[] = [];
  const visit = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      const root = path.join(dir, name);
      if (name.startsWith('@')) {
        visit(root);
        continue;
      }
      const manifest = path.join(root, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; scripts?: Record<string, string>; gypfile?: boolean };
      const scripts = pkg.scripts ?? {};
      if (scripts.preinstall || scripts.install || scripts.postinstall || pkg.gypfile || existsSync(path.join(root, 'binding.gyp'))) withScripts.push(pkg.name);
      if (existsSync(path.join(root, 'node_modules'))) visit(path.join(root, 'node_modules'));
    }
  };
  visit(modules);
  assert.deepEqual(withScripts.filter((n) => n !== PKG.name).sort(), ['msgpackr-extract']);
});

test('the README\'s first program compiles against the installed types, prints π(10^7) and ends by itself', async () => {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  // The program is the README's ```ts blocks whose first line names their file.
  const blocks = [...readme.matchAll(/```ts\n\/\/ ([\w./-]+\.ts)\n([\s\S]*?)```/g)].map((m) => ({ file: m[1]!, code: m[2]! }));
  assert.deepEqual(blocks.map((b) => b.file).sort(), ['main.ts', 'tasks/count-primes.ts'], 'README shows the task module and the main program');
  for (const { file, code } of blocks) {
    mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
    writeFileSync(path.join(app, file), code);
  }
  writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      module: 'nodenext', target: 'es2022', strict: true, skipLibCheck: false,
      // A TypeScript user has @types/node; this test borrows the repository's.
      types: ['node'], typeRoots: [path.join(REPO, 'node_modules', '@types')],
    },
    files: blocks.map((b) => b.file),
  }));
  ok(await run(process.execPath, [TSC, '-p', 'tsconfig.json'], app), 'tsc on the README program');
  const program = ok(await run(process.execPath, ['main.js'], app, 120_000), 'node main.js (killed if it does not end by itself)');
  assert.equal(program.stdout.trim(), String(PRIMES_BELOW_TEN_MILLION));
});

test('npx tidepool demo --quick --json solves att48 to its published optimum, without the dashboard\'s packages', async () => {
  const demo = ok(await run('npx', ['tidepool', 'demo', '--quick', '--json'], app), 'npx tidepool demo --quick --json');
  const report = JSON.parse(demo.stdout) as { objective: number; verified: boolean; dashboard: string | null };
  assert.equal(report.verified, true);
  assert.equal(report.objective, ATT48_OPTIMUM);
  assert.equal(report.dashboard, null);
  assert.match(demo.stderr, /no dashboard: it needs fastify, prom-client, uplot, vega, vega-lite/);
});

test('every entry point imports from the installed package', async () => {
  const expected: Record<string, string[]> = {
    '.': ['Cluster', 'defineTask', 'defineSearch', 'defineJobKind', 'MissingPackageError'],
    './coord': ['connect', 'GroupMembership', 'LeaderElection', 'TerminationList', 'GlobalVariables'],
    './dashboard': ['ClusterMonitor', 'startDashboard'],
    './iterative': ['defineIterative', 'runIterative'],
    './malleable': ['defineMalleable', 'submitMalleable', 'ResourceManager'],
    './service': ['Distribution', 'startService'],
    './workflow': ['loadWorkflow', 'WorkflowBuilder', 'runWorkflow'],
  };
  const subpaths = Object.keys(PKG.exports).filter((k) => k !== './package.json');
  assert.deepEqual(subpaths.sort(), Object.keys(expected).sort(), 'the test knows every entry point');
  const script = `const expected = ${JSON.stringify(expected)};
    const out = {};
    for (const [sub, names] of Object.entries(expected)) {
      const mod = await import(sub === '.' ? '${PKG.name}' : '${PKG.name}/' + sub.slice(2));
      out[sub] = names.filter((n) => mod[n] === undefined);
    }
    console.log(JSON.stringify(out));`;
  const imported = ok(await run(process.execPath, ['--input-type=module', '-e', script], app), 'importing every entry point');
  assert.deepEqual(JSON.parse(imported.stdout), Object.fromEntries(Object.keys(expected).map((k) => [k, []])));
});

test('a part used without its packages says which to install', async () => {
  writeFileSync(path.join(app, 'tiny.dax'), '<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="3.6" name="tiny"></adag>\n');
  const script = `import { MissingPackageError } from '${PKG.name}';
    import { loadWorkflow } from '${PKG.name}/workflow';
    try { await loadWorkflow('tiny.dax'); console.log('loaded'); }
    catch (err) { console.log(JSON.stringify({ missing: err instanceof MissingPackageError, package: err.packageName, message: err.message })); }`;
  const result = ok(await run(process.execPath, ['--input-type=module', '-e', script], app), 'loadWorkflow without saxes');
  const answer = JSON.parse(result.stdout) as { missing: boolean; package: string; message: string };
  assert.equal(answer.missing, true);
  assert.equal(answer.package, 'saxes');
  assert.match(answer.message, new RegExp(`needs the package saxes, which is not installed: npm install saxes@${PKG.peerDependencies.saxes!.replace(/[.^]/g, '\\$&')}$`));
});
