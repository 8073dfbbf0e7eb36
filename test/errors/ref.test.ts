import { describe, expect, it } from "vitest";
import { newRef } from "../../src/errors/ref.js";

describe("newRef", () => {
  it("gives ref_ and 16 hex digits, never the same twice, across refills of its random pool", () => {
    const refs = Array.from({ length: 5_000 }, () => newRef());
    for (const ref of refs) expect(ref).toMatch(/^ref_[0-9a-f]{16}$/);
    expect(new Set(refs).size).toBe(refs.length);
  });
});
