/**
 * The repository works on a machine that has only the repository: no tracked file names a location
 * that exists only on the machines it was written on. Every file `git ls-files` lists is read
 * (package-lock.json and binary files apart: a file with a NUL byte in its first 8 KiB is binary) and
 * each line is checked against these rules; a failure names FILE:LINE and the line.
 *
 * - An absolute path under a machine's own directories: the roots work, root, home, Users, farm, tmp,
 *   mnt and scratch (as `/ROOT/…`, `/ROOT` closed by a quote or at the end of the line, or after
 *   `file://`). Code asks the system for such places (`os.tmpdir()`, `os.homedir()`), docs use
 *   relative paths (`--shared ./run`).
 *   Not flagged: the same words inside a longer path or a URL (`bench/results/…`, `https://host/home/`,
 *   a ZooKeeper path built as `${paths.tasks}/root`),
 *   and system paths a package installs (`/usr/…`, `/etc/…`, `/proc/…`).
 * - A Windows user directory (a drive letter, then Users).
 * - The curated data set beside the checkout: the sibling directory `shared` as a relative path (dot
 *   dot, slash, shared; or the same as the pieces of a path join). The tests read test/data; a
 *   benchmark takes the set as `--data DIR`, so that path may appear only as the value of `--data`,
 *   documenting where a recorded run found the set.
 * (This file builds its examples from pieces so as not to match its own rules.)
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MACHINE_ROOTS = ['work', 'root', 'home', 'Users', 'farm', 'tmp', 'mnt', 'scratch'];
const SLASH = '/';
const DOTS = '..';

/** A machine directory as an absolute path: not inside a longer path or a URL, unless after file://. */
const ABSOLUTE = new RegExp(`(?:(?<![\\w.~:/%})\\]-])|(?<=file://))${SLASH}(?:${MACHINE_ROOTS.join('|')})(?=${SLASH}|['"\`),;\\]]|$)`);
const WINDOWS_USER = /\b[A-Za-z]:\\(?:Users|Documents and Settings)\\/;
const SHARED = new RegExp(`\\.\\.[/\\\\]shared\\b|['"]\\.\\.['"]\\s*,\\s*['"]shared['"]`, 'g');
const DATA_ARGUMENT = /--data[ =]$/;

/** What is wrong with one line, or undefined. */
function problemOf(line: string): string | undefined {
  if (ABSOLUTE.test(line)) return 'an absolute path on this machine';
  if (WINDOWS_USER.test(line)) return 'a Windows user directory';
  for (const m of line.matchAll(SHARED)) {
    if (!DATA_ARGUMENT.test(line.slice(0, m.index))) return 'the curated set beside the checkout, outside a benchmark\'s --data argument';
  }
  return undefined;
}

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  return out.split('\0').filter((f) => f !== '' && f !== 'package-lock.json');
}

describe('a portable tree', () => {
  it('the rules: what is a machine path and what is not', () => {
    const bad = [
      `const DIR = '${SLASH}work${SLASH}shared/data/workflows/';`,
      `tidepool workflow run x.xml --shared ${SLASH}tmp${SLASH}run`,
      `cd ${SLASH}home${SLASH}alice/tidepool`,
      `"checkout": "${SLASH}tmp${SLASH}before",`,
      `const u = 'file://${SLASH}root${SLASH}x.js';`,
      `a checkout in ${SLASH}work`,
      'C:\\Users\\bob\\tidepool',
      `const DATA = join(ROOT, '${DOTS}', 'shared', 'data');`,
      `read \`..${SLASH}shared/data/README.md\``,
      `node bench/x.js --graphs a,b ..${SLASH}shared/data`,
    ];
    const good = [
      `const dir = mkdtempSync(join(tmpdir(), 'tidepool-'));`,
      'see bench/results/workflow.json and test/data/workflows/',
      `https://example.org${SLASH}home${SLASH}index.html`,
      `http://127.0.0.1:8080${SLASH}tmp${SLASH}x`,
      `ensure-zookeeper installs into ${SLASH}usr/share/zookeeper`,
      `node dist/bench/workflow.js --data ..${SLASH}shared/data`,
      `(the runs recorded here: \`--data=..${SLASH}shared/data\`)`,
      `tidepool workflow run x.xml --shared ./run`,
      `const shared = sharedPath(dir, 'x');`,
      'network/workers/tmp/ and ./tmp/ and ../work/',
      'await client.create(`${paths.tasks}/root`, encode(record));',
      `await assert.rejects(work(), ${SLASH}work failed${SLASH});`,
    ];
    for (const line of bad) assert.ok(problemOf(line), `flagged: ${line}`);
    for (const line of good) assert.equal(problemOf(line), undefined, `not flagged: ${line}`);
  });

  it('no tracked file names a location outside the repository', () => {
    const files = trackedFiles();
    assert.ok(files.length > 100 && files.includes('package.json'), `git ls-files in ${ROOT} lists the repository (${files.length} files)`);
    const problems: string[] = [];
    for (const file of files) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(ROOT, file));
      } catch {
        continue; // listed but deleted in this working tree
      }
      if (bytes.subarray(0, 8192).includes(0)) continue;
      bytes.toString('utf8').split('\n').forEach((line, i) => {
        const problem = problemOf(line);
        if (problem) problems.push(`${file}:${i + 1}: ${problem}: ${line.trim().slice(0, 160)}`);
      });
    }
    assert.deepEqual(problems, [], `machine paths in tracked files:\n${problems.join('\n')}`);
  });
});
