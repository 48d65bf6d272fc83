import type { Readable } from 'node:stream';
import { FeedLineError, followLines, jsonObjectLine, type LineShape } from '../../../util/line-feed.js';

/**
 * Predicted failures as a failure predictor emits them, one JSON object a line (docs/malleable.md,
 * "Failure warnings"):
 *
 *     {"node": "node-3", "at": "2026-11-28T02:00:00Z"}   a failure of node-3 is predicted at that time
 *     {"node": "node-3", "clear": true}                   node-3 is healthy again
 *
 * `at` is an ISO 8601 time or milliseconds since the epoch, and may be left out (a failure soon).
 * Blank lines and lines starting with `#` are skipped.
 */
export type FailurePrediction =
  | { type: 'warn'; node: string; at?: number }
  | { type: 'clear'; node: string };

/** A line of a failure feed that is not a prediction; the message starts with `file:line:`. */
export class FailureFeedError extends FeedLineError {
  override readonly name = 'FailureFeedError';
}

const PREDICTION: LineShape = { what: 'a prediction', shape: '{"node": …, "at": …}', fields: ['node', 'at', 'clear'], error: (m) => new FailureFeedError(m) };

/** One line of a feed: a prediction, null for a blank or comment line; throws FailureFeedError naming `where` (file:line). */
export function parseFailureLine(line: string, where: string): FailurePrediction | null {
  const v = jsonObjectLine(line, where, PREDICTION);
  if (v === null) return null;
  if (typeof v.node !== 'string' || v.node === '' || /[/\s]/.test(v.node)) throw new FailureFeedError(`${where}: "node" must be a node id (text without "/" or spaces), got ${JSON.stringify(v.node)}`);
  if (v.clear !== undefined && typeof v.clear !== 'boolean') throw new FailureFeedError(`${where}: "clear" must be true or false, got ${JSON.stringify(v.clear)}`);
  if (v.clear === true) {
    if (v.at !== undefined) throw new FailureFeedError(`${where}: a clear has no "at"`);
    return { type: 'clear', node: v.node };
  }
  if (v.at === undefined) return { type: 'warn', node: v.node };
  const at = typeof v.at === 'number' ? v.at : typeof v.at === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v.at) ? Date.parse(v.at) : NaN;
  if (!Number.isFinite(at)) throw new FailureFeedError(`${where}: "at" must be an ISO 8601 time (2026-11-28T02:00:00Z) or milliseconds since the epoch, got ${JSON.stringify(v.at)}`);
  return { type: 'warn', node: v.node, at };
}

/**
 * Reads a feed to its end (for a pipe or stdin: as lines arrive), handing each prediction to
 * `apply` in order. A malformed line is reported to `refuse` (naming `name:line`) and skipped: the
 * feed goes on. Resolves when the input ends.
 */
export function followFailureFeed(input: Readable, name: string, apply: (p: FailurePrediction) => Promise<void>, refuse: (err: FailureFeedError) => void): Promise<void> {
  return followLines(input, name, parseFailureLine, apply, refuse as (err: FeedLineError) => void);
}
