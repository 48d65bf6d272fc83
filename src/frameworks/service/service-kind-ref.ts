/**
 * How a job names the service's kind. Importing this module registers the kind (see
 * runtime/kinds/kind-registry.ts).
 */
import type { KindRef } from '../../runtime/job/job-spec.js';
import { registerJobKind } from '../../runtime/kinds/kind-registry.js';

/** Built in, so that every node runs its own copy of the kind (code admission admits it by this name). */
export const SERVICE_KIND: KindRef = { module: 'builtin:service-kind', export: 'default' };

registerJobKind(SERVICE_KIND.module, () => import('./service-kind.js'));
