import { TraceError } from './trace-error.js';

/** A node outage: down from `start` to `end` (ms since the epoch); `node` null: the whole system (no node given). */
export interface Outage { system: string; node: string | null; start: number; end: number }

const COLUMNS = { system: 'System', node: 'nodenumz', started: 'Prob Started', fixed: 'Prob Fixed' } as const;

/**
 * The LANL failure data 1996–2005 (LA-UR-05-7318, CSV with a header line): one outage per row, its
 * node (`nodenumz`, numbered from 0; empty for an outage of the whole system) in its system, `Prob Started` and `Prob Fixed` as m/d/yyyy h:mm
 * (read as UTC: only differences matter here).
 */
export function parseLanlCsv(text: string, file: string): Outage[] {
  const lines = text.split('\n');
  const header = splitCsv(lines[0] ?? '');
  const index = Object.fromEntries(Object.entries(COLUMNS).map(([key, name]) => {
    const i = header.indexOf(name);
    if (i < 0) throw new TraceError(file, 1, `no "${name}" column in the header`);
    return [key, i];
  })) as Record<keyof typeof COLUMNS, number>;
  const outages: Outage[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i]!.trim() === '') continue;
    const f = splitCsv(lines[i]!);
    const field = (key: keyof typeof COLUMNS) => {
      const v = f[index[key]];
      if (v === undefined || v.trim() === '') throw new TraceError(file, i + 1, `"${COLUMNS[key]}" is empty`);
      return v.trim();
    };
    const start = parseDate(field('started'));
    const end = parseDate(field('fixed'));
    if (start === null) throw new TraceError(file, i + 1, `"${COLUMNS.started}": "${field('started')}" is not m/d/yyyy h:mm`);
    if (end === null) throw new TraceError(file, i + 1, `"${COLUMNS.fixed}": "${field('fixed')}" is not m/d/yyyy h:mm`);
    if (end < start) throw new TraceError(file, i + 1, `fixed (${field('fixed')}) before started (${field('started')})`);
    const node = f[index.node]?.trim() ?? '';
    outages.push({ system: field('system'), node: node === '' ? null : node, start, end });
  }
  return outages;
}

function parseDate(text: string): number | null {
  const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4}) (\d{1,2}):(\d{2})$/.exec(text);
  if (!m) return null;
  const [, mo, d, y, h, mi] = m.map(Number) as [number, number, number, number, number, number];
  const t = Date.UTC(y, mo - 1, d, h, mi);
  return Number.isFinite(t) && new Date(t).getUTCDate() === d ? t : null;
}

/** A CSV line's fields (double quotes group commas; "" is a quote). */
function splitCsv(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cur);
      cur = '';
    }
    else if (c !== '\r') cur += c;
  }
  out.push(cur);
  return out;
}
