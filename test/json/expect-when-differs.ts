import { expect } from "vitest";

/*
 * Assertions for the hot loops of the property suites: Vitest's `expect` costs a few microseconds a call (its state,
 * chai's proxies), which over millions of calls was most of json-tape.test.ts's time. Each helper compares first with
 * a plain check that passes only where the matcher would pass, and hands anything else to the matcher itself: a
 * failure (and anything the plain check does not know) is reported by `expect` exactly as before.
 */

/** `expect(actual, message).toBe(expected)`, called only when the two are not `Object.is`. */
export function expectToBe(actual: unknown, expected: unknown, message?: string): void {
  if (!Object.is(actual, expected)) expect(actual, message).toBe(expected);
}

/** `expect(actual, message).toStrictEqual(expected)`, called only when `strictlyEqualData` does not vouch for them. */
export function expectToStrictEqual(actual: unknown, expected: unknown, message?: string): void {
  if (!strictlyEqualData(actual, expected)) expect(actual, message).toStrictEqual(expected);
}

const objectPrototype = Object.prototype;
const arrayPrototype = Array.prototype;
const isEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * Whether two values are equal as data, never true where `toStrictEqual` fails: primitives by `Object.is`; arrays
 * (dense, nothing but their items) and objects (of `Object.prototype` or none), each with the other's prototype and
 * `constructor`, no symbol keys, and the same own enumerable keys with equal values. False for anything else (a class
 * instance, a Map, an Error, a function, a cycle's depth aside), which leaves it to the matcher.
 */
export function strictlyEqualData(one: unknown, other: unknown, depth = 0): boolean {
  // A function is left to the matcher (it may be an asymmetric matcher's), as is an object against anything else.
  if (typeof one !== "object" || one === null) return typeof one !== "function" && Object.is(one, other);
  if (typeof other !== "object" || other === null) return false;
  // Deeper than the nesting a body may have (512, maxNestingDepth): a cycle, left to the matcher.
  if (depth > 1_000) return false;
  const prototype = Object.getPrototypeOf(one);
  if (prototype !== Object.getPrototypeOf(other)) return false;
  if (prototype !== objectPrototype && prototype !== arrayPrototype && prototype !== null) return false;
  // The matcher's typeEquality reads `constructor`, which an own member of that name shadows.
  if ((one as { constructor?: unknown }).constructor !== (other as { constructor?: unknown }).constructor) return false;
  if (Object.getOwnPropertySymbols(one).length !== 0 || Object.getOwnPropertySymbols(other).length !== 0) return false;
  const keys = Object.keys(one);
  if (Object.keys(other).length !== keys.length) return false;
  if (prototype === arrayPrototype) {
    if (!Array.isArray(one) || !Array.isArray(other)) return false;
    // Dense, and no member besides the items: as many keys as items.
    if (one.length !== other.length || keys.length !== one.length) return false;
    for (let index = 0; index < one.length; index++) {
      if (!strictlyEqualData(one[index], other[index], depth + 1)) return false;
    }
    return true;
  }
  if (Array.isArray(one) || Array.isArray(other)) return false;
  for (const key of keys) {
    if (!Object.hasOwn(other, key) || !isEnumerable.call(other, key)) return false;
    if (!strictlyEqualData((one as Record<string, unknown>)[key], (other as Record<string, unknown>)[key], depth + 1)) {
      return false;
    }
  }
  return true;
}
