import { ApiError, GoogleGenAI, type Model } from "@google/genai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeGateway, startNodeGateway } from "../../src/runtime/node/node-gateway.js";
import { createSimulatedProvider, simulatedOrigin } from "../../src/simulated/simulated-provider.js";
import { simulatedGeminiModels } from "../../src/surfaces/gemini/simulated/models.js";

// Gemini's models.list and models.get on the simulated provider, as `@google/genai` calls them through the gateway.

let gateway: NodeGateway;
let gemini: GoogleGenAI;

beforeAll(async () => {
  gateway = await startNodeGateway(
    { PORT: "0", HOST: "127.0.0.1", PROMPTGATE_DB: "memory", PROMPTGATE_UPSTREAM_GEMINI: "simulated" },
    { logDestination: { write: () => undefined } },
  );
  gemini = new GoogleGenAI({ apiKey: "simulated", httpOptions: { baseUrl: `${gateway.url}/gemini` } });
}, 60_000);

afterAll(async () => {
  await gateway.close();
});

async function listed(pageSize?: number): Promise<Model[]> {
  const models: Model[] = [];
  for await (const model of await gemini.models.list(pageSize === undefined ? {} : { config: { pageSize } })) {
    models.push(model);
  }
  return models;
}

describe("the simulated Gemini models", () => {
  it("are listed through the gateway by models.list()", async () => {
    const models = await listed();
    expect(models.map((model) => model.name)).toEqual(simulatedGeminiModels.map((id) => `models/${id}`));
    expect(models[0]).toMatchObject({
      displayName: "promptgate-simulated",
      inputTokenLimit: 1_048_576,
      outputTokenLimit: 65_536,
      supportedActions: ["generateContent", "countTokens", "createCachedContent"],
    });
  });

  it("are listed page by page with pageSize", async () => {
    expect((await listed(2)).map((model) => model.name)).toEqual(simulatedGeminiModels.map((id) => `models/${id}`));
  });

  it("are got one by one by models.get()", async () => {
    const model = await gemini.models.get({ model: "promptgate-simulated-mini" });
    expect(model.name).toBe("models/promptgate-simulated-mini");
  });

  it("answer an unknown model with Gemini's 404", async () => {
    const failure = await gemini.models.get({ model: "no-such-model" }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).status).toBe(404);
  });

  it("come in Gemini's ListModels wire shape, without a page token on the last page", async () => {
    const simulated = createSimulatedProvider();
    const first = await simulated.fetch(new Request(`${simulatedOrigin}/gemini/v1beta/models?pageSize=2`));
    const firstPage = (await first.json()) as { models: Record<string, unknown>[]; nextPageToken?: string };
    expect(firstPage.models).toHaveLength(2);
    expect(firstPage.models[0]).toMatchObject({
      name: "models/promptgate-simulated",
      supportedGenerationMethods: ["generateContent", "countTokens", "createCachedContent"],
    });
    expect(firstPage.nextPageToken).toBe("2");
    const last = await simulated.fetch(
      new Request(`${simulatedOrigin}/gemini/v1beta/models?pageSize=2&pageToken=${firstPage.nextPageToken}`),
    );
    expect(await last.json()).toEqual({
      models: [expect.objectContaining({ name: "models/promptgate-simulated-json" })],
    });
  });

  it("refuses a page size outside 0 to 1000 as Gemini does", async () => {
    const simulated = createSimulatedProvider();
    const response = await simulated.fetch(new Request(`${simulatedOrigin}/gemini/v1beta/models?pageSize=1001`));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { status: string } }).error.status).toBe("INVALID_ARGUMENT");
  });
});
