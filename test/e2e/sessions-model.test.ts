import fc from "fast-check";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { memoryStore } from "../../src/store/memory-store.js";
import { gatewayOn, hour } from "../support/session-gateway.js";

// A model of seed 004's session rules, written apart from the gateway's code, against which random sequences of
// turns (two principals, two models, two call labels, a clock that jumps) are checked: every answer the gateway
// gives is the one the model predicts.

type Outcome = "ok" | "SESSION_NOT_FOUND" | "SESSION_EXPIRED" | "SESSION_SETTINGS_CHANGED";

interface ModelSession {
  principal: string;
  model: string;
  label: string | undefined;
  startedAt: number;
  lastTurnAt: number;
}

type Operation =
  | { kind: "start"; principal: string; model: string; label: string | undefined }
  | { kind: "continue"; principal: string; from: number; model: string | undefined; label: string | undefined }
  | { kind: "wait"; ms: number };

const principals = ["sk-alice", "sk-bob"];
const models = ["gpt-4.1", "o4-mini"];
const labels = [undefined, "wiki_assistant", "site_locator"];

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({
    kind: fc.constant("start" as const),
    principal: fc.constantFrom(...principals),
    model: fc.constantFrom(...models),
    label: fc.constantFrom(...labels),
  }),
  fc.record({
    kind: fc.constant("continue" as const),
    principal: fc.constantFrom(...principals),
    // An index into the responses made so far (modulo), or past them: an id never made.
    from: fc.nat({ max: 40 }),
    model: fc.constantFrom(undefined, ...models),
    label: fc.constantFrom(...labels),
  }),
  fc.record({
    kind: fc.constant("wait" as const),
    ms: fc.oneof(fc.integer({ min: 0, max: 30 * hour }), fc.constantFrom(24 * hour, 24 * hour + 1, 7 * 24 * hour)),
  }),
);

/** What the rules say a continuation gets: unknown or foreign, then expired, then a changed setting. */
function expected(
  session: ModelSession | undefined,
  operation: Extract<Operation, { kind: "continue" }>,
  now: number,
): Outcome {
  if (session === undefined || session.principal !== operation.principal) return "SESSION_NOT_FOUND";
  if (now - session.lastTurnAt > 24 * hour || now - session.startedAt > 7 * 24 * hour) return "SESSION_EXPIRED";
  if (operation.model !== undefined && operation.model !== session.model) return "SESSION_SETTINGS_CHANGED";
  if (operation.label !== undefined && operation.label !== session.label) return "SESSION_SETTINGS_CHANGED";
  return "ok";
}

describe("follow-up sessions against an independent model of their rules", () => {
  it("answers every turn of random sequences as the model predicts", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 20 }), async (operations) => {
        const gateway = await gatewayOn(() => memoryStore());
        // Each response made, with the session it belongs to in the model.
        const responses: { id: string; session: ModelSession }[] = [];
        for (const step of operations) {
          if (step.kind === "wait") {
            gateway.clock.now += step.ms;
            continue;
          }
          const client = gateway.client({ key: step.principal, label: step.label });
          if (step.kind === "start") {
            // Each start its own input: the simulated provider derives a response's id from its request.
            const made = await client.responses.create({ model: step.model, input: `start ${responses.length}` });
            const now = gateway.clock.now;
            const session = {
              principal: step.principal,
              model: step.model,
              label: step.label,
              startedAt: now,
              lastTurnAt: now,
            };
            responses.push({ id: made.id, session });
            continue;
          }
          const known =
            step.from < responses.length * 2 ? responses[step.from % Math.max(1, responses.length)] : undefined;
          const id = known?.id ?? `resp_never_made_${step.from}`;
          const predicted = expected(known?.session, step, gateway.clock.now);
          const body = {
            input: "next",
            previous_response_id: id,
            ...(step.model === undefined ? {} : { model: step.model }),
          };
          const outcome = await client.responses.create(body as OpenAI.Responses.ResponseCreateParamsNonStreaming).then(
            (made) => ({ code: "ok" as Outcome, id: made.id }),
            (error: unknown) => {
              if (!(error instanceof OpenAI.APIError)) throw error;
              const member = (error.error as { promptgate?: { code?: string } }).promptgate;
              return { code: member?.code as Outcome, id: undefined };
            },
          );
          expect(outcome.code).toBe(predicted);
          if (outcome.id !== undefined && known !== undefined) {
            known.session.lastTurnAt = gateway.clock.now;
            responses.push({ id: outcome.id, session: known.session });
          }
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
