import { describe, expect, it, vi } from "vitest";
import { eventSplitter } from "../../src/http/sse-events.js";
import type { JsonObject } from "../../src/json/json-object.js";
import { relayStream, type StreamFailures } from "../../src/pipeline/relay-stream.js";

const encoder = new TextEncoder();

/** The protocol's last event here: `[DONE]`, as OpenAI's chat completions end. */
const endsStream = (data: string) => data === "[DONE]";

/** A provider stream that sends `chunks`, then ends, or breaks off with `breakWith`. */
function upstream(chunks: string[], breakWith?: Error): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index++];
      if (chunk !== undefined) controller.enqueue(encoder.encode(chunk));
      else if (breakWith !== undefined) controller.error(breakWith);
      else controller.close();
    },
  });
}

interface Observed {
  events: JsonObject[];
  ends: Array<[complete: boolean, cancelled: boolean]>;
  replaced: string[];
  broken: unknown[];
  internal: unknown[];
}

function relay(
  stream: ReadableStream<Uint8Array>,
  contentType = "text/event-stream",
  replace = true,
  completesStream?: (data: string) => boolean,
) {
  const observed: Observed = { events: [], ends: [], replaced: [], broken: [], internal: [] };
  const failures: StreamFailures = {
    replaceErrorEvent(data) {
      observed.replaced.push(data);
      return replace ? "data: GATEWAY-ERROR\n\n" : undefined;
    },
    breakOff(cause) {
      observed.broken.push(cause);
      return "data: BROKEN\n\n";
    },
    internal(cause) {
      observed.internal.push(cause);
    },
  };
  const relayed = relayStream(
    stream,
    contentType,
    {
      endsStream,
      ...(completesStream === undefined ? {} : { completesStream }),
      onEvent: (event) => observed.events.push(event),
      onEnd: (complete, cancelled) => void observed.ends.push([complete, cancelled]),
    },
    failures,
  );
  return { relayed, observed };
}

async function textOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe("splitting server-sent events", () => {
  it("cuts events at blank lines of any line ending, keeping each event's raw text", () => {
    const splitter = eventSplitter();
    expect(splitter.push("data: 1\n\ndata: 2\r\n\r\nevent: e\rdata: 3\r\r:")).toEqual([
      "data: 1\n\n",
      "data: 2\r\n\r\n",
      "event: e\rdata: 3\r\r",
    ]);
    expect(splitter.rest()).toBe(":");
  });

  it("waits for the rest of an event and for the LF after a CR at a chunk's end", () => {
    const splitter = eventSplitter();
    expect(splitter.push("data: 1\r")).toEqual([]);
    expect(splitter.push("\n\r")).toEqual([]);
    expect(splitter.push("\ndata: 2")).toEqual(["data: 1\r\n\r\n"]);
    expect(splitter.rest()).toBe("data: 2");
  });
});

describe("relaying a provider's stream", () => {
  it("passes every byte unchanged across chunk boundaries and tells the observer each event", async () => {
    const frames = ['data: {"n":1}\r\n\r\n', 'data: {"n":2}\r\n\r\n', "data: [DONE]\r\n\r\n"];
    const whole = frames.join("");
    const { relayed, observed } = relay(upstream([whole.slice(0, 7), whole.slice(7, 16), whole.slice(16)]));
    expect(await textOf(relayed)).toBe(whole);
    expect(observed.events).toEqual([{ n: 1 }, { n: 2 }]);
    expect(observed.ends).toEqual([[true, false]]);
  });

  it("replaces an error event the provider sends inside the stream", async () => {
    const providerError =
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    const { relayed, observed } = relay(upstream(['data: {"n":1}\n\n', providerError]));
    const text = await textOf(relayed);
    expect(text).toBe('data: {"n":1}\n\ndata: GATEWAY-ERROR\n\n');
    expect(text).not.toContain("Overloaded");
    expect(observed.replaced).toHaveLength(1);
    expect(observed.ends).toEqual([[false, false]]);
  });

  it("adds no second error event when the stream breaks off after the provider's own", async () => {
    const { relayed, observed } = relay(upstream(['data: {"error":{"message":"raw"}}\n\n'], new Error("closed")));
    expect(await textOf(relayed)).toBe("data: GATEWAY-ERROR\n\n");
    expect(observed.broken).toHaveLength(0);
  });

  it("recognises a data object with an error member as an error event", async () => {
    const { relayed } = relay(upstream(['data: {"error":{"code":503,"message":"raw"}}\n\n']));
    expect(await textOf(relayed)).toBe("data: GATEWAY-ERROR\n\n");
  });

  it("relays the provider's error event as it came when the policy passes upstream text through", async () => {
    const providerError = 'data: {"error":{"message":"raw"}}\n\n';
    const { relayed } = relay(upstream([providerError]), "text/event-stream", false);
    expect(await textOf(relayed)).toBe(providerError);
  });

  it("ends a stream that breaks off with the native error event, dropping the cut event", async () => {
    const { relayed, observed } = relay(upstream(['data: {"n":1}\n\n', 'data: {"n":'], new Error("terminated")));
    expect(await textOf(relayed)).toBe('data: {"n":1}\n\ndata: BROKEN\n\n');
    expect(observed.broken).toHaveLength(1);
    expect(observed.ends).toEqual([[false, false]]);
  });

  it("ends a stream its protocol marks with the native error event when it closes before the mark", async () => {
    const { relayed, observed } = relay(upstream(['data: {"n":1}\n\n']), "text/event-stream", true, endsStream);
    expect(await textOf(relayed)).toBe('data: {"n":1}\n\ndata: BROKEN\n\n');
    expect(observed.broken).toMatchObject([{ code: "STREAM_CLOSED_EARLY" }]);
    expect(observed.ends).toEqual([[false, false]]);
  });

  it("takes a stream as whole when an event marked it complete, though more followed before the close", async () => {
    const marks = (data: string) => data.includes("finish");
    const frames = ['data: {"n":1}\n\n', 'data: {"finish":true}\n\n', 'data: {"usage":1}\n\n'];
    const { relayed, observed } = relay(upstream(frames), "text/event-stream", true, marks);
    expect(await textOf(relayed)).toBe(frames.join(""));
    expect(observed.broken).toEqual([]);
    expect(observed.ends).toEqual([[true, false]]);
  });

  it("breaks off a JSON-array stream, which cannot carry an error event", async () => {
    const { relayed, observed } = relay(upstream(['[{"n":1}'], new Error("terminated")), "application/json");
    await expect(textOf(relayed)).rejects.toThrow();
    expect(observed.ends).toEqual([[false, false]]);
  });

  it("reads a whole JSON-array stream at its end", async () => {
    const { relayed, observed } = relay(upstream(['[{"n":1}', ',{"n":2}]']), "application/json");
    expect(await textOf(relayed)).toBe('[{"n":1},{"n":2}]');
    expect(observed.events).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("tells the observer when the client cancels", async () => {
    let cancelled = false;
    const source = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(encoder.encode('data: {"n":1}\n\n')),
      cancel: () => {
        cancelled = true;
      },
    });
    const { relayed, observed } = relay(source);
    const reader = relayed.getReader();
    await reader.read();
    await reader.cancel();
    expect(cancelled).toBe(true);
    expect(observed.ends).toEqual([[false, true]]);
  });
});

describe("ending a relayed stream", () => {
  /** A provider stream whose chunks the test releases one by one, and which the test ends. */
  function controlledUpstream() {
    let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start: (started) => {
        controller = started;
      },
      cancel: () => {
        cancelled = true;
      },
    });
    return {
      stream,
      send: (text: string) => controller?.enqueue(encoder.encode(text)),
      end: () => controller?.close(),
      wasCancelled: () => cancelled,
    };
  }

  function failuresFor(internal: unknown[], broken: unknown[] = []): StreamFailures {
    return {
      replaceErrorEvent: () => "data: GATEWAY-ERROR\n\n",
      breakOff: (cause) => {
        broken.push(cause);
        return "data: BROKEN\n\n";
      },
      internal: (cause) => void internal.push(cause),
    };
  }

  it("holds the final event until the observer's end has settled, and passes earlier events at once", async () => {
    const upstream = controlledUpstream();
    let release: () => void = () => undefined;
    const recorded = new Promise<void>((resolve) => {
      release = resolve;
    });
    let endSeen = false;
    const relayed = relayStream(
      upstream.stream,
      "text/event-stream",
      {
        endsStream,
        onEvent: () => undefined,
        onEnd: () => {
          endSeen = true;
          return recorded;
        },
      },
      failuresFor([]),
    );
    const reader = relayed.getReader();
    upstream.send('data: {"n":1}\n\n');
    // The first event goes out while the stream is still open upstream.
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"n":1}\n\n');
    upstream.send("data: [DONE]\n\n");
    upstream.end();
    const last = reader.read();
    let lastArrived = false;
    void last.then(() => {
      lastArrived = true;
    });
    await vi.waitFor(() => expect(endSeen).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lastArrived).toBe(false);
    release();
    expect(new TextDecoder().decode((await last).value)).toBe("data: [DONE]\n\n");
    expect((await reader.read()).done).toBe(true);
  });

  it("ends at the protocol's last event and keeps the record first, though the provider keeps its side open", async () => {
    const upstream = controlledUpstream();
    let endSeen = false;
    const relayed = relayStream(
      upstream.stream,
      "text/event-stream",
      {
        endsStream,
        onEvent: () => undefined,
        onEnd: async () => {
          endSeen = true;
        },
      },
      failuresFor([]),
    );
    const reader = relayed.getReader();
    upstream.send('data: {"n":1}\n\n');
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"n":1}\n\n');
    // The provider sends its last event and then neither ends nor sends anything for a while.
    upstream.send('data: [DONE]\n\ndata: {"after":1}\n\n');
    const last = await reader.read();
    expect(endSeen).toBe(true);
    expect(new TextDecoder().decode(last.value)).toBe("data: [DONE]\n\n");
    expect((await reader.read()).done).toBe(true);
    expect(upstream.wasCancelled()).toBe(true);
  });

  it("stops at a replaced error event: nothing after it goes out, and the provider's stream is cancelled", async () => {
    const upstream = controlledUpstream();
    const { relayed, observed } = relay(upstream.stream);
    upstream.send('data: {"n":1}\n\ndata: {"error":{"message":"raw"}}\n\ndata: {"n":2}\n\n');
    expect(await textOf(relayed)).toBe('data: {"n":1}\n\ndata: GATEWAY-ERROR\n\n');
    expect(observed.events).toEqual([{ n: 1 }]);
    expect(observed.ends).toEqual([[false, false]]);
    expect(upstream.wasCancelled()).toBe(true);
  });

  it("goes on as the provider sent it when the observer throws at an event, telling the failure once and ending incomplete", async () => {
    const internal: unknown[] = [];
    const ends: boolean[] = [];
    let seen = 0;
    const relayed = relayStream(
      upstream(['data: {"n":1}\n\n', 'data: {"n":2}\n\n', "data: [DONE]\n\n"]),
      "text/event-stream",
      {
        endsStream,
        onEvent: () => {
          seen++;
          throw new TypeError("observer failed");
        },
        onEnd: (complete) => void ends.push(complete),
      },
      failuresFor(internal),
    );
    expect(await textOf(relayed)).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
    expect(seen).toBe(1);
    expect(internal).toHaveLength(1);
    expect(ends).toEqual([false]);
  });

  it("closes the client's stream normally when the observer's end throws, telling the failure", async () => {
    const internal: unknown[] = [];
    const relayed = relayStream(
      upstream(['data: {"n":1}\n\n', "data: [DONE]\n\n"]),
      "text/event-stream",
      {
        endsStream,
        onEvent: () => undefined,
        onEnd: () => {
          throw new TypeError("end failed");
        },
      },
      failuresFor(internal),
    );
    expect(await textOf(relayed)).toBe('data: {"n":1}\n\ndata: [DONE]\n\n');
    expect(internal).toEqual([new TypeError("end failed")]);
  });

  it("tells a JSON-array stream's break before its end, for the record, though the client's stream can only break", async () => {
    const broken: unknown[] = [];
    const order: string[] = [];
    const failures = failuresFor([], broken);
    const relayed = relayStream(
      upstream(['[{"n":1}'], new Error("terminated")),
      "application/json",
      { endsStream, onEvent: () => undefined, onEnd: () => void order.push(`end after ${broken.length} break`) },
      failures,
    );
    await expect(textOf(relayed)).rejects.toThrow();
    expect(broken).toHaveLength(1);
    expect(order).toEqual(["end after 1 break"]);
  });
});
