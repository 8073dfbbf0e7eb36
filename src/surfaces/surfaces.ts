import { anthropicSurface } from "./anthropic/anthropic-surface.js";
import { geminiSurface } from "./gemini/gemini-surface.js";
import { openaiSurface } from "./openai/openai-surface.js";
import type { Surface } from "./surface.js";

/** Every surface the gateway serves. */
export const surfaces: readonly Surface[] = [openaiSurface, geminiSurface, anthropicSurface];

/** The names of the surfaces, which are the providers a model table may route to. */
export const surfaceNames: readonly string[] = surfaces.map((surface) => surface.name);
