import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { appUnderTest } from "../support/app-under-test.js";
import { smallName, smallText } from "./support/gen.js";
import { type JsonObject, openaiResponsesRules, oracleCount } from "./support/oracle.js";

// Multi-turn sessions against the independent oracle (support/oracle.ts, which shares no code with the gateway): for
// every turn of a `previous_response_id` chain, what the gateway reports as the cached prefix is at least what the
// provider holds by then, every earlier turn's input and everything it answered, each counted by the oracle; and the
// turn's total is at least that plus what the turn sends. Input and output items are generated with the members the
// gateway once left out of a stored turn: encrypted reasoning and compaction items, ids, annotations, tool calls and
// their arguments, kinds it does not know.

const id = (prefix: string) => smallName.map((name) => `${prefix}_${name}`);

const inputItem: fc.Arbitrary<JsonObject> = fc.oneof(
  fc.record({ role: fc.constantFrom("user", "assistant", "developer"), content: smallText }),
  fc.record({
    type: fc.constant("reasoning"),
    id: id("rs"),
    summary: fc.constant<JsonObject[]>([]),
    encrypted_content: smallText,
  }),
  fc.record({ type: fc.constant("compaction"), id: id("cmp"), encrypted_content: smallText }),
  fc.record({ type: fc.constant("function_call_output"), call_id: id("call"), output: smallText }),
  fc.record({ type: fc.constant("x_future_item"), data: smallText }),
);

const outputItem: fc.Arbitrary<JsonObject> = fc.oneof(
  fc.record({
    type: fc.constant("message"),
    id: id("msg"),
    role: fc.constant("assistant"),
    status: fc.constant("completed"),
    content: fc.array(
      fc.record({
        type: fc.constant("output_text"),
        text: smallText,
        annotations: fc.array(fc.record({ type: fc.constant("url_citation"), url: smallText, title: smallText }), {
          maxLength: 2,
        }),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  }),
  fc.record({
    type: fc.constant("reasoning"),
    id: id("rs"),
    summary: fc.array(fc.record({ type: fc.constant("summary_text"), text: smallText }), { maxLength: 2 }),
    encrypted_content: smallText,
  }),
  fc.record({
    type: fc.constant("function_call"),
    id: id("fc"),
    call_id: id("call"),
    name: smallName,
    arguments: fc.dictionary(smallName, smallText, { maxKeys: 2 }).map((args) => JSON.stringify(args)),
    status: fc.constant("completed"),
  }),
  fc.record({ type: fc.constant("x_future_output"), id: id("x"), payload: smallText }),
);

const turn = fc.record({
  input: fc.array(inputItem, { minLength: 1, maxLength: 4 }),
  output: fc.array(outputItem, { minLength: 1, maxLength: 4 }),
});

/** What the oracle counts of a body, less the keys of fields it knows, which the gateway is free not to count. */
function oracleChars(body: JsonObject): number {
  const { chars, knownKeyChars } = oracleCount(body, openaiResponsesRules);
  return chars - knownKeyChars;
}

const path = "/policies/case.interpretation/openai/v1/responses";

describe("stored Responses history, multi-turn, against the oracle", () => {
  it("reports at least what the provider holds before every turn, plus what the turn sends", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(turn, { minLength: 2, maxLength: 5 }), async (turns) => {
        const answers = turns.map((generated, index) => ({
          id: `resp_${index}`,
          object: "response",
          status: "completed",
          model: "gpt-test",
          output: generated.output,
        }));
        let answered = 0;
        const { app } = await appUnderTest({}, undefined, async () => Response.json(answers[answered++]));
        let held = 0;
        for (const [index, generated] of turns.entries()) {
          const body: JsonObject = { model: "gpt-test", input: generated.input };
          const response = await app.request(path, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: "Bearer sk-client" },
            body: JSON.stringify(index === 0 ? body : { ...body, previous_response_id: `resp_${index - 1}` }),
          });
          expect(response.status).toBe(200);
          const size = JSON.parse(response.headers.get("x-promptgate-prompt-size") ?? "{}");
          const sent = oracleChars(body);
          expect(size.cache_prefix_chars).toBeGreaterThanOrEqual(held);
          expect(size.total_chars).toBeGreaterThanOrEqual(held + sent);
          held += sent + oracleChars({ input: generated.output });
        }
      }),
      { numRuns: 150 },
    );
  });
});
