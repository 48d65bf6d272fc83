/**
 * A resident for the worker pool's tests (Workers.attach): answers each message on its port with the
 * message, the thread it runs on and what it was started with; `exit` ends its thread.
 */
import { threadId, type MessagePort } from 'node:worker_threads';

export function echo(port: MessagePort, data: { tag: string; peer?: MessagePort }): void {
  port.on('message', (msg: unknown) => {
    if (msg === 'exit') process.exit(3);
    if (msg === 'peer') return data.peer?.postMessage(`from ${data.tag}`);
    port.postMessage({ msg, threadId, tag: data.tag });
  });
  data.peer?.on('message', (m: unknown) => port.postMessage({ msg: m, threadId, tag: data.tag }));
}

export const notAFunction = 42;
