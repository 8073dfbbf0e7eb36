import { describe, expect, it } from "vitest";
import { main } from "../../src/runtime/node/cli/main.js";
import { startNodeGateway } from "../../src/runtime/node/node-gateway.js";
import { capture } from "../support/captured-io.js";

describe("the open-relay rule when the Node gateway starts", () => {
  const beyond = { HOST: "0.0.0.0", PORT: "0", PROMPTGATE_DB: "memory", GEMINI_API_KEY: "g-server" };

  it("refuses to listen beyond loopback in pass-through mode while a server-held key is set", async () => {
    await expect(startNodeGateway(beyond, { logDestination: { write: () => {} } })).rejects.toThrow(
      /PROMPTGATE_OPEN_RELAY=true/,
    );
  });

  it("is one line on stderr from promptgate serve, also with several worker processes", async () => {
    for (const workers of ["1", "2"]) {
      const output = capture({ ...beyond, PROMPTGATE_WORKERS: workers, PROMPTGATE_DB: "memory" });
      expect(await main(["serve"], output.io)).toBe(1);
      expect(output.stderr()).toMatch(/^promptgate cannot start: HOST=0\.0\.0\.0 listens beyond loopback .*\n$/);
    }
  });

  it("starts beyond loopback with PROMPTGATE_OPEN_RELAY=true", async () => {
    const gateway = await startNodeGateway(
      { ...beyond, PROMPTGATE_OPEN_RELAY: "true" },
      { logDestination: { write: () => {} } },
    );
    await gateway.close();
  });
});

describe("an unknown PROMPTGATE_* variable at start-up", () => {
  it("is warned of in the log", async () => {
    const lines: string[] = [];
    const gateway = await startNodeGateway(
      { HOST: "127.0.0.1", PORT: "0", PROMPTGATE_DB: "memory", PROMPTGATE_DARIN_SECONDS: "5" },
      { logDestination: { write: (line) => void lines.push(line) } },
    );
    await gateway.close();
    const warning = lines.map((line) => JSON.parse(line)).find((line) => line.event === "unknown_variable");
    expect(warning?.msg).toContain("did you mean PROMPTGATE_DRAIN_SECONDS?");
  });
});
