/**
 * A Prometheus histogram cheap enough for the task pool's hot path: an observation is a bucket
 * search and two additions on a series found once (no label hashing per call), and one call may
 * record `count` equal observations (a worker's report of tasks it ran inline). prom-client serves
 * it (`get()` is the shape its registry formats), so escaping and the text format stay prom-client's.
 *
 * Label values must come from small fixed sets: a histogram holds at most `MAX_SERIES` label
 * combinations; observations of further ones are refused (counted, and logged once).
 */
import { log } from '../../util/log.js';

/** At most this many label combinations per histogram. */
export const MAX_SERIES = 64;

/** A histogram as code declares it (`Metrics.histogram`): its name, help, buckets and bounded labels. */
export interface HistogramDefinition<L extends string = string> {
  /** `tidepool_<layer>_<what>_<unit>`, e.g. `tidepool_task_duration_seconds`. */
  name: string;
  help: string;
  /** Upper bounds of the buckets, ascending (`+Inf` is implied). */
  buckets: readonly number[];
  /** Names of labels whose values come from small fixed sets: never ids of tasks or jobs. */
  labelNames?: readonly L[];
}

/** What code records into. */
export interface Histogram<L extends string = string> {
  /** Records `count` (default 1) observations of `value`; `labels` gives a value for each label name. */
  observe(value: number, labels?: Readonly<Record<L, string>>, count?: number): void;
}

class Series {
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly labels: Readonly<Record<string, string>>, private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  add(value: number, count: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += count;
    this.sum += value * count;
    this.count += count;
  }
}

interface ExportedValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

export class BucketHistogram implements Histogram<string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly labelNames: readonly string[];
  private readonly bounds: readonly number[];
  private readonly series = new Map<string, Series>();
  /** Observations refused because their labels would have made one series too many. */
  refused = 0;

  constructor(private readonly def: HistogramDefinition) {
    this.labelNames = def.labelNames ?? [];
    const b = def.buckets;
    if (b.length === 0 || b.some((x, i) => !Number.isFinite(x) || (i > 0 && x <= b[i - 1]!))) {
      throw new TypeError(`histogram ${def.name}: buckets must be finite and strictly ascending`);
    }
    this.bounds = [...b];
  }

  get name(): string {
    return this.def.name;
  }

  get help(): string {
    return this.def.help;
  }

  get buckets(): readonly number[] {
    return this.bounds;
  }

  observe(value: number, labels: Readonly<Record<string, string>> = {}, count = 1): void {
    this.seriesFor(labels)?.add(value, count);
  }

  /** A recorder with some labels fixed (`kind`, say): its series are looked up once, not per call. */
  bind(fixed: Readonly<Record<string, string>>): Histogram<string> {
    let only: Series | undefined;
    const open = this.labelNames.some((n) => !Object.hasOwn(fixed, n));
    return {
      observe: (value, labels, count = 1) => {
        if (!open || labels === undefined) {
          only ??= this.seriesFor(fixed);
          only?.add(value, count);
        } else {
          this.seriesFor({ ...labels, ...fixed })?.add(value, count);
        }
      },
    };
  }

  /** The series of these labels (undefined: refused, one too many). */
  private seriesFor(labels: Readonly<Record<string, string>>): Series | undefined {
    let key = '';
    for (const name of this.labelNames) {
      const value = labels[name];
      if (typeof value !== 'string') throw new TypeError(`histogram ${this.def.name}: label "${name}" needs a value`);
      key += `${value}\u0000`;
    }
    let series = this.series.get(key);
    if (series) return series;
    if (this.series.size >= MAX_SERIES) {
      if (this.refused++ === 0) log.warn('metrics', `histogram ${this.def.name} has ${MAX_SERIES} label combinations; refusing more (its labels must come from small fixed sets)`, labels);
      return undefined;
    }
    const own: Record<string, string> = {};
    for (const name of this.labelNames) own[name] = labels[name]!;
    series = new Series(own, this.bounds);
    this.series.set(key, series);
    return series;
  }

  /** The label combinations seen so far. */
  get seriesCount(): number {
    return this.series.size;
  }

  /** prom-client's registry formats what this returns (the shape of its own histograms' `get`). */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportedValue[] }> {
    const values: ExportedValue[] = [];
    const bucket = `${this.def.name}_bucket`;
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ labels: { ...s.labels, le }, value: cumulative, metricName: bucket });
      });
      values.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: bucket });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.def.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.def.name}_count` });
    }
    return { name: this.def.name, help: this.def.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}
