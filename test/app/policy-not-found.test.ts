import { beforeAll, describe, expect, it } from "vitest";
import { appUnderTest, type GatewayApp } from "../support/app-under-test.js";

let app: GatewayApp;
beforeAll(async () => {
  ({ app } = await appUnderTest());
});

const known =
  "No known policy version matches the requested policy reference. Known policies: case.interpretation, default, investigation.bounded, investigation.bounded.v1.";

describe("POLICY_NOT_FOUND in the answer", () => {
  it("lists the known policy names in the surface's native error, without the requested reference", async () => {
    const response = await app.request(`/policies/no-such-policy-zz9/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
      body: JSON.stringify({ model: "gpt-4.1-mini", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(404);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ error: { message: known, promptgate: { code: "POLICY_NOT_FOUND" } } });
    expect(text).not.toContain("no-such-policy-zz9");
    // Names only: nothing of a policy's content.
    expect(text).not.toContain("limit_chars");
  });

  it("lists them for an unknown pinned version too, on every surface", async () => {
    const response = await app.request(`/policies/default@0123456789ab/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-client" },
      body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { message: known } });
  });
});
