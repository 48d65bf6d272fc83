/**
 * docs/entry-points.md as a reader uses it: every entry point of the package has a program there, and
 * each program, compiled with tsc against the built package (imported by the package's own name, as
 * an application imports it) and run with node, prints exactly the line the page says and ends by
 * itself. Needs `npm run build` (the package's entry points are dist/).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { childEnv } from '../support/child-env.js';
import { runCommand } from '../support/cli.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = path.join(REPO, 'docs', 'entry-points.md');
const PKG = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };

interface Example { files: Array<{ file: string; code: string }>; prints?: unknown }

/** The page's programs by folder: ```ts blocks whose first line is `// FOLDER/FILE.ts`, and ```json blocks `// FOLDER prints`. */
function examples(markdown: string): Map<string, Example> {
  const out = new Map<string, Example>();
  const get = (name: string) => out.get(name) ?? out.set(name, { files: [] }).get(name)!;
  for (const m of markdown.matchAll(/```ts\n\/\/ ([\w-]+)\/([\w-]+\.ts)\n([\s\S]*?)```/g)) get(m[1]!).files.push({ file: m[2]!, code: m[3]! });
  for (const m of markdown.matchAll(/```json\n\/\/ ([\w-]+) prints\n([\s\S]*?)```/g)) {
    const example = out.get(m[1]!);
    assert.ok(example, `docs/entry-points.md: "${m[1]} prints" follows no program of that folder`);
    example.prints = JSON.parse(m[2]!);
  }
  return out;
}

const programs = examples(readFileSync(PAGE, 'utf8'));
// Inside the repository, so that `tidepool-runtime/...` resolves to this package by its own name.
let work: string;

before(async () => {
  assert.ok(existsSync(path.join(REPO, 'dist', 'src', 'index.js')), 'dist/ is missing: run `npm run build` first');
  mkdirSync(path.join(REPO, '.tmp'), { recursive: true });
  work = mkdtempSync(path.join(REPO, '.tmp', 'entry-points-'));
  const files: string[] = [];
  for (const [folder, { files: sources }] of programs) {
    mkdirSync(path.join(work, folder));
    for (const { file, code } of sources) {
      writeFileSync(path.join(work, folder, file), code);
      files.push(`${folder}/${file}`);
    }
  }
  writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'nodenext', target: 'es2022', strict: true, skipLibCheck: true, types: ['node'], typeRoots: [path.join(REPO, 'node_modules', '@types')] },
    files,
  }));
  const tsc = await runCommand(process.execPath, [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: work, timeoutMs: 180_000 });
  assert.equal(tsc.code, 0, `tsc on the programs of docs/entry-points.md:\n${tsc.stdout}${tsc.stderr}`);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('docs/entry-points.md', () => {
  it('has a program for every entry point of the package but the root (the README\'s), each with the line it prints', () => {
    const subpaths = Object.keys(PKG.exports).filter((k) => k !== '.' && k !== './package.json').map((k) => k.slice(2)).sort();
    assert.deepEqual([...programs.keys()].sort(), subpaths);
    for (const [folder, example] of programs) {
      assert.ok(example.files.some((f) => f.file === 'main.ts'), `${folder} has a main.ts`);
      assert.ok(example.prints !== undefined, `${folder} says what it prints`);
      assert.ok(example.files.some((f) => f.code.includes(`from '${PKG.name}/${folder}'`)), `${folder}'s program imports ${PKG.name}/${folder}`);
    }
  });

  for (const [folder, example] of programs) {
    it(`${folder}/main.js prints what the page says and ends by itself`, { timeout: 120_000 }, async () => {
      const run = await runCommand(process.execPath, ['main.js'], { cwd: path.join(work, folder), timeoutMs: 100_000, env: childEnv() });
      assert.equal(run.code, 0, `node main.js in ${folder} (killed if it does not end by itself):\n${run.stderr}`);
      assert.deepEqual(JSON.parse(run.stdout), example.prints);
    });
  }
});
