const redacted = "[redacted]";

/** Shapes of credentials that may appear in a provider's error text or a transport failure. */
const keyPatterns: readonly RegExp[] = [
  // OpenAI and Anthropic keys, also as the providers echo them masked (`sk-proj-****…abcd`).
  /\bsk-[A-Za-z0-9_*.-]{6,}/g,
  // Google API keys.
  /\bAIza[0-9A-Za-z_-]{10,}/g,
];
const bearer = /\b(Bearer\s+)[^\s"',;]+/gi;
const keyQuery = /([?&](?:key|api_key|access_token)=)[^&#\s"']+/gi;

/**
 * The text with every known secret (the configured provider and gateway keys, the credential the
 * client presented) and everything shaped like a provider key, a bearer token or a `key=` query
 * parameter replaced by `[redacted]`. Secrets shorter than 4 characters are left alone: replacing
 * them would only garble the text.
 */
export function redactKeys(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of [...secrets].sort((left, right) => right.length - left.length)) {
    if (secret.length >= 4) result = result.split(secret).join(redacted);
  }
  for (const pattern of keyPatterns) result = result.replace(pattern, redacted);
  return result.replace(bearer, `$1${redacted}`).replace(keyQuery, `$1${redacted}`);
}
