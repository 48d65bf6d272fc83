/** Time as protocols see it: real by default, simulated in deterministic tests. */
export interface Clock {
  now(): number;
  /** Calls `fn` after `ms`; the returned function cancels it. Timers never keep the process alive. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};
