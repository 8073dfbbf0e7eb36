import { connect, type Socket } from "node:net";

/** What one half-open phase saw. */
export interface HalfOpenFigures {
  sockets: number;
  /** Sockets the gateway closed before the phase gave up on them, and those that got a 408 first. */
  closedByGateway: number;
  answered408: number;
  /** Seconds from the socket's first byte to the gateway closing it. */
  closeSeconds: number[];
  /** Sockets still open when the phase ended (the soak then closed them). */
  outlived: number;
  /** /healthz latencies in ms while the sockets were open, and probes that failed or took over 5 s. */
  healthz: number[];
  healthzFailures: number;
}

/** Stalled starts of a request: an unfinished request line, unfinished headers, and a slow trickle of a header. */
const partials = [
  "GET /heal",
  "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n",
  `POST /anthropic/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: soak-gateway-key\r\nx-promptgate-case: ${"c".repeat(3_000)}`,
  "POST /gemini/v1beta/models/gemini-test:generateContent HTTP/1.1\r\nHost: 127.0.0.1\r\nx-trickle: ",
];

/**
 * Opens `count` connections that each send the start of a request and stall (one in four keeps
 * trickling a byte a second, slowloris-style), probes /healthz every 200 ms meanwhile, and waits up
 * to `holdMs` for the gateway to close them (its header timeout).
 */
export async function halfOpenPhase(origin: string, count: number, holdMs: number): Promise<HalfOpenFigures> {
  const { hostname, port } = new URL(origin);
  const figures: HalfOpenFigures = {
    sockets: count,
    closedByGateway: 0,
    answered408: 0,
    closeSeconds: [],
    outlived: 0,
    healthz: [],
    healthzFailures: 0,
  };
  const sockets: Socket[] = [];
  const timers: NodeJS.Timeout[] = [];
  let giveUp = false;
  const closed = Array.from(
    { length: count },
    (_, index) =>
      new Promise<void>((resolve) => {
        const socket = connect(Number(port), hostname);
        sockets.push(socket);
        let opened = 0;
        let received = "";
        socket.once("connect", () => {
          opened = performance.now();
          socket.write(partials[index % partials.length]!);
          if (index % partials.length === 3) timers.push(setInterval(() => socket.write("x"), 1_000));
        });
        socket.on("data", (chunk: Buffer) => {
          received += chunk.toString("latin1");
        });
        socket.on("error", () => undefined);
        socket.once("close", () => {
          if (!giveUp) {
            figures.closedByGateway++;
            if (opened > 0) figures.closeSeconds.push((performance.now() - opened) / 1000);
            if (received.startsWith("HTTP/1.1 408")) figures.answered408++;
          }
          resolve();
        });
      }),
  );
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const started = performance.now();
      try {
        const response = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(5_000) });
        await response.arrayBuffer();
        if (response.status === 200) figures.healthz.push(performance.now() - started);
        else figures.healthzFailures++;
      } catch {
        figures.healthzFailures++;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, holdMs));
  await Promise.race([Promise.all(closed), deadline]);
  giveUp = true;
  probing = false;
  for (const timer of timers) clearInterval(timer);
  for (const socket of sockets) {
    if (!socket.destroyed) {
      figures.outlived++;
      socket.destroy();
    }
  }
  await probe;
  return figures;
}
