import type { AbortNotice } from "../http/abort-notice.js";

/** A request to a provider, built by the pipeline. */
export interface UpstreamRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer> | string | undefined;
  /** Aborts the upstream call, e.g. when the client disconnects. */
  signal: AbortNotice | undefined;
  /**
   * Told once the connection is open and the request goes out, which ends the connect timeout; a transport that
   * cannot tell calls it as it starts.
   */
  connected?: (() => void) | undefined;
}

/** A provider's answer; the body is read once, either whole or as a stream. */
export interface UpstreamResponse {
  status: number;
  headers: Record<string, string>;
  /** The whole body as bytes. */
  bytes(): Promise<Uint8Array<ArrayBuffer>>;
  /** The body as a stream, passed through as it arrives. */
  stream(): ReadableStream<Uint8Array>;
}

/** Sends one request to a provider; rejects only when no HTTP answer arrived. */
export type Transport = (request: UpstreamRequest) => Promise<UpstreamResponse>;
