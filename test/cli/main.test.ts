import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { main } from "../../src/runtime/node/cli/main.js";
import type { ReplayReport } from "../../src/runtime/node/cli/replay.js";
import { undiciTransport } from "../../src/runtime/node/undici-transport.js";
import { createSimulatedProvider } from "../../src/simulated/simulated-provider.js";
import { fetchTransport, routeByOrigin } from "../../src/transport/fetch-transport.js";
import { capture } from "../support/captured-io.js";

// Every way the gateway builds a transport, watched: replay must construct none of them.
vi.mock("../../src/transport/fetch-transport.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/transport/fetch-transport.js")>();
  return { ...original, fetchTransport: vi.fn(original.fetchTransport), routeByOrigin: vi.fn(original.routeByOrigin) };
});
vi.mock("../../src/runtime/node/undici-transport.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/runtime/node/undici-transport.js")>();
  return { ...original, undiciTransport: vi.fn(original.undiciTransport) };
});
vi.mock("../../src/simulated/simulated-provider.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/simulated/simulated-provider.js")>();
  return { ...original, createSimulatedProvider: vi.fn(original.createSimulatedProvider) };
});

async function storedFile(name: string, text: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "promptgate-cli-")), name);
  await writeFile(path, text);
  return path;
}

const chatBody = { model: "gpt-4o", messages: [{ role: "user", content: "Hello" }] };
const geminiBody = { contents: [{ role: "user", parts: [{ text: "Hello" }] }] };

afterEach(() => {
  vi.restoreAllMocks();
});

describe("promptgate replay (in process)", () => {
  it("creates no transport, no simulated provider and calls no fetch while replaying", async () => {
    vi.clearAllMocks();
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const file = await storedFile("stored.json", JSON.stringify([chatBody, geminiBody]));
    const output = capture();
    const code = await main(["replay", "--policy", "investigation.bounded", file], output.io);
    expect(code).toBe(0);
    expect((JSON.parse(output.stdout()) as ReplayReport).summary.passing).toBe(2);
    expect(vi.mocked(fetchTransport)).not.toHaveBeenCalled();
    expect(vi.mocked(routeByOrigin)).not.toHaveBeenCalled();
    expect(vi.mocked(undiciTransport)).not.toHaveBeenCalled();
    expect(vi.mocked(createSimulatedProvider)).not.toHaveBeenCalled();
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("exits 2 naming a file it cannot read", async () => {
    const missing = join(tmpdir(), "promptgate-no-such-file.json");
    const output = capture();
    expect(await main(["replay", "--policy", "investigation.bounded", missing], output.io)).toBe(2);
    expect(output.stderr()).toContain(missing);
    expect(output.stdout()).toBe("");
  });

  it("exits 2 naming a file that is not JSON", async () => {
    const file = await storedFile("broken.jsonl", `${JSON.stringify(chatBody)}\nnot json\n`);
    const output = capture();
    expect(await main(["replay", "--policy", "investigation.bounded", file], output.io)).toBe(2);
    expect(output.stderr()).toContain(`${file}, line 2 is not valid JSON`);
    expect(output.stderr()).not.toMatch(/\n\s+at /);
  });

  it("exits 2 when --policy or the files are missing, or an option is unknown", async () => {
    const file = await storedFile("stored.json", JSON.stringify(chatBody));
    for (const args of [
      ["replay", file],
      ["replay", "--policy", "default"],
      ["replay", "--verbose", file],
    ]) {
      const output = capture();
      expect(await main(args, output.io)).toBe(2);
      expect(output.stderr()).toContain("Usage: promptgate replay");
    }
  });

  it("reads policies from PROMPTGATE_POLICIES", async () => {
    const file = await storedFile("stored.json", JSON.stringify(chatBody));
    const output = capture({ PROMPTGATE_POLICIES: join(tmpdir(), "promptgate-no-such-folder") });
    expect(await main(["replay", "--policy", "default", file], output.io)).toBe(2);
    expect(output.stderr()).toContain("promptgate-no-such-folder");
  });

  it("prints the replay help on stdout and exits 0", async () => {
    const output = capture();
    expect(await main(["replay", "--help"], output.io)).toBe(0);
    expect(output.stdout()).toContain("Usage: promptgate replay --policy NAME[@HASH] FILE...");
  });
});

describe("promptgate", () => {
  it("prints its help on stdout, naming every command and the environment, and exits 0", async () => {
    for (const flag of ["--help", "-h", "help"]) {
      const output = capture();
      expect(await main([flag], output.io)).toBe(0);
      for (const text of ["promptgate [serve]", "promptgate replay", "promptgate init", "--version", "PROMPTGATE_DB"]) {
        expect(output.stdout()).toContain(text);
      }
    }
  });

  it("prints the package's version for --version", async () => {
    const output = capture();
    expect(await main(["--version"], output.io)).toBe(0);
    expect(output.stdout()).toBe(`${packageJson.version}\n`);
  });

  it("prints the usage on stderr and exits 2 for an unknown command or option, without starting", async () => {
    for (const args of [["toString"], ["--port", "80"], ["--version", "now"], ["serve", "--port"], ["serve", "now"]]) {
      const output = capture();
      expect(await main(args, output.io)).toBe(2);
      expect(output.stderr()).toContain("Usage:\n  promptgate [serve]");
      expect(output.stdout()).toBe("");
    }
  });

  it("names the unknown option or command it refuses", async () => {
    const output = capture();
    await main(["--verbose"], output.io);
    expect(output.stderr()).toMatch(/^promptgate: unknown option "--verbose"\./);
  });
});
