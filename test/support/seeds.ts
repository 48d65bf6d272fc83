/** Seeds for randomized tests: TIDEPOOL_SEED pins one (to reproduce a failure), else a fixed list. */
export function testSeeds(defaults: number[]): number[] {
  const pinned = process.env.TIDEPOOL_SEED;
  return pinned ? [Number(pinned)] : defaults;
}
