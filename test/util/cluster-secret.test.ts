/** The cluster secret: what a secret file may hold, the keys derived from it, signatures across a rotation, and that it never shows itself. */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, it } from 'node:test';
import { ClusterSecret } from '../../src/util/cluster-secret.js';

const A = 'first-secret-of-the-cluster-0001';
const B = 'second-secret-after-rotation-002';

describe('ClusterSecret', () => {
  it('parses a secret file: one secret, several (current first), or one monitor credential; refuses short, empty and mixed files by line', () => {
    const one = ClusterSecret.parse(`  ${A}\n`, 'f');
    assert.equal(one.isSecret, true);
    assert.deepEqual(one.accepted.map(String), [A]);
    const two = ClusterSecret.parse(`${B}\r\n\n${A}\n`, 'f');
    assert.deepEqual(two.accepted.map(String), [B, A]);
    assert.equal(two.current.toString(), B);
    assert.throws(() => ClusterSecret.parse('\n \n', 'secret.txt'), /secret\.txt is empty/);
    assert.throws(() => ClusterSecret.parse(`${A}\nshort`, 'secret.txt'), /secret\.txt: line 2 holds 5 bytes; a cluster secret needs at least 16/);
    const monitor = ClusterSecret.parse(one.monitorCredential(), 'm');
    assert.equal(monitor.isSecret, false);
    assert.equal(monitor.monitorPassword(), one.monitorPassword());
    assert.throws(() => monitor.current, /a monitor credential only reads/);
    assert.throws(() => ClusterSecret.parse(`${one.monitorCredential()}\n${A}`, 'm'), /m: a monitor credential stands alone \(line 2 holds more\)/);
    assert.throws(() => ClusterSecret.parse(`${A}\n${one.monitorCredential()}`, 'm'), /m: line 2 is a monitor credential/);
    assert.throws(() => ClusterSecret.parse('tidepool-monitor:abc', 'm'), /line 1 is not a monitor credential/);
  });

  it('derives one key per purpose (HMAC-SHA256 of the secret over a label); the monitor credential is the monitor key', () => {
    const s = ClusterSecret.from(A);
    const expected = (purpose: string) => createHmac('sha256', A).update(`tidepool/v1/${purpose}`).digest();
    assert.deepEqual(s.key('zookeeper-digest'), expected('zookeeper-digest'));
    assert.deepEqual(s.key('code-signature'), expected('code-signature'));
    assert.notDeepEqual(s.key('zookeeper-digest'), s.key('code-signature'));
    assert.equal(s.monitorCredential(), `tidepool-monitor:${expected('monitor').toString('base64url')}`);
    assert.equal(ClusterSecret.random().current.length, 43, '32 random bytes as base64url');
    assert.notEqual(ClusterSecret.random().current.toString(), ClusterSecret.random().current.toString());
  });

  it('verifies signatures of any accepted secret while rotating, and only those', () => {
    const old = ClusterSecret.from(A);
    const both = ClusterSecret.parse(`${B}\n${A}`, 'f');
    const next = ClusterSecret.from(B);
    const bytes = Buffer.from('a job spec');
    const byOld = old.sign('code-signature', bytes);
    assert.equal(both.verify('code-signature', bytes, byOld), true, 'an old signature verifies during the window');
    assert.equal(next.verify('code-signature', bytes, byOld), false, 'and not after it');
    assert.equal(old.verify('code-signature', bytes, both.sign('code-signature', bytes)), false, 'the window signs with the new secret');
    assert.equal(old.verify('code-signature', Buffer.from('a job spek'), byOld), false);
    assert.equal(old.verify('zookeeper-digest', bytes, byOld), false, 'a key of another purpose does not verify');
  });

  it('never shows itself in logs, JSON or inspection', () => {
    const s = ClusterSecret.parse(`${B}\n${A}`, 'f');
    for (const text of [String(s), JSON.stringify({ s }), inspect(s), inspect({ nested: s })]) {
      assert.ok(!text.includes(A) && !text.includes(B), text);
    }
    assert.match(String(s), /tidepool cluster secrets \(2\)/);
  });
});
