import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../db/client";
import { channels } from "../db/schema";
import { createTenant } from "../server/auth/create-tenant";
import { groupIdPattern } from "../server/messaging/group-id";
import { newId } from "../server/ids";
import {
  ProviderOutcomeUnknownError,
  ProviderSendError,
  ProviderUnavailableError,
  type MessagingProvider,
  type OutboundMessage,
  type ProviderEvent,
  type SendReceipt,
} from "../server/messaging/provider";

/** What the platform really received for one group, normalised across providers. */
export interface PlatformMessage {
  groupId: string;
  type: "text" | "image" | "video" | "audio" | "document" | "carousel";
  text: string;
  mediaUrl: string | null;
  mentionAll: boolean;
  linkPreview: boolean;
}

/** A provider under test plus the platform-side controls the contract needs. */
export interface ContractHarness {
  provider: MessagingProvider;
  /** Makes a registered channel pair (the simulator pairs by itself). */
  pair(channelId: string): Promise<void>;
  goOffline(channelId: string): Promise<void>;
  /** Messages the platform received on a channel, in order. */
  received(channelId: string): Promise<PlatformMessage[]>;
  /** The platform reports delivery and reading of these messages, where it ever does (the simulator does it by itself). */
  deliver(channelId: string, receipts: SendReceipt[]): Promise<void>;
  /**
   * Platforms that can lose answers: the next send goes out, but only after the provider stopped
   * waiting for its answer (the usual time-out of a real gateway). `settle` waits until it is out.
   */
  loseNextAnswer?(channelId: string): Promise<void>;
  settle?(): Promise<void>;
  /** Platforms that refuse sends with a reason: the next send to this group is refused so. */
  refuseNext?(channelId: string, groupId: string, reason: "rate_limited" | "transient" | "permanent"): Promise<void>;
  close(): Promise<void>;
}

const until = async (ok: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
};

/** One contract, every provider: run it with `describeProviderContract("simulator", setup)`. */
export function describeProviderContract(name: string, setup: () => Promise<ContractHarness>) {
  describe(`messaging provider contract: ${name}`, () => {
    let h: ContractHarness;
    let tenantId: string;
    const events: ProviderEvent[] = [];

    beforeAll(async () => {
      h = await setup();
      h.provider.subscribe((e) => void events.push(e));
      const db = await getDb();
      ({ tenantId } = await createTenant(db, { name: "Contrato", email: `c-${randomUUID()}@example.test`, password: "senha-segura-123" }));
    });
    afterAll(() => h.close());

    async function newChannel(paired = true) {
      const db = await getDb();
      const id = newId("channel");
      await db.insert(channels).values({ id, tenantId, name: "Contrato", status: "connecting", providerRef: "" });
      const created = await h.provider.createChannel({ id, name: "Contrato" });
      expect(created.ref.length).toBeGreaterThan(0);
      if (paired) await h.pair(id);
      return id;
    }

    const message = (channelId: string, groupId: string, over: Partial<OutboundMessage> = {}): OutboundMessage => ({
      channelId,
      groupId,
      deliveryKey: `campaign_${randomUUID()}:${groupId}`,
      content: { type: "text", text: `Olá ${randomUUID().slice(0, 6)}` },
      linkPreview: false,
      mentionAll: false,
      ...over,
    });

    it("declares its capabilities", () => {
      const c = h.provider.capabilities;
      for (const k of ["carousel", "forward", "linkPreview", "mentionAll", "receipts"] as const) expect(typeof c[k]).toBe("boolean");
    });

    it("a new channel pairs, reports connected and emits channel_status", async () => {
      const id = await newChannel();
      expect(await h.provider.getStatus(id)).toBe("connected");
      await until(() => events.some((e) => e.type === "channel_status" && e.channelId === id && e.status === "connected"));
      expect(events.some((e) => e.type === "channel_status" && e.channelId === id && e.status === "connected")).toBe(true);
      const pairing = await h.provider.pairing(id);
      expect(pairing.status).toBe("connected");
    });

    it("lists groups of the form <digits>@g.us (or legacy <phone>-<timestamp>@g.us) with names; offline → ProviderUnavailableError", async () => {
      const id = await newChannel();
      const groups = await h.provider.listGroups(id);
      expect(groups.length).toBeGreaterThan(0);
      for (const g of groups) {
        expect(g.id_group).toMatch(groupIdPattern);
        expect(g.name.length).toBeGreaterThan(0);
      }
      expect(await h.provider.listGroups(id)).toEqual(groups);
      await h.goOffline(id);
      expect(await h.provider.getStatus(id)).toBe("disconnected");
      await expect(h.provider.listGroups(id)).rejects.toBeInstanceOf(ProviderUnavailableError);
    });

    it("a channel still pairing cannot list groups", async () => {
      const id = await newChannel(false);
      const status = await h.provider.getStatus(id);
      if (status === "connecting") await expect(h.provider.listGroups(id)).rejects.toBeInstanceOf(ProviderUnavailableError);
      else expect(status).toBe("connected"); // the simulator pairs at once by default
    });

    it("sends a text once per delivery key, with mention and link preview as asked", async () => {
      const id = await newChannel();
      const [g] = await h.provider.listGroups(id);
      const m = message(id, g.id_group, { mentionAll: true, linkPreview: { type: "auto" }, content: { type: "text", text: "Veja https://example.com" } });
      const first = await h.provider.send(m);
      const again = await h.provider.send(m);
      expect(again.messageId).toBe(first.messageId);
      const got = (await h.received(id)).filter((r) => r.groupId === g.id_group);
      expect(got).toEqual([{ groupId: g.id_group, type: "text", text: "Veja https://example.com", mediaUrl: null, mentionAll: true, linkPreview: true }]);
      const lookup = (deliveryKey: string) => ({ channelId: id, groupId: g.id_group, deliveryKey, content: m.content, since: new Date(Date.now() - 60_000) });
      expect(await h.provider.findSent(lookup(m.deliveryKey))).toMatchObject({ kind: "sent", receipt: { messageId: first.messageId } });
      expect(await h.provider.findSent(lookup(`campaign_${randomUUID()}:${g.id_group}`))).toEqual({ kind: "absent" });
    });

    it("a send whose answer is lost is unknown, never sent twice by the provider, and found by a look-up", async () => {
      if (!h.loseNextAnswer) return; // the platform always answers
      const id = await newChannel();
      const [g] = await h.provider.listGroups(id);
      const m = message(id, g.id_group);
      await h.loseNextAnswer(id);
      const [outcome] = await h.provider.sendMany([m]);
      expect(outcome.ok).toBe(false);
      expect(!outcome.ok && outcome.error).toBeInstanceOf(ProviderOutcomeUnknownError);
      await h.settle?.();
      expect((await h.received(id)).filter((r) => r.groupId === g.id_group)).toHaveLength(1);
      const found = await h.provider.findSent({
        channelId: id,
        groupId: g.id_group,
        deliveryKey: m.deliveryKey,
        content: m.content,
        since: new Date(Date.now() - 60_000),
      });
      expect(found.kind).toBe("sent");
      expect((await h.received(id)).filter((r) => r.groupId === g.id_group)).toHaveLength(1);
    });

    it("refusals are classified: rate limit (transient, slow down), transient, permanent; nothing goes out", async () => {
      if (!h.refuseNext) return; // the platform has no such refusals
      const id = await newChannel();
      const [g] = await h.provider.listGroups(id);
      for (const [reason, transient, rateLimited] of [
        ["rate_limited", true, true],
        ["transient", true, false],
        ["permanent", false, false],
      ] as const) {
        await h.refuseNext(id, g.id_group, reason);
        const [o] = await h.provider.sendMany([message(id, g.id_group)]);
        expect(o.ok).toBe(false);
        const err = !o.ok ? o.error : undefined;
        expect(err).toBeInstanceOf(ProviderSendError);
        expect(err).toMatchObject({ transient, rateLimited });
      }
      expect(await h.received(id)).toHaveLength(0);
    });

    it("sends media (image, video, voice note, document)", async () => {
      const id = await newChannel();
      const [g] = await h.provider.listGroups(id);
      for (const type of ["image", "video", "audio", "document"] as const) {
        await h.provider.send(
          message(id, g.id_group, {
            content: {
              type,
              mediaUrl: `https://cdn.example.com/f.${type}`,
              caption: type === "audio" ? "" : `legenda ${type}`,
              fileName: type === "document" ? "f.pdf" : undefined,
            },
          }),
        );
      }
      const got = await h.received(id);
      expect(got.map((r) => [r.type, r.mediaUrl])).toEqual([
        ["image", "https://cdn.example.com/f.image"],
        ["video", "https://cdn.example.com/f.video"],
        ["audio", "https://cdn.example.com/f.audio"],
        ["document", "https://cdn.example.com/f.document"],
      ]);
    });

    it("carousel: sent as one, or as the documented fallback (one image per card, text and links, in order)", async () => {
      const id = await newChannel();
      const [g] = await h.provider.listGroups(id);
      const cards = [1, 2, 3].map((n) => ({
        image_url: `https://cdn.example.com/${n}.png`,
        text: `Card ${n}`,
        buttons: [{ label: `Comprar ${n}`, type: "URL" as const, url: `https://loja.example.com/${n}` }],
      }));
      await h.provider.send(message(id, g.id_group, { content: { type: "carousel", text: "Ofertas", cards } }));
      const got = await h.received(id);
      if (h.provider.capabilities.carousel) {
        expect(got).toHaveLength(1);
        expect(got[0]).toMatchObject({ type: "carousel", text: "Ofertas" });
      } else {
        expect(got.map((r) => [r.type, r.mediaUrl])).toEqual(cards.map((c) => ["image", c.image_url]));
        got.forEach((r, i) => {
          expect(r.text).toContain(`Card ${i + 1}`);
          expect(r.text).toContain(`https://loja.example.com/${i + 1}`);
        });
        expect(got[0].text).toContain("Ofertas");
      }
    });

    it("sendMany answers one outcome per message, in order; an offline channel is unavailable", async () => {
      const online = await newChannel();
      const offline = await newChannel();
      const [g] = await h.provider.listGroups(online);
      const [og] = await h.provider.listGroups(offline);
      await h.goOffline(offline);
      const outcomes = await h.provider.sendMany([message(online, g.id_group), message(offline, og.id_group), message(online, g.id_group)]);
      expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
      const failed = outcomes[1];
      expect(!failed.ok && failed.error).toBeInstanceOf(ProviderUnavailableError);
    });

    it("reports acks and reads of sent messages by delivery key, or declares that it cannot (capabilities.receipts)", async () => {
      const id = await newChannel();
      const [g] = await h.provider.listGroups(id);
      const ms = Array.from({ length: 30 }, () => message(id, g.id_group));
      const receipts = [];
      for (const m of ms) receipts.push(await h.provider.send(m));
      await h.deliver(id, receipts);
      const keys = new Set(ms.map((m) => m.deliveryKey));
      const acked = () => events.flatMap((e) => (e.type === "message_ack" ? e.receipts : [])).filter((r) => keys.has(r.deliveryKey));
      const read = () => events.flatMap((e) => (e.type === "message_read" ? e.receipts : [])).filter((r) => keys.has(r.deliveryKey));
      if (!h.provider.capabilities.receipts) {
        // The platform never reports group receipts: none may be invented.
        await new Promise((r) => setTimeout(r, 300));
        expect([...acked(), ...read()]).toEqual([]);
        return;
      }
      await until(() => acked().length === 30 && read().length > 0);
      expect(new Set(acked().map((r) => r.deliveryKey))).toEqual(keys);
      expect(read().length).toBeGreaterThan(0);
      for (const r of acked()) expect(r.channelId).toBe(id);
    });

    it("disconnect makes the channel disconnected; pairing again brings it back", async () => {
      const id = await newChannel();
      await h.provider.disconnectChannel(id);
      expect(await h.provider.getStatus(id)).toBe("disconnected");
      await h.pair(id);
      expect(await h.provider.getStatus(id)).toBe("connected");
    });
  });
}
