import { describe, expect, it } from "vitest";
import { resetText } from "../../src/limits/admission.js";
import { dayMs, limitWindows, msUntilNextBucket, msUntilRoom } from "../../src/limits/limit-windows.js";
import { limitNames } from "../../src/policy/policy.js";

const shapeOf = (name: string) => {
  const window = limitWindows.find((each) => each.name === name);
  if (window === undefined) throw new Error(`No window ${name}.`);
  return window.shape;
};

describe("limit windows", () => {
  it("cover every limit name of the contract, in its order", () => {
    expect(limitWindows.map((window) => window.name)).toStrictEqual([...limitNames]);
  });

  it("are aligned to UTC: a minute's, an hour's and a day's window end on the minute, the hour and midnight", () => {
    const now = Date.parse("2026-12-07T23:59:30.250Z");
    expect(msUntilNextBucket(shapeOf("requests_per_minute"), now)).toBe(29_750);
    expect(msUntilNextBucket(shapeOf("requests_per_hour"), now)).toBe(29_750);
    expect(msUntilNextBucket(shapeOf("chars_per_day"), now)).toBe(29_750);
    expect(msUntilNextBucket(shapeOf("requests_per_hour"), Date.parse("2026-12-07T10:15:00Z"))).toBe(45 * 60_000);
  });

  it("thirty days: room comes when enough of the oldest days fall out of the window", () => {
    const now = Date.parse("2026-12-07T12:00:00Z");
    const shape = shapeOf("chars_per_30_days");
    const untilMidnight = 12 * 3_600_000;
    // 30 days, oldest first: 100 on the oldest day, 50 on the next, nothing since, today 10; limit 160.
    const used = [100, 50, ...new Array(27).fill(0), 10];
    expect(msUntilRoom(shape, now, used, 5, 160)).toBe(untilMidnight);
    expect(msUntilRoom(shape, now, used, 60, 160)).toBe(untilMidnight);
    expect(msUntilRoom(shape, now, used, 120, 160)).toBe(untilMidnight + dayMs);
    // More than the limit itself: no day brings room; the wait is the window's span.
    expect(msUntilRoom(shape, now, used, 161, 160)).toBe(untilMidnight + 29 * dayMs);
  });

  it("write a reset as OpenAI's headers do", () => {
    expect(resetText(20)).toBe("20ms");
    expect(resetText(1_000)).toBe("1s");
    expect(resetText(1_200)).toBe("2s");
    expect(resetText(360_000)).toBe("6m0s");
    expect(resetText(3_723_000)).toBe("1h2m3s");
  });
});
