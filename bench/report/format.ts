/** Shared by the sections of bench/RESULTS.md: reading result files and formatting numbers and tables. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../machine.js';

export const RESULTS = join(projectRoot(), 'bench', 'results');

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A benchmark's JSON (`bench/results/NAME.json`), or undefined when that benchmark was not run. */
export function load(name: string): Json | undefined {
  const file = join(RESULTS, `${name}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Json) : undefined;
}

/** One row of the targets table at the top of RESULTS.md. */
export interface Target { what: string; target: string; value: string; met: boolean | null; note: string }

/** What a section module contributes: its targets and its Markdown lines. */
export interface Section { targets: Target[]; lines: string[] }

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
export const f = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
export const int = (x: number) => Math.round(x).toLocaleString('en-US');
export const pct = (x: number, digits = 0) => `${f(x * 100, digits)} %`;

export function table(rows: Array<Array<string | number>>): string {
  const [head, ...body] = rows;
  return [`| ${head!.join(' | ')} |`, `|${head!.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

export const machineLine = (m: Json | undefined) => (m ? `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}; run ${String(m.date).slice(0, 16).replace('T', ' ')} UTC` : 'not run');

/** "measured 2026-11-23 22:28 UTC" from a result's machine block, for sections run at different times. */
export const when = (j: Json | undefined) => {
  const m = j?.machine as Json | undefined;
  if (!m?.date) return 'date not recorded';
  const load = typeof m.loadAverage === 'number' ? `, 1-minute load average ${f(m.loadAverage as number)} (2 cores)` : ', load not recorded (the earlier runs were on a machine loaded by other engineers)';
  return `measured ${String(m.date).slice(0, 16).replace('T', ' ')} UTC${load}`;
};
