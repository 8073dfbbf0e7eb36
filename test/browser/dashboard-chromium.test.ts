import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";
import { investigationAnswers } from "../support/investigation-answers.js";

// The dashboard in a real browser: headless Chromium (Debian's `chromium`, driven by playwright-core) opens it on a
// gateway that has served a known set of calls, and its table and plot must show exactly what the records hold.

const chromiumPath = process.env.PROMPTGATE_CHROMIUM ?? "/usr/bin/chromium";
const chromiumPresent = existsSync(chromiumPath);
const adminKey = "dashboard-admin-key";
const secret = "DASHBOARD-PROMPT-SECRET";
const output = join(import.meta.dirname, "..", "..", "test-output");
const v22 = JSON.parse(readFileSync("schemas/investigation_bootstrap_v22.json", "utf8"));
const { answerWithStringFinding } = investigationAnswers("x");

if (!chromiumPresent && !process.env.CI) {
  console.warn(`Skipping the dashboard test: no Chromium at ${chromiumPath}. Under CI it fails instead.`);
}

describe.skipIf(!chromiumPresent && !process.env.CI)("the dashboard in Chromium", () => {
  let harness: GatewayUnderTest;
  let browser: Browser;
  let records: CallRecord[];

  async function chat(content: string, schema?: unknown): Promise<number> {
    const response = await fetch(`${harness.gateway.url}/policies/investigation.bounded/openai/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer sk-client",
        "x-promptgate-case": "case-dash",
      },
      body: JSON.stringify({
        model: "gpt-test",
        messages: [{ role: "user", content: `${content} ${secret}` }],
        ...(schema === undefined
          ? {}
          : { response_format: { type: "json_schema", json_schema: { name: "v22", schema } } }),
      }),
    });
    await response.arrayBuffer();
    return response.status;
  }

  beforeAll(async () => {
    if (!chromiumPresent)
      throw new Error(`No Chromium at ${chromiumPath}: .ci/run installs Debian's chromium package.`);
    harness = await startGatewayUnderTest({ PROMPTGATE_ADMIN_KEY: adminKey });
    // Accepted, over its target, refused for its size, and an invalid structured answer.
    expect(await chat("A short question.")).toBe(200);
    expect(await chat("x".repeat(12_000))).toBe(200);
    expect(await chat("y".repeat(19_500))).toBe(400);
    harness.upstream.answerWith((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      const content = JSON.stringify(answerWithStringFinding());
      response.end(
        JSON.stringify({
          id: "c",
          object: "chat.completion",
          created: 1,
          model: "gpt-test",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        }),
      );
    });
    expect(await chat("Bootstrap.", v22)).toBe(422);
    const listing = await fetch(`${harness.gateway.url}/promptgate/admin/calls?case=case-dash`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    records = ((await listing.json()) as { calls: CallRecord[] }).calls;
    expect(records).toHaveLength(4);
    browser = await chromium.launch({ executablePath: chromiumPath });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  it("shows each call's row, plots its checked totals against its target and limit, and opens its record", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${harness.gateway.url}/promptgate/dashboard#key=${adminKey}`);
    await page.fill("#case", "case-dash");
    await page.click("button[type=submit]");
    await page.waitForFunction(() => document.querySelectorAll("#calls tr").length === 4);

    const rows = await page.$$eval("#calls tr", (trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
    );
    const expected = records.map((record) => [
      record.time,
      record.ref,
      record.case ?? "",
      record.call_label ?? "",
      record.key === undefined
        ? ""
        : record.key.team === null
          ? record.key.name
          : `${record.key.name} (${record.key.team})`,
      record.policy ?? "",
      record.surface,
      record.model ?? "",
      record.decision,
      record.error ?? "",
      record.validation === null ? "" : record.validation.valid ? "valid" : "invalid",
    ]);
    expect(rows).toEqual(expected);
    expect(rows.map((row) => row[8])).toEqual(["sent", "sent", "rejected", "sent"]);
    expect(rows.map((row) => row[10])).toEqual(["", "", "", "invalid"]);

    // One point per check that measured a call, at the height its conservative total gives on the plot's scale.
    const plot = await page.$eval("#plot", (svg) => ({
      yMax: Number((svg as SVGElement).dataset.yMax),
      pad: Number((svg as SVGElement).dataset.pad),
      height: Number(svg.getAttribute("height")),
      points: [...svg.querySelectorAll("circle")].map((circle) => ({
        ref: (circle as SVGElement).dataset.ref,
        check: (circle as SVGElement).dataset.check,
        chars: Number((circle as SVGElement).dataset.chars),
        cy: Number(circle.getAttribute("cy")),
      })),
      limits: svg.querySelectorAll("line.limit").length,
      targets: svg.querySelectorAll("line.target").length,
    }));
    const measured = records.flatMap((record) =>
      [record.preflight, record.provider_check]
        .filter((size) => size !== undefined)
        .map((size) => ({ ref: record.ref, check: size.check, chars: size.conservative_total_chars })),
    );
    expect(plot.points.map(({ ref, check, chars }) => ({ ref, check, chars }))).toEqual(measured);
    for (const point of plot.points) {
      const cy = plot.height - plot.pad - (point.chars / plot.yMax) * (plot.height - 2 * plot.pad);
      expect(point.cy).toBeCloseTo(cy, 3);
    }
    expect(plot.yMax).toBe(Math.max(20_000, ...measured.map((point) => point.chars)));
    expect([plot.limits, plot.targets]).toEqual([4, 4]);

    await page.click(`#calls tr[data-ref="${records[3]?.ref}"]`);
    const shown = await page.textContent("#record");
    expect(JSON.parse(shown ?? "null")).toEqual(records[3]);
    expect(await page.content()).not.toContain(secret);
    mkdirSync(output, { recursive: true });
    await page.screenshot({ path: join(output, "dashboard.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("shows nothing without the admin key, and says why", async () => {
    const page = await browser.newPage();
    await page.goto(`${harness.gateway.url}/promptgate/dashboard`);
    await page.fill("#key", "wrong-key");
    await page.click("button[type=submit]");
    await page.waitForFunction(() => (document.getElementById("status")?.textContent ?? "").includes("admin key"));
    expect(await page.$$eval("#calls tr", (trs) => trs.length)).toBe(0);
    await page.close();
  }, 30_000);
});
