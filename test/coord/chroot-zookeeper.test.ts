import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import type { WatchEvent } from '../../src/coord/types.js';
import { deferred, waitFor, withDeadline } from '../support/wait.js';
import { startEnsemble, type ZkEnsemble } from '../support/zk-ensemble.js';

let zk: ZkEnsemble;
before(async () => {
  zk = await startEnsemble({ size: 3 });
});
after(async () => zk.stop());

it('a zk:// chroot is created on connect and confines paths, results and events', { timeout: 60_000 }, async () => {
  const chroot = `/tenants/t-${Date.now()}`;
  const inside = await connect(`${zk.connectionString}${chroot}`);
  const outside = await connect(zk.connectionString);
  await waitFor(async () => (await outside.exists(chroot)) !== null, 'the chroot to be created and visible');
  assert.equal(await inside.create('/job', Buffer.from('x')), '/job');
  assert.equal(await inside.create('/job/seq-', undefined, 'persistent_sequential').then((p) => p.replace(/\d{10}$/, 'N')), '/job/seq-N');
  await waitFor(async () => (await outside.exists(`${chroot}/job`)) !== null, 'the write to be visible to another session');
  assert.equal((await outside.getData(`${chroot}/job`)).data.toString(), 'x');
  assert.deepEqual(await inside.getChildren('/'), ['job']);
  const event = deferred<WatchEvent>();
  await inside.getData('/job', (e) => event.resolve(e));
  await outside.setData(`${chroot}/job`, Buffer.from('y'));
  assert.deepEqual(await withDeadline(event.promise, 'event inside chroot'), { type: 'dataChanged', path: '/job' });
  const [r] = await inside.multi([{ op: 'create', path: '/job/m-', mode: 'persistent_sequential' }]);
  assert.match((r as { path: string }).path, /^\/job\/m-\d{10}$/);
  await Promise.all([inside.close(), outside.close()]);
});
