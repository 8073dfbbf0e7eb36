/// <reference path="../../../node_modules/@cloudflare/workers-types/latest/index.d.ts" />
// The Workers runtime's own globals (tsconfig.workers.json), loaded before the one correction below.

// The runtime's types say `TextEncoder.encode` returns a `Uint8Array` over any `ArrayBufferLike`; it returns the
// view of a fresh `ArrayBuffer`, as TypeScript's DOM types say and the core relies on. Declared after the runtime's
// types, this overload is the one that applies.
interface TextEncoder {
  encode(input?: string): Uint8Array<ArrayBuffer>;
}
