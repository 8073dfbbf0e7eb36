// The part of autocannon 9's programmatic API the bench uses (the package ships no types).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export interface Options {
    url: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Requests in all; overrides `duration`. */
    amount?: number;
    method?: "GET" | "POST";
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
  }

  export interface Histogram {
    average: number;
    p50: number;
    p99: number;
    max: number;
  }

  export interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export interface Instance extends EventEmitter {
    on(event: "response", listener: (client: unknown, statusCode: number, bytes: number, ms: number) => void): this;
    stop(): void;
  }

  export default function autocannon(options: Options, done: (error: Error | null, result: Result) => void): Instance;
}
