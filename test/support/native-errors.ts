import { expect } from "vitest";

/** The shape of a call's ref (`x-promptgate-ref`). */
export const refPattern = /^ref_[0-9a-f]{16}$/;

/** The surfaces whose native error shapes the checks below know. */
export type ErrorSurface = "openai" | "gemini" | "anthropic";

/** Asserts a body is the surface's native error for `code` and returns its `promptgate` member. */
export const expectNativeBody: Record<
  ErrorSurface,
  (body: unknown, response: Response, code: string) => Record<string, unknown>
> = {
  openai(body, response, code) {
    const error = (body as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ message: expect.any(String), type: expect.any(String), code });
    expect(error).toHaveProperty("param");
    expect(response.headers.get("x-request-id")).toBe(response.headers.get("x-promptgate-ref"));
    return error.promptgate as Record<string, unknown>;
  },
  gemini(body, response, code) {
    const error = (body as { error: Record<string, unknown> }).error;
    expect(error).toMatchObject({ code: response.status, status: expect.stringMatching(/^[A-Z_]+$/) });
    expect(error.message).toEqual(expect.any(String));
    expect(error.details).toEqual([
      expect.objectContaining({ "@type": expect.stringContaining("ErrorInfo"), reason: code }),
    ]);
    return error.promptgate as Record<string, unknown>;
  },
  anthropic(body, response, code) {
    const native = body as { type: string; error: Record<string, unknown>; request_id: string };
    const ref = response.headers.get("x-promptgate-ref");
    expect(native.type).toBe("error");
    expect(native.error).toMatchObject({ type: expect.any(String), message: expect.any(String), code });
    expect(native.request_id).toBe(ref);
    expect(response.headers.get("request-id")).toBe(ref);
    return native.error.promptgate as Record<string, unknown>;
  },
};

/** Asserts a gateway error in the surface's native shape (status, headers, body) and returns its raw text. */
export async function expectNativeError(
  surface: ErrorSurface,
  response: Response,
  status: number,
  code: string,
  retryable = false,
): Promise<string> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const ref = response.headers.get("x-promptgate-ref");
  expect(ref).toMatch(refPattern);
  if (retryable) expect(response.headers.get("x-should-retry")).not.toBe("false");
  else expect(response.headers.get("x-should-retry")).toBe("false");
  const text = await response.text();
  const promptgate = expectNativeBody[surface](JSON.parse(text), response, code);
  expect(promptgate).toMatchObject({ code, ref, retryable });
  return text;
}
