/**
 * Rendezvous (highest-random-weight) hashing: a key belongs to the member whose hash with the key is
 * highest. When a member leaves, only its keys move (each to its own runner-up); when one joins, only
 * the keys it now wins move to it — the least a membership change can move. AME's `hash % servers`
 * moves almost every key on any change, which is why it assumed a static set of servers.
 */

/** FNV-1a over the string, then a murmur3 finalizer (FNV alone mixes its last bytes poorly). */
export function hash32(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Members with their precomputed seeds: `ownerOf` then costs one short hash per member and key. */
export class Rendezvous {
  private readonly seeds: number[];

  constructor(readonly members: readonly string[]) {
    if (members.length === 0) throw new Error('rendezvous hashing needs at least one member');
    this.seeds = members.map((m) => hash32(m));
  }

  ownerOf(key: string | number): string {
    const k = typeof key === 'number' ? `#${key}` : key;
    let best = 0;
    let bestWeight = -1;
    for (let i = 0; i < this.seeds.length; i++) {
      const w = hash32(k, this.seeds[i]!);
      if (w > bestWeight || (w === bestWeight && this.members[i]! < this.members[best]!)) {
        best = i;
        bestWeight = w;
      }
    }
    return this.members[best]!;
  }
}
