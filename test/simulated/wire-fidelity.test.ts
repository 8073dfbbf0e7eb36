import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { createSimulatedProvider, simulatedOrigin } from "../../src/simulated/simulated-provider.js";

/**
 * Wire fidelity: every simulated answer must have the member set, nesting, JSON types, id
 * formats and (for streams) event order of what the real provider sends. The reference answers
 * are the fixtures under test/fixtures/wire/<surface>/<kind>.json, each naming the documentation
 * and recordings its facts come from. Values are free; shapes are not.
 */

type JsonType = "null" | "boolean" | "number" | "string" | "array" | "object";
type Json = null | boolean | number | string | Json[] | { [member: string]: Json };

/**
 * What a fixture says about one member, keyed by its path (`choices[].message.content`; `[]`
 * stands for any array element, and in a stream the path starts inside the event's data).
 */
interface MemberRule {
  /** The real API sends the member only in some answers; when sent, it has one of `types`. */
  sometimes?: boolean;
  /** JSON types the real API also sends here, besides the fixture's own. */
  types?: JsonType[];
  /** The real id format, as a regular expression the string value must match. */
  id?: string;
  /** Only the type counts: the members below are data (tool arguments, an echoed schema). */
  opaque?: boolean;
  /** Why the rule holds, for the reader. */
  why?: string;
}
type MemberRules = Record<string, MemberRule>;

interface WireEvent {
  /** The SSE `event:` name; unnamed frames (Chat Completions, Gemini) have none. */
  event?: string;
  data: Json;
}

interface WireFixture {
  source: string;
  /** The request as the real API takes it; the path is the provider's own, without a mount. */
  request: { method: string; path: string; body: Json };
  status: number;
  body?: Json;
  events?: WireEvent[];
  /** Event names the real API may or may not send (Anthropic's `ping`). */
  optionalEvents?: string[];
  rules?: MemberRules;
}

// ---------------------------------------------------------------------------------------------
// The shape comparison

/** A value's JSON type, telling null and arrays apart from objects. */
function jsonType(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  const type = typeof value;
  if (type === "string" || type === "number" || type === "boolean" || type === "object") return type;
  throw new Error(`not a JSON value: ${String(value)}`);
}

/** Members whose value, not only its type, says what an object is (`type: "tool_use"`, `finish_reason`…). */
const discriminators = new Set(["type", "object", "role", "status", "finish_reason", "stop_reason", "finishReason"]);

const memberPath = (path: string, member: string): string => (path === "" ? member : `${path}.${member}`);
/** The rule key of a concrete path: `content[0].id` → `content[].id`. */
const ruleKey = (path: string): string => path.replace(/\[\d+\]/g, "[]");
const lastMember = (path: string): string => path.slice(path.lastIndexOf(".") + 1);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Every way `actual` differs in shape from `expected`, the real API's answer, as
 * `path: what` lines (`content[0].citations: extra member (null)`), in document order: extra or
 * missing members, other JSON types, ids off the real format, other discriminator values.
 * Arrays: each element is compared with the real element at its index (or the last real one).
 */
function shapeDifferences(actual: unknown, expected: Json, rules: MemberRules = {}, path = ""): string[] {
  const rule = rules[ruleKey(path)] ?? {};
  const at = path === "" ? "(root)" : path;
  const sent = jsonType(expected);
  const allowed = [sent, ...(rule.types ?? [])];
  const got = jsonType(actual);
  if (!allowed.includes(got)) return [`${at}: ${got}, the real API sends ${[...new Set(allowed)].join(" or ")}`];
  if (rule.id !== undefined && typeof actual === "string" && !new RegExp(rule.id).test(actual)) {
    return [`${at}: id ${JSON.stringify(actual)} is not in the real format /${rule.id}/`];
  }
  if (rule.opaque === true || got !== sent) return [];
  if (Array.isArray(actual) && Array.isArray(expected)) return arrayDifferences(actual, expected, rules, path);
  if (isObject(actual) && isObject(expected)) {
    return objectDifferences(actual, expected as Record<string, Json>, rules, path);
  }
  if (discriminators.has(lastMember(at)) && actual !== expected) {
    return [`${at}: ${JSON.stringify(actual)}, the real API sends ${JSON.stringify(expected)}`];
  }
  return [];
}

/** The first difference `shapeDifferences` finds, or `undefined` when the shapes agree. */
function firstShapeDifference(actual: unknown, expected: Json, rules: MemberRules = {}): string | undefined {
  return shapeDifferences(actual, expected, rules)[0];
}

function objectDifferences(
  actual: Record<string, unknown>,
  expected: Record<string, Json>,
  rules: MemberRules,
  path: string,
): string[] {
  const differences: string[] = [];
  for (const [member, value] of Object.entries(expected)) {
    const at = memberPath(path, member);
    if (member in actual) differences.push(...shapeDifferences(actual[member], value, rules, at));
    else if (rules[ruleKey(at)]?.sometimes !== true) differences.push(`${at}: missing member`);
  }
  for (const [member, value] of Object.entries(actual)) {
    if (member in expected) continue;
    const at = memberPath(path, member);
    const rule = rules[ruleKey(at)];
    const got = jsonType(value);
    if (rule?.sometimes !== true) differences.push(`${at}: extra member${got === "null" ? " (null)" : ""}`);
    // Sent only sometimes, and absent from the fixture: when sent, it must still have a type the API sends.
    else if (!(rule.types ?? []).includes(got)) {
      differences.push(`${at}: ${got}, the real API sends ${(rule.types ?? []).join(" or ")} or leaves it out`);
    }
  }
  return differences;
}

function arrayDifferences(actual: unknown[], expected: Json[], rules: MemberRules, path: string): string[] {
  const at = path === "" ? "(root)" : path;
  if (expected.length === 0) {
    return actual.length === 0 ? [] : [`${at}: ${actual.length} elements, the real API sends an empty array`];
  }
  if (actual.length === 0) return [`${at}: empty array, the real API sends elements`];
  return actual.flatMap((element, index) =>
    shapeDifferences(element, expected[Math.min(index, expected.length - 1)] ?? null, rules, `${path}[${index}]`),
  );
}

// ---------------------------------------------------------------------------------------------
// Streams

/**
 * What kind of event a frame is: its SSE name, or for unnamed frames a name read off the data
 * (Chat Completions chunks by what their delta does, Gemini frames by whether they finish).
 */
function eventLabel({ event, data }: WireEvent): string {
  if (event !== undefined) return event;
  if (data === "[DONE]") return "[DONE]";
  if (isObject(data) && Array.isArray(data.choices)) {
    const choice = data.choices[0];
    if (!isObject(choice)) return "usage chunk";
    if (typeof choice.finish_reason === "string") return `finish chunk (${choice.finish_reason})`;
    const delta = isObject(choice.delta) ? choice.delta : {};
    if ("role" in delta) return "role chunk";
    if ("tool_calls" in delta) return "tool-call delta chunk";
    return "content delta chunk";
  }
  if (isObject(data) && Array.isArray(data.candidates)) {
    const candidate = data.candidates[0];
    const finish = isObject(candidate) ? candidate.finishReason : undefined;
    return typeof finish === "string" ? `final chunk (${finish})` : "chunk";
  }
  return "unknown frame";
}

/** The labels of a stream without its optional events, each run of repeats (deltas) collapsed to one. */
function eventOrder(events: readonly WireEvent[], optional: ReadonlySet<string>): string[] {
  const labels = events.map(eventLabel).filter((label) => !optional.has(label));
  return labels.filter((label, index) => label !== labels[index - 1]);
}

/**
 * How a simulated stream differs from the real one: the event order (runs collapsed, optional
 * events left out), each event's shape against the real event of its kind, and Responses-style
 * `sequence_number`s counting from 0.
 */
function streamDifferences(actual: readonly WireEvent[], fixture: WireFixture): string[] {
  const expected = fixture.events ?? [];
  const optional = new Set(fixture.optionalEvents ?? []);
  const differences: string[] = [];
  const realOrder = eventOrder(expected, optional);
  const order = eventOrder(actual, optional);
  if (order.join("\n") !== realOrder.join("\n")) {
    differences.push(`events: ${order.join(" → ")}; the real API sends ${realOrder.join(" → ")}`);
  }
  const realEvent = new Map<string, Json>();
  for (const event of expected) if (!realEvent.has(eventLabel(event))) realEvent.set(eventLabel(event), event.data);
  const numbered = expected.length > 0 && expected.every(({ data }) => isObject(data) && "sequence_number" in data);
  // The same difference in many events of a kind (every delta) is reported once, with their indexes.
  const where = new Map<string, { label: string; indexes: number[] }>();
  actual.forEach((event, index) => {
    const label = eventLabel(event);
    const real = realEvent.get(label);
    if (real === undefined) return; // already reported in the order
    const found = shapeDifferences(event.data, real, fixture.rules);
    if (numbered && isObject(event.data) && event.data.sequence_number !== index) {
      found.push(`sequence_number ${String(event.data.sequence_number)}, the real API numbers it ${index}`);
    }
    for (const difference of found) {
      const key = `${label}\n${difference}`;
      where.set(key, { label, indexes: [...(where.get(key)?.indexes ?? []), index] });
    }
  });
  for (const [key, { label, indexes }] of where) {
    differences.push(`events[${indexList(indexes)}] ${label}: ${key.slice(label.length + 1)}`);
  }
  return differences;
}

/** `0,1,2,3,7` → `0-3,7`. */
function indexList(indexes: readonly number[]): string {
  const ranges: string[] = [];
  let start = indexes[0] ?? 0;
  indexes.forEach((index, at) => {
    const next = indexes[at + 1];
    if (next === index + 1) return;
    ranges.push(start === index ? `${index}` : `${start}-${index}`);
    start = next ?? 0;
  });
  return ranges.join(",");
}

/** The frames of an SSE body (LF or CRLF separated), with their data parsed unless it is `[DONE]`. */
function sseEvents(text: string): WireEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const lines = frame.split(/\r?\n/);
      const event = lines
        .find((line) => line.startsWith("event:"))
        ?.slice("event:".length)
        .trim();
      const data = lines
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice("data:".length).trimStart())
        .join("\n");
      const parsed: Json = data === "[DONE]" ? data : (parseJson(data) ?? `not JSON: ${data}`);
      return event === undefined ? { data: parsed } : { event, data: parsed };
    });
}

function parseJson(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Driving the simulated provider

/** Where each fixture folder's API is mounted in the simulated provider. */
const mounts: Record<string, string> = {
  "openai-chat": "/openai",
  "openai-responses": "/openai",
  anthropic: "/anthropic",
  gemini: "/gemini",
};

const simulated = createSimulatedProvider();

/** Everything in which the simulated answer to the fixture's request differs from the real answer. */
async function answerDifferences(surface: string, fixture: WireFixture): Promise<string[]> {
  const { method, path, body } = fixture.request;
  const response = await simulated.fetch(
    new Request(`${simulatedOrigin}${mounts[surface]}${path}`, {
      method,
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    }),
  );
  const differences: string[] = [];
  if (response.status !== fixture.status) {
    differences.push(`status: ${response.status}, the real API answers ${fixture.status}`);
  }
  const contentType = response.headers.get("content-type") ?? "";
  const text = await response.text();
  if (fixture.events !== undefined) {
    if (!contentType.startsWith("text/event-stream")) {
      differences.push(`content-type: ${contentType}, the real API streams text/event-stream (${text.slice(0, 200)})`);
      return differences;
    }
    return [...differences, ...streamDifferences(sseEvents(text), fixture)];
  }
  const answer = parseJson(text);
  if (!contentType.startsWith("application/json") || answer === undefined) {
    differences.push(`content-type: ${contentType}, the real API answers application/json (${text.slice(0, 200)})`);
    return differences;
  }
  return [...differences, ...shapeDifferences(answer, fixture.body ?? null, fixture.rules)];
}

const fixtureRoot = new URL("../fixtures/wire/", import.meta.url);
const fixtures = readdirSync(fixtureRoot)
  .sort()
  .flatMap((surface) =>
    readdirSync(new URL(`${surface}/`, fixtureRoot))
      .filter((file) => file.endsWith(".json"))
      .sort()
      .map((file) => ({
        surface,
        kind: file.slice(0, -".json".length),
        fixture: JSON.parse(readFileSync(new URL(`${surface}/${file}`, fixtureRoot), "utf8")) as WireFixture,
      })),
  );

// ---------------------------------------------------------------------------------------------

describe("the shape comparison", () => {
  const real: Json = {
    id: "msg_01YWAN8SEXbHA9nyCxJSUreQ",
    type: "message",
    content: [{ type: "text", text: "Hello" }],
    stop_sequence: null,
    usage: { input_tokens: 3, service_tier: "standard" },
  };
  const rules: MemberRules = {
    id: { id: "^msg_01[1-9A-HJ-NP-Za-km-z]{22}$" },
    stop_sequence: { types: ["string"] },
    "usage.inference_geo": { sometimes: true, types: ["string"] },
    "content[].input": { opaque: true },
  };
  const like = (changes: Record<string, unknown>) => ({ ...(real as Record<string, unknown>), ...changes });

  it("accepts other values in the same shape", () => {
    const actual = like({
      id: "msg_01h9CcCeuJQBYJQevP2ozsi2",
      content: [{ type: "text", text: "Bye" }],
      stop_sequence: "###",
      usage: { input_tokens: 90, service_tier: "priority", inference_geo: "not_available" },
    });
    expect(shapeDifferences(actual, real, rules)).toEqual([]);
  });

  it("names the path of an extra member, null or not", () => {
    expect(firstShapeDifference(like({ content: [{ type: "text", text: "x", citations: null }] }), real, rules)).toBe(
      "content[0].citations: extra member (null)",
    );
    expect(firstShapeDifference(like({ speed: "fast" }), real, rules)).toBe("speed: extra member");
  });

  it("names a missing member and a member of another JSON type", () => {
    expect(firstShapeDifference(like({ usage: { input_tokens: 3 } }), real, rules)).toBe(
      "usage.service_tier: missing member",
    );
    expect(firstShapeDifference(like({ content: [{ type: "text", text: null }] }), real, rules)).toBe(
      "content[0].text: null, the real API sends string",
    );
  });

  it("holds a sometimes-sent member to the types the real API sends", () => {
    const actual = like({ usage: { input_tokens: 3, service_tier: "standard", inference_geo: null } });
    expect(firstShapeDifference(actual, real, rules)).toBe(
      "usage.inference_geo: null, the real API sends string or leaves it out",
    );
  });

  it("checks ids against the real format and discriminators by value", () => {
    expect(firstShapeDifference(like({ id: "msg_sim0123" }), real, rules)).toBe(
      'id: id "msg_sim0123" is not in the real format /^msg_01[1-9A-HJ-NP-Za-km-z]{22}$/',
    );
    expect(firstShapeDifference(like({ type: "completion" }), real, rules)).toBe(
      'type: "completion", the real API sends "message"',
    );
  });

  it("compares every array element and looks no further into opaque members", () => {
    const toolUse: Json = { content: [{ type: "tool_use", input: { city: "Lisbon" } }] };
    const actual = {
      content: [
        { type: "tool_use", input: { any: ["thing"] } },
        { type: "tool_use", input: 1 },
      ],
    };
    expect(shapeDifferences(actual, toolUse, rules)).toEqual(["content[1].input: number, the real API sends object"]);
    expect(firstShapeDifference({ content: [] }, toolUse, rules)).toBe(
      "content: empty array, the real API sends elements",
    );
  });

  it("orders stream events with repeated deltas collapsed and optional events left out", () => {
    const fixture: WireFixture = {
      source: "test",
      request: { method: "POST", path: "/", body: null },
      status: 200,
      optionalEvents: ["ping"],
      events: [
        { event: "start", data: { type: "start" } },
        { event: "ping", data: { type: "ping" } },
        { event: "delta", data: { type: "delta", text: "a" } },
        { event: "delta", data: { type: "delta", text: "b" } },
        { event: "stop", data: { type: "stop" } },
      ],
    };
    const stream = (...names: string[]) => names.map((name) => ({ event: name, data: { type: name, text: "x" } }));
    expect(streamDifferences(stream("start", "delta", "stop"), fixture)).toEqual([
      "events[0] start: text: extra member",
      "events[2] stop: text: extra member",
    ]);
    expect(streamDifferences(stream("start", "stop", "delta"), fixture)[0]).toBe(
      "events: start → stop → delta; the real API sends start → delta → stop",
    );
  });
});

describe("the wire fixtures", () => {
  it.each(fixtures)("$surface/$kind names its sources and passes its own comparison", ({ fixture }) => {
    expect(fixture.source.length).toBeGreaterThan(40);
    const own =
      fixture.events === undefined
        ? shapeDifferences(fixture.body, fixture.body ?? null, fixture.rules)
        : streamDifferences(fixture.events, fixture);
    expect(own, own.join("\n")).toEqual([]);
  });
});

describe("the simulated provider answers as the real APIs do", () => {
  it.each(fixtures)("$surface/$kind has the real members, types, ids and event order", async ({ surface, fixture }) => {
    const differences = await answerDifferences(surface, fixture);
    expect(differences, `\n${differences.join("\n")}\n`).toEqual([]);
  });
});
