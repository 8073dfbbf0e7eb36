import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { geminiAnswerFor } from "./test/support/edge-diagnostics.js";

// The behaviour suite inside workerd (npm run test:workers): the worker of wrangler.toml with its D1 binding, its
// own tests in test/workers, and the SAME pure test files as on Node: those of the folders below whose module
// graph (relative imports followed) imports no `node:` module. Here they validate answers with the default,
// interpretive validators (as Workers do), on Node with Ajv (test/support/schema-validators.ts, as Node does).
const sharedFolders = ["test/window", "test/surfaces", "test/policy", "test/schema", "test/http"];

/** Shared files left on Node only, though they import no `node:` module, and why. */
const nodeOnly = new Map([
  // Its properties compare the duplicate-key check with a reference parser of the test's own. In workerd,
  // after some thousand parses, JSON.parse once read an escaped key (`"\u0062"`) as another key than "b"
  // (seed 1519856817), which the check builds on; no smaller case reproduced it. Noted in the README.
  ["test/http/audit-json-text.test.ts", "a JSON.parse difference in workerd the reference parser exposes"],
]);

/** Gemini's upstream in these tests: the outbound service below answers it, as Node's fake upstream does. */
const fakeGemini = "http://fake-upstream.promptgate.invalid/gemini";

function testFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".test.ts"))
    .map((entry) => relative(".", join(entry.parentPath, entry.name)))
    .sort();
}

/** Whether a module, or any module it imports by a relative path, imports a `node:` module. */
function importsNode(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  if (/\bfrom\s+["']node:|import\(\s*["']node:/.test(text)) return true;
  return [...text.matchAll(/\bfrom\s+["'](\.{1,2}\/[^"']+)["']/g)].some(([, specifier]) => {
    const imported = join(dirname(file), specifier!);
    const source = imported.replace(/\.js$/, ".ts");
    return importsNode(existsSync(source) ? source : imported, seen);
  });
}

/** The shared test files that run inside workerd. */
export const sharedTestFiles = sharedFolders
  .flatMap(testFiles)
  .filter((file) => !nodeOnly.has(file) && !importsNode(file));

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          PROMPTGATE_ADMIN_KEY: "admin-test-key",
          PROMPTGATE_UPSTREAM_GEMINI: fakeGemini,
          // A routed call reaches Gemini with its server-held key only (test/workers/routing.test.ts).
          GEMINI_API_KEY: "gemini-test-key",
          // Gemini is configured, so the others would use their public upstreams: no test calls those, they stay
          // simulated. Pass-through calls may use the Gemini key here; test/workers/open-relay.test.ts drops this.
          PROMPTGATE_SIMULATED: "on",
          PROMPTGATE_OPEN_RELAY: "true",
          PROMPTGATE_LOG: "silent",
        },
        // Every fetch the worker sends out (the simulated provider answers in-process and never gets here).
        outboundService: async (request: Request) => {
          if (!request.url.startsWith(`${fakeGemini}/`) || !request.url.endsWith(":generateContent")) {
            return Response.json({ error: { message: "The fake upstream has no such route." } }, { status: 404 });
          }
          const body = await request.text();
          // A call that asks for it fails transiently, for the fallback test of test/workers/routing.test.ts.
          if (body.includes("FAIL-TRANSIENTLY")) {
            return Response.json(
              { error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } },
              { status: 429 },
            );
          }
          return Response.json(geminiAnswerFor(body));
        },
      },
    }),
  ],
  test: {
    include: ["test/workers/**/*.test.ts", ...sharedTestFiles],
    exclude: ["test/workers/**/*.smoke.test.ts"],
    testTimeout: 20_000,
  },
});
