#!/usr/bin/env node
// The `promptgate` command: the compiled CLI (`npm run build`, which `npm ci` runs through `prepare`).
import "../dist/runtime/node/main.js";
