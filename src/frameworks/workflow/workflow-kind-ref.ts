/**
 * How a job names the workflow kind. Importing this module registers the kind (see
 * runtime/kinds/kind-registry.ts).
 */
import type { KindRef } from '../../runtime/job/job-spec.js';
import { registerJobKind } from '../../runtime/kinds/kind-registry.js';

/** Built in, so that every node runs its own copy of the kind. */
export const WORKFLOW_KIND: KindRef = { module: 'builtin:workflow', export: 'default' };

registerJobKind(WORKFLOW_KIND.module, () => import('./workflow-kind.js'));
