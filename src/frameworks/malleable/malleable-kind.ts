/**
 * The malleable job kind (see docs/malleable.md): members host an application's objects, the leader
 * drives iterations and serves `rescale`, `vacate`, `checkpoint` and `progress` control requests.
 * A job's kind spec names its application and carries the application's parameters and the
 * runtime's options (MalleableSpec); submission checks both.
 */
import type { JobSpec } from '../../runtime/job/job-spec.js';
import { moduleOnNode } from '../../runtime/job/job-inputs.js';
import { defineJobKind, type MemberContext } from '../../runtime/kinds/job-kind.js';
import { malleableLeader } from './leader.js';
import { loadMalleableApp, type AnyMalleableApp, type AppRef } from './malleable-app.js';
import { malleableMember, objectThreadsOn } from './member.js';
import { validateMalleableMessage } from './protocol.js';
import { checkRuntimeOptions, type MalleableSpec } from './runtime-options.js';

/** The job's malleable spec, checked (a spec is data from the coordination service, never trusted to match its type). */
function malleableSpecOf(spec: JobSpec): MalleableSpec {
  const s = spec.kindSpec as Partial<MalleableSpec> | undefined;
  if (!s || typeof s !== 'object' || !('params' in s)) throw new Error(`job ${spec.id} has no malleable spec { app, params, runtime }`);
  if (typeof s.app?.module !== 'string' || typeof s.app.export !== 'string') throw new Error(`job ${spec.id}: its malleable spec has no application reference "app" {module, export}`);
  return s as MalleableSpec;
}

/** The job's application reference on this node, admitted by its code admission first (shipped: the node's copy). */
async function appRefOnNode(ctx: MemberContext, s: MalleableSpec): Promise<AppRef> {
  return { ...s.app, module: await moduleOnNode(ctx.spec, s.app.module, ctx.data, ctx.nodeId, ctx.code) };
}

/** The job's application on this node (see appRefOnNode). */
async function appOnNode(ctx: MemberContext, s: MalleableSpec): Promise<AnyMalleableApp> {
  return loadMalleableApp(await appRefOnNode(ctx, s));
}

export const malleableKind = defineJobKind({
  name: 'malleable',
  async prepare(spec) {
    const s = malleableSpecOf(spec);
    const app = await loadMalleableApp(s.app);
    const wrong = app.validate?.(s.params) ?? checkRuntimeOptions(s.runtime);
    if (wrong) throw new Error(`${app.name}: ${wrong}`);
  },
  async member(ctx) {
    const s = malleableSpecOf(ctx.spec);
    const ref = await appRefOnNode(ctx, s);
    const app = await loadMalleableApp(ref);
    return malleableMember(ctx, app, s.params, objectThreadsOn(ctx, app, ref));
  },
  async leader(ctx) {
    const s = malleableSpecOf(ctx.spec);
    return malleableLeader(ctx, await appOnNode(ctx, s), s);
  },
  validateMessage: validateMalleableMessage,
});
