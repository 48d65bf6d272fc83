/** A change of a job's node count at a time after its start: `2s:+2` adds two nodes at 2 s. */
export interface ScaleStep {
  atMs: number;
  delta: number;
}

/**
 * Parses a schedule like `2s:+2,5s:-2` or `500ms:+1` (seed 000 Fig. 6's phases). Throws an Error
 * naming the offending item.
 */
export function parseScaleSchedule(text: string): ScaleStep[] {
  const steps = text.split(',').map((item) => item.trim()).filter((item) => item !== '').map((item) => {
    const m = /^(\d+(?:\.\d+)?)(ms|s):([+-]\d+)$/.exec(item);
    if (!m) throw new Error(`"${item}" is not TIME:CHANGE (e.g. 2s:+2 or 500ms:-1)`);
    const delta = Number(m[3]);
    if (delta === 0) throw new Error(`"${item}" changes nothing`);
    return { atMs: Number(m[1]) * (m[2] === 's' ? 1000 : 1), delta };
  });
  if (steps.length === 0) throw new Error('the schedule is empty');
  return steps.sort((a, b) => a.atMs - b.atMs);
}
