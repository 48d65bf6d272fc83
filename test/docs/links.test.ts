/**
 * The README's and docs' relative links lead somewhere: the file exists in the repository, and a
 * `#fragment` into a Markdown file names one of its headings (GitHub's heading ids).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = ['README.md', ...readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's id of a heading: lower case, punctuation dropped, spaces to hyphens. */
function headingId(heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (m) ids.add(headingId(m[1]!));
  }
  return ids;
}

/** [text](target) links outside code spans and fences, with their line numbers. */
function links(markdown: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((line, i) => {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ line: i + 1, target: m[1]! });
  });
  return out;
}

describe('documentation links', () => {
  it('finds the heading ids GitHub gives', () => {
    assert.equal(headingId('The ledger: termination, results, recovery in one structure'), 'the-ledger-termination-results-recovery-in-one-structure');
    assert.equal(headingId('`tidepool coordinator`'), 'tidepool-coordinator');
    assert.equal(headingId('RUPER-LB'), 'ruper-lb');
  });

  it('every relative link of README.md and docs/*.md resolves, anchors included', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      const text = readFileSync(path.join(REPO, page), 'utf8');
      for (const { line, target } of links(text)) {
        if (/^[a-z]+:/i.test(target)) continue; // http(s), mailto: not checked here
        const [file, fragment] = target.split('#') as [string, string | undefined];
        const resolved = file === '' ? path.join(REPO, page) : path.resolve(path.dirname(path.join(REPO, page)), file);
        if (!existsSync(resolved)) {
          broken.push(`${page}:${line}: ${target}: no such file`);
          continue;
        }
        if (fragment !== undefined && resolved.endsWith('.md') && !headingIds(readFileSync(resolved, 'utf8')).has(fragment)) {
          broken.push(`${page}:${line}: ${target}: no heading #${fragment} in ${path.relative(REPO, resolved)}`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });
});
