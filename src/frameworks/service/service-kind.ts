/**
 * The job kind of the service's long-lived job (seed 002 §3.4, with one job for many batches instead of
 * one per batch): the task pool, whose root task is the feeder (service-task.ts), and on every member
 * the service's channel (service-member.ts). The leader answers `hello` with where the channel lives,
 * which the service asks once the job has started and before it posts a batch; the service then claims
 * the job with an ephemeral znode, and the job ends when that znode goes.
 */
import { mkdirp } from '../../coord/tree-ops.js';
import { watchData } from '../../coord/watch.js';
import { defineJobKind } from '../../runtime/kinds/job-kind.js';
import { prepareTaskPool, taskPoolKind, taskPoolLeader, taskPoolMember } from '../../runtime/pool/task-pool-kind.js';
import { channelPaths } from './job-channel.js';
import { ServiceMember, serviceDir } from './service-member.js';
import type { TaskToKind } from './service-task.js';

/** How long a job waits for its service to claim it (the service claims it right after `hello`). */
const OWNER_WAIT_MS = 120_000;

export default defineJobKind({
  name: 'service',
  prepare: prepareTaskPool,
  async member(ctx) {
    const service = new ServiceMember(ctx);
    const pool = await taskPoolMember(ctx, { onTaskMessage: (_taskId, body, slot) => service.onTask(slot, body as TaskToKind) });
    service.start();
    return {
      ...pool,
      stop: () => {
        service.stop();
        pool.stop();
      },
    };
  },
  leader(ctx) {
    const duties = taskPoolLeader(ctx);
    const paths = channelPaths(serviceDir(ctx.paths.base));
    // The job lives as long as its service: when the service's ephemeral `owner` znode goes (its process
    // ended, its session expired), or none appears in time, the job ends and frees its nodes.
    let seen = false;
    const orphaned = (why: string) => void ctx.finish({ status: 'failed', error: why, finishedAt: Date.now() });
    const unclaimed = setTimeout(() => { if (!seen) orphaned(`no service claimed this job within ${OWNER_WAIT_MS} ms`); }, OWNER_WAIT_MS);
    unclaimed.unref();
    const owner = watchData(ctx.client, paths.owner, (d) => {
      if (d) seen = true;
      else if (seen) orphaned('its service is gone (the service\'s session ended)');
    });
    return {
      stop: () => {
        clearTimeout(unclaimed);
        owner.close();
        duties.stop();
      },
      onControl: async (type) => {
        if (type !== 'hello') throw new Error(`the service's job answers "hello", not "${type}"`);
        for (const dir of [paths.batches, paths.out, paths.cancel]) await mkdirp(ctx.client, dir);
        return { dir: paths.dir };
      },
    };
  },
  validateMessage: (body) => taskPoolKind.validateMessage?.(body),
});
