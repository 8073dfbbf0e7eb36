import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { copyPolicies, editPolicy, tempDatabase, withLimit } from "../support/temp-state.js";

const adminKey = "admin-key-for-reload-under-load";
const calls = 200;
const concurrency = 10;
let harness: GatewayUnderTest;
let folder: string;

beforeAll(async () => {
  folder = copyPolicies();
  harness = await startGatewayUnderTest({
    PROMPTGATE_ADMIN_KEY: adminKey,
    PROMPTGATE_POLICIES: folder,
    PROMPTGATE_DB: tempDatabase(),
    PROMPTGATE_LOG: "silent",
  });
});
afterAll(async () => {
  await harness.close();
  rmSync(folder, { recursive: true, force: true });
});

/** The folder's three contents: the shipped policies (A), A with a wider bounded window (B), and A with a broken file. */
const contents = {
  A: () => {
    rmSync(join(folder, "broken.toml"), { force: true });
    editPolicy(folder, "investigation.bounded.toml", withLimit(20_000));
  },
  B: () => {
    rmSync(join(folder, "broken.toml"), { force: true });
    editPolicy(folder, "investigation.bounded.toml", withLimit(30_000));
  },
  invalid: () => writeFileSync(join(folder, "broken.toml"), "name = \n"),
};
const steps: Array<keyof typeof contents> = ["B", "invalid", "A", "B", "invalid", "A", "B"];

interface CallOutcome {
  status: number;
  ref: string;
  policy: string;
  start: number;
  end: number;
}

interface ReloadOutcome {
  step: keyof typeof contents;
  status: number;
  start: number;
  end: number;
  /** The bounded policy's current ref before the reload and right after it answered. */
  before: string;
  after: string;
}

async function boundedRef(): Promise<string> {
  const response = await fetch(`${harness.gateway.url}/promptgate/policies`);
  const { policies } = (await response.json()) as { policies: Array<{ ref: string; name: string; current: boolean }> };
  return policies.find((policy) => policy.name === "investigation.bounded" && policy.current)?.ref ?? "";
}

async function call(index: number): Promise<CallOutcome> {
  const start = performance.now();
  const response = await fetch(`${harness.gateway.url}/policies/investigation.bounded/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: `call ${index}` }] }),
  });
  await response.arrayBuffer();
  const size = JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "{}") as { policy?: string };
  return {
    status: response.status,
    ref: response.headers.get("x-promptgate-ref") ?? "",
    policy: size.policy ?? "",
    start,
    end: performance.now(),
  };
}

async function reload(step: keyof typeof contents): Promise<ReloadOutcome> {
  const before = await boundedRef();
  contents[step]();
  const start = performance.now();
  const response = await fetch(`${harness.gateway.url}/promptgate/admin/policies/reload`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}` },
  });
  await response.arrayBuffer();
  const end = performance.now();
  return { step, status: response.status, start, end, before, after: await boundedRef() };
}

async function recordOf(ref: string): Promise<CallRecord> {
  const response = await fetch(`${harness.gateway.url}/promptgate/admin/calls/${ref}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  return (await response.json()) as CallRecord;
}

describe("reloading the policies under a steady stream of calls", () => {
  const outcomes: CallOutcome[] = [];
  const reloads: ReloadOutcome[] = [];
  let initial: string;

  beforeAll(async () => {
    initial = await boundedRef();
    let next = 0;
    let completed = 0;
    const worker = async () => {
      while (next < calls) {
        const index = next++;
        outcomes.push(await call(index));
        completed += 1;
      }
    };
    // One reload each time another 25 calls have completed, while the ten workers keep calling.
    const reloader = async () => {
      for (const [index, step] of steps.entries()) {
        while (completed < (index + 1) * 25) await new Promise((resolve) => setTimeout(resolve, 2));
        reloads.push(await reload(step));
      }
    };
    await Promise.all([reloader(), ...Array.from({ length: concurrency }, worker)]);
  }, 120_000);

  it("answers every call", () => {
    expect(outcomes).toHaveLength(calls);
    expect(outcomes.filter((outcome) => outcome.status !== 200)).toEqual([]);
  });

  it("switches on every valid folder and refuses every invalid one, keeping the running set", () => {
    expect(reloads.map((outcome) => [outcome.step, outcome.status])).toEqual(
      steps.map((step) => [step, step === "invalid" ? 422 : 200]),
    );
    for (const outcome of reloads.filter((reload) => reload.step === "invalid")) {
      expect(outcome.after).toBe(outcome.before);
    }
    const refsOf = (step: string) => new Set(reloads.filter((reload) => reload.step === step).map((r) => r.after));
    expect(refsOf("A")).toEqual(new Set([initial]));
    expect(refsOf("B").size).toBe(1);
    expect(refsOf("B").has(initial)).toBe(false);
  });

  it("records for every call a version that was current while it ran", async () => {
    const valid = (outcome: CallOutcome): Set<string> => {
      // The version current when the call began, and that of every reload that overlapped it.
      const endedBefore = reloads.filter((reload) => reload.end <= outcome.start).at(-1);
      const allowed = new Set([endedBefore?.after ?? initial]);
      for (const reload of reloads) {
        if (reload.start < outcome.end && reload.end > outcome.start) allowed.add(reload.after);
      }
      return allowed;
    };
    const served = new Set<string>();
    for (const outcome of outcomes) {
      const record = await recordOf(outcome.ref);
      expect(record.policy).toBe(outcome.policy);
      expect([...valid(outcome)]).toContain(record.policy);
      served.add(record.policy ?? "");
    }
    // Both versions were served: the stream really ran across the switches.
    expect(served.size).toBe(2);
  });
});
