import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.js";
import { classifyTransportFailure, timedOutStageOf } from "../../src/errors/classify.js";
import { UpstreamTimedOut } from "../../src/errors/upstream-timed-out.js";
import { CallNotice } from "../../src/http/abort-notice.js";
import { startRequestTimeouts } from "../../src/pipeline/upstream-timeouts.js";
import { type Policy, upstreamTimeoutsOf } from "../../src/policy/policy.js";
import { boundedPolicy } from "../window/fixtures.js";

// The stage timeouts of one provider request (contract section 11), with timeouts of tens of milliseconds.

const short = { connect: 0.03, firstByte: 0.03, idle: 0.03 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const aborted = (signal: { addEventListener(type: "abort", listener: () => void): void }) =>
  new Promise<void>((resolve) => signal.addEventListener("abort", resolve));

/** A body whose source sends `chunks`, each after `gapMs`, then stays open without a byte more. */
function stallingBody(chunks: string[], gapMs: number): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent >= chunks.length) return new Promise<void>(() => undefined);
      await sleep(gapMs);
      controller.enqueue(encoder.encode(chunks[sent++]));
    },
  });
}

describe("a provider request's stage timeouts", () => {
  it("fires connect when the transport never reports the connection open", async () => {
    const timeouts = startRequestTimeouts(new CallNotice(), short, false);
    await aborted(timeouts.signal);
    expect(timeouts.fired()).toBeInstanceOf(UpstreamTimedOut);
    expect(timeouts.fired()?.stage).toBe("connect");
    expect(timeouts.signal.reason).toBe(timeouts.fired());
  });

  it("times nothing more for a non-streamed request once connected: its answer is bounded by the deadline", async () => {
    const timeouts = startRequestTimeouts(new CallNotice(), short, false);
    timeouts.connected();
    await sleep(100);
    expect(timeouts.signal.aborted).toBe(false);
    expect(timeouts.fired()).toBeUndefined();
  });

  it("fires first_byte for a streamed request connected but given no head", async () => {
    const timeouts = startRequestTimeouts(new CallNotice(), { ...short, connect: 60 }, true);
    timeouts.connected();
    await aborted(timeouts.signal);
    expect(timeouts.fired()?.stage).toBe("first_byte");
  });

  it("fires nothing once the head arrived", async () => {
    const timeouts = startRequestTimeouts(new CallNotice(), short, true);
    timeouts.connected();
    timeouts.answered();
    await sleep(100);
    expect(timeouts.signal.aborted).toBe(false);
  });

  it("errors a stream that stops between events with the idle timeout, after what came before", async () => {
    const timeouts = startRequestTimeouts(new CallNotice(), short, true);
    timeouts.connected();
    timeouts.answered();
    const reader = timeouts.streamed(stallingBody(["a", "b"], 5)).getReader();
    expect((await reader.read()).done).toBe(false);
    expect((await reader.read()).done).toBe(false);
    const failure = await reader.read().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamTimedOut);
    expect((failure as UpstreamTimedOut).stage).toBe("idle");
    expect(timeouts.signal.aborted).toBe(true);
  });

  it("counts only the wait for the provider, not a client that reads slowly", async () => {
    const timeouts = startRequestTimeouts(new CallNotice(), short, true);
    timeouts.answered();
    const reader = timeouts.streamed(stallingBody(["a", "b", "c"], 1)).getReader();
    for (let read = 0; read < 3; read++) {
      await sleep(80);
      expect((await reader.read()).done).toBe(false);
    }
    expect(timeouts.fired()).toBeUndefined();
    await reader.cancel();
  });

  it("aborts with the call's reason, not a timeout, when the call's own signal aborts", () => {
    const call = new CallNotice();
    const timeouts = startRequestTimeouts(call, short, true);
    const left = new Error("client left");
    call.abort(left);
    expect(timeouts.signal.reason).toBe(left);
    expect(timeouts.fired()).toBeUndefined();
    timeouts.answered();
  });
});

describe("a fired stage timeout's classification", () => {
  for (const stage of ["connect", "first_byte", "idle"] as const) {
    it(`makes ${stage} the native timeout (504, retryable), its reason naming the stage`, () => {
      const error = classifyTransportFailure(new UpstreamTimedOut(stage), false, []);
      expect(error).toMatchObject({ code: "timeout", status: 504, retryable: true });
      expect(error.details.upstreamError?.reason).toBe(`${stage}_timeout`);
      expect(timedOutStageOf(error.details.upstreamError?.reason)).toBe(stage);
    });
  }

  it("leaves a passed deadline the deadline's", () => {
    const error = classifyTransportFailure(new UpstreamTimedOut("idle"), true, []);
    expect(error.details.upstreamError?.reason).toBe("deadline");
    expect(timedOutStageOf("deadline")).toBeUndefined();
  });
});

describe("the stage timeouts a policy's calls get", () => {
  const config = readConfig({ PROMPTGATE_UPSTREAM_IDLE_SECONDS: "45" });

  it("are the configuration's where the policy sets none", () => {
    expect(upstreamTimeoutsOf(boundedPolicy.policy, config)).toEqual({ connect: 10, firstByte: 120, idle: 45 });
  });

  it("take each member the policy's [upstream] table sets", () => {
    const policy: Policy = { ...boundedPolicy.policy, upstream: { deadline_seconds: 960, first_byte_seconds: 1.5 } };
    expect(upstreamTimeoutsOf(policy, config)).toEqual({ connect: 10, firstByte: 1.5, idle: 45 });
  });
});

describe("the stage timeouts' variables", () => {
  for (const value of ["0", "-1", "ten", "86401"]) {
    it(`refuse PROMPTGATE_UPSTREAM_FIRST_BYTE_SECONDS=${value} at start-up`, () => {
      expect(() => readConfig({ PROMPTGATE_UPSTREAM_FIRST_BYTE_SECONDS: value })).toThrow(
        `PROMPTGATE_UPSTREAM_FIRST_BYTE_SECONDS="${value}" must be a number of seconds above 0, at most 86400 (unset: 120).`,
      );
    });
  }

  it("take fractions of a second", () => {
    expect(readConfig({ PROMPTGATE_UPSTREAM_CONNECT_SECONDS: "2.5" }).upstreamTimeouts.connect).toBe(2.5);
  });
});
