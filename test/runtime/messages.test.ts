/** Frames from peers are checked before use: envelopes and task-pool messages of the wrong shape are named and dropped. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateEnvelope } from '../../src/runtime/node/envelope.js';
import { validateRuntimeMessage } from '../../src/runtime/pool/pool-messages.js';

describe('runtime message validation', () => {
  it('accepts well-formed envelopes and task-pool messages', () => {
    assert.equal(validateEnvelope({ type: 'job', job: 'j-1', body: { type: 'steal', job: 'j-1', requestId: 3 } }), undefined);
    assert.equal(validateEnvelope({ type: 'job-bounce', job: 'j-1', body: { type: 'x' } }), undefined);
    assert.equal(validateRuntimeMessage({ type: 'offer', job: 'j', task: { id: 't', state: null, partial: undefined, version: 0 } }), undefined);
    assert.equal(validateRuntimeMessage({ type: 'offer-ack', job: 'j', taskId: 't', claimed: true }), undefined);
  });

  it('names what is wrong with a malformed frame', () => {
    assert.match(validateEnvelope('hello')!, /not an object/);
    assert.match(validateEnvelope({ type: 'steal', job: 'j' })!, /unknown message type "steal"/);
    assert.match(validateEnvelope({ type: 'job', job: '', body: { type: 'x' } })!, /"job" must be a job id/);
    assert.match(validateEnvelope({ type: 'job', job: 'j', body: [] })!, /"body" must be an object/);
    assert.match(validateRuntimeMessage({ type: 'steal', job: 'j', requestId: -1 })!, /requestId/);
    assert.match(validateRuntimeMessage({ type: 'offer', job: 'j', task: { id: 't', version: 'x' } })!, /"task" must be/);
    assert.match(validateRuntimeMessage({ type: 'offer-ack', job: 'j', taskId: 't', claimed: 'yes' })!, /"claimed" must be a boolean/);
    assert.match(validateRuntimeMessage({ type: 'explode', job: 'j' })!, /unknown task-pool message type "explode"/);
  });
});
