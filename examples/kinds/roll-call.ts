/**
 * A job kind of its own, not built on the task pool (see docs/job-kinds.md): at submission `prepare`
 * checks the question the job asks; the elected leader waits until every node the job asked for has
 * joined, asks each other member the question with a layer message, and ends the job with the roll
 * (every member's node id and worker count) once all have answered. A member holds nothing, so it has
 * nothing to hand over when it drains.
 */
import { defineJobKind, type JobSpec, type MemberRole } from '../../src/index.js';

interface RollCallSpec {
  question: string;
}

interface Answer {
  node: string;
  workers: number;
}

/** A member: it answers the question, and on the leader's node hands the answers it receives to the leader role. */
interface RollCallMember extends MemberRole {
  onAnswer(listener: ((answer: Answer) => void) | undefined): void;
}

/** The job's question, checked (a spec is data from the coordination service, never trusted to match its type). */
function questionOf(spec: JobSpec): string {
  const question = (spec.kindSpec as Partial<RollCallSpec> | undefined)?.question;
  if (typeof question !== 'string' || question.length === 0 || question.length > 200) {
    throw new Error(`job ${spec.id}: kind spec field "question" must be a string of 1 to 200 characters`);
  }
  return question;
}

export default defineJobKind({
  name: 'roll-call',
  prepare(spec) {
    questionOf(spec); // refused at submission, not on every node
  },
  member(ctx): RollCallMember {
    let toLeader: ((answer: Answer) => void) | undefined;
    return {
      onMessage(from, body) {
        if (body.type === 'roll-call') void ctx.send(from, { type: 'present', node: ctx.nodeId, workers: ctx.workers.size }).catch(() => undefined);
        if (body.type === 'present') toLeader?.({ node: from, workers: Number(body.workers) });
      },
      onAnswer: (listener) => (toLeader = listener),
      drain: () => Promise.resolve(),
      stop: () => undefined,
    };
  },
  leader(ctx) {
    const question = questionOf(ctx.spec);
    const roll = new Map<string, Answer>([[ctx.nodeId, { node: ctx.nodeId, workers: ctx.workers.size }]]);
    const asked = new Set<string>();
    const finishIfComplete = () => {
      if (roll.size < ctx.spec.nodes.requested) return;
      const members = [...roll.values()].sort((a, b) => a.node.localeCompare(b.node));
      void ctx.finish({ status: 'done', value: { question, members }, completions: members.length, finishedAt: Date.now() });
    };
    const ask = () => {
      for (const peer of ctx.peers()) {
        if (asked.has(peer)) continue;
        asked.add(peer);
        void ctx.send(peer, { type: 'roll-call', question }).catch(() => asked.delete(peer));
      }
    };
    // The answers reach this node's member role of the job (this kind's own), which hands them over.
    const own = ctx.member as RollCallMember;
    own.onAnswer((answer) => {
      roll.set(answer.node, answer);
      finishIfComplete();
    });
    const off = ctx.membership.on('joined', ask);
    ask();
    finishIfComplete();
    return {
      stop() {
        off();
        own.onAnswer(undefined);
      },
    };
  },
  validateMessage(body) {
    switch (body.type) {
      case 'roll-call':
        return typeof body.question === 'string' ? undefined : 'roll-call needs a string "question"';
      case 'present':
        return typeof body.node === 'string' && Number.isInteger(body.workers) ? undefined : 'present needs a string "node" and a whole number "workers"';
      default:
        return `unknown roll-call message type ${JSON.stringify(body.type)}`;
    }
  },
});
