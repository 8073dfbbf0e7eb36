// The process entry of `npm start` (`node dist/runtime/node/main.js`) and of the `promptgate` bin: the CLI,
// whose default command serves the gateway.
import { runCli } from "./cli/main.js";

await runCli();
