import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../../src/record/call-record.js";
import { type GatewayUnderTest, startGatewayUnderTest } from "../support/gateway.js";

// The dashboard's per-key view in a real browser: a named key limited to one request a day makes two calls (the
// second refused by the limit), and the view must show that day's calls, refusals, characters and tokens as the
// usage API sums them, plot them with labelled axes, and show the key's `requests_per_day` window used 1 of 1.

const chromiumPath = process.env.PROMPTGATE_CHROMIUM ?? "/usr/bin/chromium";
const chromiumPresent = existsSync(chromiumPath);
const adminKey = "dashboard-keys-admin-key";
const output = join(import.meta.dirname, "..", "..", "test-output");
// Operator text, shown as text: were it markup, the image's handler would mark the page.
const keyName = `ops <img src=x onerror="document.body.dataset.injected='yes'"> bot`;

if (!chromiumPresent && !process.env.CI) {
  console.warn(`Skipping the dashboard per-key test: no Chromium at ${chromiumPath}. Under CI it fails instead.`);
}

interface UsageRow {
  day: string;
  key_id: string;
  calls: number;
  rejected: number;
  chars: number;
  tokens_in: number;
  tokens_out: number;
}

describe.skipIf(!chromiumPresent && !process.env.CI)("the dashboard's per-key view in Chromium", () => {
  let harness: GatewayUnderTest;
  let browser: Browser;
  let keyId: string;
  let usage: UsageRow[];
  let sent: CallRecord;

  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${harness.gateway.url}/promptgate/admin${path}`, {
      ...init,
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    });

  beforeAll(async () => {
    if (!chromiumPresent)
      throw new Error(`No Chromium at ${chromiumPath}: .ci/run installs Debian's chromium package.`);
    harness = await startGatewayUnderTest({
      PROMPTGATE_KEY_MODE: "keys",
      PROMPTGATE_ADMIN_KEY: adminKey,
      OPENAI_API_KEY: "sk-server-dashboard-keys-000111",
    });
    const made = await admin("/keys", {
      method: "POST",
      body: JSON.stringify({ name: keyName, team: "team-dash", limits: { requests_per_day: 1 } }),
    });
    expect(made.status).toBe(201);
    const created = (await made.json()) as { id: string; key: string };
    keyId = created.id;
    const statuses: number[] = [];
    for (const content of ["The first call of the day.", "The second call of the day."]) {
      const response = await fetch(`${harness.gateway.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${created.key}` },
        body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content }] }),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 429]);
    usage = ((await (await admin(`/usage?key=${keyId}`)).json()) as { data: UsageRow[] }).data;
    const calls = ((await (await admin(`/calls?key=${keyId}`)).json()) as { calls: CallRecord[] }).calls;
    const accepted = calls.find((record) => record.decision === "sent");
    if (accepted === undefined) throw new Error("The key's accepted call has no record.");
    sent = accepted;
    browser = await chromium.launch({ executablePath: chromiumPath });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  it("shows the key's calls, refusals, characters and tokens per UTC day, plotted with units, and its windows", async () => {
    // The usage API's own sums: two calls, one refused by the limit, the accepted one's characters and tokens.
    expect(usage).toHaveLength(1);
    const [day] = usage as [UsageRow];
    const chars = sent.provider_check?.conservative_total_chars ?? 0;
    expect(day).toMatchObject({
      key_id: keyId,
      calls: 2,
      rejected: 1,
      chars,
      tokens_in: sent.usage?.input_tokens ?? 0,
      tokens_out: sent.usage?.output_tokens ?? 0,
    });
    expect(chars).toBeGreaterThan(0);

    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${harness.gateway.url}/promptgate/dashboard#key=${adminKey}`);
    await page.waitForFunction(() => document.body.dataset.keysLoaded === "true");

    // The selector lists the key by its name as text, its team and id.
    const options = await page.$$eval("#key-id option", (elements) =>
      elements.map((option) => ({ value: (option as HTMLOptionElement).value, text: option.textContent })),
    );
    expect(options).toEqual([{ value: keyId, text: `${keyName} (team-dash) · ${keyId}` }]);
    await page.selectOption("#key-id", keyId);
    await page.click("#key-filters button[type=submit]");
    await page.waitForFunction((id) => document.body.dataset.keyLoaded === id, keyId);
    await page.waitForFunction(() => document.querySelectorAll("#usage tr").length === 1);

    const rows = await page.$$eval("#usage tr", (trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
    );
    const grouped = (count: number) => count.toLocaleString("en-US");
    expect(rows).toEqual([[day.day, "2", "1", grouped(chars), grouped(day.tokens_in), grouped(day.tokens_out)]]);

    // The window of the key's own limit: one request of one, resetting at the next UTC midnight.
    const windows = await page.$$eval("#windows tr", (trs) =>
      trs.map((tr) => ({
        window: (tr as HTMLElement).dataset.window,
        policy: (tr as HTMLElement).dataset.policy,
        cells: [...tr.querySelectorAll("td")].map((td) => td.textContent ?? ""),
      })),
    );
    const own = windows.find((window) => window.window === "requests_per_day" && window.policy === undefined);
    const limits = (await (await admin(`/keys/${keyId}/limits`)).json()) as {
      windows: { window: string; used: number; limit: number; reset_at: string | null; policy?: string }[];
    };
    expect(limits.windows[0]).toMatchObject({ window: "requests_per_day", used: 1, limit: 1 });
    const resetAt = limits.windows[0]?.reset_at ?? "";
    expect(own?.cells).toEqual([
      "requests_per_day",
      "this key",
      "1 / 1",
      `${resetAt.slice(0, 19).replace("T", " ")} UTC`,
    ]);
    expect(windows).toHaveLength(limits.windows.length);

    // The per-day plot: calls by default, a column for the day of one accepted and one refused call, labelled axes.
    const plotOf = () =>
      page.$eval("#usage-plot", (svg) => {
        const texts = (selector: string) => [...svg.querySelectorAll(selector)].map((text) => text.textContent ?? "");
        return {
          metric: (svg as SVGElement).dataset.metric,
          bars: [...svg.querySelectorAll(".marks rect")].map((rect) => ({
            kind: rect.getAttribute("class"),
            day: (rect as SVGElement).dataset.day,
            value: Number((rect as SVGElement).dataset.value),
          })),
          ticks: texts(".y-axis text.tick"),
          yTitle: texts(".y-axis .axis-title"),
          xTitle: texts(".x-axis .axis-title"),
          first: texts(".x-axis .first"),
          legend: texts(".legend text"),
        };
      });
    const calls = await plotOf();
    expect(calls.metric).toBe("calls");
    expect(calls.bars).toEqual([
      { kind: "bar-accepted", day: day.day, value: 1 },
      { kind: "bar-rejected", day: day.day, value: 1 },
    ]);
    expect(calls.ticks[0]).toBe("0 calls");
    expect(calls.ticks).toContain("2 calls");
    expect(calls.yTitle).toEqual(["calls"]);
    expect(calls.xTitle).toEqual(["UTC days, oldest to newest (1, one column each)"]);
    expect(calls.first).toEqual([day.day]);
    expect(calls.legend).toEqual(["calls accepted", "calls rejected"]);

    await page.selectOption("#usage-metric", "chars");
    const plotted = await plotOf();
    expect(plotted.bars).toEqual([{ kind: "bar-chars", day: day.day, value: chars }]);
    expect(plotted.yTitle).toEqual(["characters (code points)"]);
    expect(plotted.ticks[0]).toBe("0 chars");
    for (const tick of plotted.ticks) expect(tick).toMatch(/^\d+(\.\d)?k? chars$/);

    await page.selectOption("#usage-metric", "tokens");
    const tokens = await plotOf();
    expect(tokens.bars.map((bar) => bar.value)).toEqual([day.tokens_in, day.tokens_out].filter((count) => count > 0));
    expect(tokens.ticks[0]).toBe("0 tokens");
    expect(tokens.legend).toEqual(["tokens in", "tokens out"]);

    expect(await page.evaluate(() => document.body.dataset.injected)).toBeUndefined();
    expect(await page.$$eval("#key-view img, #key-id img", (images) => images.length)).toBe(0);
    await page.selectOption("#usage-metric", "calls");
    mkdirSync(output, { recursive: true });
    await page.screenshot({ path: join(output, "dashboard-keys.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
