import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeUpstream, startFakeUpstream } from "../../test/support/fake-upstream.js";
import { answerText, streamedAnswer, surfaceOf, wholeAnswer } from "./provider-answers.js";

/**
 * What the fake upstream does with a request, read from its prompt text (`FAULT:<name>`): a
 * provider error, a broken connection or answer, a hang, a redirect, or a slow stream.
 */
export const faults = [
  "429",
  "500",
  "503",
  "401",
  "reset",
  "malformed",
  "cut-stream",
  "hang",
  "redirect-301",
  "redirect-302",
  "redirect-307",
  "redirect-308",
  "slow-stream",
  "slow-stream-late-end",
] as const;

export type Fault = (typeof faults)[number];

/** The fake provider and the host its redirects point at, which nobody may ever contact. */
export interface FakeProvider {
  upstream: FakeUpstream;
  /** Requests the upstream answered. */
  calls(): number;
  /** Requests that reached the redirect target (must stay 0: the gateway never follows a redirect). */
  redirectTargetHits(): number;
  close(): Promise<void>;
}

/** A slow stream's text events and the gap between them: about 1.6 s of answer, long enough to be cut by a kill. */
const slowDeltas = Array.from({ length: 8 }, (_, index) => `part ${index} `);
const slowGapMs = 200;
/** How long a late-ending stream keeps its connection open after its final event. */
const lateEndMs = 250;

/** Starts the fake upstream (answers chosen from the prompt) and the redirect target. */
export async function startFakeProvider(): Promise<FakeProvider> {
  let trapHits = 0;
  const trap = createServer((_request, response) => {
    trapHits++;
    response.writeHead(200, { "content-type": "application/json" });
    response.end("{}");
  });
  await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve));
  const trapOrigin = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;

  const upstream = await startFakeUpstream();
  let calls = 0;
  upstream.answerWith((request, response) => {
    calls++;
    const surface = surfaceOf(request.url);
    const fault = /FAULT:([a-z0-9-]+)/.exec(request.body)?.[1] as Fault | undefined;
    if (fault !== undefined && answerFault(fault, surface, response, trapOrigin)) return;
    const text = answerText(request.body);
    const stream = request.url.includes("stream") || request.body.includes('"stream":true');
    if (stream) {
      const { events, final } = streamedAnswer(surface, [text]);
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(events.join("") + final);
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(wholeAnswer(surface, text));
  });
  // The soak sends large schemas for minutes: what the upstream received is not kept.
  const forget = setInterval(() => upstream.received.splice(0), 5_000);

  return {
    upstream,
    calls: () => calls,
    redirectTargetHits: () => trapHits,
    close: async () => {
      clearInterval(forget);
      trap.closeAllConnections();
      await Promise.all([upstream.close(), new Promise<void>((resolve) => trap.close(() => resolve()))]);
    },
  };
}

function answerFault(
  fault: Fault,
  surface: ReturnType<typeof surfaceOf>,
  response: ServerResponse,
  trapOrigin: string,
): boolean {
  const json = (status: number, value: unknown) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(value));
  };
  switch (fault) {
    case "429":
      json(429, {
        error: { message: "Rate limit reached.", type: "tokens", param: null, code: "rate_limit_exceeded" },
      });
      return true;
    case "500":
      json(500, { error: { message: "The server had an error.", type: "server_error", param: null, code: null } });
      return true;
    case "503":
      json(503, { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } });
      return true;
    case "401":
      json(401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
      return true;
    case "reset":
      response.socket?.destroy();
      return true;
    case "malformed":
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"id": "x", "choices": [');
      return true;
    case "cut-stream": {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(streamedAnswer(surface, ["first"]).events.join(""));
      response.write('data: {"choices": [{"ind');
      setTimeout(() => response.socket?.destroy(), 5);
      return true;
    }
    case "hang":
      return true;
    case "redirect-301":
    case "redirect-302":
    case "redirect-307":
    case "redirect-308":
      response.writeHead(Number(fault.slice(-3)), {
        location: `${trapOrigin}/stolen${surface === "openai" ? "/v1/chat/completions" : ""}`,
        "content-type": "text/plain",
      });
      response.end("Moved.");
      return true;
    case "slow-stream":
    case "slow-stream-late-end":
      slowStream(surface, response, fault === "slow-stream-late-end");
      return true;
  }
}

/**
 * Eight text events 200 ms apart, then the final event. A real provider ends its response
 * together with its final event; the late-ending variant holds the connection open 250 ms longer.
 */
function slowStream(surface: ReturnType<typeof surfaceOf>, response: ServerResponse, lateEnd: boolean): void {
  const { events, final } = streamedAnswer(surface, slowDeltas);
  response.writeHead(200, { "content-type": "text/event-stream" });
  let next = 0;
  const timer = setInterval(() => {
    if (response.destroyed) {
      clearInterval(timer);
      return;
    }
    if (next < events.length) {
      response.write(events[next++]);
      return;
    }
    clearInterval(timer);
    if (!lateEnd) {
      response.end(final);
      return;
    }
    response.write(final);
    setTimeout(() => response.end(), lateEndMs);
  }, slowGapMs);
  response.on("close", () => clearInterval(timer));
}
