import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { createNodeDeps } from "../../src/runtime/node/node-gateway.js";

const directory = mkdtempSync(join(tmpdir(), "promptgate-record-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe("the call record on Node", () => {
  it("is committed to SQLite before the answer is handed back, not in a later turn", async () => {
    const path = join(directory, "promptgate.db");
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    const deps = await createNodeDeps(
      { PROMPTGATE_DB: path, PROMPTGATE_UPSTREAM_OPENAI: "simulated", OPENAI_API_KEY: "", PROMPTGATE_ADMIN_KEY: "" },
      { logDestination: quiet as never },
    );
    const app = createApp(deps);
    const refs: string[] = [];
    for (let call = 0; call < 3; call++) {
      const response = await app.fetch(
        new Request("http://gateway/openai/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
          body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: `hello ${call}` }] }),
        }),
      );
      expect(response.status).toBe(200);
      refs.push(response.headers.get("x-promptgate-ref") ?? "");
      // Read at once, from another connection, before any later turn of the event loop could commit it.
      const reader = new Database(path, { readonly: true });
      const stored = reader.prepare("SELECT ref FROM calls ORDER BY seq").all() as Array<{ ref: string }>;
      reader.close();
      expect(stored.map((row) => row.ref)).toEqual(refs);
    }
    await deps.store.close();
  });
});
