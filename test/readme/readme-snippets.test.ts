import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeGateway, startNodeGateway } from "../../src/runtime/node/node-gateway.js";

// The documentation's code as a new user runs it: every ```ts block and every shell block with a `curl` of the README
// and of every page under docs/, as written, against a started gateway on the simulated provider. Only the pages'
// address (127.0.0.1:8787) becomes the test gateway's. A page that needs a gateway started otherwise says so in a
// comment, `<!-- snippet-gateway: NAME=value … -->`, whose variables its snippets' gateway starts with.

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const readmeAddress = "http://127.0.0.1:8787";
const adminKey = "readme-admin-key";

interface Snippet {
  language: string;
  /** The page and the line its fence opens on, for the test's name: `docs/guide/clients.md:12`. */
  where: string;
  code: string;
  /** The variables the page's gateway starts with besides the test gateway's own (its `snippet-gateway` comment). */
  environment: Record<string, string>;
}

/** The README and every Markdown page under docs/, as paths from the repository's root. */
function pages(): string[] {
  const docs = readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".md"))
    .map((file) => join("docs", file))
    .sort();
  return ["README.md", ...docs];
}

function snippetsOf(page: string): Snippet[] {
  const text = readFileSync(join(root, page), "utf8");
  const lines = text.split("\n");
  const declared = /<!-- snippet-gateway: ([^>]*) -->/.exec(text)?.[1] ?? "";
  const environment = Object.fromEntries(
    declared
      .split(/\s+/)
      .filter((pair) => pair.includes("="))
      .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
  );
  const snippets: Snippet[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const language = /^```(\w+)\s*$/.exec(lines[index] ?? "")?.[1];
    if (language === undefined) continue;
    const end = lines.indexOf("```", index + 1);
    if (end < 0) throw new Error(`${page}: the code block of line ${index + 1} is never closed.`);
    const code = lines.slice(index + 1, end).join("\n");
    snippets.push({ language, where: `${page}:${index + 1}`, code, environment });
    index = end;
  }
  return snippets;
}

const snippets = pages().flatMap(snippetsOf);
const typeScript = snippets.filter((snippet) => ["ts", "typescript"].includes(snippet.language));
const shell = snippets.filter(
  (snippet) => ["sh", "bash", "shell"].includes(snippet.language) && /\bcurl\b/.test(snippet.code),
);

/** A new user's environment: no provider key, nothing of the test runner's; the admin key the README's curl uses. */
const userEnvironment = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  PROMPTGATE_ADMIN_KEY: adminKey,
};

/** The test gateways, one per environment the pages ask for (most ask for none), by that environment as JSON. */
const gateways = new Map<string, NodeGateway>();

beforeAll(async () => {
  for (const environment of new Set(snippets.map((snippet) => JSON.stringify(snippet.environment)))) {
    const gateway = await startNodeGateway(
      {
        PORT: "0",
        HOST: "127.0.0.1",
        PROMPTGATE_DB: "memory",
        PROMPTGATE_ADMIN_KEY: adminKey,
        PROMPTGATE_UPSTREAM_OPENAI: "simulated",
        PROMPTGATE_UPSTREAM_GEMINI: "simulated",
        PROMPTGATE_UPSTREAM_ANTHROPIC: "simulated",
        ...JSON.parse(environment),
      },
      { logDestination: { write: () => undefined } },
    );
    gateways.set(environment, gateway);
  }
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways.values()) await gateway.close();
});

function againstTestGateway(snippet: Snippet, code = snippet.code): string {
  return code.replaceAll(readmeAddress, (gateways.get(JSON.stringify(snippet.environment)) as NodeGateway).url);
}

const outputs = new Map<Snippet, Promise<string>>();

/** What a TypeScript snippet printed, run once (as a module at the repository root, where its imports point). */
function outputOf(snippet: Snippet): Promise<string> {
  let output = outputs.get(snippet);
  if (output === undefined) {
    output = runTypeScript(snippet);
    outputs.set(snippet, output);
  }
  return output;
}

/** A snippet's place as part of a file name: `docs-guide-clients.md-12`. */
function fileName(snippet: Snippet): string {
  return snippet.where.replaceAll(/[/:]/g, "-");
}

async function runTypeScript(snippet: Snippet): Promise<string> {
  const file = join(root, `.readme-snippet-${fileName(snippet)}-${process.pid}.mts`);
  writeFileSync(file, againstTestGateway(snippet));
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", file], {
      cwd: root,
      env: userEnvironment,
      timeout: 60_000,
    });
    // A warning (a deprecated model, an experimental feature) is no first run "exactly as the README shows".
    expect(stderr).toBe("");
    return stdout;
  } finally {
    rmSync(file, { force: true });
  }
}

describe("the documentation's snippets", () => {
  it("include the SDK examples and the admin calls", () => {
    expect(typeScript.length).toBeGreaterThanOrEqual(2);
    expect(shell.length).toBeGreaterThanOrEqual(1);
  });

  it.each(typeScript.map((snippet) => [snippet.where, snippet] as const))(
    "run the TypeScript of %s as written",
    async (_line, snippet) => {
      const output = await outputOf(snippet);
      expect(output.trim()).not.toBe("");
    },
    90_000,
  );

  it("type-check as written under strict TypeScript", async () => {
    const files = typeScript.map((snippet) => {
      const file = join(root, `.readme-snippet-${fileName(snippet)}-${process.pid}-types.mts`);
      writeFileSync(file, snippet.code);
      return file;
    });
    try {
      const compiler = join(root, "node_modules", "typescript", "bin", "tsc");
      const options = ["--noEmit", "--strict", "--skipLibCheck", "--resolveJsonModule", "--types", "node"];
      const target = ["--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"];
      const checked = await run(process.execPath, [compiler, ...options, ...target, ...files], { cwd: root }).catch(
        (failure: { stdout: string }) => failure,
      );
      expect(checked.stdout).toBe("");
    } finally {
      for (const file of files) rmSync(file, { force: true });
    }
  }, 120_000);

  it("show a call's prompt_size that the README's first example prints", async () => {
    const first = typeScript.find((snippet) => snippet.where.startsWith("README.md:"));
    const printed = (await outputOf(first!)).split("\n").filter((line) => line.startsWith('{"check":"preflight"'));
    expect(printed).toHaveLength(1);
    expect(JSON.parse(printed[0]!)).toMatchObject({ check: "preflight", over_target: false });
  }, 90_000);

  it("show a team's key answering and refusing a model outside it, as the keys page says", async () => {
    const team = typeScript.find((snippet) => snippet.where.startsWith("docs/guide/keys-and-teams.md:"));
    const [made, refused] = (await outputOf(team!)).trim().split("\n");
    expect(made).toMatch(/^key_[0-9a-f]{24} \S/);
    expect(refused).toBe("403 MODEL_NOT_ALLOWED");
  }, 90_000);

  it.each(shell.map((snippet) => [snippet.where, snippet] as const))(
    "run the shell commands of %s as written, each answering JSON",
    async (_line, snippet) => {
      for (const command of againstTestGateway(snippet)
        .split("\n")
        .filter((line) => line.trim() !== "")) {
        // Not on a terminal, curl writes its progress meter to stderr; its exit code and the answer tell.
        const { stdout } = await run("bash", ["-c", command], { cwd: root, env: userEnvironment, timeout: 60_000 });
        expect(() => JSON.parse(stdout), command).not.toThrow();
      }
    },
    90_000,
  );
});
