import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { joinPath } from '../../../src/coord/paths.js';
import { CONTROL_MESSAGE_LIMIT, ControlChannel, type ControlRequest } from '../../../src/coord/recipes/control-channel.js';
import { mkdirp } from '../../../src/coord/tree-ops.js';
import type { CoordClient } from '../../../src/coord/types.js';
import { deferred, waitFor, withDeadline } from '../../support/wait.js';
import { useBackend, type Backend } from '../backends.js';

const T = { timeout: 90_000 };

/** The control channel recipe on one backend. */
export function controlChannelSuite(name: string, makeBackend: () => Promise<Backend>): void {
  describe(`control channel: ${name}`, () => {
    const { backend, open } = useBackend(makeBackend);
    const fresh = () => `/control/${randomUUID()}`;
    const queued = async (c: CoordClient, path: string) => {
      const dir = joinPath(path, 'requests');
      return (await c.exists(dir)) ? (await c.getChildren(dir)).length : 0;
    };

    it('serves requests in sequence order, one at a time, and returns each result to its client', T, async () => {
      const path = fresh();
      const server = new ControlChannel(await open(), path);
      const seen: number[] = [];
      let inHandler = 0;
      const s = server.serve(async (req) => {
        assert.equal(++inHandler, 1, 'one request at a time');
        seen.push(req.seq);
        await new Promise((r) => setImmediate(r));
        inHandler--;
        return { echo: req.body, type: req.type, from: req.from };
      });
      const clients = await Promise.all([open(), open(), open()]);
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) =>
        new ControlChannel(clients[i % 3]!, path).request('echo', { i }, { from: `client-${i % 3}`, timeoutMs: 30_000 })));
      assert.deepEqual(results, Array.from({ length: 12 }, (_, i) => ({ echo: { i }, type: 'echo', from: `client-${i % 3}` })));
      assert.equal(seen.length, 12);
      assert.deepEqual(seen, [...seen].sort((a, b) => a - b), 'handled in sequence order');
      // Each client removes its request and ack once it has the answer.
      const reader = clients[0]!;
      await waitFor(async () => (await reader.getChildren(joinPath(path, 'requests'))).length === 0 && (await reader.getChildren(joinPath(path, 'acks'))).length === 0, 'the channel to be empty');
      await s.stop();
      assert.equal(await s.ended, 'stopped');
    });

    it('a handler\'s error rejects the request with its message; serving goes on', T, async () => {
      const path = fresh();
      const s = new ControlChannel(await open(), path).serve((req) => {
        if (req.type === 'fail') throw new Error(`cannot ${String((req.body as { what: string }).what)}`);
        return 'fine';
      });
      const client = new ControlChannel(await open(), path);
      await assert.rejects(client.request('fail', { what: 'resize to 0' }), /^Error: cannot resize to 0$/);
      assert.equal(await client.request('ok', null), 'fine');
      await s.stop();
    });

    it('malformed and oversized requests get an error ack naming the problem; the next is served', T, async () => {
      const path = fresh();
      const c = await open();
      const requests = joinPath(path, 'requests');
      await mkdirp(c, requests);
      const garbage = await c.create(joinPath(requests, 'req-'), Buffer.from('{not json'), 'persistent_sequential');
      const untyped = await c.create(joinPath(requests, 'req-'), Buffer.from('{"body":1}'), 'persistent_sequential');
      const huge = await c.create(joinPath(requests, 'req-'), Buffer.from(JSON.stringify({ type: 'x', body: 'y'.repeat(CONTROL_MESSAGE_LIMIT) })), 'persistent_sequential');
      const handled: string[] = [];
      const s = new ControlChannel(await open(), path).serve((req) => handled.push(req.type));
      assert.equal(await new ControlChannel(c, path).request('good', null), 1, 'the good request after them is served');
      const ack = async (p: string) => JSON.parse((await c.getData(joinPath(path, 'acks', p.slice(p.lastIndexOf('/') + 1)))).data.toString()) as { ok: boolean; error: string };
      assert.deepEqual(await ack(garbage), { ok: false, error: `malformed control request ${garbage.slice(-14)}: not JSON`, at: (await ack(garbage) as unknown as { at: number }).at });
      assert.match((await ack(untyped)).error, /malformed control request req-\d{10}: no "type" string/);
      assert.match((await ack(huge)).error, new RegExp(`over the ${CONTROL_MESSAGE_LIMIT}-byte limit`));
      assert.deepEqual(handled, ['good'], 'the handler never saw the malformed ones');
      await s.stop();
    });

    it('size limits: an oversized request is refused before it is written; an oversized result is an error ack', T, async () => {
      const path = fresh();
      const c = await open();
      const client = new ControlChannel(c, path);
      await assert.rejects(client.request('big', 'x'.repeat(CONTROL_MESSAGE_LIMIT)), /control request is \d+ bytes, over the 65536-byte limit/);
      await assert.rejects(client.request('', null), /non-empty string type/);
      await assert.rejects(client.request('cyclic', 10n), /not JSON-serializable/);
      assert.equal(await c.exists(joinPath(path, 'requests', 'req-0000000000')), null, 'nothing was queued');
      const s = new ControlChannel(await open(), path).serve(() => 'z'.repeat(CONTROL_MESSAGE_LIMIT));
      await assert.rejects(client.request('answer-big', null), /result of control request req-\d{10} is \d+ bytes, over the 65536-byte limit/);
      await s.stop();
    });

    it('a request not acknowledged in time rejects, stays queued, and is served later', T, async () => {
      const path = fresh();
      const c = await open();
      await assert.rejects(new ControlChannel(c, path).request('later', { n: 1 }, { timeoutMs: 100 }), /control request req-0000000000 \(later\) was not acknowledged within 100 ms; it stays queued/);
      const got = deferred<ControlRequest>();
      const s = new ControlChannel(await open(), path).serve((req) => got.resolve(req));
      const req = await withDeadline(got.promise, 'the queued request to be served');
      assert.deepEqual([req.type, req.body, req.seq], ['later', { n: 1 }, 0]);
      await waitFor(async () => (await c.exists(joinPath(path, 'acks', 'req-0000000000'))) !== null, 'its ack');
      await s.stop();
    });

    it('a request whose handler gives up because its server stopped stays unacknowledged, and the next server serves it', T, async () => {
      const path = fresh();
      const c = await open();
      const inHandler = deferred();
      const giveUp = deferred<never>();
      const a = new ControlChannel(await open(), path).serve(() => {
        inHandler.resolve();
        return giveUp.promise; // a leader that loses its role rejects what it holds
      });
      const answer = new ControlChannel(c, path).request('move', { n: 2 }, { timeoutMs: 60_000 });
      await withDeadline(inHandler.promise, 'the handler to start');
      const stopped = a.stop();
      giveUp.reject(new Error('the leader stopped'));
      await withDeadline(stopped, 'server A to stop');
      assert.equal(await c.exists(joinPath(path, 'acks', 'req-0000000000')), null, 'no error ack from a stopped server');
      const b = new ControlChannel(await open(), path).serve((req) => `b:${req.type}`);
      assert.equal(await withDeadline(answer, 'the answer from server B'), 'b:move');
      await b.stop();
    });

    it('afterAck: actions run once the ack is written, in order; one registered later runs at once; a stopped server runs none', T, async () => {
      const path = fresh();
      const c = await open();
      const ackPath = joinPath(path, 'acks', 'req-0000000000');
      // Acknowledged: the ack is there, or the client has read it and removed it with the request.
      const acked = async () => (await c.exists(ackPath)) !== null || (await c.exists(joinPath(path, 'requests', 'req-0000000000'))) === null;
      const sawAck: Array<[string, boolean]> = [];
      let held: ControlRequest | undefined;
      const late = deferred<boolean>();
      const s = new ControlChannel(await open(), path).serve((req) => {
        held = req;
        req.afterAck(async () => void sawAck.push(['first', await acked()]));
        req.afterAck(async () => void sawAck.push(['second', await acked()]));
        return 'done';
      });
      assert.equal(await new ControlChannel(c, path).request('end', null), 'done');
      await waitFor(() => sawAck.length === 2, 'both actions');
      assert.deepEqual(sawAck, [['first', true], ['second', true]], 'run in order, each after the ack existed');
      held!.afterAck(() => late.resolve(true));
      assert.equal(await withDeadline(late.promise, 'the action registered after the ack'), true);
      await s.stop();
      // A server stopped while its handler gives up: no ack, so no action either (the next server redoes it).
      const path2 = fresh();
      const inHandler = deferred();
      const giveUp = deferred<never>();
      let ran = false;
      const a = new ControlChannel(await open(), path2).serve((req) => {
        req.afterAck(() => (ran = true));
        inHandler.resolve();
        return giveUp.promise;
      });
      const pending = new ControlChannel(c, path2).request('end', null, { timeoutMs: 60_000 }).catch(() => undefined);
      await withDeadline(inHandler.promise, 'the handler to start');
      const stopped = a.stop();
      giveUp.reject(new Error('the leader stopped'));
      await withDeadline(stopped, 'the server to stop');
      assert.equal(ran, false, 'no action without an acknowledgement');
      const b = new ControlChannel(await open(), path2).serve(() => 'b');
      await withDeadline(pending, 'the request served by the next server');
      await b.stop();
    });

    it('an aborted wait rejects with the reason unless the acknowledgement is already written', T, async () => {
      const path = fresh();
      const c = await open();
      const abandoned = new AbortController();
      const first = new ControlChannel(c, path).request('never', null, { timeoutMs: 60_000, signal: abandoned.signal }).then(() => new Error('resolved'), (err: unknown) => err);
      await waitFor(async () => (await queued(c, path)) === 1, 'the request to be queued');
      abandoned.abort(new Error('the job ended'));
      assert.match(String(await withDeadline(first, 'the rejection')), /the job ended/);
      // Acknowledged just before the abort (the watch has not reported it yet): the acknowledgement wins.
      // The test writes the ack itself from another session and aborts at once; whichever the client
      // learns first, the answer must be the ack's.
      const raced = new AbortController();
      const second = new ControlChannel(c, path).request('late', null, { timeoutMs: 60_000, signal: raced.signal });
      await waitFor(async () => (await queued(c, path)) === 2, 'the second request to be queued');
      const name = (await c.getChildren(joinPath(path, 'requests'))).sort().at(-1)!;
      const writer = await open();
      await writer.create(joinPath(path, 'acks', name), Buffer.from(JSON.stringify({ ok: true, result: 'late', at: Date.now() })));
      raced.abort(new Error('too late to matter'));
      assert.equal(await withDeadline(second, 'the answer'), 'late');
    });

    it('a waiting client whose session expires is rejected', T, async () => {
      const path = fresh();
      const c = await open();
      // Settled into a value at once: the rejection may come before the test awaits it.
      const pending = new ControlChannel(c, path).request('never', null, { timeoutMs: 60_000 }).then(() => new Error('resolved'), (err: unknown) => err);
      await waitFor(async () => (await queued(c, path)) === 1, 'the request to be queued');
      await backend().expire(c);
      assert.match(String(await withDeadline(pending, 'the rejection', 30_000)), /the coordination session expired before it was acknowledged/);
    });

    it('failover mid-stream: the next server resumes at the first unacknowledged request, skipping none', T, async () => {
      const path = fresh();
      const sa = await open();
      const aSeen: number[] = [];
      const bSeen: number[] = [];
      const stuck = deferred();
      const reachedThird = deferred();
      const a = new ControlChannel(sa, path).serve(async (req) => {
        aSeen.push(req.seq);
        if (aSeen.length === 3) {
          reachedThird.resolve();
          await stuck.promise; // dies while acting on the third request
        }
        return `a:${req.seq}`;
      });
      const client = new ControlChannel(await open(), path);
      const answers: Promise<unknown>[] = [];
      for (let i = 0; i < 5; i++) {
        answers.push(client.request('step', i, { timeoutMs: 60_000 }));
        await waitFor(async () => (await queued(sa, path)) + aSeen.length >= i + 1, `request ${i} to be queued`);
      }
      await withDeadline(reachedThird.promise, 'server A to reach the third request');
      await backend().expire(sa);
      assert.equal(await withDeadline(a.ended, 'server A to end', 30_000), 'expired');
      const b = new ControlChannel(await open(), path).serve((req) => {
        bSeen.push(req.seq);
        return `b:${req.seq}`;
      });
      stuck.resolve(); // A's late ack cannot be written: its session is gone
      const results = await withDeadline(Promise.all(answers), 'every request to be answered', 60_000);
      assert.equal(aSeen.length, 3);
      assert.deepEqual(bSeen, [aSeen[2], ...bSeen.slice(1)], 'B starts at the request A was acting on');
      assert.deepEqual([...aSeen.slice(0, 2), ...bSeen], [...aSeen.slice(0, 2), ...bSeen].sort((x, y) => x - y));
      assert.equal(bSeen.length, 3, 'B served the third (again), fourth and fifth');
      assert.deepEqual(results, [`a:${aSeen[0]}`, `a:${aSeen[1]}`, ...bSeen.map((s) => `b:${s}`)]);
      await b.stop();
    });
  });
}
