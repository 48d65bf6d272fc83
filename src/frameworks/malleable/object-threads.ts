/**
 * A member's object threads as its main thread sees them: commands with replies, traffic, and the
 * loss of a thread (its worker exited). How threads are started is a launcher's business: on the
 * node's worker threads (worker-threads.ts) or in-process (inline-threads.ts).
 */
import type { Transferable } from 'node:worker_threads';
import type { FromThread, ThreadCommand, ThreadSetup, ToThread } from './thread-protocol.js';

/** One thread's channel from the main thread. */
export interface ThreadChannel {
  post(msg: ToThread, transfer?: readonly Transferable[]): void;
  /** Lets the thread go (it drops everything it holds). */
  close(): void;
}

export interface ThreadEvents {
  message(slot: number, msg: FromThread): void;
  /** The thread is gone (its worker exited, or it could not start). */
  lost(slot: number, reason: string): void;
}

/** Starts `count` object threads for a member, each connected to every other one. */
export interface ThreadLauncher {
  launch(count: number, setup: ThreadSetup, events: ThreadEvents): ThreadChannel[];
}

interface Pending {
  slot: number;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class ObjectThreads {
  private readonly channels: ThreadChannel[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Why a thread is gone: the set is broken (its objects are lost) and must be launched again. */
  lost: string | undefined;

  constructor(launcher: ThreadLauncher, readonly count: number, private readonly setup: ThreadSetup, onTraffic: (slot: number, msg: Exclude<FromThread, { type: 'reply' }>) => void) {
    this.channels = launcher.launch(count, setup, {
      message: (slot, msg) => {
        if (msg.type !== 'reply') return onTraffic(slot, msg);
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        if (msg.ok) p.resolve(msg.value);
        else p.reject(new Error(msg.error));
      },
      lost: (slot, reason) => {
        this.lost ??= `object thread ${slot} of ${setup.node} ${reason}`;
        for (const [id, p] of this.pending) {
          this.pending.delete(id);
          p.reject(new Error(this.lost));
        }
      },
    });
  }

  call<T>(slot: number, cmd: ThreadCommand, epoch: number, transfer?: readonly Transferable[]): Promise<T> {
    if (this.lost) return Promise.reject(new Error(this.lost));
    const channel = this.channels[slot];
    if (!channel) return Promise.reject(new Error(`${this.setup.node} has no object thread ${slot} (it runs ${this.count})`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { slot, resolve: resolve as (v: unknown) => void, reject });
      channel.post({ ...cmd, id, epoch }, transfer);
    });
  }

  /** The same command (or one per thread) to every thread; the replies in thread order. */
  all<T>(cmd: ThreadCommand | ((slot: number) => ThreadCommand), epoch: number): Promise<T[]> {
    return Promise.all(this.channels.map((_, k) => this.call<T>(k, typeof cmd === 'function' ? cmd(k) : cmd, epoch)));
  }

  post(slot: number, msg: ToThread): void {
    if (!this.lost) this.channels[slot]?.post(msg);
  }

  close(): void {
    this.lost ??= 'was let go';
    for (const c of this.channels) c.close();
    for (const p of this.pending.values()) p.reject(new Error(this.lost));
    this.pending.clear();
  }
}
