import { isObject, type JsonObject } from "../../../json/json-object.js";
import { surfaceNames, surfaces } from "../../../surfaces/surfaces.js";
import { inferRoute } from "./infer-route.js";
import { UsageError } from "./usage-error.js";

/** A file of stored requests, already read: its path (used in the report and messages) and text. */
export interface ReplayFile {
  path: string;
  text: string;
}

/** One stored request, ready to replay: its surface and route named by an envelope or inferred. */
export interface StoredRequest {
  kind: "request";
  file: string;
  /** Position in the file: the array index, or the count of non-blank lines before it in JSON Lines. */
  index: number;
  surface: string;
  route: string;
  inferred: boolean;
  body: JsonObject;
  /** The named schema the envelope gives, standing in for `x-promptgate-schema`. */
  schema: string | undefined;
  /** The cached prefix's size in code points, when the envelope records it. */
  cachePrefixChars: number | undefined;
}

/** A stored entry that is not a request the gateway could take, and why. */
export interface StoredProblem {
  kind: "problem";
  file: string;
  index: number;
  surface: string | undefined;
  route: string | undefined;
  inferred: boolean;
  message: string;
}

/**
 * Every stored request of a file: a JSON file holds one request or an array of them, a
 * `.jsonl` (or `.ndjson`) file one per line. A file that does not parse is a `UsageError`
 * naming it; an entry that parses but is no request becomes a `StoredProblem`.
 */
export function readStoredRequests(file: ReplayFile): Array<StoredRequest | StoredProblem> {
  return storedValues(file).map((value, index) => readStoredRequest(file.path, index, value));
}

function storedValues(file: ReplayFile): unknown[] {
  const text = file.text.replace(/^\uFEFF/, "");
  if (/\.(jsonl|ndjson)$/i.test(file.path)) {
    const values: unknown[] = [];
    for (const [number, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue;
      values.push(parseJson(line, `${file.path}, line ${number + 1}`));
    }
    return values;
  }
  const value = parseJson(text, file.path);
  if (Array.isArray(value)) return value;
  if (isObject(value)) return [value];
  throw new UsageError(`${file.path} holds neither a stored request (a JSON object) nor an array of them.`);
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? `: ${error.message}` : "";
    throw new UsageError(`${where} is not valid JSON${reason}.`);
  }
}

function readStoredRequest(file: string, index: number, value: unknown): StoredRequest | StoredProblem {
  const problem = (message: string, named: Partial<StoredProblem> = {}): StoredProblem => ({
    kind: "problem",
    file,
    index,
    surface: undefined,
    route: undefined,
    inferred: false,
    message,
    ...named,
  });
  if (!isObject(value)) return problem("The stored request is not a JSON object.");
  // No provider's request body has a `surface` member, so one marks an envelope.
  if (value.surface === undefined) {
    const inferred = inferRoute(value, surfaces);
    if ("problem" in inferred) return problem(inferred.problem);
    return {
      kind: "request",
      file,
      index,
      ...inferred,
      inferred: true,
      body: value,
      schema: undefined,
      cachePrefixChars: undefined,
    };
  }
  const { surface, route, body, schema, cache_prefix_chars: cachePrefixChars } = value;
  if (typeof surface !== "string" || !surfaceNames.includes(surface)) {
    return problem(`The envelope's \`surface\` must be one of ${surfaceNames.map((name) => `"${name}"`).join(", ")}.`);
  }
  const named = { surface };
  if (typeof route !== "string") {
    return problem("The envelope's `route` must be a string: the path below the surface's mount.", named);
  }
  const routed = { ...named, route };
  if (!isObject(body)) return problem("The envelope's `body` must be a JSON object.", routed);
  if (schema !== undefined && typeof schema !== "string") {
    return problem("The envelope's `schema` must be the name of a schema in the schema folder.", routed);
  }
  if (cachePrefixChars !== undefined && !(Number.isSafeInteger(cachePrefixChars) && Number(cachePrefixChars) >= 0)) {
    return problem("The envelope's `cache_prefix_chars` must be a non-negative integer.", routed);
  }
  return {
    kind: "request",
    file,
    index,
    ...routed,
    inferred: false,
    body,
    schema,
    cachePrefixChars: cachePrefixChars as number | undefined,
  };
}
