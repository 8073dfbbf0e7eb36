import type { JsonObject } from "../../../json/json-object.js";
import type { Surface } from "../../../surfaces/surface.js";

/** A surface and the route below its mount, as the gateway's `match` takes them. */
export interface StoredRoute {
  surface: string;
  route: string;
}

/** A bare body's surface and route, or why they cannot be told from its shape. */
export type InferredRoute = StoredRoute | { problem: string };

/**
 * The surface and route of a bare request body, from its shape as each surface reads it (`bareBodyRoute`): the one
 * surface sure of it, else the first that may take it. Two sure surfaces, or none that takes it, are a problem: an
 * envelope must name them.
 */
export function inferRoute(body: JsonObject, surfaces: readonly Surface[]): InferredRoute {
  const claims = surfaces.flatMap((surface) => {
    const claim = surface.bareBodyRoute?.(body);
    return claim === undefined ? [] : [{ surface: surface.name, ...claim }];
  });
  const sure = claims.filter((claim) => claim.sure);
  if (sure.length > 1) {
    const names = sure.map((claim) => claim.surface).join(" and ");
    return {
      problem: `This bare body has the shape of ${names} at once; an envelope must name its surface and route.`,
    };
  }
  const chosen = sure[0] ?? claims[0];
  if (chosen === undefined) {
    return {
      problem:
        "The surface of this bare body cannot be inferred from its shape; an envelope must name it and its route.",
    };
  }
  return { surface: chosen.surface, route: chosen.route };
}
