import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { and, desc, eq, inArray, isNotNull, isNull, ne, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { evolutionInstances, evolutionMessages } from "../../db/schema";
import { groupIdPattern } from "./group-id";
import { carouselFallback } from "./carousel-fallback";
import { EvolutionClient, EvolutionHttpError, EvolutionNotActivatedError, EvolutionUnreachableError, evolutionErrorText } from "./evolution-client";
import { GroupCreations, type CreationOutcome, type GroupCreation } from "./evolution-group-creations";
import {
  ProviderEvents,
  ProviderOutcomeUnknownError,
  ProviderSendError,
  ProviderUnavailableError,
  sendEach,
  type SendManyOptions,
  type ChannelStatus,
  type CreatedGroup,
  type GroupState,
  type LidPhone,
  type NewGroup,
  type MessagingProvider,
  type OutboundMessage,
  type PairingInfo,
  type PairingOptions,
  type ProviderListener,
  type ProviderGroup,
  type LookupResult,
  type NumberLossReason,
  type Receipt,
  type SentLookup,
  type SendReceipt,
} from "./provider";

export interface EvolutionOptions {
  apiUrl: string;
  apiKey: string;
  /** Our public base address; the gateway posts to `<base>/api/evolution/webhook/<channel>` with the secret in a header. */
  webhookBaseUrl: string;
  timeoutMs: number;
  retries: number;
  groupsTtlMs: number;
  /** Time-out of one group listing (EVOLUTION_GROUPS_TIMEOUT_MS, default 300 s): it is never retried. */
  groupsTimeoutMs?: number;
  /** How long a pairing code request waits for the logged-out session to reach `close` (default 15 s). */
  closeWaitMs?: number;
  backoffMs?: number;
  /** A lost answer is looked up this long after the attempt (EVOLUTION_RECONCILE_AFTER_SECONDS). Default 300 s. */
  reconcileAfterMs?: number;
  /** Time-out of one group creation (never retried). Default 60 s. */
  groupCreateTimeoutMs?: number;
  /** How long the gateway's version is trusted before it is read again (default 10 min; a reconnect reads it again too). */
  versionTtlMs?: number;
}

/** The events we ask the gateway for (Evolution's names; its webhook bodies name them in lower-case dotted form). */
export const evolutionWebhookEvents = [
  "CONNECTION_UPDATE",
  "QRCODE_UPDATED",
  "MESSAGES_UPDATE",
  "SEND_MESSAGE",
  "LOGOUT_INSTANCE",
  "REMOVE_INSTANCE",
  "GROUP_PARTICIPANTS_UPDATE",
];

const inviteUrlPrefix = "https://chat.whatsapp.com/";
/** Creating a group takes WhatsApp seconds (participants' devices, the metadata): its own, longer time-out. */
const createTimeoutMs = 60_000;

/**
 * A group participant as Evolution reports it: Baileys' GroupParticipant (`src/Socket/groups.ts`
 * extractGroupMetadata) — `id` a phone JID or a LID, `phoneNumber` the phone JID of a LID and `lid`
 * the LID of a phone JID when WhatsApp shares them.
 */
interface EvolutionParticipant {
  id: string;
  phoneNumber?: string;
  lid?: string;
  jid?: string;
  admin?: "admin" | "superadmin" | null;
}

/** One group of `fetchAllGroups` (Evolution picks Baileys' fields; no participants with getParticipants=false): `owner` is its creator's JID or LID. */
interface ListedGroup {
  id: string;
  subject?: string;
  creation?: number;
  owner?: string;
}

/** A listing of a channel's groups: when it started (ms), the gateway's answer, and the groups campaigns can go to. */
interface GroupListing {
  startedAt: number;
  raw: ListedGroup[];
  groups: ProviderGroup[];
}

/** The channel's own ids: its phone number (digits) and its LID (`<digits>@lid`) once learned. */
interface OwnIds {
  phone: string;
  lid: string | null;
}

const isLid = (jid: string | undefined | null): jid is string => /^\d+@lid$/.test(jid ?? "");

/** Is this participant the channel's number: by phone (its JID or the `phoneNumber` of a LID) or by our LID. */
function isOwn(p: EvolutionParticipant, me: OwnIds): boolean {
  return participantNumber(p) === me.phone || (me.lid !== null && (p.id === me.lid || p.lid === me.lid));
}

/** May a group created by `owner` be ours? Another phone is not; a LID is unless we know ours and it differs; no owner may be. */
function mayBeOurs(owner: string | undefined, me: OwnIds | null): boolean {
  if (!owner || !me) return true;
  const phone = jidNumber(owner);
  if (phone) return phone === me.phone;
  if (isLid(owner)) return me.lid === null || owner === me.lid;
  return false;
}

/** `5511…@s.whatsapp.net` (or `5511…:12@s.whatsapp.net`, a device) → digits; anything else → null. */
function jidNumber(jid: string | undefined): string | null {
  const m = /^(\d{8,20})(?::\d+)?@s\.whatsapp\.net$/.exec(jid ?? "");
  return m ? m[1] : null;
}

/** A participant's phone number (digits), from its id or, for a LID, its `phoneNumber`/`jid`. */
function participantNumber(p: EvolutionParticipant): string | null {
  return jidNumber(p.id) ?? jidNumber(p.phoneNumber) ?? jidNumber(p.jid);
}

/** `1234…@lid` (or with a device suffix `:3`) → `1234…@lid`; anything else → null. */
function lidOf(jid: unknown): string | null {
  const m = typeof jid === "string" ? /^(\d{5,30})(?::\d+)?@lid$/.exec(jid) : null;
  return m ? `${m[1]}@lid` : null;
}

/** The pairing a participant entry carries: its LID and its phone number, when both are there. */
function pairOf(p: EvolutionParticipant): LidPhone | null {
  const phone = participantNumber(p);
  const lid = lidOf(p.id) ?? lidOf(p.lid);
  return phone && lid ? { lid, phone } : null;
}

/** Every pairing a participant list carries (findGroupInfos, participants): one per person listed with both ids. */
const pairsOf = (participants: EvolutionParticipant[]) => participants.flatMap((p) => (typeof p?.id === "string" ? (pairOf(p) ?? []) : []));

/** A failed group-management call, as the provider interface classifies failures. */
function groupError(err: unknown, what: string): Error {
  if (err instanceof ProviderUnavailableError || err instanceof ProviderSendError) return err;
  if (err instanceof EvolutionUnreachableError) return new ProviderUnavailableError(`${what}: ${err.message}`);
  if (err instanceof EvolutionHttpError) {
    const text = evolutionErrorText(err.body, err.message);
    if (isLostInstance(err) || /connection closed|not connected/i.test(text)) return new ProviderUnavailableError(`${what}: ${text}`);
    if (err.status === 401 || err.status === 403) return new ProviderUnavailableError(`${what}: Evolution API refused our API key (${text})`);
    if (/rate-?overlimit/i.test(text)) return new ProviderSendError(`${what}: ${text}`, true, { rateLimited: true });
    return new ProviderSendError(`${what}: ${text}`, err.status >= 500 || err.status === 429);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** One message part as Evolution sends it: the endpoint and its body (without number/options), its kind and text. */
type Part = {
  endpoint: "sendText" | "sendMedia" | "sendWhatsAppAudio";
  kind: "text" | "image" | "video" | "document" | "audio";
  body: Record<string, unknown>;
  text: string;
};

export interface EvolutionMessageRecord {
  key?: { id?: string; remoteJid?: string; fromMe?: boolean };
  messageTimestamp?: number | string;
}

const sha256 = (value: string) => createHash("sha256").update(value).digest();

/** The message id we ask the gateway to use: derived from the delivery key, so a lost answer can be found again. */
export const requestedMessageId = (deliveryKey: string, part: number) =>
  `3EB0${createHash("sha256").update(`${deliveryKey}#${part}`).digest("hex").slice(0, 18).toUpperCase()}`;

/** The header that carries an instance's webhook secret (set with `webhook.headers`; never in the URL, which Evolution logs). */
export const webhookTokenHeader = "x-webhook-token";

/** WhatsApp's pairing codes stop working about a minute after they were made. */
export const pairingCodeLifetimeMs = 60_000;

/**
 * Evolution's connection states → channel status; a pairing that never finished stays `connecting`;
 * `refused` (the gateway gave up after QRCODE_LIMIT codes) is `disconnected` until pairing is asked again.
 */
/** Our own instance state (never the gateway's): a send found the gateway unreachable; the state poll reads it again. */
const gatewayUnreachable = "unreachable";

function channelStatus(state: string | undefined, pairedOnce: boolean): ChannelStatus {
  if (state === "open") return "connected";
  if (state === "refused") return "disconnected";
  return pairedOnce ? "disconnected" : "connecting";
}

/**
 * Why WhatsApp closed a session, from `connection.update`'s `statusReason` (docs/evolution.md#disconnect-reasons-and-number-health).
 * Evolution reports a close only for the codes it does not reconnect: 401, 402, 403, 406 (and 408 from 2.4.0-rc);
 * Baileys' DisconnectReason names 401 loggedOut and 403 forbidden, Evolution's commit 258f5675 402 a temporary and
 * 406 a permanent ban. Anything else (408 a lost connection, 428, 440, 500, 515…) is a plain disconnect.
 */
export function lossReason(statusReason: unknown): { reason: NumberLossReason; detail: string } | undefined {
  const code = Number(statusReason);
  if (code === 401) return { reason: "logged_out", detail: "statusReason 401 (loggedOut)" };
  if (code === 402) return { reason: "restricted", detail: "statusReason 402 (temporary ban)" };
  if (code === 403) return { reason: "banned", detail: "statusReason 403 (forbidden)" };
  if (code === 406) return { reason: "banned", detail: "statusReason 406 (permanent ban)" };
  return undefined;
}

/** The gateway no longer has this instance (deleted by hand, DEL_INSTANCE, a wiped database). */
const isLostInstance = (err: unknown) =>
  err instanceof EvolutionHttpError && err.status === 404 && /instance does not exist|instance.*not found/i.test(err.message);

/** Groups a campaign can go to: community parents cannot receive messages. */
function sendableGroups(list: unknown): ProviderGroup[] {
  return (Array.isArray(list) ? list : [])
    .filter(
      (g): g is { id: string; subject?: string; announce?: boolean; isCommunity?: boolean } =>
        typeof g?.id === "string" && groupIdPattern.test(g.id) && g.isCommunity !== true,
    )
    .map((g) => ({ id_group: g.id, name: g.subject ?? "", ...(g.announce === true ? { adminsOnly: true } : {}) }));
}

/**
 * Evolution API v2 behind the provider interface: one Evolution instance per channel (named after the
 * channel id), pairing by QR code or pairing code, groups cached (fetchAllGroups is slow and
 * rate-limited), sends deduplicated by a message id derived from the delivery key and reconciled with
 * /chat/findMessages whenever an answer is lost, webhooks authenticated by a per-instance secret.
 */
export class EvolutionProvider implements MessagingProvider {
  readonly name = "evolution" as const;
  /** Baileys cannot send carousels or buttons to groups, nor forward with our bookkeeping: the service plans around it. */
  /** …nor report acks and reads of group messages (Baileys' message-receipt.update is not forwarded). */
  readonly capabilities = { carousel: false, forward: false, linkPreview: true, mentionAll: true, receipts: false };
  readonly reconcileAfterMs: number;
  private versionProbe: { value: Promise<string | null>; at: number } | undefined;
  private readonly client: EvolutionClient;
  private readonly events = new ProviderEvents("evolution");
  private groupFetches = new Map<string, Promise<GroupListing>>();
  /** Each channel's latest listing, with the fields a creation is recognised by (kept in memory only). */
  private readonly lastListings = new Map<string, GroupListing>();
  /** Each connected channel's own number, once read (dropped when the channel's state changes). */
  private readonly ownNumbers = new Map<string, string>();
  private recreations = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly opts: EvolutionOptions,
  ) {
    this.reconcileAfterMs = opts.reconcileAfterMs ?? 300_000;
    this.client = new EvolutionClient({
      baseUrl: opts.apiUrl,
      apiKey: opts.apiKey,
      timeoutMs: opts.timeoutMs,
      retries: opts.retries,
      backoffMs: opts.backoffMs,
    });
  }

  // ---- group management (launches; docs/evolution.md#groups-for-launches) ----

  /** The instance of a connected channel, for group management (Evolution answers `Connection Closed` otherwise). */
  private async openInstance(channelId: string) {
    const row = await this.instance(channelId);
    if (row.state !== "open") throw new ProviderUnavailableError(`Channel ${channelId} is not connected: it cannot manage groups now.`);
    return row;
  }

  /**
   * One group-management call (`/group/<action>/<instance>?groupJid=`), its failure mapped: the gateway
   * down, a lost instance or `Connection Closed` → ProviderUnavailableError; `rate-overlimit` → a
   * transient, rate-limited ProviderSendError; another 5xx → transient; a 4xx → permanent (not an admin,
   * not in the group).
   */
  private async groupCall<T>(
    channelId: string,
    instanceName: string,
    method: "GET" | "POST",
    action: string,
    options: { groupId?: string; body?: unknown; retry?: boolean; timeoutMs?: number } = {},
  ): Promise<T> {
    try {
      return await this.onInstance(channelId, () =>
        this.client.request<T>(method, `/group/${action}/${encodeURIComponent(instanceName)}`, {
          query: options.groupId ? { groupJid: options.groupId } : {},
          body: options.body ?? (method === "POST" ? {} : undefined),
          retry: options.retry ?? method === "GET",
          timeoutMs: options.timeoutMs,
        }),
      );
    } catch (err) {
      throw groupError(err, `Evolution API ${action} for ${options.groupId ?? instanceName}`);
    }
  }

  /**
   * `POST /group/create` with the admins as participants (Evolution needs at least one) and
   * `promoteParticipants: true`, then the picture (`updateGroupPicture`) and admins-only
   * (`updateSetting` announcement). Never makes a second group for one creation
   * (docs/evolution.md#group-creation-that-never-duplicates): each creation is recorded before the
   * POST (`evolution_group_creations`, by the caller's `key`), and Evolution answers any failure after
   * WhatsApp made the group with the same 500 as one before it, so after every failure but a refusal
   * of the request itself the group is looked up in the channel's listing and adopted when found. A
   * creation of the same name still unsettled on the channel is looked up before another is made. The
   * picture and the setting are best effort: the group exists whatever becomes of them.
   */
  async createGroup(channelId: string, group: NewGroup): Promise<CreatedGroup> {
    const row = await this.openInstance(channelId);
    const subject = group.name.trim();
    if (!subject || subject.length > 100) throw new ProviderSendError("A group's name must have 1 to 100 characters.", false);
    const participants = [...new Set(group.admins.map((a) => a.replace(/\D/g, "")).filter((a) => a.length >= 10))];
    if (participants.length === 0)
      throw new ProviderSendError("Evolution API creates a group only with at least one participant: give the template an admin.", false);
    // Without the caller's key a creation is its own (never answered again), but still looked up by name.
    const key = group.key ?? `once:${randomUUID()}`;
    const creations = new GroupCreations(this.db, channelId);
    const own = await creations.get(key);
    if (group.key && own?.state === "made" && own.groupId) return { id_group: own.groupId, name: own.subject, adopted: true };

    // A creation of this name whose outcome is still unknown (a lost answer, a crash) is settled first.
    for (const earlier of await creations.pendingFor(subject, key)) {
      // Another request's POST still under way: its group is its own, and none is made beside it.
      if (earlier.key !== key && earlier.error === null && Date.now() < earlier.settlesAt.getTime())
        throw new ProviderOutcomeUnknownError(`"${subject}" is being created on ${row.instanceName} by another request: no other is made meanwhile.`);
      const rateLimited = /rate-?overlimit/i.test(earlier.error ?? "");
      const outcome = await this.settleCreation(channelId, row.instanceName, earlier).catch((err: Error) => {
        throw new ProviderOutcomeUnknownError(
          `An earlier creation of "${subject}" on ${row.instanceName} may have made the group and cannot be looked up now (${err.message}): no other is made until it is.`,
          { rateLimited },
        );
      });
      if (outcome.kind === "unknown")
        throw new ProviderOutcomeUnknownError(
          `An earlier creation of "${subject}" on ${row.instanceName} is not settled yet (${outcome.reason}): no other is made until it is.`,
          { rateLimited },
        );
      if (outcome.kind === "made") {
        await creations.claim(earlier.key, key);
        console.warn(`[evolution] "${subject}" on ${row.instanceName}: an earlier creation had made ${outcome.groupId}; adopted`);
        return this.finishGroup(channelId, row.instanceName, group, { id: outcome.groupId, subject: earlier.subject }, { adopted: true });
      }
    }

    const startedAt = new Date();
    const createMs = this.opts.groupCreateTimeoutMs ?? Math.max(this.opts.timeoutMs, createTimeoutMs);
    // Until the POST ends, a crash leaves it pending: absence is proved only by a listing long after it began.
    if (!(await creations.begin(key, subject, startedAt, new Date(startedAt.getTime() + createMs + this.reconcileAfterMs))))
      throw new ProviderOutcomeUnknownError(`"${subject}" is being created on ${row.instanceName} by another request: no other is made meanwhile.`);
    let created: { id?: string; subject?: string; owner?: string; ownerPn?: string; participants?: EvolutionParticipant[] } | undefined;
    try {
      created = await this.onInstance(channelId, () =>
        this.client.request("POST", `/group/create/${encodeURIComponent(row.instanceName)}`, {
          body: { subject, participants, promoteParticipants: true, ...(group.description ? { description: group.description } : {}) },
          // Never repeated: a repeat makes a second group.
          retry: false,
          timeoutMs: createMs,
        }),
      );
    } catch (err) {
      return this.afterFailedCreate(channelId, row.instanceName, group, creations, key, subject, err);
    }
    const id = created?.id;
    if (!id || !groupIdPattern.test(id)) {
      const err = new ProviderSendError(`Evolution API gave no group id creating "${subject}".`, true);
      return this.afterFailedCreate(channelId, row.instanceName, group, creations, key, subject, err);
    }
    await creations.made(key, id);
    // We made it: its creator is us, so a LID there is ours (the gateway never tells our LID otherwise).
    await this.learnOwnLid(channelId, created?.participants ?? [], { creator: created?.owner, creatorPn: created?.ownerPn });
    return this.finishGroup(channelId, row.instanceName, group, { id, subject: created?.subject ?? subject }, {});
  }

  /**
   * A create that did not answer its group. A refusal of the request itself (400: Evolution's schema
   * check; 401/403/404 and a gateway that never got it or is not activated: guards in front of the
   * handler) made nothing. Anything else — a 5xx ("Error creating group" with WhatsApp's text, a
   * rate-overlimit among them), a time-out, a connection lost after the request went out — may have
   * come after WhatsApp made the group: it is looked up.
   */
  private async afterFailedCreate(
    channelId: string,
    instanceName: string,
    group: NewGroup,
    creations: GroupCreations,
    key: string,
    subject: string,
    err: unknown,
  ): Promise<CreatedGroup> {
    const text = err instanceof EvolutionHttpError ? evolutionErrorText(err.body, err.message) : err instanceof Error ? err.message : String(err);
    const rateLimited = /rate-?overlimit/i.test(text);
    // 503: a proxy with no gateway behind it (LICENSE_REQUIRED is EvolutionNotActivatedError, never sent).
    const notHandled =
      (err instanceof EvolutionUnreachableError && err.notSent) || (err instanceof EvolutionHttpError && (err.status < 500 || err.status === 503));
    if (notHandled) {
      await creations.absent(key, text);
      throw groupError(err, `Evolution API create for "${subject}"`);
    }
    // A 500 is the handler's own answer (WhatsApp is done with it); a lost answer (time-out, reset, a proxy's
    // 502/504) may still be at work on the gateway, so its absence is proved only later.
    const answered = (err instanceof EvolutionHttpError && err.status === 500) || err instanceof ProviderSendError;
    const settlesAt = new Date(Date.now() + (answered ? 0 : this.reconcileAfterMs));
    const attempt = await creations.failed(key, text, settlesAt);
    let outcome: CreationOutcome;
    try {
      outcome = await this.settleCreation(channelId, instanceName, attempt);
    } catch (lookup) {
      throw new ProviderOutcomeUnknownError(
        `Creating "${subject}" on ${instanceName} failed (${text}) and the group cannot be looked up now (${(lookup as Error).message}): it is looked up again before another is made.`,
        { rateLimited },
      );
    }
    if (outcome.kind === "made") {
      console.warn(`[evolution] creating "${subject}" on ${instanceName} failed (${text}) after WhatsApp made ${outcome.groupId}: adopted`);
      return this.finishGroup(channelId, instanceName, group, { id: outcome.groupId, subject }, { adopted: true, rateLimited });
    }
    if (outcome.kind === "unknown") {
      throw new ProviderOutcomeUnknownError(
        `Creating "${subject}" on ${instanceName}: ${text}; the group is not listed yet (${outcome.reason}), it is looked up again before another is made.`,
        { rateLimited },
      );
    }
    if (rateLimited)
      throw new ProviderSendError(`WhatsApp throttled group creation on ${instanceName} (${text}): no group was made.`, true, { rateLimited: true });
    if (/connection closed|not connected/i.test(text)) throw new ProviderUnavailableError(`Evolution API create for "${subject}": ${text} (no group was made)`);
    throw new ProviderSendError(`Evolution API could not create "${subject}": ${text} (no group was made)`, true);
  }

  /**
   * Is the group of this creation on the channel? Looks in a listing (the one-at-a-time listing of
   * listGroups) that started after the creation began — a new one only when the last is older — for a
   * group of that name created since (WhatsApp's clock may differ a minute), whose creator may be us,
   * not already another creation's. Not found in a listing that started at or after `settlesAt`: the
   * group was not made. Throws when the gateway cannot list now.
   */
  private async settleCreation(channelId: string, instanceName: string, attempt: GroupCreation): Promise<CreationOutcome> {
    const creations = new GroupCreations(this.db, channelId);
    const settles = attempt.settlesAt.getTime();
    const listing = await this.groupsListedSince(channelId, instanceName, Date.now() >= settles ? settles : attempt.startedAt.getTime());
    const me = await this.ownIds(channelId).catch(() => null);
    const taken = await creations.groupsOfOthers(attempt.key);
    const from = Math.floor(attempt.startedAt.getTime() / 1000) - 60;
    const found = listing.raw
      .filter((g) => g.subject === attempt.subject && typeof g.creation === "number" && g.creation >= from && !taken.has(g.id) && mayBeOurs(g.owner, me))
      .sort((a, b) => (a.creation ?? 0) - (b.creation ?? 0))[0];
    if (found) {
      await creations.made(attempt.key, found.id);
      return { kind: "made", groupId: found.id };
    }
    if (listing.startedAt >= settles) {
      await creations.absent(attempt.key, attempt.error);
      return { kind: "absent" };
    }
    return { kind: "unknown", reason: `the gateway may still be making it until ${attempt.settlesAt.toISOString()}` };
  }

  /** The picture, admins-only and (for a group found after a failure) the description; the cached list gains the group. */
  private async finishGroup(
    channelId: string,
    instanceName: string,
    group: NewGroup,
    made: { id: string; subject: string },
    flags: { adopted?: boolean; rateLimited?: boolean },
  ): Promise<CreatedGroup> {
    const { id } = made;
    // Evolution sets the description inside create, after WhatsApp made the group: a failure may have come first.
    if (flags.adopted && group.description) {
      await this.groupCall(channelId, instanceName, "POST", "updateGroupDescription", { groupId: id, body: { description: group.description } }).catch((err) =>
        console.warn(`[evolution] could not set the description of ${id}: ${(err as Error).message}`),
      );
    }
    if (group.pictureUrl) {
      await this.groupCall(channelId, instanceName, "POST", "updateGroupPicture", { groupId: id, body: { image: group.pictureUrl } }).catch((err) =>
        console.warn(`[evolution] could not set the picture of ${id}: ${(err as Error).message}`),
      );
    }
    if (group.adminsOnly) {
      await this.groupCall(channelId, instanceName, "POST", "updateSetting", { groupId: id, body: { action: "announcement" }, retry: true }).catch((err) =>
        console.warn(`[evolution] could not make ${id} admins-only: ${(err as Error).message}`),
      );
    }
    const listed: ProviderGroup = { id_group: id, name: made.subject, ...(group.adminsOnly ? { adminsOnly: true } : {}) };
    // The cached list gains it at once (a listing is slow): list-groups shows it.
    const cached = (await this.instance(channelId)).groups;
    if (cached && !cached.some((g) => g.id_group === id)) {
      await this.db
        .update(evolutionInstances)
        .set({ groups: [...cached, listed] })
        .where(eq(evolutionInstances.channelId, channelId));
    }
    return { ...listed, ...(flags.adopted ? { adopted: true } : {}), ...(flags.rateLimited ? { rateLimited: true } : {}) };
  }

  /** `updateParticipant` add (those already in are left as they are), then promote. */
  async promoteParticipants(channelId: string, groupId: string, participants: string[]): Promise<void> {
    const row = await this.openInstance(channelId);
    const numbers = [...new Set(participants.map((p) => p.replace(/\D/g, "")).filter((p) => p.length >= 10))];
    if (numbers.length === 0) return;
    await this.groupCall(channelId, row.instanceName, "POST", "updateParticipant", { groupId, body: { action: "add", participants: numbers } });
    const res = await this.groupCall<{ updateParticipants?: { status?: string; jid?: string }[] }>(channelId, row.instanceName, "POST", "updateParticipant", {
      groupId,
      body: { action: "promote", participants: numbers },
      retry: true,
    });
    const refused = (res?.updateParticipants ?? []).filter((u) => u.status && u.status !== "200");
    if (refused.length > 0) console.warn(`[evolution] promoting in ${groupId}: ${refused.map((u) => `${u.jid} ${u.status}`).join(", ")}`);
  }

  /** `GET /group/inviteCode` → `https://chat.whatsapp.com/<code>`; 404 "No invite code" (not an admin) is a permanent ProviderSendError. */
  async inviteUrl(channelId: string, groupId: string): Promise<string> {
    const row = await this.openInstance(channelId);
    const res = await this.groupCall<{ inviteCode?: string }>(channelId, row.instanceName, "GET", "inviteCode", { groupId });
    if (!res?.inviteCode) throw new ProviderSendError(`Evolution API gave no invite code for ${groupId}.`, true);
    return `${inviteUrlPrefix}${res.inviteCode}`;
  }

  /** `POST /group/revokeInviteCode` answers the new code. Not repeated on its own (each call revokes again). */
  async renewInviteUrl(channelId: string, groupId: string): Promise<string> {
    const row = await this.openInstance(channelId);
    const res = await this.groupCall<{ revoked?: boolean; inviteCode?: string }>(channelId, row.instanceName, "POST", "revokeInviteCode", {
      groupId,
      retry: false,
    });
    if (!res?.inviteCode) return this.inviteUrl(channelId, groupId);
    return `${inviteUrlPrefix}${res.inviteCode}`;
  }

  /**
   * `GET /group/findGroupInfos`: the number among the participants — by phone (its JID, or the
   * `phoneNumber` of a LID) or by its LID, which WhatsApp uses in groups it addresses by LID — and its
   * admin rank. WhatsApp's "not found" answers (item-not-found, forbidden: the number is not in it) mean
   * the group is gone; anything else (rate limit, gateway down) is ProviderUnavailableError, never
   * "gone". WhatsApp answers a group's metadata only to its participants, so when the number is listed
   * by a LID we have not learned yet, it is in the group, and whether it is an admin is asked of the one
   * thing only admins may do without changing anything: reading the invite code. A gone group leaves the
   * cached list.
   */
  async groupState(channelId: string, groupId: string): Promise<GroupState> {
    const row = await this.openInstance(channelId);
    // Without the number, "not an admin" cannot be told from "not found": never guess a group broken.
    const me = await this.ownIds(channelId);
    let info: { size?: number; participants?: EvolutionParticipant[] } | null;
    try {
      info = await this.onInstance(channelId, () =>
        this.client.request<{ size?: number; participants?: EvolutionParticipant[] } | null>(
          "GET",
          `/group/findGroupInfos/${encodeURIComponent(row.instanceName)}`,
          {
            query: { groupJid: groupId },
            retry: true,
          },
        ),
      );
    } catch (err) {
      if (
        err instanceof EvolutionHttpError &&
        err.status === 404 &&
        !isLostInstance(err) &&
        /item-not-found|forbidden|not-authorized|not-acceptable|not a participant/i.test(err.message)
      ) {
        info = null;
      } else throw groupError(err, `Evolution API findGroupInfos for ${groupId}`);
    }
    const participants = info?.participants ?? [];
    const known = await this.learnOwnLid(channelId, participants, {}, me);
    const mine = participants.find((p) => isOwn(p, known));
    const size = info?.size ?? participants.length;
    const pairs = pairsOf(participants);
    const withPairs = pairs.length > 0 ? { pairs } : {};
    if (mine) return { exists: true, admin: mine.admin === "admin" || mine.admin === "superadmin", size, ...withPairs };
    // Everyone listed by a phone we can read, and not us: we are not in it.
    const unreadable = participants.some((p) => isLid(p.id) && !participantNumber(p));
    if (!info || !unreadable) {
      await this.forgetGroup(channelId, groupId);
      return { exists: false, admin: false, size: 0 };
    }
    return { exists: true, admin: await this.readsInviteCode(channelId, row.instanceName, groupId), size, ...withPairs };
  }

  /** Only admins may read a group's invite code (`not-authorized` otherwise): whether the number is one. */
  private async readsInviteCode(channelId: string, instanceName: string, groupId: string): Promise<boolean> {
    try {
      await this.groupCall(channelId, instanceName, "GET", "inviteCode", { groupId });
      return true;
    } catch (err) {
      if (err instanceof ProviderSendError && !err.transient && /not-authorized/i.test(err.message)) return false;
      throw err instanceof ProviderUnavailableError
        ? err
        : new ProviderUnavailableError(`Evolution API cannot tell whether the number administers ${groupId}: ${(err as Error).message}`);
    }
  }

  /** The channel's phone number and, once learned, its LID. Throws ProviderUnavailableError while the number is not known. */
  private async ownIds(channelId: string): Promise<OwnIds> {
    const phone = await this.ownNumber(channelId);
    if (!phone) throw new ProviderUnavailableError(`Evolution API did not tell the number of channel ${channelId}: its groups cannot be told apart.`);
    const row = await this.instance(channelId);
    return { phone, lid: row.ownLidPhone === phone ? row.ownLid : null };
  }

  /**
   * Learns the number's LID where WhatsApp shows it beside the phone: a participant listed by LID with
   * our `phoneNumber`, our phone JID with its `lid`, or the creator of a group we just made (`owner`,
   * with `ownerPn` when WhatsApp gives it). Kept on the instance (for that phone) across restarts.
   */
  private async learnOwnLid(
    channelId: string,
    participants: EvolutionParticipant[],
    made: { creator?: string; creatorPn?: string },
    me?: OwnIds,
  ): Promise<OwnIds> {
    const ids = me ?? (await this.ownIds(channelId).catch(() => null));
    if (!ids) return { phone: "", lid: null };
    let lid: string | undefined;
    for (const p of participants) {
      if (isLid(p.id) && jidNumber(p.phoneNumber) === ids.phone) lid = p.id;
      else if (jidNumber(p.id) === ids.phone && isLid(p.lid)) lid = p.lid;
    }
    if (!lid && isLid(made.creator) && (!made.creatorPn || jidNumber(made.creatorPn) === ids.phone)) lid = made.creator;
    if (!lid || lid === ids.lid) return ids;
    await this.db.update(evolutionInstances).set({ ownLid: lid, ownLidPhone: ids.phone }).where(eq(evolutionInstances.channelId, channelId));
    return { ...ids, lid };
  }

  /**
   * `GET /group/participants` (Baileys' group metadata: one WhatsApp query, never repeated here): the
   * pairings of the people listed with both a LID and a phone number. Evolution offers no route to Baileys'
   * own LID map (`signalRepository.lidMapping`), so the group's list is the one place to look a LID up.
   */
  async participantPairs(channelId: string, groupId: string): Promise<LidPhone[]> {
    const row = await this.openInstance(channelId);
    // Asked while a webhook waits for its answer: a short time-out (the LID stays as it came when it passes).
    const res = await this.groupCall<{ participants?: EvolutionParticipant[] }>(channelId, row.instanceName, "GET", "participants", {
      groupId,
      retry: false,
      timeoutMs: Math.min(this.opts.timeoutMs, 5000),
    });
    return pairsOf(Array.isArray(res?.participants) ? res.participants : []);
  }

  private async forgetGroup(channelId: string, groupId: string) {
    const cached = (await this.instance(channelId)).groups;
    if (!cached?.some((g) => g.id_group === groupId)) return;
    await this.db
      .update(evolutionInstances)
      .set({ groups: cached.filter((g) => g.id_group !== groupId) })
      .where(eq(evolutionInstances.channelId, channelId));
  }

  /**
   * The paired number: `ownerJid` of `GET /instance/fetchInstances?instanceName=` (or the `wuid` of the
   * `connection.update` that opened it), digits only; kept in memory while the channel stays connected.
   */
  async ownNumber(channelId: string): Promise<string | null> {
    const known = this.ownNumbers.get(channelId);
    if (known) return known;
    const row = await this.instance(channelId).catch(() => undefined);
    if (!row?.pairedOnce) return null;
    try {
      const res = await this.client.request<{ name?: string; ownerJid?: string | null }[]>("GET", "/instance/fetchInstances", {
        query: { instanceName: row.instanceName },
        retry: true,
      });
      const mine = (Array.isArray(res) ? res : []).find((i) => i?.name === row.instanceName) ?? (Array.isArray(res) ? res[0] : undefined);
      const digits = jidNumber(mine?.ownerJid ?? undefined);
      if (digits && row.state === "open") this.ownNumbers.set(channelId, digits);
      return digits;
    } catch (err) {
      this.unavailable(err, `Evolution API cannot tell the number of ${row.instanceName}`);
    }
  }

  /**
   * `group-participants.update` → `group_participants`: `add` is a join, `remove` a leave (promote,
   * demote and modify change no membership). A pending join request (group approval on) is Baileys'
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
   * resend of an event already recorded change nothing.
   */
  private async participantsEvent(channelId: string, data: Record<string, unknown>, at: Date, eventId: string) {
    const action = data.action === "add" ? "join" : data.action === "remove" ? "leave" : undefined;
    const groupId = typeof data.id === "string" ? data.id : undefined;
    if (!action || !groupId || !groupIdPattern.test(groupId) || !Array.isArray(data.participants)) return;
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
    if (action === "leave") {
      const own = this.ownNumbers.get(channelId);
      // The number itself removed: the group is gone for it (the next state check says so).
      if (own && participants.includes(own)) await this.forgetGroup(channelId, groupId);
    }
    await this.events.emitRecorded({
      type: "group_participants",
      channelId,
      groupId,
      action,
      participants,
      ...(pairs.size > 0 ? { pairs: [...pairs].map(([lid, phone]) => ({ lid, phone })) } : {}),
      eventId,
      at,
    });
  }

  subscribe(listener: ProviderListener) {
    return this.events.subscribe(listener);
  }

  private async instance(channelId: string) {
    const [row] = await this.db.select().from(evolutionInstances).where(eq(evolutionInstances.channelId, channelId));
    if (!row) throw new ProviderUnavailableError(`Channel ${channelId} has no Evolution instance.`);
    return row;
  }

  /** A gateway failure on anything but a send: the platform cannot answer now. */
  private unavailable(err: unknown, what: string): never {
    if (err instanceof ProviderUnavailableError) throw err;
    if (err instanceof EvolutionUnreachableError || err instanceof EvolutionHttpError) {
      throw new ProviderUnavailableError(`${what}: ${err.message}`);
    }
    throw err;
  }

  /** Where the gateway posts one channel's events; the secret travels in the `x-webhook-token` header. */
  webhookUrl(channelId: string) {
    return `${this.opts.webhookBaseUrl}/api/evolution/webhook/${encodeURIComponent(channelId)}`;
  }

  async createChannel(channel: { id: string; name: string }) {
    await this.provision(channel.id);
    return { ref: channel.id, status: "connecting" as const };
  }

  /**
   * Creates the channel's instance (or configures an existing one again, after a lost answer) with a
   * new webhook secret: `POST /instance/create` (connects and gives the first QR code), then
   * `POST /webhook/set` with the secret in `webhook.headers`.
   */
  private async provision(channelId: string) {
    const instanceName = channelId;
    const secret = randomBytes(24).toString("base64url");
    const hash = sha256(secret).toString("hex");
    // The row exists before the gateway can post its first webhook for this instance.
    await this.db
      .insert(evolutionInstances)
      .values({ channelId, instanceName, webhookTokenHash: hash })
      .onConflictDoUpdate({ target: evolutionInstances.channelId, set: { webhookTokenHash: hash, updatedAt: new Date() } });
    const webhook = {
      enabled: true,
      url: this.webhookUrl(channelId),
      headers: { [webhookTokenHeader]: secret },
      byEvents: false,
      base64: false,
      events: evolutionWebhookEvents,
    };
    try {
      const created = await this.client.request<{ qrcode?: { base64?: string; pairingCode?: string | null } }>("POST", "/instance/create", {
        // groupsIgnore=false: an instance that ignores groups never reports their events.
        body: { instanceName, integration: "WHATSAPP-BAILEYS", qrcode: true, groupsIgnore: false, webhook },
      });
      await this.savePairing(channelId, created?.qrcode);
    } catch (err) {
      // A retried create after a lost answer: the instance is there already, so configure it again below.
      const exists = err instanceof EvolutionHttpError && (err.status === 403 || err.status === 409) && /already in use|exists/i.test(err.message);
      if (!exists) this.unavailable(err, `Evolution API could not create instance ${instanceName}`);
    }
    try {
      await this.client.request("POST", `/webhook/set/${encodeURIComponent(instanceName)}`, { body: { webhook }, retry: true });
    } catch (err) {
      this.unavailable(err, `Evolution API could not set the webhook of ${instanceName}`);
    }
  }

  /**
   * The gateway lost the channel's instance (404): create it again, same name, new webhook secret.
   * The number must pair again: a paired channel becomes `disconnected`. One recreation at a time per channel.
   */
  private recreate(channelId: string): Promise<void> {
    let pending = this.recreations.get(channelId);
    if (!pending) {
      pending = (async () => {
        console.warn(`[evolution] instance ${channelId} was lost by the gateway (404): creating it again`);
        await this.applyState(channelId, "close");
        await this.db
          .update(evolutionInstances)
          .set({ groups: null, groupsFetchedAt: null, qrCode: null, pairingCode: null })
          .where(eq(evolutionInstances.channelId, channelId));
        await this.provision(channelId);
      })().finally(() => this.recreations.delete(channelId));
      this.recreations.set(channelId, pending);
    }
    return pending;
  }

  /** One call on the channel's instance; a lost instance (404) is created again before the error goes on. */
  private async onInstance<T>(channelId: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (isLostInstance(err)) await this.recreate(channelId);
      throw err;
    }
  }

  /**
   * Keeps the latest QR code and pairing code for the dashboard. A pairing code is kept (with the time
   * it was made, `pairingUpdatedAt`) until a new one replaces it or the number pairs: answers and
   * `qrcode.updated` events without one (a QR-only session, a code not made yet) never erase it. While a
   * session pairs by number, every QR refresh makes WhatsApp a new code (`svc` ~377), which replaces it.
   */
  private async savePairing(channelId: string, qr: { base64?: string | null; pairingCode?: string | null; code?: string } | undefined) {
    if (!qr || (!qr.base64 && !qr.pairingCode)) return;
    // The gateway repeats the current code in every answer until WhatsApp makes a new one: only a new one restarts the expiry.
    const newCode = qr.pairingCode && qr.pairingCode !== (await this.instance(channelId)).pairingCode ? qr.pairingCode : null;
    await this.db
      .update(evolutionInstances)
      .set({
        ...(qr.base64 ? { qrCode: qr.base64 } : {}),
        ...(newCode ? { pairingCode: newCode, pairingUpdatedAt: new Date() } : {}),
        updatedAt: new Date(),
      })
      .where(eq(evolutionInstances.channelId, channelId));
  }

  /**
   * A send found the gateway down (connection refused, unknown host): the channel is offline
   * (`disconnected`, so its campaigns pause as `channel_offline` instead of claiming and releasing the
   * same groups in a loop) until the state poll reads the instance `open` again.
   */
  private async markUnreachable(channelId: string) {
    const row = await this.instance(channelId).catch(() => undefined);
    if (row?.state !== "open") return;
    await this.applyState(channelId, gatewayUnreachable).catch((e) => console.error(`[evolution] could not mark ${channelId} offline`, e));
  }

  /**
   * Records a state the gateway reported; emits `channel_status` when the channel status changed, or when the
   * gateway said why it closed the session (`loss`: the number's health follows it even when the channel was
   * already offline, e.g. Evolution's `logout.instance` came first). `ownNumber`: the number an `open` paired.
   */
  private async applyState(channelId: string, state: string, at = new Date(), extra: { loss?: ReturnType<typeof lossReason>; ownNumber?: string | null } = {}) {
    const row = await this.instance(channelId);
    // A session that never opened has no number to judge (the pairing-code flow logs a connecting session out itself).
    const loss = state === "close" && row.pairedOnce ? extra.loss : undefined;
    if (loss && row.state === state) {
      await this.events.emit({ type: "channel_status", channelId, status: channelStatus(state, row.pairedOnce), at, ...loss });
      return channelStatus(state, row.pairedOnce);
    }
    // Baileys passes through `connecting` while it reconnects a paired number: not a status change
    // (a real loss arrives as `close`), so campaigns don't pause and resume on every reconnect.
    if (row.pairedOnce && state === "connecting") return channelStatus(row.state, true);
    // After `refused` the gateway reads `close`: still no session, still `disconnected` until pairing is asked again.
    if (row.state === "refused" && state === "close") return channelStatus(row.state, row.pairedOnce);
    if (row.state === state) return channelStatus(state, row.pairedOnce);
    // Another pairing may bring another number.
    this.ownNumbers.delete(channelId);
    if (state === "open" && extra.ownNumber) this.ownNumbers.set(channelId, extra.ownNumber);
    const pairedOnce = row.pairedOnce || state === "open";
    const before = channelStatus(row.state, row.pairedOnce);
    const after = channelStatus(state, pairedOnce);
    await this.db
      .update(evolutionInstances)
      .set({
        state,
        pairedOnce,
        updatedAt: at,
        // A paired channel needs no QR code any more; a lost connection drops the cached groups' freshness.
        ...(state === "open" ? { qrCode: null, pairingCode: null, pairingRequestedAt: null } : {}),
      })
      .where(eq(evolutionInstances.channelId, channelId));
    if (before !== after || loss) await this.events.emit({ type: "channel_status", channelId, status: after, at, ...loss });
    return after;
  }

  /** The gateway's connection state of the instance (a lost instance is created again and reads `close`). */
  private async liveState(channelId: string, instanceName: string): Promise<string> {
    let state: string | undefined;
    try {
      const res = await this.onInstance(channelId, () =>
        this.client.request<{ instance?: { state?: string } }>("GET", `/instance/connectionState/${encodeURIComponent(instanceName)}`, { retry: true }),
      );
      state = res?.instance?.state;
    } catch (err) {
      if (isLostInstance(err)) return "close";
      this.unavailable(err, `Evolution API cannot tell the state of ${instanceName}`);
    }
    if (!state) throw new ProviderUnavailableError(`Evolution API gave no state for ${instanceName}.`);
    return state;
  }

  async getStatus(channelId: string): Promise<ChannelStatus> {
    const row = await this.instance(channelId);
    const state = await this.liveState(channelId, row.instanceName);
    if (this.recreations.has(channelId)) await this.recreations.get(channelId);
    return this.applyState(channelId, state);
  }

  /**
   * The missed-webhook safety net (every minute, see docs/evolution.md): asks the gateway for the state
   * of every channel that is not connected, so a lost `connection.update` is recovered and a lost
   * instance is created again. Returns how many channels were checked.
   */
  async pollStates(): Promise<number> {
    const rows = await this.db.select({ channelId: evolutionInstances.channelId }).from(evolutionInstances).where(ne(evolutionInstances.state, "open"));
    for (const { channelId } of rows) {
      try {
        await this.getStatus(channelId);
      } catch (err) {
        if (!(err instanceof ProviderUnavailableError)) throw err;
      }
    }
    return rows.length;
  }

  /** `GET /instance/connect/{name}`: Evolution answers its errors as HTTP 200 `{error: true, message}`. */
  private async connect(channelId: string, instanceName: string, number?: string) {
    const res = await this.onInstance(channelId, () =>
      this.client.request<{ base64?: string; pairingCode?: string | null; code?: string; instance?: { state?: string }; error?: boolean; message?: unknown }>(
        "GET",
        `/instance/connect/${encodeURIComponent(instanceName)}`,
        { query: number ? { number } : {}, retry: true },
      ),
    );
    if (res?.error === true) throw new ProviderUnavailableError(`Evolution API could not connect ${instanceName}: ${evolutionErrorText(res, "error")}`);
    return res;
  }

  /**
   * A new pairing session started. A number that never paired is `connecting` again (from `refused`);
   * one that paired before stays `disconnected` until it pairs (applyState ignores its `connecting`).
   */
  private async markConnecting(channelId: string): Promise<ChannelStatus> {
    const row = await this.instance(channelId);
    if (!row.pairedOnce) return this.applyState(channelId, "connecting");
    await this.db.update(evolutionInstances).set({ state: "connecting", updatedAt: new Date() }).where(eq(evolutionInstances.channelId, channelId));
    return "disconnected";
  }

  /** Waits until the gateway reports the instance `close` (after a logout). */
  private async waitForClose(channelId: string, instanceName: string) {
    const end = Date.now() + (this.opts.closeWaitMs ?? 15_000);
    for (;;) {
      const state = await this.liveState(channelId, instanceName);
      if (state === "close") return;
      if (Date.now() > end)
        throw new ProviderUnavailableError(`Evolution API did not close the session of ${instanceName} in time; ask for the pairing code again.`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /**
   * Pairing data for the dashboard. Without options it only reads: the live QR code while a session is
   * pairing, and the latest pairing code with its expiry. `restart` starts a new session when none is
   * live (logged out, or `refused` after too many QR codes). A pairing code (`phoneNumber`) comes only
   * from a closed session (Evolution ignores `number` while `connecting`): logout, wait for `close`,
   * then connect with the number. The gateway answers that connect after 2 s, usually before WhatsApp
   * gave the code: it is then `pairingCodePending`, and comes in `qrcode.updated` or in the answer of a
   * later read's connect (which, while connecting, answers the current QR code and code).
   */
  async pairing(channelId: string, options: PairingOptions = {}): Promise<PairingInfo> {
    const row = await this.instance(channelId);
    let status = await this.getStatus(channelId);
    if (status === "connected") return { status, qrCode: null, pairingCode: null, pairingCodeExpiresAt: null, sessionClosed: false, automatic: false };
    const state = (await this.instance(channelId)).state;
    try {
      if (options.phoneNumber) {
        if (state !== "close") {
          try {
            await this.onInstance(channelId, () => this.client.request("DELETE", `/instance/logout/${encodeURIComponent(row.instanceName)}`, { retry: true }));
          } catch (err) {
            // 400 "is not connected": nothing to log out.
            if (!(err instanceof EvolutionHttpError && err.status === 400)) throw err;
          }
          await this.waitForClose(channelId, row.instanceName);
        }
        // The old code died with its session; until the new one comes, the code is pending.
        await this.db
          .update(evolutionInstances)
          .set({ pairingCode: null, pairingUpdatedAt: null, pairingRequestedAt: new Date() })
          .where(eq(evolutionInstances.channelId, channelId));
        // Evolution answers after a fixed 2 s, often before WhatsApp gave the code: it comes later in
        // QRCODE_UPDATED or the next connect's answer (the dashboard's poll asks for it).
        const res = await this.connect(channelId, row.instanceName, options.phoneNumber);
        await this.savePairing(channelId, res);
        status = await this.markConnecting(channelId);
      } else if (state === "connecting" || options.restart) {
        if (state !== "connecting")
          await this.db
            .update(evolutionInstances)
            .set({ pairingCode: null, pairingUpdatedAt: null, pairingRequestedAt: null })
            .where(eq(evolutionInstances.channelId, channelId));
        const res = await this.connect(channelId, row.instanceName);
        if (res?.instance?.state === "open")
          return {
            status: await this.applyState(channelId, "open"),
            qrCode: null,
            pairingCode: null,
            pairingCodeExpiresAt: null,
            sessionClosed: false,
            automatic: false,
          };
        await this.savePairing(channelId, res);
        if (state !== "connecting") status = await this.markConnecting(channelId);
      }
    } catch (err) {
      this.unavailable(err, `Evolution API cannot start pairing ${row.instanceName}`);
    }
    const fresh = await this.instance(channelId);
    const live = fresh.state === "connecting";
    const expiresAt = fresh.pairingCode && fresh.pairingUpdatedAt ? new Date(fresh.pairingUpdatedAt.getTime() + pairingCodeLifetimeMs) : null;
    // Asked for and not come yet: pending for as long as a code would live (then the page offers to ask again).
    const pending = live && !fresh.pairingCode && fresh.pairingRequestedAt !== null && Date.now() - fresh.pairingRequestedAt.getTime() < pairingCodeLifetimeMs;
    return {
      status,
      qrCode: live ? fresh.qrCode : null,
      pairingCode: live ? fresh.pairingCode : null,
      pairingCodeExpiresAt: live ? expiresAt : null,
      pairingCodePending: pending,
      sessionClosed: !live,
      automatic: false,
    };
  }

  async disconnectChannel(channelId: string) {
    const row = await this.instance(channelId);
    try {
      await this.onInstance(channelId, () => this.client.request("DELETE", `/instance/logout/${encodeURIComponent(row.instanceName)}`, { retry: true }));
    } catch (err) {
      // Evolution answers 400 "is not connected" when there is nothing to log out; a lost instance was created again.
      if (!(err instanceof EvolutionHttpError && (err.status === 400 || isLostInstance(err))))
        this.unavailable(err, `Evolution API could not log ${row.instanceName} out`);
    }
    await this.applyState(channelId, "close");
  }

  async deleteChannel(channelId: string) {
    const row = await this.instance(channelId);
    try {
      if (row.state === "open") await this.disconnectChannel(channelId);
      await this.client.request("DELETE", `/instance/delete/${encodeURIComponent(row.instanceName)}`, { retry: true });
    } catch (err) {
      if (!(err instanceof EvolutionHttpError && err.status === 404)) this.unavailable(err, `Evolution API could not delete ${row.instanceName}`);
    }
    await this.db.delete(evolutionInstances).where(eq(evolutionInstances.channelId, channelId));
  }

  /**
   * Groups of a connected channel. A fresh cache (EVOLUTION_GROUPS_TTL_SECONDS) is served as is; a
   * stale one is served at once while one background listing refreshes it (stale-while-revalidate);
   * with no cache the caller waits for the listing. One listing at a time per channel: concurrent
   * callers share it, because each `fetchAllGroups` is a slow job on the gateway that a client
   * time-out does not stop. Community parents are left out; admins-only groups are flagged.
   */
  async listGroups(channelId: string): Promise<ProviderGroup[]> {
    const status = await this.getStatus(channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${channelId} is ${status}: its groups cannot be queried.`);
    const row = await this.instance(channelId);
    if (row.groups && row.groupsFetchedAt && Date.now() - row.groupsFetchedAt.getTime() < this.opts.groupsTtlMs) return row.groups;
    const pending = this.refreshGroups(channelId, row.instanceName);
    if (row.groups) {
      pending.catch((err) => console.warn(`[evolution] background group listing of ${row.instanceName} failed: ${(err as Error).message}`));
      return row.groups;
    }
    try {
      return (await pending).groups;
    } catch (err) {
      this.unavailable(err, `Evolution API cannot list the groups of ${row.instanceName}`);
    }
  }

  /** The channel's one listing in progress, or a new one. */
  private refreshGroups(channelId: string, instanceName: string): Promise<GroupListing> {
    let pending = this.groupFetches.get(channelId);
    if (!pending) {
      pending = this.fetchGroups(channelId, instanceName).finally(() => this.groupFetches.delete(channelId));
      this.groupFetches.set(channelId, pending);
    }
    return pending;
  }

  /**
   * A listing of the channel's groups that started at or after `since` (ms): the last one when it did,
   * else the one in progress when it did, else a new one — still one listing at a time per channel.
   */
  private async groupsListedSince(channelId: string, instanceName: string, since: number): Promise<GroupListing> {
    for (;;) {
      const last = this.lastListings.get(channelId);
      if (last && last.startedAt >= since) return last;
      const running = this.groupFetches.get(channelId);
      if (!running) return this.refreshGroups(channelId, instanceName);
      // Started before `since`: let it end (never two jobs at once on the gateway), then look again.
      await running.catch(() => undefined);
    }
  }

  private async fetchGroups(channelId: string, instanceName: string): Promise<GroupListing> {
    // Taken before the request: a group made before this moment is in the answer.
    const startedAt = Date.now();
    const res = await this.onInstance(channelId, () =>
      this.client.request<unknown>("GET", `/group/fetchAllGroups/${encodeURIComponent(instanceName)}`, {
        query: { getParticipants: "false" },
        // Never retried: a second call starts a second full job on the gateway (one picture per group, minutes on large accounts).
        retry: false,
        timeoutMs: this.opts.groupsTimeoutMs ?? 300_000,
      }),
    );
    if (!Array.isArray(res)) throw new ProviderUnavailableError(`Evolution API gave no group list for ${instanceName}.`);
    const groups = sendableGroups(res);
    await this.db.update(evolutionInstances).set({ groups, groupsFetchedAt: new Date() }).where(eq(evolutionInstances.channelId, channelId));
    const raw = (res as ListedGroup[]).filter((g) => typeof g?.id === "string");
    const listing = { startedAt, raw, groups };
    this.lastListings.set(channelId, listing);
    return listing;
  }

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
      case "carousel":
        return carouselFallback(c.text, c.cards).map((card) => ({
          endpoint: "sendMedia",
          kind: "image",
          body: { mediatype: "image", media: card.mediaUrl, caption: card.caption, fileName: mediaFileName("image", card.mediaUrl) },
          text: card.caption,
        }));
    }
  }

  /**
   * The gateway's version (`GET /`). Read again after `versionTtlMs` (default 10 min), whenever a channel
   * (re)connects (upgrading the gateway restarts it, and every instance reconnects), and by the start-up
   * check; a failed read is tried again next time.
   */
  private gatewayVersion(fresh = false): Promise<string | null> {
    const now = Date.now();
    if (fresh || !this.versionProbe || now - this.versionProbe.at >= (this.opts.versionTtlMs ?? 600_000)) {
      const value: Promise<string | null> = this.client
        .request<{ version?: unknown }>("GET", "/", { retry: true })
        .then((r) => (typeof r?.version === "string" ? r.version : null))
        .catch((err) => {
          if (this.versionProbe?.value === value) this.versionProbe = undefined;
          throw err;
        });
      this.versionProbe = { value, at: now };
    }
    return this.versionProbe.value;
  }

  /** 2.4.0 and later keep our `messageId` for text and media (never for audio); older ones make their own ids. Unknown counts as older. */
  private async keepsMessageIds(): Promise<boolean> {
    const version = await this.gatewayVersion().catch(() => null);
    return version !== null && compareVersions(version, "2.4.0") >= 0;
  }

  async send(message: OutboundMessage): Promise<SendReceipt> {
    const row = await this.instance(message.channelId);
    // Offline by the gateway's last word: check once more (a webhook may have been missed) before refusing.
    if (row.state !== "open" && (await this.getStatus(message.channelId)) !== "connected") {
      throw new ProviderUnavailableError(`Channel ${message.channelId} is not connected.`);
    }
    let last: SendReceipt | undefined;
    for (const [i, part] of this.parts(message).entries()) last = await this.sendPart(row.instanceName, message, i, part);
    if (!last) throw new ProviderSendError("Nothing to send.", false);
    return last;
  }

  sendMany(messages: OutboundMessage[], options?: SendManyOptions) {
    return sendEach(this, messages, options);
  }

  /**
   * One POST per part, never repeated here: a lost answer is ProviderOutcomeUnknownError and the
   * dispatch core decides (look-ups, `send.message` events) whether it ever goes again. Parts already
   * sent (a carousel resent after a part was lost) are skipped.
   */
  private async sendPart(instanceName: string, message: OutboundMessage, part: number, p: Part): Promise<SendReceipt> {
    const requestedId = requestedMessageId(message.deliveryKey, part);
    const [known] = await this.db
      .select()
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.deliveryKey, message.deliveryKey), eq(evolutionMessages.part, part)));
    if (known?.messageId && known.sentAt) return { messageId: known.messageId, sentAt: known.sentAt };
    const idRequested = p.endpoint !== "sendWhatsAppAudio" && (await this.keepsMessageIds());
    const attemptedAt = new Date();
    const fingerprint = partFingerprint(p.kind, p.text);
    await this.db
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
      .onConflictDoUpdate({ target: [evolutionMessages.deliveryKey, evolutionMessages.part], set: { attemptedAt, idRequested, fingerprint } });

    const body = { number: message.groupId, ...p.body, mentionsEveryOne: message.mentionAll, ...(idRequested ? { messageId: requestedId } : {}) };
    try {
      const res = await this.client.request<{ key?: { id?: string }; messageTimestamp?: string | number }>(
        "POST",
        `/message/${p.endpoint}/${encodeURIComponent(instanceName)}`,
        { body, retry: false },
      );
      const id = res?.key?.id ?? (idRequested ? requestedId : undefined);
      if (!id) throw new ProviderOutcomeUnknownError(`Evolution API accepted the send to ${message.groupId} without a message id.`);
      return this.recordPart(message.deliveryKey, part, { id, at: timestampOf(res?.messageTimestamp) ?? new Date() });
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
      await this.markUnreachable(message.channelId);
      return new ProviderUnavailableError(err.message);
    }
    if (!(err instanceof EvolutionHttpError)) return new ProviderOutcomeUnknownError(err instanceof Error ? err.message : String(err));
    if (err.status === 401 || err.status === 403) return new ProviderUnavailableError(`Evolution API refused our API key: ${err.message}`);
    if (isLostInstance(err)) void this.recreate(message.channelId).catch((e) => console.error(`[evolution] could not create ${message.channelId} again`, e));
    if (err.status === 404) return new ProviderUnavailableError(`Channel ${message.channelId} has no instance on the gateway: ${err.message}`);
    if (err.status >= 500) {
      // sendMedia / sendWhatsAppAudio fail with 500 while preparing the media (download, ffmpeg): nothing went out.
      if (err.status === 500 && p.endpoint !== "sendText") return new ProviderSendError(`Media preparation failed (not sent): ${err.message}`, true);
      return new ProviderOutcomeUnknownError(err.message);
    }
    const kind = classifySendError(err.message);
    if (kind === "closed") {
      const status = await this.getStatus(message.channelId).catch(() => "disconnected" as const);
      return status === "connected"
        ? new ProviderSendError(err.message, true)
        : new ProviderUnavailableError(`Channel ${message.channelId} is not connected: ${err.message}`);
    }
    if (kind === "rate_limited") return new ProviderSendError(err.message, true, { rateLimited: true });
    return new ProviderSendError(err.message, kind === "transient");
  }

  private async recordPart(deliveryKey: string, part: number, found: { id: string; at: Date }): Promise<SendReceipt> {
    await this.db
      .update(evolutionMessages)
      .set({ messageId: found.id, sentAt: found.at })
      .where(and(eq(evolutionMessages.deliveryKey, deliveryKey), eq(evolutionMessages.part, part)));
    return { messageId: found.id, sentAt: found.at };
  }

  /**
   * /chat/findMessages for one unsettled part: by the id we asked for (kept by gateways ≥ 2.4.0), else
   * by our own messages in the group since the first attempt whose content fingerprint matches,
   * leaving out gateway ids another part already claimed. Null: not (yet) there. Throws when the
   * gateway cannot answer.
   */
  private async findOnGateway(instanceName: string, row: typeof evolutionMessages.$inferSelect) {
    const path = `/chat/findMessages/${encodeURIComponent(instanceName)}`;
    if (row.idRequested) {
      const byId = await this.client.request<unknown>("POST", path, { body: { where: { key: { id: row.requestedId } }, page: 1, offset: 10 }, retry: true });
      const hit = records(byId).find((r) => r.key?.id === row.requestedId);
      if (hit) return { id: row.requestedId, at: timestampOf(hit.messageTimestamp) ?? new Date() };
    }
    if (!row.fingerprint) return null;
    const recent = await this.client.request<unknown>("POST", path, {
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
    const rows = await this.db
      .select({ messageId: evolutionMessages.messageId, deliveryKey: evolutionMessages.deliveryKey, part: evolutionMessages.part })
      .from(evolutionMessages)
      .where(inArray(evolutionMessages.messageId, ids));
    return new Set(rows.filter((r) => r.deliveryKey !== own.deliveryKey || r.part !== own.part).map((r) => r.messageId!));
  }

  async findSent(lookup: SentLookup): Promise<LookupResult> {
    const rows = await this.db
      .select()
      .from(evolutionMessages)
      .where(and(eq(evolutionMessages.deliveryKey, lookup.deliveryKey), eq(evolutionMessages.channelId, lookup.channelId)))
      .orderBy(evolutionMessages.part);
    if (rows.length === 0) return { kind: "absent" }; // a row is written before every POST
    const unsettled = rows.filter((r) => !(r.messageId && r.sentAt));
    if (unsettled.some((r) => !r.fingerprint && !r.idRequested)) return { kind: "unsearchable" };
    const { instanceName } = await this.instance(lookup.channelId);
    for (const row of unsettled) {
      const found = await this.findOnGateway(instanceName, row);
      if (!found) return { kind: "not_found" }; // a resend skips the parts that are out
      await this.recordPart(row.deliveryKey, row.part, found);
      row.messageId = found.id;
      row.sentAt = found.at;
    }
    const last = rows[rows.length - 1];
    return { kind: "sent", receipt: { messageId: last.messageId!, sentAt: last.sentAt! } };
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
    const [already] = await this.db.select({ k: evolutionMessages.deliveryKey }).from(evolutionMessages).where(eq(evolutionMessages.messageId, id)).limit(1);
    if (already) return;
    const fingerprint = recordFingerprint(r);
    const [part] = await this.db
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
    await this.recordPart(part.deliveryKey, part.part, { id, at: sentAt });
    const rest = await this.db
      .select({ part: evolutionMessages.part, messageId: evolutionMessages.messageId })
      .from(evolutionMessages)
      .where(eq(evolutionMessages.deliveryKey, part.deliveryKey))
      .orderBy(evolutionMessages.part);
    if (rest.some((x) => !x.messageId)) return;
    // The delivery's receipt is its last part (what send() answers).
    await this.events.emit({
      type: "message_sent",
      receipts: [{ channelId, deliveryKey: part.deliveryKey, messageId: rest[rest.length - 1].messageId! }],
      at: sentAt,
    });
  }

  /**
   * The start-up check of the gateway: `GET /` (its version), the API key (`GET /instance/fetchInstances`)
   * and what can be seen of docs/evolution.md's prerequisites; the rest are reminders. Never throws.
   */
  async checkGateway(): Promise<GatewayCheck> {
    const warnings: string[] = [];
    let version: string | null = null;
    let reachable = false;
    try {
      version = await this.gatewayVersion(true);
      reachable = true;
    } catch (err) {
      warnings.push(`Evolution API at ${this.opts.apiUrl} cannot be reached: ${(err as Error).message}. Channels cannot pair or send until it answers.`);
    }
    if (reachable) {
      if (!version) warnings.push("Evolution API did not report its version (GET /): it may not be Evolution API v2.");
      else if (compareVersions(version, "2.4.0") < 0) {
        warnings.push(
          `Evolution API ${version} ignores the messageId we ask for (only 2.4.0 and later keep it): a send whose answer was lost is reconciled by a fingerprint of its content (group + text), and a voice note or captionless media with a lost answer is never resent automatically.`,
        );
      }
      try {
        const instances = await this.client.request<{ name?: string; Setting?: { groupsIgnore?: boolean } }[]>("GET", "/instance/fetchInstances", {
          retry: false,
        });
        const ignoring = (Array.isArray(instances) ? instances : [])
          .filter((i) => i?.Setting?.groupsIgnore === true && i.name?.startsWith("channel_"))
          .map((i) => i.name);
        if (ignoring.length)
          warnings.push(
            `Instances with groupsIgnore=true never report group events: ${ignoring.join(", ")}. Set groupsIgnore=false (POST /settings/set/{instance}).`,
          );
      } catch (err) {
        if (err instanceof EvolutionNotActivatedError)
          warnings.push(
            `Evolution API${version ? ` ${version}` : ""} is not activated: it answers every call with 503 LICENSE_REQUIRED, so channels cannot pair, send or manage groups until it is${err.registerUrl ? ` (${err.registerUrl})` : ""}.`,
          );
        else if (err instanceof EvolutionHttpError && (err.status === 401 || err.status === 403))
          warnings.push("Evolution API refused EVOLUTION_API_KEY (401): set it to the gateway's AUTHENTICATION_API_KEY.");
        else warnings.push(`Evolution API could not list its instances: ${(err as Error).message}`);
      }
    }
    if (/^https?:\/\/(localhost|127\.|\[::1\])/.test(this.opts.webhookBaseUrl) && !/^https?:\/\/(localhost|127\.|\[::1\])/.test(this.opts.apiUrl)) {
      warnings.push(
        `EVOLUTION_WEBHOOK_BASE_URL (${this.opts.webhookBaseUrl}) is a loopback address but the gateway runs elsewhere: it cannot post its events to us.`,
      );
    }
    return { provider: "evolution", checkedAt: new Date().toISOString(), reachable, version, warnings, reminders: gatewayReminders };
  }

  /** Is this the channel's webhook secret? (Only its SHA-256 is stored; compared in constant time.) */
  async verifyWebhook(channelId: string, secret: string): Promise<boolean> {
    const [row] = await this.db
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
   * receive time: the gateway's `date_time` is local wall-clock time labelled UTC (3 h early in Brazil).
   */
  async handleWebhook(channelId: string, secret: string, payload: unknown): Promise<boolean> {
    if (!(await this.verifyWebhook(channelId, secret))) return false;
    const body = (payload ?? {}) as { event?: string; data?: unknown };
    const event = String(body.event ?? "")
      .toLowerCase()
      .replaceAll("_", ".");
    const at = new Date();
    const data = body.data as Record<string, unknown> | Record<string, unknown>[] | undefined;
    if (event === "connection.update" && data && !Array.isArray(data) && typeof data.state === "string") {
      // A connection (re)established: the gateway may have been upgraded meanwhile (an upgrade restarts it and every instance reconnects).
      if (data.state === "open") this.versionProbe = undefined;
      const wuid = data.state === "open" && typeof data.wuid === "string" ? jidNumber(data.wuid) : null;
      // Known before the status event goes out: the service records the channel's number from it.
      if (wuid) this.ownNumbers.set(channelId, wuid);
      await this.applyState(channelId, data.state, at, { loss: lossReason(data.statusReason), ownNumber: wuid });
    } else if (event === "qrcode.updated" && data && !Array.isArray(data)) {
      await this.savePairing(channelId, (data.qrcode ?? data) as { base64?: string; pairingCode?: string });
    } else if (event === "logout.instance" || event === "remove.instance") {
      await this.applyState(channelId, "close", at);
    } else if (event === "messages.update" && data) {
      await this.receipts(channelId, Array.isArray(data) ? data : [data], at);
    } else if (event === "send.message" && data) {
      for (const d of Array.isArray(data) ? data : [data]) await this.sentEvent(channelId, d, new Date());
    } else if (event === "group-participants.update" && data) {
      // Evolution resends a 5xx'd event with the same body (same `date_time`): its digest names the event.
      const sent = String((body as { date_time?: unknown }).date_time ?? "");
      for (const [i, d] of (Array.isArray(data) ? data : [data]).entries()) {
        await this.participantsEvent(channelId, d, at, sha256(JSON.stringify([sent, i, d])).toString("base64url"));
      }
    }
    return true;
  }

  private async receipts(channelId: string, updates: Record<string, unknown>[], at: Date) {
    const acked: Receipt[] = [];
    const read: Receipt[] = [];
    for (const u of updates) {
      const id = (u.keyId ?? (u.key as { id?: string } | undefined)?.id) as string | undefined;
      const status = String(u.status ?? "").toUpperCase();
      if (!id || !["DELIVERY_ACK", "READ", "PLAYED"].includes(status)) continue;
      const [m] = await this.db
        .select({ deliveryKey: evolutionMessages.deliveryKey })
        .from(evolutionMessages)
        .where(and(eq(evolutionMessages.messageId, id), eq(evolutionMessages.channelId, channelId), isNotNull(evolutionMessages.sentAt)));
      if (!m) continue;
      (status === "DELIVERY_ACK" ? acked : read).push({ channelId, deliveryKey: m.deliveryKey, messageId: id });
    }
    if (acked.length) await this.events.emit({ type: "message_ack", receipts: acked, at });
    if (read.length) await this.events.emit({ type: "message_read", receipts: read, at });
  }
}

/** What the start-up check of the gateway found (shown in the log and on the dashboard's channels page). */
export interface GatewayCheck {
  provider: "evolution";
  checkedAt: string;
  reachable: boolean;
  version: string | null;
  warnings: string[];
  /** Prerequisites that cannot be seen from outside the gateway. */
  reminders: string[];
}

/** The deployment prerequisites (docs/evolution.md) that the gateway does not let us check. */
export const gatewayReminders = [
  "DATABASE_SAVE_DATA_NEW_MESSAGE=true on the gateway: without it /chat/findMessages is always empty and a send whose answer was lost cannot be confirmed.",
  "CORS_ORIGIN=* on the gateway: requests without an Origin header (ours) can otherwise get 500.",
  "DEL_INSTANCE=false on the gateway: otherwise it deletes logged-out instances (we create them again, but the number must pair again).",
  "A group-metadata cache on the gateway (CACHE_REDIS_ENABLED=true or CACHE_LOCAL_ENABLED=true) to avoid WhatsApp's rate-overlimit on group sends.",
];

/** Compares dotted versions numerically, ignoring a pre-release suffix (2.4.0-rc1 counts as 2.4.0). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .replace(/^v/i, "")
      .split(/[-+]/)[0]
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
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
    let v = value as { text?: string; caption?: string; message?: { documentMessage?: { caption?: string } } } | null;
    if (key === "documentWithCaptionMessage") v = v?.message?.documentMessage ?? null;
    return partFingerprint(kind, String(v?.text ?? v?.caption ?? ""));
  }
  return null;
}

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
export function classifySendError(text: string): "rate_limited" | "transient" | "closed" | "permanent" {
  if (/rate-?overlimit/i.test(text)) return "rate_limited";
  if (/connection closed|not connected/i.test(text)) return "closed";
  if (/timed out|no sessions|media upload failed|\[object Object\]|stream errored|socket/i.test(text)) return "transient";
  return "permanent";
}

function timestampOf(value: string | number | undefined): Date | undefined {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000) : undefined;
}
