/**
 * How a chunk of a batch's task outcomes travels from a node's worker to the service: in the job's
 * result, which is published in one coordination write (about 1 MB at most), so compressed. Each
 * outcome is JSON already: it is framed by its length (`index length\n` then the text) rather than
 * quoted into more JSON, which would escape every quote on the worker and unescape it in the
 * service. Raw deflate at level 1: the service waits for the last chunk, so speed matters more here
 * than the last few percent of size.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** A chunk of outcomes: framed, raw-deflated, base64. */
export type OutcomeChunk = string;

export function packOutcomes(outcomes: Iterable<[index: number, outcome: string]>): OutcomeChunk {
  let text = '';
  for (const [i, o] of outcomes) text += `${i} ${o.length}\n${o}`;
  return deflateRawSync(text, { level: 1 }).toString('base64');
}

/** The outcomes of every chunk, by task index (a frame that does not parse ends its chunk; indexes outside the batch are ignored). */
export function unpackOutcomes(chunks: OutcomeChunk[], tasks: number): (string | undefined)[] {
  const outcomes = new Array<string | undefined>(tasks);
  for (const chunk of chunks) {
    const text = inflateRawSync(Buffer.from(chunk, 'base64')).toString('utf8');
    for (let at = 0; at < text.length;) {
      const space = text.indexOf(' ', at);
      const newline = text.indexOf('\n', space + 1);
      if (space < 0 || newline < 0) break;
      const i = Number(text.slice(at, space));
      const length = Number(text.slice(space + 1, newline));
      if (!Number.isSafeInteger(length) || length < 0 || newline + 1 + length > text.length) break;
      if (Number.isInteger(i) && i >= 0 && i < tasks) outcomes[i] = text.slice(newline + 1, newline + 1 + length);
      at = newline + 1 + length;
    }
  }
  return outcomes;
}
