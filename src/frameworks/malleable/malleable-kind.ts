/**
 * The malleable job kind (see docs/malleable.md): members host an application's objects, the leader
 * drives iterations and serves `rescale`, `vacate`, `checkpoint` and `progress` control requests.
 * A job names its application in `spec.ref` and carries `{ params, runtime }` as its input.
 */
import { defineJobKind, type KindRef } from '../../runtime/kinds/job-kind.js';
import { malleableLeader } from './leader.js';
import { loadMalleableApp } from './malleable-app.js';
import { malleableMember } from './member.js';
import { validateMalleableMessage } from './protocol.js';
import type { MalleableInput } from './runtime-options.js';

function inputOf(spec: { id: string; input?: unknown }): MalleableInput {
  const input = spec.input as MalleableInput | undefined;
  if (!input || typeof input !== 'object' || !('params' in input)) throw new Error(`job ${spec.id} has no malleable input { params, runtime }`);
  return input;
}

export const malleableKind = defineJobKind({
  name: 'malleable',
  async member(ctx) {
    const app = await loadMalleableApp(ctx.spec.ref);
    return malleableMember(ctx, app, inputOf(ctx.spec).params);
  },
  async leader(ctx) {
    const app = await loadMalleableApp(ctx.spec.ref);
    return malleableLeader(ctx, app, inputOf(ctx.spec));
  },
  validateMessage: validateMalleableMessage,
});

/** How a job names this kind: built in, so that every node runs its own copy (see load-kind.ts). */
export const MALLEABLE_KIND: KindRef = { module: 'builtin:malleable', export: 'malleableKind' };
