import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AbortNotice } from "../../src/http/abort-notice.js";
import { clientNoticeKey } from "../../src/http/abort-notice.js";
import { bodyReaderKey } from "../../src/http/read-body.js";
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
      const notice = clientEnv(new Request("http://unused/"), { incoming, outgoing })[clientNoticeKey];
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

describe("the body reader of a Node request", () => {
  let server: Server;
  let origin: string;
  let limit = 1_000_000;
  const reads: Promise<Uint8Array>[] = [];
  const notices: AbortNotice[] = [];

  // Lenient as `--insecure-http-parser` makes it: a body both chunked and of a declared length is read as chunked.
  beforeAll(async () => {
    server = createServer({ insecureHTTPParser: true }, (incoming, outgoing) => {
      // The Request is the fallback for a body without a declared length, as @hono/node-server makes it.
      const request = new Request(origin, {
        method: "POST",
        body: incoming.headers["content-length"] === undefined ? (Readable.toWeb(incoming) as ReadableStream) : "",
        duplex: "half",
      } as RequestInit);
      const env = clientEnv(request, { incoming, outgoing });
      notices.push(env[clientNoticeKey]);
      const read = env[bodyReaderKey](limit);
      reads.push(read);
      read.then(
        (body) => outgoing.end(`${body.byteLength}`),
        (error: unknown) => outgoing.end(`refused: ${(error as Error).name}`),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  afterEach(() => {
    reads.length = 0;
    notices.length = 0;
    limit = 1_000_000;
  });

  /** Sends `chunks` one write each, chunked unless `declared` is given. */
  function send(chunks: Buffer[], declared?: number): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = declared === undefined ? {} : { "content-length": String(declared) };
      const sent = httpRequest(origin, { method: "POST", headers });
      sent.on("error", reject);
      sent.on("response", (answer: IncomingMessage) => {
        const parts: Buffer[] = [];
        answer.on("data", (part: Buffer) => parts.push(part));
        answer.on("end", () => resolve({ status: answer.statusCode ?? 0, text: Buffer.concat(parts).toString() }));
      });
      for (const chunk of chunks) sent.write(chunk);
      sent.end();
    });
  }

  it("hands over a declared body byte for byte as a plain Uint8Array, in one chunk or many", async () => {
    for (const size of [0, 100, 20_000, 300_000]) {
      const bytes = Buffer.from("ü€😀a".repeat(Math.ceil(size / 10)).slice(0, size));
      await send([bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)], bytes.length);
      const body = await (reads.at(-1) as Promise<Uint8Array>);
      expect(Buffer.isBuffer(body)).toBe(false);
      expect(body).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(body).equals(bytes)).toBe(true);
      // A copy of a part is a copy, not a view of the body.
      const part = body.slice(0, 1);
      if (part.length === 1) {
        part[0] = (part[0] as number) ^ 1;
        expect(body[0]).toBe(bytes[0]);
      }
    }
  });

  it("refuses a declared length over the limit with PAYLOAD_TOO_LARGE", async () => {
    limit = 10;
    const { text } = await send([Buffer.from("12345678901")], 11);
    expect(text).toBe("refused: GatewayError");
    await expect(reads[0]).rejects.toMatchObject({ code: "PAYLOAD_TOO_LARGE", status: 413 });
    expect(notices[0]?.aborted).toBe(false);
  });

  it("counts a body's bytes however the parser reads it: chunked past its declared length, it is refused at the limit", async () => {
    limit = 10;
    const answer = new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(origin).port), "127.0.0.1", () => {
        const chunk = "x".repeat(1_000);
        socket.write(
          "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        socket.end(`${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`);
      });
      let text = "";
      socket.on("data", (part: Buffer) => {
        text += part.toString();
      });
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(await answer).toContain("refused: GatewayError");
    await expect(reads[0]).rejects.toMatchObject({ code: "PAYLOAD_TOO_LARGE", status: 413 });
  });

  it("reads a chunked body through the Request, whole under the limit and refused over it", async () => {
    limit = 10;
    expect((await send([Buffer.from("12345"), Buffer.from("67890")])).text).toBe("10");
    const { text } = await send([Buffer.from("12345"), Buffer.from("678901")]);
    expect(text).toBe("refused: GatewayError");
    await expect(reads[1]).rejects.toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
  });

  it("refuses the read with an AbortError and sets off the notice when the client leaves mid-body", async () => {
    const sent = httpRequest(origin, { method: "POST", headers: { "content-length": "1000" } });
    sent.on("error", () => undefined);
    sent.write("x".repeat(10));
    await expect.poll(() => reads.length).toBe(1);
    sent.destroy();
    await expect(reads[0]).rejects.toMatchObject({ name: "AbortError" });
    expect(notices[0]?.aborted).toBe(true);
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
