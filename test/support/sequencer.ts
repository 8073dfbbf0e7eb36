import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds the longest files of the property tier took on their own (2 cores, `npx vitest run <file>`), for a run
 * without Vitest's cache of durations (a fresh clone, CI), where Vitest would order them by size: the 13 lines of
 * json-tape-checked-utf8.test.ts last, leaving one core idle while it ran alone at the end of the suite.
 */
const expectedSeconds: Record<string, number> = {
  "test/oracle/openai-responses.oracle.test.ts": 50,
  "test/oracle/gemini.oracle.test.ts": 45,
  "test/oracle/anthropic.oracle.test.ts": 42,
  "test/oracle/openai-chat.oracle.test.ts": 40,
  "test/json/json-tape-checked-utf8.test.ts": 40,
  "test/json/json-tape.test.ts": 37,
  "test/schema/projection-soundness-fuzz.test.ts": 15,
};

/**
 * The property tier's files first, longest first (by the duration Vitest kept of a file's last run, else the table
 * above), then every other file in Vitest's own order: the suite's longest files no longer start last.
 */
export class PropertyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const seconds = (file: TestSpecification): number => {
      const path = relative(root, file.moduleId);
      const kept = this.ctx.cache.getFileTestResults(`${file.project.name}:${path}`)?.duration;
      return kept !== undefined ? kept / 1000 : (expectedSeconds[path] ?? 0);
    };
    const property = sorted.filter((file) => file.project.name === "property");
    const others = sorted.filter((file) => file.project.name !== "property");
    // A stable sort: files of equal (or unknown) duration keep Vitest's order.
    return [...property.sort((one, other) => seconds(other) - seconds(one)), ...others];
  }
}
