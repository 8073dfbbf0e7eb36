import { describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { createNodeDeps } from "../../src/runtime/node/node-gateway.js";

const record: CallRecord = {
  ref: "ref_00000000000000aa",
  time: new Date(0).toISOString(),
  policy: undefined,
  case: undefined,
  call_label: undefined,
  surface: "openai",
  provider: "simulated",
  model: undefined,
  route: "/chat/completions",
  preflight: undefined,
  provider_check: undefined,
  decision: "failed",
  upstream_status: undefined,
  validation: null,
  repair: undefined,
  projection_omitted: [],
  error: undefined,
};

describe("a call record the store cannot keep on Node", () => {
  it("is logged once as an internal error of its call, keys redacted, and the call goes on", async () => {
    const lines: string[] = [];
    const deps = await createNodeDeps(
      { PROMPTGATE_DB: "memory", OPENAI_API_KEY: "sk-server-key-0123456789", PROMPTGATE_ADMIN_KEY: "" },
      { logDestination: { write: (line: string) => void lines.push(line) } },
    );
    deps.store.appendCall = () => Promise.reject(new Error("disk full while writing sk-server-key-0123456789"));
    await expect(deps.recordCall(record)).resolves.toBeUndefined();
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ event: "internal_error", ref: record.ref, during: "record", class: "Error" });
    expect(lines[0]).not.toContain("sk-server-key-0123456789");
    await deps.store.close();
  });
});
