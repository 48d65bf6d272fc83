// Outcome chunks: what a worker packs is what the client unpacks, whatever characters the outcomes
// hold (the frames are delimited by lengths, not by separators the text could contain).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packOutcomes, unpackChunk } from '../../../src/frameworks/service/outcome-chunks.js';

const awkward = [
  '{"ok":true,"v":"two\\nlines and 3 spaces   "}',
  '{"ok":true,"v":"12 34\n56"}', // a raw newline and digits: what a frame header looks like
  '',
  '{"ok":true,"v":"héllo wörld 😀 𝄞 ∑"}',
  '{"ok":false,"err":{"name":"Error","message":"\\"quoted\\" \\\\ backslash"}}',
];

test('chunks round-trip outcomes with newlines, spaces, digits, non-ASCII and astral characters, and empty ones', () => {
  const first = packOutcomes([[0, awkward[0]!], [2, awkward[2]!], [4, awkward[4]!]]);
  const second = packOutcomes([[1, awkward[1]!], [3, awkward[3]!]]);
  const got = new Array<string>(5);
  for (const chunk of [second, first]) for (const [i, o] of unpackChunk(chunk, 5)) got[i] = o;
  assert.deepEqual(got, awkward);
});

test('a large chunk round-trips and is compressed', () => {
  const row = 'A'.repeat(2_700);
  const outcomes = Array.from({ length: 400 }, (_, i): [number, string] => [i, `{"ok":true,"v":"${row}${i}"}`]);
  const chunk = packOutcomes(outcomes);
  assert.ok(chunk.length < 400 * 2_700 / 10, `${chunk.length} bytes`);
  assert.deepEqual(unpackChunk(chunk, 400), outcomes);
});

test('indexes outside the batch are dropped', () => {
  const chunk = packOutcomes([[0, '{"v":0}'], [7, '{"v":7}'], [-1, '{"v":-1}']]);
  assert.deepEqual(unpackChunk(chunk, 3), [[0, '{"v":0}']]);
});
