/**
 * Residents on the worker pool's threads (Workers.attach): a module's function runs on the slot's
 * thread beside the task runner, talking over its own port and over ports it was given; a module
 * without the function says so on the port; the port closes when the thread exits, and a resident
 * attached at once goes to the pool's replacement thread, not to the dead one.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { MessageChannel, threadId, type MessagePort } from 'node:worker_threads';
import { after, before, describe, it } from 'node:test';
import { WorkerPool } from '../../../src/runtime/worker/worker-pool.js';

const MODULE = new URL('../apps/echo-resident.ts', import.meta.url).href;
const next = async (port: MessagePort) => ((await once(port, 'message')) as [unknown])[0];

describe('WorkerPool residents', () => {
  let pool: WorkerPool;
  before(async () => {
    pool = new WorkerPool(2, () => undefined);
    await pool.start();
  });
  after(() => pool.close());

  it('runs on the slot\'s thread, answers on its port, and talks to another resident over a port it was given', async () => {
    const { port1, port2 } = new MessageChannel();
    const a = pool.attach(0, { module: MODULE, export: 'echo' }, { tag: 'a', peer: port1 }, [port1]);
    const b = pool.attach(1, { module: MODULE, export: 'echo' }, { tag: 'b', peer: port2 }, [port2]);
    a.postMessage('hello');
    const reply = (await next(a)) as { msg: string; threadId: number; tag: string };
    assert.deepEqual([reply.msg, reply.tag], ['hello', 'a']);
    assert.notEqual(reply.threadId, threadId, 'not on the main thread');
    b.postMessage('peer'); // b sends to a directly, a reports it
    const relayed = (await next(a)) as { msg: string; threadId: number };
    assert.equal(relayed.msg, 'from b');
    a.postMessage('where');
    b.postMessage('where');
    const [onA, onB] = (await Promise.all([next(a), next(b)])) as Array<{ threadId: number }>;
    assert.notEqual(onA!.threadId, onB!.threadId, 'two slots, two threads');
    a.close();
    b.close();
  });

  it('a module without the function: attach-failed on the port, then it closes', async () => {
    const port = pool.attach(0, { module: MODULE, export: 'notAFunction' }, { tag: 'x' });
    const closed = once(port, 'close');
    assert.deepEqual(await next(port), { type: 'attach-failed', error: `${MODULE} has no function export "notAFunction"` });
    await closed;
  });

  it('the port closes when the thread exits; a resident attached at once goes to the replacement thread', { timeout: 30_000 }, async () => {
    const port = pool.attach(1, { module: MODULE, export: 'echo' }, { tag: 'doomed' });
    port.postMessage('hello');
    const before = (await next(port)) as { threadId: number };
    const closed = once(port, 'close');
    port.postMessage('exit');
    await closed;
    // At once: the thread that died still looks alive until its exit event; the resident waits for its replacement.
    const fresh = pool.attach(1, { module: MODULE, export: 'echo' }, { tag: 'again' });
    fresh.postMessage('hello');
    const again = (await next(fresh)) as { threadId: number; tag: string };
    fresh.close();
    assert.equal(again.tag, 'again');
    assert.notEqual(again.threadId, before.threadId, 'a new thread');
  });
});
