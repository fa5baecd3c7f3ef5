import { createHash } from "node:crypto";
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { evolutionMessages } from "../../../db/schema";
import type { LookupResult, SendReceipt, SentLookup } from "../provider";
import { type EvolutionContext, timestampOf } from "./context";
import type { Instances } from "./instances";

export interface EvolutionMessageRecord {
  key?: { id?: string; remoteJid?: string; fromMe?: boolean };
  messageTimestamp?: number | string;
}

/** Looking up sends whose answer was lost (/chat/findMessages). */
export class SentLookups {
  constructor(
    private readonly ctx: EvolutionContext,
    private readonly instances: Instances,
  ) {}

  /**
   * /chat/findMessages for one unsettled part: by the id we asked for (kept by gateways ≥ 2.4.0), else
   * by our own messages in the group since the first attempt whose content fingerprint matches,
   * leaving out gateway ids another part already claimed. Null: not (yet) there. Throws when the
   * gateway cannot answer.
   */
  private async findOnGateway(instanceName: string, row: typeof evolutionMessages.$inferSelect) {
    const path = `/chat/findMessages/${encodeURIComponent(instanceName)}`;
    if (row.idRequested) {
      const byId = await this.ctx.client.request<unknown>("POST", path, {
        body: { where: { key: { id: row.requestedId } }, page: 1, offset: 10 },
        retry: true,
      });
      const hit = records(byId).find((r) => r.key?.id === row.requestedId);
      if (hit) return { id: row.requestedId, at: timestampOf(hit.messageTimestamp) ?? new Date() };
    }
    if (!row.fingerprint) return null;
    const recent = await this.ctx.client.request<unknown>("POST", path, {
      body: { where: { key: { remoteJid: row.groupId, fromMe: true } }, page: 1, offset: 100 },
      retry: true,
    });
    const sinceSeconds = Math.floor(row.createdAt.getTime() / 1000) - 5;
    const candidates = records(recent).filter(
      (r) => r.key?.id && r.key.fromMe !== false && (Number(r.messageTimestamp) || 0) >= sinceSeconds && recordFingerprint(r) === row.fingerprint,
    );
    if (candidates.length === 0) return null;
    const claimed = await this.claimedIds(
      candidates.map((r) => r.key!.id!),
      row,
    );
    const free = candidates.filter((r) => !claimed.has(r.key!.id!)).sort((a, b) => Number(a.messageTimestamp) - Number(b.messageTimestamp));
    return free[0] ? { id: free[0].key!.id!, at: timestampOf(free[0].messageTimestamp) ?? new Date() } : null;
  }

  /** Gateway ids already recorded for another delivery (or part): never claimed twice. */
  private async claimedIds(ids: string[], own: { deliveryKey: string; part: number }) {
    const rows = await this.ctx.db
      .select({ messageId: evolutionMessages.messageId, deliveryKey: evolutionMessages.deliveryKey, part: evolutionMessages.part })
      .from(evolutionMessages)
      .where(inArray(evolutionMessages.messageId, ids));
    return new Set(rows.filter((r) => r.deliveryKey !== own.deliveryKey || r.part !== own.part).map((r) => r.messageId!));
  }

  async findSent(lookup: SentLookup): Promise<LookupResult> {
    const rows = await this.ctx.db
      .select()
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.deliveryKey, lookup.deliveryKey), eq(evolutionMessages.channelId, lookup.channelId)))
      .orderBy(evolutionMessages.part);
    if (rows.length === 0) return { kind: "absent" }; // a row is written before every POST
    const unsettled = rows.filter((r) => !(r.messageId && r.sentAt));
    if (unsettled.some((r) => !r.fingerprint && !r.idRequested)) return { kind: "unsearchable" };
    const { instanceName } = await this.instances.row(lookup.channelId);
    for (const row of unsettled) {
      const found = await this.findOnGateway(instanceName, row);
      if (!found) return { kind: "not_found" }; // a resend skips the parts that are out
      await recordPart(this.ctx.db, row.deliveryKey, row.part, found);
      row.messageId = found.id;
      row.sentAt = found.at;
    }
    const last = rows[rows.length - 1];
    return { kind: "sent", receipt: { messageId: last.messageId!, sentAt: last.sentAt! } };
  }
}

/** findMessages answers `{messages: {records: [...]}}` (v2); older builds answer a bare array. */
function records(res: unknown): EvolutionMessageRecord[] {
  if (Array.isArray(res)) return res as EvolutionMessageRecord[];
  const r = (res as { messages?: { records?: unknown } } | undefined)?.messages?.records;
  return Array.isArray(r) ? (r as EvolutionMessageRecord[]) : [];
}

/** Evolution's stored message types → our content kinds. */
const recordKinds: Record<string, string> = {
  conversation: "text",
  extendedTextMessage: "text",
  imageMessage: "image",
  videoMessage: "video",
  documentMessage: "document",
  documentWithCaptionMessage: "document",
  audioMessage: "audio",
  // Baileys sends a one-answer poll as V3, a several-answers poll as the first version (src/Utils/messages.ts).
  pollCreationMessage: "poll",
  pollCreationMessageV3: "poll",
};

/** The fingerprint of what we send: kind + text/caption. Null when there is no text to recognise it by. */
export function partFingerprint(kind: string, text: string): string | null {
  if (!text.trim()) return null;
  return createHash("sha256").update(`${kind}\n${text.trim()}`).digest("hex");
}

/** The same fingerprint of a message the gateway stored (findMessages record or `send.message` data). */
export function recordFingerprint(r: EvolutionMessageRecord): string | null {
  const m = (r as { message?: Record<string, unknown> }).message ?? {};
  for (const [key, value] of Object.entries(m)) {
    const kind = recordKinds[key];
    if (!kind) continue;
    if (typeof value === "string") return partFingerprint(kind, value);
    let v = value as { text?: string; caption?: string; name?: string; message?: { documentMessage?: { caption?: string } } } | null;
    if (key === "documentWithCaptionMessage") v = v?.message?.documentMessage ?? null;
    return partFingerprint(kind, String(v?.text ?? v?.caption ?? v?.name ?? ""));
  }
  return null;
}

/** A part's gateway id and time, once known (from the answer, a look-up or `send.message`). */
export async function recordPart(db: Db, deliveryKey: string, part: number, found: { id: string; at: Date }): Promise<SendReceipt> {
  await db
    .update(evolutionMessages)
    .set({ messageId: found.id, sentAt: found.at })
    .where(and(eq(evolutionMessages.deliveryKey, deliveryKey), eq(evolutionMessages.part, part)));
  return { messageId: found.id, sentAt: found.at };
}
