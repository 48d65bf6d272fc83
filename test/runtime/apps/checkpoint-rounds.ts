/**
 * Test application: one task that checkpoints `rounds` times, each time with a different 64 KB payload
 * in its state (over the inline limit, so every checkpoint is a blob), then completes with the rounds
 * it saw. Superseded checkpoints must not outlive the record that referenced them.
 */
import { defineTask } from '../../../src/runtime/worker/task.js';

export interface RoundsState {
  round: number;
  rounds: number;
  payload: Uint8Array;
}

export const PAYLOAD_BYTES = 64 * 1024;

export default defineTask<RoundsState, number>({
  name: 'checkpoint-rounds',
  run(s, ctx) {
    for (; s.round < s.rounds; s.round++) {
      s.payload = new Uint8Array(PAYLOAD_BYTES).fill(s.round + 1);
      ctx.checkpoint();
    }
    ctx.emit(s.round);
  },
  result: { initial: () => 0, combine: (a, b) => a + b },
});
