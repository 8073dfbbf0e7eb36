import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { workerSchemaCompiler } from "../../src/runtime/node/schema-compiler.js";
import { instantiateValidator, wrappedSource } from "../../src/runtime/node/standalone-validator.js";
import { ajvSchemaCompiling } from "../../src/schema/compile-schema.js";
import type { CompiledValidator } from "../../src/schema/compiled-validator.js";
import { validateParsedAnswer } from "../../src/schema/diagnostics.js";
import { createSchemaValidators } from "../../src/schema/schema-validators.js";

const v22: unknown = JSON.parse(
  readFileSync(new URL("../../schemas/investigation_bootstrap_v22.json", import.meta.url), "utf8"),
);

/** A distinct ordinary schema of about `chars` characters. */
function schemaOfSize(chars: number, salt: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let index = 0; JSON.stringify(properties).length < chars - 40; index++) {
    properties[`${salt}${index}`] = {
      type: "object",
      required: ["id"],
      properties: { id: { type: "string", pattern: "^F[0-9]+$" }, note: { type: "string", maxLength: 200 } },
    };
  }
  return { type: "object", properties };
}

const compiler = workerSchemaCompiler();
afterAll(() => compiler.close());

async function compiled(schema: unknown): Promise<CompiledValidator> {
  const outcome = await compiler.compile(schema);
  if ("refusal" in outcome) throw new Error(`refused: ${outcome.refusal}`);
  return outcome;
}

describe("workerSchemaCompiler", () => {
  it("compiles in a worker thread a validator whose diagnostics equal those of one compiled in place", async () => {
    const answers = [
      {},
      { assessment: "not an object" },
      { assessment: { summary: 5, confidence: "sure" }, update: {}, next: { action: "tool/unknown" } },
    ];
    const inWorker = await compiled(v22);
    const inPlace = createSchemaValidators({ compiling: ajvSchemaCompiling() }).validatorFor(v22);
    for (const answer of answers) {
      expect(validateParsedAnswer(inWorker, answer)).toEqual(validateParsedAnswer(inPlace, answer));
    }
    expect(inWorker.schema).toEqual(inPlace.schema);
  });

  it("refuses a schema whose references loop without moving into the answer", async () => {
    expect(await compiler.compile({ allOf: [{ $ref: "#" }] })).toEqual({ refusal: "cycle" });
  });

  it("refuses a schema Ajv cannot compile", async () => {
    expect(await compiler.compile({ $ref: "https://elsewhere.example/schema.json" })).toEqual({ refusal: "invalid" });
  });

  it("compiles several schemas sent at once, each to its own validator", async () => {
    const schemas = [1, 2, 3].map((index) => ({ type: "object", required: [`field${index}`] }));
    const validators = await Promise.all(schemas.map(compiled));
    expect(validators.map(({ validate }) => validate({ field2: true }).length === 0)).toEqual([false, true, false]);
  });

  it("refuses a schema that takes longer than its time as too complex, and compiles the next one", async () => {
    const hasty = workerSchemaCompiler({ timeoutMs: 400 });
    try {
      expect(await hasty.compile({ type: "string" })).toHaveProperty("validate");
      expect(await hasty.compile(schemaOfSize(150_000, "slow"))).toEqual({ refusal: "too-complex" });
      expect(await hasty.compile({ type: "integer" })).toHaveProperty("validate");
    } finally {
      await hasty.close();
    }
  });
});

describe("workerSchemaCompiler in a gateway process", () => {
  it("starts its worker where the process preloads TypeScript modules, as the bench and tsx do", async () => {
    const directory = mkdtempSync(join(tmpdir(), "promptgate-compiler-"));
    const compilerUrl = new URL("../../src/runtime/node/schema-compiler.ts", import.meta.url).href;
    writeFileSync(join(directory, "package.json"), '{"type": "module"}\n');
    writeFileSync(join(directory, "preloaded.ts"), "export const preloaded: boolean = true;\n");
    writeFileSync(
      join(directory, "main.ts"),
      [
        `import { workerSchemaCompiler } from ${JSON.stringify(compilerUrl)};`,
        "const compiler = workerSchemaCompiler();",
        'const outcome = await compiler.compile({ type: "string" });',
        'process.stdout.write("validate" in outcome ? "compiled" : JSON.stringify(outcome));',
        "await compiler.close();",
      ].join("\n"),
    );
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", import.meta.resolve("tsx"), "--import", "./preloaded.ts", "main.ts"],
      { cwd: directory },
    );
    expect(stdout).toBe("compiled");
  }, 30_000);

  it("holds the process while it compiles, and lets it end once idle, never closed", async () => {
    // A script with nothing else open: the compile it awaits must finish (the worker holds the process meanwhile),
    // and the process must then end by itself, its idle worker holding nothing (it used to hang here).
    const directory = mkdtempSync(join(tmpdir(), "promptgate-compiler-"));
    const compilerUrl = new URL("../../src/runtime/node/schema-compiler.ts", import.meta.url).href;
    writeFileSync(join(directory, "package.json"), '{"type": "module"}\n');
    writeFileSync(
      join(directory, "main.ts"),
      [
        `import { workerSchemaCompiler } from ${JSON.stringify(compilerUrl)};`,
        "const compiler = workerSchemaCompiler();",
        `const first = await compiler.compile(${JSON.stringify(schemaOfSize(20_000, "a"))});`,
        'const second = await compiler.compile({ type: "string" });',
        'process.stdout.write("validate" in first && "validate" in second ? "compiled" : "refused");',
      ].join("\n"),
    );
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", import.meta.resolve("tsx"), "main.ts"],
      {
        cwd: directory,
        timeout: 20_000,
      },
    );
    expect(stdout).toBe("compiled");
  }, 30_000);
});

describe("instantiateValidator", () => {
  it("refuses standalone code that asks for a module other than Ajv's runtime and formats", () => {
    const source = wrappedSource('module.exports = require("node:fs");');
    expect(() => instantiateValidator(source)).toThrow(/may not use/);
  });
});
