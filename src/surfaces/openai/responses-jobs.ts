import type { JsonObject } from "../../json/json-object.js";
import type { JobRoute, ShownJobState } from "../surface.js";
import { responseOf } from "./responses-via-chat/response-object.js";

/** A job's state as a Response's `status`: the API has no `cancelling` (its cancel answers at once). */
function statusOf(state: ShownJobState): string {
  return state === "cancelling" ? "in_progress" : state;
}

/**
 * Answer jobs on the Responses API: `background: true` asks for one; its polls return Response objects as the API
 * makes them for a background response (`background: true`, `status` from `queued` to the end).
 */
export const responsesJobs: JobRoute = {
  isBackground: (body) => body.background === true,
  foreground(body) {
    const { background: _job, ...call } = body;
    return call;
  },
  pending(id, body, state, createdAt) {
    const model = typeof body.model === "string" ? body.model : "";
    const object = responseOf(body, {
      id,
      createdAt: Math.floor(createdAt / 1000),
      completedAt: 0,
      model,
      output: [],
      status: "in_progress",
    }) as unknown as JsonObject;
    return { ...object, background: true, status: statusOf(state) };
  },
  restated: (object, state) => ({ ...object, status: statusOf(state) }),
  answered: (answer, id) => ({ ...answer, id, background: true }),
  failed: (object, error) => ({ ...object, status: "failed", error: { code: error.code, message: error.message } }),
  deleted: (id) => ({ id, object: "response", deleted: true }),
};
