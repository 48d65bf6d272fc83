/** The parser of walkthrough pages' shell blocks (test/docs/shell-blocks.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandsFor, shellBlocks } from './shell-blocks.js';

const PAGE = [
  'Text.',
  '```sh',
  '# on machines a, b and c',
  'echo all',
  'echo one   # on a',
  'echo two   # on b',
  '```',
  '```',
  'not a shell block',
  '```',
  '```sh',
  '# on the laptop, while the job runs',
  'tidepool status',
  '```',
  '```sh',
  '# on machine c',
  'echo c',
  '```',
].join('\n');

describe('walkthrough shell blocks', () => {
  it('finds the sh blocks with where they run, and the lines for each machine', () => {
    const blocks = shellBlocks(PAGE, 'page.md');
    assert.deepEqual(blocks.map((b) => [b.line, b.machines]), [[2, ['a', 'b', 'c']], [11, ['laptop']], [15, ['c']]]);
    assert.equal(commandsFor(blocks[0]!, 'a'), 'echo all\necho one');
    assert.equal(commandsFor(blocks[0]!, 'b'), 'echo all\necho two');
    assert.equal(commandsFor(blocks[0]!, 'c'), 'echo all');
    assert.equal(commandsFor(blocks[1]!, 'laptop'), 'tidepool status');
  });

  it('refuses a block that does not say where it runs, naming its line', () => {
    assert.throws(() => shellBlocks('x\n```sh\nls\n```\n', 'page.md'), /^Error: page\.md:3: an sh block must start with/);
    assert.throws(() => shellBlocks('```sh\n# on machine a\nls\n', 'page.md'), /^Error: page\.md:1: the sh block is not closed/);
  });
});
