import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../db/client";
import { channels } from "../db/schema";
import { createTenant } from "../server/auth/create-tenant";
import { groupIdPattern } from "../server/messaging/group-id";
import type { NewGroup } from "../server/messaging/provider";
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
  type: "text" | "image" | "video" | "audio" | "document" | "carousel" | "poll";
  /** The text or caption; a poll's question. */
  text: string;
  /** A poll's options, as the platform received them. */
  options?: string[];
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

  /** Group management (launches): the platform-side controls. */
  groups: GroupControls;
}

/** The platform side of group management. */
export interface GroupControls {
  /** What the platform holds about a group: its settings and who its admins are. */
  groupInfo(channelId: string, groupId: string): Promise<PlatformGroup>;
  /** People join or leave a group on the platform (through its invite link, or leaving on their phone). */
  joinGroup(channelId: string, groupId: string, participants: string[]): Promise<void>;
  leaveGroup(channelId: string, groupId: string, participants: string[]): Promise<void>;
  /** A group admin on a phone revokes the invite link. */
  revokeInvite(channelId: string, groupId: string): Promise<void>;
  /** The group vanishes for the number (`gone`), or the number is demoted (`not_admin`). */
  loseGroup(channelId: string, groupId: string, how: "gone" | "not_admin"): Promise<void>;
}

/** A group as the platform holds it, normalised across providers. */
export interface PlatformGroup {
  name: string;
  description: string | null;
  pictureUrl: string | null;
  adminsOnly: boolean;
  /** Participants (digits) that are admins, the channel's number included. */
  admins: string[];
  size: number;
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
      expect(c.pollOptions).toBeGreaterThanOrEqual(2);
      expect(c.pollOptions).toBeLessThanOrEqual(12);
    });

    it("poll: sent as one poll with its question and options; says whether it reports votes", async () => {
      const id = await newChannel();
      const [g] = await h.provider.listGroups(id);
      const poll = { question: "Qual horário?", options: ["19h", "20h", "21h"], multiple_answers: true };
      const receipt = await h.provider.send(message(id, g.id_group, { content: { type: "poll", poll } }));
      expect(receipt.messageId).toBeTruthy();
      const got = await h.received(id);
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ groupId: g.id_group, type: "poll", text: "Qual horário?", options: ["19h", "20h", "21h"] });
      expect(typeof (await h.provider.pollVotesAvailable())).toBe("boolean");
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
    // ---- group management (docs/decisions.md#launches) ----

    // At least one admin: Evolution API cannot create a group with nobody but the number in it.
    const template = (over: Partial<NewGroup> = {}): NewGroup => ({
      name: `Turma ${randomUUID().slice(0, 4)} #1`,
      description: "Grupo oficial do lançamento",
      pictureUrl: "https://cdn.example.com/capa.png",
      adminsOnly: true,
      admins: ["5511988887777"],
      ...over,
    });
    const invitePattern = /^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9]{20,24}$/;
    const participantEvents = (groupId: string) => events.flatMap((e) => (e.type === "group_participants" && e.groupId === groupId ? [e] : []));

    it("knows the channel's own number once paired (digits with country code)", async () => {
      const id = await newChannel();
      const own = await h.provider.ownNumber(id);
      expect(own).toMatch(/^\d{10,15}$/);
      expect(await h.provider.ownNumber(id)).toBe(own);
    });

    it("creates a group from a template: listed, with its settings, the channel's number and the admins as admins", async () => {
      const id = await newChannel();
      const before = await h.provider.listGroups(id);
      const t = template();
      const g = await h.provider.createGroup(id, t);
      expect(g.id_group).toMatch(groupIdPattern);
      expect(g.name).toBe(t.name);
      const after = await h.provider.listGroups(id);
      expect(after.map((x) => x.id_group)).toEqual([...before.map((x) => x.id_group), g.id_group]);
      const info = await h.groups.groupInfo(id, g.id_group);
      const own = (await h.provider.ownNumber(id)) as string;
      expect(info).toMatchObject({ name: t.name, description: t.description, pictureUrl: t.pictureUrl, adminsOnly: true, size: 2 });
      expect([...info.admins].sort()).toEqual([own, "5511988887777"].sort());
      expect(await h.provider.groupState(id, g.id_group)).toEqual({ exists: true, admin: true, size: 2 });
    });

    it("a channel that is offline cannot create groups (ProviderUnavailableError)", async () => {
      const id = await newChannel();
      await h.goOffline(id);
      await expect(h.provider.createGroup(id, template())).rejects.toBeInstanceOf(ProviderUnavailableError);
    });

    it("invite link: https://chat.whatsapp.com/<code>, stable until renewed or revoked on a phone", async () => {
      const id = await newChannel();
      const g = await h.provider.createGroup(id, template());
      const first = await h.provider.inviteUrl(id, g.id_group);
      expect(first).toMatch(invitePattern);
      expect(await h.provider.inviteUrl(id, g.id_group)).toBe(first);
      const renewed = await h.provider.renewInviteUrl(id, g.id_group);
      expect(renewed).toMatch(invitePattern);
      expect(renewed).not.toBe(first);
      expect(await h.provider.inviteUrl(id, g.id_group)).toBe(renewed);
      await h.groups.revokeInvite(id, g.id_group);
      const after = await h.provider.inviteUrl(id, g.id_group);
      expect(after).toMatch(invitePattern);
      expect(after).not.toBe(renewed);
    });

    it("promotes participants, adding those not yet in the group", async () => {
      const id = await newChannel();
      const g = await h.provider.createGroup(id, template());
      await h.groups.joinGroup(id, g.id_group, ["5511911112222"]);
      await h.provider.promoteParticipants(id, g.id_group, ["5511911112222", "5511933334444"]);
      const info = await h.groups.groupInfo(id, g.id_group);
      expect(info.admins).toEqual(expect.arrayContaining(["5511911112222", "5511933334444"]));
      expect(info.size).toBe(4);
    });

    it("people joining and leaving are group_participants events (numbers as digits)", async () => {
      const id = await newChannel();
      const g = await h.provider.createGroup(id, template());
      await h.groups.joinGroup(id, g.id_group, ["5511955556666", "5511977778888"]);
      await until(() => participantEvents(g.id_group).some((e) => e.action === "join"));
      await h.groups.leaveGroup(id, g.id_group, ["5511955556666"]);
      await until(() => participantEvents(g.id_group).some((e) => e.action === "leave"));
      const seen = participantEvents(g.id_group).map((e) => ({ channelId: e.channelId, action: e.action, participants: [...e.participants].sort() }));
      expect(seen).toEqual([
        { channelId: id, action: "join", participants: ["5511955556666", "5511977778888"] },
        { channelId: id, action: "leave", participants: ["5511955556666"] },
      ]);
      for (const e of participantEvents(g.id_group)) expect(e.at).toBeInstanceOf(Date);
      expect((await h.provider.groupState(id, g.id_group)).size).toBe(3);
    });

    it("group state: the number demoted → admin false (the link cannot be read); the group gone → exists false", async () => {
      const id = await newChannel();
      const demoted = await h.provider.createGroup(id, template());
      await h.groups.loseGroup(id, demoted.id_group, "not_admin");
      expect(await h.provider.groupState(id, demoted.id_group)).toMatchObject({ exists: true, admin: false });
      await expect(h.provider.inviteUrl(id, demoted.id_group)).rejects.toBeInstanceOf(ProviderSendError);
      const gone = await h.provider.createGroup(id, template());
      await h.groups.loseGroup(id, gone.id_group, "gone");
      expect(await h.provider.groupState(id, gone.id_group)).toMatchObject({ exists: false, admin: false });
      expect((await h.provider.listGroups(id)).some((x) => x.id_group === gone.id_group)).toBe(false);
    });
  });
}
