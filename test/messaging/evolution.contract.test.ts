import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getDb } from "../../db/client";
import { EvolutionProvider } from "../../server/messaging/evolution";
import { handleEvolutionWebhook } from "../../server/messaging/evolution-webhook";
import { startFakeEvolution } from "../fake-evolution";
import { describeProviderContract, type PlatformMessage } from "../provider-contract";

describeProviderContract("evolution (against the fake Evolution API v2)", async () => {
  const fake = await startFakeEvolution();
  let provider: EvolutionProvider | undefined;
  // Our webhook route on its own server, as the gateway would reach it.
  const hooks = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const response = await handleEvolutionWebhook(
      new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: { "content-type": "application/json" }, body: Buffer.concat(chunks) }),
      provider,
    );
    res.writeHead(response.status, { "content-type": "application/json" });
    res.end(await response.text());
  });
  await new Promise<void>((r) => hooks.listen(0, "127.0.0.1", r));
  provider = new EvolutionProvider(await getDb(), {
    apiUrl: fake.url,
    apiKey: fake.apiKey,
    webhookBaseUrl: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`,
    timeoutMs: 2000,
    retries: 1,
    groupsTtlMs: 60_000,
    backoffMs: 10,
  });
  const p = provider;
  return {
    provider: p,
    pair: (id) => fake.pair(id),
    goOffline: (id) => fake.setState(id, "close"),
    received: async (id) =>
      fake.messages
        .filter((m) => m.instance === id)
        .map((m): PlatformMessage => ({
          groupId: m.number,
          type: (m.endpoint === "sendText" ? "text" : m.endpoint === "sendWhatsAppAudio" ? "audio" : m.body.mediatype) as PlatformMessage["type"],
          text: String(m.body.text ?? m.body.caption ?? ""),
          mediaUrl: (m.body.media ?? m.body.audio ?? null) as string | null,
          mentionAll: m.body.mentionsEveryOne === true,
          linkPreview: m.body.linkPreview === true,
        })),
    deliver: async (_id, receipts) => {
      for (const r of receipts) await fake.receipt(r.messageId, "DELIVERY_ACK");
      for (const r of receipts.slice(0, 3)) await fake.receipt(r.messageId, "READ");
    },
    close: async () => {
      await fake.close();
      await new Promise<void>((r) => hooks.close(() => r()));
    },
  };
});
