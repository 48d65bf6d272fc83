/**
 * Durations as every command takes them: a number with a unit, `500ms`, `10s`, `2m`, `1h`, or several
 * in a row (`1m30s`); `0` alone needs no unit. Before this grammar, some flags took bare numbers in a
 * unit of their own (`--timeout 10000` in ms, `--tgap 40` in seconds): those still parse, for one
 * release, through `parseLegacyDuration` with the flag's old unit.
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
export type DurationUnit = keyof typeof UNIT_MS;

const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;

/** Milliseconds of `text`, or undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '0') return 0;
  if (!WHOLE.test(s)) return undefined;
  let ms = 0;
  for (const [, n, unit] of s.matchAll(PART)) ms += Number(n) * UNIT_MS[unit as DurationUnit];
  return ms;
}

/** A bare number in a flag's old unit (`10000` for a flag that took ms): milliseconds, or undefined. */
export function parseLegacyDuration(text: string, unit: DurationUnit): number | undefined {
  const s = text.trim();
  if (!/^\d+(?:\.\d+)?$/.test(s)) return undefined;
  return Number(s) * UNIT_MS[unit];
}

/** `1500` → `1.5s`, `250` → `250ms`, `120000` → `2m`: how durations are printed back to users. */
export function formatDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1000) return `${Math.round(ms) / 1000}s`;
  return `${Math.round(ms)}ms`;
}

export const DURATION_HELP = 'a duration: 500ms, 10s, 2m, 1h (or 1m30s)';
