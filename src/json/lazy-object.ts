import type { Tape } from "./tape.js";
import { keyOf, memberValue } from "./tape-values.js";

/** Where a lazy object's members are read from: a member no spread, `Object.keys` or `JSON.stringify` sees. */
const lazySource = Symbol("lazy source");

interface LazySource {
  tape: Tape;
  object: number;
}

/**
 * Member accessors by name, shared by every lazy object: an accessor property whose functions are the same as the
 * last object's keeps V8's hidden class and its cached transitions, where new functions per object would turn each
 * object into a dictionary (about 5 µs for a call's four members). Shared across the process on purpose, as V8's
 * hidden classes are: each accessor is a pure function of its name (it reads the tape from the object it is called
 * on), so an entry never changes once made and no call sees another's data through it. Bounded: names past
 * `sharedNameLength` characters, and any once `sharedNames` are kept, get accessors of their own, read the same, in
 * an object that is a dictionary.
 */
const memberAccessors = new Map<string, Readonly<PropertyDescriptor>>();
const sharedNames = 1_024;
const sharedNameLength = 64;

/** Replaces a lazy member by its value: a data member, as `JSON.parse` makes. */
function settle(object: object, name: string, value: unknown): void {
  Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
}

function memberAccessor(name: string): PropertyDescriptor {
  const shared = memberAccessors.get(name);
  if (shared !== undefined) return shared;
  const accessor: PropertyDescriptor = Object.freeze({
    configurable: true,
    enumerable: true,
    get(this: { [lazySource]: LazySource }) {
      const { tape, object } = this[lazySource];
      const parsed = memberValue(tape, object, name);
      settle(this, name, parsed);
      return parsed;
    },
    set(this: object, replaced: unknown) {
      settle(this, name, replaced);
    },
  });
  if (memberAccessors.size < sharedNames && name.length <= sharedNameLength) memberAccessors.set(name, accessor);
  return accessor;
}

/**
 * The object token `object` of a tape (the top-level one by default) as a parsed object whose members are parsed
 * one by one, each when first read: reading `body.stream` parses that member alone, spreading or serializing the
 * object parses them all. Its members are what `JSON.parse` gives, in the same order.
 */
export function lazyObject(tape: Tape, object = 0): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  Object.defineProperty(fields, lazySource, { value: { tape, object } satisfies LazySource });
  const end = tape.next[object] as number;
  for (let key = object + 1; key < end; key = tape.next[key + 1] as number) {
    const name = keyOf(tape, key);
    Object.defineProperty(fields, name, memberAccessor(name));
  }
  return fields;
}
