import { type NodeGateway, startNodeGateway } from "../../src/runtime/node/node-gateway.js";
import { type FakeUpstream, startFakeUpstream } from "./fake-upstream.js";

/** A gateway on an ephemeral port whose three upstreams are one recording fake server. */
export interface GatewayUnderTest {
  gateway: NodeGateway;
  upstream: FakeUpstream;
  /** Every call log line the gateway wrote, as written (JSON text); captured instead of printed. */
  logs: string[];
  close(): Promise<void>;
}

/** Starts a fake upstream and a gateway in front of it; `environment` adds or overrides variables. */
export async function startGatewayUnderTest(environment: Record<string, string> = {}): Promise<GatewayUnderTest> {
  const upstream = await startFakeUpstream();
  const logs: string[] = [];
  const gateway = await startNodeGateway(
    {
      PORT: "0",
      HOST: "127.0.0.1",
      PROMPTGATE_DB: "memory",
      PROMPTGATE_UPSTREAM_OPENAI: `${upstream.origin}/openai/v1`,
      PROMPTGATE_UPSTREAM_GEMINI: `${upstream.origin}/gemini`,
      PROMPTGATE_UPSTREAM_ANTHROPIC: `${upstream.origin}/anthropic`,
      PROMPTGATE_UPSTREAM_OPENAI_COMPATIBLE: `${upstream.origin}/openai-compatible/v1`,
      ...environment,
    },
    { logDestination: { write: (line) => void logs.push(line) } },
  );
  return {
    gateway,
    upstream,
    logs,
    close: async () => {
      await gateway.close();
      await upstream.close();
    },
  };
}

/** Where a client matrix's calls go: the gateway's embedded simulated provider, or the recording fake upstream. */
export interface ClientSetup {
  name: "simulated" | "fake upstream";
  /** The gateway's environment for `startGatewayUnderTest`. */
  environment: Record<string, string>;
  /** Whether calls reach the fake upstream, which records them (and answers through the same simulator). */
  forwards: boolean;
}

export const clientSetups: ClientSetup[] = [
  {
    name: "simulated",
    environment: {
      PROMPTGATE_UPSTREAM_OPENAI: "simulated",
      PROMPTGATE_UPSTREAM_GEMINI: "simulated",
      PROMPTGATE_UPSTREAM_ANTHROPIC: "simulated",
    },
    forwards: false,
  },
  { name: "fake upstream", environment: {}, forwards: true },
];
