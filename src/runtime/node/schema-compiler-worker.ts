// The worker thread of `workerSchemaCompiler`: compiles each response schema it is sent exactly as the gateway
// would, writes the validator out as Ajv standalone code, runs it once and sends back the code with V8's code
// cache, so that the serving thread only deserializes it.
import { parentPort, workerData } from "node:worker_threads";
import standaloneCode from "ajv/dist/standalone/index.js";
import type { AjvInstance } from "../../schema/ajv-instance.js";
import { compileResponseSchema, createAjv, removeSchema } from "../../schema/compile-schema.js";
import type { SchemaDialect } from "../../schema/compiled-validator.js";
import type { CompileJob, CompileResult } from "./schema-compiler.js";
import { instantiateValidator, wrappedSource } from "./standalone-validator.js";
import { withoutTermination } from "./termination-lock.js";

const port = parentPort;
if (port === null) throw new Error("schema-compiler-worker runs only as a worker thread.");
const lock = new Int32Array((workerData as { lock: SharedArrayBuffer }).lock);

const sourceAjv = (dialect: SchemaDialect, discriminator: boolean) =>
  createAjv(dialect, discriminator, { source: true });
/**
 * One Ajv per dialect for the schemas without identifiers, replaced once it has compiled `recycleAfter`
 * schema characters: Ajv keeps what it compiled in its scope even after `removeSchema` (~100 bytes per
 * schema character), so a long-lived instance would grow with every distinct schema.
 */
const shared = new Map<string, { ajv: AjvInstance; chars: number }>();
const recycleAfter = 1_000_000;
function sharedSourceAjv(dialect: SchemaDialect, discriminator: boolean, chars: number): AjvInstance {
  const name = `${dialect}:${discriminator}`;
  let entry = shared.get(name);
  if (entry === undefined || entry.chars > recycleAfter) {
    entry = { ajv: sourceAjv(dialect, discriminator), chars: 0 };
    shared.set(name, entry);
  }
  entry.chars += chars;
  return entry.ajv;
}

function compile({ id, text }: CompileJob): CompileResult {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    return { id, refusal: "invalid" };
  }
  // A schema with identifiers gets an Ajv of its own, as on the serving thread.
  const outcome = compileResponseSchema(
    schema,
    text.includes('"$id"')
      ? sourceAjv
      : (dialect, discriminator) => sharedSourceAjv(dialect, discriminator, text.length),
  );
  if ("refusal" in outcome) return { id, refusal: outcome.refusal };
  const { ajv, schema: prepared, dialect } = outcome;
  try {
    const source = wrappedSource(standaloneCode.default(ajv, outcome.validate));
    // Held while V8 compiles and caches the code: the one part of a job during which terminating the thread (its
    // time ran out, or the compiler was closed) could crash the process.
    const cachedData = withoutTermination(lock, () => {
      const { validate, script } = instantiateValidator(source);
      // V8 compiles a function when it first runs: run it, so that the cache holds the compiled code too.
      validate(null);
      validate({});
      return new Uint8Array(script.createCachedData());
    });
    return { id, source, cachedData, schemaText: JSON.stringify(prepared), dialect };
  } catch {
    return { id, unsupported: true };
  } finally {
    removeSchema(ajv, prepared);
  }
}

port.on("message", (job: CompileJob) => {
  const result = compile(job);
  port.postMessage(result, "cachedData" in result ? [result.cachedData.buffer] : []);
});
// Ajv's first instance compiles the meta-schemas (~20 ms): done before the first job's time starts.
compile({ id: 0, text: '{"type":"object"}' });
port.postMessage({ ready: true });
