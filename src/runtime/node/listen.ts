import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError } from "../../config.js";

/**
 * Listens on `host`:`port`. A failure (the port in use, a foreign address) rejects with a
 * ConfigError naming the address and the variable to change, instead of an unhandled 'error' event.
 */
export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(new ConfigError(listenFailure(error, host, port)));
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve(server.address() as AddressInfo);
    });
  });
}

function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  switch (error.code) {
    case "EADDRINUSE":
      return `port ${port} on ${host} is already in use (EADDRINUSE); set PORT, or HOST, to a free address.`;
    case "EACCES":
      return `listening on port ${port} of ${host} is not permitted (EACCES); set PORT to 1024 or above.`;
    case "EADDRNOTAVAIL":
      return `HOST ${host} is not an address of this machine (EADDRNOTAVAIL); set HOST to one of its addresses.`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `HOST ${host} cannot be resolved (${error.code}); set HOST to an address or a resolvable name.`;
    default:
      return `listening on port ${port} of ${host} failed (${error.code ?? "unknown error"}); check PORT and HOST.`;
  }
}
