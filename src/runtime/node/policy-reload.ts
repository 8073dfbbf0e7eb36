import type { Logger } from "pino";
import type { Config } from "../../config.js";
import { redactKeys } from "../../errors/redact-keys.js";
import { configSecrets } from "../../pipeline/upstream-call.js";
import { missingListedSchemas } from "../../policy/listed-schemas.js";
import type { PolicyFile } from "../../policy/load-policies.js";
import type { PolicyVersion } from "../../policy/policy.js";
import { PolicyFileError } from "../../policy/policy-file-error.js";
import type { WritablePolicyRegistry } from "../../policy/policy-registry.js";
import { type PolicyReload, type PolicyReloadOptions, policyReloader } from "../../policy/reload-policies.js";
import type { ReloadablePolicies } from "../../policy/reloadable-policies.js";

/** What reloads the Node gateway's policies, and where it says how a reload went. */
export interface NodePolicyReloadOptions {
  config: Config;
  policies: ReloadablePolicies;
  policySchema: object;
  /** The named schemas, read at start-up (a reload does not read the schema folder again). */
  schemaNames: ReadonlySet<string>;
  /** Reads the policy folder's files. */
  readFiles: () => Promise<PolicyFile[]>;
  /** Stores the new versions and brings stored earlier ones into the registry (`syncPolicyVersions`). */
  keep: (registry: WritablePolicyRegistry) => Promise<void>;
  /** What is reloaded with the policies (the folder's `keys.toml`), see `PolicyReloadOptions.alongside`. */
  alongside?: PolicyReloadOptions["alongside"];
  /** The gateway's Node logger (`nodeLogger`): a reload's lines go where its other lines go, in its format. */
  logger: Logger;
}

/**
 * Reloads the policy folder on request (`trigger`: `SIGHUP`, or the admin route) and writes one JSON log line
 * about it: `policies_reloaded` with what changed, or `policies_kept` with every problem found or the failure
 * that stopped it. A failure (the store could not keep the new versions) rejects after its line.
 */
export function nodePolicyReload(options: NodePolicyReloadOptions): (trigger: string) => Promise<PolicyReload> {
  const folder = options.config.policiesDir;
  const reload = policyReloader({
    policies: options.policies,
    folder,
    readFiles: () => options.readFiles().catch((error: unknown) => Promise.reject(folderError(folder, error))),
    policySchema: options.policySchema,
    defaultPolicy: options.config.defaultPolicy,
    keep: options.keep,
    alongside: options.alongside,
  });
  return async (trigger) => {
    const running = options.policies.current().map((version) => version.ref);
    try {
      const outcome = await reload();
      writeReloadLine(options, outcome.reloaded ? "info" : "warn", { trigger, ...outcome });
      if (outcome.reloaded) warnOfMissingSchemas(options.logger, options.policies.current(), options.schemaNames);
      return outcome;
    } catch (error) {
      const failure = error instanceof Error ? `${error.name}: ${error.message}` : "a non-error was thrown";
      writeReloadLine(options, "error", {
        trigger,
        reloaded: false,
        policies: running,
        failure: redactKeys(failure, configSecrets(options.config)),
      });
      throw error;
    }
  };
}

/** A folder that cannot be read is a problem of the reload (the running set stays), named by its error code. */
function folderError(folder: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return error;
  return new PolicyFileError(folder, "(folder)", `cannot be read (${code})`);
}

type ReloadLine = { trigger: string; reloaded: boolean; policies: string[] } & Record<string, unknown>;

/** The reload's one line, through the gateway's logger. */
function writeReloadLine(
  { logger }: Pick<NodePolicyReloadOptions, "logger">,
  level: "info" | "warn" | "error",
  line: ReloadLine,
): void {
  const event = line.reloaded ? "policies_reloaded" : "policies_kept";
  const message = line.reloaded
    ? `policies reloaded on ${line.trigger}`
    : `policies kept on ${line.trigger}: ${"failure" in line ? "the reload failed" : "the policy folder is not valid"}`;
  logger[level]({ event, ...line }, message);
}

/** One `warn` line for each named schema a current policy lists and the gateway lacks (see `missingListedSchemas`). */
export function warnOfMissingSchemas(
  logger: Logger,
  versions: readonly PolicyVersion[],
  schemaNames: ReadonlySet<string>,
): void {
  for (const { message, ...fields } of missingListedSchemas(versions, schemaNames)) {
    logger.warn({ event: "policy_schema_missing", ...fields }, message);
  }
}
