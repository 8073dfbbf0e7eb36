import type { Server, ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";

/** What a drain saw: the requests in flight at its start or arriving during it, and those it had to cut off. */
export interface DrainOutcome {
  requests: number;
  cutOff: number;
}

/** A server's requests in flight, and how to stop it without dropping them. */
export interface ServerDrain {
  /** Whether a drain has begun. */
  readonly draining: boolean;
  /**
   * Stops accepting connections, lets the requests in flight finish for up to `ms`, cuts off the
   * rest and resolves once every connection is closed. A later call may shorten the wait; every
   * call returns the same outcome.
   */
  drain(ms: number): Promise<DrainOutcome>;
}

/** Watches `server`'s requests from now on, so that it can be drained. */
export function serverDrain(server: Server): ServerDrain {
  const open = new Set<ServerResponse>();
  let requests = 0;
  let draining = false;
  let allAnswered = () => {};
  // Before the app's listener, so that a response knows it is the connection's last before it writes its headers.
  server.prependListener("request", (_request, response) => {
    open.add(response);
    if (draining) {
      requests += 1;
      response.shouldKeepAlive = false;
    }
    response.once("close", () => {
      open.delete(response);
      if (open.size === 0) allAnswered();
    });
  });

  let outcome: Promise<DrainOutcome> | undefined;
  let deadline = Number.POSITIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  let cutOff = () => {};
  const waitUntil = (at: number) => {
    if (at >= deadline) return;
    deadline = at;
    clearTimeout(timer);
    timer = setTimeout(() => cutOff(), Math.max(0, at - Date.now()));
  };

  return {
    get draining() {
      return draining;
    },
    drain(ms) {
      waitUntil(Date.now() + ms);
      if (outcome !== undefined) return outcome;
      draining = true;
      requests = open.size;
      for (const response of open) if (!response.headersSent) response.shouldKeepAlive = false;
      // net.Server#close only stops the listener. http.Server#close would also drop idle kept-alive
      // connections at once, on which a balancer can still learn from /readyz that the gateway drains.
      NetServer.prototype.close.call(server);
      const answered = new Promise<void>((resolve) => {
        allAnswered = resolve;
        if (open.size === 0) resolve();
      });
      const overdue = new Promise<void>((resolve) => {
        cutOff = resolve;
      });
      outcome = Promise.race([answered, overdue]).then(async () => {
        clearTimeout(timer);
        deadline = Number.NEGATIVE_INFINITY;
        const unfinished = open.size;
        server.closeAllConnections();
        // The listener is closed already: this waits for the last connection and stops Node's timeout checks.
        await new Promise<void>((resolve) => server.close(() => resolve()));
        return { requests, cutOff: unfinished };
      });
      return outcome;
    },
  };
}
