/**
 * The layout rule of docs/runtime.md, checked on the code: every import in src/ (static, type-only,
 * `export … from`, and `import('…')` with a literal name) points down the folder order, never up, and
 * no files import each other in a circle. A failure names each offending import as file → file.
 *
 *   util ← coord, transport ← data ← runtime ← frameworks ← dashboard ← cli ← src/*.ts (the package's entries)
 *
 * Inside runtime/ the folders have an order of their own (worker, metrics ← job ← kinds ← pool, scheduler
 * ← node, providers ← client); folders on one step (coord and transport, worker and metrics, pool and
 * scheduler, node and providers) do not import each other. From outside runtime/, the scheduler is reached through its exported API
 * (runtime/scheduler/index.ts) only.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

/** The folder order, bottom first: a file may import files of its own step or a lower one. */
const LAYERS: ReadonlyArray<readonly string[]> = [
  ['util'],
  ['coord', 'transport'],
  ['data'],
  ['runtime'],
  ['frameworks'],
  ['dashboard'],
  ['cli'],
  ['.'], // src/index.ts and any other entry directly in src/
];

/** The order inside runtime/, bottom first. */
const RUNTIME_LAYERS: ReadonlyArray<readonly string[]> = [
  ['worker', 'metrics'],
  ['job'],
  ['kinds'],
  ['pool', 'scheduler'],
  ['node', 'providers'],
  ['client'],
];

/** Every TypeScript file under src/ (repository-relative, '/'-separated). */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(relative(ROOT, path).split('\\').join('/'));
  }
  return out;
}

/** The src/ files a file imports (relative module names only; packages and node: builtins are not ours). */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  const targets: string[] = [];
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const path = relative(ROOT, resolve(ROOT, dirname(file), fileName)).split('\\').join('/');
    const candidates = [path.replace(/\.js$/, '.ts'), path, `${path}.ts`, `${path}/index.ts`];
    const target = candidates.find((c) => known.has(c));
    assert.ok(target, `${file} imports "${fileName}", which is no file of src/`);
    targets.push(target);
  }
  return targets;
}

function stepOf(layers: ReadonlyArray<readonly string[]>, folder: string): number {
  const step = layers.findIndex((names) => names.includes(folder));
  assert.ok(step >= 0, `folder "${folder}" has no place in the layer order of test/architecture/import-graph.test.ts: give it one`);
  return step;
}

/** A file's place: its step in the folder order and, inside runtime/, its step there. */
function placeOf(file: string): { folder: string; step: number; runtimeFolder?: string; runtimeStep?: number } {
  const parts = file.split('/'); // src/<folder>/…
  const folder = parts.length === 2 ? '.' : parts[1]!;
  const place = { folder, step: stepOf(LAYERS, folder) };
  if (folder !== 'runtime') return place;
  assert.ok(parts.length > 3, `${file} lies loose in src/runtime/: every runtime file belongs to one of its folders`);
  return { ...place, runtimeFolder: parts[2]!, runtimeStep: stepOf(RUNTIME_LAYERS, parts[2]!) };
}

type Graph = ReadonlyMap<string, readonly string[]>;

/** Imports up or across the folder order. */
function upwardImports(graph: Graph): string[] {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    const a = placeOf(from);
    for (const to of targets) {
      const b = placeOf(to);
      if (b.step > a.step || (b.step === a.step && b.folder !== a.folder)) wrong.push(`${from} → ${to} (${a.folder} may not import ${b.folder})`);
    }
  }
  return wrong;
}

/** Imports up or across runtime's own folder order. */
function upwardRuntimeImports(graph: Graph): string[] {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    const a = placeOf(from);
    if (a.runtimeFolder === undefined) continue;
    for (const to of targets) {
      const b = placeOf(to);
      if (b.runtimeFolder === undefined) continue;
      if (b.runtimeStep! > a.runtimeStep! || (b.runtimeStep === a.runtimeStep && b.runtimeFolder !== a.runtimeFolder)) {
        wrong.push(`${from} → ${to} (runtime/${a.runtimeFolder} may not import runtime/${b.runtimeFolder})`);
      }
    }
  }
  return wrong;
}

/** Imports of the scheduler's own files from outside runtime/. */
function schedulerInternals(graph: Graph): string[] {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    if (from.startsWith('src/runtime/')) continue;
    for (const to of targets) {
      if (to.startsWith('src/runtime/scheduler/') && to !== 'src/runtime/scheduler/index.ts') wrong.push(`${from} → ${to}`);
    }
  }
  return wrong;
}

/** Each circle of files (strongly connected components of more than one file, or a file importing itself; Tarjan), as its imports. */
function circles(graph: Graph): string[] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const f of graph.keys()) if (!index.has(f)) visit(f);
  return found.map((c) => {
    const inside = new Set(c);
    return c.flatMap((from) => graph.get(from)!.filter((to) => inside.has(to)).map((to) => `${from} → ${to}`)).join(', ');
  });
}

const files = sourceFiles(SRC);
const known = new Set(files);
const graph: Graph = new Map(files.map((f) => [f, importsOf(f, known)]));

/** A made-up tree with one offence of each kind (and lawful imports beside them): each rule must name its own. */
const offences: Graph = new Map([
  ['src/util/log.ts', []],
  ['src/data/store.ts', ['src/util/log.ts', 'src/runtime/job/paths.ts']],
  ['src/coord/types.ts', ['src/transport/types.ts']],
  ['src/transport/types.ts', []],
  ['src/runtime/job/paths.ts', ['src/util/log.ts']],
  ['src/runtime/kinds/seam.ts', ['src/runtime/job/paths.ts', 'src/runtime/node/node.ts']],
  ['src/runtime/pool/kind.ts', ['src/runtime/kinds/seam.ts', 'src/runtime/scheduler/planner.ts']],
  ['src/runtime/scheduler/planner.ts', []],
  ['src/runtime/scheduler/index.ts', ['src/runtime/scheduler/planner.ts']],
  ['src/runtime/node/node.ts', ['src/runtime/kinds/seam.ts']],
  ['src/frameworks/a/a.ts', ['src/frameworks/a/b.ts', 'src/runtime/scheduler/index.ts', 'src/runtime/scheduler/planner.ts']],
  ['src/frameworks/a/b.ts', ['src/frameworks/a/a.ts']],
]);

test('each rule names the offences of a made-up tree, and only those', () => {
  assert.deepEqual(upwardImports(offences), [
    'src/data/store.ts → src/runtime/job/paths.ts (data may not import runtime)',
    'src/coord/types.ts → src/transport/types.ts (coord may not import transport)',
  ]);
  assert.deepEqual(upwardRuntimeImports(offences), [
    'src/runtime/kinds/seam.ts → src/runtime/node/node.ts (runtime/kinds may not import runtime/node)',
    'src/runtime/pool/kind.ts → src/runtime/scheduler/planner.ts (runtime/pool may not import runtime/scheduler)',
  ]);
  assert.deepEqual(schedulerInternals(offences), ['src/frameworks/a/a.ts → src/runtime/scheduler/planner.ts']);
  assert.deepEqual(circles(offences).sort(), [
    'src/frameworks/a/a.ts → src/frameworks/a/b.ts, src/frameworks/a/b.ts → src/frameworks/a/a.ts',
    'src/runtime/kinds/seam.ts → src/runtime/node/node.ts, src/runtime/node/node.ts → src/runtime/kinds/seam.ts',
  ]);
});

test('the parser sees every import form (a static, a type-only, an export-from, a side-effect and a dynamic import)', () => {
  const info = ts.preProcessFile("import a from './a.js';\nimport type { B } from './b.js';\nexport { c } from './c.js';\nimport './e.js';\nconst d = () => import('./d.js');\n", true, true);
  assert.deepEqual(info.importedFiles.map((f) => f.fileName).sort(), ['./a.js', './b.js', './c.js', './d.js', './e.js']);
  assert.ok(graph.get('src/index.ts')!.length > 10, 'the package entry imports much of src/');
});

test('every import points down the folder order (util ← coord, transport ← data ← runtime ← frameworks ← dashboard ← cli ← entries)', () => {
  const wrong = upwardImports(graph);
  assert.deepEqual(wrong, [], `imports that point up or across the folder order:\n  ${wrong.join('\n  ')}`);
});

test('inside runtime/, every import points down its folder order (worker, metrics ← job ← kinds ← pool, scheduler ← node, providers ← client)', () => {
  const wrong = upwardRuntimeImports(graph);
  assert.deepEqual(wrong, [], `runtime imports that point up or across its folder order:\n  ${wrong.join('\n  ')}`);
});

test('outside runtime/, the scheduler is used through its exported API (runtime/scheduler/index.ts) only', () => {
  const wrong = schedulerInternals(graph);
  assert.deepEqual(wrong, [], `imports of scheduler internals:\n  ${wrong.join('\n  ')}`);
});

test('no files import each other in a circle', () => {
  const found = circles(graph);
  assert.deepEqual(found, [], `import circles:\n  ${found.join('\n  ')}`);
});
