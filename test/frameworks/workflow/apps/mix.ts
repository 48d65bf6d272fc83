/**
 * A function task for the rerun tests: `args` are [log, salt, ...outputs]. Each output's content
 * names the output, the salt and a digest of every input (by name), so that any change upstream
 * shows in every file below it. Each run appends the task's id to `log`: what ran, observed apart
 * from the runtime's own journal.
 */
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';

export function mixContent(output: string, salt: string, inputs: Record<string, Uint8Array>): string {
  const digests = Object.keys(inputs).sort().map((name) => `${name}:${createHash('sha256').update(inputs[name]!).digest('hex').slice(0, 12)}`);
  return `${output} ${salt} [${digests.join(' ')}]\n`;
}

export function mix(inputs: Record<string, Uint8Array>, task: { id: string; args: string[] }): Record<string, string> {
  const [log, salt, ...outputs] = task.args;
  appendFileSync(log!, `${task.id}\n`);
  return Object.fromEntries(outputs.map((o) => [o, mixContent(o, salt!, inputs)]));
}
