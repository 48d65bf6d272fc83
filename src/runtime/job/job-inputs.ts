/**
 * What a member obtains from its job's submitter through the data plane: shipped code (written to
 * the node's code cache; workers load it from there) and a large input (obtained once per node and
 * shared by its workers).
 */
import type { DataPlane } from '../../data/data-plane.js';
import { materializeBundle } from '../../data/code-cache.js';
import { SharedInput } from '../worker/shared-input.js';
import type { CodeAdmission } from './code-admission.js';
import type { JobSpec } from './job-spec.js';

/**
 * The module to import on this node for `module` of the job's spec: the local copy of shipped code, or
 * the module itself. Either is first admitted by the node's code admission (`code`, MemberContext.code):
 * nothing the spec names is imported that it refuses.
 */
export async function moduleOnNode(spec: JobSpec, module: string, data: DataPlane | undefined, nodeId: string, code: CodeAdmission): Promise<string> {
  code.admitJobModule(spec, module, 'task module');
  if (spec.code?.module !== module) return module;
  if (!data) throw new Error(`job ${spec.id} ships its code and node ${nodeId} has no data plane`);
  const bytes = await data.obtain(spec.code.bundle, spec.id, `code of ${module}`);
  return materializeBundle(spec.code.bundle.hash, bytes);
}

/** The job's large input, obtained once per node and shared by its workers (see SharedInput). */
export function obtainInput(spec: JobSpec, data: DataPlane): Promise<SharedInput> {
  const { ref, form } = spec.inputBlob!;
  return data.obtainShared(ref, spec.id, 'job input').then((bytes) => new SharedInput(bytes, form));
}
