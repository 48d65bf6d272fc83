/**
 * A small job kind built on the task pool (see docs/job-kinds.md): every member greets the others
 * with a layer message and counts the answers, tasks ask their node for a budget through the
 * node-to-worker channel, and the leader answers a `greetings` control request.
 */
import { defineJobKind, prepareTaskPool, taskPoolLeader, taskPoolMember } from '../../src/index.js';

export default defineJobKind({
  name: 'greeting-pool',
  // Built on the task pool: its spec and ledger are the pool's.
  prepare: prepareTaskPool,
  async member(ctx) {
    const greeted = new Set<string>(); // peers this member greeted
    const heardFrom = new Set<string>(); // peers that greeted this member
    const pool = await taskPoolMember(ctx, {
      // A task asked for its budget (TaskContext.send): grant it in shared memory (TaskContext.budget).
      onTaskMessage: (_task, _body, slot) => ctx.workers.setBudget?.(slot, 10_000),
    });
    return {
      ...pool,
      peersJoined() {
        pool.peersJoined!();
        for (const peer of ctx.peers()) {
          if (greeted.has(peer)) continue;
          greeted.add(peer);
          void ctx.send(peer, { type: 'hello' }).catch(() => greeted.delete(peer));
        }
      },
      onMessage(from, body) {
        if (body.type === 'hello') heardFrom.add(from);
        else pool.onMessage!(from, body); // the task pool's own protocol (steals, offers)
      },
      counters: () => ({ ...pool.counters!(), figures: { greetedBy: heardFrom.size } }),
    };
  },
  leader(ctx) {
    const pool = taskPoolLeader(ctx);
    return {
      stop: () => pool.stop(),
      onControl: async (type) => {
        if (type !== 'greetings') throw new Error(`unknown request ${type}`);
        return ctx.member.counters?.().figures ?? {};
      },
    };
  },
  validateMessage: (body) => (body.type === 'hello' || ['steal', 'steal-empty', 'offer', 'offer-ack'].includes(body.type) ? undefined : `unknown message ${body.type}`),
});
