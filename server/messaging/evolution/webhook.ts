import { timingSafeEqual } from "node:crypto";
import { and, desc, eq, isNotNull, isNull, or } from "drizzle-orm";
import { evolutionInstances, evolutionMessages } from "../../../db/schema";
import { samePhone } from "../../phones/phone";
import { groupIdPattern } from "../group-id";
import type { Receipt } from "../provider";
import { type EvolutionContext, sha256, timestampOf } from "./context";
import { type EvolutionMessageRecord, recordFingerprint, recordPart } from "./find-sent";
import type { Gateway } from "./gateway-check";
import { GatewayClock } from "./gateway-clock";
import type { GroupListings } from "./group-listing";
import type { Instances } from "./instances";
import { type EvolutionParticipant, jidNumber, lidOf, pairOf, participantNumber } from "./jids";

/** The gateway's webhooks for one channel: authenticated by the instance's secret, turned into provider events. */
export class WebhookIntake {
  /** The gateway's `date_time` on our clock: when a participant event happened (gateway-clock.ts). */
  private readonly clock = new GatewayClock();

  constructor(
    private readonly ctx: EvolutionContext,
    private readonly instances: Instances,
    private readonly listings: GroupListings,
    private readonly gateway: Gateway,
  ) {}

  /**
   * `group-participants.update` → `group_participants`: `add` is a join, `remove` a leave; `promote` and `demote` →
   * `group_admins` (no membership changes; moderation reads the admins again); `modify` is not read. A pending join request (group approval on) is Baileys'
   * `group.join-request`, which Evolution does not forward: it never arrives here, and its approval comes
   * as an `add` (docs/evolution.md#participants-lids-and-phone-numbers).
   *
   * Participants: Baileys 7 objects `{id, phoneNumber?, lid?}` (Evolution ≥ 2.3.5), or JID strings with
   * Evolution's `participantsData` beside them (before). Each becomes its phone number (digits) when the
   * event carried it, else its LID; every LID ⇄ phone pairing the event carried (the participants', the
   * author's `author`/`authorPn`) goes along in `pairs`. Evolution 2.3.7's `participantsData` compares
   * Baileys 7's objects to strings and so carries nothing (`phoneNumber: "[object Object]"`); its fallback
   * there, the LID's own digits, is not a phone number and is never used.
   *
   * Emitted with emitRecorded: a failure to record it reaches the webhook route, which answers 5xx so that
   * the gateway sends the event again; `eventId` (a digest of the body's `date_time` and the event) lets a
   * resend of an event already recorded change nothing. `at` is the gateway's time of the event (its
   * `date_time` on our clock: gateway-clock.ts), so a resend that comes after a later event is applied before
   * it; `receivedAt` when it came.
   */
  private async participantsEvent(channelId: string, data: Record<string, unknown>, at: Date, receivedAt: Date, eventId: string) {
    const action = data.action === "add" ? "join" : data.action === "remove" ? "leave" : undefined;
    const admins = data.action === "promote" || data.action === "demote" ? data.action : undefined;
    const groupId = typeof data.id === "string" ? data.id : undefined;
    if (!(action || admins) || !groupId || !groupIdPattern.test(groupId) || !Array.isArray(data.participants)) return;
    const resolved = new Map<string, string>();
    for (const d of Array.isArray(data.participantsData) ? (data.participantsData as { jid?: unknown; phoneNumber?: unknown }[]) : []) {
      const number = typeof d?.phoneNumber === "string" && d.phoneNumber.endsWith("@s.whatsapp.net") ? jidNumber(d.phoneNumber) : null;
      if (typeof d?.jid === "string" && number) resolved.set(d.jid, number);
    }
    const pairs = new Map<string, string>();
    const author = pairOf({ id: String(data.author ?? ""), phoneNumber: typeof data.authorPn === "string" ? data.authorPn : undefined });
    if (author) pairs.set(author.lid, author.phone);
    const participants = [
      ...new Set(
        (data.participants as unknown[]).flatMap((p) => {
          const entry: EvolutionParticipant | undefined =
            typeof p === "string" ? { id: p } : typeof (p as EvolutionParticipant)?.id === "string" ? (p as EvolutionParticipant) : undefined;
          if (!entry) return [];
          const number = participantNumber(entry) ?? resolved.get(entry.id) ?? null;
          const lid = lidOf(entry.id) ?? lidOf(entry.lid);
          if (number && lid) pairs.set(lid, number);
          return number ? [number] : lid ? [lid] : [];
        }),
      ),
    ];
    if (participants.length === 0) return;
    // Nothing to record: moderation reads the group's admins again (an admin is never judged).
    if (!action) {
      if (admins) await this.ctx.events.emit({ type: "group_admins", channelId, groupId, action: admins, participants, at: receivedAt });
      return;
    }
    if (action === "leave") {
      const own = this.instances.ownNumbers.get(channelId);
      // The number itself removed: the group is gone for it (the next state check says so).
      if (own && participants.some((p) => samePhone(p, own))) await this.listings.forgetGroup(channelId, groupId);
    }
    await this.ctx.events.emitRecorded({
      type: "group_participants",
      channelId,
      groupId,
      action,
      participants,
      ...(pairs.size > 0 ? { pairs: [...pairs].map(([lid, phone]) => ({ lid, phone })) } : {}),
      eventId,
      at,
      receivedAt,
    });
  }

  /**
   * `send.message`: the gateway sent a message. If it is one of ours whose answer we have not got (by
   * the id we asked for, else by group + content fingerprint, the latest attempt first), that part is
   * settled; once every part of the delivery is, `message_sent` tells the dispatch core.
   */
  private async sentEvent(channelId: string, data: Record<string, unknown>, at: Date) {
    const r = data as EvolutionMessageRecord;
    const id = r.key?.id;
    const groupId = r.key?.remoteJid;
    if (!id || !groupId || r.key?.fromMe === false) return;
    const [already] = await this.ctx.db
      .select({ k: evolutionMessages.deliveryKey })
      .from(evolutionMessages)
      .where(eq(evolutionMessages.messageId, id))
      .limit(1);
    if (already) return;
    const fingerprint = recordFingerprint(r);
    const [part] = await this.ctx.db
      .select()
      .from(evolutionMessages)
      .where(
        and(
          eq(evolutionMessages.channelId, channelId),
          eq(evolutionMessages.groupId, groupId),
          isNull(evolutionMessages.messageId),
          or(
            and(eq(evolutionMessages.idRequested, true), eq(evolutionMessages.requestedId, id)),
            fingerprint ? eq(evolutionMessages.fingerprint, fingerprint) : undefined,
          ),
        ),
      )
      .orderBy(desc(evolutionMessages.attemptedAt))
      .limit(1);
    if (!part) return;
    const sentAt = timestampOf(r.messageTimestamp) ?? at;
    await recordPart(this.ctx.db, part.deliveryKey, part.part, { id, at: sentAt });
    const rest = await this.ctx.db
      .select({ part: evolutionMessages.part, messageId: evolutionMessages.messageId })
      .from(evolutionMessages)
      .where(eq(evolutionMessages.deliveryKey, part.deliveryKey))
      .orderBy(evolutionMessages.part);
    if (rest.some((x) => !x.messageId)) return;
    // The delivery's receipt is its last part (what send() answers).
    await this.ctx.events.emit({
      type: "message_sent",
      receipts: [{ channelId, deliveryKey: part.deliveryKey, messageId: rest[rest.length - 1].messageId! }],
      at: sentAt,
    });
  }

  /**
   * A vote on one of our polls (docs/evolution.md#polls). Evolution 2.3.7 posts each vote message as a
   * `messages.upsert` of messageType `pollUpdateMessage`, having decrypted it with the poll's message secret
   * (kept in its own database): `message.pollUpdateMessage.vote.selectedOptions` then holds the chosen option
   * names and `pollCreationMessageKey.id` the poll's message id (whatsapp.baileys.service.ts, messages.upsert).
   * The voter is the key's participant (its phone number when the event carries one, else its LID). A vote whose
   * options are still hashes (the gateway could not find the poll) is not readable and is dropped. Emitted
   * recorded: a failure answers 5xx and the gateway sends the event again (recording is idempotent per voter).
   */
  private async pollVoteEvent(channelId: string, data: Record<string, unknown>, at: Date) {
    const update = (data.message as { pollUpdateMessage?: Record<string, unknown> } | undefined)?.pollUpdateMessage;
    const pollId = (update?.pollCreationMessageKey as { id?: unknown } | undefined)?.id;
    const selected = (update?.vote as { selectedOptions?: unknown } | undefined)?.selectedOptions;
    if (typeof pollId !== "string" || !Array.isArray(selected) || !selected.every((o) => typeof o === "string")) return;
    const key = (data.key ?? {}) as { participant?: string; participantAlt?: string; remoteJid?: string; fromMe?: boolean };
    const voter = key.fromMe
      ? this.instances.ownNumbers.get(channelId)
      : (jidNumber(key.participantAlt) ?? jidNumber(key.participant) ?? lidOf(key.participant) ?? lidOf(key.participantAlt));
    if (!voter) return;
    const [poll] = await this.ctx.db
      .select({ deliveryKey: evolutionMessages.deliveryKey })
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.messageId, pollId), eq(evolutionMessages.channelId, channelId)))
      .limit(1);
    if (!poll) return;
    const votedAt = timestampOf(data.messageTimestamp as number | string | undefined) ?? at;
    await this.ctx.events.emitRecorded({
      type: "poll_votes",
      channelId,
      deliveryKey: poll.deliveryKey,
      votes: [{ voter, options: selected as string[], at: votedAt }],
      at,
    });
  }

  /**
   * A member's message in a group (moderation; docs/evolution.md#moderation-messages-in-groups). 2.3.7 posts every
   * message it receives as `messages.upsert` (`svc` messages.upsert → prepareMessage): `key {remoteJid, fromMe, id,
   * participant, participantAlt}` — in a group `remoteJid` ends `@g.us`, `participant` is the sender (a LID in a
   * LID-addressed group, else the phone JID) and `participantAlt` the other form (Baileys 7; older keys: `participantPn`,
   * the message's `senderPn`); an extendedTextMessage is folded into `message.conversation`; media carry a `caption`.
   * Revokes and edits (`protocolMessage`) go out as `messages.edited`, not here, and reactions are no posts: neither is
   * read. The number's own messages (`fromMe`) are not members'. Emitted recorded (5xx when not recorded: Evolution
   * sends it again; `key.id` makes the second one change nothing).
   */
  private async groupMessageEvent(channelId: string, data: Record<string, unknown>, at: Date) {
    type Key = { remoteJid?: string; fromMe?: boolean; id?: string; participant?: string; participantAlt?: string; participantPn?: string };
    const key = (data.key ?? {}) as Key;
    const groupId = key.remoteJid;
    if (!groupId || !groupIdPattern.test(groupId) || key.fromMe !== false || typeof key.id !== "string" || !key.participant) return;
    if (data.messageType === "reactionMessage" || data.messageType === "protocolMessage") return;
    const m = (data.message ?? {}) as Record<string, { text?: unknown; caption?: unknown } | string | undefined>;
    const captioned = ["imageMessage", "videoMessage", "documentMessage"].map((k) => (m[k] as { caption?: unknown } | undefined)?.caption);
    const text = [m.conversation, (m.extendedTextMessage as { text?: unknown } | undefined)?.text, ...captioned].find((t) => typeof t === "string") as
      | string
      | undefined;
    const alt = key.participantAlt ?? key.participantPn ?? (typeof data.senderPn === "string" ? data.senderPn : undefined);
    const phone = jidNumber(key.participant) ?? jidNumber(alt);
    const lid = lidOf(key.participant) ?? lidOf(alt);
    const sender = phone ?? lid;
    if (!sender) return;
    await this.ctx.events.emitRecorded({
      type: "group_message",
      channelId,
      groupId,
      messageId: key.id,
      sender,
      senderId: key.participant,
      ...(phone && lid ? { pairs: [{ lid, phone }] } : {}),
      text: text ?? "",
      at: timestampOf(data.messageTimestamp as number | string | undefined) ?? at,
    });
  }

  /** Is this the channel's webhook secret? (Only its SHA-256 is stored; compared in constant time.) */
  async verifyWebhook(channelId: string, secret: string): Promise<boolean> {
    const [row] = await this.ctx.db
      .select({ hash: evolutionInstances.webhookTokenHash })
      .from(evolutionInstances)
      .where(eq(evolutionInstances.channelId, channelId));
    const expected = Buffer.from(row?.hash ?? "0".repeat(64), "hex");
    return timingSafeEqual(sha256(secret), expected) && Boolean(row);
  }

  /**
   * A webhook from the gateway for one channel. Returns false when the secret does not match (the
   * route answers 401). Connection changes become channel status changes; MESSAGES_UPDATE acks and
   * reads become receipts of the deliveries they belong to. Every event is stamped with our own
   * receive time, but participant events: the gateway's `date_time` (local wall-clock time labelled UTC, 3 h
   * early in Brazil) put on our clock (gateway-clock.ts), so joins and leaves apply in the platform's order.
   */
  async handleWebhook(channelId: string, secret: string, payload: unknown): Promise<boolean> {
    if (!(await this.verifyWebhook(channelId, secret))) return false;
    const body = (payload ?? {}) as { event?: string; data?: unknown };
    const event = String(body.event ?? "")
      .toLowerCase()
      .replaceAll("_", ".");
    const at = new Date();
    const sent = (body as { date_time?: unknown }).date_time;
    const data = body.data as Record<string, unknown> | Record<string, unknown>[] | undefined;
    if (event === "connection.update" && data && !Array.isArray(data) && typeof data.state === "string") {
      // A connection (re)established: the gateway may have been upgraded meanwhile (an upgrade restarts it and every instance reconnects).
      if (data.state === "open") this.gateway.forgetVersion();
      const wuid = data.state === "open" && typeof data.wuid === "string" ? jidNumber(data.wuid) : null;
      // Known before the status event goes out: the service records the channel's number from it.
      if (wuid) this.instances.ownNumbers.set(channelId, wuid);
      const loss = data.state === "close" ? await this.instances.lossFor(data.statusReason) : undefined;
      await this.instances.applyState(channelId, data.state, at, { loss, ownNumber: wuid });
    } else if (event === "qrcode.updated" && data && !Array.isArray(data)) {
      await this.instances.savePairing(channelId, (data.qrcode ?? data) as { base64?: string; pairingCode?: string });
    } else if (event === "logout.instance") {
      await this.instances.loggedOut(channelId, at);
    } else if (event === "remove.instance") {
      await this.instances.applyState(channelId, "close", at);
    } else if (event === "messages.update" && data) {
      await this.receipts(channelId, Array.isArray(data) ? data : [data], at);
    } else if (event === "send.message" && data) {
      for (const d of Array.isArray(data) ? data : [data]) await this.sentEvent(channelId, d, new Date());
    } else if (event === "messages.upsert" && data) {
      for (const d of Array.isArray(data) ? data : [data]) {
        if (d?.messageType === "pollUpdateMessage") await this.pollVoteEvent(channelId, d, at);
        else await this.groupMessageEvent(channelId, d, at);
      }
    } else if (event === "group-participants.update" && data) {
      // Evolution resends a 5xx'd event with the same body (same `date_time`): its digest names the event.
      const platformAt = this.clock.timeOf(sent, at);
      for (const [i, d] of (Array.isArray(data) ? data : [data]).entries()) {
        await this.participantsEvent(channelId, d, platformAt, at, sha256(JSON.stringify([String(sent ?? ""), i, d])).toString("base64url"));
      }
    }
    if (event !== "group-participants.update") this.clock.observe(sent, at);
    return true;
  }

  private async receipts(channelId: string, updates: Record<string, unknown>[], at: Date) {
    const acked: Receipt[] = [];
    const read: Receipt[] = [];
    for (const u of updates) {
      const id = (u.keyId ?? (u.key as { id?: string } | undefined)?.id) as string | undefined;
      const status = String(u.status ?? "").toUpperCase();
      if (!id || !["DELIVERY_ACK", "READ", "PLAYED"].includes(status)) continue;
      const [m] = await this.ctx.db
        .select({ deliveryKey: evolutionMessages.deliveryKey })
        .from(evolutionMessages)
        .where(and(eq(evolutionMessages.messageId, id), eq(evolutionMessages.channelId, channelId), isNotNull(evolutionMessages.sentAt)));
      if (!m) continue;
      (status === "DELIVERY_ACK" ? acked : read).push({ channelId, deliveryKey: m.deliveryKey, messageId: id });
    }
    if (acked.length) await this.ctx.events.emit({ type: "message_ack", receipts: acked, at });
    if (read.length) await this.ctx.events.emit({ type: "message_read", receipts: read, at });
  }
}
