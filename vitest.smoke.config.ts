import { defineConfig } from "vitest/config";

// npm run test:smoke: the worker under a real `wrangler dev` (workerd as deployed: no code generation during a
// request), driven over loopback by the real SDK clients. Runs on Node; it starts and stops wrangler itself.
export default defineConfig({
  test: {
    include: ["test/smoke/**/*.smoke.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
