import { GatewayError, invalidRequest } from "../errors/gateway-error.js";

/** Where a request on a surface is addressed. */
export interface SurfaceRoute {
  /** The policy a `/policies/{policyRef}` prefix pins, decoded; undefined without the prefix. */
  policyRef: string | undefined;
  /** The route path below the surface's mount, canonically encoded, e.g. `/v1beta/models/m:generateContent`. */
  path: string;
}

const pinnedPrefix = "policies";

/** RFC 3986 `pchar` less percent-encoding: what a canonical segment keeps literal. */
const pchar = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]*$/;

/** The `pchar` sub-delimiters and `:`/`@` that `encodeURIComponent` escapes although a segment may hold them. */
const needlesslyEscaped = /%(?:24|26|2B|2C|3A|3B|3D|40)/g;

function notFound(): GatewayError {
  return new GatewayError("NOT_FOUND", 404, "There is no such route on this surface.");
}

/**
 * The route of a request path (the raw `URL.pathname`, not a decoded one) on a surface mounted at
 * `mount`, plain (`{mount}/…`) or pinned (`/policies/{policyRef}{mount}/…`). Contract section 3: the
 * upstream path comes only from the route the gateway matched. So each segment is percent-decoded
 * exactly once and must then be a segment in its own right: one that is empty (`//`), `.` or `..`,
 * or holds `/` or `\` (which an upstream URL parser reads as `/` and then resolves) is no route,
 * 404 NOT_FOUND. The path returned re-encodes the decoded segments canonically, so the upstream
 * reads back exactly those segments and its URL parser has nothing left to resolve.
 *
 * Percent-encoding that does not decode (a `%` without two hex digits, bytes that are not UTF-8) is
 * 400 INVALID_REQUEST instead: the route may well exist and the client misspelled it, as with a
 * malformed body, and the Gemini surface already answered a malformed model name that way.
 */
export function surfaceRoute(pathname: string, mount: string): SurfaceRoute {
  const raw = pathname.split("/");
  if (raw[0] !== "") throw notFound();
  const segments: string[] = [];
  for (let index = 1; index < raw.length; index++) {
    const segment = decodedSegment(raw[index] as string);
    if (segment === "" || segment === "." || segment === ".." || /[/\\]/.test(segment)) throw notFound();
    segments.push(segment);
  }
  let next = 0;
  let policyRef: string | undefined;
  if (segments[0] === pinnedPrefix) {
    policyRef = segments[1];
    next = 2;
  }
  for (const expected of mount.split("/").slice(1)) {
    if (segments[next++] !== expected) throw notFound();
  }
  let path = "";
  try {
    for (; next < segments.length; next++) path += `/${canonicalSegment(segments[next] as string)}`;
  } catch {
    // Only a lone surrogate, which no URL's serialized path can carry, fails to encode.
    throw badEncoding();
  }
  return { policyRef, path };
}

function badEncoding(): GatewayError {
  return invalidRequest("The request path is not valid percent-encoding.");
}

function decodedSegment(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badEncoding();
  }
}

/**
 * A decoded path segment percent-encoded so that it decodes back to itself: every character
 * outside RFC 3986 `pchar` (`A-Za-z0-9-._~!$&'()*+,;=:@`) as UTF-8 escapes, `%` included, so
 * `gemini-2.5-flash:generateContent` stays as it is. A segment must be well-formed Unicode, as
 * decoding yields.
 */
export function canonicalSegment(segment: string): string {
  if (pchar.test(segment)) return segment;
  return encodeURIComponent(segment).replace(needlesslyEscaped, (escaped) => decodeURIComponent(escaped));
}
