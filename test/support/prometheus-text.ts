/**
 * Test support: a strict reader of the Prometheus text exposition format (0.0.4), written from the
 * format's description, independent of prom-client: every line is empty, a `# HELP`, a `# TYPE` or a sample
 * of a declared family; label values are quoted with `\\`, `\"` and `\n` escapes; a histogram's
 * buckets are cumulative, end with `le="+Inf"`, and that bucket equals its `_count`.
 * Anything else throws, naming the line.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, i) => {
    const where = `line ${i + 1} "${line}"`;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) throw new Error(`${where}: a comment must be "# HELP name text" or "# TYPE name type"`);
      const [, what, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`${where}: bad metric name`);
      const family = families.get(name) ?? { name, type: 'untyped' as const, help: '', samples: [] };
      if (what === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type`);
        if (family.samples.length > 0) throw new Error(`${where}: TYPE after samples`);
        family.type = rest as Family['type'];
      } else {
        family.help = rest;
      }
      families.set(name, family);
      return;
    }
    if (line === '') return; // empty lines are allowed (and ignored)
    const sample = parseSample(line, where);
    const family = familyOf(sample.name, families);
    if (!family) throw new Error(`${where}: sample of no declared family`);
    family.samples.push(sample);
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function parseSample(line: string, where: string): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) throw new Error(`${where}: not "name{labels} value"`);
  const [, name, braces, valueText] = m as unknown as [string, string, string | undefined, string];
  const labels: Record<string, string> = {};
  if (braces !== undefined) {
    let rest = braces.slice(1, -1);
    while (rest.length > 0) {
      const l = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,?)/.exec(rest);
      if (!l || !LABEL.test(l[1]!)) throw new Error(`${where}: bad label at "${rest}"`);
      if (Object.hasOwn(labels, l[1]!)) throw new Error(`${where}: label ${l[1]} twice`);
      labels[l[1]!] = l[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(l[0].length);
      if (l[3] === '' && rest.length > 0) throw new Error(`${where}: labels must be separated by commas`);
    }
  }
  // Prometheus reads values with Go's ParseFloat: NaN and (signed) Inf/Infinity in any case.
  const special = /^([+-]?)(inf|infinity)$/i.exec(valueText);
  const value = special ? (special[1] === '-' ? -Infinity : Infinity) : /^nan$/i.test(valueText) ? NaN : Number(valueText);
  if (Number.isNaN(value) && !/^nan$/i.test(valueText)) throw new Error(`${where}: "${valueText}" is not a number`);
  return { name, labels, value };
}

function familyOf(sampleName: string, families: Map<string, Family>): Family | undefined {
  const direct = families.get(sampleName);
  if (direct) return direct;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const f = families.get(sampleName.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

function checkHistogram(f: Family): void {
  const bySeries = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const series = bySeries.get(key) ?? { buckets: [] };
    bySeries.set(key, series);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}: a bucket without le`);
      series.buckets.push([le === '+Inf' ? Infinity : Number(le), s.value]);
    } else if (s.name === `${f.name}_count`) series.count = s.value;
    else if (s.name === `${f.name}_sum`) series.sum = s.value;
    else throw new Error(`${f.name}: sample ${s.name} does not belong to a histogram`);
  }
  for (const [key, s] of bySeries) {
    if (s.count === undefined || s.sum === undefined) throw new Error(`${f.name}${key}: _count or _sum missing`);
    const last = s.buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: the last bucket must be le="+Inf"`);
    for (let i = 1; i < s.buckets.length; i++) {
      if (!(s.buckets[i]![0] > s.buckets[i - 1]![0])) throw new Error(`${f.name}${key}: bucket bounds must ascend`);
      if (s.buckets[i]![1] < s.buckets[i - 1]![1]) throw new Error(`${f.name}${key}: buckets must be cumulative`);
    }
    if (last[1] !== s.count) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} differs from _count ${s.count}`);
  }
}

/** The samples of `name` (a family's own samples, or its `_count`, `_bucket`, … when named so) whose labels include `match`. */
export function samplesOf(families: Map<string, Family>, name: string, match: Record<string, string> = {}): Sample[] {
  const all = [...families.values()].flatMap((f) => f.samples);
  return all.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}

/** The sum of the values of `name`'s samples whose labels include `match` (0 if none). */
export function valueOf(families: Map<string, Family>, name: string, match: Record<string, string> = {}): number {
  return samplesOf(families, name, match).reduce((a, s) => a + s.value, 0);
}
