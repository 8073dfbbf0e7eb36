import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import { type Admission, admitCall } from "../../src/limits/admission.js";
import type { LimitName, Limits } from "../../src/policy/policy.js";
import { memoryStore } from "../../src/store/memory-store.js";

/*
 * Limits over time against an independent model of contract section 10, written from the contract alone: a log of
 * the calls admitted, each window's count summed from it. Random sequences of calls (sizes), ends (with reported
 * tokens, without, cancelled) and clock steps: the gateway admits exactly what the model admits, refuses with the
 * code and window the model names, and its headers show the room the model computes.
 */

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;
const charsPerToken = 4;
/** The calls' deadline: a call in flight counts toward `concurrent` at most this long. */
const leaseMs = 10 * minute;

interface LoggedCall {
  at: number;
  chars: number;
  /** The estimate until the call ends; then the reported tokens, or 0 for a cancelled call without usage. */
  tokens: number;
  inFlight: boolean;
  admission: Admission;
}

/** The model: what each window of `limits` has counted at `now`, from the log of admitted calls. */
function counted(name: LimitName, log: readonly LoggedCall[], now: number): number {
  const sameSpan = (span: number) => (call: LoggedCall) => Math.floor(call.at / span) === Math.floor(now / span);
  const lastDays = (call: LoggedCall) => Math.floor(now / day) - Math.floor(call.at / day) < 30;
  const sum = (calls: LoggedCall[], of: (call: LoggedCall) => number) =>
    calls.reduce((total, call) => total + of(call), 0);
  switch (name) {
    case "requests_per_minute":
      return log.filter(sameSpan(minute)).length;
    case "requests_per_hour":
      return log.filter(sameSpan(hour)).length;
    case "requests_per_day":
      return log.filter(sameSpan(day)).length;
    case "chars_per_minute":
      return sum(log.filter(sameSpan(minute)), (call) => call.chars);
    case "chars_per_hour":
      return sum(log.filter(sameSpan(hour)), (call) => call.chars);
    case "chars_per_day":
      return sum(log.filter(sameSpan(day)), (call) => call.chars);
    case "chars_per_30_days":
      return sum(log.filter(lastDays), (call) => call.chars);
    case "tokens_per_day":
      return sum(log.filter(sameSpan(day)), (call) => call.tokens);
    case "tokens_per_30_days":
      return sum(log.filter(lastDays), (call) => call.tokens);
    case "concurrent":
      return log.filter((call) => call.inFlight).length;
  }
}

/** What a call adds to a window. */
function amountOf(name: LimitName, chars: number): number {
  if (name.startsWith("requests") || name === "concurrent") return 1;
  if (name.startsWith("chars")) return chars;
  return Math.ceil(chars / charsPerToken);
}

const budgets = new Set<LimitName>(["chars_per_day", "chars_per_30_days", "tokens_per_day", "tokens_per_30_days"]);

const limitsArb: fc.Arbitrary<Limits> = fc.record(
  {
    requests_per_minute: fc.integer({ min: 1, max: 6 }),
    requests_per_hour: fc.integer({ min: 1, max: 20 }),
    requests_per_day: fc.integer({ min: 1, max: 40 }),
    chars_per_minute: fc.integer({ min: 1, max: 400 }),
    chars_per_hour: fc.integer({ min: 1, max: 1_500 }),
    chars_per_day: fc.integer({ min: 1, max: 4_000 }),
    chars_per_30_days: fc.integer({ min: 1, max: 10_000 }),
    tokens_per_day: fc.integer({ min: 1, max: 1_000 }),
    tokens_per_30_days: fc.integer({ min: 1, max: 3_000 }),
    concurrent: fc.integer({ min: 1, max: 4 }),
  },
  { requiredKeys: [] },
);

type Step =
  | { kind: "call"; chars: number }
  | { kind: "end"; which: number; tokens: number | undefined; cancelled: boolean }
  | { kind: "wait"; ms: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("call" as const), chars: fc.integer({ min: 0, max: 300 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("end" as const),
      which: fc.nat(),
      tokens: fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
      cancelled: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(fc.integer({ min: 1, max: 70_000 }), fc.integer({ min: hour, max: 3 * day })),
    }),
  },
);

describe("limits over time against an independent model of their windows", () => {
  it("admits exactly what the model admits, refuses naming its window, and shows the room left (1,000 sequences)", async () => {
    await fc.assert(
      fc.asyncProperty(
        limitsArb,
        fc.option(limitsArb, { nil: undefined }),
        fc.integer({ min: 0, max: 400 * day }),
        fc.array(stepArb, { maxLength: 40 }),
        async (policyLimits, keyLimits, start, steps) => {
          const store = memoryStore();
          let now = Date.UTC(2026, 0, 1) + start;
          // One principal with one key: every call counts in the policy's windows and the key's alike.
          const log: LoggedCall[] = [];
          const scopes = [
            { scope: "policy:p:principal", limits: policyLimits },
            ...(keyLimits === undefined ? [] : [{ scope: "key:k", limits: keyLimits }]),
          ];
          const endCall = async (call: LoggedCall, tokens: number | undefined, cancelled: boolean) => {
            call.inFlight = false;
            if (tokens !== undefined) call.tokens = tokens;
            else if (cancelled) call.tokens = 0;
            await call.admission.end({ tokens, cancelled });
          };
          for (const step of steps) {
            if (step.kind === "wait") {
              // No call stays in flight past its deadline: the model need not say what counts after it.
              for (const call of log) {
                if (call.inFlight && now + step.ms >= call.at + leaseMs) await endCall(call, undefined, false);
              }
              now += step.ms;
              continue;
            }
            if (step.kind === "end") {
              const open = log.filter((call) => call.inFlight);
              const call = open[step.which % Math.max(1, open.length)];
              if (call !== undefined) await endCall(call, step.tokens, step.cancelled);
              continue;
            }
            // The model's verdict: every window of every scope has room for the call's amount.
            const refusing: { name: LimitName; used: number; limit: number }[] = [];
            for (const { limits } of scopes) {
              for (const [name, limit] of Object.entries(limits) as [LimitName, number][]) {
                const used = counted(name, log, now);
                if (used + amountOf(name, step.chars) > limit) refusing.push({ name, used, limit });
              }
            }
            let admission: Admission | undefined;
            let refusal: GatewayError | undefined;
            try {
              admission = await admitCall(store, {
                scopes: scopes.map(({ scope, limits }) => ({ scope, limits })),
                chars: step.chars,
                charsPerToken,
                leaseMs,
                now,
              });
            } catch (error) {
              if (!GatewayError.isInstance(error)) throw error;
              refusal = error;
            }
            if (refusing.length > 0) {
              expect(refusal, `refused by ${refusing.map((limit) => limit.name).join(", ")}`).toBeDefined();
              const detail = refusal?.details.limit;
              const named = refusing.find((limit) => limit.name === detail?.window);
              expect(named, `the refusal names ${detail?.window}`).toBeDefined();
              expect(detail?.used).toBe(named?.used);
              expect(detail?.limit).toBe(named?.limit);
              expect(refusal?.code).toBe(budgets.has(named?.name as LimitName) ? "BUDGET_EXHAUSTED" : "RATE_LIMITED");
              expect(detail?.retry_after_seconds).toBeGreaterThanOrEqual(1);
              continue;
            }
            expect(refusal?.message, "the model admits the call").toBeUndefined();
            const limited = scopes.some(({ limits }) => Object.keys(limits).length > 0);
            expect(admission !== undefined, "an admission exactly where a limit applies").toBe(limited);
            if (admission === undefined) continue;
            const estimate = Math.ceil(step.chars / charsPerToken);
            log.push({ at: now, chars: step.chars, tokens: estimate, inFlight: true, admission });
            // The headers: the tightest window of each kind, counted after this call.
            for (const [kind, header] of [
              ["requests", "x-ratelimit-remaining-requests"],
              ["tokens", "x-ratelimit-remaining-tokens"],
              ["chars", "x-promptgate-remaining-chars"],
            ] as const) {
              const left: number[] = [];
              for (const { limits } of scopes) {
                for (const [name, limit] of Object.entries(limits) as [LimitName, number][]) {
                  if (name.startsWith(kind)) left.push(limit - counted(name, log, now));
                }
              }
              const expected = left.length === 0 ? undefined : String(Math.max(0, Math.min(...left)));
              expect(admission.headers[header], header).toBe(expected);
            }
          }
        },
      ),
      { numRuns: 1_000 },
    );
  }, 300_000);
});
