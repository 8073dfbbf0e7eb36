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
    const plot = await page.$eval("#plot", (svg) => {
      const data = (svg as SVGElement).dataset;
      const texts = (selector: string) => [...svg.querySelectorAll(selector)].map((text) => text.textContent ?? "");
      return {
        yMax: Number(data.yMax),
        top: Number(data.top),
        bottom: Number(data.bottom),
        points: [...svg.querySelectorAll(".marks circle")].map((circle) => ({
          ref: (circle as SVGElement).dataset.ref,
          check: (circle as SVGElement).dataset.check,
          chars: Number((circle as SVGElement).dataset.chars),
          cy: Number(circle.getAttribute("cy")),
        })),
        limits: svg.querySelectorAll(".marks line.limit").length,
        targets: svg.querySelectorAll(".marks line.target").length,
        ticks: [...svg.querySelectorAll(".y-axis text.tick")].map((text) => ({
          text: text.textContent ?? "",
          value: Number((text as SVGElement).dataset.value),
          y: Number(text.getAttribute("y")),
        })),
        yTitle: texts(".y-axis .axis-title"),
        xTitle: texts(".x-axis .axis-title"),
        first: texts(".x-axis .first"),
        last: texts(".x-axis .last"),
        legend: texts(".legend text"),
        legendMarks: [...svg.querySelectorAll(".legend .entry")].map((entry) =>
          [...entry.querySelectorAll("line, circle")].map((mark) => `${mark.tagName}.${mark.getAttribute("class")}`),
        ),
      };
    });
    const measured = records.flatMap((record) =>
      [record.preflight, record.provider_check]
        .filter((size) => size !== undefined)
        .map((size) => ({ ref: record.ref, check: size.check, chars: size.conservative_total_chars })),
    );
    expect(plot.points.map(({ ref, check, chars }) => ({ ref, check, chars }))).toEqual(measured);
    for (const point of plot.points) {
      const cy = plot.bottom - (point.chars / plot.yMax) * (plot.bottom - plot.top);
      expect(point.cy).toBeCloseTo(cy, 3);
    }
    // The scale reaches the largest limit or total, rounded up to its last tick.
    const largest = Math.max(20_000, ...measured.map((point) => point.chars));
    expect(plot.yMax).toBeGreaterThanOrEqual(largest);
    expect(plot.yMax).toBeLessThan(largest * 2);
    expect([plot.limits, plot.targets]).toEqual([4, 4]);

    // The y axis: labelled ticks in characters from 0 to the top, each at its value's height; the x axis: the calls,
    // oldest to newest, with the first and last call's time; a legend naming every mark.
    expect(plot.yTitle).toEqual(["characters (code points)"]);
    expect(plot.ticks[0]).toMatchObject({ text: "0 chars", value: 0 });
    expect(plot.ticks.at(-1)?.value).toBe(plot.yMax);
    expect(plot.ticks.length).toBeGreaterThanOrEqual(3);
    for (const tick of plot.ticks) {
      expect(tick.text).toMatch(/^\d+(\.\d)?k? chars$/);
      const value = tick.text.endsWith("k chars") ? Number.parseFloat(tick.text) * 1000 : Number.parseFloat(tick.text);
      expect(value).toBe(tick.value);
      expect(tick.y - 4).toBeCloseTo(plot.bottom - (tick.value / plot.yMax) * (plot.bottom - plot.top), 3);
    }
    expect(plot.ticks.map((tick) => tick.text)).toContain("10k chars");
    expect(plot.xTitle).toEqual(["calls, oldest to newest (4, one column each)"]);
    const utc = (iso: string) => `${new Date(iso).toISOString().slice(0, 19).replace("T", " ")} UTC`;
    expect(plot.first).toEqual([`first: ${utc(records[0]?.time ?? "")}`]);
    expect(plot.last).toEqual([`last: ${utc(records[3]?.time ?? "")}`]);
    expect(plot.legend).toEqual([
      "a call's preflight total",
      "a call's provider-check total",
      "its target",
      "its limit",
    ]);
    expect(plot.legendMarks).toEqual([["circle.preflight"], ["circle.provider"], ["line.target"], ["line.limit"]]);

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
