import { configDefaults, defineConfig } from "vitest/config";
import { PropertyFirstSequencer } from "./test/support/sequencer.js";
import { testFilesByTier } from "./test/support/tiers.js";

// The Node suite in four projects (test/support/tiers.ts says which file is in which): `vitest run` runs them all
// (npm run test:node), `--project unit` the two-minute loop (npm run test:quick). test/workers runs inside workerd
// (vitest.workers.config.ts), test/smoke against wrangler dev (vitest.smoke.config.ts).
const tiers = testFilesByTier();

export default defineConfig({
  test: {
    exclude: [...configDefaults.exclude, "test/workers/**", "test/smoke/**"],
    testTimeout: 20_000,
    // Every core: Vitest's default here ran one file at a time (two oracle files took 90 s, with this 49 s).
    maxWorkers: "100%",
    // The property tier's long files first: ordered by size, as Vitest orders files it has no durations of, the
    // longest (a 13-line file) started last and ran alone on one core for its last minute (test/support/sequencer.ts).
    sequence: { sequencer: PropertyFirstSequencer },
    projects: [
      // A unit test that takes more than a few seconds belongs to another tier; the timeout leaves room for a
      // machine loaded by the other projects' processes. Worker threads start faster than forks: the project ran
      // in 75 s against 93 s, one run after the other, on 2 cores.
      { extends: true, test: { name: "unit", include: tiers.unit, testTimeout: 10_000, pool: "threads" } },
      { extends: true, test: { name: "e2e", include: tiers.e2e } },
      { extends: true, test: { name: "property", include: tiers.property, testTimeout: 300_000 } },
      {
        extends: true,
        test: {
          name: "system",
          include: tiers.system,
          // A throwaway PostgreSQL cluster for the tests of the PostgreSQL store (or PROMPTGATE_TEST_POSTGRES).
          globalSetup: ["test/support/postgres-setup.ts"],
        },
      },
    ],
  },
});
