import type { Clock } from '../../../src/util/clock.js';

/** Simulated time: timers fire only when the test advances the clock. */
export class SimClock implements Clock {
  private time = 0;
  private timers: Array<{ at: number; seq: number; fn: () => void }> = [];
  private seq = 0;

  now(): number {
    return this.time;
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer = { at: this.time + ms, seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward, firing due timers in time order. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.timers.shift();
      this.time = next.at;
      next.fn();
    }
    this.time = target;
  }
}
