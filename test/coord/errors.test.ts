/**
 * CoordError across copies of tidepool: code loaded from another install (a job kind or task module
 * that imports its own tidepool) gets the node's client, whose errors are the node's class.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as errors from '../../src/coord/errors.js';
import { CoordError, isCoordError, isRetryable } from '../../src/coord/errors.js';

test('an error of another copy of the module is recognised by code; other errors are not', async () => {
  // The same file under another URL is another module instance: another CoordError class.
  const other = (await import(`../../src/coord/errors.js?copy=${Date.now()}`)) as typeof errors;
  assert.notEqual(other.CoordError, CoordError, 'a second copy of the module');
  const theirs = new other.CoordError('NO_NODE', '/tidepool/jobs/j/malleable');
  assert.equal(theirs instanceof CoordError, false);
  assert.equal(isCoordError(theirs, 'NO_NODE'), true);
  assert.equal(isCoordError(theirs), true);
  assert.equal(isCoordError(theirs, 'NODE_EXISTS'), false);
  assert.equal(other.isCoordError(new CoordError('CONNECTION_LOSS'), 'CONNECTION_LOSS'), true, 'and the other way round');
  assert.equal(isRetryable(new other.CoordError('CONNECTION_LOSS')), true);
  const lookalike = Object.assign(new Error('NO_NODE'), { name: 'CoordError', code: 'NO_NODE' });
  assert.equal(isCoordError(lookalike, 'NO_NODE'), false, 'a look-alike without the mark is not one');
  assert.equal(isCoordError(null), false);
  assert.equal(isCoordError('NO_NODE'), false);
});
