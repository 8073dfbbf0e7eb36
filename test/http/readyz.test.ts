import { describe, expect, it } from "vitest";
import { memoryStore } from "../../src/store/memory-store.js";
import { appUnderTest } from "../support/app-under-test.js";

// Readiness follows the store where the store is a server of its own (PostgreSQL): a node that cannot reach it takes
// no calls until it can again. (test/http runs on Node and in workerd.)

describe("GET /readyz", () => {
  it("is 503 store_unreachable while the store cannot be reached, and ready again once it can", async () => {
    let reachable = false;
    const store = { ...memoryStore(), reachable: async () => reachable };
    const { app } = await appUnderTest({}, store);
    const down = await app.request("/readyz");
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: "store_unreachable" });
    reachable = true;
    const up = await app.request("/readyz");
    expect(up.status).toBe(200);
    expect(await up.json()).toEqual({ status: "ready" });
  });
});
