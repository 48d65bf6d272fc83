/**
 * How a job names the malleable kind, and a malleable job as a submitter writes it. Importing this
 * module registers the kind (see runtime/kinds/kind-registry.ts).
 */
import type { KindRef } from '../../runtime/job/job-spec.js';
import { registerJobKind } from '../../runtime/kinds/kind-registry.js';
import type { AppRef } from './malleable-app.js';
import type { MalleableRuntimeOptions, MalleableSpec } from './runtime-options.js';

/** Built in, so that every node runs its own copy. */
export const MALLEABLE_KIND: KindRef = { module: 'builtin:malleable', export: 'malleableKind' };

registerJobKind(MALLEABLE_KIND.module, () => import('./malleable-kind.js'));

/** The kind and kind spec of a job that runs application `app` with `params`, for `submitJob` (and a managed submission). */
export function malleableJob(app: AppRef, params: unknown, runtime?: MalleableRuntimeOptions): { kind: KindRef; kindSpec: MalleableSpec; label: string } {
  return { kind: MALLEABLE_KIND, kindSpec: { app, params, ...(runtime ? { runtime } : {}) }, label: app.module };
}
