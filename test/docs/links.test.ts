import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

// Every relative link of the README, the maintainers' pages and the pages under docs/ leads somewhere: to a file
// that exists and, where it names one, to a heading of that page (GitHub's anchors: lower case, punctuation dropped,
// spaces as hyphens).

const root = join(import.meta.dirname, "..", "..");

function pages(): string[] {
  const docs = readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".md"))
    .map((file) => join("docs", file));
  return ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md", ...docs].sort();
}

/** A page's text without its fenced code blocks, where a `[x](y)` is code, not a link. */
function prose(page: string): string {
  return readFileSync(join(root, page), "utf8").replaceAll(/^```[\s\S]*?^```/gm, "");
}

/** The anchors GitHub gives a page's headings. */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(page).matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const base = heading!
      .trim()
      .toLowerCase()
      .replaceAll(/[^\p{L}\p{N}\s_-]/gu, "")
      .replaceAll(" ", "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const [, target] of prose(page).matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [path, anchor] = target!.split("#");
    const file = path === "" ? page : relative(root, join(root, dirname(page), path!));
    if (!existsSync(join(root, file))) {
      broken.push(`${target} (no ${file})`);
      continue;
    }
    if (anchor !== undefined && file.endsWith(".md") && !anchors(file).has(anchor)) {
      broken.push(`${target} (no heading #${anchor} in ${file})`);
    }
  }
  return broken;
}

describe("the documentation's links", () => {
  it.each(pages())("of %s all resolve", (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });
});
