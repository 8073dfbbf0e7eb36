import { openaiSurface } from "../openai/openai-surface.js";
import { createOpenAISimulator } from "../openai/simulated/simulator.js";
import type { Surface } from "../surface.js";
import { openaiCompatibleChat } from "./openai-compatible-chat.js";

/**
 * Any server that speaks the OpenAI API (vLLM, Ollama, LM Studio, llama.cpp's server, …) at its own base URL, with
 * its own key. Its wire format, measurement, errors and streams are OpenAI's; a model the table gives it is reached
 * from the OpenAI API with only the model id changed, and it is served natively at `/openai-compatible/v1` too.
 */
export const openaiCompatibleSurface: Surface = {
  ...openaiSurface,
  name: "openai-compatible",
  mount: "/openai-compatible/v1",
  // Its own calls go to its own server: the model table routes calls of the OpenAI API only.
  routesModels: false,
  // A local server's model is whatever it serves; the check asks for this name, which many accept.
  selfTestModel: "local",
  shippedModels: undefined,
  // Its bodies are OpenAI's: a bare one is replayed as OpenAI's, whose measurement is the same.
  bareBodyRoute: undefined,
  chatTranslation: openaiCompatibleChat,
  upstream: {
    variable: "PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE",
    keyVariable: "OPENAI_COMPATIBLE_API_KEY",
    // There is no public one: without a URL its calls go to the simulated provider, key or not.
    defaultBaseUrl: undefined,
    describe: "base URL of an OpenAI-compatible server incl. /v1 (vLLM, Ollama, …)",
    // A local server often takes no key at all.
    keyOptional: true,
  },
  simulated: { mount: "/openai-compatible", basePath: "/openai-compatible/v1", create: () => createOpenAISimulator() },
};
