import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

function policiesWith(fileName: string, text: string): string {
  const directory = mkdtempSync(join(tmpdir(), "promptgate-policies-"));
  cpSync("policies", directory, { recursive: true });
  writeFileSync(join(directory, fileName), text);
  return directory;
}

async function start(environment: Record<string, string>): Promise<{ code: number; stderr: string }> {
  try {
    await run("npx", ["tsx", "src/runtime/node/main.ts"], {
      env: { ...process.env, PORT: "0", PROMPTGATE_DB: "memory", ...environment },
      timeout: 20_000,
    });
    return { code: 0, stderr: "" };
  } catch (error) {
    const failure = error as { code: number; stderr: string };
    return { code: failure.code, stderr: failure.stderr };
  }
}

describe("starting the Node gateway", () => {
  it("refuses to start with an invalid policy file, naming the file, the field and the reason", async () => {
    const directory = policiesWith(
      "broken.toml",
      'name = "broken"\n[window]\nenforce = true\ntarget_chars = "ten"\nlimit_chars = 20000\nreserve_chars = 0\n',
    );
    const { code, stderr } = await start({ PROMPTGATE_POLICIES: directory });
    expect(code).toBe(1);
    expect(stderr).toContain("broken.toml");
    expect(stderr).toContain("window.target_chars");
    expect(stderr).toContain("cannot start");
  });

  it("refuses to start when the default policy does not exist", async () => {
    const { code, stderr } = await start({ PROMPTGATE_DEFAULT_POLICY: "no.such.policy" });
    expect(code).toBe(1);
    expect(stderr).toContain("PROMPTGATE_DEFAULT_POLICY");
  });

  it("refuses to start with a port that is not a number, naming the variable", async () => {
    const { code, stderr } = await start({ PORT: "eighty" });
    expect(code).toBe(1);
    expect(stderr).toContain("PORT");
  });
});
