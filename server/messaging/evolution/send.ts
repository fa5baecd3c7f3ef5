import { createHash } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { evolutionMessages } from "../../../db/schema";
import { carouselFallback } from "../carousel-fallback";
import { type GroupState, type OutboundMessage, ProviderOutcomeUnknownError, ProviderSendError, ProviderUnavailableError, type SendReceipt } from "../provider";
import { EvolutionHttpError, EvolutionUnreachableError } from "./client";
import { type EvolutionContext, isLostInstance, timestampOf } from "./context";
import { partFingerprint, recordPart } from "./find-sent";
import type { Gateway } from "./gateway-check";
import type { Instances } from "./instances";

/** One message part as Evolution sends it: the endpoint and its body (without number/options), its kind and text. */
type Part = {
  endpoint: "sendText" | "sendMedia" | "sendWhatsAppAudio" | "sendPoll";
  kind: "text" | "image" | "video" | "document" | "audio" | "poll";
  body: Record<string, unknown>;
  text: string;
};

/** The message id we ask the gateway to use: derived from the delivery key, so a lost answer can be found again. */
export const requestedMessageId = (deliveryKey: string, part: number) =>
  `3EB0${createHash("sha256").update(`${deliveryKey}#${part}`).digest("hex").slice(0, 18).toUpperCase()}`;

/** Sending one delivery, part by part, with a message id derived from its key. */
export class Sender {
  constructor(
    private readonly ctx: EvolutionContext,
    private readonly instances: Instances,
    private readonly gateway: Gateway,
    /** The group as the channel's number sees it (Groups.groupState): read back when a send's answer may mean "not in it". */
    private readonly membership?: (channelId: string, groupId: string) => Promise<GroupState>,
  ) {}

  /** The message parts of one delivery, as Evolution's endpoints take them. */
  private parts(message: OutboundMessage): Part[] {
    const c = message.content;
    const linkPreview = message.linkPreview !== false;
    switch (c.type) {
      case "text":
        return [{ endpoint: "sendText", kind: "text", body: { text: c.text, linkPreview }, text: c.text }];
      case "audio":
        // A voice note: Evolution has no caption for it (and drops mentionsEveryOne).
        return [{ endpoint: "sendWhatsAppAudio", kind: "audio", body: { audio: c.mediaUrl }, text: "" }];
      case "image":
      case "video":
      case "document":
        return [
          {
            endpoint: "sendMedia",
            kind: c.type,
            // Evolution derives the mimetype from fileName only: always send one with the real extension.
            body: { mediatype: c.type, media: c.mediaUrl, caption: c.caption, fileName: mediaFileName(c.type, c.mediaUrl, c.fileName) },
            text: c.caption,
          },
        ];
      case "poll":
        // SendPollDto (src/api/dto/sendMessage.dto.ts): `name` is the question; `selectableCount` 1 is one answer, 0 any number
        // (Baileys' poll: src/Utils/messages.ts). Its schema allows 2–10 `values` (src/validate/message.schema.ts pollMessageSchema).
        return [
          {
            endpoint: "sendPoll",
            kind: "poll",
            body: { name: c.poll.question, selectableCount: c.poll.multiple_answers ? 0 : 1, values: c.poll.options },
            text: c.poll.question,
          },
        ];
      case "carousel":
        return carouselFallback(c.text, c.cards).map((card) => ({
          endpoint: "sendMedia",
          kind: "image",
          body: { mediatype: "image", media: card.mediaUrl, caption: card.caption, fileName: mediaFileName("image", card.mediaUrl) },
          text: card.caption,
        }));
    }
  }

  async send(message: OutboundMessage): Promise<SendReceipt> {
    const row = await this.instances.row(message.channelId);
    // Offline by the gateway's last word: check once more (a webhook may have been missed) before refusing.
    if (row.state !== "open" && !(await this.instances.mayResend(message.channelId, row.state))) {
      throw new ProviderUnavailableError(`Channel ${message.channelId} is not connected.`);
    }
    // Reconnecting, by the gateway's word: nothing goes out meanwhile (docs/evolution.md#a-number-that-is-reconnecting).
    await this.instances.checkReconnect(message.channelId);
    const startedAt = new Date();
    let last: SendReceipt | undefined;
    for (const [i, part] of this.parts(message).entries()) last = await this.sendPart(row.instanceName, message, i, part);
    if (!last) throw new ProviderSendError("Nothing to send.", false);
    this.instances.sent(message.channelId, startedAt);
    return last;
  }

  /**
   * One POST per part, never repeated here: a lost answer is ProviderOutcomeUnknownError and the
   * dispatch core decides (look-ups, `send.message` events) whether it ever goes again. Parts already
   * sent (a carousel resent after a part was lost) are skipped.
   */
  private async sendPart(instanceName: string, message: OutboundMessage, part: number, p: Part): Promise<SendReceipt> {
    const requestedId = requestedMessageId(message.deliveryKey, part);
    const [known] = await this.ctx.db
      .select()
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.deliveryKey, message.deliveryKey), eq(evolutionMessages.part, part)));
    if (known?.messageId && known.sentAt) return { messageId: known.messageId, sentAt: known.sentAt };
    // 2.4.0 keeps our id for text and media only (PR #2361): not for voice notes nor polls.
    const idRequested = p.endpoint !== "sendWhatsAppAudio" && p.endpoint !== "sendPoll" && (await this.gateway.keepsMessageIds());
    const attemptedAt = new Date();
    const fingerprint = partFingerprint(p.kind, p.text);
    await this.ctx.db
      .insert(evolutionMessages)
      .values({
        deliveryKey: message.deliveryKey,
        part,
        channelId: message.channelId,
        groupId: message.groupId,
        requestedId,
        fingerprint,
        idRequested,
        attemptedAt,
      })
      // A delivery moved to another channel (failover) is attempted there now: findSent looks it up on that channel.
      .onConflictDoUpdate({
        target: [evolutionMessages.deliveryKey, evolutionMessages.part],
        set: { attemptedAt, idRequested, fingerprint, channelId: message.channelId },
      });

    // Evolution passes `mentions` to Baileys for text and media only: polls and voice notes skip them (`svc` sendMessage), so it is not sent there.
    // `mentioned`: the numbers mentioned (SendTextDto's Metadata, src/api/dto/sendMessage.dto.ts; digits only, src/validate/message.schema.ts),
    // made JIDs by Evolution (createJid) into Baileys' contextInfo.mentionedJid (docs/evolution.md#mentions).
    const named = message.mentions?.length ? { mentioned: message.mentions.map(mentionedNumber) } : {};
    const mentions = p.endpoint === "sendText" || p.endpoint === "sendMedia" ? { mentionsEveryOne: message.mentionAll, ...named } : {};
    const body = { number: message.groupId, ...p.body, ...mentions, ...(idRequested ? { messageId: requestedId } : {}) };
    try {
      const res = await this.ctx.client.request<{ key?: { id?: string }; messageTimestamp?: string | number }>(
        "POST",
        `/message/${p.endpoint}/${encodeURIComponent(instanceName)}`,
        { body, retry: false },
      );
      const id = res?.key?.id ?? (idRequested ? requestedId : undefined);
      if (!id) throw new ProviderOutcomeUnknownError(`Evolution API accepted the send to ${message.groupId} without a message id.`);
      return recordPart(this.ctx.db, message.deliveryKey, part, { id, at: timestampOf(res?.messageTimestamp) ?? new Date() });
    } catch (err) {
      throw await this.sendFailure(err, message, p);
    }
  }

  /**
   * What a failed POST means (docs/decisions.md#evolution-api, docs/evolution.md): Evolution answers 400 with the error
   * text for failures that did not send, so the text decides transient / permanent; 401/403/404 and a
   * closed connection make the channel unavailable; a 500 of media preparation did not send; a lost
   * answer or any other 5xx is unknown.
   */
  private async sendFailure(err: unknown, message: OutboundMessage, p: Part): Promise<Error> {
    if (err instanceof ProviderOutcomeUnknownError || err instanceof ProviderSendError || err instanceof ProviderUnavailableError) return err;
    if (err instanceof EvolutionUnreachableError) {
      if (!err.notSent) return new ProviderOutcomeUnknownError(err.message);
      await this.instances.markUnreachable(message.channelId);
      return new ProviderUnavailableError(err.message);
    }
    if (!(err instanceof EvolutionHttpError)) return new ProviderOutcomeUnknownError(err instanceof Error ? err.message : String(err));
    if (err.status === 401 || err.status === 403) return new ProviderUnavailableError(`Evolution API refused our API key: ${err.message}`);
    if (isLostInstance(err))
      void this.instances.recreate(message.channelId).catch((e) => console.error(`[evolution] could not create ${message.channelId} again`, e));
    if (err.status === 404) return new ProviderUnavailableError(`Channel ${message.channelId} has no instance on the gateway: ${err.message}`);
    if (err.status >= 500) {
      // sendMedia / sendWhatsAppAudio fail with 500 while preparing the media (download, ffmpeg): nothing went out.
      if (err.status === 500 && p.endpoint !== "sendText" && p.endpoint !== "sendPoll")
        return new ProviderSendError(`Media preparation failed (not sent): ${err.message}`, true);
      return new ProviderOutcomeUnknownError(err.message);
    }
    const kind = classifySendError(err.message);
    if (kind === "closed") {
      // Not sent: the number is reconnecting (or gone). Tried again shortly without losing an attempt; past the grace
      // the channel is offline and its groups fail over (docs/evolution.md#a-number-that-is-reconnecting).
      return this.instances
        .connectionClosed(message.channelId, err.message)
        .catch(() => new ProviderUnavailableError(`Channel ${message.channelId} is not connected: ${err.message}`));
    }
    if (kind === "rate_limited") return new ProviderSendError(err.message, true, { rateLimited: true });
    if (kind === "not_in_group") return this.notInGroup(err, message);
    return new ProviderSendError(err.message, kind === "transient");
  }

  /**
   * A 400 that may mean the number is not in the group (docs/evolution.md#who-is-in-a-group): Evolution reads the
   * group's metadata before sending and, when WhatsApp refuses it (only participants may read it), throws its
   * NotFoundException('Group not found') inside the send, which it stringifies into 400 `[object Object]`;
   * Baileys' own refusals read `forbidden`, `not-authorized` or `item-not-found`. The same words also come when
   * the metadata read failed for another reason, so the group is read back: not in it → a permanent refusal that
   * moves the delivery (`notInGroup`); in it, or not readable now → transient.
   */
  private async notInGroup(err: EvolutionHttpError, message: OutboundMessage): Promise<Error> {
    const seen = await this.membership?.(message.channelId, message.groupId).catch(() => null);
    if (seen && !seen.exists) {
      return new ProviderSendError(`The number of channel ${message.channelId} is not a participant of ${message.groupId} (${err.message}).`, false, {
        notInGroup: true,
      });
    }
    return new ProviderSendError(err.message, true);
  }
}

/** A mention as Evolution's `mentioned` takes it: a number's digits, or a platform id (`…@lid`) as it is. */
const mentionedNumber = (participant: string) => (participant.includes("@") ? participant : participant.replace(/\D+/g, ""));

/** Default extensions when neither `file_name` nor the URL's path carries one (docs/evolution.md). */
const defaultExtensions = { image: "jpg", video: "mp4", document: "pdf" } as const;

const extensionOf = (name: string) => /\.([A-Za-z0-9]{1,10})$/.exec(name)?.[1];

/**
 * The `fileName` Evolution gets (it derives the mimetype from it alone): the campaign's `file_name`
 * (given the URL's extension, or the type's default, if it has none); else the URL path's basename
 * when it has an extension; else `<type>.<default extension>`.
 */
export function mediaFileName(type: "image" | "video" | "document", url: string, given?: string): string {
  let base = "";
  try {
    base = decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
  } catch {
    base = "";
  }
  const urlExtension = extensionOf(base);
  const name = given?.trim();
  if (name) return extensionOf(name) ? name : `${name}.${urlExtension ?? defaultExtensions[type]}`;
  if (urlExtension && base.length > urlExtension.length + 1) return base;
  return `${type}.${defaultExtensions[type]}`;
}

/** Evolution's 400 texts for a send (docs/evolution.md): what each means for us. */
export function classifySendError(text: string): "rate_limited" | "transient" | "closed" | "not_in_group" | "permanent" {
  if (/rate-?overlimit/i.test(text)) return "rate_limited";
  if (/connection closed|not connected/i.test(text)) return "closed";
  // The group's metadata was refused or not found (read back before the delivery moves: Sender.notInGroup).
  if (/\[object Object\]|group not found|forbidden|not-authorized|item-not-found|not a participant/i.test(text)) return "not_in_group";
  if (/timed out|no sessions|media upload failed|\[object Object\]|stream errored|socket/i.test(text)) return "transient";
  return "permanent";
}
