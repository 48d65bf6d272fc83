/**
 * A large workflow never holds a member's event loop for long: on a node (an engine given `defer`),
 * a member handles at most TURN_ITEMS tasks and files per turn and sends no message of more than
 * MESSAGE_ITEMS, whatever arrives at once. Deterministic: two engines wired by hand, each turn run
 * one at a time, the tasks and files handled in each turn counted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LayerBody } from '../../../src/runtime/kinds/job-kind.js';
import type { JournalState } from '../../../src/frameworks/workflow/dispatcher.js';
import { itemsOf, MESSAGE_ITEMS, sliceMessage, type WorkflowMessage } from '../../../src/frameworks/workflow/protocol.js';
import { WorkflowBuilder } from '../../../src/frameworks/workflow/workflow-builder.js';
import { MAX_STOLEN, TURN_ITEMS, WorkflowEngine } from '../../../src/frameworks/workflow/workflow-engine.js';

interface Member {
  engine: WorkflowEngine;
  turns: (() => void)[];
  running: number[];
}

describe('workflow engine: bounded work per turn', () => {
  it('40,000 tasks assigned at once on two members: no turn handles more than TURN_ITEMS (+ one message), no message carries more than MESSAGE_ITEMS, every task runs once', () => {
    // Pairs: p<i> writes m<i>, c<i> reads it (an intermediate file: every c<i> asks the location service where it is).
    const PAIRS = 20_000;
    const b = new WorkflowBuilder('turns');
    for (let i = 0; i < PAIRS; i++) b.task({ id: `p${i}`, outputs: [`m${i}`] }).task({ id: `c${i}`, inputs: [`m${i}`], outputs: [`o${i}`] });
    const wf = b.build();
    const journal: JournalState = { done: new Map(), saved: new Set() };
    const completions = new Map<number, number>();
    const network: [string, string, LayerBody][] = [];
    let outcome: { ok: true } | { ok: false; error: string } | undefined;
    let largestMessage = 0;
    const members = new Map<string, Member>();
    for (const id of ['n0', 'n1']) {
      const m: Member = { turns: [], running: [], engine: undefined as never };
      m.engine = new WorkflowEngine(wf, id, {
        send: (to, body) => {
          largestMessage = Math.max(largestMessage, itemsOf(body as unknown as WorkflowMessage));
          network.push([to, id, body]);
        },
        run: (task) => void m.running.push(task),
        readJournal: () => ({ done: new Map(journal.done), saved: new Set(journal.saved) }),
        journal: (done) => {
          for (const [t, node] of done) {
            journal.done.set(t, node);
            completions.set(t, (completions.get(t) ?? 0) + 1);
          }
        },
        finish: (o) => void (outcome = o),
        random: () => 0.5,
        defer: (flush) => void m.turns.push(flush),
      }, { slots: 64 });
      members.set(id, m);
    }
    // Every task and file a member's engine handles, counted per turn.
    let handled = 0;
    for (const { engine } of members.values()) {
      const inner = engine as unknown as { handle(from: string, m: WorkflowMessage): void };
      const handle = inner.handle.bind(engine);
      inner.handle = (from, msg) => {
        handled += itemsOf(msg);
        handle(from, msg);
      };
    }
    let largestTurn = 0;
    let turnsLeavingWork = 0;
    members.get('n0')!.engine.lead(['n0', 'n1']);
    for (let round = 0; outcome === undefined; round++) {
      assert.ok(round < 100_000, `the run ends (after ${round} rounds: ${journal.done.size} of ${wf.tasks.length} done)`);
      for (const [to, from, body] of network.splice(0)) members.get(to)!.engine.onMessage(from, body);
      for (const [id, m] of members) {
        for (const t of m.running.splice(0)) {
          const outputs = wf.tasks[t]!.outputs.filter((f) => wf.files[f]!.consumers.length > 0).map((f): [number, { node: string }] => [f, { node: id }]);
          m.engine.taskFinished(t, outputs);
        }
        for (const turn of m.turns.splice(0)) {
          handled = 0;
          turn();
          largestTurn = Math.max(largestTurn, handled);
          if (m.engine.backlog > 0) turnsLeavingWork++;
        }
      }
    }
    assert.deepEqual(outcome, { ok: true });
    assert.equal(completions.size, wf.tasks.length, 'every task completed');
    assert.ok([...completions.values()].every((n) => n === 1), 'none twice');
    assert.ok(largestMessage <= MESSAGE_ITEMS, `a message carried ${largestMessage} tasks or files`);
    assert.ok(largestTurn <= TURN_ITEMS + MESSAGE_ITEMS, `a turn handled ${largestTurn} tasks and files`);
    assert.ok(turnsLeavingWork > 0, 'some turn left what arrived for the next one (the bound was reached)');
  });

  it('a message is cut in order, the probe with its last piece; small messages and held lists stay whole', () => {
    const files = Array.from({ length: 5 }, (_, i) => i);
    const pieces = sliceMessage({ type: 'wf-query', files, probe: 7 }, 2);
    assert.deepEqual(pieces, [{ type: 'wf-query', files: [0, 1] }, { type: 'wf-query', files: [2, 3] }, { type: 'wf-query', files: [4], probe: 7 }]);
    assert.deepEqual(sliceMessage({ type: 'wf-assign', epoch: 3, tasks: [1, 2, 3], recreate: true }, 2), [{ type: 'wf-assign', epoch: 3, tasks: [1, 2], recreate: true }, { type: 'wf-assign', epoch: 3, tasks: [3], recreate: true }]);
    const held: WorkflowMessage = { type: 'wf-held', epoch: 1, tasks: [1, 2, 3] };
    assert.deepEqual(sliceMessage(held, 2), [held]);
    assert.deepEqual(sliceMessage({ type: 'wf-done', tasks: [1, 2] }, 2), [{ type: 'wf-done', tasks: [1, 2] }]);
  });

  it('a steal takes half of what is READY, at most MAX_STOLEN', () => {
    const b = new WorkflowBuilder('steal');
    const TASKS = 3 * MAX_STOLEN;
    for (let i = 0; i < TASKS; i++) b.task({ id: `t${i}`, outputs: [`o${i}`] });
    const wf = b.build();
    const sent: LayerBody[] = [];
    const engine = new WorkflowEngine(wf, 'n0', {
      send: (_to, body) => void sent.push(body), run: () => undefined, readJournal: () => ({ done: new Map(), saved: new Set() }),
      journal: () => undefined, finish: () => undefined, random: () => 0.5,
    }, { slots: 1, stealing: false });
    engine.lead(['n0']);
    assert.equal(engine.worker.readyCount, TASKS - 1, 'all READY here but the one running');
    engine.onMessage('n1', { type: 'wf-steal', want: 1 });
    const stolen = sent.find((m) => m.type === 'wf-stolen') as unknown as { tasks: unknown[] };
    assert.equal(stolen.tasks.length, MAX_STOLEN);
  });
});
