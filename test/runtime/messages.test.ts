/** Frames from peers are checked before use: envelopes and task-pool messages of the wrong shape are named and dropped. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateEnvelope } from '../../src/runtime/node/envelope.js';
import { validateRuntimeMessage } from '../../src/runtime/pool/pool-messages.js';
import { validateKeep } from '../../src/runtime/job/result-copies.js';

describe('runtime message validation', () => {
  it('accepts well-formed envelopes and task-pool messages', () => {
    assert.equal(validateEnvelope({ type: 'job', job: 'j-1', body: { type: 'steal', job: 'j-1', requestId: 3 } }), undefined);
    assert.equal(validateEnvelope({ type: 'job-bounce', job: 'j-1', body: { type: 'x' } }), undefined);
    const ref = { hash: 'a'.repeat(64), size: 600_000 };
    assert.equal(validateEnvelope({ type: 'keep', job: 'j-1', body: { type: 'result', ref } }), undefined);
    assert.equal(validateKeep({ type: 'result', ref }), undefined);
    assert.equal(validateRuntimeMessage({ type: 'offer', job: 'j', task: { id: 't', state: null, partial: undefined, version: 0 } }), undefined);
    assert.equal(validateRuntimeMessage({ type: 'offer-ack', job: 'j', taskId: 't', claimed: true }), undefined);
  });

  it('names what is wrong with a malformed frame', () => {
    assert.match(validateEnvelope('hello')!, /not an object/);
    assert.match(validateEnvelope({ type: 'steal', job: 'j' })!, /unknown message type "steal"/);
    assert.match(validateEnvelope({ type: 'job', job: '', body: { type: 'x' } })!, /"job" must be a job id/);
    assert.match(validateEnvelope({ type: 'job', job: 'j', body: [] })!, /"body" must be an object/);
    assert.match(validateKeep({ type: 'result', ref: { hash: 'nope', size: 1 } })!, /"ref" must be a blob reference/);
    assert.match(validateKeep({ type: 'state', ref: { hash: 'a'.repeat(64), size: 1 } })!, /must be of type "result", not "state"/);
    assert.match(validateRuntimeMessage({ type: 'steal', job: 'j', requestId: -1 })!, /requestId/);
    assert.match(validateRuntimeMessage({ type: 'offer', job: 'j', task: { id: 't', version: 'x' } })!, /"task" must be/);
    assert.match(validateRuntimeMessage({ type: 'offer-ack', job: 'j', taskId: 't', claimed: 'yes' })!, /"claimed" must be a boolean/);
    assert.match(validateRuntimeMessage({ type: 'explode', job: 'j' })!, /unknown task-pool message type "explode"/);
  });
});
