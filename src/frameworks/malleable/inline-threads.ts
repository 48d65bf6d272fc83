/**
 * Object threads in the member's own thread: the same ObjectThread code, its messages carried by a
 * scheduler instead of ports. Used where a node has no worker threads to host them, and by the
 * simulations, whose scheduler delivers messages in a seeded random order (first in, first out per
 * channel, as a port does).
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { AnyMalleableApp } from './malleable-app.js';
import { ObjectThread } from './object-thread.js';
import type { ThreadLauncher } from './object-threads.js';

/** Runs `deliver` later; `channel` names the sender and receiver ("main>0", "1>main", "0>1"), each channel in order. */
export type Schedule = (channel: string, deliver: () => void) => void;

export interface InlineOptions {
  schedule?: Schedule;
  /** Copy every message as a port would (structured clone), so no object shares memory with another thread's. */
  clone?: boolean;
}

export function inlineThreads(app: AnyMalleableApp, opts: InlineOptions = {}): ThreadLauncher {
  const schedule: Schedule = opts.schedule ?? ((_channel, deliver) => void setImmediate(deliver));
  const copy = opts.clone ? <T>(m: T): T => structuredClone(m) : <T>(m: T): T => m;
  return {
    launch(count, setup, events) {
      let closed = false;
      const send = (channel: string, deliver: () => void) => schedule(`${setup.node}:${channel}`, () => {
        if (!closed) deliver();
      });
      const threads: ObjectThread[] = [];
      for (let slot = 0; slot < count; slot++) {
        threads.push(new ObjectThread(app, setup.params, { node: setup.node, slot, threads: count }, {
          toMain: (msg) => {
            const m = copy(msg);
            send(`${slot}>main`, () => events.message(slot, m));
          },
          toPeer: (k, msg) => {
            const m = copy(msg);
            send(`${slot}>${k}`, () => threads[k]!.onPeer(m));
          },
          pause: () => yieldToLoop(),
        }));
      }
      return threads.map((thread, slot) => ({
        post: (msg) => {
          const m = copy(msg);
          send(`main>${slot}`, () => thread.onMain(m));
        },
        close: () => {
          closed = true;
          thread.close();
        },
      }));
    },
  };
}
