import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { PromptSize } from "../../src/errors/prompt-size.js";
import { enforceWindow, withinWindow } from "../../src/window/check.js";
import { type MeasureContext, measure, noCachedPrefix } from "../../src/window/prompt-size.js";
import { gatewayErrorOf } from "../surfaces/gateway-error-of.js";
import { boundedPolicy, boundedRef, logicalCall, policyVersion } from "./fixtures.js";

const preflight: MeasureContext = { check: "preflight", policy: boundedPolicy, cachedPrefix: noCachedPrefix };
const provider: MeasureContext = { check: "provider", policy: boundedPolicy, cachedPrefix: noCachedPrefix };

/** The size of a call whose only content is one message of `chars` code points. */
function sizeOf(chars: number, context: MeasureContext, unit = "x"): PromptSize {
  return measure(logicalCall({ messages: [unit.repeat(chars)] }), context);
}

describe("withinWindow", () => {
  it("accepts a conservative total equal to the limit", () => {
    expect(withinWindow(sizeOf(18500, preflight))).toBe(true);
  });

  it("refuses a conservative total one above the limit", () => {
    expect(withinWindow(sizeOf(18501, preflight))).toBe(false);
  });

  it("accepts an empty call", () => {
    expect(withinWindow(sizeOf(0, preflight))).toBe(true);
  });
});

describe("enforceWindow on the preflight check", () => {
  it("passes when the conservative total equals the limit (total = limit - reserve)", () => {
    const size = sizeOf(18500, preflight);
    expect(size.conservative_total_chars).toBe(20000);
    expect(() => enforceWindow(size, boundedPolicy)).not.toThrow();
  });

  it("throws INVESTIGATION_PROMPT_LIMIT when the conservative total is one above the limit", () => {
    const size = sizeOf(18501, preflight);
    const error = gatewayErrorOf(() => enforceWindow(size, boundedPolicy));
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.code).toBe("INVESTIGATION_PROMPT_LIMIT");
  });

  it("answers the limit with status 400", () => {
    expect(gatewayErrorOf(() => enforceWindow(sizeOf(18501, preflight), boundedPolicy)).status).toBe(400);
  });

  it("marks the limit as not retryable", () => {
    expect(gatewayErrorOf(() => enforceWindow(sizeOf(18501, preflight), boundedPolicy)).retryable).toBe(false);
  });

  it("attaches the measured preflight prompt_size to the error", () => {
    const size = sizeOf(18501, preflight);
    const error = gatewayErrorOf(() => enforceWindow(size, boundedPolicy));
    expect(error.details.promptSize).toBe(size);
    expect(error.details.promptSize?.check).toBe("preflight");
  });

  it("counts the window in code points, so 18,500 emoji still pass", () => {
    const size = sizeOf(18500, preflight, "😀");
    expect(size.total_chars).toBe(18500);
    expect(() => enforceWindow(size, boundedPolicy)).not.toThrow();
  });

  it("counts the cached prefix against the window", () => {
    const size = measure(logicalCall({ messages: ["x"] }), {
      ...preflight,
      cachedPrefix: { ...noCachedPrefix, chars: 18500 },
    });
    expect(() => enforceWindow(size, boundedPolicy)).toThrow(GatewayError);
  });

  it("lets a call over the target but inside the limit pass", () => {
    const size = sizeOf(15000, preflight);
    expect(size.over_target).toBe(true);
    expect(() => enforceWindow(size, boundedPolicy)).not.toThrow();
  });
});

describe("enforceWindow on the provider check", () => {
  it("passes when the total equals the limit, with no reserve added", () => {
    const size = sizeOf(20000, provider);
    expect(size.conservative_total_chars).toBe(20000);
    expect(() => enforceWindow(size, boundedPolicy)).not.toThrow();
  });

  it("throws INVESTIGATION_PROMPT_LIMIT with status 400 when the total is one above the limit", () => {
    const error = gatewayErrorOf(() => enforceWindow(sizeOf(20001, provider), boundedPolicy));
    expect(error.code).toBe("INVESTIGATION_PROMPT_LIMIT");
    expect(error.status).toBe(400);
    expect(error.retryable).toBe(false);
  });

  it("attaches the provider prompt_size to the error", () => {
    const size = sizeOf(20001, provider);
    const error = gatewayErrorOf(() => enforceWindow(size, boundedPolicy));
    expect(error.details.promptSize).toBe(size);
    expect(error.details.promptSize?.check).toBe("provider");
  });

  it("passes a call that the preflight refuses only because of the reserve", () => {
    const call = logicalCall({ messages: ["x".repeat(19000)] });
    expect(() => enforceWindow(measure(call, preflight), boundedPolicy)).toThrow(GatewayError);
    expect(() => enforceWindow(measure(call, provider), boundedPolicy)).not.toThrow();
  });
});

describe("enforceWindow under a measure-only policy", () => {
  const measureOnly = policyVersion({ enforce: false });

  it("never throws on the preflight check, however large the call", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(100000)] }), { ...preflight, policy: measureOnly });
    expect(withinWindow(size)).toBe(false);
    expect(() => enforceWindow(size, measureOnly)).not.toThrow();
  });

  it("never throws on the provider check, however large the call", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(100000)] }), { ...provider, policy: measureOnly });
    expect(() => enforceWindow(size, measureOnly)).not.toThrow();
  });

  it("still measures and reports the call as over target", () => {
    const size = measure(logicalCall({ messages: ["x".repeat(100000)] }), { ...preflight, policy: measureOnly });
    expect(size.total_chars).toBe(100000);
    expect(size.over_target).toBe(true);
  });
});

describe("the INVESTIGATION_PROMPT_LIMIT message", () => {
  const secretText = "Confidential witness statement of Mrs. Example about the account 4711. ";

  function limitError(context: MeasureContext): GatewayError {
    const call = logicalCall({
      system: [secretText],
      messages: [secretText.repeat(300)],
      tools: [{ name: "secret_tool_name" }],
      responseSchema: { type: "object", description: "secret schema description" },
    });
    return gatewayErrorOf(() => enforceWindow(measure(call, context), boundedPolicy));
  }

  it("contains no prompt, tool or schema text on the preflight check", () => {
    const message = limitError(preflight).message;
    for (const fragment of ["Confidential", "witness", "4711", "secret_tool_name", "secret schema"]) {
      expect(message).not.toContain(fragment);
    }
  });

  it("contains no prompt, tool or schema text on the provider check", () => {
    const message = limitError(provider).message;
    for (const fragment of ["Confidential", "witness", "4711", "secret_tool_name", "secret schema"]) {
      expect(message).not.toContain(fragment);
    }
  });

  it("states the measured size, the limit and the policy version", () => {
    const size = sizeOf(18501, preflight);
    const message = gatewayErrorOf(() => enforceWindow(size, boundedPolicy)).message;
    expect(message).toContain("20001");
    expect(message).toContain("20000");
    expect(message).toContain(boundedRef);
  });
});
