import { expect } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { JsonObject } from "../../src/json/json-object.js";

/** The GatewayError that `action` throws; fails the test when it throws nothing or something else. */
export function gatewayErrorOf(action: () => unknown): GatewayError {
  try {
    action();
  } catch (error) {
    if (GatewayError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a GatewayError, but nothing was thrown");
}

/**
 * Asserts that `action` is refused as INVALID_REQUEST (400, not retryable) naming `param`, and that
 * the message carries none of the `secrets` (the offending values).
 */
export function expectInvalidRequest(action: () => unknown, param: string, secrets: readonly string[] = []): void {
  const error = gatewayErrorOf(action);
  expect(error.code).toBe("INVALID_REQUEST");
  expect(error.status).toBe(400);
  expect(error.retryable).toBe(false);
  expect(error.details.param).toBe(param);
  for (const secret of secrets) expect(error.message).not.toContain(secret);
}

/** A wire body as the gateway receives it: parsed from JSON text. */
export function fromJsonText(text: string): JsonObject {
  return JSON.parse(text) as JsonObject;
}

/** A wire body built in code, taken through JSON text as it would travel. */
export function wire(body: object): JsonObject {
  return fromJsonText(JSON.stringify(body));
}
