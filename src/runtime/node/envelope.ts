/**
 * What travels between nodes: a layer message for one job's kind, or such a message bounced by a
 * node that is not (or no longer) in that job, so that the sender need not wait for a timeout; or a
 * job's leader asking any node, member or not, to keep a copy of the job's final value (`keep`,
 * job/result-copies.ts).
 */
export type JobEnvelope =
  | { type: 'job'; job: string; body: { type: string; [key: string]: unknown } }
  | { type: 'job-bounce'; job: string; body: { type: string; [key: string]: unknown } }
  | { type: 'keep'; job: string; body: { type: string; [key: string]: unknown } };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks an incoming frame's envelope; returns what is wrong, or undefined. */
export function validateEnvelope(m: unknown): string | undefined {
  if (!isObject(m)) return 'not an object';
  if (m.type !== 'job' && m.type !== 'job-bounce' && m.type !== 'keep') return `unknown message type ${JSON.stringify(m.type)}`;
  if (typeof m.job !== 'string' || m.job.length === 0 || m.job.length > 200) return 'field "job" must be a job id';
  if (!isObject(m.body) || typeof m.body.type !== 'string') return 'field "body" must be an object with a string "type"';
  return undefined;
}
