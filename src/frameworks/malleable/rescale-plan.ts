/**
 * What a control request asks for, checked, and the node set it leads to — pure functions the
 * leader applies at the next sync point (tested without a cluster).
 */

export type RescaleRequest =
  | { type: 'rescale'; count: number }
  | { type: 'rescale'; keep: string[] }
  | { type: 'vacate'; node: string }
  | { type: 'checkpoint' }
  | { type: 'resume' };

/** Checks a request's body; throws an error naming the field (the control channel acknowledges it as an error). */
export function parseRequest(type: string, body: unknown): RescaleRequest {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  switch (type) {
    case 'rescale': {
      const nodes = b.nodes;
      if (Number.isInteger(nodes) && (nodes as number) >= 1) return { type, count: nodes as number };
      if (Array.isArray(nodes) && nodes.length > 0 && nodes.every((n) => typeof n === 'string' && n !== '')) return { type, keep: [...new Set(nodes as string[])] };
      throw new Error(`rescale: "nodes" must be a whole number ≥ 1 or a non-empty list of node ids, got ${JSON.stringify(nodes)}`);
    }
    case 'vacate':
      if (typeof b.node === 'string' && b.node !== '') return { type, node: b.node };
      throw new Error(`vacate: "node" must be a node id, got ${JSON.stringify(b.node)}`);
    case 'checkpoint':
    case 'resume':
      return { type };
    default:
      throw new Error(`the malleable job kind takes control requests rescale, vacate, checkpoint, resume and progress, not "${type}"`);
  }
}

/** Nodes a request wants that the job does not have yet (to be assigned before the sync point). */
export function wantedNodes(req: RescaleRequest, current: readonly string[]): { names: string[]; count: number } {
  if (req.type === 'rescale' && 'keep' in req) return { names: req.keep.filter((n) => !current.includes(n)), count: req.keep.length };
  if (req.type === 'rescale') return { names: [], count: req.count };
  return { names: [], count: current.length };
}

/**
 * The node set after the request, given the nodes holding objects now, the live members (joiners
 * included) and the leader's own node. A count shrink lets the last nodes go and keeps the leader;
 * a count expand takes live members that hold nothing yet; named nodes that are not live are left out.
 */
export function targetNodes(req: RescaleRequest, current: readonly string[], live: ReadonlySet<string>, self: string): string[] {
  let target: string[];
  if (req.type === 'checkpoint' || req.type === 'resume') return [...current];
  if (req.type === 'vacate') target = current.filter((n) => n !== req.node);
  else if ('keep' in req) target = req.keep.filter((n) => live.has(n));
  else if (req.count <= current.length) {
    const others = current.filter((n) => n !== self);
    target = current.includes(self) ? [self, ...others.slice(0, req.count - 1)] : others.slice(0, req.count);
  } else {
    const idle = [...live].filter((n) => !current.includes(n)).sort();
    target = [...current, ...idle.slice(0, req.count - current.length)];
  }
  if (target.length === 0) throw new Error(`${req.type} would leave the job with no node (it holds ${current.join(', ')})`);
  return target.sort();
}
