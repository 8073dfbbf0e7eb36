import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inPlaceCycle } from "../../src/schema/ref-cycles.js";

const schemasDirectory = new URL("../../schemas/", import.meta.url);

describe("inPlaceCycle finds a $ref cycle that never moves into the answer", () => {
  it("finds the 30-byte schema of issue 12", () => {
    expect(inPlaceCycle(JSON.parse('{"allOf":[{"$ref":"#"}]}'))).toEqual(["", "/allOf/0"]);
  });

  it("finds a schema that is only a reference to itself", () => {
    expect(inPlaceCycle({ $ref: "#" })).toEqual([""]);
  });

  it.each([
    ["anyOf", { anyOf: [{ type: "string" }, { $ref: "#" }] }],
    ["oneOf", { oneOf: [{ $ref: "#" }, { type: "null" }] }],
    ["not", { not: { $ref: "#" } }],
    ["if", { if: { $ref: "#" } }],
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keywords.
    ["then", { if: { type: "object" }, then: { $ref: "#" } }],
    ["else", { if: { type: "object" }, else: { $ref: "#" } }],
    ["dependentSchemas", { dependentSchemas: { a: { $ref: "#" } } }],
    ["draft-07 dependencies", { dependencies: { a: { $ref: "#" }, b: ["a"] } }],
  ])("finds a cycle through %s, even beside an alternative that would end it", (_keyword, schema) => {
    expect(inPlaceCycle(schema)).toBeDefined();
  });

  it("finds a cycle that runs through several definitions", () => {
    const schema = {
      $ref: "#/$defs/a",
      $defs: { a: { anyOf: [{ $ref: "#/$defs/b" }] }, b: { not: { $ref: "#/definitions/c" } } },
      definitions: { c: { allOf: [{ $ref: "#/$defs/a" }] } },
    };
    expect(inPlaceCycle(schema)).toEqual([
      "/$defs/a",
      "/$defs/a/anyOf/0",
      "/$defs/b",
      "/$defs/b/not",
      "/definitions/c",
      "/definitions/c/allOf/0",
    ]);
  });

  it("finds a cycle below a keyword that moves into the answer", () => {
    const schema = { type: "object", properties: { loop: { allOf: [{ $ref: "#/properties/loop" }] } } };
    expect(inPlaceCycle(schema)).toEqual(["/properties/loop", "/properties/loop/allOf/0"]);
  });

  it("follows JSON pointers with ~0 and ~1 escapes and percent-encoding", () => {
    expect(inPlaceCycle({ $defs: { "a/b": { allOf: [{ $ref: "#/$defs/a~1b" }] } } })).toBeDefined();
    expect(inPlaceCycle({ $defs: { "a~b": { allOf: [{ $ref: "#/$defs/a~0b" }] } } })).toBeDefined();
    expect(inPlaceCycle({ $defs: { "a b": { allOf: [{ $ref: "#/$defs/a%20b" }] } } })).toBeDefined();
    expect(inPlaceCycle({ $defs: { "a%b": { allOf: [{ $ref: "#/$defs/a%25b" }] } } })).toBeDefined();
    expect(inPlaceCycle({ $defs: { é: { allOf: [{ $ref: "#/$defs/%C3%A9" }] } } })).toBeDefined();
  });

  it("does not take an escape for what it is not, but keeps a lone ~ as Ajv does", () => {
    // `~01` is `~1` unescaped, not `/`; `a/b` is two steps; `a~b` escapes nothing and names `a~b`.
    expect(inPlaceCycle({ $defs: { "a~b": { allOf: [{ $ref: "#/$defs/a~b" }] } } })).toBeDefined();
    expect(inPlaceCycle({ $defs: { "a/b": { allOf: [{ $ref: "#/$defs/a~01b" }] } } })).toBeUndefined();
    expect(inPlaceCycle({ $defs: { "a/b": { allOf: [{ $ref: "#/$defs/a/b" }] } } })).toBeUndefined();
  });

  it("follows $anchor and an $id used as a plain-name fragment", () => {
    expect(inPlaceCycle({ $defs: { x: { $anchor: "x", oneOf: [{ $ref: "#x" }] } } })).toBeDefined();
    expect(inPlaceCycle({ definitions: { x: { $id: "#x", allOf: [{ $ref: "#x" }] } } })).toBeDefined();
  });

  it("resolves references against the $id of the resource around them", () => {
    const schema = {
      $id: "https://example.com/schemas/root.json",
      allOf: [{ $ref: "item.json" }],
      $defs: { item: { $id: "item.json", anyOf: [{ $ref: "root.json#/allOf/0" }] } },
    };
    expect(inPlaceCycle(schema)).toEqual(["/allOf/0", "/$defs/item", "/$defs/item/anyOf/0"]);
  });

  it("resolves a relative reference inside an embedded resource against that resource, not the root", () => {
    const schema = {
      $id: "https://example.com/root.json",
      $defs: {
        inner: { $id: "nested/inner.json", allOf: [{ $ref: "#/$defs/leaf" }], $defs: { leaf: { type: "string" } } },
        leaf: { allOf: [{ $ref: "nested/inner.json" }] },
      },
    };
    expect(inPlaceCycle(schema)).toBeUndefined();
  });

  it("counts a $dynamicRef as pointing at every $dynamicAnchor of its name", () => {
    const schema = {
      $id: "https://example.com/list.json",
      $dynamicAnchor: "node",
      $defs: { extension: { $dynamicAnchor: "node", allOf: [{ $dynamicRef: "#node" }] } },
    };
    expect(inPlaceCycle(schema)).toBeDefined();
  });

  it("counts a $recursiveRef as pointing at every $recursiveAnchor", () => {
    expect(inPlaceCycle({ $recursiveAnchor: true, anyOf: [{ $recursiveRef: "#" }] })).toBeDefined();
  });

  it("follows a reference into a location that no keyword declares as a schema", () => {
    const schema = { "x-shapes": { loop: { allOf: [{ $ref: "#/x-shapes/loop" }] } }, $ref: "#/x-shapes/loop" };
    expect(inPlaceCycle(schema)).toEqual(["/x-shapes/loop", "/x-shapes/loop/allOf/0"]);
  });

  it("walks a chain of 20,000 definitions without overflowing the stack", () => {
    const $defs: Record<string, unknown> = {};
    for (let at = 0; at < 20_000; at++) $defs[`d${at}`] = { allOf: [{ $ref: `#/$defs/d${(at + 1) % 20_000}` }] };
    expect(inPlaceCycle({ $ref: "#/$defs/d0", $defs })?.length).toBe(40_000);
    $defs.d19999 = { type: "string" };
    expect(inPlaceCycle({ $ref: "#/$defs/d0", $defs })).toBeUndefined();
  });
});

describe("inPlaceCycle accepts recursion that moves into the answer", () => {
  it.each([
    ["properties", { type: "object", properties: { child: { $ref: "#" } } }],
    ["items", { type: "array", items: { $ref: "#" } }],
    ["draft-07 items as a list", { items: [{ $ref: "#" }], additionalItems: { $ref: "#" } }],
    ["prefixItems", { prefixItems: [{ $ref: "#" }] }],
    ["additionalProperties", { additionalProperties: { $ref: "#" } }],
    ["patternProperties", { patternProperties: { "^x": { $ref: "#" } } }],
    ["contains", { contains: { $ref: "#" } }],
    ["propertyNames", { propertyNames: { $ref: "#" } }],
    ["unevaluatedProperties", { unevaluatedProperties: { $ref: "#" } }],
    ["unevaluatedItems", { unevaluatedItems: { $ref: "#" } }],
  ])("accepts a self-reference under %s", (_keyword, schema) => {
    expect(inPlaceCycle(schema)).toBeUndefined();
  });

  it("accepts a tree whose nodes refer to their definition through allOf below items", () => {
    const schema = {
      $ref: "#/$defs/node",
      $defs: {
        node: {
          allOf: [{ $ref: "#/$defs/named" }],
          properties: { children: { type: "array", items: { allOf: [{ $ref: "#/$defs/node" }] } } },
        },
        named: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
      },
    };
    expect(inPlaceCycle(schema)).toBeUndefined();
  });

  it("accepts the extensible tree of the 2020-12 specification", () => {
    const schema = {
      $id: "https://example.com/strict-tree",
      $dynamicAnchor: "node",
      $ref: "tree",
      unevaluatedProperties: false,
      $defs: {
        tree: {
          $id: "tree",
          $dynamicAnchor: "node",
          type: "object",
          properties: { data: true, children: { type: "array", items: { $dynamicRef: "#node" } } },
        },
      },
    };
    expect(inPlaceCycle(schema)).toBeUndefined();
  });

  it("leaves references it cannot follow to the compiler", () => {
    expect(inPlaceCycle({ allOf: [{ $ref: "https://elsewhere.example/schema.json" }] })).toBeUndefined();
    expect(inPlaceCycle({ allOf: [{ $ref: "#/$defs/missing" }] })).toBeUndefined();
    expect(inPlaceCycle({ allOf: [{ $ref: "#/$defs/%E0%A4%A" }] })).toBeUndefined();
  });

  it("takes booleans and non-objects as schemas without references", () => {
    for (const schema of [true, false, null, 3, "#", [{ $ref: "#" }]]) expect(inPlaceCycle(schema)).toBeUndefined();
  });

  it("finds no cycle in any shipped named schema", () => {
    for (const name of readdirSync(schemasDirectory).filter((file) => file.endsWith(".json"))) {
      const schema: unknown = JSON.parse(readFileSync(new URL(name, schemasDirectory), "utf8"));
      expect(inPlaceCycle(schema), name).toBeUndefined();
    }
  });
});

// A small independent reference: schema locations as token lists, references resolved by splitting the
// pointer by hand, and reachability by breadth-first search from every location.
const inPlaceLists = ["allOf", "anyOf", "oneOf"];
const inPlaceValues = ["not", "if", "then", "else"];
const descendingValues = ["items", "additionalProperties"];
const maps = ["properties", "$defs", "definitions"];

function referenceHasCycle(root: unknown): boolean {
  const nodes = new Map<string, Record<string, unknown>>();
  const keyOf = (tokens: readonly string[]) => JSON.stringify(tokens);
  const walk = (node: unknown, tokens: string[]): void => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return;
    const schema = node as Record<string, unknown>;
    nodes.set(keyOf(tokens), schema);
    for (const keyword of inPlaceLists) {
      for (const [at, item] of ((schema[keyword] as unknown[] | undefined) ?? []).entries()) {
        walk(item, [...tokens, keyword, String(at)]);
      }
    }
    for (const keyword of [...inPlaceValues, ...descendingValues]) walk(schema[keyword], [...tokens, keyword]);
    for (const keyword of maps) {
      for (const [name, item] of Object.entries((schema[keyword] as object | undefined) ?? {})) {
        walk(item, [...tokens, keyword, name]);
      }
    }
  };
  walk(root, []);
  const target = (ref: unknown): string | undefined => {
    if (ref === "#") return keyOf([]);
    if (typeof ref !== "string" || !ref.startsWith("#/")) return undefined;
    let decoded: string;
    try {
      decoded = decodeURIComponent(ref.slice(2));
    } catch {
      return undefined;
    }
    const key = keyOf(decoded.split("/").map((token) => token.replaceAll("~1", "/").replaceAll("~0", "~")));
    return nodes.has(key) ? key : undefined;
  };
  const successors = (key: string): string[] => {
    const schema = nodes.get(key) ?? {};
    const tokens = JSON.parse(key) as string[];
    const next = [
      ...inPlaceLists.flatMap((keyword) =>
        ((schema[keyword] as unknown[] | undefined) ?? []).map((_, at) => keyOf([...tokens, keyword, String(at)])),
      ),
      ...inPlaceValues.filter((keyword) => keyword in schema).map((keyword) => keyOf([...tokens, keyword])),
      target(schema.$ref),
    ];
    return next.filter((item): item is string => item !== undefined && nodes.has(item));
  };
  for (const start of nodes.keys()) {
    const seen = new Set<string>();
    const queue = successors(start);
    while (queue.length > 0) {
      const key = queue.shift() as string;
      if (key === start) return true;
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push(...successors(key));
    }
  }
  return false;
}

const names = ["a", "b/c", "d~e", "f g", "h%i", "é", "~1"];

/** A reference to the root or to a definition, escaped and percent-encoded in one of the ways a client might. */
const refArbitrary = fc.oneof(
  fc.constant("#"),
  fc
    .record({
      container: fc.constantFrom("$defs", "definitions"),
      name: fc.constantFrom(...names),
      encoding: fc.constantFrom("escaped", "escaped and percent-encoded", "raw"),
    })
    .map(({ container, name, encoding }) => {
      const escaped = name.replaceAll("~", "~0").replaceAll("/", "~1");
      const token =
        encoding === "raw"
          ? name
          : encoding === "escaped"
            ? escaped
            : encodeURIComponent(escaped).replaceAll("%7E", "~");
      return `#/${container}/${token}`;
    }),
);

const { node: nodeArbitrary } = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant({ type: "string" }),
    refArbitrary.map(($ref) => ({ $ref })),
    fc.record(
      {
        $ref: refArbitrary,
        allOf: fc.array(tie("node"), { minLength: 1, maxLength: 2 }),
        anyOf: fc.array(tie("node"), { minLength: 1, maxLength: 2 }),
        oneOf: fc.array(tie("node"), { minLength: 1, maxLength: 2 }),
        not: tie("node"),
        if: tie("node"),
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keywords.
        then: tie("node"),
        else: tie("node"),
        items: tie("node"),
        additionalProperties: tie("node"),
        properties: fc.dictionary(fc.constantFrom(...names), tie("node"), { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    ),
  ),
}));

const rootArbitrary = fc
  .record({
    root: nodeArbitrary,
    $defs: fc.dictionary(fc.constantFrom(...names), nodeArbitrary, { maxKeys: 4 }),
    definitions: fc.dictionary(fc.constantFrom(...names), nodeArbitrary, { maxKeys: 2 }),
  })
  .map(({ root, $defs, definitions }) => ({ ...(root as object), $defs, definitions }));

describe("inPlaceCycle against an independent reference", () => {
  it("agrees with the reference on generated schemas", () => {
    fc.assert(
      fc.property(rootArbitrary, (schema) => {
        expect(inPlaceCycle(schema) !== undefined).toBe(referenceHasCycle(schema));
      }),
      { numRuns: 600 },
    );
  }, 60_000);

  it("generates both schemas with and without cycles", () => {
    const verdicts = fc.sample(rootArbitrary, { numRuns: 500, seed: 12 }).map(referenceHasCycle);
    expect(verdicts.filter(Boolean).length).toBeGreaterThan(50);
    expect(verdicts.filter((verdict) => !verdict).length).toBeGreaterThan(50);
  });
});
