import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { listen } from "../../src/runtime/node/listen.js";

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

function server(): Server {
  const created = createServer();
  servers.push(created);
  return created;
}

describe("listening", () => {
  it("resolves with the port the system picked for port 0", async () => {
    const address = await listen(server(), "127.0.0.1", 0);
    expect(address.port).toBeGreaterThan(0);
  });

  it("refuses a port in use with a ConfigError naming the port and PORT", async () => {
    const { port } = (await listen(server(), "127.0.0.1", 0)) as AddressInfo;
    const failure = await listen(server(), "127.0.0.1", port).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as Error).message).toBe(
      `port ${port} on 127.0.0.1 is already in use (EADDRINUSE); set PORT, or HOST, to a free address.`,
    );
  });

  it("refuses an address that is not this machine's with a ConfigError naming HOST", async () => {
    const failure = await listen(server(), "192.0.2.1", 0).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as Error).message).toMatch(/^HOST 192\.0\.2\.1 is not an address of this machine/);
  });
});
