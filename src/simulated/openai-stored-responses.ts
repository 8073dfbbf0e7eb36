import type { Response as OpenAIResponse } from "openai/resources/responses/responses";

/** At most this many responses are kept; the oldest goes first. */
const maxResponses = 10_000;

/** The responses one simulated OpenAI API has stored, for `GET /v1/responses/{id}` and `previous_response_id`. */
export interface StoredResponses {
  remember(response: OpenAIResponse): void;
  find(id: string): OpenAIResponse | undefined;
}

/** Stored responses in memory, bounded, oldest dropped first. */
export function storedResponses(): StoredResponses {
  const responses = new Map<string, OpenAIResponse>();
  return {
    remember(response) {
      responses.delete(response.id);
      responses.set(response.id, response);
      for (const oldest of responses.keys()) {
        if (responses.size <= maxResponses) break;
        responses.delete(oldest);
      }
    },
    find: (id) => responses.get(id),
  };
}
