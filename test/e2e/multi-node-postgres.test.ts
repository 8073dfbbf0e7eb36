import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { type FakeUpstream, startFakeUpstream } from "../support/fake-upstream.js";
import { type GatewayProcess, startGatewayProcess, upstreamEnvironment } from "../support/gateway-process.js";
import { freshDatabase, postgresUrl } from "../support/postgres.js";
import { copyPolicies, editPolicy, withLimit } from "../support/temp-state.js";

// Three gateway processes on one PostgreSQL database, behind no balancer: the client spreads its calls over them,
// and every decision made from state holds across them (issue 18).

const adminKey = "admin-multi-node";

/** A policy whose calls end (deadline) and wait (turn queue) within seconds, so that a dead node's hold runs out. */
const shortPolicy = `
name = "nodes.short"
[window]
enforce = true
target_chars = 10000
limit_chars = 20000
reserve_chars = 0
[upstream]
deadline_seconds = 2
[session]
queue_seconds = 3
`;

let upstream: FakeUpstream;
let nodes: GatewayProcess[] = [];
let refs: { first: string; second: string };
let environment: Record<string, string>;
let folders: { first: string; second: string };

async function policyRef(url: string): Promise<string> {
  const listing = (await (await fetch(`${url}/promptgate/policies`)).json()) as {
    policies: { name: string; ref: string; current: boolean }[];
  };
  const current = listing.policies.find((policy) => policy.name === "investigation.bounded" && policy.current);
  if (current === undefined) throw new Error("investigation.bounded is not served");
  return current.ref;
}

function openai(node: GatewayProcess, policy = "nodes.short"): OpenAI {
  return new OpenAI({ apiKey: "sk-client", baseURL: `${node.url}/policies/${policy}/openai/v1`, maxRetries: 0 });
}

/** Every call record the shared store holds, newest first, a page at a time. */
async function records(gateway: GatewayProcess): Promise<CallRecord[]> {
  const calls: CallRecord[] = [];
  let before = "";
  for (;;) {
    const query = `limit=100${before === "" ? "" : `&before=${before}`}`;
    const answer = await fetch(`${gateway.url}/promptgate/admin/calls?${query}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    const page = (await answer.json()) as { calls: CallRecord[]; next: string | null };
    calls.push(...page.calls);
    if (page.next === null) return calls;
    before = page.next;
  }
}

const node = (index: number): GatewayProcess => nodes[index % nodes.length] as GatewayProcess;

describe.skipIf(postgresUrl === "")("three gateway nodes on one PostgreSQL database", () => {
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    const database = await freshDatabase();
    // Both folders serve nodes.short, so that any node can serve its sessions; they differ in investigation.bounded.
    folders = {
      first: copyPolicies({ "nodes.short.toml": shortPolicy }),
      second: copyPolicies({ "nodes.short.toml": shortPolicy }),
    };
    editPolicy(folders.second, "investigation.bounded.toml", withLimit(25_000));
    environment = { ...upstreamEnvironment(upstream), PROMPTGATE_DB: database, PROMPTGATE_ADMIN_KEY: adminKey };
    // A and C serve the first folder's current investigation.bounded, B the second's: the store holds both.
    nodes = await Promise.all(
      [folders.first, folders.second, folders.first].map((policies) =>
        startGatewayProcess({ ...environment, PROMPTGATE_POLICIES: policies }),
      ),
    );
    refs = { first: await policyRef(node(0).url), second: await policyRef(node(1).url) };
  }, 90_000);
  afterAll(async () => {
    await Promise.all(nodes.map((gateway) => gateway.kill()));
    await upstream?.close();
  });

  it("freezes exactly one version when 200 first calls of a case, pinned to two versions, hit three nodes", async () => {
    expect(refs.first).not.toBe(refs.second);
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, index) => {
        const pinned = index % 2 === 0 ? refs.first : refs.second;
        const response = await fetch(`${node(index).url}/policies/${pinned}/openai/v1/chat/completions`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: "Bearer sk-client",
            "x-promptgate-case": "case-race",
          },
          body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: `call ${index}` }] }),
        });
        await response.arrayBuffer();
        return { pinned, status: response.status };
      }),
    );
    const winners = new Set(answers.filter((answer) => answer.status === 200).map((answer) => answer.pinned));
    expect(winners.size).toBe(1);
    const winner = [...winners][0];
    for (const answer of answers) expect(answer.status).toBe(answer.pinned === winner ? 200 : 409);
    // Every node now serves the case under the winner, named or pinned.
    for (const index of [0, 1, 2]) {
      const response = await fetch(`${node(index).url}/policies/investigation.bounded/openai/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer sk-client",
          "x-promptgate-case": "case-race",
        },
        body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "after" }] }),
      });
      expect(response.status).toBe(200);
      expect(JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "{}").policy).toBe(winner);
    }
  }, 60_000);

  it("counts a cached content created on node A in a call on node B", async () => {
    const gemini = (gateway: GatewayProcess) =>
      new GoogleGenAI({
        apiKey: "g-client",
        httpOptions: { baseUrl: `${gateway.url}/policies/investigation.bounded/gemini` },
      });
    const cache = await gemini(node(0)).caches.create({
      model: "gemini-test",
      config: { contents: [{ role: "user", parts: [{ text: "Kontext ".repeat(500) }] }] },
    });
    const result = await gemini(node(1)).models.generateContent({
      model: "gemini-test",
      contents: "Und nun?",
      config: { cachedContent: cache.name },
    });
    const size = JSON.parse(result.sdkHttpResponse?.headers?.["x-promptgate-prompt-size"] ?? "{}");
    expect(size.cache_prefix_chars).toBe("Kontext ".repeat(500).length);
  }, 30_000);

  it("continues one session alternately on A, B and C, and serializes two turns sent to two nodes at once", async () => {
    let previous = (await openai(node(0)).responses.create({ model: "gpt-4.1", input: "turn 0 on A" })).id;
    for (const index of [1, 2, 0]) {
      const next = await openai(node(index)).responses.create({
        input: `turn on node ${index}`,
        previous_response_id: previous,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      previous = next.id;
    }
    // Two forks of the same turn sent to B and C at once, the provider slow: the second reaches it after the first ended.
    const arrivals: number[] = [];
    const ends: number[] = [];
    upstream.answerWith((_request, response) => {
      arrivals.push(Date.now());
      setTimeout(() => {
        ends.push(Date.now());
        response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "slow and failing", type: "server_error" } }));
      }, 400);
    });
    try {
      await Promise.all(
        [1, 2].map((index) =>
          openai(node(index))
            .responses.create({
              input: `fork on node ${index}`,
              previous_response_id: previous,
            } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
            .catch(() => undefined),
        ),
      );
    } finally {
      upstream.answerWith(undefined);
    }
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]).toBeGreaterThanOrEqual(ends[0] as number);
  }, 60_000);

  it("finds an answer job created on node A when polled on node C", async () => {
    const created = await openai(node(0)).responses.create({ model: "gpt-4.1", input: "a job", background: true });
    let polled = await openai(node(2)).responses.retrieve(created.id);
    for (let attempt = 0; attempt < 50 && polled.status !== "completed"; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      polled = await openai(node(2)).responses.retrieve(created.id);
    }
    expect(polled.status).toBe("completed");
    expect(polled.id).toBe(created.id);
  }, 30_000);

  it("continues a session on another node after the node holding its turn was killed, losing no delivered answer", async () => {
    const first = await openai(node(0))
      .responses.create({ model: "gpt-4.1", input: "before the crash" })
      .withResponse();
    // Node A's turn waits on a provider that never answers; A dies holding the turn.
    upstream.answerWith(() => {});
    void openai(node(0))
      .responses.create({ input: "in flight on A", previous_response_id: first.data.id } as never)
      .catch(() => undefined);
    for (
      let attempt = 0;
      attempt < 200 && upstream.received.at(-1)?.body.includes("in flight on A") !== true;
      attempt++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await node(0).kill();
    upstream.answerWith(undefined);
    // A's hold runs out after its deadline plus the queue time (5 s here); until then another node's turn waits, and
    // one that waits past the queue time is 504 timeout. The client tries again, on the other nodes in turn.
    let next: { data: OpenAI.Responses.Response; response: Response } | undefined;
    const timeouts: number[] = [];
    for (let attempt = 0; attempt < 6 && next === undefined; attempt += 1) {
      try {
        next = await openai(node(1 + (attempt % 2)))
          .responses.create({
            input: "after the crash",
            previous_response_id: first.data.id,
          } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
          .withResponse();
      } catch (error) {
        expect(error).toBeInstanceOf(OpenAI.APIError);
        timeouts.push((error as InstanceType<typeof OpenAI.APIError>).status ?? 0);
      }
    }
    expect(next?.data.output_text.length).toBeGreaterThan(0);
    expect(new Set(timeouts)).toEqual(new Set(timeouts.length === 0 ? [] : [504]));
    // Every answer a client got is on record in the shared store.
    const kept = new Set((await records(node(1))).map((record) => record.ref));
    for (const delivered of [first.response, next?.response]) {
      expect(kept).toContain(delivered?.headers.get("x-promptgate-ref"));
    }
  }, 60_000);
});
