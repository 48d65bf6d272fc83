/**
 * Object threads on the node's worker threads: each is a resident (Workers.attach) of one worker slot,
 * talking to the member over its own port and to every other object thread of the node over a port of
 * their own, so messages between objects of one node never pass through the main thread.
 * `hostObjectThread` is the resident's entry, run on the worker thread.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { AttachFailed } from '../../runtime/worker/messages.js';
import type { ResidentEntry, Workers } from '../../runtime/worker/worker-pool.js';
import { loadMalleableApp, type AppRef } from './malleable-app.js';
import { ObjectThread } from './object-thread.js';
import type { ThreadChannel, ThreadLauncher } from './object-threads.js';
import type { FromThread, PeerBatch, ThreadSetup, ToThread } from './thread-protocol.js';

// Sources run under tsx (.ts), the built package as JavaScript (.js); a worker imports the file itself.
const ENTRY: ResidentEntry = { module: new URL(`./worker-threads${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url).href, export: 'hostObjectThread' };

interface ResidentData {
  /** The application, as every node loads it. */
  app: AppRef;
  setup: ThreadSetup;
  slot: number;
  threads: number;
  /** A port to each other object thread of the node (none at this thread's own slot). */
  peers: Array<MessagePort | undefined>;
}

/** Object threads of application `app` on worker slots 0 … count − 1 of the node's pool. */
export function workerThreads(workers: Workers, app: AppRef): ThreadLauncher {
  const attach = workers.attach?.bind(workers);
  if (!attach) throw new Error('this node\'s workers cannot host object threads');
  return {
    launch(count, setup, events) {
      if (count > workers.size) throw new Error(`${setup.node} has ${workers.size} worker thread(s), the mapping gives it ${count} object threads`);
      const peers = Array.from({ length: count }, (): Array<MessagePort | undefined> => new Array<MessagePort | undefined>(count).fill(undefined));
      for (let a = 0; a < count; a++) {
        for (let b = a + 1; b < count; b++) {
          const { port1, port2 } = new MessageChannel();
          peers[a]![b] = port1;
          peers[b]![a] = port2;
        }
      }
      return peers.map((mine, slot): ThreadChannel => {
        const data: ResidentData = { app, setup, slot, threads: count, peers: mine };
        const port = attach(slot, ENTRY, data, mine.filter((p) => p !== undefined));
        let closed = false;
        port.on('message', (msg: FromThread | AttachFailed) => {
          if (msg.type === 'attach-failed') return events.lost(slot, `could not start: ${msg.error}`);
          events.message(slot, msg);
        });
        port.on('close', () => {
          if (!closed) events.lost(slot, 'exited');
        });
        // The job holds the process while it runs (an embedded cluster's hold); the port does not.
        port.unref();
        return {
          post: (msg, transfer) => port.postMessage(msg, transfer),
          close: () => {
            closed = true;
            port.close();
          },
        };
      });
    },
  };
}

/** The resident on a worker thread: one ObjectThread, until the member closes its port. */
export async function hostObjectThread(port: MessagePort, data: ResidentData): Promise<void> {
  const app = await loadMalleableApp(data.app);
  const peers = data.peers;
  const thread = new ObjectThread(app, data.setup.params, { node: data.setup.node, slot: data.slot, threads: data.threads }, {
    toMain: (msg, transfer) => port.postMessage(msg, transfer),
    toPeer: (k, msg) => peers[k]!.postMessage(msg),
    pause: () => yieldToLoop(),
  });
  port.on('message', (msg: ToThread) => thread.onMain(msg));
  for (const p of peers) p?.on('message', (msg: PeerBatch) => thread.onPeer(msg));
  port.on('close', () => {
    thread.close();
    for (const p of peers) p?.close();
  });
}
