/**
 * AME units (§3 and §5 of "AME: An Anyscale Many-Task Computing Engine", Zhang, Katz, Ripeanu, Wilde
 * and Foster, 2011; docs/papers.md): the members are cut into units of `nodes` members, and in
 * each unit the first `shards` members run a shard of the file location service and the first
 * `dispatchers` members dispatch (every member also runs tasks). The location service then grows with
 * the cluster at a fixed ratio, so each shard keeps about the same number of file records at any scale.
 * AME's runs on the BG/P used units of 64 nodes with one dispatcher and one location server each: the
 * defaults here. Units are taken in the view's (sorted) member order, so every member computes the same
 * roles from the same view; a view that changes the members may move roles (rendezvous hashing among
 * the role holders then moves the fewest partitions and file records it can).
 */

export interface AmeUnits {
  /** Members per unit. */
  nodes: number;
  /** Location-service shards per unit (at most `nodes`). */
  shards: number;
  /** Dispatchers per unit (at most `nodes`). */
  dispatchers: number;
}

/** As AME ran on Intrepid: 64 nodes per unit, one location server and one dispatcher in each. */
export const AME_UNITS: Readonly<AmeUnits> = Object.freeze({ nodes: 64, shards: 1, dispatchers: 1 });

/** What is wrong with a unit setting, or undefined. */
export function unitsProblem(units: AmeUnits): string | undefined {
  for (const key of ['nodes', 'shards', 'dispatchers'] as const) {
    const v = units[key];
    if (!Number.isInteger(v) || v < 1) return `AME unit ${key} must be a whole number of at least 1, got ${String(v)}`;
  }
  if (units.shards > units.nodes) return `AME unit: ${units.shards} shards per unit of ${units.nodes} nodes (at most one per node)`;
  if (units.dispatchers > units.nodes) return `AME unit: ${units.dispatchers} dispatchers per unit of ${units.nodes} nodes (at most one per node)`;
  return undefined;
}

/** `NODES[:SHARDS[:DISPATCHERS]]` (the CLI's `--ame-unit`), shards and dispatchers 1 when left out. */
export function parseUnits(text: string): AmeUnits {
  const parts = text.split(':');
  const numbers = parts.map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
  if (parts.length > 3 || numbers.some((n) => Number.isNaN(n))) throw new Error(`expected NODES[:SHARDS[:DISPATCHERS]], whole numbers (e.g. 64:1:1), got "${text}"`);
  const units = { nodes: numbers[0]!, shards: numbers[1] ?? 1, dispatchers: numbers[2] ?? 1 };
  const wrong = unitsProblem(units);
  if (wrong) throw new Error(wrong);
  return units;
}

export interface UnitRoles {
  /** Members running a location-service shard (files are spread over them). */
  shards: string[];
  /** Members dispatching (partitions are spread over them, decentralized). */
  dispatchers: string[];
}

/** The roles under a view's members (sorted, as views list them). */
export function unitRoles(members: readonly string[], units: AmeUnits): UnitRoles {
  const shards: string[] = [];
  const dispatchers: string[] = [];
  for (let start = 0; start < members.length; start += units.nodes) {
    const unit = members.slice(start, start + units.nodes);
    shards.push(...unit.slice(0, units.shards));
    dispatchers.push(...unit.slice(0, units.dispatchers));
  }
  return { shards, dispatchers };
}
