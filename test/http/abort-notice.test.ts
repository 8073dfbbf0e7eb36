import { describe, expect, it } from "vitest";
import { abortSignalOf, CallNotice, clientNoticeKey, clientNoticeOf } from "../../src/http/abort-notice.js";

describe("a call's abort notice", () => {
  it("calls each listener once, with the reason set, and none that was removed or came too late", () => {
    const notice = new CallNotice();
    const heard: string[] = [];
    const first = () => heard.push(`first ${String(notice.reason)}`);
    const removed = () => heard.push("removed");
    notice.addEventListener("abort", first);
    notice.addEventListener("abort", removed);
    notice.addEventListener("abort", () => heard.push("second"));
    notice.removeEventListener("abort", removed);
    notice.removeEventListener("abort", () => undefined);
    expect(notice.aborted).toBe(false);
    notice.abort("gone");
    notice.abort("again");
    notice.addEventListener("abort", () => heard.push("late"));
    expect(heard).toEqual(["first gone", "second"]);
    expect(notice.aborted).toBe(true);
    expect(notice.reason).toBe("gone");
  });

  it("becomes a standard signal for fetch that aborts with it, and a standard signal stays itself", () => {
    const notice = new CallNotice();
    const signal = abortSignalOf(notice);
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal.aborted).toBe(false);
    notice.abort(new Error("deadline"));
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(notice.reason);
    expect(abortSignalOf(notice).reason).toBe(notice.reason);
    const standard = new AbortController().signal;
    expect(abortSignalOf(standard)).toBe(standard);
  });

  it("is the runtime's when its env holds one under the symbol, else the request's signal", () => {
    const request = new Request("http://gateway.test/");
    const notice = new CallNotice();
    expect(clientNoticeOf({ [clientNoticeKey]: notice }, request)).toBe(notice);
    expect(clientNoticeOf(undefined, request)).toBe(request.signal);
    // A Workers binding named like the key's description is no notice.
    expect(clientNoticeOf({ "promptgate.clientNotice": notice }, request)).toBe(request.signal);
  });
});
