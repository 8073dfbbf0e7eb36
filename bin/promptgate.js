#!/usr/bin/env -S node --no-memory-reducer
// The `promptgate` command: the compiled CLI (`npm run build`, which `npm ci` runs through `prepare`).
import "../dist/runtime/node/main.js";
