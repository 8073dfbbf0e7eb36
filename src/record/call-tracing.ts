import type { CallRecord } from "./call-record.js";

/**
 * A runtime's traces of calls (Node: OpenTelemetry, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set). Absent: none. A
 * span starts when a call arrives (continuing its `traceparent`) and ends with its record; never with prompt or
 * answer text.
 */
export interface CallTracing {
  start(request: Request): CallSpan;
}

/** One call's span. */
export interface CallSpan {
  /** The W3C `traceparent` the provider request carries, so that the provider's own spans join the trace. */
  traceparent(): string | undefined;
  /** Ends the span with what the call's record says. */
  end(record: CallRecord): void;
}

/** A span attribute's value. */
export type SpanValue = string | number | boolean | string[];
