/**
 * The coordination recipes at work: four members join a group, elect a leader, share a
 * global bound, and detect the termination of a tree of tasks that they complete between them.
 *
 *   npx tsx examples/coordination.ts                      # embedded backend, no external service
 *   npx tsx examples/coordination.ts zk://127.0.0.1:2181  # a ZooKeeper ensemble
 *
 * (Applications import these from 'tidepool-runtime/coord'; the example imports the sources so it runs unbuilt.)
 */
import { randomUUID } from 'node:crypto';
import {
  GlobalVariables, GroupMembership, LeaderElection, TaskTracker, TerminationList, addStats, connect,
} from '../src/coord/index.js';

const connection = process.argv[2] ?? 'embedded';
const job = `/examples/${randomUUID()}`;
const sessions = await Promise.all([0, 1, 2, 3].map(() => connect(connection)));

// Membership: every member sees the others.
const groups = sessions.map((s) => new GroupMembership(s, `${job}/members`));
await Promise.all(groups.map((g, i) => g.join(`node-${i}`, { workers: 2 })));
await Promise.all(groups.map((g) => g.watch()));

// Leader election: the first candidate coordinates.
const elections = sessions.map((s, i) => new LeaderElection(s, `${job}/election`, { id: `node-${i}`, data: null }));
for (const e of elections) await e.start();
const leaderIndex = elections.findIndex((e) => e.isLeader);

// Termination detection over a binary tree of tasks of depth 6 (127 tasks), completed round-robin;
// the leader watches the list.
const list = new TerminationList(sessions[leaderIndex]!, `${job}/termination`);
await list.init('t1');
const finished = list.finished();
const trackers = sessions.map((s) => new TaskTracker(s, `${job}/termination`));
const children = (n: number) => (n < 64 ? [`t${2 * n}`, `t${2 * n + 1}`] : []);
await Promise.all(Array.from({ length: 127 }, (_, i) => trackers[i % 4]!.completed(`t${i + 1}`, children(i + 1))));
await finished;

// A global minimum that every member proposes to.
const vars = sessions.map((s) => new GlobalVariables(s, `${job}/vars`));
await Promise.all(vars.map((v) => v.define<number>('bound', { rule: 'min' })));
await Promise.all(vars.map((v, i) => v.setVar('bound', 100 - i * 7)));
// setVar answers with the global value after the merge: here the best of all proposals.
const bound = await vars[0]!.setVar('bound', 100);

console.log(JSON.stringify({
  backend: sessions[0]!.backend,
  members: [...groups[0]!.view().keys()].sort(),
  leader: `node-${leaderIndex}`,
  terminated: true,
  bound,
  terminationStats: addStats(...trackers.map((t) => t.stats)),
}));

groups.forEach((g) => g.stop());
vars.forEach((v) => v.stop());
await Promise.all(sessions.map((s) => s.close()));
