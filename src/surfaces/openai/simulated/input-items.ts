import type {
  ResponseInputMessageContentList,
  ResponseInputMessageItem,
  ResponseOutputMessage,
  ResponseOutputText,
} from "openai/resources/responses/responses";
import { isJsonObject, type JsonObject } from "../../../simulated/json-value.js";

/** An input item as `GET /v1/responses/{id}/input_items` lists it; items of other types pass as they came, with an id. */
export type InputItem = ResponseInputMessageItem | ResponseOutputMessage | (JsonObject & { id: string });

const inputRoles = new Set(["user", "system", "developer"]);

/**
 * The input items of a Responses request, as the API keeps them: a string input is one user
 * message; a message's string content becomes one text part; every item gets an id.
 */
export function inputItemsOf(input: unknown, digest: string): InputItem[] {
  const idOf = (index: number, prefix: string) =>
    `${prefix}_sim${digest.slice(0, 32)}${index.toString(16).padStart(8, "0")}`;
  if (typeof input === "string") return [userMessage(idOf(0, "msg"), "user", [{ type: "input_text", text: input }])];
  if (!Array.isArray(input)) return [];
  return input.filter(isJsonObject).map((item, index): InputItem => {
    const id =
      typeof item.id === "string"
        ? item.id
        : idOf(index, item.type === "message" || item.type === undefined ? "msg" : "item");
    if (item.type !== undefined && item.type !== "message") return { ...item, id };
    if (item.role === "assistant") return assistantMessage(id, item.content);
    const role = typeof item.role === "string" && inputRoles.has(item.role) ? item.role : "user";
    return userMessage(id, role as ResponseInputMessageItem["role"], inputTextParts(item.content));
  });
}

/** A message's text parts; the simulator lists no images or files. */
function inputTextParts(content: unknown): ResponseInputMessageContentList {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  if (!Array.isArray(content)) return [];
  return content
    .filter(isJsonObject)
    .flatMap((part) => (typeof part.text === "string" ? [{ type: "input_text" as const, text: part.text }] : []));
}

function userMessage(
  id: string,
  role: ResponseInputMessageItem["role"],
  content: ResponseInputMessageContentList,
): ResponseInputMessageItem {
  return { id, type: "message", role, status: "completed", content };
}

function assistantMessage(id: string, content: unknown): ResponseOutputMessage {
  const parts: ResponseOutputText[] =
    typeof content === "string"
      ? [{ type: "output_text", text: content, annotations: [] }]
      : Array.isArray(content)
        ? content.filter(isJsonObject).map((part) => ({
            type: "output_text",
            text: typeof part.text === "string" ? part.text : "",
            annotations: [],
          }))
        : [];
  return { id, type: "message", role: "assistant", status: "completed", content: parts };
}

/** The query of a list request: `after` (an item id), `limit` (1 to 100, 20 by default), `order` (`desc` by default). */
export interface ListQuery {
  after: string | undefined;
  limit: string | undefined;
  order: string | undefined;
}

/** One page of input items, newest first unless `order=asc`, as the API pages a list. */
export function inputItemsPage(items: readonly InputItem[], query: ListQuery): JsonObject {
  const ordered = query.order === "asc" ? [...items] : [...items].reverse();
  const limit = Math.min(100, Math.max(1, Number.parseInt(query.limit ?? "20", 10) || 20));
  const start = query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
  const data = ordered.slice(start, start + limit);
  const first = data[0];
  const last = data.at(-1);
  // An empty page has no first or last id; the members are left out rather than sent as null.
  const ends = first === undefined || last === undefined ? {} : { first_id: first.id, last_id: last.id };
  return { object: "list", data, ...ends, has_more: start + limit < ordered.length };
}
