import { createApp } from "../../app.js";
import { ConfigError } from "../../config.js";
import type { LocalJob } from "../../deps.js";
import { GatewayError } from "../../errors/gateway-error.js";
import { newRef } from "../../errors/ref.js";
import { renderPlainError } from "../../errors/render-plain-error.js";
import { configSecrets } from "../../pipeline/upstream-call.js";
import { logInternalError } from "../../pipeline/write-log.js";
import type { CallRecord } from "../../record/call-record.js";
import { sweepCutoffs } from "../../store/sweep-cutoffs.js";
import { createIsolateDeps, type IsolateDeps, type WorkerEnv } from "./worker-deps.js";

/** The isolate's dependencies, built by its first request; a failed build is tried again by the next one. */
let isolate: Promise<IsolateDeps> | undefined;

function isolateDeps(env: WorkerEnv): Promise<IsolateDeps> {
  isolate ??= createIsolateDeps(env).catch((error: unknown) => {
    isolate = undefined;
    throw error;
  });
  return isolate;
}

/** Stores a call record within the request's lifetime: `waitUntil` keeps the write alive after the response. */
function recorder(deps: IsolateDeps, context: ExecutionContext): (record: CallRecord) => Promise<void> {
  return async (record) => {
    // waitUntil keeps the isolate until D1 has the record, without holding the answer for a D1 round trip.
    context.waitUntil(
      deps.store
        .appendCall(record)
        .catch((error) => logInternalError(deps, record.ref, error, "record", configSecrets(deps.config))),
    );
  };
}

/** The answer jobs of this isolate, by id. */
const localJobs = new Map<string, LocalJob>();

/** The Workers entry: the same app as on Node, from Workers bindings. */
export default {
  async fetch(request, env, context): Promise<Response> {
    let deps: IsolateDeps;
    try {
      deps = await isolateDeps(env);
    } catch (error) {
      // A ConfigError names the variable, never its value; anything else stays unnamed.
      console.error(`promptgate cannot start: ${error instanceof ConfigError ? error.message : "internal error"}`);
      return renderPlainError(new GatewayError("internal", 500, "The gateway failed to start."), newRef());
    }
    // The app is built per request (about 0.3 ms) so that call records reach this request's waitUntil.
    // An answer job runs on in this isolate past its request, as long as `waitUntil` lets it (see the README).
    const jobs = { local: localJobs, keep: (task: Promise<void>) => context.waitUntil(task) };
    return createApp({ ...deps, recordCall: recorder(deps, context), jobs }).fetch(request);
  },
  /** The cron trigger of wrangler.toml: sweeps expired rows out of D1, as a Node gateway does every ten minutes. */
  async scheduled(controller, env, context): Promise<void> {
    const deps = await isolateDeps(env);
    const cutoffs = sweepCutoffs(deps.policies.list(), controller.scheduledTime);
    context.waitUntil(
      deps.store
        .sweep(cutoffs)
        .catch((error) => logInternalError(deps, newRef(), error, "sweep", configSecrets(deps.config))),
    );
  },
} satisfies ExportedHandler<WorkerEnv>;
