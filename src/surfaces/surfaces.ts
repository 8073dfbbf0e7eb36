import { anthropicSurface } from "./anthropic/anthropic-surface.js";
import { geminiSurface } from "./gemini/gemini-surface.js";
import { openaiSurface } from "./openai/openai-surface.js";
import { openaiCompatibleSurface } from "./openai-compatible/openai-compatible-surface.js";
import type { Surface } from "./surface.js";

/**
 * Every provider the gateway serves, each one folder below `src/surfaces/`: its API as clients speak it, its
 * upstream's environment variables, its translation from the OpenAI API and its simulated stand-in. Configuration,
 * routes, the simulated provider, the CLI and the Workers environment iterate over this list: a new provider is a
 * folder and a line here.
 */
export const surfaces: readonly Surface[] = [openaiSurface, geminiSurface, anthropicSurface, openaiCompatibleSurface];

/** The names of the surfaces, which are the providers a model table may route to. */
export const surfaceNames: readonly string[] = surfaces.map((surface) => surface.name);
