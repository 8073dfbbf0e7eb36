import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.js";
import { loadPolicies } from "../../src/policy/load-policies.js";
import { readPolicyFiles } from "../../src/runtime/node/node-gateway.js";
import { policySchemaPath } from "../../src/runtime/node/package-paths.js";
import { startupLine, writeStartupLine } from "../../src/runtime/node/startup-line.js";

const policies = (
  await loadPolicies(await readPolicyFiles("policies"), JSON.parse(readFileSync(policySchemaPath, "utf8")))
).list();
const folders = {
  policies: { path: "/srv/promptgate/policies", source: "working directory" as const },
  schemas: { path: "/usr/lib/node_modules/promptgate/schemas", source: "package" as const },
};

describe("the start-up line", () => {
  it("names the address, data file, folders, policy versions, auth mode, admin routes and upstreams", () => {
    const config = readConfig({
      PROMPTGATE_DB: "data/state.db",
      PROMPTGATE_KEYS: "gk-one",
      PROMPTGATE_ADMIN_KEY: "admin-secret",
      PROMPTGATE_UPSTREAM_GEMINI: "https://gemini.example.com/",
    });
    const line = startupLine({ url: "http://127.0.0.1:8787", version: "1.2.3", config, folders, policies });
    expect(line).toEqual({
      event: "listening",
      url: "http://127.0.0.1:8787",
      version: "1.2.3",
      pid: process.pid,
      data_file: `${process.cwd()}/data/state.db`,
      policies_folder: "/srv/promptgate/policies",
      policies_from: "working directory",
      schemas_folder: "/usr/lib/node_modules/promptgate/schemas",
      schemas_from: "package",
      policies: policies.map((version) => version.ref),
      default_policy: "default",
      auth: "gateway keys",
      admin_routes: "on",
      // Once one provider is configured, the others use their public upstreams; one without any is unconfigured.
      upstreams: {
        openai: "https://api.openai.com/v1",
        gemini: "https://gemini.example.com",
        anthropic: "https://api.anthropic.com",
        "openai-compatible": "unconfigured (PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE)",
      },
    });
    expect(line.policies).toContain(policies.find((version) => version.policy.name === "default")?.ref);
  });

  it("says memory, pass-through and off for the defaults", () => {
    const line = startupLine({
      url: "http://127.0.0.1:8787",
      version: "1.2.3",
      config: readConfig({ PROMPTGATE_DB: "memory" }),
      folders,
      policies,
    });
    expect([line.data_file, line.auth, line.admin_routes]).toEqual(["memory", "pass-through", "off"]);
  });

  it("is one JSON line shaped as the call log's, keeping the words scripts wait for, and no key", () => {
    const written: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        written.push(String(chunk));
        done();
      },
    });
    const config = readConfig({
      PROMPTGATE_DB: "memory",
      PROMPTGATE_LOG: "silent",
      PROMPTGATE_ADMIN_KEY: "admin-secret",
      PROMPTGATE_KEYS: "gk-one",
    });
    writeStartupLine(
      startupLine({ url: "http://127.0.0.1:41234", version: "1.2.3", config, folders, policies }),
      config,
      destination,
    );
    expect(written).toHaveLength(1);
    const text = written[0] as string;
    expect(text.endsWith("}\n")).toBe(true);
    const parsed = JSON.parse(text);
    expect(parsed).toMatchObject({
      level: "info",
      service: "promptgate",
      event: "listening",
      url: "http://127.0.0.1:41234",
    });
    expect(Number.isNaN(Date.parse(parsed.time))).toBe(false);
    expect(/promptgate listening on (http:\/\/\S+)/.exec(parsed.msg)?.[1]).toBe("http://127.0.0.1:41234");
    expect(/promptgate listening on (http:\/\/\S+)/.exec(text)?.[1]).toBe("http://127.0.0.1:41234");
    expect(text).not.toContain("admin-secret");
    expect(text).not.toContain("gk-one");
  });

  it("is pretty-printed like the other log lines when PROMPTGATE_LOG_FORMAT=pretty", () => {
    const written: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        written.push(String(chunk));
        done();
      },
    });
    const config = readConfig({ PROMPTGATE_DB: "memory", PROMPTGATE_LOG_FORMAT: "pretty" });
    writeStartupLine(
      startupLine({ url: "http://127.0.0.1:41234", version: "1.2.3", config, folders, policies }),
      config,
      destination,
    );
    const text = written.join("");
    expect(text).toContain("promptgate listening on http://127.0.0.1:41234 (");
    expect(text.startsWith("{")).toBe(false);
  });
});
