import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.js";
import type { CompiledValidator } from "../../src/schema/compiled-validator.js";
import { interpretedBytesPerSchemaChar as bytesPerSchemaChar } from "../../src/schema/interpret-schema.js";
import type { SchemaRefusal } from "../../src/schema/schema-refusals.js";
import { createSchemaValidators, type SchemaCompiler } from "../../src/schema/schema-validators.js";

/** A distinct ordinary schema of about `chars` characters. */
function schemaOfSize(chars: number, salt: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let index = 0; JSON.stringify(properties).length < chars - 40; index++) {
    properties[`${salt}${index}`] = { type: "integer", minimum: index };
  }
  return { type: "object", properties };
}

function refusalOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (GatewayError.isInstance(error)) return `${error.status} ${error.code} ${error.message}`;
    throw error;
  }
  throw new Error("expected a refusal");
}

/** A compiler that answers every schema alike, and counts what it was asked. */
function fakeCompiler(answer: () => Promise<CompiledValidator | { refusal: SchemaRefusal }>) {
  const asked: unknown[] = [];
  const compiler: SchemaCompiler = {
    compile: (schema) => {
      asked.push(schema);
      return answer();
    },
  };
  return { compiler, asked };
}

const acceptAll: CompiledValidator = {
  validate: () => [],
  schema: true,
  dialect: "2020-12",
};

describe("createSchemaValidators keeps compiled validators within a bound on their size", () => {
  it("estimates a validator's bytes from its schema's length", () => {
    const validators = createSchemaValidators();
    const schema = schemaOfSize(2_000, "a");
    validators.validatorFor(schema);
    expect(validators.heldBytes()).toBe(JSON.stringify(schema).length * bytesPerSchemaChar);
  });

  it("drops the least recently used validators once the estimate passes the bound", () => {
    const maxBytes = 3 * 2_000 * bytesPerSchemaChar;
    const validators = createSchemaValidators({ maxBytes });
    const schemas = Array.from({ length: 12 }, (_, index) => schemaOfSize(2_000, `s${index}x`));
    const first = validators.validatorFor(schemas[0]);
    for (const schema of schemas) validators.validatorFor(schema);
    expect(validators.heldBytes()).toBeLessThanOrEqual(maxBytes);
    expect(validators.validatorFor(schemas[11])).toBe(validators.validatorFor(schemas[11]));
    expect(validators.validatorFor(schemas[0])).not.toBe(first);
  });

  it("uses a schema larger than the whole bound once and keeps nothing of it", () => {
    const validators = createSchemaValidators({ maxBytes: 1_000 });
    const { validate } = validators.validatorFor(schemaOfSize(2_000, "big"));
    expect(validate({ big0: 1 })).toEqual([]);
    expect(validators.heldBytes()).toBe(0);
  });

  it("finds one validator for two spellings of a schema", () => {
    const validators = createSchemaValidators();
    const first = validators.validatorFor({ type: "object", required: ["a"] });
    expect(validators.validatorFor({ required: ["a"], type: "object" })).toBe(first);
  });

  it("refuses a looping schema with a fixed text, again from memory", () => {
    const validators = createSchemaValidators();
    const refusal = refusalOf(() => validators.validatorFor({ allOf: [{ $ref: "#" }] }));
    expect(refusal).toMatch(/^400 INVALID_REQUEST .*refers to itself/);
    expect(refusalOf(() => validators.validatorFor({ allOf: [{ $ref: "#" }] }))).toBe(refusal);
  });

  it("answers a precompiled schema with its precompiled validator, and compiles every other", () => {
    const validators = createSchemaValidators({
      precompiled: [{ key: JSON.stringify({ type: "string" }), validator: acceptAll }],
    });
    expect(validators.validatorFor({ type: "string" })).toBe(acceptAll);
    expect(validators.validatorFor({ type: "integer" }).validate("text")).toMatchObject([{ keyword: "type" }]);
    expect(validators.heldBytes()).toBe(JSON.stringify({ type: "integer" }).length * bytesPerSchemaChar);
  });
});

describe("SchemaValidators.prepare compiles with the runtime's compiler", () => {
  it("makes validatorFor answer with what the compiler made", async () => {
    const { compiler } = fakeCompiler(async () => acceptAll);
    const validators = createSchemaValidators({ compiler });
    await validators.prepare({ type: "string" });
    expect(validators.validatorFor({ type: "string" })).toBe(acceptAll);
  });

  it("asks the compiler once for a schema that many calls bring at the same time", async () => {
    const { compiler, asked } = fakeCompiler(async () => acceptAll);
    const validators = createSchemaValidators({ compiler });
    await Promise.all([validators.prepare({ a: 1 }), validators.prepare({ a: 1 }), validators.prepare({ a: 1 })]);
    await validators.prepare({ a: 1 });
    expect(asked).toHaveLength(1);
  });

  it("remembers the compiler's refusal, which validatorFor then throws", async () => {
    const { compiler } = fakeCompiler(async () => ({ refusal: "too-complex" }));
    const validators = createSchemaValidators({ compiler });
    await validators.prepare({ type: "string" });
    expect(refusalOf(() => validators.validatorFor({ type: "string" }))).toMatch(/too complex to compile/);
  });

  it("leaves a schema to validatorFor when the compiler broke", async () => {
    const { compiler } = fakeCompiler(() => Promise.reject(new Error("no worker")));
    const validators = createSchemaValidators({ compiler });
    await expect(validators.prepare({ type: "string" })).resolves.toBeUndefined();
    expect(validators.validatorFor({ type: "string" }).validate("text")).toEqual([]);
  });

  it("does nothing without a compiler, or for a precompiled schema", async () => {
    const { compiler, asked } = fakeCompiler(async () => acceptAll);
    await createSchemaValidators().prepare({ type: "string" });
    const precompiled = [{ key: JSON.stringify({ type: "string" }), validator: acceptAll }];
    await createSchemaValidators({ compiler, precompiled }).prepare({ type: "string" });
    expect(asked).toEqual([]);
  });
});
