import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer, type HttpBindings } from "@hono/node-server";
import { createApp } from "../../src/app.js";
import type { Deps } from "../../src/deps.js";
import { clientEnv } from "../../src/runtime/node/client-env.js";
import { createNodeDeps } from "../../src/runtime/node/node-gateway.js";
import { type FakeUpstream, startFakeUpstream } from "./fake-upstream.js";

/**
 * A Node gateway whose clock a test sets. `startNodeGateway` takes no clock (its `now` is `new Date()`), so this
 * builds the same Node dependencies (`createNodeDeps`: policies folder, key file, SQLite store, undici transport,
 * call log) with `now` replaced, and serves `createApp` on a real HTTP server through @hono/node-server with the Node
 * runtime's client env (a client that leaves cancels its call), in front of the recording fake upstream.
 *
 * The clock follows real time from an offset: `set(iso)` makes the gateway's `now` that instant at once, and it
 * then advances as real time does, so that an SDK's real wait (its retry after `Retry-After`) carries the gateway's
 * clock past a window's end.
 */
export interface LimitsGateway {
  url: string;
  upstream: FakeUpstream;
  deps: Deps;
  clock: { set(iso: string): void; now(): Date };
  logs: string[];
  close(): Promise<void>;
}

const ignore = () => {};

export async function startLimitsGateway(environment: Record<string, string>): Promise<LimitsGateway> {
  const upstream = await startFakeUpstream();
  const logs: string[] = [];
  let offsetMs = 0;
  const now = () => new Date(Date.now() + offsetMs);
  const deps = await createNodeDeps(
    {
      PORT: "0",
      HOST: "127.0.0.1",
      PROMPTGATE_DB: "memory",
      PROMPTGATE_UPSTREAM_OPENAI: `${upstream.origin}/openai/v1`,
      PROMPTGATE_UPSTREAM_GEMINI: `${upstream.origin}/gemini`,
      PROMPTGATE_UPSTREAM_ANTHROPIC: `${upstream.origin}/anthropic`,
      ...environment,
    },
    { logDestination: { write: (line) => void logs.push(line) } },
  );
  deps.now = now;
  const app = createApp(deps);
  const server = createAdaptorServer({
    hostname: "127.0.0.1",
    fetch: (request, env) => {
      const answer = app.fetch(request, clientEnv(request, env as HttpBindings));
      // As startNodeGateway's pending-work tracking does: a call whose client left may end in a rejection that
      // @hono/node-server does not take up.
      if (answer instanceof Promise) answer.then(ignore, ignore);
      return answer;
    },
  }) as Server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    upstream,
    deps,
    logs,
    clock: {
      set(iso) {
        offsetMs = Date.parse(iso) - Date.now();
      },
      now,
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await upstream.close();
      await deps.store.close();
    },
  };
}
