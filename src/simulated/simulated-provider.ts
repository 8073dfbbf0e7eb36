import { Hono } from "hono";
import { surfaces } from "../surfaces/surfaces.js";
import { type SimulatedClock, systemClock } from "./simulated-clock.js";

/** The origin under which the gateway's transport hands requests to the simulated provider. */
export const simulatedOrigin = "http://simulated.promptgate.invalid";

/** The header every simulated response carries, so no one mistakes it for a real provider's. */
export const simulatedHeader = "x-promptgate-simulated";

/** The simulated provider: answers one request in the provider's own wire format. */
export interface SimulatedProvider {
  /** Never rejects: every failure becomes a native error response. */
  fetch(request: Request): Promise<Response>;
}

/** What a test may set on a simulated provider. */
export interface SimulatedProviderOptions {
  /** The clock cached contents are dated and expired by; the wall clock by default. */
  clock?: SimulatedClock;
}

/**
 * A deterministic, clearly labelled stand-in for every provider's API, each at its surface's
 * simulated mount (`/openai/v1`, `/gemini`, `/anthropic`, …): echo text, or schema-conforming JSON.
 * What a provider keeps between calls (Gemini cached contents, stored Responses) lives
 * in memory, per simulated provider.
 */
export function createSimulatedProvider(options: SimulatedProviderOptions = {}): SimulatedProvider {
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    c.res.headers.set(simulatedHeader, "true");
  });
  for (const surface of surfaces) {
    const standIn = surface.simulated.create(options.clock ?? systemClock);
    app.all(`${surface.simulated.mount}/*`, (c) => {
      const url = new URL(c.req.url);
      url.pathname = url.pathname.slice(surface.simulated.mount.length);
      const { method, headers, body } = c.req.raw;
      // The body passes as a stream, so that the stand-in meets a failing one itself and answers it natively.
      return standIn.fetch(new Request(url, { method, headers, body, duplex: "half" } as RequestInit));
    });
  }
  app.notFound(() =>
    Response.json({ error: { message: "Unknown route of the simulated provider." } }, { status: 404 }),
  );
  app.onError(() => lastResort());
  return {
    async fetch(request) {
      try {
        return await app.fetch(request);
      } catch {
        return lastResort();
      }
    },
  };
}

function lastResort(): Response {
  return Response.json(
    { error: { message: "The simulated provider failed." } },
    { status: 500, headers: { [simulatedHeader]: "true" } },
  );
}
