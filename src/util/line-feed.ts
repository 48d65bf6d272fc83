/**
 * Feeds of JSON lines (predicted failures, jobs to queue, spot prices): read from a file, a named pipe
 * or stdin as lines arrive, one JSON object a line, blank lines and `#` comments skipped. A malformed
 * line is refused naming `name:line` and skipped; the feed goes on.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

/** A line of a feed that is not what the feed takes; the message starts with `file:line:`. */
export class FeedLineError extends Error {
  override readonly name: string = 'FeedLineError';
}

/** What a feed's lines are: `what` names one ("a prediction"), `shape` shows its usual fields, `fields` lists all it may have. */
export interface LineShape {
  what: string;
  shape: string;
  fields: readonly string[];
  /** The error to throw (a feed's own subclass). */
  error?: (message: string) => FeedLineError;
}

/** One line as a JSON object with only the shape's fields (null for a blank or comment line); errors name `where`. */
export function jsonObjectLine(line: string, where: string, shape: LineShape): Record<string, unknown> | null {
  const fail = (message: string) => (shape.error ?? ((m) => new FeedLineError(m)))(`${where}: ${message}`);
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw fail(`not JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail(`${shape.what} is a JSON object ${shape.shape}, got ${text}`);
  const extra = Object.keys(value).filter((k) => !shape.fields.includes(k));
  if (extra.length > 0) throw fail(`${shape.what} has ${listed(shape.fields)}, not ${extra.map((k) => `"${k}"`).join(', ')}`);
  return value as Record<string, unknown>;
}

function listed(fields: readonly string[]): string {
  const quoted = fields.map((f) => `"${f}"`);
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)!}` : quoted.join('');
}

/**
 * Reads a feed to its end, handing each parsed line to `apply` in order (awaited: the next line waits).
 * A line `parse` refuses (a FeedLineError naming `name:line`) goes to `refuse` and is skipped.
 */
export async function followLines<T>(input: Readable, name: string, parse: (line: string, where: string) => T | null, apply: (item: T) => Promise<void>, refuse: (err: FeedLineError) => void): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    let item: T | null;
    try {
      item = parse(line, `${name}:${n}`);
    } catch (err) {
      if (!(err instanceof FeedLineError)) throw err;
      refuse(err);
      continue;
    }
    if (item !== null) await apply(item);
  }
}
