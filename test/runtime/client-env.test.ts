import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AbortNotice } from "../../src/http/abort-notice.js";
import { clientNoticeKey } from "../../src/http/abort-notice.js";
import { clientEnv } from "../../src/runtime/node/client-env.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { nativeAnswers } from "../support/native-answers.js";

/** Sends `body` with node:http (no fetch, which makes signals of its own) and resolves with the answer's status and text. */
function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", ...headers } });
    sent.on("error", reject);
    sent.on("response", (answer: IncomingMessage) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => resolve({ status: answer.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
    });
    sent.end(body);
  });
}

describe("the notice of a Node client leaving", () => {
  let server: Server;
  let origin: string;
  const notices: AbortNotice[] = [];
  let answer: "whole" | "never" = "whole";

  beforeAll(async () => {
    server = createServer((incoming, outgoing) => {
      const notice = clientEnv({ incoming, outgoing })[clientNoticeKey];
      notices.push(notice);
      incoming.resume();
      incoming.on("end", () => {
        if (answer === "whole") outgoing.end("done");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  afterEach(() => {
    notices.length = 0;
  });

  it("stays quiet for an answer written whole, also once the connection closes", async () => {
    answer = "whole";
    const heard: unknown[] = [];
    const { text } = await post(origin, "{}", { connection: "close" });
    expect(text).toBe("done");
    const [notice] = notices;
    notice?.addEventListener("abort", () => heard.push(notice.reason));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(notice?.aborted).toBe(false);
    expect(heard).toEqual([]);
  });

  it("aborts, once, with an AbortError when the client closes the connection before its answer", async () => {
    answer = "never";
    const heard: unknown[] = [];
    const sent = httpRequest(origin, { method: "POST" });
    sent.on("error", () => undefined);
    sent.end("{}");
    await expect.poll(() => notices.length).toBe(1);
    const [notice] = notices as [AbortNotice];
    const listener = () => heard.push(notice.reason);
    notice.addEventListener("abort", listener);
    const removed = () => heard.push("removed listener called");
    notice.addEventListener("abort", removed);
    notice.removeEventListener("abort", removed);
    sent.destroy();
    await expect.poll(() => notice.aborted).toBe(true);
    expect(heard).toHaveLength(1);
    expect(notice.reason).toMatchObject({ name: "AbortError" });
  });
});

describe("a call through the Node gateway", () => {
  let harness: GatewayUnderTest;
  const completion = JSON.stringify(nativeAnswers.chat("fine"));

  beforeAll(async () => {
    harness = await startGatewayUnderTest();
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(completion);
    });
  });
  afterAll(() => harness.close());

  it("makes no AbortController: the client's and the deadline's notices are plain objects", async () => {
    const Original = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class Counted extends Original {
      constructor() {
        super();
        made += 1;
      }
    };
    try {
      const body = JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "hello" }] });
      for (let i = 0; i < 3; i++) {
        const { status, text } = await post(`${harness.gateway.url}/openai/v1/chat/completions`, body, {
          authorization: "Bearer sk-client",
        });
        expect(status, text).toBe(200);
      }
    } finally {
      globalThis.AbortController = Original;
    }
    expect(made).toBe(0);
  });
});
