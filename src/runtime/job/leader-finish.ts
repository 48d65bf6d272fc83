import { AsyncLocalStorage } from 'node:async_hooks';
import type { ControlRequest } from '../../coord/recipes/control-channel.js';
import type { CoordClient } from '../../coord/types.js';
import { publishEncodedOutcome } from './outcome.js';
import type { JobPaths } from './job-paths.js';
import { encodeOutcome, type ShareBytes } from './job-result-blob.js';
import type { JobOutcome } from './job-spec.js';

/** The control request whose handler is running (carried through its awaits). */
const serving = new AsyncLocalStorage<ControlRequest>();

/** Runs a kind's control handler so that a `finish` it calls is published after the request's ack. */
export function serveControl<T>(req: ControlRequest, handler: () => T): T {
  return serving.run(req, handler);
}

/**
 * The leader context's `finish`. A large value is stored in the data plane first (`share`; see
 * job-result-blob.ts). Called by a control handler (a `stop` request that ends the job), the outcome
 * is published right after that request's acknowledgement: its requester, who stops waiting once the
 * job has ended, always sees the acknowledgement first. Resolves false if the job already had an outcome.
 */
export async function finishJob(client: CoordClient, paths: JobPaths, outcome: JobOutcome, share?: ShareBytes): Promise<boolean> {
  const req = serving.getStore();
  // Deferred, the outcome's fate is not known when this resolves: learn now whether the job already has one.
  if (req && (await client.exists(paths.result))) return false;
  const data = await encodeOutcome(outcome, paths.id, share);
  if (!req) return publishEncodedOutcome(client, paths, data);
  req.afterAck(() => publishEncodedOutcome(client, paths, data));
  return true;
}
