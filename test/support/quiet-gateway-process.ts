import { type ChildProcess, spawn } from "node:child_process";
import type { ServerResponse } from "node:http";
import type { FakeUpstream, ReceivedRequest } from "./fake-upstream.js";

/** A gateway process started for load: its output drained but not kept once it listens. */
export interface QuietGatewayProcess {
  url: string;
  pid: number;
  /** Ends the process with SIGKILL (no shutdown code runs) and resolves once it has exited. */
  kill(): Promise<void>;
}

const listening = /promptgate listening on (http:\/\/\S+)/;

/**
 * Starts `src/runtime/node/main.ts` in one Node process (tsx as a loader, so SIGKILL reaches the server itself) on
 * a free port, and resolves once it prints its listening line. Unlike `startGatewayProcess`, what it writes after
 * that line is read and dropped, so that a burst of a thousand calls costs the test process nothing; the last
 * few kilobytes of stderr are kept for the error of a process that fails to start.
 */
export function startQuietGatewayProcess(environment: Record<string, string>): Promise<QuietGatewayProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/runtime/node/main.ts"], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", ...environment },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let started = false;
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-8_000);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`The gateway process did not start in time: ${stderr}`));
    }, 40_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      if (started) return;
      stdout += chunk.toString("utf8");
      const url = listening.exec(stdout)?.[1];
      if (url === undefined) return;
      started = true;
      stdout = "";
      clearTimeout(timer);
      resolve({ url, pid: child.pid as number, kill: () => killed(child) });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (!started) reject(new Error(`The gateway process exited (${code ?? signal}) before listening: ${stderr}`));
    });
  });
}

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

/** A fake upstream's chat completions: those whose body holds a marker held open until the test lets them go. */
export interface HeldAnswers {
  /** How many chat completions whose body includes `text` the upstream has received. */
  received(text: string): number;
  /** Answers every held call still open with a small chat completion; returns how many it answered. */
  release(): number;
}

/** A minimal OpenAI chat completion, with usage so that token windows (if any) reconcile. */
export const chatCompletion = JSON.stringify({
  id: "chatcmpl-held",
  object: "chat.completion",
  created: 0,
  model: "gpt-test",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/**
 * Makes the upstream answer every chat completion at once with `chatCompletion`, except those whose body includes
 * `holdMarker`: those it holds (sending nothing, not even headers) until `release`. Anything else is a 404.
 */
export function holdMarkedCalls(upstream: FakeUpstream, holdMarker: string): HeldAnswers {
  const held: ServerResponse[] = [];
  upstream.answerWith((request: ReceivedRequest, response: ServerResponse) => {
    if (!request.url.endsWith("/chat/completions")) {
      response.writeHead(404, { "content-type": "application/json" });
      response.end('{"error":{"message":"only chat completions here"}}');
      return;
    }
    if (request.body.includes(holdMarker)) {
      held.push(response);
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(chatCompletion);
  });
  return {
    received: (text) =>
      upstream.received.filter((request) => request.url.endsWith("/chat/completions") && request.body.includes(text))
        .length,
    release() {
      let answered = 0;
      for (const response of held.splice(0)) {
        if (response.destroyed || response.writableEnded) continue;
        response.writeHead(200, { "content-type": "application/json" });
        response.end(chatCompletion);
        answered += 1;
      }
      return answered;
    },
  };
}
