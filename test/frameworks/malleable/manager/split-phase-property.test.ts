import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobDecision } from '../../../../src/frameworks/malleable/manager/job-decisions.js';
import { FLEXIBILITIES } from '../../../../src/frameworks/malleable/manager/managed-job.js';
import { ManagerCore, type QueuedJob } from '../../../../src/frameworks/malleable/manager/manager-core.js';
import { managerPolicy, POLICY_NAMES } from '../../../../src/frameworks/malleable/manager/policies.js';
import { Rng } from '../../../../src/util/rng.js';
import { testSeeds } from '../../../support/seeds.js';

/**
 * The manager under randomized schedules in simulated time: jobs arrive and finish, acknowledgements
 * come late and out of order (sometimes keeping a node they were asked to give up), nodes die and
 * come back. The simulated jobs hold nodes on their own account — a node joins a job when a launch
 * or expand is performed and leaves it only when the job acknowledges its shrink — and after every
 * step no node may be held by two jobs. Then arrivals stop and every job must finish.
 */
describe('split-phase executor property: no node is ever held by two jobs', () => {
  for (const seed of testSeeds([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])) {
    it(`seed ${seed}`, () => {
      const rng = new Rng(seed);
      let now = 0;
      const policyName = POLICY_NAMES[seed % POLICY_NAMES.length]!;
      const tGapMs = rng.pick([0, 40, 500]);
      const core = new ManagerCore(managerPolicy(policyName, { tGapMs }), () => now);
      const pool = new Set(Array.from({ length: rng.int(4, 12) }, (_, i) => `n${i}`));
      const jobs: QueuedJob[] = [];
      const holds = new Map<string, Set<string>>();
      const acks: Array<{ job: string; nodes: string[] }> = [];
      let launches = 0;
      let shrinks = 0;

      const perform = (actions: JobDecision[]) => {
        for (const a of actions) {
          const mine = holds.get(a.job) ?? new Set<string>();
          holds.set(a.job, mine);
          if (a.type === 'shrink') {
            shrinks++;
            const keepExtra = rng.chance(0.1) ? a.removed.slice(0, 1) : [];
            acks.push({ job: a.job, nodes: [...a.nodes, ...keepExtra].filter((n) => mine.has(n)) });
            continue;
          }
          if (a.type === 'launch') launches++;
          for (const n of a.type === 'launch' ? a.nodes : a.added) {
            assert.ok(pool.has(n), `seed ${seed}: ${a.job} given node ${n}, which is not in the pool`);
            for (const [other, set] of holds) assert.ok(other === a.job || !set.has(n), `seed ${seed}: node ${n} given to ${a.job} while ${other} holds it`);
            mine.add(n);
          }
        }
      };
      const live = () => [...pool].sort();
      const step = (arrivals: boolean) => {
        now += rng.int(1, 30);
        const r = rng.next();
        if (arrivals && r < 0.25) {
          const flexibility = rng.pick(FLEXIBILITIES);
          const min = rng.int(1, 4);
          jobs.push({ id: `j${jobs.length}`, createdAt: now, flexibility, nodes: rng.int(min, min + 3), minNodes: min, maxNodes: rng.int(min, 12), finished: false });
          perform(core.schedule(jobs, live()));
        } else if (r < 0.55 && acks.length > 0) {
          const ack = acks.splice(rng.int(0, acks.length - 1), 1)[0]!;
          const mine = holds.get(ack.job)!;
          for (const n of [...mine]) if (!ack.nodes.includes(n)) mine.delete(n);
          perform(core.shrinkAcknowledged(ack.job, ack.nodes));
        } else if (r < 0.75) {
          const running = jobs.filter((j) => !j.finished && (holds.get(j.id)?.size ?? 0) > 0);
          if (running.length === 0) return;
          const done = rng.pick(running);
          done.finished = true;
          holds.delete(done.id);
          for (let i = acks.length - 1; i >= 0; i--) if (acks[i]!.job === done.id) acks.splice(i, 1);
          perform(core.jobFinished(done.id));
          perform(core.schedule(jobs, live()));
        } else if (r < 0.82 && pool.size > 2) {
          const lost = rng.pick(live());
          pool.delete(lost);
          for (const set of holds.values()) set.delete(lost);
          perform(core.nodeLost(lost));
        } else if (r < 0.9) {
          pool.add(`n${rng.int(0, 15)}`);
          perform(core.schedule(jobs, live()));
        } else perform(core.schedule(jobs, live())); // a T_gap may have expired
      };

      for (let i = 0; i < 400; i++) step(true);
      for (let i = 0; i < 4000 && jobs.some((j) => !j.finished); i++) step(false);
      assert.deepEqual(jobs.filter((j) => !j.finished).map((j) => j.id), [], `seed ${seed} (${policyName}): every job finishes once arrivals stop`);
      assert.ok(launches >= jobs.length, `seed ${seed}: every job was launched`);
      if (policyName === 'equipartition' && tGapMs < 500) assert.ok(shrinks > 0, `seed ${seed}: equipartition shrank some job`);
    });
  }
});
