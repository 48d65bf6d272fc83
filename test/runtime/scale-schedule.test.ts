import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parseScaleSchedule } from '../../src/runtime/client/scale-schedule.js';

it('parses scale schedules and names the bad item', () => {
  assert.deepEqual(parseScaleSchedule('5s:-2,2s:+2'), [{ atMs: 2000, delta: 2 }, { atMs: 5000, delta: -2 }]);
  assert.deepEqual(parseScaleSchedule('500ms:+1, 1.5s:-1'), [{ atMs: 500, delta: 1 }, { atMs: 1500, delta: -1 }]);
  assert.throws(() => parseScaleSchedule('2s+2'), /"2s\+2" is not TIME:CHANGE/);
  assert.throws(() => parseScaleSchedule('2m:+2'), /"2m:\+2" is not TIME:CHANGE/);
  assert.throws(() => parseScaleSchedule('2s:+0'), /changes nothing/);
  assert.throws(() => parseScaleSchedule(' , '), /empty/);
});
