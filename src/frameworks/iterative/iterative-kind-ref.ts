/**
 * How a job names the iterative kind. Importing this module registers the kind (see
 * runtime/kinds/kind-registry.ts).
 */
import type { KindRef } from '../../runtime/job/job-spec.js';
import { registerJobKind } from '../../runtime/kinds/kind-registry.js';

/** Built in, so that every node of the job runs its own copy of the kind. */
export const ITERATIVE_KIND: KindRef = { module: 'builtin:iterative', export: 'default' };

registerJobKind(ITERATIVE_KIND.module, () => import('./iterative-kind.js'));
