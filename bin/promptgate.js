#!/usr/bin/env node
// Runs the TypeScript CLI in place through tsx, as `npm start` runs the gateway: no build step.
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../src/runtime/node/cli/main.ts");
await runCli();
