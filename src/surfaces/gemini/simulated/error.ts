/** Gemini's native error body: `{error: {code, message, status}}`. */
export function geminiError(code: number, status: string, message: string): Response {
  return Response.json({ error: { code, message, status } }, { status: code });
}

/** Gemini's 400 for a request it refuses as written. */
export function geminiInvalidArgument(message: string): Response {
  return geminiError(400, "INVALID_ARGUMENT", message);
}

/** Gemini's 404 for a route the simulator does not serve. */
export function geminiUnknownRoute(): Response {
  return geminiError(404, "NOT_FOUND", "Unknown route of the simulated Gemini API.");
}
