import { describe, expect, it } from "vitest";
import { measure, noCachedPrefix } from "../../src/window/prompt-size.js";
import { boundedPolicy, boundedRef, logicalCall, policyVersion } from "./fixtures.js";

const preflight = { check: "preflight", policy: boundedPolicy, cachedPrefix: noCachedPrefix } as const;
const provider = { check: "provider", policy: boundedPolicy, cachedPrefix: noCachedPrefix } as const;

describe("measure", () => {
  it("reports the check it was asked for", () => {
    expect(measure(logicalCall(), preflight).check).toBe("preflight");
    expect(measure(logicalCall(), provider).check).toBe("provider");
  });

  it("reports the members of the contract's prompt_size, in the contract's order", () => {
    expect(Object.keys(measure(logicalCall(), preflight))).toEqual([
      "check",
      "system_chars",
      "message_chars",
      "tool_chars",
      "schema_chars",
      "other_chars",
      "cache_prefix_chars",
      "media_parts",
      "schema_deduplicated",
      "total_chars",
      "reserve_chars",
      "conservative_total_chars",
      "target_chars",
      "limit_chars",
      "over_target",
      "policy",
    ]);
  });

  it("measures an empty call as zero characters", () => {
    const size = measure(logicalCall(), provider);
    expect(size).toMatchObject({
      system_chars: 0,
      message_chars: 0,
      tool_chars: 0,
      schema_chars: 0,
      cache_prefix_chars: 0,
      media_parts: 0,
      total_chars: 0,
    });
  });

  it("counts every system text in code points as system_chars", () => {
    const size = measure(logicalCall({ system: ["Be brief.", "Grüße 😀"] }), preflight);
    expect(size.system_chars).toBe(9 + 7);
  });

  it("counts every message text in code points as message_chars", () => {
    const size = measure(logicalCall({ messages: ["Hello", "𝄞𝄞", "e\u0301"] }), preflight);
    expect(size.message_chars).toBe(5 + 2 + 2);
  });

  it("counts every tool declaration as its compact JSON in tool_chars", () => {
    const tools = [{ type: "function", function: { name: "lookup" } }, { name: "größe" }];
    const size = measure(logicalCall({ tools }), preflight);
    expect(size.tool_chars).toBe('{"type":"function","function":{"name":"lookup"}}'.length + '{"name":"größe"}'.length);
  });

  it("counts the response schema as its compact JSON in schema_chars", () => {
    const responseSchema = { type: "object", properties: { answer: { type: "string" } } };
    const size = measure(logicalCall({ responseSchema }), preflight);
    expect(size.schema_chars).toBe('{"type":"object","properties":{"answer":{"type":"string"}}}'.length);
  });

  it("counts no schema as zero schema_chars", () => {
    expect(measure(logicalCall(), preflight).schema_chars).toBe(0);
  });

  it("reports media parts in media_parts and not as characters", () => {
    const size = measure(logicalCall({ messages: ["look"], mediaParts: 3 }), preflight);
    expect(size.media_parts).toBe(3);
    expect(size.message_chars).toBe(4);
    expect(size.total_chars).toBe(4);
  });

  it("reports the cached prefix characters of the context and adds them to the total", () => {
    const size = measure(logicalCall({ messages: ["Hi"] }), {
      ...preflight,
      cachedPrefix: { ...noCachedPrefix, chars: 3000 },
    });
    expect(size.cache_prefix_chars).toBe(3000);
    expect(size.total_chars).toBe(3002);
  });

  it("adds system, message, tool, schema and cached prefix characters into total_chars", () => {
    const size = measure(
      logicalCall({ system: ["abc"], messages: ["defg"], tools: [{}], responseSchema: { a: 1 }, mediaParts: 2 }),
      { ...provider, cachedPrefix: { ...noCachedPrefix, chars: 10 } },
    );
    expect(size.total_chars).toBe(3 + 4 + 2 + 7 + 10);
  });

  it("adds the policy's reserve to the preflight's conservative total", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(100)] }), preflight);
    expect(size.reserve_chars).toBe(1500);
    expect(size.conservative_total_chars).toBe(1600);
  });

  it("adds no reserve on the provider check, so its conservative total equals its total", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(100)] }), provider);
    expect(size.reserve_chars).toBe(0);
    expect(size.conservative_total_chars).toBe(100);
  });

  it("reports the policy's target and limit on both checks", () => {
    for (const context of [preflight, provider]) {
      const size = measure(logicalCall(), context);
      expect(size.target_chars).toBe(10000);
      expect(size.limit_chars).toBe(20000);
    }
  });

  it("names the policy version by its ref", () => {
    expect(measure(logicalCall(), preflight).policy).toBe(boundedRef);
  });

  it("is not over target when the total equals the target exactly", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(10000)] }), preflight);
    expect(size.over_target).toBe(false);
  });

  it("is over target when the total is one above the target", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(10001)] }), preflight);
    expect(size.over_target).toBe(true);
  });

  it("is over target on the provider check too when the total is one above the target", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(10001)] }), provider);
    expect(size.over_target).toBe(true);
  });

  it("compares total_chars, not the conservative total, with the target", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(9000)] }), preflight);
    expect(size.conservative_total_chars).toBe(10500);
    expect(size.over_target).toBe(false);
  });

  it("counts the target in code points, so 10,000 emoji are not over a 10,000 target", () => {
    const size = measure(logicalCall({ messages: ["😀".repeat(10000)] }), preflight);
    expect(size.total_chars).toBe(10000);
    expect(size.over_target).toBe(false);
  });

  it("uses the window of the policy it is given", () => {
    const policy = policyVersion({ target_chars: 5, limit_chars: 8, reserve_chars: 2 });
    const size = measure(logicalCall({ messages: ["abcdef"] }), {
      check: "preflight",
      policy,
      cachedPrefix: noCachedPrefix,
    });
    expect(size).toMatchObject({ target_chars: 5, limit_chars: 8, reserve_chars: 2, conservative_total_chars: 8 });
    expect(size.over_target).toBe(true);
  });

  it("reports cache_prefix_estimated only when the cached prefix was estimated", () => {
    expect(measure(logicalCall(), preflight)).not.toHaveProperty("cache_prefix_estimated");
    expect(
      measure(logicalCall(), { ...preflight, cachedPrefix: { ...noCachedPrefix, estimated: false } }),
    ).not.toHaveProperty("cache_prefix_estimated");
    expect(
      measure(logicalCall(), { ...preflight, cachedPrefix: { ...noCachedPrefix, estimated: true } })
        .cache_prefix_estimated,
    ).toBe(true);
  });

  it("does not change the call it measures", () => {
    const responseSchema = { type: "object", properties: { a: { type: "string" } } };
    const call = logicalCall({ system: [JSON.stringify(responseSchema)], responseSchema, tools: [{ name: "t" }] });
    const before = structuredClone(call);
    measure(call, preflight);
    measure(call, provider);
    expect(call).toEqual(before);
  });

  it("reports no deduplication when there is no schema", () => {
    expect(measure(logicalCall({ system: ["{}"] }), preflight).schema_deduplicated).toBe(false);
  });
});
