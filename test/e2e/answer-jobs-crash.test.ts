import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";
import { type GatewayProcess, startGatewayProcess, upstreamEnvironment } from "../support/gateway-process.js";
import { tempDatabase } from "../support/temp-state.js";

// An answer job whose gateway process is killed (SIGKILL, no shutdown code runs) while its call waits on the
// provider: after a restart on the same SQLite file, a poll finds it failed, never left running.

let upstream: FakeUpstream;
let gateway: GatewayProcess;
let environment: Record<string, string>;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  environment = { ...upstreamEnvironment(upstream), PROMPTGATE_DB: tempDatabase() };
  gateway = await startGatewayProcess(environment);
});
afterAll(async () => {
  await gateway.kill();
  await upstream.close();
});

const client = () => new OpenAI({ apiKey: "sk-client", baseURL: `${gateway.url}/openai/v1`, maxRetries: 0 });

describe("an answer job across a crash of its gateway", () => {
  it("is failed (internal) at a poll after the restart, once its runner has been silent 20 s", async () => {
    // The provider never answers: the job's call is in flight when the process dies.
    upstream.answerWith(() => {});
    const created = await client().responses.create({ model: "gpt-test", input: "in flight", background: true });
    for (let attempt = 0; attempt < 100 && upstream.received.length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(upstream.received).toHaveLength(1);
    await gateway.kill();
    upstream.answerWith(undefined);
    gateway = await startGatewayProcess(environment);

    const first = (await client().responses.retrieve(created.id)) as OpenAI.Responses.Response & {
      promptgate: { job: { state: string } };
    };
    expect(first.promptgate.job.state).toBe("in_progress");
    let polled = first;
    for (let attempt = 0; attempt < 40 && polled.status === "in_progress"; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      polled = (await client().responses.retrieve(created.id)) as typeof first;
    }
    expect(polled).toMatchObject({ status: "failed", error: { code: "internal" } });
    expect(polled.promptgate.job.state).toBe("failed");
  }, 60_000);
});
