/**
 * Load balancing strategies over measured object loads (seed 003 §III-D), as pure functions: object
 * `i` with load `loads[i]` is mapped to a node slot; a slot marked unavailable (a node about to leave)
 * gets nothing. Ties break by index, so the same loads always give the same mapping.
 */

export type Strategy = 'greedy' | 'refine';

/** Contiguous blocks of objects per slot (the initial mapping: neighbours stay together). */
export function blockMapping(objects: number, slots: number): number[] {
  if (slots < 1) throw new RangeError('blockMapping: at least one slot');
  return Array.from({ length: objects }, (_, i) => Math.floor((i * slots) / objects));
}

function check(loads: readonly number[], available: readonly boolean[]): number[] {
  const open = available.flatMap((ok, slot) => (ok ? [slot] : []));
  if (open.length === 0) throw new RangeError('load balancing needs at least one available slot');
  if (loads.some((l) => !(l >= 0))) throw new RangeError('loads must be numbers ≥ 0');
  return open;
}

/** The open slot with the least load (lowest slot on ties). */
function lightest(open: readonly number[], slotLoad: readonly number[]): number {
  let best = open[0]!;
  for (const s of open) if (slotLoad[s]! < slotLoad[best]!) best = s;
  return best;
}

/** Objects by load, heaviest first (lowest index on ties). */
function heaviestFirst(loads: readonly number[], which: readonly number[]): number[] {
  return [...which].sort((a, b) => loads[b]! - loads[a]! || a - b);
}

/** GreedyLB: every object, heaviest first, goes to the currently least loaded available slot. */
export function greedyLB(loads: readonly number[], available: readonly boolean[]): number[] {
  const open = check(loads, available);
  const slotLoad = available.map(() => 0);
  const owners = new Array<number>(loads.length);
  for (const obj of heaviestFirst(loads, loads.map((_, i) => i))) {
    const slot = lightest(open, slotLoad);
    owners[obj] = slot;
    slotLoad[slot]! += loads[obj]!;
  }
  return owners;
}

/**
 * RefineLB: objects on unavailable slots are evacuated (heaviest first, to the least loaded slot);
 * then, while the most loaded slot is above `tolerance` × average, its heaviest object that fits
 * under that bound on the least loaded slot moves there. Few objects move, unlike greedy.
 */
export function refineLB(loads: readonly number[], owners: readonly number[], available: readonly boolean[], tolerance = 1.05): number[] {
  const open = check(loads, available);
  const next = [...owners];
  const slotLoad = available.map(() => 0);
  const homeless: number[] = [];
  next.forEach((slot, obj) => {
    if (available[slot] === true) slotLoad[slot]! += loads[obj]!;
    else homeless.push(obj);
  });
  for (const obj of heaviestFirst(loads, homeless)) {
    const slot = lightest(open, slotLoad);
    next[obj] = slot;
    slotLoad[slot]! += loads[obj]!;
  }
  const total = loads.reduce((a, b) => a + b, 0);
  const bound = (total / open.length) * tolerance;
  for (let moves = 0; moves < loads.length * 2; moves++) {
    let heavy = open[0]!;
    for (const s of open) if (slotLoad[s]! > slotLoad[heavy]!) heavy = s;
    if (slotLoad[heavy]! <= bound) break;
    const light = lightest(open, slotLoad);
    const candidates = heaviestFirst(loads, next.flatMap((slot, obj) => (slot === heavy ? [obj] : [])));
    const fit = candidates.find((obj) => loads[obj]! > 0 && slotLoad[light]! + loads[obj]! <= bound);
    if (fit === undefined) break;
    next[fit] = light;
    slotLoad[heavy]! -= loads[fit]!;
    slotLoad[light]! += loads[fit]!;
  }
  return next;
}

/** Runs a strategy; `owners` is the current mapping (refine keeps what it can). */
export function balance(strategy: Strategy, loads: readonly number[], owners: readonly number[], available: readonly boolean[]): number[] {
  return strategy === 'greedy' ? greedyLB(loads, available) : refineLB(loads, owners, available);
}

/** Per-slot load of a mapping (for reports and tests). */
export function slotLoads(loads: readonly number[], owners: readonly number[], slots: number): number[] {
  const out = new Array<number>(slots).fill(0);
  owners.forEach((slot, obj) => (out[slot]! += loads[obj]!));
  return out;
}
