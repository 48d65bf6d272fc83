/** Time as protocols see it: real by default, simulated in deterministic tests. */
export interface Clock {
  now(): number;
  /** Calls `fn` after `ms`; the returned function cancels it. Timers never keep the process alive. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms)); // a deadline just passed is due now (Node 24 warns on a negative delay)
    t.unref();
    return () => clearTimeout(t);
  },
};
