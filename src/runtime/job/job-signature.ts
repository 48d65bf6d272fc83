/**
 * A job spec's signature: an HMAC-SHA256, under the cluster secret's code-signing key, of the
 * canonical encoding of the spec as a node decodes it, without its `signature` field. It covers every
 * field: the kind and task modules, the job id, the input, and the content hash of shipped code
 * (`code`: the bytes are checked against that hash when obtained). A node runs a job only when it
 * verifies (code-admission.ts), so whoever can write to the coordination service but lacks the secret
 * (ZooKeeper's digest password crosses ZooKeeper's wire, which is plaintext unless run with TLS) still
 * cannot make a node run anything, nor change a job's code or input after submission.
 *
 * The canonical encoding (util/canonical-encoding.ts) ignores the order of fields, so the spec's
 * shape may change without breaking signatures between nodes of different versions that agree on
 * its fields. Signing encodes and decodes first: what is signed is exactly what a node will read.
 */
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { canonicalBytes } from '../../util/canonical-encoding.js';
import { decode, encode } from '../../util/codec.js';
import type { JobSpec } from './job-spec.js';

/** The bytes a signature covers: the spec as decoded from its encoding, without `signature`. */
function signedBytes(spec: JobSpec): Buffer {
  const { signature: _omitted, ...rest } = decode<JobSpec>(encode(spec));
  return canonicalBytes(rest);
}

/** The spec with its signature under the current secret. */
export function signSpec(spec: JobSpec, secret: ClusterSecret): JobSpec {
  return { ...spec, signature: secret.sign('code-signature', signedBytes(spec)).toString('base64url') };
}

/** Whether the spec carries a signature by any accepted secret (several while rotating). */
export function specSignatureValid(spec: JobSpec, secret: ClusterSecret): boolean {
  if (typeof spec.signature !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(spec.signature)) return false;
  return secret.verify('code-signature', signedBytes(spec), Buffer.from(spec.signature, 'base64url'));
}
