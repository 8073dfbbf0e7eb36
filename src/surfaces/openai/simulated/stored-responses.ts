import type { WireResponse as OpenAIResponse } from "../responses-via-chat/response-object.js";
import type { InputItem } from "./input-items.js";

/** At most this many responses are kept; the oldest goes first. */
const maxResponses = 10_000;

/** A response as stored: as it is now, its input items, and how a queued background response completes. */
interface StoredResponse {
  response: OpenAIResponse;
  inputItems: InputItem[];
  /** The completed response a queued background response becomes when it is first looked at. */
  completion: OpenAIResponse | undefined;
}

/**
 * The responses one simulated OpenAI API has stored, for `GET /v1/responses/{id}`, its cancel,
 * deletion and input items, and `previous_response_id`. A background response runs until it is
 * first looked at (a retrieval or a follow-up turn): it completes on the first poll.
 */
export interface StoredResponses {
  /** Keeps a response and its input items; a queued background response with the response it completes as. */
  remember(response: OpenAIResponse, inputItems: InputItem[], completion?: OpenAIResponse): void;
  /** The response as it is now. */
  find(id: string): OpenAIResponse | undefined;
  /** Cancels a queued background response; any other is answered as it is, as the API does once one has ended. */
  cancel(id: string): OpenAIResponse | undefined;
  /** Forgets a response; false when it is unknown. */
  delete(id: string): boolean;
  inputItems(id: string): InputItem[] | undefined;
}

/** Stored responses in memory, bounded, oldest dropped first. */
export function storedResponses(): StoredResponses {
  const responses = new Map<string, StoredResponse>();
  const lookAt = (id: string): StoredResponse | undefined => {
    const stored = responses.get(id);
    if (stored?.completion !== undefined) {
      stored.response = stored.completion;
      stored.completion = undefined;
    }
    return stored;
  };
  return {
    remember(response, inputItems, completion) {
      responses.delete(response.id);
      responses.set(response.id, { response, inputItems, completion });
      for (const oldest of responses.keys()) {
        if (responses.size <= maxResponses) break;
        responses.delete(oldest);
      }
    },
    find: (id) => lookAt(id)?.response,
    cancel(id) {
      const stored = responses.get(id);
      if (stored?.completion !== undefined) {
        // Cancelled while queued: nothing was generated.
        stored.response = { ...stored.response, status: "cancelled" };
        stored.completion = undefined;
      }
      return stored?.response;
    },
    delete: (id) => responses.delete(id),
    inputItems: (id) => responses.get(id)?.inputItems,
  };
}
