/**
 * The per-node object store: content addressing, shared memory copies, spilling past the memory
 * budget, limits refused before anything is written, and corruption on disk detected and discarded.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { hashOf } from '../../src/data/content-hash.js';
import { DataError } from '../../src/data/data-error.js';
import { ObjectStore } from '../../src/data/object-store.js';
import { waitFor } from '../support/wait.js';

const KB = 1024;
const stores: ObjectStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
});

async function open(opts: Parameters<typeof ObjectStore.open>[0] = {}): Promise<ObjectStore> {
  const s = await ObjectStore.open(opts);
  stores.push(s);
  return s;
}

const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);

async function rejectsData(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof DataError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });
}

describe('object store', () => {
  it('addresses blobs by SHA-256, dedupes, and hands out one shared copy without copying', async () => {
    const store = await open();
    const input = bytes(10 * KB, 7);
    const info = await store.put(input, 'job input');
    assert.equal(info.hash, hashOf(input));
    assert.deepEqual(await store.put(Buffer.from(input)), info, 'same content, same blob');
    assert.equal(store.stats.objects, 1);
    input.fill(0);
    const a = await store.get(info.hash);
    assert.equal(a[0], 7, 'the store kept its own copy');
    const b = await store.get(info.hash);
    const shared = await store.getShared(info.hash);
    assert.ok(shared.buffer instanceof SharedArrayBuffer);
    assert.equal(a.buffer, b.buffer, 'get returns views of one copy');
    assert.equal(shared.buffer, a.buffer, 'getShared is that same copy');
  });

  it('shares a blob with a worker thread through its SharedArrayBuffer', async () => {
    const store = await open();
    const info = await store.put(Buffer.from([1, 2, 3, 4, 5]));
    const shared = await store.getShared(info.hash);
    const worker = new Worker('const { parentPort } = require("node:worker_threads"); parentPort.once("message", (u) => parentPort.postMessage([u.buffer instanceof SharedArrayBuffer, u.reduce((s, x) => s + x, 0)]));', { eval: true });
    try {
      const reply = new Promise<[boolean, number]>((resolve) => worker.once('message', resolve));
      worker.postMessage(shared);
      assert.deepEqual(await reply, [true, 15]);
    } finally {
      await worker.terminate();
    }
  });

  it('spills the least recently used blobs to disk past its memory budget and reads them back verified', async () => {
    const store = await open({ memoryBytes: 100 * KB });
    const spilled: string[] = [];
    store.events.on('spilled', (e) => spilled.push(e.hash));
    const first = await store.put(bytes(60 * KB, 1));
    const second = await store.put(bytes(60 * KB, 2));
    await waitFor(() => spilled.length === 1, 'one blob to spill');
    assert.deepEqual(spilled, [first.hash], 'the least recently used one');
    assert.equal(store.info(first.hash)?.where, 'disk');
    assert.ok(store.stats.memoryBytes <= 100 * KB);
    assert.deepEqual(await readdir(store.dir), [first.hash]);
    const back = await store.get(first.hash);
    assert.ok(back.equals(bytes(60 * KB, 1)));
    await waitFor(() => spilled.includes(second.hash), 'the other blob to make room');
    const big = await store.put(bytes(150 * KB, 3), 'big blob');
    assert.equal(big.where, 'disk', 'a blob larger than the memory budget goes straight to disk');
    assert.ok((await store.get(big.hash)).equals(bytes(150 * KB, 3)));
  });

  it('refuses a blob over the per-object maximum or the node budget before writing anything', async () => {
    const store = await open({ memoryBytes: 0, budgetBytes: 100 * KB, maxObjectBytes: 80 * KB });
    await rejectsData(store.put(bytes(81 * KB, 1), 'state of task t7'), 'TOO_LARGE', /state of task t7 [0-9a-f]{12} of 82944 bytes exceeds the per-object maximum of 81920 bytes/);
    await store.put(bytes(60 * KB, 2));
    const before = await readdir(store.dir);
    await rejectsData(store.put(bytes(50 * KB, 3), 'job input'), 'OVER_BUDGET', /job input [0-9a-f]{12} of 51200 bytes does not fit the node's store budget of 102400 bytes \(61440 bytes in use\)/);
    assert.deepEqual(await readdir(store.dir), before, 'nothing written');
    assert.equal(store.stats.reservedBytes, 0);
    assert.equal(store.stats.objects, 1);
  });

  it('detects a blob corrupted or truncated on disk, discards and reports it', async () => {
    const store = await open({ memoryBytes: 0 });
    const reports: string[] = [];
    store.events.on('corrupt', (e) => reports.push(`${e.where}: ${e.reason}`));
    const a = await store.put(bytes(20 * KB, 4));
    const file = path.join(store.dir, a.hash);
    const content = await readFile(file);
    content[12_345] = 99;
    await writeFile(file, content);
    await rejectsData(store.get(a.hash), 'CORRUPT', /content does not match its hash; discarded/);
    assert.equal(store.has(a.hash), false);
    assert.deepEqual(await readdir(store.dir), []);

    const b = await store.put(bytes(20 * KB, 5));
    await writeFile(path.join(store.dir, b.hash), bytes(10 * KB, 5));
    assert.equal(await store.verify(b.hash), false);
    assert.equal(store.has(b.hash), false);
    assert.deepEqual(reports, ['disk: content does not match its hash', `disk: file has ${10 * KB} bytes, expected ${20 * KB}`]);
    assert.equal(store.stats.diskBytes, 0);
  });

  it('reopens a directory: finished blobs are indexed (checked on first read), unfinished ones removed', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'store-reopen-'));
    try {
      const first = await ObjectStore.open({ dir, memoryBytes: 0 });
      const a = await first.put(bytes(5 * KB, 6));
      await writeFile(path.join(dir, `${'0'.repeat(64)}.part-abc`), 'partial');
      await first.close();
      const second = await open({ dir });
      assert.deepEqual(second.list(), [{ hash: a.hash, size: 5 * KB, where: 'disk' }]);
      assert.ok((await second.get(a.hash)).equals(bytes(5 * KB, 6)));
      assert.deepEqual(await readdir(dir), [a.hash]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
