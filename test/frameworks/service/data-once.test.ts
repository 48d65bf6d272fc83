// Data shipped once (Bläser, Task Parallelization as a Service, §3.4, with a capture cache per
// connection): captured bulk data travels as blobs named by their SHA-256; the first batch sends them,
// later batches and later tasks name them by hash (cache hits), changed data travels again (a miss), a
// new connection starts with an empty cache, and blobs a service dropped are sent again on its 409.
// `distribution.put` sends a value once ahead; tasks read it and may not write it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CaptureError, Distribution, SharedValue } from '../../../src/frameworks/service/index.js';
import { startHttpsService, type HttpsService } from './https-service.js';

/** 4 MB of numbers that do not compress. */
function randomArray(): Float64Array {
  return new Float64Array(512 * 1024).map(() => Math.random());
}

describe('the capture cache of a connection to a service', () => {
  let svc: HttpsService;
  before(async () => { svc = await startHttpsService({ maxBodyBytes: 16 * 1024 * 1024 }); });
  after(() => svc.close());

  test('the first batch sends the data, a second batch over it sends < 1 % of that, later tasks name it too; changed data travels again', async () => {
    const { dist } = svc;
    const table = randomArray();
    const sumOf = (from: number, to: number) => { let s = 0; for (let i = from; i < to; i++) s += table[i]!; return s; };
    const before0 = dist.cacheStats;
    const first = await dist.start([dist.task(() => sumOf(0, 1000))]);
    const c1 = await first.done;
    const after1 = dist.cacheStats;
    assert.equal(after1.misses - before0.misses, 1, 'the array went with the first batch');
    assert.equal(after1.hits - before0.hits, 0);
    assert.ok(after1.uploadedBytes - before0.uploadedBytes >= table.byteLength);
    assert.ok(c1.requestBytes > table.byteLength, `${c1.requestBytes} bytes`);

    const tasks = [dist.task(() => sumOf(1000, 2000)), dist.task(() => sumOf(2000, 3000))];
    const c2 = await (await dist.start(tasks)).done;
    const after2 = dist.cacheStats;
    assert.equal(after2.hits - after1.hits, 1, 'the second batch named the array by hash');
    assert.equal(after2.misses, after1.misses);
    assert.ok(after2.reused > after1.reused, 'the client compared the array with its last capture instead of hashing it again');
    assert.ok(c2.requestBytes < c1.requestBytes / 100, `second batch ${c2.requestBytes} bytes, first ${c1.requestBytes}`);
    assert.deepEqual(await Promise.all(tasks.map((t) => t.result)), [sumOf(1000, 2000), sumOf(2000, 3000)]);

    table[1500] = 1000; // the program changes its data: it travels again, and tasks see the change
    const changed = dist.task(() => sumOf(1000, 2000));
    await (await dist.start([changed])).done;
    assert.equal(dist.cacheStats.misses, after2.misses + 1);
    assert.equal(await changed.result, sumOf(1000, 2000));
  });

  test('a new connection starts with an empty cache; blobs the service dropped (its budget) are sent again on its 409', async () => {
    const table = randomArray();
    const other = await Distribution.connect(svc.service.url, { token: svc.token, ca: svc.tls.cert });
    try {
      await (await other.start([other.task(() => table[7])])).done;
      assert.equal(other.cacheStats.misses, 1);
    } finally {
      await other.close();
    }
    const small = await startHttpsService({ maxBodyBytes: 16 * 1024 * 1024, sessionBlobBytes: 6 * 1024 * 1024 });
    try {
      const a = randomArray();
      const b = randomArray();
      const read = async (arr: Float64Array, i: number) => {
        const t = small.dist.task(() => arr[i]);
        await (await small.dist.start([t])).done;
        return t.result;
      };
      assert.equal(await read(a, 1), a[1]);
      assert.equal(await read(b, 2), b[2]); // the service keeps 6 MB for this session: a is dropped
      const missesBefore = small.dist.cacheStats.misses;
      assert.equal(await read(a, 3), a[3], 'the batch naming a dropped blob ran after the client sent it again');
      assert.equal(small.dist.cacheStats.misses, missesBefore + 1);
    } finally {
      await small.close();
    }
  });

  test('put sends a value once; tasks read it by hash and may not write it', async () => {
    const { dist } = svc;
    const model = { weights: randomArray(), labels: ['a', 'b', 'c'], bias: 0.5 };
    const before = dist.cacheStats;
    const shared = await dist.put(model, 'model');
    assert.ok(shared instanceof SharedValue);
    assert.ok(dist.cacheStats.uploadedBytes - before.uploadedBytes >= model.weights.byteLength, 'put sent the value');
    const tasks = [0, 1, 2].map((i) => dist.task(() => shared.value.weights[i]! + shared.value.bias + shared.value.labels[i]!.length));
    const costs = await (await dist.start(tasks)).done;
    assert.deepEqual(await Promise.all(tasks.map((t) => t.result)), [0, 1, 2].map((i) => model.weights[i]! + 1.5));
    assert.ok(costs.requestBytes < 2000, `a batch over the shared value sent ${costs.requestBytes} bytes`);
    assert.equal(dist.cacheStats.misses, before.misses + 2, 'the segment and its array, once, by put');
    const writer = dist.task(() => { shared.value.labels[1] = 'changed'; });
    await dist.start([writer]);
    await assert.rejects(writer.result, /SharedValueWriteError: the task wrote to a value shared with distribution\.put, which tasks may only read: model\.labels\.1/);
    assert.equal(model.labels[1], 'b');
    await assert.rejects(dist.put({ run: () => 1 }), (e: CaptureError) => e instanceof CaptureError && /holds data only/.test(e.message));
  });
});

test('Distribution.local(): put and the capture cache work the same way', async () => {
  const dist = Distribution.local({ workers: 2 });
  try {
    const rows = randomArray();
    const shared = await dist.put({ rows });
    const sum = (arr: Float64Array) => arr.reduce((a, b) => a + b, 0);
    const t = dist.task(() => sum(shared.value.rows.subarray(0, 10)));
    await (await dist.start([t])).done;
    assert.equal(await t.result, sum(rows.subarray(0, 10)));
    const direct = [dist.task(() => rows[3]), dist.task(() => rows[4])];
    await (await dist.start(direct)).done;
    const again = dist.task(() => rows[5]);
    await (await dist.start([again])).done;
    assert.equal(await again.result, rows[5]);
    assert.ok(dist.cacheStats.reused >= 1, 'the second capture of rows compared it instead of hashing it');
    assert.ok(dist.cacheStats.hits >= 1, 'the workers kept the blob for the later batch');
  } finally {
    await dist.close();
  }
});
