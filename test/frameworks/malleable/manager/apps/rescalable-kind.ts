/**
 * Test job kind: the task pool, plus the job side of the resource manager's channel as a malleable
 * application answers it — `rescale {nodes}` and `vacate {node}` acknowledged with the node list the
 * job will keep ({ nodes, tRescaleMs, phases }). Every request is logged under the job's
 * `rescale-log` znode (with the members at the time), so a test can check that the manager released
 * no node before the job let it go. While the job's `hold-rescales` znode exists, acknowledgements
 * wait (a test can keep a shrink pending, e.g. across a restart of the manager).
 */
import { joinPath } from '../../../../../src/coord/paths.js';
import { mkdirp } from '../../../../../src/coord/tree-ops.js';
import { watchData } from '../../../../../src/coord/watch.js';
import { defineJobKind } from '../../../../../src/runtime/kinds/job-kind.js';
import { prepareTaskPool, taskPoolLeader, taskPoolMember } from '../../../../../src/runtime/pool/task-pool-kind.js';

export default defineJobKind({
  name: 'rescalable',
  prepare: prepareTaskPool,
  member: (ctx) => taskPoolMember(ctx, {}),
  leader(ctx) {
    const base = taskPoolLeader(ctx);
    return {
      stop: () => base.stop(),
      async onControl(type, body) {
        if (type !== 'rescale' && type !== 'vacate') throw new Error(`rescalable: unknown request "${type}"`);
        const started = Date.now();
        const members = [ctx.nodeId, ...ctx.peers()].sort();
        const b = body as { nodes?: unknown; node?: unknown };
        const nodes = type === 'vacate' ? members.filter((n) => n !== b.node) : Array.isArray(b.nodes) ? (b.nodes as string[]) : members.slice(0, Number(b.nodes));
        await mkdirp(ctx.client, joinPath(ctx.paths.base, 'rescale-log'));
        await ctx.client.create(joinPath(ctx.paths.base, 'rescale-log', 'r-'), Buffer.from(JSON.stringify({ type, body, members })), 'persistent_sequential');
        await new Promise<void>((resolve) => {
          const w = watchData(ctx.client, joinPath(ctx.paths.base, 'hold-rescales'), (d) => {
            if (d) return;
            w.close();
            resolve();
          });
        });
        return { nodes, tRescaleMs: Date.now() - started, phases: {} };
      },
    };
  },
});
