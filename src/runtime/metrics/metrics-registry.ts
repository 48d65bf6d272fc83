/**
 * The metrics of one node (or one service process): a prom-client registry that the node's own
 * figures and every job kind's histograms go into, served as Prometheus text. The runtime names no
 * framework: a kind registers its histograms through `Metrics` (its `MemberContext.metrics`), which
 * adds the kind's name as the `kind` label.
 */
import type { Metric, Registry } from 'prom-client';
import { promClient } from './prom-client.js';
import { BucketHistogram, type Histogram, type HistogramDefinition } from './histogram.js';

/** Where code records its figures: a node's registry, one kind's view of it, or nothing. */
export interface Metrics {
  /**
   * The histogram of this definition, registered on first use; later calls with the same name get the
   * same one (a kind runs many jobs on a node). A name registered with other buckets or labels is refused.
   */
  histogram<L extends string = never>(def: HistogramDefinition<L>): Histogram<L>;
}

/** Records nothing (a node started without metrics, a simulation). */
export const NO_METRICS: Metrics = {
  histogram: () => ({ observe: () => undefined }),
};

/**
 * What a registry's prom-client `Registry` offers here: its text and content type. (prom-client is an
 * optional package; declaring its type here keeps programs that use no metrics free of it.)
 */
export interface PrometheusRegistry {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/**
 * A registry of metrics served as Prometheus text. prom-client is an optional package: a node without
 * metrics never loads it, and one asked for metrics without it is refused, naming the package.
 */
export class MetricsRegistry implements Metrics {
  /** prom-client's registry underneath (its `Registry`: register metrics of your own in it). */
  readonly prometheus: PrometheusRegistry;
  private readonly registry: Registry;
  private readonly histograms = new Map<string, BucketHistogram>();

  /** `processMetrics` (default true): prom-client's process figures (CPU, memory, event loop) under `prefix`. */
  constructor(opts: { processMetrics?: boolean; prefix?: string } = {}) {
    const { collectDefaultMetrics, Registry } = promClient();
    this.prometheus = this.registry = new Registry();
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: opts.prefix ?? 'tidepool_' });
  }

  histogram<L extends string = never>(def: HistogramDefinition<L>): Histogram<L> {
    return this.register(def) as Histogram<L>;
  }

  /** The view of one job kind: its histograms carry `kind="<name>"` (a definition must not name `kind` itself). */
  forKind(kind: string): Metrics {
    return {
      histogram: <L extends string = never>(def: HistogramDefinition<L>): Histogram<L> => {
        if ((def.labelNames as readonly string[] | undefined)?.includes('kind')) throw new TypeError(`histogram ${def.name}: "kind" is added by the runtime`);
        const h = this.register({ ...def, labelNames: ['kind', ...(def.labelNames ?? [])] });
        return h.bind({ kind }) as Histogram<L>;
      },
    };
  }

  /** The Prometheus text of everything registered. */
  text(): Promise<string> {
    return this.prometheus.metrics();
  }

  get contentType(): string {
    return this.prometheus.contentType;
  }

  private register(def: HistogramDefinition<string>): BucketHistogram {
    const known = this.histograms.get(def.name);
    if (known) {
      const same = sameList(known.buckets, def.buckets) && sameList(known.labelNames, def.labelNames ?? []);
      if (!same) throw new TypeError(`histogram ${def.name} is already registered with other buckets or labels`);
      return known;
    }
    const h = new BucketHistogram(def);
    this.registry.registerMetric(h as unknown as Metric); // prom-client formats anything with its metrics' `get`
    this.histograms.set(def.name, h);
    return h;
  }
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
