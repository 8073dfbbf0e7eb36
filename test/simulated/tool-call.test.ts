import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { namesWord, simulatedToolCall, type ToolRequest } from "../../src/simulated/tool-call.js";

const weather = {
  name: "lookup_weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};
const clock = { name: "current_time", parameters: { type: "object", properties: {} } };

function request(overrides: Partial<ToolRequest>): ToolRequest {
  return {
    tools: [weather, clock],
    choice: { kind: "auto" },
    endsWithToolResult: false,
    lastUserText: "",
    seed: 7,
    ...overrides,
  };
}

describe("when the simulated provider answers with a tool call", () => {
  it("calls the tool the last user text names, with arguments faked from its schema", () => {
    const call = simulatedToolCall(request({ lastUserText: "Please call lookup_weather for Berlin." }));
    expect(call?.name).toBe("lookup_weather");
    expect(typeof JSON.parse(call?.arguments ?? "").city).toBe("string");
  });

  it("answers with text when no tool is named, under `none`, and once a tool's result came back", () => {
    expect(simulatedToolCall(request({ lastUserText: "What is the weather?" }))).toBeUndefined();
    expect(simulatedToolCall(request({ lastUserText: "lookup_weather", choice: { kind: "none" } }))).toBeUndefined();
    expect(
      simulatedToolCall(request({ lastUserText: "lookup_weather", choice: { kind: "any" }, endsWithToolResult: true })),
    ).toBeUndefined();
    expect(simulatedToolCall(request({ tools: [], choice: { kind: "any" } }))).toBeUndefined();
  });

  it("calls the first tool when any is required, the named one when one is", () => {
    expect(simulatedToolCall(request({ choice: { kind: "any" } }))?.name).toBe("lookup_weather");
    expect(simulatedToolCall(request({ choice: { kind: "named", name: "current_time" } }))).toEqual({
      name: "current_time",
      arguments: "{}",
    });
    expect(simulatedToolCall(request({ choice: { kind: "named", name: "unknown" } }))).toBeUndefined();
  });

  it("sends `{}` for a tool without a usable parameter schema", () => {
    const bare = { name: "ping", parameters: undefined };
    expect(simulatedToolCall(request({ tools: [bare], choice: { kind: "any" } }))?.arguments).toBe("{}");
    const notObject = { name: "ping", parameters: { type: "string" } };
    expect(simulatedToolCall(request({ tools: [notObject], choice: { kind: "any" } }))?.arguments).toBe("{}");
  });
});

describe("namesWord", () => {
  /** The rule stated apart: the word, bounded on each side by the text's end or a character outside names. */
  function oracle(text: string, word: string): boolean {
    if (word === "") return false;
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(?<![\\p{L}\\p{N}_-])${escaped}(?![\\p{L}\\p{N}_-])`, "u").test(text);
  }

  it("finds a tool's name only as a whole word", () => {
    expect(namesWord("use lookup_weather now", "lookup_weather")).toBe(true);
    expect(namesWord("lookup_weather", "lookup_weather")).toBe(true);
    expect(namesWord("lookup_weather_v2", "lookup_weather")).toBe(false);
    expect(namesWord("mylookup_weather", "lookup_weather")).toBe(false);
    expect(namesWord("(lookup_weather)", "lookup_weather")).toBe(true);
    expect(namesWord("xlookup_weather lookup_weather", "lookup_weather")).toBe(true);
  });

  it("agrees with a regular expression of the rule on generated texts", () => {
    const pieces = fc.constantFrom("get", "_", "-", " ", "a", "ü", "1", ".", "(", "get_x", "😀", "\n");
    const text = fc.array(pieces, { maxLength: 12 }).map((parts) => parts.join(""));
    const word = fc.array(fc.constantFrom("get", "_", "x", "-", "a", "1"), { maxLength: 3 }).map((p) => p.join(""));
    fc.assert(
      fc.property(text, word, (haystack, needle) => namesWord(haystack, needle) === oracle(haystack, needle)),
      { numRuns: 20_000 },
    );
  });
});
