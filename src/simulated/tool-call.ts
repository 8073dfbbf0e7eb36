import { fakeDocument } from "./fake-document.js";
import { isJsonObject } from "./json-value.js";

/** A function tool a request declares: its name and the JSON Schema of its arguments. */
export interface DeclaredTool {
  name: string;
  parameters: unknown;
}

/** What a request's tool choice allows: the model decides, no tool, some tool, or the named one. */
export type ToolChoice = { kind: "auto" } | { kind: "none" } | { kind: "any" } | { kind: "named"; name: string };

/** What the simulated provider decides a tool call from, read from each surface's fields. */
export interface ToolRequest {
  tools: DeclaredTool[];
  choice: ToolChoice;
  /** Whether the conversation's last turn hands back a tool's result: then the answer is text. */
  endsWithToolResult: boolean;
  lastUserText: string;
  seed: number;
}

/** A simulated tool call: the tool's name and its arguments as compact JSON object text. */
export interface SimulatedToolCall {
  name: string;
  arguments: string;
}

/**
 * The tool call the simulated provider answers with, if any, so that a client's tool loop runs
 * offline: none once a tool's result came back (the loop then gets its text answer), nor under
 * `none`; the named tool, or the first declared one, when the choice requires a call; else the
 * first declared tool that the last user text names as a whole word. The arguments are faked from
 * the tool's parameter schema (`{}` when it has none or cannot be faked).
 */
export function simulatedToolCall(request: ToolRequest): SimulatedToolCall | undefined {
  const { tools, choice } = request;
  if (request.endsWithToolResult || choice.kind === "none" || tools.length === 0) return undefined;
  const tool =
    choice.kind === "named"
      ? tools.find((declared) => declared.name === choice.name)
      : choice.kind === "any"
        ? tools[0]
        : tools.find((declared) => namesWord(request.lastUserText, declared.name));
  if (tool === undefined) return undefined;
  return { name: tool.name, arguments: argumentsFor(tool.parameters, request.seed) };
}

/** Whether `word` occurs in `text` with no name character (letter, digit, `_`, `-`) right before or after it. */
export function namesWord(text: string, word: string): boolean {
  if (word === "") return false;
  for (let at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1)) {
    if (!isNameCharacter(text[at - 1]) && !isNameCharacter(text[at + word.length])) return true;
  }
  return false;
}

function isNameCharacter(character: string | undefined): boolean {
  return character !== undefined && /[\p{L}\p{N}_-]/u.test(character);
}

function argumentsFor(parameters: unknown, seed: number): string {
  if (!isJsonObject(parameters)) return "{}";
  const document = fakeDocument(parameters, seed);
  return document?.startsWith("{") ? document : "{}";
}

/** The declared tools of a list, by the members that hold each one's name and parameters. */
export function declaredTools(
  list: unknown,
  read: (tool: Record<string, unknown>) => DeclaredTool | undefined,
): DeclaredTool[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isJsonObject).flatMap((tool) => read(tool) ?? []);
}
