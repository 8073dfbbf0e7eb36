import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";

/** One request as the fake upstream received it. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, e.g. `/openai/v1/chat/completions`. */
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** An answer a test sets in place of the simulated provider's. */
export type FakeAnswer = (request: ReceivedRequest, response: ServerResponse) => void;

/**
 * A real HTTP server standing in for the three providers: it records every request it
 * receives and answers through the simulated provider, mounted at `/openai/v1`, `/gemini`,
 * `/anthropic` and `/openai-compatible/v1`, unless a test sets its own answer.
 */
export interface FakeUpstream {
  origin: string;
  received: ReceivedRequest[];
  answerWith(answer: FakeAnswer | undefined): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  const simulated = createSimulatedProvider();
  const received: ReceivedRequest[] = [];
  let custom: FakeAnswer | undefined;
  const server = createServer(async (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const request: ReceivedRequest = {
      method: incoming.method ?? "GET",
      url: incoming.url ?? "/",
      headers: incoming.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    };
    received.push(request);
    if (custom) {
      custom(request, outgoing);
      return;
    }
    const response = await simulated.fetch(
      new Request(`http://fake.upstream${request.url}`, {
        method: request.method,
        headers: { "content-type": "application/json" },
        body: request.method === "GET" || request.method === "HEAD" ? null : request.body,
      }),
    );
    outgoing.writeHead(response.status, Object.fromEntries(response.headers));
    const reader = response.body?.getReader();
    for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read())
      outgoing.write(chunk.value);
    outgoing.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    received,
    answerWith: (answer) => {
      custom = answer;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
