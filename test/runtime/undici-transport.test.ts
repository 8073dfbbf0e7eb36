import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallNotice } from "../../src/http/abort-notice.js";
import { undiciTransport } from "../../src/runtime/node/undici-transport.js";
import type { UpstreamRequest } from "../../src/transport/transport.js";

/**
 * The Node transport against a real HTTP server: what it hands the pipeline (status, headers, the body whole or
 * streamed, once), and that an abort, a cancelled stream or a broken connection ends the call instead of hanging it.
 */

type Answer = (request: IncomingMessage, response: ServerResponse, body: Buffer) => void;
const answers = new Map<string, Answer>();
/** What each path's request carried, as the server read it. */
const received = new Map<string, { method: string; body: string; headers: IncomingMessage["headers"] }>();
/** Paths whose request the server saw end before it answered (the client went away). */
const closedEarly = new Set<string>();
let server: Server;
let origin: string;
const transport = undiciTransport();

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const path = request.url ?? "";
      const body = Buffer.concat(chunks);
      received.set(path, { method: request.method ?? "", body: body.toString("utf8"), headers: request.headers });
      response.on("close", () => {
        if (!response.writableFinished) closedEarly.add(path);
      });
      const answer = answers.get(path.split("?")[0] ?? "");
      if (answer === undefined) response.writeHead(404).end("no such path");
      else answer(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function request(path: string, overrides: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    url: `${origin}${path}`,
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
    body: '{"model":"m"}',
    signal: undefined,
    ...overrides,
  };
}

const waitFor = async (done: () => boolean) => {
  for (let tries = 0; tries < 200 && !done(); tries++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
};

describe("the undici transport", () => {
  it("sends method, path with query, headers and body, and hands back status, headers and the whole body", async () => {
    answers.set("/echo", (_request, response, body) => {
      response.setHeader("set-cookie", ["a=1", "b=2"]);
      response.writeHead(201, { "content-type": "application/json", "x-upstream": "yes" });
      response.end(`{"got":${JSON.stringify(body.toString("utf8"))},"text":"Grüße 👋"}`);
    });
    const response = await transport(request("/echo?alt=sse&x=%5C", { body: new TextEncoder().encode('{"a":"ä"}') }));
    expect(response.status).toBe(201);
    expect(response.headers["content-type"]).toBe("application/json");
    expect(response.headers["x-upstream"]).toBe("yes");
    // Repeated headers are joined, as a record of strings holds them.
    expect(response.headers["set-cookie"]).toBe("a=1, b=2");
    const bytes = await response.bytes();
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual({ got: '{"a":"ä"}', text: "Grüße 👋" });
    const seen = received.get("/echo?alt=sse&x=%5C");
    expect(seen?.method).toBe("POST");
    expect(seen?.headers.authorization).toBe("Bearer sk-test");
    expect(seen?.body).toBe('{"a":"ä"}');
  });

  it("reads a body of several megabytes whole, past what it holds before it is asked for", async () => {
    const size = 3 * 1024 * 1024 + 7;
    answers.set("/large", (_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      const block = Buffer.alloc(64 * 1024, 120);
      let left = size;
      const write = () => {
        while (left > 0) {
          const part = block.subarray(0, Math.min(left, block.length));
          left -= part.length;
          if (!response.write(part)) return response.once("drain", write);
        }
        response.end();
      };
      write();
    });
    const response = await transport(request("/large"));
    // Asked for only later: the transport pauses the socket meanwhile and loses nothing.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const bytes = await response.bytes();
    expect(bytes.byteLength).toBe(size);
    expect(bytes.every((byte) => byte === 120)).toBe(true);
  });

  it("streams a body as it arrives, with the chunks that came before it was asked for", async () => {
    let finish: (() => void) | undefined;
    answers.set("/stream", (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: one\n\n");
      finish = () => response.end("data: two\n\n");
    });
    const response = await transport(request("/stream"));
    await new Promise((resolve) => setTimeout(resolve, 30));
    const reader = response.stream().getReader();
    const decoder = new TextDecoder();
    let text = "";
    const first = await reader.read();
    text += decoder.decode(first.value, { stream: true });
    expect(text).toBe("data: one\n\n");
    finish?.();
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      text += decoder.decode(part.value, { stream: true });
    }
    expect(text).toBe("data: one\n\ndata: two\n\n");
  });

  it("streams a large body through with backpressure, every byte in order", async () => {
    const blocks = 200;
    answers.set("/stream-large", (_request, response) => {
      response.writeHead(200, { "content-type": "application/octet-stream" });
      let sent = 0;
      const write = () => {
        while (sent < blocks) {
          const block = Buffer.alloc(16 * 1024, sent % 256);
          sent += 1;
          if (!response.write(block)) return response.once("drain", write);
        }
        response.end();
      };
      write();
    });
    const response = await transport(request("/stream-large"));
    const reader = response.stream().getReader();
    let length = 0;
    let inOrder = true;
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      for (const byte of part.value) {
        if (byte !== Math.floor(length / (16 * 1024)) % 256) inOrder = false;
        length += 1;
      }
      // A slow reader: the transport must pause the socket instead of holding everything.
      if (length % (256 * 1024) < part.value.byteLength) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(length).toBe(blocks * 16 * 1024);
    expect(inOrder).toBe(true);
  });

  it("reads a body once: a second read, whole or streamed, is refused", async () => {
    answers.set("/once", (_request, response) => response.writeHead(200).end("x"));
    const response = await transport(request("/once"));
    expect(new TextDecoder().decode(await response.bytes())).toBe("x");
    await expect(response.bytes()).rejects.toThrow(TypeError);
    expect(() => response.stream()).toThrow(TypeError);
  });

  it("streams a body that has already ended, and an empty one", async () => {
    answers.set("/ended", (_request, response) => response.writeHead(200).end("all of it"));
    answers.set("/empty", (_request, response) => response.writeHead(204).end());
    const ended = await transport(request("/ended"));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await new Response(ended.stream()).text()).toBe("all of it");
    const empty = await transport(request("/empty"));
    expect(empty.status).toBe(204);
    expect((await empty.bytes()).byteLength).toBe(0);
  });

  it("hands back a redirect as it is, without following it", async () => {
    answers.set("/moved", (_request, response) => response.writeHead(307, { location: `${origin}/echo` }).end());
    received.delete("/echo");
    const response = await transport(request("/moved"));
    expect(response.status).toBe(307);
    expect(response.headers.location).toBe(`${origin}/echo`);
    await response.bytes();
    expect(received.has("/echo")).toBe(false);
  });

  it("rejects with the signal's reason when aborted before it is sent, and sends nothing", async () => {
    const notice = new CallNotice();
    const reason = new Error("deadline");
    notice.abort(reason);
    received.delete("/echo");
    await expect(transport(request("/echo", { signal: notice }))).rejects.toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(received.has("/echo")).toBe(false);
  });

  it("rejects with the signal's reason when aborted while the provider thinks, and closes the connection", async () => {
    answers.set("/slow", () => {});
    const notice = new CallNotice();
    const reason = new Error("client went away");
    const pending = transport(request("/slow", { signal: notice }));
    await waitFor(() => received.has("/slow"));
    notice.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await waitFor(() => closedEarly.has("/slow"));
  });

  it("fails the body's read when aborted while the body arrives", async () => {
    answers.set("/half", (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"partial":');
    });
    const notice = new CallNotice();
    const response = await transport(request("/half", { signal: notice }));
    const read = response.bytes();
    const reason = new Error("deadline");
    notice.abort(reason);
    await expect(read).rejects.toBe(reason);
  });

  it("aborts the call when its stream is cancelled", async () => {
    answers.set("/cancel", (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: one\n\n");
    });
    const response = await transport(request("/cancel"));
    const reader = response.stream().getReader();
    await reader.read();
    await reader.cancel();
    await waitFor(() => closedEarly.has("/cancel"));
  });

  it("fails a stream whose connection breaks mid-body", async () => {
    answers.set("/broken", (_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: one\n\n", () => setTimeout(() => response.socket?.destroy(), 20));
    });
    const response = await transport(request("/broken"));
    const reader = response.stream().getReader();
    await reader.read();
    await expect(reader.read()).rejects.toThrow();
  });

  it("rejects with the connection's error code when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(transport({ ...request("/x"), url: `http://127.0.0.1:${port}/x` })).rejects.toMatchObject({
      code: "ECONNREFUSED",
    });
  });
});

describe("the connection report", () => {
  it("tells the pipeline the connection is open before the answer's head arrives", async () => {
    let answered = false;
    answers.set("/slow-head", (_request, response) => {
      setTimeout(() => {
        answered = true;
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      }, 100);
    });
    let connectedBeforeHead: boolean | undefined;
    const response = await transport(
      request("/slow-head", {
        connected: () => {
          connectedBeforeHead = !answered;
        },
      }),
    );
    expect(response.status).toBe(200);
    expect(connectedBeforeHead).toBe(true);
  });
});
