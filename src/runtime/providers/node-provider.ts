/**
 * Node providers: how the cluster obtains and gives back machines. The scheduler (through a
 * Provisioner) and a resource manager ask a provider for nodes when jobs wait, and give idle ones
 * back; the provider starts `tidepool node` somewhere (a child process, a host over SSH, a Slurm
 * allocation) and stops it again. This is the papers' provisioning: TASKWORK's cloud management
 * starting and stopping VMs, Charm++ launching processes on new hosts, AME's provisioner.
 *
 * Every node a provider starts goes through the states
 *
 *   requested → starting → joined → releasing → released
 *        └──────────┴─────────┴──────────┴──────→ failed
 *
 * requested: asked of the driver, not launched yet; starting: launched (a process, an SSH session,
 * a Slurm job), not yet in the cluster; joined: registered in the cluster; releasing: asked to drain
 * and stop (SIGTERM: its tasks move to the job's other nodes first); released: its process ended;
 * failed: it could not be launched, did not join in time, ended on its own, or would not stop.
 * The states and their timeouts are kept by NodePool (node-pool.ts), apart from any I/O.
 */

import type { ClusterSecret } from '../../util/cluster-secret.js';

export type ProvisionState = 'requested' | 'starting' | 'joined' | 'releasing' | 'released' | 'failed';

/**
 * The cluster secret as a node reads it from TIDEPOOL_SECRET: a secret file's text, one accepted secret
 * a line, the current one first (so that a node started during a rotation accepts both). A secret
 * that is not one line of text (raw bytes) cannot travel so and is refused.
 */
export function secretText(secret: ClusterSecret): string {
  return secret.accepted.map((s, i) => {
    const text = s.toString('utf8');
    if (!/^[\x21-\x7e]+$/.test(text)) throw new Error(`cluster secret ${i + 1} is not printable text (as \`tidepool secret new\` writes): nodes read it from TIDEPOOL_SECRET`);
    return text;
  }).join('\n');
}

/** What a provided node runs: `tidepool node --zk ZK --id ID --workers N ARGS…`. */
export interface NodeSpec {
  /** The cluster's ZooKeeper connection string, as the node sees it. */
  zk: string;
  /** Worker threads (default: the node's own default, one per usable core). */
  workers?: number;
  /** More `tidepool node` arguments (e.g. `--secret-file` on a shared file system, `--listen`). */
  args?: readonly string[];
}

export interface ProvisionedNode {
  /** The node's id in the cluster (given to it with --id). */
  id: string;
  state: ProvisionState;
  /** When it entered this state (ms). */
  since: number;
  /** Where it runs, once launched: "pid 1234", "node-a (pid 88)", "slurm job 17". */
  where?: string;
  /** Why it failed. */
  error?: string;
  /** Since when it has been idle (joined, assigned to no job), if it is. */
  idleSince?: number;
}

/** What a provider reports (also logged): every change of state, and each failure with its reason. */
export type ProviderEvent =
  | { type: 'state'; node: string; state: ProvisionState; where?: string; error?: string }
  | { type: 'retry'; after: number; failures: number };

/**
 * The interface the scheduler and resource managers call. `provision` returns the nodes it asked
 * for at once, in state `requested`; they join the cluster later (or fail). `release` drains and
 * stops nodes it provided (ids it does not know are ignored).
 */
export interface NodeProvider {
  readonly name: string;
  provision(count: number, spec?: Partial<NodeSpec>): ProvisionedNode[];
  release(nodeIds: readonly string[]): void;
  /** Every node it knows, with its state (the last released and failed ones included). */
  nodes(): ProvisionedNode[];
  on(listener: (event: ProviderEvent) => void): () => void;
}

/** A launched node: where it runs, and its end. */
export interface NodeLaunch {
  where: string;
  /** Resolves when the node's process (session, allocation) has ended, with how ("exit 0", "SIGKILL", "COMPLETED"). */
  ended: Promise<string>;
}

/**
 * The I/O half of a provider: starts and stops `tidepool node` processes somewhere. Drivers do not
 * keep states or timeouts (the NodePool does); they launch, signal, and report ends.
 */
export interface NodeDriver {
  readonly name: string;
  /** Launches the node; resolves once launched (not joined), rejects with the reason it could not be. */
  start(id: string, spec: NodeSpec): Promise<NodeLaunch>;
  /** Asks the node to drain and stop (SIGTERM), or with `force` kills it; the end arrives through its launch. */
  stop(id: string, force: boolean): Promise<void>;
  /** Lets go of what the driver holds (connections, pollers); nodes still running are not stopped. */
  close?(): Promise<void>;
}

/** The `tidepool node` arguments for a spec. */
export function nodeArgs(id: string, spec: NodeSpec): string[] {
  return ['node', '--zk', spec.zk, '--id', id, ...(spec.workers !== undefined ? ['--workers', String(spec.workers)] : []), '--json', ...(spec.args ?? [])];
}
