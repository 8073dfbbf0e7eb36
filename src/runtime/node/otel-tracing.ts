import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type TextMapGetter, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { CallTracing } from "../../record/call-tracing.js";
import { spanOf } from "./gen-ai-span.js";

/** A call's tracing, and the flush a shutdown waits for. */
export type NodeTracing = CallTracing & { shutdown(): Promise<void> };

const headersGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * Calls as OpenTelemetry spans through `processor`: each continues the `traceparent` the request carries (a new
 * trace without one), is named and described by its record (`spanOf`) when it ends, and gives its own `traceparent`
 * to the provider requests it makes.
 */
export function otelTracing(processor: SpanProcessor, serviceName: string, version: string): NodeTracing {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName, "service.version": version }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer("promptgate", version);
  const propagator = new W3CTraceContextPropagator();
  return {
    start(request) {
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, headersGetter);
      const span = tracer.startSpan("call", { kind: SpanKind.CLIENT }, parent);
      return {
        traceparent() {
          const carrier: Record<string, string> = {};
          propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, {
            set: (target, key, value) => {
              target[key] = value;
            },
          });
          return carrier.traceparent;
        },
        end(record) {
          try {
            const { name, attributes } = spanOf(record);
            span.updateName(name);
            span.setAttributes(attributes);
            if (record.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR });
          } finally {
            span.end();
          }
        },
      };
    },
    shutdown: () => provider.shutdown(),
  };
}

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Tracing as the standard OpenTelemetry variables ask for it: spans exported over OTLP/HTTP (JSON) to
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, with the headers of
 * `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`), in batches (`OTEL_BSP_SCHEDULE_DELAY` ms apart, default 5000), as
 * service `OTEL_SERVICE_NAME` (default `promptgate`). Undefined, and no cost, without an endpoint or with
 * `OTEL_SDK_DISABLED=true`.
 */
export function tracingFromEnvironment(environment: Environment, version: string): NodeTracing | undefined {
  if (environment.OTEL_SDK_DISABLED === "true") return undefined;
  const base = environment.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url =
    environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined);
  if (url === undefined) return undefined;
  const headers = Object.fromEntries(
    (environment.OTEL_EXPORTER_OTLP_HEADERS ?? "")
      .split(",")
      .map((pair) => pair.split("=").map((part) => decodeURIComponent(part.trim())))
      .filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== ""),
  );
  const delay = Number(environment.OTEL_BSP_SCHEDULE_DELAY);
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url, headers }), {
    scheduledDelayMillis: Number.isInteger(delay) && delay > 0 ? delay : 5_000,
  });
  return otelTracing(processor, environment.OTEL_SERVICE_NAME || "promptgate", version);
}
