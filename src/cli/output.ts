/** How commands print: one JSON object per line with --json, aligned tables for people. */
import { checkValue } from './settings/command-schema.js';
import type { ValueKind } from './settings/kinds.js';

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** `--json`: the JSON line; otherwise the text line. */
export function printLine(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

export function table(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) process.stdout.write(`${r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
}

/** A positional argument of `kind` (NODES), checked as settings are; errors name it. */
export function argument<T = number>(value: string, name: string, kind: ValueKind): T {
  return checkValue(kind, value, name) as T;
}
