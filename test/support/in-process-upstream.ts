import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import type { FetchFunction } from "../../src/transport/fetch-transport.js";

/** One request as the in-process upstream received it. */
export interface UpstreamRequest {
  method: string;
  /** Path and query, e.g. `/openai/v1/chat/completions`. */
  url: string;
  /** By lower-case name. */
  headers: Record<string, string>;
  body: string;
}

/** An answer a test sets in place of the simulated provider's. */
export type UpstreamAnswer = (request: UpstreamRequest) => Response | Promise<Response>;

/**
 * A configured (not simulated) upstream for the four providers without a socket: a fetch function for `appUnderTest`
 * that records every request and answers through the simulated provider, mounted at `/openai/v1`, `/gemini`,
 * `/anthropic` and `/openai-compatible/v1`, unless a test sets its own answer.
 */
export interface InProcessUpstream {
  origin: string;
  /** The variables that send every provider's calls here. */
  environment: Record<string, string>;
  received: UpstreamRequest[];
  fetch: FetchFunction;
  answerWith(answer: UpstreamAnswer | undefined): void;
}

export function inProcessUpstream(): InProcessUpstream {
  const origin = "http://upstream.promptgate.test";
  const simulated = createSimulatedProvider();
  const received: UpstreamRequest[] = [];
  let custom: UpstreamAnswer | undefined;
  return {
    origin,
    environment: {
      PROMPTGATE_UPSTREAM_OPENAI: `${origin}/openai/v1`,
      PROMPTGATE_UPSTREAM_GEMINI: `${origin}/gemini`,
      PROMPTGATE_UPSTREAM_ANTHROPIC: `${origin}/anthropic`,
      PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE: `${origin}/openai-compatible/v1`,
    },
    received,
    answerWith: (answer) => {
      custom = answer;
    },
    async fetch(request) {
      const url = new URL(request.url);
      const call: UpstreamRequest = {
        method: request.method,
        url: `${url.pathname}${url.search}`,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
      };
      received.push(call);
      if (custom) return custom(call);
      return simulated.fetch(
        new Request(`${origin}${call.url}`, {
          method: call.method,
          headers: { "content-type": "application/json" },
          body: call.method === "GET" || call.method === "HEAD" ? null : call.body,
        }),
      );
    },
  };
}
