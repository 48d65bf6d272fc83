/**
 * A node's first check of the cluster it joins: its coordination session holds the cluster secret,
 * and the cluster's root znode is the cluster's — created with the secret's access list, or made so.
 * The root is created (with the session's list) when missing. An existing root that grants anything
 * to a client without the secret (a tree from a tidepool before access lists, or one somebody else
 * made first) is refused, naming the command that secures it: every znode under it would otherwise
 * be open to whoever made it.
 */
import { clusterAcl, describeAcl, grants, Perm } from '../../coord/access.js';
import { isCoordError } from '../../coord/errors.js';
import { mkdirp } from '../../coord/tree-ops.js';
import type { CoordClient } from '../../coord/types.js';
import type { ClusterSecret } from '../../util/cluster-secret.js';
import { decode, encode } from '../../util/codec.js';
import { clusterPaths } from './job-paths.js';
import { signSpec, specSignatureValid } from './job-signature.js';
import type { JobSpec } from './job-spec.js';

const NOBODY = new Set<string>();

/** Throws unless `client` holds `secret` and `root` (created if missing) is protected by it. */
export async function secureClusterRoot(client: CoordClient, root: string, secret: ClusterSecret): Promise<void> {
  if (!secret.isSecret) throw new Error('a node needs the cluster secret itself, not a monitor credential');
  const expected = clusterAcl(secret);
  if (JSON.stringify(client.acl) !== JSON.stringify(expected)) {
    throw new Error('the node\'s coordination session was opened without this cluster secret: connect(connection, { secret }) with the secret the node was given');
  }
  await mkdirp(client, root);
  let acl;
  try {
    acl = (await client.getACL(root)).acl;
  } catch (err) {
    if (isCoordError(err, 'NO_AUTH')) throw new Error(`the cluster root ${root} is not this cluster's: its access list lets this secret neither read it nor change it (another cluster's secret, or rotated out)`);
    throw err;
  }
  const ids = new Set(acl.filter((e) => expected.some((x) => x.id === e.id)).map((e) => e.id));
  const ours = [Perm.read, Perm.write, Perm.create, Perm.delete, Perm.admin].every((p) => grants(acl, ids, p));
  const open = grants(acl, NOBODY, Perm.all);
  if (open || !ours) {
    throw new Error(`the cluster root ${root} is not protected by the cluster secret (its access list: ${describeAcl(acl)}): ` +
      `${open ? 'a client without the secret could read or change the cluster' : 'this secret may not do everything there'}; ` +
      'give the tree the cluster\'s access list with `tidepool secret protect --zk … --secret-file …` (docs/security.md)');
  }
}

/**
 * Gives the cluster's root and every znode under it the access list of `secret` (rotation, and the
 * upgrade of a tree made before access lists). Needs ADMIN on each znode: a session with the old and
 * the new secret while rotating, any session on an open tree. Znodes that vanish meanwhile are skipped;
 * those this session may not change are listed. Every job spec whose signature verifies with one of
 * the accepted secrets is signed again with the current one, so that a job submitted before a rotation
 * still gets nodes after the old secret is retired; a spec that verifies with none is left as it is
 * (no node runs it) and listed. Resolves with the counts.
 */
export async function protectClusterTree(client: CoordClient, root: string, secret: ClusterSecret): Promise<{ protected: number; refused: string[]; resigned: number; unsigned: string[] }> {
  const acl = clusterAcl(secret);
  let done = 0;
  const refused: string[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const batch = pending.splice(0, 64);
    await Promise.all(batch.map(async (path) => {
      try {
        await client.setACL(path, acl);
        done++;
      } catch (err) {
        if (isCoordError(err, 'NO_NODE')) return;
        if (!isCoordError(err, 'NO_AUTH')) throw err;
        refused.push(path);
      }
      try {
        for (const name of await client.getChildren(path)) pending.push(path === '/' ? `/${name}` : `${path}/${name}`);
      } catch (err) {
        if (isCoordError(err, 'NO_NODE')) return;
        if (!isCoordError(err, 'NO_AUTH')) throw err;
        if (!refused.includes(path)) refused.push(path);
      }
    }));
  }
  const { resigned, unsigned } = await resignSpecs(client, root, secret);
  return { protected: done, refused: refused.sort(), resigned, unsigned };
}

/** Signs again, with the current secret, every job spec that verifies with an accepted one (conditional on its version). */
async function resignSpecs(client: CoordClient, root: string, secret: ClusterSecret): Promise<{ resigned: number; unsigned: string[] }> {
  let resigned = 0;
  const unsigned: string[] = [];
  const jobs = await client.getChildren(clusterPaths(root).jobs).catch((err: unknown) => (isCoordError(err, 'NO_NODE') ? [] : Promise.reject(err)));
  for (const id of jobs) {
    const path = `${clusterPaths(root).jobs}/${id}/spec`;
    let read;
    try {
      read = await client.getData(path);
    } catch (err) {
      if (isCoordError(err, 'NO_NODE')) continue;
      throw err;
    }
    const spec = decode<JobSpec>(read.data);
    if (!specSignatureValid(spec, secret)) {
      unsigned.push(id);
      continue;
    }
    const again = signSpec(spec, secret);
    if (again.signature === spec.signature) continue;
    try {
      await client.setData(path, encode(again), read.stat.version);
      resigned++;
    } catch (err) {
      if (!isCoordError(err, 'NO_NODE', 'BAD_VERSION')) throw err;
    }
  }
  return { resigned, unsigned: unsigned.sort() };
}
