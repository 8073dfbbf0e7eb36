/*
 * What V8's garbage collector costs per request, for the bare proxy, the same proxy on Hono and promptgate:
 * `npm run bench:gc -- [--connections N] [--seconds S] [--warm-up W]`. Each target runs with `npm start`'s Node
 * options and V8's `--trace-gc-nvp`, is warmed up, then loaded alone for S seconds; what the collections that end in
 * that window kept and cost is summed and divided by its 2xx responses. A CPU profile shows only the collector's
 * main-thread share; its helper threads (parallel scavenging, concurrent marking and sweeping) spend time that the
 * CPU per request of `npm run bench` counts and no profile frame shows. For finding what to cut; the figures that
 * count come from a whole `npm run bench`.
 */
import { join } from "node:path";
import { chatRequest, realisticMessageChars } from "./fixtures.js";
import { runLoad, type Target } from "./load.js";
import { comparedTargets, loadOptions, readyLine, startProcess } from "./processes.js";

const { connections, seconds, warmUp } = loadOptions({ seconds: 10, warmUp: 15 });
const root = join(import.meta.dirname, "..");
const tsx = ["--import", "tsx"];
const body = Buffer.from(JSON.stringify(chatRequest(realisticMessageChars)));

/** One `--trace-gc-nvp` line: its kind (`s` scavenge, `mc` mark-compact, …) and its name=value members. */
interface Collection {
  kind: string;
  values: Map<string, number>;
}

function collectionOf(line: string): Collection | undefined {
  const kind = / gc=(\w+)/.exec(line)?.[1];
  if (kind === undefined) return undefined;
  const values = new Map<string, number>();
  for (const [, name, value] of line.matchAll(/ ([\w.]+)=([\d.]+)/g)) values.set(name as string, Number(value));
  return { kind, values };
}

/**
 * Per 2xx response: what the collections of the window kept and cost (µs, by thread, as V8 reports them). Not what
 * was allocated: V8's `allocated` is the heap's growth between two collections, not the bytes allocated (at one
 * connection it read a third of what the sampling heap profiler counts); `--heap-prof` or the inspector's sampling
 * heap profiler measure that.
 */
function perRequest(collections: readonly Collection[], requests: number) {
  const sum = (kind: string, ...names: string[]) =>
    collections
      .filter((collection) => collection.kind === kind)
      .reduce((total, { values }) => total + names.reduce((part, name) => part + (values.get(name) ?? 0), 0), 0);
  const kib = (bytes: number) => Number((bytes / 1024 / requests).toFixed(1));
  const micros = (ms: number) => Number(((1000 * ms) / requests).toFixed(1));
  const scavengeMain = sum("s", "pause");
  const scavengeHelpers = sum("s", "background.scavenge.parallel");
  // A mark-compact's main-thread work: its pause and the incremental marking steps that led up to it.
  const majorMain = sum("mc", "pause", "incremental");
  const majorHelpers = sum(
    "mc",
    "background.mark",
    "background.sweep",
    "background.evacuate.copy",
    "background.evacuate.update_pointers",
  );
  return {
    scavenges: collections.filter((collection) => collection.kind === "s").length,
    markCompacts: collections.filter((collection) => collection.kind === "mc").length,
    survivedKiB: kib(sum("s", "new_space_survived")),
    promotedKiB: kib(sum("s", "promoted")),
    scavengeMainUs: micros(scavengeMain),
    scavengeHelpersUs: micros(scavengeHelpers),
    markCompactMainUs: micros(majorMain),
    markCompactHelpersUs: micros(majorHelpers),
    totalUs: micros(scavengeMain + scavengeHelpers + majorMain + majorHelpers),
  };
}

const upstream = await startProcess([...tsx, "bench/fake-upstream.ts"], {}, readyLine, { cwd: root });
const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
const targets = comparedTargets(upstreamUrl, root);
const rows: Record<string, unknown>[] = [];
try {
  for (const { key, path, start } of targets) {
    let recording = false;
    let partial = "";
    const collections: Collection[] = [];
    const started = await start(["--trace-gc-nvp"], (chunk) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      if (!recording) return;
      for (const line of lines) {
        const collection = collectionOf(line);
        if (collection !== undefined) collections.push(collection);
      }
    });
    const target: Target = {
      key,
      label: key,
      url: `http://127.0.0.1:${started.port}${path}`,
      headers: { authorization: "Bearer sk-bench" },
      pid: started.process.pid,
    };
    try {
      await runLoad(target, body, connections, { seconds: warmUp }, upstream.process.pid);
      recording = true;
      const sample = await runLoad(target, body, connections, { seconds }, upstream.process.pid);
      recording = false;
      rows.push({
        target: key,
        requestsPerSecond: Math.round(sample.requestsPerSecond),
        cpuMsPerRequest: Number(sample.cpuMsPerRequest?.toFixed(3)),
        ...perRequest(collections, Math.max(1, sample.ok)),
      });
    } finally {
      await started.process.stop(15_000);
    }
  }
} finally {
  await upstream.process.stop();
}
console.log(`${connections} connections, ${seconds} s each after ${warmUp} s of warm-up; KiB and µs per request:`);
console.table(rows);
