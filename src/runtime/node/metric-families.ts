import type { Registry } from "prom-client";

/**
 * The per-call counters and histograms (with labels), kept here and rendered by a prom-client `Registry` with the
 * process metrics. A series is found once by its label values and then counts in place: prom-client's own labelled
 * `inc`/`observe` validate and hash the label object on every call, about 5 % of a call's CPU under load with a
 * dozen observations per call, where these add to a number.
 */
export interface MetricFamily {
  name: string;
  help: string;
  labelNames: readonly string[];
}

/** A counter's series: `inc()` adds one. */
export interface CounterSeries {
  inc(): void;
}

/** A histogram's series: `observe(value)` counts a value in the first bucket whose bound is ≥ it. */
export interface HistogramSeries {
  observe(value: number): void;
}

/** A counter family in `registry`; the function it returns gives the series of a list of label values. */
export function counterFamily(registry: Registry, family: MetricFamily): (...values: string[]) => CounterSeries {
  const series = familySeries(family.labelNames, (labels) => new Counter(labels));
  register(registry, family, "counter", series, (one, into) => {
    into.push({ labels: one.labels, value: one.count });
  });
  return series.of;
}

/** A histogram family in `registry` with these upper bounds (ascending; `+Inf` is added). */
export function histogramFamily(
  registry: Registry,
  family: MetricFamily & { buckets: readonly number[] },
): (...values: string[]) => HistogramSeries {
  const bounds = Float64Array.from(family.buckets);
  const series = familySeries(family.labelNames, (labels) => new Histogram(labels, bounds));
  register(registry, family, "histogram", series, (one, into) => one.render(family.name, into));
  return series.of;
}

/** One line of a family as prom-client renders it: a name suffix (`_bucket`, `_sum`), its labels and its value. */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

class Counter implements CounterSeries {
  count = 0;
  constructor(readonly labels: Record<string, string>) {}
  inc(): void {
    this.count += 1;
  }
}

class Histogram implements HistogramSeries {
  /** Per bucket, the values that fell into it alone (cumulated when rendered); the last one is past every bound. */
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;
  constructor(
    readonly labels: Record<string, string>,
    private readonly bounds: Float64Array,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    // prom-client throws on a value that is not a finite number; here it is not counted, and the call goes on.
    if (!Number.isFinite(value)) return;
    const bounds = this.bounds;
    let bucket = 0;
    while (bucket < bounds.length && value > (bounds[bucket] as number)) bucket += 1;
    this.counts[bucket] = (this.counts[bucket] as number) + 1;
    this.sum += value;
    this.count += 1;
  }
  /** prom-client's histogram lines: each bound's cumulative count (`le` first), `+Inf`, then the sum and the count. */
  render(name: string, into: Sample[]): void {
    let cumulative = 0;
    this.bounds.forEach((bound, bucket) => {
      cumulative += this.counts[bucket] as number;
      into.push({ metricName: `${name}_bucket`, labels: { le: bound, ...this.labels }, value: cumulative });
    });
    into.push({ metricName: `${name}_bucket`, labels: { le: "+Inf", ...this.labels }, value: this.count });
    into.push({ metricName: `${name}_sum`, labels: this.labels, value: this.sum });
    into.push({ metricName: `${name}_count`, labels: this.labels, value: this.count });
  }
}

interface Series<T> {
  of(...values: string[]): T;
  all(): Iterable<T>;
  clear(): void;
}

/**
 * A family's series by label values, bounded, as every label's values are. A series is found through one map per
 * label, by values that are mostly the same string objects call after call, whose hashes V8 keeps: no key string is
 * built and hashed per observation. `all()` gives the series in the order they were first seen, as prom-client does.
 */
function familySeries<T>(labelNames: readonly string[], make: (labels: Record<string, string>) => T): Series<T> {
  type Level = Map<string, Level | T>;
  let root: Level = new Map();
  let made: T[] = [];
  const last = labelNames.length - 1;
  return {
    of(...values) {
      let level = root;
      for (let at = 0; at < last; at++) {
        const value = values[at] ?? "";
        let next = level.get(value) as Level | undefined;
        if (next === undefined) {
          next = new Map();
          level.set(value, next);
        }
        level = next;
      }
      const value = values[last] ?? "";
      let one = level.get(value) as T | undefined;
      if (one === undefined) {
        const labels: Record<string, string> = {};
        labelNames.forEach((label, at) => {
          labels[label] = values[at] ?? "";
        });
        one = make(labels);
        level.set(value, one);
        made.push(one);
      }
      return one;
    },
    all: () => made,
    clear: () => {
      root = new Map();
      made = [];
    },
  };
}

/** Registers the family as the metric object a prom-client `Registry` renders (`get`) and resets. */
function register<T>(
  registry: Registry,
  family: MetricFamily,
  type: "counter" | "histogram",
  series: Series<T>,
  samples: (one: T, into: Sample[]) => void,
): void {
  const { name, help } = family;
  const metric = {
    name,
    help,
    type,
    aggregator: "sum",
    async get() {
      const values: Sample[] = [];
      for (const one of series.all()) samples(one, values);
      return { name, help, type, aggregator: "sum", values };
    },
    reset: series.clear,
  };
  // prom-client's types name only its own classes, but its registry takes any object of this shape.
  registry.registerMetric(metric as unknown as Parameters<Registry["registerMetric"]>[0]);
}
