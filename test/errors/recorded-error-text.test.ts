import { describe, expect, it } from "vitest";
import { classifyUpstreamAnswer } from "../../src/errors/classify.js";
import { maskQuoted } from "../../src/errors/mask-quoted.js";
import { recordedErrorText } from "../../src/errors/recorded-error-text.js";
import { openaiSurface } from "../../src/surfaces/openai/openai-surface.js";

const input = "PROMPT-INPUT-7f3e9a";

describe("masking quoted parts of a provider's message", () => {
  it.each([
    ["single quotes", `Invalid value: '${input}'. Use text.`, "Invalid value: [quoted]. Use text."],
    [
      "double quotes",
      `Unknown name "${input}" at x: Cannot find field.`,
      "Unknown name [quoted] at x: Cannot find field.",
    ],
    ["backticks", `The model \`${input}\` does not exist`, "The model [quoted] does not exist"],
    [
      "typographic quotes",
      `Value “${input}” and ‘${input}’ and «${input}»`,
      "Value [quoted] and [quoted] and [quoted]",
    ],
  ])("masks %s", (_name, text, expected) => {
    expect(maskQuoted(text)).toBe(expected);
  });

  it("masks from the first quote to the last, so a value holding that quote is masked whole", () => {
    const masked = maskQuoted(`Invalid 'a' given: 'it's ${input} 'n' more' here`);
    expect(masked).toBe("Invalid [quoted] here");
  });

  it("masks to the end after a quote that never closes", () => {
    expect(maskQuoted(`Invalid value "${input} (truncated`)).toBe("Invalid value [quoted]");
  });

  it("leaves apostrophes inside words alone", () => {
    const text = "You didn't provide an API key. The provider's answer is not JSON.";
    expect(maskQuoted(text)).toBe(text);
  });
});

describe("what the call record keeps of a provider's error text", () => {
  it("keeps OpenAI's type and code and the message without the quoted value", () => {
    const body = {
      error: {
        message: `Invalid value for 'messages[0].role': '${input}'.`,
        type: "invalid_request_error",
        param: `messages.[0].${input}`,
        code: "invalid_value",
      },
    };
    expect(recordedErrorText(JSON.stringify(body), [])).toBe(
      "type=invalid_request_error code=invalid_value: Invalid value for [quoted].",
    );
  });

  it("keeps Gemini's code and status and leaves out its details", () => {
    const body = {
      error: {
        code: 400,
        message: `Invalid JSON payload received. Unknown name "${input}": Cannot find field.`,
        status: "INVALID_ARGUMENT",
        details: [{ fieldViolations: [{ field: input, description: input }] }],
      },
    };
    expect(recordedErrorText(JSON.stringify([body]), [])).toBe(
      "code=400 status=INVALID_ARGUMENT: Invalid JSON payload received. Unknown name [quoted]: Cannot find field.",
    );
  });

  it("keeps Anthropic's error type, not the envelope's", () => {
    const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    expect(recordedErrorText(JSON.stringify(body), [])).toBe("type=overloaded_error: Overloaded");
  });

  it("keeps a compatible server's validation messages, never the input it echoes", () => {
    const body = {
      detail: [{ type: "missing", loc: ["body", "model"], msg: "Field required", input: { prompt: input } }],
    };
    expect(recordedErrorText(JSON.stringify(body), [])).toBe("Field required");
  });

  it("keeps no free text in place of a type or code", () => {
    const body = { error: { type: `${input} with spaces`, code: "x".repeat(65), message: "Bad request" } };
    expect(recordedErrorText(JSON.stringify(body), [])).toBe("Bad request");
  });

  it("masks quoted parts of a text that is not JSON and redacts keys", () => {
    const text = `<html><a href="/${input}">Gateway error</a> key sk-proj-abcdef123456 'x'</html>`;
    const recorded = recordedErrorText(text, []);
    expect(recorded).not.toContain(input);
    expect(recorded).not.toContain("sk-proj-abcdef123456");
  });

  it("redacts a known secret even where the provider put it outside quotes", () => {
    const body = { error: { message: "Incorrect API key provided: gw-secret-key-0001." } };
    expect(recordedErrorText(JSON.stringify(body), ["gw-secret-key-0001"])).toBe(
      "Incorrect API key provided: [redacted].",
    );
  });

  it("is what a classified failure carries for the record", () => {
    const body = { error: { message: `Invalid 'input': '${input}'`, type: "invalid_request_error" } };
    const error = classifyUpstreamAnswer(
      { status: 400, headers: {}, text: JSON.stringify(body) },
      { recognise: openaiSurface.classifyError, now: 0, secrets: [] },
    );
    expect(error.details.upstreamError?.text).toBe("type=invalid_request_error: Invalid [quoted]");
  });
});
