import { setMaxListeners } from 'node:events';
import { ControlChannel, type RequestOptions } from '../../coord/recipes/control-channel.js';
import type { CoordClient } from '../../coord/types.js';
import { watchData } from '../../coord/watch.js';
import { jobPaths } from '../job/job-paths.js';

/**
 * Asks a running job for something through its control channel and resolves with the job's
 * acknowledgement (`status` is understood by every job; other types by the job's kind). Rejects
 * with the job's error, or after `timeoutMs` (the request then stays queued).
 */
export async function requestJob(client: CoordClient, jobId: string, type: string, body: unknown = null, opts: RequestOptions = {}, root?: string): Promise<unknown> {
  const paths = jobPaths(jobId, root);
  if (!(await client.exists(paths.spec))) throw new Error(`no job ${jobId} in the cluster`);
  if (await client.exists(paths.result)) throw new Error(`job ${jobId} has ended`);
  // A job that ends before serving the request never acknowledges it: stop waiting then.
  const abandon = new AbortController();
  const jobEnded = jobEndSignal(client, jobId, paths.result);
  const onEnded = () => abandon.abort(new Error(`job ${jobId} ended before it acknowledged the ${type} request`));
  const onCaller = () => abandon.abort(opts.signal?.reason);
  for (const [signal, listener] of [[jobEnded, onEnded], [opts.signal, onCaller]] as const) {
    if (signal?.aborted) listener();
    else signal?.addEventListener('abort', listener, { once: true });
  }
  try {
    return await new ControlChannel(client, paths.control).request(type, body, { ...opts, signal: abandon.signal });
  } finally {
    jobEnded.removeEventListener('abort', onEnded);
    opts.signal?.removeEventListener('abort', onCaller);
  }
}

/**
 * One watch per client and job on the job's result, shared by every request waiting on it: a
 * ZooKeeper watch stays registered until it fires, so a watch per request (a monitor asks every
 * 200 ms) would pile up for as long as the job runs.
 */
const endWatches = new WeakMap<CoordClient, Map<string, AbortSignal>>();

function jobEndSignal(client: CoordClient, jobId: string, resultPath: string): AbortSignal {
  let byPath = endWatches.get(client);
  if (!byPath) endWatches.set(client, (byPath = new Map()));
  const known = byPath.get(resultPath);
  if (known) return known;
  const ended = new AbortController();
  setMaxListeners(Infinity, ended.signal); // one listener per waiting request
  const forget = () => {
    if (byPath.get(resultPath) === ended.signal) byPath.delete(resultPath);
  };
  const handle = watchData(client, resultPath, (d) => {
    if (!d) return;
    forget();
    handle.close();
    ended.abort(new Error(`job ${jobId} has ended`));
  }, { onEnd: forget });
  byPath.set(resultPath, ended.signal);
  return ended.signal;
}
