import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { counterFamily, histogramFamily } from "../../src/runtime/node/metric-families.js";

// The gateway's own counters and histograms must render exactly what prom-client's Counter and Histogram render for
// the same observations: prom-client itself is the oracle, fed side by side with random label values and values.

const buckets = [0.5, 1, 2.5, 10, 100];
const labelNames = ["surface", "policy"];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function withoutExemplars(metrics: unknown): unknown {
  return JSON.parse(JSON.stringify(metrics, (key, value) => (key === "exemplar" ? undefined : value)));
}

describe("metric families", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`render as prom-client renders the same observations (seed ${seed})`, async () => {
      const next = random(seed);
      const theirs = new Registry();
      const ours = new Registry();
      const counter = new Counter({ name: "t_calls_total", help: "Calls.", labelNames, registers: [theirs] });
      const histogram = new Histogram({ name: "t_size", help: "Sizes.", labelNames, buckets, registers: [theirs] });
      const calls = counterFamily(ours, { name: "t_calls_total", help: "Calls.", labelNames });
      const sizes = histogramFamily(ours, { name: "t_size", help: "Sizes.", labelNames, buckets });
      // Values that a key joined from the values with a separator would confuse: ("x\u0001y", "z") and ("x", "y\u0001z").
      const surfaces = ["chat", "responses", 'messages "quoted"', "a\\b", "x\u0001y", "x"];
      const policies = ["p.one", "p-two", "line\nbreak", "z", "y\u0001z"];
      for (let i = 0; i < 400; i += 1) {
        const surface = surfaces[Math.floor(next() * surfaces.length)] as string;
        const policy = policies[Math.floor(next() * policies.length)] as string;
        // Values on a bound, between bounds, past every bound, zero and negative.
        const pick = next();
        const value =
          pick < 0.3
            ? (buckets[Math.floor(next() * buckets.length)] as number)
            : pick < 0.9
              ? next() * 150
              : pick < 0.95
                ? 0
                : -next();
        if (next() < 0.5) {
          counter.labels(surface, policy).inc();
          calls(surface, policy).inc();
        }
        histogram.labels(surface, policy).observe(value);
        sizes(surface, policy).observe(value);
      }
      expect(await ours.metrics()).toBe(await theirs.metrics());
      // As objects too (prom-client adds an empty exemplar to its histogram lines; there are none here).
      expect(withoutExemplars(await ours.getMetricsAsJSON())).toEqual(
        withoutExemplars(await theirs.getMetricsAsJSON()),
      );
    });
  }

  it("renders a family with no series yet as prom-client does", async () => {
    const theirs = new Registry();
    const ours = new Registry();
    new Histogram({ name: "t_empty", help: "Empty.", labelNames, buckets, registers: [theirs] });
    histogramFamily(ours, { name: "t_empty", help: "Empty.", labelNames, buckets });
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("starts again from nothing when the registry resets its metrics", async () => {
    const ours = new Registry();
    const sizes = histogramFamily(ours, { name: "t_reset", help: "Reset.", labelNames, buckets });
    sizes("chat", "p").observe(3);
    ours.resetMetrics();
    expect(await ours.metrics()).not.toContain('t_reset_count{surface="chat"');
  });

  it("does not count a value that is not a finite number (prom-client would throw)", async () => {
    const ours = new Registry();
    const sizes = histogramFamily(ours, { name: "t_nan", help: "NaN.", labelNames, buckets });
    sizes("chat", "p").observe(Number.NaN);
    sizes("chat", "p").observe(Number.POSITIVE_INFINITY);
    sizes("chat", "p").observe(1);
    expect(await ours.metrics()).toContain('t_nan_count{surface="chat",policy="p"} 1');
  });
});
