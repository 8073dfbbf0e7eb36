import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // test/workers runs inside workerd (vitest.workers.config.ts), test/smoke against wrangler dev
    // (vitest.smoke.config.ts).
    exclude: [...configDefaults.exclude, "test/workers/**", "test/smoke/**"],
    setupFiles: ["test/support/validate-with-ajv.ts"],
    // A throwaway PostgreSQL cluster for the PostgreSQL store's tests (or PROMPTGATE_TEST_POSTGRES).
    globalSetup: ["test/support/postgres-setup.ts"],
    testTimeout: 20_000,
  },
});
