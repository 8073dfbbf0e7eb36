// A fast OpenAI-compatible upstream for the load test, run as its own process so that its CPU is its own.
// Every POST is read whole and answered with one fixed chat completion whose content is a valid v22 answer.
import { createServer } from "node:http";
import { chatCompletion, investigationAnswer } from "./fixtures.js";

const answer = Buffer.from(JSON.stringify(chatCompletion(JSON.stringify(investigationAnswer(3, 300)))));
const headers = { "content-type": "application/json", "content-length": String(answer.byteLength) };

const server = createServer((request, response) => {
  request.on("data", () => undefined);
  request.on("end", () => {
    response.writeHead(request.method === "POST" ? 200 : 404, headers);
    response.end(answer);
  });
});
// Longer than any pause between two rounds, so that proxies keep their pooled connections.
server.keepAliveTimeout = 120_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ ready: true, port, answerBytes: answer.byteLength })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
