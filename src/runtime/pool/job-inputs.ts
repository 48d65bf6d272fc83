/**
 * What a task-pool member obtains from its submitter through the data plane: the job's shipped code
 * (written to the local code cache, workers load it from there) and its large input (obtained once
 * per node and shared by its workers).
 */
import type { DataPlane } from '../../data/data-plane.js';
import { materializeBundle } from '../../data/code-cache.js';
import type { JobSpec } from '../job/job-spec.js';
import type { TaskRef } from '../worker/task.js';
import { SharedInput } from '../worker/shared-input.js';

/** The task module to load on this node: shipped code is obtained and written to the local code cache. */
export async function taskRefOnNode(spec: JobSpec, data: DataPlane | undefined, nodeId: string): Promise<TaskRef> {
  if (!spec.code) return spec.ref;
  if (!data) throw new Error(`job ${spec.id} ships its code and node ${nodeId} has no data plane`);
  const bytes = await data.obtain(spec.code, spec.id, `code of ${spec.ref.module}`);
  return { module: await materializeBundle(spec.code.hash, bytes), export: spec.ref.export };
}

/** The job's large input, obtained once per node and shared by its workers (see SharedInput). */
export function obtainInput(spec: JobSpec, data: DataPlane): Promise<SharedInput> {
  const { ref, form } = spec.inputBlob!;
  return data.obtainShared(ref, spec.id, 'job input').then((bytes) => new SharedInput(bytes, form));
}
