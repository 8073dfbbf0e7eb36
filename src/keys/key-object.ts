import type { NamedKey } from "./named-key.js";

/** A key as the admin API and the CLI show it: its settings, times and source; never a secret or a secret's hash. */
export interface KeyObject {
  id: string;
  name: string;
  team: string | null;
  policies: string[];
  models: string[];
  credentials: Record<string, string>;
  limits: Record<string, unknown> | null;
  /** When it was made; null for a key of `keys.toml` that gives no `created_at`. */
  created_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  source: "api" | "file";
}

/** The key object of a key, its times as ISO-8601 strings (UTC) or null. */
export function keyObject(key: NamedKey): KeyObject {
  return {
    id: key.id,
    name: key.name,
    team: key.team ?? null,
    policies: [...key.policies],
    models: [...key.models],
    credentials: { ...key.credentials },
    limits: key.limits === undefined ? null : { ...key.limits },
    created_at: key.source === "file" && key.createdAt === 0 ? null : isoTime(key.createdAt),
    expires_at: isoTime(key.expiresAt),
    revoked_at: isoTime(key.revokedAt),
    last_used_at: isoTime(key.lastUsedAt),
    source: key.source,
  };
}

function isoTime(time: number | undefined): string | null {
  return time === undefined ? null : new Date(time).toISOString();
}
