/**
 * The malleable job's durable state (frameworks/malleable/durable-state.ts) across a connection loss:
 * a save whose answer is lost but which landed is the leader's own, so its next save goes on; a save
 * after another leader's write is still refused as a takeover.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect } from '../../../src/coord/connect.js';
import { CoordError } from '../../../src/coord/errors.js';
import { mkdirp } from '../../../src/coord/tree-ops.js';
import type { CoordClient } from '../../../src/coord/types.js';
import { DurableState, type MalleableState } from '../../../src/frameworks/malleable/durable-state.js';
import { jobPaths } from '../../../src/runtime/job/job-paths.js';
import { ClusterSecret } from '../../../src/util/cluster-secret.js';
import { decode } from '../../../src/util/codec.js';

/** `client`, except that its next write (`create` or `setData`) is carried out and then answered with a connection loss. */
function losingAnswers(client: CoordClient): { client: CoordClient; loseNext: () => void } {
  let lose = false;
  const wrapped = new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== 'create' && prop !== 'setData') return value;
      return async (path: string, ...rest: unknown[]) => {
        const out = await (value as (...a: unknown[]) => Promise<unknown>).call(target, path, ...rest);
        if (lose) {
          lose = false;
          throw new CoordError('CONNECTION_LOSS', path);
        }
        return out;
      };
    },
  });
  return { client: wrapped, loseNext: () => (lose = true) };
}

const state = (epoch: number): MalleableState => ({ epoch, manifest: null });

describe('malleable durable state', () => {
  it('a save whose answer was lost but which landed is the leader\'s own; another leader\'s write is a takeover', async () => {
    const name = `durable-${randomBytes(3).toString('hex')}`;
    const secret = ClusterSecret.random();
    const admin = await connect(`embedded:${name}`, { secret });
    const raw = await connect(`embedded:${name}`, { secret });
    try {
      const paths = jobPaths('j-durable');
      await mkdirp(admin, paths.base);
      const { client, loseNext } = losingAnswers(raw);
      const leader = new DurableState(client, paths);
      await leader.load();
      // The first save (a create) and a later one (a setData) each land and lose their answer.
      for (const epoch of [1, 3]) {
        loseNext();
        await assert.rejects(leader.save(state(epoch)), (err: unknown) => err instanceof CoordError && err.code === 'CONNECTION_LOSS');
        await leader.save(state(epoch + 1));
        assert.equal(decode<MalleableState>((await admin.getData(`${paths.base}/malleable`)).data).epoch, epoch + 1);
      }
      // A save lands and loses its answer, then another leader reads and writes: this one's next save is refused.
      loseNext();
      await assert.rejects(leader.save(state(5)), (err: unknown) => err instanceof CoordError && err.code === 'CONNECTION_LOSS');
      const other = new DurableState(admin, paths);
      assert.equal((await other.load()).epoch, 5);
      await other.save(state(6));
      await assert.rejects(leader.save(state(7)), /another leader has taken over this malleable job/);
      assert.equal(decode<MalleableState>((await admin.getData(`${paths.base}/malleable`)).data).epoch, 6);
    } finally {
      await raw.close();
      await admin.close();
    }
  });
});
