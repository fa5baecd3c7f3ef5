import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getDb } from "../db/client";
import { EvolutionProvider, type EvolutionOptions } from "../server/messaging/evolution";
import { handleEvolutionWebhook } from "../server/evolution-http/evolution-webhook";
import { startFakeEvolution, type FakeEvolution, type FakeEvolutionOptions } from "./fake-evolution";

/** The fake gateway, an EvolutionProvider pointed at it, and our webhook route on its own 127.0.0.1 server. */
export async function startEvolutionProvider(overrides: Partial<EvolutionOptions> = {}, fakeOptions: FakeEvolutionOptions = {}) {
  const fake: FakeEvolution = await startFakeEvolution(fakeOptions);
  let provider: EvolutionProvider | undefined;
  /** Channels created through another provider (withOptions): their webhooks go to it. */
  const routes = new Map<string, EvolutionProvider>();
  const hooks = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const response = await handleEvolutionWebhook(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v] as [string, string]] : [])),
        body: Buffer.concat(chunks),
      }),
      routes.get(decodeURIComponent((req.url ?? "").split("/")[4] ?? "")) ?? provider,
    );
    res.writeHead(response.status, { "content-type": "application/json" });
    res.end(await response.text());
  });
  await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", r));
  const webhookBaseUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;
  const options = (more: Partial<EvolutionOptions>): EvolutionOptions => ({
    apiUrl: fake.url,
    apiKey: fake.apiKey,
    webhookBaseUrl,
    timeoutMs: 5000, // a cold first call (the fake and the webhook route load) took over 2 s on a loaded machine
    retries: 1,
    groupsTtlMs: 60_000,
    backoffMs: 10,
    reconcileAfterMs: 1000,
    ...overrides,
    ...more,
  });
  const db = await getDb();
  provider = new EvolutionProvider(db, options({}));
  return {
    fake,
    provider,
    webhookBaseUrl,
    /** Another provider on the same fake and database; the webhook route then delivers its events to it. */
    withOptions(more: Partial<EvolutionOptions>) {
      const other = new EvolutionProvider(db, options(more));
      const create = other.createChannel.bind(other);
      other.createChannel = async (channel) => {
        routes.set(channel.id, other);
        return create(channel);
      };
      return other;
    },
    close: async () => {
      await fake.close();
      await new Promise<void>((r) => hooks.close(() => r()));
    },
  };
}
