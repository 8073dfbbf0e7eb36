import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** One frame of a CPU profile with its share of the sampled time. */
export interface ProfileFrame {
  /** `function file:line`, the file relative to the project or as `pkg/…` under node_modules. */
  frame: string;
  /** Percent of the sampled time spent in this frame itself. */
  selfPercent: number;
  /** Percent of the sampled time with this frame anywhere on the stack. */
  totalPercent: number;
}

/** What a CPU profile of the gateway under load shows. */
export interface ProfileSummary {
  /** Samples after the skipped start-up, and the time they cover. */
  samples: number;
  seconds: number;
  /** The frames with the most self time. */
  topSelf: ProfileFrame[];
  /** promptgate's own frames (under src/ or dist/) with the most total time. */
  topPromptgate: ProfileFrame[];
  /** Self time by where the code lives: a package, a folder of src/ or dist/, node internals, GC. */
  byArea: Array<{ area: string; selfPercent: number }>;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Reads the one `.cpuprofile` in `directory` and summarizes the samples taken after `skipMs` from its start. */
export async function summarizeProfile(directory: string, skipMs: number, top = 15): Promise<ProfileSummary> {
  const name = (await readdir(directory)).find((file) => file.endsWith(".cpuprofile"));
  if (name === undefined) throw new Error(`No .cpuprofile was written to ${directory}.`);
  const profile = JSON.parse(await readFile(join(directory, name), "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const areas = new Map<string, number>();
  let elapsedUs = 0;
  let counted = 0;
  let countedUs = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    elapsedUs += delta;
    if (elapsedUs < skipMs * 1000) return;
    counted++;
    countedUs += delta;
    const node = byId.get(id);
    if (node === undefined) return;
    const key = frameName(node);
    self.set(key, (self.get(key) ?? 0) + 1);
    const area = areaOf(node.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + 1);
    // Every frame on the stack once, however often it recurses.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at);
      if (frame === undefined) break;
      seen.add(frameName(frame));
    }
    for (const frame of seen) total.set(frame, (total.get(frame) ?? 0) + 1);
  });

  const percent = (count: number) => (100 * count) / Math.max(1, counted);
  const frame = (key: string): ProfileFrame => ({
    frame: key,
    selfPercent: percent(self.get(key) ?? 0),
    totalPercent: percent(total.get(key) ?? 0),
  });
  const ranked = (counts: Map<string, number>) => [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([key]) => key);
  return {
    samples: counted,
    seconds: countedUs / 1e6,
    topSelf: ranked(self).slice(0, top).map(frame),
    topPromptgate: ranked(total)
      .filter((key) => / (src|dist)\//.test(key))
      .slice(0, top)
      .map(frame),
    byArea: ranked(areas).map((area) => ({ area, selfPercent: percent(areas.get(area) ?? 0) })),
  };
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = shortUrl(url);
  const name = functionName || "(anonymous)";
  if (file === "") return name;
  // Modules loaded through tsx report line 0 for every function: the name and file say enough there.
  return lineNumber > 0 ? `${name} ${file}:${lineNumber + 1}` : `${name} ${file}`;
}

function shortUrl(url: string): string {
  if (url === "") return "";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules !== -1) return url.slice(modules + "/node_modules/".length);
  return ownPath(url) ?? url.replace(/^file:\/\//, "");
}

/** A file of promptgate's own, as `src/…` (the sources through tsx) or `dist/…` (compiled, as `npm start` runs it). */
function ownPath(url: string): string | undefined {
  const at = url.search(/\/(src|dist)\//);
  return at === -1 ? undefined : url.slice(at + 1);
}

function areaOf(frame: ProfileNode["callFrame"]): string {
  const { url, functionName } = frame;
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const modules = url.lastIndexOf("/node_modules/");
  if (modules !== -1) {
    const rest = url.slice(modules + "/node_modules/".length).split("/");
    return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? "node_modules");
  }
  return ownPath(url)?.split("/").slice(0, 2).join("/") ?? "other";
}
