import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { principalOf } from "../../src/pipeline/principal.js";
import { memoryStore } from "../../src/store/memory-store.js";

describe("a caller's principal", () => {
  it("is the same with Node's synchronous HMAC as with WebCrypto's, for any credential, and differs per store", async () => {
    const store = memoryStore();
    const nodeHmac = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex");
    for (const credential of [undefined, "", "sk-alice", "gk-😀-é", "x".repeat(5_000)]) {
      const web = await principalOf(store, credential);
      expect(web).toMatch(/^[0-9a-f]{64}$/);
      expect(await principalOf(store, credential, nodeHmac)).toBe(web);
    }
    expect(await principalOf(memoryStore(), "sk-alice", nodeHmac)).not.toBe(await principalOf(store, "sk-alice"));
  });
});
