/**
 * The node channel under a running job (two nodes on real TCP + TLS connections, embedded coordination):
 * - a man in the middle (a proxy in front of each node) sees no task state in plaintext, and the byte it
 *   alters makes the receiving node drop the connection and log why; the job still ends exactly;
 * - a secret rotation (both secrets trusted, the new one presented, the old one retired) leaves the job
 *   exact, and afterwards a node with the old secret, or with none of the cluster's, is refused both ways.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { connect } from '../../src/coord/connect.js';
import type { CoordClient } from '../../src/coord/types.js';
import { awaitOutcome } from '../../src/runtime/job/outcome.js';
import { submitJob } from '../../src/runtime/client/submit.js';
import { taskPoolJob } from '../../src/runtime/pool/task-pool-ref.js';
import { TidepoolNode } from '../../src/runtime/node/node.js';
import { TcpTransport } from '../../src/transport/tcp-transport.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';
import { admittedClient } from '../support/channel-client.js';
import { openGate } from '../support/gate.js';
import { withWarnings } from '../support/log-capture.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { deferred, waitFor, withDeadline } from '../support/wait.js';
import { taggedRoot } from './apps/tagged-compositions.js';

const TAGGED = { module: new URL('./apps/tagged-compositions.ts', import.meta.url).href, export: 'default' };
const N = 14;

interface Member {
  node: TidepoolNode;
  client: CoordClient;
  transport: TcpTransport;
  rejected: string[];
  /** Connections this node admitted. */
  admitted: () => number;
}

async function startMember(cluster: string, id: string, secret: Buffer, advertise?: string): Promise<Member> {
  const client = await connect(`embedded:${cluster}`, { secret });
  const transport = new TcpTransport({ nodeId: id, secret, ...(advertise ? { advertise } : {}) });
  const rejected: string[] = [];
  transport.events.on('rejected', (r) => rejected.push(r.reason));
  let admitted = 0;
  transport.events.on('accepted', () => admitted++);
  const node = await TidepoolNode.start({ client, transport, workers: 2, nodeId: id, seed: 7, secret: ClusterSecret.from(secret) });
  return { node, client, transport, rejected, admitted: () => admitted };
}

async function stopAll(members: Member[], admin: CoordClient): Promise<void> {
  for (const m of members) {
    await m.node.crash();
    await m.client.close().catch(() => undefined);
  }
  await admin.close();
}

describe('node channel under a running job', { timeout: 180_000 }, () => {
  it('a man in the middle sees no task state; an altered byte drops the connection, logged; the job ends exactly', async () => {
    await withWarnings('transport', async (warnings) => {
      const name = `mitm-${randomBytes(3).toString('hex')}`;
      const secret = randomBytes(32);
      const marker = `tidepool-marker-${randomBytes(6).toString('hex')}`;
      const admin = await connect(`embedded:${name}`, { secret });
      const members: Member[] = [];
      const proxies: TcpProxy[] = [];
      const wire: Buffer[] = [];
      try {
        for (const id of ['node-a', 'node-b']) {
          const target = deferred<{ host: string; port: number }>();
          const proxy = await startTcpProxy(target.promise);
          proxy.onData((_d, _n, chunk) => wire.push(Buffer.from(chunk)));
          proxies.push(proxy);
          const m = await startMember(name, id, secret, `tcp://${proxy.address}`);
          target.resolve({ host: '127.0.0.1', port: m.transport.port });
          members.push(m);
        }
        // The first records each node sends on a new connection (runtime messages: a steal request, an offer)
        // are altered by the proxy in front of its peer; the peer must drop that connection.
        for (const [i, m] of members.entries()) {
          let armed = false;
          m.transport.events.on('accepted', () => {
            if (armed) return;
            armed = true; // synchronously, before the admitted peer can have sent a frame
            void proxies[i]!.rewriteNext('up', (chunk) => {
              const altered = Buffer.from(chunk);
              altered[altered.length - 1]! ^= 0x40;
              return [altered];
            });
          });
        }
        let steals = 0;
        for (const m of members) m.node.on((e) => { if (e.type === 'steal') steals++; });
        const spec = await submitJob(admin, { ...taskPoolJob(TAGGED, taggedRoot(marker, N)), nodes: 2, secret: ClusterSecret.from(secret) });
        const outcome = awaitOutcome(admin, spec.id);
        for (const m of members) {
          await waitFor(() => m.rejected.some((r) => /a TLS record failed authentication/.test(r)), `${m.node.id} to drop the altered connection`, 30_000);
        }
        // The runtime recovers: a task state still moves between the nodes (on new connections).
        await waitFor(() => steals > 0, 'a task state to move between the nodes', 60_000);
        await openGate(admin, spec.id);
        const end = await withDeadline(outcome, 'the outcome', 90_000);
        assert.equal(end.status, 'done', JSON.stringify(end));
        if (end.status === 'done') assert.equal(end.value, 2 ** N);
        const bytes = Buffer.concat(wire);
        assert.ok(bytes.length > 10_000, `the nodes talked through the proxies (${bytes.length} bytes)`);
        assert.equal(bytes.indexOf(marker), -1, 'the task state is not readable on the wire');
        for (const id of ['node-a', 'node-b']) {
          assert.ok(warnings.some((w) => new RegExp(`WARN.*${id}: dropping connection from node-[ab] \\(127\\.0\\.0\\.1:\\d+\\): a TLS record failed authentication`).test(w)),
            `${id} logged the drop with the peer and the reason:\n${warnings.join('')}`);
        }
      } finally {
        await stopAll(members, admin);
        for (const p of proxies) await p.close();
      }
    });
  });

  it('a secret rotation leaves the running job exact; then old-secret and secret-less nodes are refused, logged', async () => {
    await withWarnings('transport', async () => {
      const name = `rotation-${randomBytes(3).toString('hex')}`;
      const oldSecret = randomBytes(32);
      const newSecret = randomBytes(32);
      const admin = await connect(`embedded:${name}`, { secret: oldSecret });
      const members: Member[] = [];
      const outsiders: TcpTransport[] = [];
      try {
        for (const id of ['node-a', 'node-b']) members.push(await startMember(name, id, oldSecret));
        let steals = 0;
        for (const m of members) m.node.on((e) => { if (e.type === 'steal') steals++; });
        const spec = await submitJob(admin, { ...taskPoolJob(TAGGED, taggedRoot('tidepool-rotation', N)), nodes: 2, secret: ClusterSecret.from(oldSecret) });
        const outcome = awaitOutcome(admin, spec.id);
        await waitFor(() => steals > 0, 'a task state to move between the nodes');
        // The three steps of a rotation, each on every node: trust both; present the new; drop the old.
        for (const secrets of [[oldSecret, newSecret], [newSecret, oldSecret], [newSecret]]) {
          for (const m of members) m.transport.setCredentials({ secrets });
          // The nodes still reach each other, on connections made with the new credentials (a bounce of
          // another job is ignored by its receiver: a harmless probe).
          const before = members.map((m) => m.admitted());
          for (const [i, m] of members.entries()) {
            const peer = members[1 - i]!;
            await m.transport.send({ nodeId: peer.node.id, address: peer.transport.address }, { type: 'job-bounce', job: 'probe', body: { type: 'probe' } });
          }
          await waitFor(() => members.every((m, i) => m.admitted() > before[i]!), 'each node to admit its peer again');
        }
        const refusals = members.map((m) => m.rejected.length);
        for (const [what, secret] of [['old secret', oldSecret], ['no cluster secret', randomBytes(32)]] as const) {
          const outsider = new TcpTransport({ nodeId: `outsider-${what.replace(/ /g, '-')}`, secret });
          outsiders.push(outsider);
          await outsider.start();
          for (const m of members) {
            // The outsider refuses the node's certificate...
            await assert.rejects(outsider.send({ nodeId: m.node.id, address: m.transport.address }, { type: 'hello' }), /the peer's certificate is refused: .*not issued by a CA this node trusts/, what);
            // ...and a client that trusts the node but presents the outsider's certificate is refused by it, told why.
            await assert.rejects(admittedClient(m.transport.port, 'outsider', { secrets: [secret, newSecret] }), /not admitted: .*channel-refused.*another cluster secret, or one retired by a rotation/, what);
          }
        }
        for (const [i, m] of members.entries()) {
          await waitFor(() => m.rejected.length >= refusals[i]! + 4, `${m.node.id} to refuse (and log) the outsiders' connections`);
          assert.ok(m.rejected.slice(refusals[i]).every((r) => /certificate from .*tidepool cluster [0-9a-f]{12} refused/.test(r)), m.rejected.join('\n'));
        }
        await openGate(admin, spec.id);
        const end = await withDeadline(outcome, 'the outcome', 90_000);
        assert.equal(end.status, 'done', JSON.stringify(end));
        if (end.status === 'done') assert.equal(end.value, 2 ** N);
      } finally {
        await stopAll(members, admin);
        for (const o of outsiders) await o.close();
      }
    });
  });
});
