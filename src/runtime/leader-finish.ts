import { AsyncLocalStorage } from 'node:async_hooks';
import type { ControlRequest } from '../coord/recipes/control-channel.js';
import type { CoordClient } from '../coord/types.js';
import { publishOutcome } from './job-outcome.js';
import type { JobPaths } from './job-paths.js';
import type { JobOutcome } from './job-spec.js';

/** The control request whose handler is running (carried through its awaits). */
const serving = new AsyncLocalStorage<ControlRequest>();

/** Runs a kind's control handler so that a `finish` it calls is published after the request's ack. */
export function serveControl<T>(req: ControlRequest, handler: () => T): T {
  return serving.run(req, handler);
}

/**
 * The leader context's `finish`. Called by a control handler (a `stop` request that ends the job),
 * the outcome is published right after that request's acknowledgement: its requester, who stops
 * waiting once the job has ended, always sees the acknowledgement first. Resolves false if the job
 * already had an outcome.
 */
export async function finishJob(client: CoordClient, paths: JobPaths, outcome: JobOutcome): Promise<boolean> {
  const req = serving.getStore();
  if (!req) return publishOutcome(client, paths, outcome);
  if (await client.exists(paths.result)) return false;
  req.afterAck(() => publishOutcome(client, paths, outcome));
  return true;
}
