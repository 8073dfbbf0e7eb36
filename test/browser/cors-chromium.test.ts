import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeGateway, startNodeGateway } from "../../src/runtime/node/node-gateway.js";

// A real browser across origins: headless Chromium (Debian's `chromium`, driven by playwright-core) loads a page
// from one local origin that calls the gateway, on another, with the `openai` package's browser build.

const chromiumPath = process.env.PROMPTGATE_CHROMIUM ?? "/usr/bin/chromium";
const chromiumPresent = existsSync(chromiumPath);
const root = join(import.meta.dirname, "..", "..");
const adminKey = "browser-test-admin-key";

if (!chromiumPresent && !process.env.CI) {
  console.warn(
    `Skipping the Chromium CORS test: no Chromium at ${chromiumPath} (apt-get install -y chromium, as .ci/run does). Under CI it fails instead.`,
  );
}

/** The page: it imports the bundled `openai` client and offers one call to the test. */
const pageHtml = `<!doctype html>
<meta charset="utf-8">
<title>promptgate from a browser</title>
<script type="module">
  import { OpenAI } from "/openai.js";
  window.callGateway = async (baseURL, caseId, content) => {
    const client = new OpenAI({
      apiKey: "simulated",
      baseURL,
      dangerouslyAllowBrowser: true,
      maxRetries: 0,
      defaultHeaders: { "x-promptgate-case": caseId },
    });
    try {
      const { data, response } = await client.chat.completions
        .create({ model: "gpt-4.1-mini", messages: [{ role: "user", content }] })
        .withResponse();
      return {
        content: data.choices[0].message.content,
        promptSize: response.headers.get("x-promptgate-prompt-size"),
        ref: response.headers.get("x-promptgate-ref"),
      };
    } catch (error) {
      return { error: error.constructor.name, message: error.message };
    }
  };
  window.ready = true;
</script>`;

/** The `openai` package bundled for browsers, as a page would ship it (no CDN: the test runs offline). */
async function openAIBrowserBuild(): Promise<string> {
  const result = await build({
    stdin: { contents: 'export { default as OpenAI } from "openai";', resolveDir: root, loader: "js" },
    bundle: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error("esbuild wrote no bundle.");
  return output.text;
}

/** A static server of the page and its script on a free loopback port: one origin. */
async function startPageServer(script: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    if (request.url === "/openai.js") {
      response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(script);
    } else if (request.url === "/") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(pageHtml);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface PageCall {
  content?: string;
  promptSize?: string | null;
  ref?: string | null;
  error?: string;
  message?: string;
}

async function callFromPage(page: Page, baseURL: string, caseId: string, content: string): Promise<PageCall> {
  return page.evaluate(
    ([url, id, text]) =>
      (window as unknown as { callGateway(url: string, id: string, text: string): Promise<PageCall> }).callGateway(
        url,
        id,
        text,
      ),
    [baseURL, caseId, content] as const,
  );
}

async function recordsOfCase(gateway: NodeGateway, caseId: string): Promise<unknown[]> {
  const response = await fetch(`${gateway.url}/promptgate/admin/calls?case=${caseId}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  return ((await response.json()) as { calls: unknown[] }).calls;
}

describe.skipIf(!chromiumPresent && !process.env.CI)("the gateway called from a web page in Chromium", () => {
  let gateway: NodeGateway;
  let allowed: { origin: string; server: Server };
  let other: { origin: string; server: Server };
  let browser: Browser;

  beforeAll(async () => {
    if (!chromiumPresent) {
      throw new Error(`No Chromium at ${chromiumPath}: .ci/run installs Debian's chromium package for this test.`);
    }
    const script = await openAIBrowserBuild();
    allowed = await startPageServer(script);
    other = await startPageServer(script);
    gateway = await startNodeGateway(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        PROMPTGATE_DB: "memory",
        PROMPTGATE_UPSTREAM_OPENAI: "simulated",
        PROMPTGATE_ADMIN_KEY: adminKey,
        PROMPTGATE_CORS_ORIGINS: allowed.origin,
      },
      { logDestination: { write: () => undefined } },
    );
    browser = await chromium.launch({ executablePath: chromiumPath });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    for (const page of [allowed, other]) {
      if (page !== undefined) await new Promise((resolve) => page.server.close(resolve));
    }
  });

  async function openPage(origin: string): Promise<{ page: Page; console: string[] }> {
    const page = await browser.newPage();
    const messages: string[] = [];
    page.on("console", (message) => messages.push(message.text()));
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    return { page, console: messages };
  }

  it("lets a page of a listed origin call it with the openai client and read x-promptgate-prompt-size", async () => {
    const { page } = await openPage(allowed.origin);
    const content = "Hello from a browser, ünïcödé 🙂";
    const result = await callFromPage(page, `${gateway.url}/openai/v1`, "browser-allowed", content);
    await page.close();

    expect(result.error).toBeUndefined();
    expect(result.content).toContain("[promptgate simulated provider]");
    expect(result.ref).toMatch(/^ref_[0-9a-f]{16}$/);
    const promptSize = JSON.parse(result.promptSize ?? "null");
    expect(promptSize).toMatchObject({
      check: "preflight",
      system_chars: 0,
      message_chars: [...content].length,
      total_chars: [...content].length,
      over_target: false,
    });
    expect(promptSize.policy).toMatch(/^default@[0-9a-f]{12}$/);
    expect(await recordsOfCase(gateway, "browser-allowed")).toHaveLength(1);
  }, 60_000);

  it("is refused by the browser for a page of an origin not listed, which never sends the call", async () => {
    const { page, console: messages } = await openPage(other.origin);
    const result = await callFromPage(page, `${gateway.url}/openai/v1`, "browser-blocked", "Hello");
    await page.close();

    expect(result).toEqual({ error: "APIConnectionError", message: "Connection error." });
    expect(messages.join("\n")).toMatch(/blocked by CORS policy/);
    expect(await recordsOfCase(gateway, "browser-blocked")).toEqual([]);
  }, 60_000);
});
