import type { Fault } from "./fake-provider.js";
import type { SurfaceName } from "./provider-answers.js";
import { largeSchema, largeSchemaSizes, maxSchemaChars, recursiveSchema } from "./schemas.js";

/** The gateway key the soak's gateway runs with; every authenticated shot presents it. */
export const gatewayKey = "soak-gateway-key";
/** The request body cap the soak's gateway runs with: room for the pathological lane's bodies of about a megabyte. */
export const maxBodyBytes = 1_200_000;

/** What a shot's answer must be; a shot without one is only counted. */
export interface Expectation {
  statuses: readonly number[];
  /** The `promptgate.code` of an error answer. */
  code?: string;
  /** A 200 stream must reach its final event without an error event. */
  completeStream?: boolean;
  /** The answer must carry no `location` header (a provider's redirect is never relayed). */
  noLocation?: boolean;
  /** A 200 must carry this `x-promptgate-validation` (an annotated structured answer). */
  validation?: "valid" | "invalid";
}

/** One request of the soak. */
export interface Shot {
  /** Its class in the report, e.g. `accepted-stream` or `redirect-307`. */
  kind: string;
  /** The API surface of a call; none for the window toolkit's routes. */
  surface?: SurfaceName;
  /** POST unless said otherwise. */
  method?: "POST" | "PUT";
  path: string;
  body: BodyInit;
  headers: Record<string, string>;
  stream: boolean;
  /** A valid call: the gateway must answer it (a 5xx counts against the gateway). */
  valid: boolean;
  /** The gateway must keep no record of it (refused before authentication). */
  unrecorded?: boolean;
  /** A window toolkit route the gateway keeps no call record of (only a recall is recorded): not looked up. */
  untraced?: boolean;
  expect?: Expectation;
}

interface SurfaceShape {
  name: SurfaceName;
  path: string;
  streamPath: string;
  body(text: string, options?: { stream?: boolean; schema?: unknown }): string;
}

const surfaces: readonly SurfaceShape[] = [
  {
    name: "openai",
    path: "/openai/v1/chat/completions",
    streamPath: "/openai/v1/chat/completions",
    body: (text, { stream, schema } = {}) =>
      JSON.stringify({
        model: "gpt-test",
        messages: [{ role: "user", content: text }],
        ...(stream ? { stream } : {}),
        ...(schema === undefined
          ? {}
          : { response_format: { type: "json_schema", json_schema: { name: "soak", schema } } }),
      }),
  },
  {
    name: "gemini",
    path: "/gemini/v1beta/models/gemini-test:generateContent",
    streamPath: "/gemini/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
    body: (text, { schema } = {}) =>
      JSON.stringify({
        contents: [{ role: "user", parts: [{ text }] }],
        ...(schema === undefined
          ? {}
          : { generationConfig: { responseMimeType: "application/json", responseJsonSchema: schema } }),
      }),
  },
  {
    name: "anthropic",
    path: "/anthropic/v1/messages",
    streamPath: "/anthropic/v1/messages",
    body: (text, { stream, schema } = {}) =>
      JSON.stringify({
        model: "claude-test",
        max_tokens: 16,
        messages: [{ role: "user", content: text }],
        ...(stream ? { stream } : {}),
        ...(schema === undefined ? {} : { output_config: { format: { type: "json_schema", schema } } }),
      }),
  },
];

const keyHeaders = (key: string) => ({ authorization: `Bearer ${key}`, "x-api-key": key, "x-goog-api-key": key });
/** The headers of an authenticated JSON request, on any surface and on the window toolkit. */
export const authenticated = { "content-type": "application/json", ...keyHeaders(gatewayKey) };
/** A 7,000-character case id and call label: far past the 256 the gateway keeps. */
const floodHeaders = { "x-promptgate-case": "c".repeat(7_000), "x-promptgate-call": "l".repeat(7_000) };

const upstreamFaults: Fault[] = ["429", "500", "503", "401", "reset", "malformed"];
const redirects: Fault[] = ["redirect-301", "redirect-302", "redirect-307", "redirect-308"];

/** The shot of a surface with the gateway key and the default policy. */
function shot(surface: SurfaceShape, kind: string, text: string, extra: Partial<Shot> = {}): Shot {
  return {
    kind,
    surface: surface.name,
    path: surface.path,
    body: surface.body(text),
    headers: authenticated,
    stream: false,
    valid: false,
    ...extra,
  };
}

function streamShot(surface: SurfaceShape, kind: string, text: string, extra: Partial<Shot> = {}): Shot {
  return shot(surface, kind, text, {
    path: surface.streamPath,
    body: surface.body(text, { stream: true }),
    stream: true,
    ...extra,
  });
}

/**
 * The mixed load, 24 slots per surface: half accepted calls (a sixth of those streamed), the
 * original rejections and upstream faults, and the adversarial ones: a recursive response schema,
 * an upstream redirect, and 7,000-character label headers with and without a valid key.
 */
export function mixedShot(n: number): Shot {
  const surface = surfaces[n % surfaces.length]!;
  const slot = Math.floor(n / surfaces.length) % 24;
  const text = `soak call ${n}`;
  const ok = { valid: true, expect: { statuses: [200] } };
  if (slot < 9 || slot === 22 || slot === 23) return shot(surface, "accepted", text, ok);
  if (slot === 9 || slot === 21)
    return streamShot(surface, "accepted-stream", text, { ...ok, expect: { statuses: [200], completeStream: true } });
  if (slot === 10)
    return shot(surface, "oversize", "", {
      body: surface.body("x".repeat(maxBodyBytes)),
      expect: { statuses: [413], code: "PAYLOAD_TOO_LARGE" },
    });
  if (slot === 11)
    return shot(surface, "invalid-json", "", {
      body: surface.body(text).slice(0, -4),
      expect: { statuses: [400], code: "INVALID_REQUEST" },
    });
  if (slot === 12)
    return shot(surface, "invalid-utf8", "", {
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22]),
      expect: { statuses: [400], code: "INVALID_REQUEST" },
    });
  if (slot === 13)
    return shot(surface, "window", "", {
      path: `/policies/soak.short${surface.path}`,
      body: surface.body("y".repeat(25_000)),
      expect: { statuses: [400], code: "INVESTIGATION_PROMPT_LIMIT" },
    });
  if (slot === 14) return streamShot(surface, "cut-stream", `${text} FAULT:cut-stream`);
  if (slot === 15 && n % 7 === 0)
    return shot(surface, "hang", `${text} FAULT:hang`, {
      path: `/policies/soak.short${surface.path}`,
      expect: { statuses: [504], code: "timeout" },
    });
  if (slot === 15 || slot === 16) {
    const fault = upstreamFaults[n % upstreamFaults.length]!;
    return shot(surface, `fault-${fault}`, `${text} FAULT:${fault}`);
  }
  if (slot === 17)
    return shot(surface, "recursive-schema", text, {
      body: surface.body(text, { schema: recursiveSchema }),
      expect: { statuses: [400], code: "INVALID_REQUEST" },
    });
  if (slot === 18) {
    const fault = redirects[Math.floor(n / 72) % redirects.length]!;
    return shot(surface, fault, `${text} FAULT:${fault}`, {
      expect: { statuses: [502], code: "upstream", noLocation: true },
    });
  }
  if (slot === 19) {
    // No key at all, or a wrong one: refused before anything about the request is kept.
    const headers = { "content-type": "application/json", ...floodHeaders, ...(n % 2 ? keyHeaders("wrong-key") : {}) };
    return shot(surface, "flood-unauthenticated", text, {
      headers,
      unrecorded: true,
      expect: { statuses: [401], code: "authentication" },
    });
  }
  return shot(surface, "flood-authenticated", text, {
    headers: { ...authenticated, ...floodHeaders },
    expect: { statuses: [400], code: "INVALID_REQUEST" },
  });
}

/** An unauthenticated flood request on surface `n`, for the burst that checks the database does not grow. */
export function floodShot(n: number): Shot {
  const surface = surfaces[n % surfaces.length]!;
  return shot(surface, "flood-burst", `flood ${n}`, {
    headers: { "content-type": "application/json", ...floodHeaders },
    unrecorded: true,
    expect: { statuses: [401], code: "authentication" },
  });
}

/** A slow stream (about 1.6 s), one in five holding its connection open after the final event. */
export function slowStreamShot(n: number): Shot {
  const surface = surfaces[n % surfaces.length]!;
  const fault: Fault = n % 5 === 4 ? "slow-stream-late-end" : "slow-stream";
  return streamShot(surface, fault, `slow ${n} FAULT:${fault}`, {
    valid: true,
    expect: { statuses: [200], completeStream: true },
  });
}

/** A structured-output call with `schema` on surface `n` (the three in turn), under `policy` if one is named. */
export function schemaCallShot(
  n: number,
  kind: string,
  text: string,
  schema: unknown,
  { policy, ...extra }: Partial<Shot> & { policy?: string } = {},
): Shot {
  const surface = surfaces[n % surfaces.length]!;
  return shot(surface, kind, text, {
    path: `${policy === undefined ? "" : `/policies/${policy}`}${surface.path}`,
    body: surface.body(text, { schema }),
    ...extra,
  });
}

/** A large schema never sent before: within the cap a valid call (200), above it 400. */
export function largeSchemaShot(n: number, salt: string): Shot {
  const chars = largeSchemaSizes[n % largeSchemaSizes.length]!;
  const within = chars <= maxSchemaChars;
  const kind = within ? "large-schema" : "large-schema-over-cap";
  return schemaCallShot(n, kind, `Fill in the large form ${n}. SCHEMA-CALL`, largeSchema(chars, `${salt} ${n}`), {
    valid: within,
    expect: within ? { statuses: [200] } : { statuses: [400], code: "INVALID_REQUEST" },
  });
}
