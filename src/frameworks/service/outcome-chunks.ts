/**
 * How a chunk of a batch's task outcomes travels from a node's worker to the client: through the
 * coordination service (one znode per group of chunks, see job-channel.ts), the service and the
 * outcome stream, so compressed. Each outcome is JSON already: it is framed by its length (`index
 * length\n` then the text) rather than quoted into more JSON, which would escape every quote on the
 * worker and unescape it on the client. Raw deflate at level 1: the client waits for the last chunk,
 * so speed matters more here than the last few percent of size.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** A chunk of outcomes: framed, raw-deflated. */
export type OutcomeChunk = Uint8Array;

export function packOutcomes(outcomes: Iterable<[index: number, outcome: string]>): OutcomeChunk {
  let text = '';
  for (const [i, o] of outcomes) text += `${i} ${o.length}\n${o}`;
  return deflateRawSync(text, { level: 1 });
}

/** The outcomes of a chunk as `[index, outcome JSON]` (a frame that does not parse ends the chunk; indexes outside [0, tasks) are dropped). */
export function unpackChunk(chunk: OutcomeChunk, tasks: number): [number, string][] {
  const text = inflateRawSync(chunk).toString('utf8');
  const out: [number, string][] = [];
  for (let at = 0; at < text.length;) {
    const space = text.indexOf(' ', at);
    const newline = text.indexOf('\n', space + 1);
    if (space < 0 || newline < 0) break;
    const i = Number(text.slice(at, space));
    const length = Number(text.slice(space + 1, newline));
    if (!Number.isSafeInteger(length) || length < 0 || newline + 1 + length > text.length) break;
    if (Number.isInteger(i) && i >= 0 && i < tasks) out.push([i, text.slice(newline + 1, newline + 1 + length)]);
    at = newline + 1 + length;
  }
  return out;
}

/**
 * A chunk as it travels from a worker to the client: its outcomes packed (`z`), with what the service
 * needs without unpacking them — which tasks it holds (`i`) and their sandbox and diffing times.
 */
export interface PackedChunk {
  i: number[];
  ms: number;
  dms: number;
  z: OutcomeChunk;
}

export function packChunk(outcomes: [index: number, outcome: string][], times: (outcome: string) => { ms: number; dms: number }): PackedChunk {
  let ms = 0;
  let dms = 0;
  for (const [, o] of outcomes) {
    const t = times(o);
    ms += t.ms;
    dms += t.dms;
  }
  return { i: outcomes.map(([i]) => i), ms, dms, z: packOutcomes(outcomes) };
}
