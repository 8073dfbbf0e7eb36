import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exposedHeaders } from "../../src/http/cors.js";

const source = join(import.meta.dirname, "..", "..", "src");

/** The `x-promptgate-*` names that are no response header: request headers and other uses of the prefix. */
const notResponseHeaders = new Map([
  ["x-promptgate-case", "a request header"],
  ["x-promptgate-call", "a request header"],
  ["x-promptgate-schema", "a request header"],
  ["x-promptgate-sources", "a request header"],
  ["x-promptgate-root", "the synthetic base URI of a projected schema"],
  ["x-promptgate-walk", "a property name of the simulated provider's fake documents"],
  ["x-promptgate-simulated-schema", "a request header to the simulated provider"],
]);

function sourceFiles(): string[] {
  return readdirSync(source, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.parentPath.includes("generated"))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("the x-promptgate response headers a browser page may read", () => {
  it("are every x-promptgate header the gateway sets", () => {
    const named = new Set(
      sourceFiles().flatMap((file) => readFileSync(file, "utf8").match(/x-promptgate-[a-z-]*[a-z]/g) ?? []),
    );
    const responseHeaders = [...named].filter((name) => !notResponseHeaders.has(name)).sort();
    const exposed = exposedHeaders.filter((name) => name.startsWith("x-promptgate-")).sort();
    expect(exposed).toEqual(responseHeaders);
  });
});
