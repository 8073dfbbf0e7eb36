import { env } from "cloudflare:workers";
import { d1Store } from "../../src/runtime/workers/d1-store.js";
import { migrations } from "../../src/runtime/workers/generated/assets.js";
import { describeStore } from "../store/store-contract.js";

const tables = ["policy_versions", "case_policies", "cached_prefixes", "response_histories", "calls"];

// Each test starts from a database without tables, so that every test also creates them on first use.
describeStore("d1Store", async () => {
  await env.DB.batch(tables.map((table) => env.DB.prepare(`DROP TABLE IF EXISTS ${table}`)));
  return d1Store(env.DB, migrations);
});
