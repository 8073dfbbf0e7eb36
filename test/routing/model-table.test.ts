import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PolicyFileError } from "../../src/policy/policy-file-error.js";
import { modelTableOf, parseModelTable } from "../../src/routing/model-table.js";
import { acceptedLevels, checkedReasoning } from "../../src/routing/reasoning.js";
import { levelOfBudget } from "../../src/surfaces/requested-reasoning.js";
import { surfaces } from "../../src/surfaces/surfaces.js";

function refusal(text: string): PolicyFileError {
  try {
    parseModelTable("models.toml", text, surfaces);
  } catch (error) {
    if (PolicyFileError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("the table was accepted");
}

describe("the model table", () => {
  it("routes by name, then by the longest prefix, then to the default provider, with the name as the provider's id", () => {
    const table = parseModelTable(
      "models.toml",
      `
      [[prefix]]
      prefix = "gemini-"
      provider = "gemini"
      [[prefix]]
      prefix = "gemini-x-"
      provider = "anthropic"
      [model.fast]
      provider = "gemini"
      upstream_model = "gemini-2.5-flash"
      reasoning = ["low", "high"]
      fallback = "claude-haiku-4-5"
      `,
      surfaces,
    );
    expect(table.resolve("fast")).toMatchObject({
      provider: "gemini",
      upstreamModel: "gemini-2.5-flash",
      fallback: "claude-haiku-4-5",
      listed: true,
    });
    expect(table.resolve("gemini-2.5-pro")).toMatchObject({ provider: "gemini", upstreamModel: "gemini-2.5-pro" });
    expect(table.resolve("gemini-x-1").provider).toBe("anthropic");
    expect(table.resolve("gpt-4.1")).toMatchObject({ provider: "openai", upstreamModel: "gpt-4.1", listed: false });
    expect(table.listed().map((entry) => entry.name)).toEqual(["fast"]);
  });

  it("ships a table that routes gemini-* to Gemini and claude-* to Anthropic with no file at all", () => {
    const table = modelTableOf(undefined, surfaces);
    expect(table.resolve("gemini-2.5-flash").provider).toBe("gemini");
    expect(table.resolve("claude-sonnet-4-5").provider).toBe("anthropic");
    expect(table.resolve("gpt-5").provider).toBe("openai");
  });

  it("asks for default_provider where no provider takes every other name", () => {
    const named = surfaces.map((surface) => ({ name: surface.name, shippedModels: undefined }));
    expect(() => parseModelTable("models.toml", "", named)).toThrow(/default_provider/);
    expect(parseModelTable("models.toml", 'default_provider = "gemini"', named).resolve("x").provider).toBe("gemini");
  });

  it("reads the repository's policies/models.toml", () => {
    const table = parseModelTable("policies/models.toml", readFileSync("policies/models.toml", "utf8"), surfaces);
    expect(table.resolve("fast")).toMatchObject({ provider: "gemini", fallback: "claude-haiku-4-5" });
    expect(table.resolve("gpt-5").reasoning).toEqual(["none", "low", "medium", "high", "xhigh"]);
  });

  it.each([
    ['[model.a]\nprovider = "bedrock"', "model.a.provider", "no provider"],
    ['[model.a]\nprovder = "gemini"', "model.a.provder", "did you mean provider?"],
    ['[model.a]\nprovider = "gemini"\nreasoning = ["ultra"]', "model.a.reasoning[0]", "not a reasoning level"],
    ['[model.a]\nprovider = "gemini"\nfallback = "a"', "model.a.fallback", "names the model itself"],
    ['[[prefix]]\nprefix = "g-"\nprovider = "gemini"\nfallback = "g-2"', "prefix[0].fallback", "its own prefix"],
    ["[[prefix]]\nprefix = 3", "prefix[0].prefix", "non-empty string"],
    ['default_provider = "openia"', "default_provider", "did you mean openai?"],
    ["model = [", "(root)", "TOML syntax error"],
  ])("refuses %j at %s", (text, field, reason) => {
    const error = refusal(text);
    expect(error.field).toBe(field);
    expect(error.message).toContain(reason);
    expect(error.message.startsWith("models.toml")).toBe(true);
  });
});

describe("the reasoning allowlist", () => {
  const entry = modelTableOf(undefined, surfaces).resolve("gemini-2.5-flash");
  const limited = { ...entry, reasoning: ["low", "high"] as const };

  it("takes the allowlist intersected with the model's levels", () => {
    expect(acceptedLevels(entry)).toEqual(["none", "low", "medium", "high", "xhigh", "max"]);
    expect(acceptedLevels(limited)).toEqual(["low", "high"]);
    expect(checkedReasoning({ level: "high", param: "reasoning_effort" }, limited)).toBe("high");
    expect(checkedReasoning(undefined, limited)).toBeUndefined();
  });

  it("refuses a level outside either, naming the field and the accepted levels, never a long value", () => {
    expect(() => checkedReasoning({ level: "medium", param: "reasoning_effort" }, limited)).toThrow(
      /'reasoning_effort' = "medium" is not a reasoning level this model supports; use one of low, high/,
    );
    expect(() => checkedReasoning({ level: "minimal", param: "reasoning.effort" }, entry)).toThrow(
      /"minimal" is not a reasoning level the gateway accepts/,
    );
    const long = "x".repeat(500);
    let message = "";
    try {
      checkedReasoning({ level: long, param: "reasoning_effort" }, entry);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("this value");
    expect(message).not.toContain(long);
  });
});

describe("a provider's own thinking budget as a level", () => {
  const budgets = { none: 0, low: 1024, medium: 8192, high: 16384, xhigh: 24576, max: 32768 };

  it("reads a budget as the level of the smallest budget that holds it", () => {
    expect(levelOfBudget(budgets, 0)).toBe("none");
    expect(levelOfBudget(budgets, 1)).toBe("low");
    expect(levelOfBudget(budgets, 1024)).toBe("low");
    expect(levelOfBudget(budgets, 1025)).toBe("medium");
    expect(levelOfBudget(budgets, 32768)).toBe("max");
    expect(levelOfBudget(budgets, -1)).toBe("max");
    expect(levelOfBudget(budgets, 32769)).toBe("budget over max");
  });
});
