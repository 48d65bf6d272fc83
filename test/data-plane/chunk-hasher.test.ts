/**
 * SHA-256 on the hashing thread: the same digest as on this thread, for bytes in shared memory (no
 * copy) and elsewhere, with several blobs hashed at once; a hasher whose thread was stopped fails
 * rather than report a digest of part of the bytes; the thread never keeps a process alive.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { withDeadline } from '../support/wait.js';
import { HashThread, inlineHasher } from '../../src/data/chunk-hasher.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const thread = new HashThread();
after(() => thread.close());

function inShared(bytes: Buffer): Buffer {
  const shared = Buffer.from(new SharedArrayBuffer(bytes.length));
  bytes.copy(shared);
  return shared;
}

describe('chunk hasher', { timeout: 30_000 }, () => {
  it('hashes interleaved blobs on the thread exactly as inline, from shared and private memory', async () => {
    const blobs = [randomBytes(3_000_000), randomBytes(1_000_001), Buffer.alloc(0)];
    const shared = blobs.map(inShared);
    const onThread = blobs.map(() => thread.hasher());
    const inline = blobs.map(() => inlineHasher());
    const step = 65_536;
    for (let at = 0; at < 3_000_000; at += step) {
      blobs.forEach((b, i) => {
        if (at >= b.length) return;
        // Blob 1 goes in from private memory (copied to the thread), the others from shared memory.
        onThread[i]!.update(i === 1 ? b.subarray(at, at + step) : shared[i]!.subarray(at, at + step));
        inline[i]!.update(b.subarray(at, at + step));
      });
    }
    const got = await Promise.all(onThread.map((h) => h.digest()));
    assert.deepStrictEqual(got, blobs.map(sha));
    assert.deepStrictEqual(await Promise.all(inline.map((h) => h.digest())), blobs.map(sha));
    await assert.rejects(onThread[0]!.digest(), /used up/);
  });

  it('hashes shared bytes in the order given, whether adjacent (sent to the thread together) or not', async () => {
    const MiB = 1024 * 1024;
    const big = inShared(randomBytes(10 * MiB));
    const other = inShared(randomBytes(MiB));
    const loose = randomBytes(1000);
    // Adjacent ranges beyond one batch, then a jump back, another buffer, private bytes, a jump ahead.
    const pieces = [
      ...Array.from({ length: 6 }, (_, i) => big.subarray(i * MiB, (i + 1) * MiB)),
      big.subarray(9 * MiB), big.subarray(6 * MiB, 7 * MiB), other, loose, big.subarray(7 * MiB, 9 * MiB), big.subarray(0, 16),
    ];
    const h = thread.hasher();
    for (const p of pieces) h.update(p);
    assert.equal(await h.digest(), sha(Buffer.concat(pieces)));
  });

  it('keeps hashers apart when one is abandoned', async () => {
    const a = thread.hasher();
    const b = thread.hasher();
    const bytes = inShared(randomBytes(100_000));
    a.update(bytes);
    b.update(bytes.subarray(0, 10));
    a.abandon();
    b.update(bytes.subarray(10));
    assert.equal(await b.digest(), sha(bytes));
  });

  it('fails the digest of a hasher whose thread was stopped midway', async () => {
    const own = new HashThread();
    const h = own.hasher();
    h.update(inShared(randomBytes(1000)));
    await own.close();
    h.update(inShared(randomBytes(1000)));
    await assert.rejects(h.digest(), /hashing thread died during the transfer/);
    const fresh = own.hasher();
    fresh.update(Buffer.from('abc'));
    assert.equal(await fresh.digest(), sha(Buffer.from('abc')), 'a new hasher gets a new thread');
    await own.close();
  });

  it('does not keep a process alive, after a digest or an abandoned hasher', async () => {
    const module = new URL('../../src/data/chunk-hasher.ts', import.meta.url).href;
    const start = `const { HashThread } = await import(${JSON.stringify(module)}); const h = new HashThread().hasher(); h.update(Buffer.from(new SharedArrayBuffer(8)));`;
    for (const [what, end, expected] of [['digest', 'console.log(await h.digest());', sha(Buffer.alloc(8))], ['abandon', 'h.abandon();', '']]) {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `${start} ${end}`], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exitCode = await withDeadline(new Promise<number | null>((resolve) => child.once('exit', resolve)), `${what}: the process to exit by itself`, 20_000)
        .finally(() => child.kill('SIGKILL'));
      assert.equal(exitCode, 0, what);
      assert.equal(out.trim(), expected, what);
    }
  });
});
