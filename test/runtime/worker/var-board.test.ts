import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EmbeddedClient } from '../../../src/coord/embedded/embedded-client.js';
import { EmbeddedServer } from '../../../src/coord/embedded/embedded-server.js';
import { GlobalVariables } from '../../../src/coord/recipes/global-variables.js';
import { VarBoard } from '../../../src/runtime/worker/var-board.js';
import { waitFor } from '../../support/wait.js';

test('a reader sees every new value of each variable, and the unwritten ones as undefined', () => {
  const buffer = VarBoard.allocate(['found', 'bound']);
  const writer = new VarBoard(buffer, ['found', 'bound']);
  // Declared in another order: slots follow the sorted names, so every view of the buffer agrees.
  const reader = new VarBoard(buffer, ['bound', 'found']);
  assert.equal(reader.read('bound'), undefined);
  writer.write('bound', 100);
  assert.equal(reader.read('bound'), 100);
  assert.equal(reader.read('bound'), 100); // the cached value, while the version is unchanged
  assert.equal(reader.read('found'), undefined);
  writer.write('bound', 42);
  writer.write('found', { at: [1, 2] });
  assert.equal(reader.read('bound'), 42);
  assert.deepEqual(reader.read('found'), { at: [1, 2] });
  // Two readers keep their caches apart.
  const other = new VarBoard(buffer, ['bound', 'found']);
  assert.equal(other.read('bound'), 42);
  writer.write('bound', 7);
  assert.equal(other.read('bound'), 7);
  assert.equal(reader.read('bound'), 7);
});

test('an undeclared variable is named in the error; a value up to the variables\' limit fits, a larger one is refused', () => {
  const board = new VarBoard(VarBoard.allocate(['bound']), ['bound']);
  assert.equal(board.has('bound'), true);
  assert.equal(board.has('other'), false);
  assert.throws(() => board.read('other'), /global variable "other" is not declared/);
  // A value as large as a variable may hold goes through (a search's incumbent carries its solution).
  const tour = Array.from({ length: 50_000 }, (_, i) => i);
  board.write('bound', { value: 1, solution: tour });
  assert.deepEqual(new VarBoard(board.buffer, ['bound']).read('bound'), { value: 1, solution: tour });
  assert.throws(() => board.write('bound', 'x'.repeat(600_000)), /global variable "bound" is 600002 bytes as JSON; the limit is 524288/);
  assert.throws(() => new VarBoard(new SharedArrayBuffer(16), ['bound']), /var board buffer too small/);
});

test('a mirrored board follows the node\'s variables; a value it cannot hold is logged, not thrown into the watch', async () => {
  const client = new EmbeddedClient(new EmbeddedServer(), 600_000);
  const vars = new GlobalVariables(client, '/j/vars');
  await vars.define<unknown>('bound', { rule: 'replace' });
  assert.equal(VarBoard.mirror(vars, [], 'j'), undefined, 'no variables: no board');
  const buffer = VarBoard.mirror(vars, ['bound'], 'j')!;
  const reader = new VarBoard(buffer, ['bound']);
  await vars.setVar('bound', 42);
  assert.equal(reader.read('bound'), 42);
  // Written by something else than a member, over the limit: the watch delivers it; the board keeps 42.
  await client.setData('/j/vars/bound', Buffer.from(JSON.stringify('x'.repeat(600_000))));
  await waitFor(() => vars.getVar('bound') !== 42, 'the watch to deliver the oversized value');
  assert.equal(reader.read('bound'), 42);
  vars.stop();
  await client.close();
});
