/*
 * Where a whole call allocates: `npm run bench:allocations`. Runs the call of `npm run bench:micro`'s "whole call
 * through the app in process" (the realistic call, the Node deps, a provider that answers at once, no socket) and its
 * harness alone (the Request built, the Response read) under V8's sampling heap profiler, and prints the KiB a call
 * allocates in each function, the harness's beside it. Allocation does not move with the machine's load: a change
 * of a few per cent shows here when no timing on a shared machine can show it.
 */

import { chatRequest, realisticMessageChars } from "./fixtures.js";
import { type AllocationNode, allocationNodes, allocationProfile, wholeCallTasks } from "./micro.js";

const runs = Number(process.argv[2] ?? 3_000);
const shown = Number(process.argv[3] ?? 30);
const realistic = new TextEncoder().encode(JSON.stringify(chatRequest(realisticMessageChars)));
const [whole, harness] = await wholeCallTasks(realistic);
if (whole === undefined || harness === undefined) throw new Error("bench/micro.ts gave no whole-call tasks.");

/** A function's name and file, below the repository or node_modules, with its line where V8 knows it (tsx's not). */
function frameName({ functionName, url, lineNumber }: AllocationNode["callFrame"]): string {
  const place = url.replace(/^.*\/node_modules\//, "").replace(/^file:\/\/.*?\/(src|bench)\//, "$1/");
  return `${functionName || "(anonymous)"} ${place}${lineNumber > 0 ? `:${lineNumber + 1}` : ""}`;
}

/** KiB per run allocated in each function itself (not below it), and in all. */
async function bySelf(task: () => Promise<unknown>): Promise<{ total: number; frames: Map<string, number> }> {
  // Past the first calls' compiling and caching, as in the timings.
  for (let run = 0; run < 2_000; run++) await task();
  const frames = new Map<string, number>();
  let total = 0;
  for (const node of allocationNodes(await allocationProfile(task, runs, 256))) {
    const kib = node.selfSize / runs / 1024;
    const name = frameName(node.callFrame);
    if (kib > 0) frames.set(name, (frames.get(name) ?? 0) + kib);
    total += kib;
  }
  return { total, frames };
}

const call = await bySelf(whole.task);
const alone = await bySelf(harness.task);
const lines = [
  `${runs} calls each: the whole call allocates ${call.total.toFixed(1)} KiB, its harness alone ${alone.total.toFixed(1)} KiB, the gateway ${(call.total - alone.total).toFixed(1)} KiB.`,
  "",
  "| function (allocating itself) | KiB per call | the harness alone |",
  "|---|---:|---:|",
  ...[...call.frames]
    .sort((a, b) => b[1] - a[1])
    .slice(0, shown)
    .map(([name, kib]) => `| \`${name}\` | ${kib.toFixed(2)} | ${(alone.frames.get(name) ?? 0).toFixed(2)} |`),
];
process.stdout.write(`${lines.join("\n")}\n`);
