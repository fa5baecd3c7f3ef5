import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for an Evolution API v2 server (node:http on 127.0.0.1) following its documented
 * requests and answers: the `apikey` header, instance/create|connect|connectionState|logout|delete,
 * webhook/set, group/fetchAllGroups?getParticipants=, message/sendText|sendMedia|sendWhatsAppAudio|sendPoll,
 * chat/findMessages, Evolution's error body `{status, error, response: {message: [...]}}`, and the
 * webhooks it posts (`{event, instance, data, date_time, …}`).
 *
 * Instances, pairing and groups behave as the real gateway does by default (docs/evolution.md):
 * group receipts are never posted; `date_time` is São Paulo wall-clock time labelled `Z`; a pairing
 * code comes only from `connect?number=` on a `close` instance; connect errors are HTTP 200
 * `{error: true, message}`; a lost instance is 404 on every call, before the key is checked; group
 * listing is slow (one picture fetch per group, in sequence), never cancelled by a client time-out,
 * and each call starts one more job; the list holds legacy `<phone>-<timestamp>@g.us` ids, a
 * community parent and an admins-only (`announce`) group; rate-limited group queries answer 500
 *  `rate-overlimit`; `webhook.headers` travel with every event.
 *
 * Sending behaves as Evolution really does (docs/evolution.md) unless a
 * test opts into `mode: "friendly"`: `messageId` is ignored up to 2.3.7 (ids are Baileys' own `3EB0…`;
 * `version: "2.4.0"` honours it for text and media, never for audio); a message is stored (and seen by
 * findMessages, and announced by a `send.message` event) only once WhatsApp accepted it, after
 * `acceptDelayMs`; the HTTP answer can come late or never although the message went out; send failures
 * are HTTP 400 with Evolution's texts; a media preparation failure is 500 (not sent); no 429 anywhere.
 *
 * Groups, pairing and versions as Evolution 2.3.7 does them (docs/evolution.md#testing-against-the-fake-gateway):
 * `group/create` answers any failure, before or after WhatsApp made the group, as 500 "Error creating
 * group" with the error's text (`failCreate`; a rate-overlimit too); groups it makes are addressed by
 * LID, so they list the number by its LID only; `instance/connect` answers after a fixed 2 s, before
 * WhatsApp gave the pairing code, which comes later in `qrcode.updated` and the next connect's answer;
 * a 2.4 gateway answers every route but `/` with 503 LICENSE_REQUIRED until `activate()`.
 *
 * Who is in a group as WhatsApp and Evolution say it (docs/evolution.md#who-is-in-a-group): a group made by one
 * instance is found by another instance added to it; a send from an instance that is not a participant answers
 * 400 `[object Object]` (Evolution's stringified "Group not found"); `group/create` leaves out the numbers in
 * `knobs.notOnWhatsApp` and `knobs.refuseAdds`; an add answers those with a per-participant status (201).
 * Disconnects as Evolution 2.3.7 and 2.4 make them (`setState`): a close with a code the version reconnects is silent —
 * `connecting` is posted, not `close`, and `fetchInstances` keeps listing the instance `open` (its database row) while
 * `connectionState` answers the session's real state; 408 is such a reconnect on 2.3.x and a logout on 2.4.
 * `reportEveryClose` (the old, friendlier double: every close posted) is an opt-in for unit tests.
 */
export interface FakeGroup {
  id: string;
  subject: string;
  announce?: boolean;
  /** Only admins edit the group's info (Baileys' `restrict`; updateSetting locked / unlocked). */
  restrict?: boolean;
  isCommunity?: boolean;
  isCommunityAnnounce?: boolean;
  desc?: string;
  pictureUrl?: string | null;
  creation?: number;
  /** Baileys' participants: `id` a phone JID (`<digits>@s.whatsapp.net`) or a LID (`<digits>@lid`); made on first use. */
  participants?: FakeParticipant[];
  /** The current invite code (made on the first inviteCode read). */
  inviteCode?: string;
  /** WhatsApp addresses the group by LID (every group made now): the number is listed, and owns it, by its LID only. */
  byLid?: boolean;
  /** "Approve new participants" on: following the link makes a pending request, not a join. */
  joinApproval?: boolean;
  /** Pending join requests (JIDs): not participants, not counted in `size`. */
  pendingRequests?: string[];
  /** The instance that made it (`group/create`): another instance added to it finds it too. */
  creator?: string;
}

export interface FakeParticipant {
  id: string;
  /** A LID participant's phone JID, when WhatsApp shares it. */
  phoneNumber?: string;
  /** A phone-JID participant's LID, when WhatsApp shares it. */
  lid?: string;
  admin: "admin" | "superadmin" | null;
}

export interface FakeInstance {
  name: string;
  hash: string;
  /** The session's state in the gateway's memory: what `connectionState` answers and `connection.update` posts. */
  state: "open" | "connecting" | "close" | "refused";
  /**
   * The gateway database's `connectionStatus` (what `fetchInstances` lists) when it differs from `state`: a silent
   * reconnect writes nothing there, so it keeps `open` while the session is `close`/`connecting` (`svc` ~420–431, 2.3.7).
   * Undefined: the same as `state` (`refused` is stored as `close`).
   */
  stored?: "open" | "connecting" | "close";
  /** A reconnect 2.4 waits for (3 s after the close): cancelled by any later change. */
  reconnectTimer?: ReturnType<typeof setTimeout>;
  webhook?: { url: string; events?: string[]; enabled?: boolean; headers?: Record<string, string> };
  groups: FakeGroup[];
  /** The pairing code of the latest `connect?number=` from `close` (Evolution keeps it in its qrcode). */
  pairingCode?: string | null;
  /** The paired phone's number (digits): `ownerJid` once the instance opened. */
  owner: string;
  /** The number's LID (`<digits>@lid`), which Evolution never reports on its own. */
  lid: string;
  pairedOnce?: boolean;
  /** Counts pairing sessions: a pairing code WhatsApp gives late belongs to the session that asked. */
  session?: number;
  /**
   * The latest close Evolution did not reconnect (401/402/403/406), as its database keeps it for fetchInstances
   * (`disconnectionReasonCode`, `disconnectionAt`, `disconnectionObject`): never cleared, not even by a new pairing.
   */
  disconnection?: { code: number; at: string; object: string };
}

export interface FakeMessage {
  instance: string;
  endpoint: string;
  id: string;
  number: string;
  body: Record<string, unknown>;
  timestamp: number;
  /** Media: the mimetype the gateway derived (from `fileName` only; the string "false" without one). */
  mimetype?: string;
  /** Media: the file name the gateway used (the URL's basename without extension when none was given). */
  fileName?: string;
}

/** A send failure to answer instead of sending (HTTP 400 with Evolution's text unless `status` says otherwise). */
export interface FakeSendFailure {
  /** Only sends to this group (jid); any when absent. */
  number?: string;
  /** Only sends through this instance; any when absent. */
  instance?: string;
  message: string;
  status?: number;
  /** How many sends it fails (default 1). */
  times?: number;
}

/**
 * A group creation that fails as Evolution answers it (`svc` ~4329–4350: every failure inside
 * `createGroup` is 500 "Error creating group" with the error's text). `after`: WhatsApp made the group
 * first (the description, the promotion or the metadata read failed), so the group exists.
 */
export interface FakeCreateFailure {
  message: string;
  after: boolean;
  /** How many creations it fails (default 1). */
  times?: number;
}

/** Evolution's send failure texts (svc ~2208, ~2393): HTTP 400, the message not sent. */
export const evolutionSendErrors = {
  timedOut: "Error: Timed Out",
  rateOverlimit: "Error: rate-overlimit",
  noSessions: "SessionError: No sessions",
  mediaUpload: "Error: Media upload failed on all hosts",
  connectionClosed: "Connection Closed",
  groupMetadata: "[object Object]",
} as const;

export interface FakeEvolution {
  url: string;
  apiKey: string;
  instances: Map<string, FakeInstance>;
  /** Messages WhatsApp accepted (stored by the gateway), in order. */
  messages: FakeMessage[];
  /** Every send POST the gateway received (whatever became of it), with the instance it came to. */
  sendRequests: { instance: string; endpoint: string; number: string; body: Record<string, unknown>; at: number }[];
  /** Every `group/updateParticipant` POST that reached WhatsApp (add, promote…), in order. */
  participantUpdates: { instance: string; group: string; action: string; participants: string[] }[];
  /** Every `group/create` POST that passed Evolution's schema check (whatever became of it). */
  createRequests: { instance: string; subject: string; at: number }[];
  /**
   * Group settings WhatsApp applied (updateSetting, updateGroupSubject, updateGroupDescription, updateGroupPicture,
   * updateParticipant), in order: one system notice each in the group.
   */
  groupChanges: { instance: string; groupJid: string; route: string; body: Record<string, unknown> }[];
  readonly version: string;
  mode: "default" | "friendly";
  webhookDeliveries: { url: string; status: number; body: unknown }[];
  /** `fetchAllGroups`: listing jobs started (each call starts one; a client time-out stops none). */
  counters: {
    fetchAllGroups: number;
    groupJobsRunning: number;
    sends: number;
    findMessages: number;
    connects: number;
    logouts: number;
    creates: number;
    fetchInstances: number;
    connectionStates: number;
  };
  /** Receipts the real gateway would not forward (group chats): counted, never posted. */
  droppedGroupReceipts: number;
  knobs: {
    latencyMs: number;
    groupsLatencyMs: number;
    /** Per group of a listing (Evolution fetches each group's picture in sequence). Default 20 ms. */
    groupDelayMs: number;
    /** `GET /instance/connect` answers HTTP 200 `{error: true, message}` with this text while set. */
    connectError: string | null;
    /** The next N sends answer 400 `Error: Timed Out` without sending. */
    failSends: number;
    /** The next N group-setting changes answer WhatsApp's `Error: rate-overlimit` in their route's wrapping, changing nothing. */
    groupSettingRateLimits: number;
    /** Failures answered instead of sending, first match first (see `failSend`). */
    sendFailures: FakeSendFailure[];
    /** The next N sends go out but the connection is dropped before the answer. */
    dropAnswers: number;
    /** The next N sends are dropped without ever going out (a hung gateway that gave up). */
    loseSends: number;
    /** The next N sends take `slowSendMs` before WhatsApp accepts them (then stored, then answered). */
    slowSends: number;
    slowSendMs: number;
    /** How long WhatsApp takes to accept an ordinary send (the message is stored only then). */
    acceptDelayMs: number;
    /** Post `send.message` webhooks (when the instance subscribed to SEND_MESSAGE). */
    sendMessageEvents: boolean;
    /** Group queries answer 500 `rate-overlimit` while true (WhatsApp's rate limit, as Evolution reports it). */
    rateLimitGroups: boolean;
    /**
     * Numbers (digits) WhatsApp does not know. `group/create` leaves them out without a word (Evolution's
     * whatsappNumber check, whatsapp.baileys.service.ts createGroup ~4165 in 2.3.6), and an add answers them
     * with status "404". Every other number is on WhatsApp.
     */
    notOnWhatsApp: string[];
    /**
     * Numbers (digits) WhatsApp refuses to add, with the status it answers (`"403"` privacy settings, `"408"` left
     * recently…): `group/create` makes the group without them, `updateParticipant` add answers that status for them
     * (201, Baileys' per-participant list: a refusal is not an error).
     */
    refuseAdds: Record<string, string>;
    /** Ignore the `messageId` option: ids are Baileys' own. Default true below 2.4.0 (false in friendly mode). */
    ignoreMessageId: boolean;
    /** How long WhatsApp takes to create a group (default 800 ms; seconds on a real gateway). */
    createDelayMs: number;
    /** The next N group creations go through but their answer is never sent (the connection is dropped). */
    loseCreateAnswers: number;
    /** Group creations answered with Evolution's 500 (see `failCreate`), first first. */
    createFailures: FakeCreateFailure[];
    /** Groups made through `group/create` are addressed by LID (WhatsApp's default now). Default true (false in friendly mode). */
    lidGroups: boolean;
    /** `instance/connect` from `close` answers after this long (Evolution: a fixed 2 s). Default 2000 (0 in friendly mode). */
    connectDelayMs: number;
    /** WhatsApp gives a requested pairing code this long after the session started (default 2500: after connect answered). */
    pairingCodeDelayMs: number;
    /**
     * Delays between attempts of a webhook our side did not take: Evolution's (5 s doubling to 300 s, 10
     * attempts; never after 400/401/403/404/422: webhook.controller.ts ~218) unless a test shortens them.
     */
    webhookRetryDelaysMs: number[];
    /** fetchInstances lists `disconnectionReasonCode`/`disconnectionAt`/`disconnectionObject` (every 2.x since Aug 2024). Default true. */
    listsDisconnections: boolean;
    /** fetchInstances ignores `?instanceName=` and lists every instance (a gateway that ignored the filter). Default false. */
    ignoresInstanceFilter: boolean;
    /**
     * How long the gateway waits after a close it reconnects before it reconnects (the session reads `close` meanwhile):
     * null (default) is the version's — 3 s from 2.4.0 (`svc` ~517–522, 2.4.0-rc2), at once before.
     */
    reconnectDelayMs: number | null;
  };
  /**
   * Platform side of groups: people join (through the link) or leave; numbers as digits, LIDs as
   * `<digits>@lid`. `resolveLids`: the phone WhatsApp shares for a LID, in the group's participant list and
   * in the event (`phoneNumber`); with `listOnly` the event carries the LID alone (the list still has both).
   */
  groupJoin(name: string, groupId: string, participants: string[], options?: { resolveLids?: Record<string, string>; listOnly?: boolean }): Promise<void>;
  /** An admin on a phone makes members admins (`promote`) or admins members (`demote`): the list changes and the event is posted. */
  groupAdmin(name: string, groupId: string, participants: string[], action: "promote" | "demote"): Promise<void>;
  /** `lids`: the LID the event carries beside a phone number (`lid`), and by which the list may hold that person. */
  groupLeave(name: string, groupId: string, participants: string[], options?: { lids?: Record<string, string> }): Promise<void>;
  /**
   * Someone follows the group's link: a join, or, with `joinApproval` on, a pending request (Baileys emits
   * `group.join-request`, which Evolution does not forward: nothing is posted).
   */
  requestJoin(name: string, groupId: string, participants: string[]): Promise<void>;
  /** An admin approves pending requests on the phone: they join (an `add`, as WhatsApp reports it). */
  approveJoin(name: string, groupId: string, participants: string[]): Promise<void>;
  /** Resolves when no webhook retry is pending. */
  webhooksSettled(): Promise<void>;
  /** A group admin on a phone revokes the link (a new code is made at once). */
  revokeInvite(name: string, groupId: string): void;
  /** The number is removed from the group (`gone`) or demoted (`not_admin`). */
  loseGroup(name: string, groupId: string, how: "gone" | "not_admin"): void;
  group(name: string, groupId: string): FakeGroup | undefined;
  /** Makes the next send(s) (to one group, or any) fail with this text; HTTP 400 unless `status`. */
  failSend(failure: FakeSendFailure): void;
  /** Makes the next group creation(s) fail with Evolution's 500, before or after WhatsApp made the group. */
  failCreate(failure: FakeCreateFailure): void;
  /** Groups of an instance with this subject (however many there are). */
  groupsNamed(name: string, subject: string): FakeGroup[];
  /** A 2.4 gateway activated (its licence registered): the 503 LICENSE_REQUIRED gate opens. */
  activate(): void;
  /** The gateway is upgraded (or downgraded) in place: `GET /` reports `version` from now on, with that version's behaviour. */
  upgrade(version: string): void;
  /** Resolves when no send is still being worked on. */
  idle(): Promise<void>;
  pair(name: string): Promise<void>;
  /**
   * The instance's connection state, reported as Evolution does (whatsapp.baileys.service.ts connectionUpdate, tag 2.3.7
   * ~420–463, 2.4.0-rc2 ~482–556). A `close` carries Baileys' `statusReason` (default 401 loggedOut). For the codes the
   * version does not reconnect (401, 402, 403, 406; and 408 from 2.4.0) the database row takes `close` and the code,
   * `logout.instance` is posted (when the code was given), then `connection.update` `close`. Any other code is a silent
   * reconnect: nothing is posted for the close, the session reads `close` (2.4: for `knobs.reconnectDelayMs`), then
   * `connecting`, which is posted; the database row keeps `open`, so `fetchInstances` still lists it `open`; sends answer
   * `Connection Closed` until `setState(name, "open")` (Baileys got the session back). `connecting` on a paired `open`
   * instance is such a reconnect too. Option `reportEveryClose` posts every close as `close` instead (unit tests only).
   */
  setState(name: string, state: FakeInstance["state"], statusReason?: number): Promise<void>;
  /** The instance's webhooks are lost from now on (our side never gets them) until `releaseWebhooks`. */
  holdWebhooks(name: string): void;
  /** The held webhooks arrive late, in order (an outage that ended); resolves when they were posted. */
  releaseWebhooks(name: string): Promise<void>;
  /** The gateway loses the instance (deleted by hand, DEL_INSTANCE, a wiped database): every call on it is 404. */
  loseInstance(name: string): void;
  receipt(messageId: string, status: "SERVER_ACK" | "DELIVERY_ACK" | "READ" | "PLAYED"): Promise<void>;
  /**
   * Someone in the group votes on a poll (their whole choice; [] takes the vote back), as the gateway's version reports it:
   * 2.3.7 and later decrypt the vote and post a `messages.upsert` of type pollUpdateMessage with the option names
   * (whatsapp.baileys.service.ts, messages.upsert); earlier releases skip vote messages before any webhook (counted in
   * `droppedPollVotes`). `voter`: digits; the event carries the voter's LID as participant and the phone as participantAlt.
   */
  pollVote(messageId: string, voter: string, selected: string[]): Promise<void>;
  /** Votes the gateway's version never posts (≤ 2.3.6). */
  readonly droppedPollVotes: number;
  /**
   * A member posts a text in a group, as 2.3.7 posts it (`svc` messages.upsert → prepareMessage → MESSAGES_UPSERT):
   * `key {remoteJid: <group>@g.us, fromMe: false, id, participant, participantAlt}` — `participant` the member's LID and
   * `participantAlt` their phone JID when `lid` is given, else the phone JID alone — `messageType: "conversation"` (an
   * extendedTextMessage is folded into `conversation`). `id`: the same message again (a redelivery). Answers the id.
   */
  groupPost(name: string, groupId: string, from: string, text: string, options?: { lid?: string; id?: string }): Promise<string>;
  /** Messages members posted (groupPost), `deleted` once `DELETE /chat/deleteMessageForEveryone` revoked it as an admin. */
  readonly groupPosts: { id: string; instance: string; groupJid: string; participant: string; text: string; deleted: boolean }[];
  /** Every `DELETE /chat/deleteMessageForEveryone` body that reached the gateway, in order. */
  readonly deleteRequests: { instance: string; body: Record<string, unknown> }[];
  /** The gateway goes down: stops listening (connections refused) and drops open connections; its state is kept. */
  stop(): Promise<void>;
  /** The gateway is back, on the same port, with the same instances and messages. */
  start(): Promise<void>;
  close(): Promise<void>;
}

const errorBody = (status: number, error: string, message: unknown[]) => ({ status, error, response: { message } });

export interface FakeEvolutionOptions {
  apiKey?: string;
  /** Regular groups per instance (default 5); a legacy-id group, a community parent and its announcement group come on top. */
  groupsPerInstance?: number;
  /** The gateway's version (`GET /`): "2.3.7" (default) ignores `messageId`; "2.4.0" honours it for text and media. */
  version?: string;
  /** The gateway's TZ for `date_time` (default America/Sao_Paulo, as in the official image). */
  timeZone?: string;
  /**
   * "default" behaves as Evolution does; "friendly" is the old, kinder double (honours `messageId` on
   * every route, stores at once): only for unit tests that need it.
   */
  mode?: "default" | "friendly";
  /** 2.4 and later: "required" (default) answers every route but `/` with 503 LICENSE_REQUIRED until `activate()`. */
  license?: "required" | "active";
  /**
   * The old, friendlier double for unit tests that need it: a close with a code Evolution reconnects is posted as
   * `close` and stored, instead of the silent reconnect the real gateway makes (`connecting`, `fetchInstances` still `open`).
   */
  reportEveryClose?: boolean;
}

/** Evolution's `date_time`: the local wall-clock time of `timeZone`, formatted as if it were UTC (channel.service.ts ~436). */
export function evolutionDateTime(now: Date, timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    })
      .formatToParts(now)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${String(now.getMilliseconds()).padStart(3, "0")}Z`;
}

/**
 * Evolution's formatBRNumber (src/utils/createJid.ts, tag 2.3.6 ~17–33; the same in channel.service.ts): 55 + DDD ≥ 31
 * + 9 + a number starting 7–9 loses its ninth digit. WhatsApp addresses those accounts so, in events and lists too.
 */
export function formatBRNumber(digits: string) {
  const m = /^(\d{2})(\d{2})\d(\d{8})$/.exec(digits);
  if (m?.[1] !== "55") return digits;
  return Number(m[3][0]) < 7 || Number(m[2]) < 31 ? digits : m[1] + m[2] + m[3];
}

/** a.b.c → comparable number. */
const versionNumber = (v: string) =>
  v
    .split(/[.-]/)
    .slice(0, 3)
    .reduce((n, part) => n * 1000 + (Number.parseInt(part, 10) || 0), 0);

/** Evolution's mimetype comes from `fileName` only (mime-types lookup); unknown → the string "false". */
const mimeByExtension: Record<string, string> = {
  pdf: "application/pdf",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif",
  mp4: "video/mp4",
  "3gp": "video/3gpp",
  mov: "video/quicktime",
  ogg: "audio/ogg",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  doc: "application/msword",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  zip: "application/zip",
  txt: "text/plain",
  csv: "text/csv",
};
export const fakeMimetype = (fileName: string | undefined) => {
  const ext = fileName?.includes(".") ? fileName.split(".").pop()!.toLowerCase() : "";
  return mimeByExtension[ext] ?? "false";
};

export async function startFakeEvolution(opts: FakeEvolutionOptions = {}): Promise<FakeEvolution> {
  const apiKey = opts.apiKey ?? "fake-global-key";
  let version = opts.version ?? "2.3.7";
  let activated = opts.license === "active";
  const timeZone = opts.timeZone ?? "America/Sao_Paulo";
  const mode = opts.mode ?? "default";
  const friendly = mode === "friendly";
  const instances = new Map<string, FakeInstance>();
  const messages: FakeMessage[] = [];
  const sendRequests: FakeEvolution["sendRequests"] = [];
  const participantUpdates: FakeEvolution["participantUpdates"] = [];
  const createRequests: FakeEvolution["createRequests"] = [];
  const groupChanges: FakeEvolution["groupChanges"] = [];
  const groupPosts: FakeEvolution["groupPosts"] = [];
  const deleteRequests: FakeEvolution["deleteRequests"] = [];
  /** WhatsApp's throttle on group changes (knobs.groupSettingRateLimits): Baileys' Boom text as Evolution passes it on. */
  const settingThrottle = () => {
    if (knobs.groupSettingRateLimits <= 0) return null;
    knobs.groupSettingRateLimits--;
    return "Error: rate-overlimit";
  };
  const webhookDeliveries: FakeEvolution["webhookDeliveries"] = [];
  const counters: FakeEvolution["counters"] = {
    fetchAllGroups: 0,
    groupJobsRunning: 0,
    sends: 0,
    findMessages: 0,
    connects: 0,
    logouts: 0,
    creates: 0,
    fetchInstances: 0,
    connectionStates: 0,
  };
  const knobs: FakeEvolution["knobs"] = {
    latencyMs: 0,
    groupsLatencyMs: 0,
    groupDelayMs: 20,
    connectError: null,
    failSends: 0,
    groupSettingRateLimits: 0,
    sendFailures: [],
    dropAnswers: 0,
    loseSends: 0,
    slowSends: 0,
    slowSendMs: 3000,
    acceptDelayMs: friendly ? 0 : 30,
    sendMessageEvents: true,
    rateLimitGroups: false,
    ignoreMessageId: !friendly && versionNumber(version) < versionNumber("2.4.0"),
    createDelayMs: friendly ? 0 : 800,
    loseCreateAnswers: 0,
    createFailures: [],
    lidGroups: !friendly,
    connectDelayMs: friendly ? 0 : 2000,
    pairingCodeDelayMs: friendly ? 0 : 2500,
    webhookRetryDelaysMs: [5, 10, 20, 40, 80, 160, 300, 300, 300].map((s) => s * 1000),
    listsDisconnections: true,
    notOnWhatsApp: [],
    refuseAdds: {},
    ignoresInstanceFilter: false,
    reconnectDelayMs: null,
  };
  /** Pairing codes WhatsApp has yet to give (cleared on close). */
  const pendingCodes = new Set<NodeJS.Timeout>();
  let dropped = 0;
  let droppedVotes = 0;
  const working = new Set<Promise<unknown>>();
  let base = "";
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Baileys' own message ids: 3EB0 + 16 upper-case hex digits. */
  const baileysId = () => `3EB0${randomUUID().replaceAll("-", "").slice(0, 16).toUpperCase()}`;

  /** How the gateway stores (and findMessages / send.message show) a sent message. */
  const record = (m: FakeMessage) => {
    const content =
      m.endpoint === "sendText"
        ? { extendedTextMessage: { text: m.body.text } }
        : m.endpoint === "sendPoll"
          ? pollContent(m)
          : m.endpoint === "sendWhatsAppAudio"
            ? { audioMessage: { url: `https://mmg.whatsapp.net/v/${m.id}.enc`, mimetype: "audio/ogg; codecs=opus", ptt: true, seconds: 7 } }
            : {
                [`${String(m.body.mediatype)}Message`]: {
                  url: `https://mmg.whatsapp.net/v/${m.id}.enc`,
                  mimetype: m.mimetype,
                  ...(m.body.caption ? { caption: m.body.caption } : {}),
                  ...(m.body.mediatype === "document" ? { fileName: m.fileName } : {}),
                },
              };
    return {
      key: { remoteJid: m.number, fromMe: true, id: m.id },
      pushName: "",
      status: "PENDING",
      message: content,
      contextInfo: null,
      messageType: Object.keys(content)[0],
      messageTimestamp: m.timestamp,
      instanceId: randomUUID(),
      source: "unknown",
    };
  };

  /**
   * A poll as Baileys makes it (src/Utils/messages.ts): one answer is pollCreationMessageV3, several pollCreationMessage; the
   * message secret (that votes are encrypted with) beside it.
   */
  const pollContent = (m: FakeMessage) => ({
    [m.body.selectableCount === 1 ? "pollCreationMessageV3" : "pollCreationMessage"]: {
      name: m.body.name,
      options: (m.body.values as string[]).map((optionName) => ({ optionName })),
      selectableOptionsCount: m.body.selectableCount,
    },
    messageContextInfo: { messageSecret: Buffer.from(m.id.padEnd(32, "0")).toString("base64") },
  });

  const groupsFor = (name: string): FakeGroup[] => {
    const seed = [...name].reduce((a, c) => (a * 31 + c.charCodeAt(0)) % 1_000_000_007, 7);
    const regular = Array.from({ length: opts.groupsPerInstance ?? 5 }, (_, i) => ({
      id: `120363${String(seed).padStart(10, "0")}${String(i + 1).padStart(2, "0")}@g.us`,
      subject: `Grupo Evo ${String(i + 1).padStart(2, "0")}`,
      // The second group lets only admins post.
      announce: i === 1,
    }));
    return [
      ...regular,
      // A group created before 2018: `<creator phone>-<creation timestamp>@g.us` (#743).
      { id: `55119${String(seed).padStart(8, "0").slice(0, 8)}-1514827292@g.us`, subject: "Grupo Antigo", announce: false },
      // A community: its parent cannot receive messages; its announcement group is admins-only.
      { id: `120363${String(seed).padStart(10, "0")}90@g.us`, subject: "Comunidade Evo", isCommunity: true, announce: true },
      { id: `120363${String(seed).padStart(10, "0")}91@g.us`, subject: "Avisos da Comunidade", isCommunityAnnounce: true, announce: true },
    ];
  };

  /** Webhooks our side does not get for now, per instance (`holdWebhooks`). */
  const heldWebhooks = new Map<string, { event: string; data: unknown }[]>();
  /** Webhooks waiting for their next attempt (Evolution retries in the background). */
  const retrying = new Set<Promise<void>>();
  const retryTimers = new Set<ReturnType<typeof setTimeout>>();
  /** Evolution does not retry these (webhook.controller.ts ~218: NON_RETRYABLE_STATUS_CODES). */
  const nonRetryable = [400, 401, 403, 404, 422];

  /** One event, one POST; what our side did not take is sent again, the same body (same `date_time`), in the background. */
  async function postWebhook(inst: FakeInstance, event: string, data: unknown) {
    if (!inst.webhook?.url || inst.webhook.enabled === false) return;
    const held = heldWebhooks.get(inst.name);
    if (held) return void held.push({ event, data });
    const eventConst = event.toUpperCase().replace(/[.-]/g, "_");
    if (inst.webhook.events?.length && !inst.webhook.events.includes(eventConst)) return;
    const hook = inst.webhook;
    const body = {
      event,
      instance: inst.name,
      data,
      destination: hook.url,
      date_time: evolutionDateTime(new Date(), timeZone),
      sender: jidOf(inst.owner),
      server_url: base,
      apikey: inst.hash,
    };
    const attempt = async () => {
      let status = 0;
      try {
        const res = await fetch(hook.url, {
          method: "POST",
          headers: { ...(hook.headers ?? {}), "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        await res.text();
        status = res.status;
      } catch {
        status = 0;
      }
      webhookDeliveries.push({ url: hook.url, status, body });
      return status;
    };
    const first = await attempt();
    if ((first >= 200 && first < 300) || nonRetryable.includes(first)) return;
    const retries = (async () => {
      for (const delay of knobs.webhookRetryDelaysMs) {
        await new Promise<void>((r) => {
          const t = setTimeout(() => {
            retryTimers.delete(t);
            r();
          }, delay);
          retryTimers.add(t);
        });
        if (closed) return;
        const status = await attempt();
        if ((status >= 200 && status < 300) || nonRetryable.includes(status)) return;
      }
    })();
    retrying.add(retries);
    void retries.finally(() => retrying.delete(retries));
  }
  let closed = false;

  /** The codes a close is not reconnected on (`codesToNotReconnect`): 2.3.7 `svc` ~428, 2.4.0-rc2 ~498 (adds 408). */
  const notReconnected = (code: number) => [401, 402, 403, 406].includes(code) || (code === 408 && versionNumber(version) >= versionNumber("2.4.0"));
  /** What `fetchInstances` lists as the instance's `connectionStatus` (its database row). */
  const storedOf = (i: FakeInstance) => i.stored ?? (i.state === "refused" ? "close" : i.state);
  const cancelReconnect = (inst: FakeInstance) => {
    if (inst.reconnectTimer) clearTimeout(inst.reconnectTimer);
    inst.reconnectTimer = undefined;
  };

  /**
   * A close Evolution reconnects (`shouldReconnect`): `stateConnection` becomes `close` (not posted), then
   * `connectToWhatsapp` opens a new socket and Baileys' `connecting` is posted — at once on 2.3.x, 3 s later on 2.4. The
   * database row is not written: it keeps `open`.
   */
  async function silentReconnect(inst: FakeInstance) {
    cancelReconnect(inst);
    inst.stored = storedOf(inst);
    inst.state = "close";
    const connecting = async () => {
      inst.reconnectTimer = undefined;
      if (inst.state !== "close") return;
      inst.state = "connecting";
      await postWebhook(inst, "connection.update", { instance: inst.name, state: "connecting", statusReason: 200 });
    };
    const delay = knobs.reconnectDelayMs ?? (versionNumber(version) >= versionNumber("2.4.0") ? 3000 : 0);
    if (delay <= 0) return connecting();
    inst.reconnectTimer = setTimeout(() => void connecting(), delay);
  }

  async function setState(name: string, state: FakeInstance["state"], statusReason?: number) {
    const inst = instances.get(name);
    if (!inst) throw new Error(`no instance ${name}`);
    const reason = statusReason ?? (state === "open" ? 200 : 401);
    if (state === "close" && !notReconnected(reason) && !opts.reportEveryClose) return silentReconnect(inst);
    cancelReconnect(inst);
    // Baileys' `connecting` writes nothing to the database: a paired session reconnecting stays `open` there.
    inst.stored = state === "connecting" && inst.pairedOnce && storedOf(inst) === "open" ? "open" : undefined;
    inst.state = state;
    if (state === "open") {
      inst.pairingCode = null;
      inst.pairedOnce = true;
    }
    // A close it does not reconnect: its database row keeps the code before any webhook goes out (`svc` ~441–449, 2.3.7).
    if (state === "close" && notReconnected(reason)) {
      inst.disconnection = { code: reason, at: new Date().toISOString(), object: JSON.stringify({ error: { output: { statusCode: reason } } }) };
    }
    if (state === "close" && statusReason !== undefined && notReconnected(statusReason)) await postWebhook(inst, "logout.instance", null);
    await postWebhook(inst, "connection.update", {
      instance: name,
      state,
      statusReason: reason,
      ...(state === "open" ? { wuid: jidOf(inst.owner), profileName: "Loja", profilePictureUrl: null } : {}),
    });
  }

  // ---- groups: participants, invite codes, settings (Baileys' GroupMetadata as Evolution returns it) ----
  const jidOf = (digits: string) => `${digits}@s.whatsapp.net`;
  const inviteAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const newInviteCode = () => Array.from({ length: 22 }, () => inviteAlphabet[Math.floor(Math.random() * inviteAlphabet.length)]).join("");
  /** Everyone in the group; a listed group starts with the owner (superadmin) and two members. */
  const peopleOf = (inst: FakeInstance, g: FakeGroup): FakeParticipant[] =>
    (g.participants ??= [
      { id: jidOf(inst.owner), admin: "superadmin" },
      { id: jidOf(`55219${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`), admin: null },
      { id: `${String(Math.floor(Math.random() * 1e14)).padStart(15, "1")}@lid`, admin: null },
    ]);
  const me = (inst: FakeInstance, g: FakeGroup) =>
    peopleOf(inst, g).find((p) => p.id === jidOf(inst.owner) || p.phoneNumber === jidOf(inst.owner) || p.id === inst.lid);
  /** How WhatsApp names the number in this group: its LID in a LID-addressed group, else its phone JID. */
  const ownIdIn = (inst: FakeInstance, g: FakeGroup) => (g.byLid ? inst.lid : jidOf(inst.owner));
  /**
   * A group as this instance's number can address it: one it lists or made, else one another instance made and
   * this number was added to (WhatsApp's groups are not per number; only participants may read them).
   */
  const groupOf = (inst: FakeInstance, jid: string): FakeGroup | undefined =>
    inst.groups.find((x) => x.id === jid) ??
    [...instances.values()].flatMap((i) => i.groups).find((x) => x.id === jid && x.participants !== undefined && x.creator !== undefined);
  /** The instance that owns the group (its creator). */
  const ownerOf = (inst: FakeInstance, g: FakeGroup) => (g.creator ? (instances.get(g.creator) ?? inst) : inst);
  /** What Evolution's findGroup picks of Baileys' metadata (`svc` ~4411); fetchAllGroups the same without participants. */
  const metadata = (inst: FakeInstance, g: FakeGroup) => ({
    id: g.id,
    subject: g.subject,
    subjectOwner: ownIdIn(ownerOf(inst, g), g),
    subjectTime: g.creation ?? 1714769954,
    pictureUrl: g.pictureUrl ?? null,
    size: peopleOf(inst, g).length,
    creation: g.creation ?? 1714769954,
    owner: ownIdIn(ownerOf(inst, g), g),
    desc: g.desc ?? "",
    descId: g.desc ? randomUUID().slice(0, 16).toUpperCase() : null,
    restrict: g.restrict ?? false,
    announce: g.announce ?? false,
    participants: peopleOf(inst, g),
    isCommunity: g.isCommunity ?? false,
    isCommunityAnnounce: g.isCommunityAnnounce ?? false,
  });
  /**
   * What Evolution posts for a membership change. From 2.3.5 (Baileys 7) `participants` are Baileys'
   * objects `{id, phoneNumber?, lid?, admin}` as the notification carried them, and Evolution's
   * `participantsData` enrichment compares those objects to strings: `jid` is the object itself and
   * `phoneNumber` the string "[object Object]" (whatsapp.baileys.service.ts ~1748–1800, 2.3.7). Before,
   * JID strings, with `participantsData` from the group's list (or the id's digits, not a phone number).
   */
  const participantsWebhook = (inst: FakeInstance, g: FakeGroup, entries: (string | FakeParticipant)[], action: "add" | "remove" | "promote" | "demote") => {
    const objects = entries.map((e): FakeParticipant => (typeof e === "string" ? { id: e, admin: null } : e));
    const baileys7 = versionNumber(version) >= versionNumber("2.3.5");
    return postWebhook(inst, "group-participants.update", {
      id: g.id,
      author: jidOf(inst.owner),
      participants: baileys7 ? objects : objects.map((o) => o.id),
      action,
      participantsData: objects.map((o) => {
        if (baileys7) return { jid: o, phoneNumber: "[object Object]" };
        const p = peopleOf(inst, g).find((x) => x.id === o.id);
        // Evolution falls back to the id's digits when it cannot resolve a LID (not a phone number!).
        return { jid: o.id, phoneNumber: p?.phoneNumber ?? o.id.split("@")[0] };
      }),
    });
  };
  /** Digits as Evolution's createJid turns them into a JID: formatBRNumber drops the ninth digit of 55 + DDD ≥ 31 + 9[7-9]… */
  const participantJid = (p: string) => (p.includes("@") ? p : jidOf(formatBRNumber(p)));

  /** Evolution's `qrCode` getter: the current QR and, while pairing by number, the code WhatsApp gave (null until it did). */
  const qrOf = (inst: FakeInstance, count: number) => ({
    pairingCode: inst.pairingCode ?? null,
    code: `2@${inst.name}-${count}`,
    base64: `data:image/png;base64,QR-${inst.name}-${count}`,
    count,
  });
  let pairingCodes = 0;
  const newPairingCode = () => `WZYE${String(++pairingCodes).padStart(4, "0")}`.slice(-8);

  /**
   * `connectToWhatsapp(number)` from `close`: a new session, connecting. A number asks WhatsApp for a
   * pairing code, which comes `pairingCodeDelayMs` later (`svc` ~377: after the first QR, a 1 s wait and
   * a round trip), in a `qrcode.updated` carrying QR and code, and in later connects' answers.
   */
  async function startSession(inst: FakeInstance, number: string | null) {
    cancelReconnect(inst);
    inst.state = "connecting";
    // Its QR code writes `connecting` to the database (`svc` ~413–416).
    inst.stored = undefined;
    inst.pairingCode = null;
    inst.session = (inst.session ?? 0) + 1;
    const session = inst.session;
    await postWebhook(inst, "connection.update", { instance: inst.name, state: "connecting", statusReason: 200 });
    if (!number) {
      await postWebhook(inst, "qrcode.updated", { qrcode: { instance: inst.name, ...qrOf(inst, 1) } });
      return;
    }
    const give = async () => {
      if (inst.session !== session || inst.state !== "connecting") return;
      inst.pairingCode = newPairingCode();
      await postWebhook(inst, "qrcode.updated", { qrcode: { instance: inst.name, ...qrOf(inst, 1) } });
    };
    if (knobs.pairingCodeDelayMs <= 0) return give();
    const timer = setTimeout(() => {
      pendingCodes.delete(timer);
      void give();
    }, knobs.pairingCodeDelayMs);
    pendingCodes.add(timer);
  }

  /** One listing job: one profile picture per group, in sequence; it runs to the end whoever waits for it. */
  async function listingJob(inst: FakeInstance) {
    counters.fetchAllGroups++;
    counters.groupJobsRunning++;
    try {
      if (knobs.groupsLatencyMs) await sleep(knobs.groupsLatencyMs);
      const out = [];
      for (const g of inst.groups) {
        // A group the number was removed from is no longer among its groups.
        if (g.participants && !me(inst, g)) continue;
        if (knobs.groupDelayMs) await sleep(knobs.groupDelayMs);
        const { participants: _people, ...listed } = metadata(inst, g);
        out.push(listed);
      }
      return out;
    } finally {
      counters.groupJobsRunning--;
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => {
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(payload));
    };
    const url = new URL(req.url ?? "/", base);
    // The welcome route needs no key (index.router.ts); on 2.4 it is also the one route the licence gate lets through.
    if (req.method === "GET" && url.pathname === "/") {
      return send(200, {
        status: 200,
        message: "Welcome to the Evolution API, it is working!",
        version,
        clientName: "evolution_exchange",
        manager: `${base}/manager`,
        documentation: "https://doc.evolution-api.com",
        whatsappWebVersion: "2.3000.1023204200",
      });
    }
    // 2.4: the licence gate answers before any router (src/licensing/runtime.ts gateMiddleware).
    if (versionNumber(version) >= versionNumber("2.4.0") && !activated) {
      return send(503, {
        error: "service not activated",
        code: "LICENSE_REQUIRED",
        register_url: `${base}/manager/login`,
        instance_id: "00000000-0000-4000-8000-000000000000",
        docs_url: "https://docs.evolutionfoundation.com.br",
        message: `This Evolution API instance is not activated. Open ${base}/manager/login to activate, or set AUTHENTICATION_API_KEY in your .env with a valid licensing key.`,
      });
    }
    const [, area, action, rawName] = url.pathname.split("/");
    const name = rawName ? decodeURIComponent(rawName) : "";
    const key = `${req.method} ${area}/${action}`;
    // The instance guard runs before the auth guard: a lost instance is 404 even with a wrong key.
    if (name && !instances.has(name) && key !== "POST instance/create")
      return send(404, errorBody(404, "Not Found", [`The "${name}" instance does not exist`]));
    if (req.headers.apikey !== apiKey) return send(401, errorBody(401, "Unauthorized", ["Unauthorized"]));
    if (knobs.latencyMs) await new Promise((r) => setTimeout(r, knobs.latencyMs));

    if (key === "GET instance/fetchInstances") {
      counters.fetchInstances++;
      const only = knobs.ignoresInstanceFilter ? null : url.searchParams.get("instanceName");
      if (only && !instances.has(only)) return send(404, errorBody(404, "Not Found", [`Instance "${only}" not found`]));
      // The gateway's database rows (monitor.service.ts instanceInfo ~86–130): the stored connectionStatus, which
      // is never `refused` (the QR limit ends in a logout, stored as close), and the latest unreconnected close.
      return send(
        200,
        [...instances.values()]
          .filter((i) => !only || i.name === only)
          .map((i) => ({
            id: randomUUID(),
            name: i.name,
            connectionStatus: storedOf(i),
            ownerJid: i.pairedOnce ? jidOf(i.owner) : null,
            profileName: i.pairedOnce ? "Loja" : null,
            profilePicUrl: null,
            integration: "WHATSAPP-BAILEYS",
            number: null,
            businessId: null,
            token: i.hash,
            clientName: "evolution_exchange",
            ...(knobs.listsDisconnections
              ? {
                  disconnectionReasonCode: i.disconnection?.code ?? null,
                  disconnectionObject: i.disconnection?.object ?? null,
                  disconnectionAt: i.disconnection?.at ?? null,
                }
              : {}),
            Setting: { groupsIgnore: false },
          })),
      );
    }

    if (key === "POST instance/create") {
      const instanceName = body.instanceName;
      if (typeof instanceName !== "string" || !instanceName) return send(400, errorBody(400, "Bad Request", [['instance requires property "instanceName"']]));
      if (instances.has(instanceName)) return send(403, errorBody(403, "Forbidden", [`This name "${instanceName}" is already in use.`]));
      counters.creates++;
      const seed = [...instanceName].reduce((a, c) => (a * 31 + c.charCodeAt(0)) % 100_000_000, 11);
      const inst: FakeInstance = {
        name: instanceName,
        hash: randomUUID().toUpperCase(),
        state: "close",
        groups: groupsFor(instanceName),
        // A Belo Horizonte mobile (DDD 31) as Evolution writes it: without its ninth digit (formatBRNumber).
        owner: `55318${String(seed % 10_000_000).padStart(7, "0")}`,
        lid: `${String(seed).padStart(8, "0")}7${String(seed).padStart(8, "0").slice(0, 6)}@lid`,
      };
      const wh = body.webhook as FakeInstance["webhook"] | undefined;
      if (wh?.url) inst.webhook = wh;
      instances.set(instanceName, inst);
      // `qrcode: true` connects at once (and waits before answering); `number` asks for a pairing code.
      if (body.qrcode || body.number) await startSession(inst, typeof body.number === "string" ? body.number : null);
      const qr = body.qrcode || body.number ? qrOf(inst, 1) : undefined;
      return send(201, {
        instance: {
          instanceName,
          instanceId: randomUUID(),
          integration: body.integration ?? "WHATSAPP-BAILEYS",
          webhookWaBusiness: null,
          accessTokenWaBusiness: "",
          status: "created",
        },
        hash: inst.hash,
        webhook: { webhookUrl: wh?.url, webhookByEvents: false, webhookBase64: false },
        websocket: {},
        rabbitmq: {},
        sqs: {},
        settings: { rejectCall: false, msgCall: "", groupsIgnore: false, alwaysOnline: false, readMessages: false, readStatus: false, syncFullHistory: false },
        qrcode: qr,
      });
    }

    const inst = instances.get(name);
    if (!inst) return send(404, errorBody(404, "Not Found", [`Cannot ${req.method} ${url.pathname}`]));

    switch (key) {
      case "GET instance/connectionState":
        counters.connectionStates++;
        return send(200, { instance: { instanceName: name, state: inst.state } });
      case "GET instance/connect": {
        counters.connects++;
        // instance.controller.ts connectToWhatsapp: errors are caught and answered 200.
        if (knobs.connectError) return send(200, { error: true, message: knobs.connectError });
        if (inst.state === "open") return send(200, { instance: { instanceName: name, state: "open" } });
        // While connecting, `number` is ignored: the current QR code (with the code, once WhatsApp gave it).
        if (inst.state === "connecting") return send(200, qrOf(inst, 2));
        await startSession(inst, url.searchParams.get("number"));
        // instance.controller.ts: `await delay(2000); return instance.qrCode` — whatever is there by then.
        if (knobs.connectDelayMs) await sleep(knobs.connectDelayMs);
        return send(200, qrOf(inst, 1));
      }
      case "POST webhook/set": {
        const wh = body.webhook as FakeInstance["webhook"] | undefined;
        if (!wh?.url) return send(400, errorBody(400, "Bad Request", [['webhook requires property "url"']]));
        inst.webhook = wh;
        return send(201, {
          id: randomUUID(),
          url: wh.url,
          enabled: wh.enabled ?? true,
          events: wh.events ?? [],
          headers: wh.headers ?? {},
          webhookByEvents: false,
          webhookBase64: false,
        });
      }
      case "DELETE instance/logout":
        counters.logouts++;
        if (inst.state === "close") return send(400, errorBody(400, "Bad Request", [`The "${name}" instance is not connected`]));
        await setState(name, "close");
        return send(200, { status: "SUCCESS", error: false, response: { message: "Instance logged out" } });
      case "DELETE instance/delete":
        if (inst.state === "open") return send(400, errorBody(400, "Bad Request", [`The "${name}" instance needs to be disconnected`]));
        instances.delete(name);
        return send(200, { status: "SUCCESS", error: false, response: { message: "Instance deleted" } });
      case "GET group/fetchAllGroups": {
        if (!url.searchParams.has("getParticipants"))
          return send(400, errorBody(400, "Bad Request", ["The getParticipants needs to be informed in the query"]));
        if (inst.state !== "open") return send(400, errorBody(400, "Bad Request", ["Connection Closed"]));
        if (knobs.rateLimitGroups) return send(500, errorBody(500, "Internal Server Error", ["rate-overlimit"]));
        // The job runs to its end even when the client has gone (a time-out cancels nothing).
        const groups = await listingJob(inst);
        if (res.destroyed || req.socket.destroyed) return;
        return send(200, groups);
      }
      case "POST message/sendText":
      case "POST message/sendMedia":
      case "POST message/sendWhatsAppAudio":
      case "POST message/sendPoll": {
        counters.sends++;
        const number = body.number;
        if (typeof number !== "string" || !number) return send(400, errorBody(400, "Bad Request", [['instance requires property "number"']]));
        sendRequests.push({ instance: name, endpoint: action, number, body, at: Date.now() });
        if (action === "sendText" && typeof body.text !== "string") return send(400, errorBody(400, "Bad Request", [['instance requires property "text"']]));
        // Metadata.mentioned (src/validate/message.schema.ts, textMessageSchema / mediaMessageSchema): an array of at least one
        // unique string of digits; Evolution makes each a JID (createJid) for Baileys' contextInfo.mentionedJid.
        if ((action === "sendText" || action === "sendMedia") && body.mentioned !== undefined) {
          const m = body.mentioned;
          if (!Array.isArray(m) || m.length === 0) return send(400, errorBody(400, "Bad Request", [["instance.mentioned does not meet minimum length of 1"]]));
          const bad = m.findIndex((x) => typeof x !== "string" || !/^\d+/.test(x));
          if (bad >= 0) return send(400, errorBody(400, "Bad Request", [[`instance.mentioned[${bad}] does not match pattern "^\\d+"`]]));
          if (new Set(m).size !== m.length) return send(400, errorBody(400, "Bad Request", [["instance.mentioned contains duplicate item"]]));
        }
        if (action === "sendMedia" && (typeof body.media !== "string" || typeof body.mediatype !== "string"))
          return send(400, errorBody(400, "Bad Request", [['instance requires property "media"']]));
        if (action === "sendWhatsAppAudio" && typeof body.audio !== "string")
          return send(400, errorBody(400, "Bad Request", [['instance requires property "audio"']]));
        if (action === "sendPoll") {
          // pollMessageSchema (src/validate/message.schema.ts): name, selectableCount 0–10, 2–10 unique values.
          const values = body.values;
          if (typeof body.name !== "string") return send(400, errorBody(400, "Bad Request", [['instance requires property "name"']]));
          if (!Number.isInteger(body.selectableCount) || (body.selectableCount as number) < 0 || (body.selectableCount as number) > 10)
            return send(400, errorBody(400, "Bad Request", [["instance.selectableCount must be less than or equal to 10"]]));
          if (!Array.isArray(values) || values.length < 2 || values.length > 10 || new Set(values).size !== values.length)
            return send(400, errorBody(400, "Bad Request", [["instance.values does not meet maximum length of 10"]]));
        }
        const media = action === "sendMedia" ? (body.media as string) : action === "sendWhatsAppAudio" ? (body.audio as string) : undefined;
        // class-validator: a URL with a TLD, or base64.
        if (media !== undefined && !/^https?:\/\/[^/\s]+\.[a-z]{2,}(\/|$|\?)/i.test(media) && !/^[A-Za-z0-9+/=]{16,}$/.test(media)) {
          return send(400, errorBody(400, "Bad Request", [["Owned media must be a url or base64"]]));
        }
        if (inst.state !== "open") return send(400, errorBody(400, "Bad Request", [evolutionSendErrors.connectionClosed]));
        // Evolution reads the group's metadata before sending; WhatsApp gives it only to participants, and the
        // NotFoundException('Group not found') it then throws is stringified into this 400 (sendMessageWithTyping).
        if (!friendly && number.endsWith("@g.us")) {
          const target = groupOf(inst, number);
          if (!target || !me(inst, target)) return send(400, errorBody(400, "Bad Request", [evolutionSendErrors.groupMetadata]));
        }
        if (knobs.failSends > 0) {
          knobs.failSends--;
          return send(400, errorBody(400, "Bad Request", [evolutionSendErrors.timedOut]));
        }
        const failure = knobs.sendFailures.find((f) => (f.times ?? 1) > 0 && (!f.number || f.number === number) && (!f.instance || f.instance === name));
        if (failure) {
          failure.times = (failure.times ?? 1) - 1;
          if (failure.times <= 0) knobs.sendFailures.splice(knobs.sendFailures.indexOf(failure), 1);
          const status = failure.status ?? 400;
          return send(status, errorBody(status, status === 400 ? "Bad Request" : "Internal Server Error", [failure.message]));
        }
        // Media: the mimetype comes from fileName only; without it the URL's basename (no extension) is the name.
        let fileName: string | undefined;
        let mimetype: string | undefined;
        if (action === "sendMedia" && !media!.startsWith("data:") && /^https?:/.test(media!)) {
          fileName = typeof body.fileName === "string" && body.fileName ? body.fileName : undefined;
          if (!fileName) {
            const last = new URL(media!).pathname.split("/").pop() ?? "";
            // Evolution cuts the name at the first dot; no dot after the last "/" fails media preparation.
            if (!last.includes("."))
              return send(500, errorBody(500, "Internal Server Error", ["TypeError: Cannot read properties of undefined (reading 'split')"]));
            fileName = last.split(".")[0];
          }
          mimetype = fakeMimetype(typeof body.fileName === "string" ? body.fileName : undefined);
        }
        if (knobs.loseSends > 0) {
          knobs.loseSends--;
          await sleep(knobs.slowSendMs);
          req.socket.destroy();
          return;
        }
        const slow = knobs.slowSends > 0;
        if (slow) knobs.slowSends--;
        const drop = knobs.dropAnswers > 0;
        if (drop) knobs.dropAnswers--;
        const honoured = !knobs.ignoreMessageId && action !== "sendWhatsAppAudio" && typeof body.messageId === "string";
        const honouredFriendly = friendly && typeof body.messageId === "string";
        const id = honoured || honouredFriendly ? (body.messageId as string) : baileysId();
        // The gateway works on (session setup, upload, WhatsApp's acceptance) whether or not the client waits.
        const work = (async () => {
          await sleep(slow ? knobs.slowSendMs : knobs.acceptDelayMs);
          const m: FakeMessage = { instance: name, endpoint: action, id, number, body, timestamp: Math.floor(Date.now() / 1000), mimetype, fileName };
          messages.push(m);
          if (knobs.sendMessageEvents) void postWebhook(inst, "send.message", record(m));
          return m;
        })();
        working.add(work);
        void work.finally(() => working.delete(work));
        const m = await work;
        if (drop || res.destroyed || req.socket.destroyed) {
          req.socket.destroy();
          return;
        }
        return send(201, record(m));
      }
      case "POST group/create": {
        const subject = body.subject;
        const participants = body.participants;
        if (typeof subject !== "string" || !subject) return send(400, errorBody(400, "Bad Request", [['instance requires property "subject"']]));
        if (!Array.isArray(participants) || participants.length === 0)
          return send(400, errorBody(400, "Bad Request", [["instance.participants does not meet minimum length of 1"]]));
        if (participants.some((p) => typeof p !== "string" || p.length < 10 || !/\d+/.test(p)))
          return send(400, errorBody(400, "Bad Request", [['"participants" must be an array of numeric strings']]));
        // Every failure inside Evolution's createGroup is this 500, whether WhatsApp made the group or not.
        createRequests.push({ instance: name, subject, at: Date.now() });
        const failed = (message: string) => send(500, errorBody(500, "Internal Server Error", ["Error creating group", message]));
        if (inst.state !== "open") return failed("Error: Connection Closed");
        const failure = knobs.createFailures.find((f) => (f.times ?? 1) > 0);
        if (failure) {
          failure.times = (failure.times ?? 1) - 1;
          if (failure.times <= 0) knobs.createFailures.splice(knobs.createFailures.indexOf(failure), 1);
        }
        const lose = knobs.loseCreateAnswers > 0;
        if (lose) knobs.loseCreateAnswers--;
        // WhatsApp works on it whether or not the client still waits.
        await sleep(knobs.createDelayMs);
        if (failure && !failure.after) return failed(failure.message);
        const g: FakeGroup = {
          id: `120363${String(Math.floor(Math.random() * 1e12)).padStart(12, "0")}@g.us`,
          subject,
          announce: false,
          // A failure after groupCreate comes at the description, the promotion or the metadata read: neither is done then.
          desc: typeof body.description === "string" && !failure ? body.description : "",
          creation: Math.floor(Date.now() / 1000),
          byLid: knobs.lidGroups,
          creator: name,
          participants: [
            // A LID-addressed group lists the number by its LID only (no phoneNumber beside it).
            { id: knobs.lidGroups ? inst.lid : jidOf(inst.owner), admin: "superadmin" },
            // Evolution's WhatsApp check drops the numbers WhatsApp does not know; WhatsApp leaves out those it refuses to add.
            ...[...new Set((participants as string[]).map((p) => p.replace(/\D/g, "")))]
              .filter((p) => !knobs.notOnWhatsApp.includes(p) && !knobs.refuseAdds[p])
              .map((p): FakeParticipant => ({ id: participantJid(p), admin: body.promoteParticipants && !failure ? "admin" : null })),
          ],
        };
        inst.groups.push(g);
        if (failure) return failed(failure.message);
        if (lose || res.destroyed || req.socket.destroyed) {
          req.socket.destroy();
          return;
        }
        // Baileys' groupMetadata as it is (Evolution answers it raw): the addressing mode and the creator's phone beside its LID.
        const { pictureUrl: _picture, ...answer } = metadata(inst, g);
        return send(201, { ...answer, addressingMode: g.byLid ? "lid" : "pn", ownerPn: jidOf(inst.owner), subjectOwnerPn: jidOf(inst.owner) });
      }
      case "POST group/updateGroupPicture":
      case "POST group/updateGroupSubject":
      case "POST group/updateGroupDescription":
      case "POST group/updateSetting":
      case "POST group/updateParticipant":
      case "POST group/revokeInviteCode":
      case "GET group/inviteCode":
      case "GET group/findGroupInfos":
      case "GET group/participants": {
        let groupJid = (typeof body.groupJid === "string" && body.groupJid) || url.searchParams.get("groupJid");
        if (!groupJid) return send(400, errorBody(400, "Bad Request", ["The group id needs to be informed in the query", 'ex: "groupJid=120362@g.us"']));
        if (!groupJid.endsWith("@g.us")) groupJid += "@g.us";
        const g = groupOf(inst, groupJid);
        const mine = g ? me(inst, g) : undefined;
        // What Baileys throws, as Evolution wraps it for each route.
        const failure = inst.state !== "open" ? "Error: Connection Closed" : !g ? "Error: item-not-found" : !mine ? "Error: forbidden" : null;
        const notAdmin = !mine?.admin ? "Error: not-authorized" : null;
        switch (action) {
          case "findGroupInfos":
            if (failure) return send(404, errorBody(404, "Not Found", ["Error fetching group", failure]));
            return send(200, metadata(inst, g!));
          case "participants":
            if (failure) return send(404, errorBody(404, "Not Found", ["No participants", failure]));
            return send(200, { participants: peopleOf(inst, g!).map((p) => ({ ...p, name: null, imgUrl: null })) });
          case "inviteCode": {
            if (failure || notAdmin) return send(404, errorBody(404, "Not Found", ["No invite code", failure ?? notAdmin]));
            g!.inviteCode ??= newInviteCode();
            return send(200, { inviteUrl: `https://chat.whatsapp.com/${g!.inviteCode}`, inviteCode: g!.inviteCode });
          }
          case "revokeInviteCode":
            if (failure || notAdmin) return send(404, errorBody(404, "Not Found", ["Revoke error", failure ?? notAdmin]));
            g!.inviteCode = newInviteCode();
            return send(201, { revoked: true, inviteCode: g!.inviteCode });
          case "updateGroupPicture": {
            const image = body.image;
            if (typeof image !== "string" || !image) return send(400, errorBody(400, "Bad Request", [['instance requires property "image"']]));
            if (failure || notAdmin) return send(500, errorBody(500, "Internal Server Error", ["Error update group picture", failure ?? notAdmin]));
            if (!/^https?:\/\/[^/\s]+\.[a-z]{2,}/i.test(image) && !/^[A-Za-z0-9+/=]{16,}$/.test(image))
              return send(
                500,
                errorBody(500, "Internal Server Error", ["Error update group picture", 'BadRequestException: "profilePicture" must be a url or a base64']),
              );
            const throttled = settingThrottle();
            if (throttled) return send(500, errorBody(500, "Internal Server Error", ["Error update group picture", throttled]));
            g!.pictureUrl = image;
            groupChanges.push({ instance: inst.name, groupJid: g!.id, route: action, body: { image: image.slice(0, 64) } });
            return send(201, { update: "success" });
          }
          // ---- group settings (group actions): svc 4187–4243 and 4402–4423, group.router.ts; docs/evolution.md#group-settings-group-actions ----
          case "updateGroupSubject": {
            if (typeof body.subject !== "string" || !body.subject) return send(400, errorBody(400, "Bad Request", [['instance requires property "subject"']]));
            const refused = failure ?? notAdmin ?? settingThrottle();
            if (refused) return send(500, errorBody(500, "Internal Server Error", ["Error updating group subject", refused]));
            g!.subject = body.subject;
            groupChanges.push({ instance: inst.name, groupJid: g!.id, route: action, body });
            return send(201, { update: "success" });
          }
          case "updateGroupDescription": {
            const refused = failure ?? notAdmin ?? settingThrottle();
            if (refused) return send(500, errorBody(500, "Internal Server Error", ["Error updating group description", refused]));
            g!.desc = String(body.description ?? "");
            groupChanges.push({ instance: inst.name, groupJid: g!.id, route: action, body });
            return send(201, { update: "success" });
          }
          case "updateSetting": {
            const setting = body.action;
            if (!["announcement", "not_announcement", "locked", "unlocked"].includes(String(setting)))
              return send(400, errorBody(400, "Bad Request", [["instance.action is not one of enum values: announcement,not_announcement,locked,unlocked"]]));
            const refused = failure ?? notAdmin ?? settingThrottle();
            if (refused) return send(400, errorBody(400, "Bad Request", ["Error updating setting", refused]));
            if (setting === "announcement" || setting === "not_announcement") g!.announce = setting === "announcement";
            else g!.restrict = setting === "locked";
            groupChanges.push({ instance: inst.name, groupJid: g!.id, route: action, body });
            // Baileys' groupSettingUpdate resolves to nothing: Evolution answers { updateSetting: undefined }, i.e. {}.
            return send(201, {});
          }
          case "updateParticipant": {
            const op = String(body.action);
            const list = body.participants;
            if (!["add", "remove", "promote", "demote"].includes(op))
              return send(400, errorBody(400, "Bad Request", [["instance.action is not one of enum values: add,remove,promote,demote"]]));
            if (!Array.isArray(list) || list.length === 0) return send(400, errorBody(400, "Bad Request", [['instance requires property "participants"']]));
            if (failure || notAdmin) return send(400, errorBody(400, "Bad Request", ["Error updating participants", failure ?? notAdmin]));
            participantUpdates.push({ instance: name, group: g!.id, action: op, participants: (list as unknown[]).map(String) });
            const people = peopleOf(inst, g!);
            const changed: string[] = [];
            const updateParticipants = (list as string[]).map((p) => {
              const jid = participantJid(String(p));
              const at = people.findIndex((x) => x.id === jid || x.phoneNumber === jid);
              const refusal = (status: string) => ({ status, jid, content: { tag: "participant", attrs: { error: status, jid } } });
              const digits = jid.split("@")[0];
              if (op === "add") {
                if (at >= 0) return refusal("409");
                if (knobs.notOnWhatsApp.includes(digits)) return refusal("404");
                if (knobs.refuseAdds[digits]) return refusal(knobs.refuseAdds[digits]);
                people.push({ id: jid, admin: null });
              } else {
                if (at < 0) return { status: "404", jid, content: { tag: "participant", attrs: { error: "404", jid } } };
                if (op === "remove") people.splice(at, 1);
                else people[at].admin = op === "promote" ? "admin" : null;
              }
              changed.push(jid);
              return { status: "200", jid, content: { tag: "participant", attrs: { jid } } };
            });
            if (changed.length) groupChanges.push({ instance: inst.name, groupJid: g!.id, route: action, body });
            if (changed.length) await participantsWebhook(inst, g!, changed, op as "add");
            return send(201, { updateParticipants });
          }
        }
        break;
      }
      case "DELETE chat/deleteMessageForEveryone": {
        // 2.3.7 chat.schema.ts deleteMessageSchema: id, fromMe, remoteJid required; id, remoteJid, participant not empty.
        const missing = ["id", "fromMe", "remoteJid"].filter((k) => body[k] === undefined);
        if (missing.length) return send(400, errorBody(400, "Bad Request", [missing.map((k) => `instance requires property "${k}"`)]));
        if (typeof body.fromMe !== "boolean") return send(400, errorBody(400, "Bad Request", [["instance.fromMe is not one of enum values: true,false"]]));
        deleteRequests.push({ instance: name, body });
        // svc deleteMessage: sendMessage(remoteJid, {delete: key}); any throw becomes a 500.
        if (inst.state !== "open")
          return send(500, errorBody(500, "Internal Server Error", ["Error while deleting message for everyone", "Error: Connection Closed"]));
        const remoteJid = String(body.remoteJid);
        const g = groupOf(inst, remoteJid);
        const post = groupPosts.find((x) => x.id === body.id && x.groupJid === remoteJid);
        // WhatsApp takes a revoke of someone else's message only from an admin; Baileys gets no refusal back.
        if (g && post && me(inst, g)?.admin && post.participant === body.participant) post.deleted = true;
        const at = Math.floor(Date.now() / 1000);
        return send(201, {
          key: { remoteJid, fromMe: true, id: baileysId() },
          message: { protocolMessage: { key: { remoteJid, fromMe: false, id: body.id, participant: body.participant }, type: "REVOKE" } },
          messageTimestamp: String(at),
          status: "PENDING",
        });
      }
      case "POST chat/findMessages": {
        counters.findMessages++;
        const where = (body.where as { key?: { id?: string; remoteJid?: string; fromMe?: boolean } })?.key ?? {};
        const found = messages
          .filter((m) => m.instance === name && (!where.id || m.id === where.id) && (!where.remoteJid || m.number === where.remoteJid))
          .sort((a, b) => b.timestamp - a.timestamp);
        const offset = Math.max(1, Number(body.offset) || 50);
        const page = Math.max(1, Number(body.page) || 1);
        const records = found.slice((page - 1) * offset, page * offset).map((m) => ({ id: randomUUID(), ...record(m), MessageUpdate: [] }));
        return send(200, { messages: { total: found.length, pages: Math.ceil(found.length / offset), currentPage: page, records } });
      }
    }
    return send(404, errorBody(404, "Not Found", [`Cannot ${req.method} ${url.pathname}`]));
  };

  const groupJoin: FakeEvolution["groupJoin"] = async (name, groupId, participants, options = {}) => {
    const inst = instances.get(name)!;
    const g = inst.groups.find((x) => x.id === groupId)!;
    const entries = participants.map(participantJid).map((id): FakeParticipant => {
      const phone = options.resolveLids?.[id];
      return { id, admin: null, ...(phone ? { phoneNumber: participantJid(phone) } : {}) };
    });
    peopleOf(inst, g).push(...entries);
    await participantsWebhook(inst, g, options.listOnly ? entries.map((e) => ({ id: e.id, admin: null })) : entries, "add");
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      return res.end(JSON.stringify(errorBody(400, "Bad Request", ["Unexpected token in JSON"])));
    }
    try {
      await handle(req, res, body);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody(500, "Internal Server Error", [String(err)])));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  const stopListening = () =>
    new Promise<void>((r) => {
      server.closeAllConnections?.();
      if (!server.listening) return r();
      server.close(() => r());
    });

  return {
    url: base,
    apiKey,
    instances,
    messages,
    sendRequests,
    participantUpdates,
    createRequests,
    groupChanges,
    groupPosts,
    deleteRequests,
    get version() {
      return version;
    },
    mode,
    webhookDeliveries,
    counters,
    knobs,
    get droppedGroupReceipts() {
      return dropped;
    },
    failSend: (failure) => void knobs.sendFailures.push({ times: 1, ...failure }),
    failCreate: (failure) => void knobs.createFailures.push({ times: 1, ...failure }),
    groupsNamed: (name, subject) => instances.get(name)?.groups.filter((g) => g.subject === subject) ?? [],
    activate: () => {
      activated = true;
    },
    upgrade(to) {
      version = to;
      knobs.ignoreMessageId = !friendly && versionNumber(to) < versionNumber("2.4.0");
    },
    group: (name, groupId) => {
      const inst = instances.get(name);
      return inst ? groupOf(inst, groupId) : undefined;
    },
    groupJoin,
    async groupAdmin(name, groupId, participants, action) {
      const inst = instances.get(name)!;
      const g = inst.groups.find((x) => x.id === groupId)!;
      const ids = participants.map(participantJid);
      const changed = peopleOf(inst, g).filter((p) => ids.includes(p.id) || (p.phoneNumber !== undefined && ids.includes(p.phoneNumber)));
      for (const p of changed) p.admin = action === "promote" ? "admin" : null;
      await participantsWebhook(inst, g, changed, action);
    },
    async groupLeave(name, groupId, participants, options = {}) {
      const inst = instances.get(name)!;
      const g = inst.groups.find((x) => x.id === groupId)!;
      const entries = participants.map((p): FakeParticipant => {
        const id = participantJid(p);
        const lid = options.lids?.[p] ?? options.lids?.[id.split("@")[0]] ?? options.lids?.[id];
        return { id, admin: null, ...(lid ? { lid } : {}) };
      });
      // Resolved before they are gone (Evolution asks the group for participantsData after the change; here, before).
      const post = participantsWebhook(inst, g, entries, "remove");
      const gone = (p: FakeParticipant) => entries.some((e) => [e.id, e.lid].includes(p.id) || p.phoneNumber === e.id || (p.lid && p.lid === e.id));
      g.participants = peopleOf(inst, g).filter((p) => !gone(p));
      await post;
    },
    async requestJoin(name, groupId, participants) {
      const inst = instances.get(name)!;
      const g = inst.groups.find((x) => x.id === groupId)!;
      if (!g.joinApproval) return groupJoin(name, groupId, participants);
      g.pendingRequests = [...new Set([...(g.pendingRequests ?? []), ...participants.map(participantJid)])];
    },
    async approveJoin(name, groupId, participants) {
      const inst = instances.get(name)!;
      const g = inst.groups.find((x) => x.id === groupId)!;
      const ids = participants.map(participantJid).filter((id) => g.pendingRequests?.includes(id));
      g.pendingRequests = (g.pendingRequests ?? []).filter((id) => !ids.includes(id));
      if (ids.length === 0) return;
      const entries = ids.map((id): FakeParticipant => ({ id, admin: null }));
      peopleOf(inst, g).push(...entries);
      await participantsWebhook(inst, g, entries, "add");
    },
    webhooksSettled: async () => {
      while (retrying.size) await Promise.all([...retrying]);
    },
    revokeInvite(name, groupId) {
      const g = instances.get(name)!.groups.find((x) => x.id === groupId)!;
      g.inviteCode = newInviteCode();
    },
    loseGroup(name, groupId, how) {
      const inst = instances.get(name)!;
      const g = groupOf(inst, groupId)!;
      if (how === "gone") g.participants = peopleOf(inst, g).filter((p) => p !== me(inst, g));
      else me(inst, g)!.admin = null;
    },
    idle: async () => {
      while (working.size) await Promise.all([...working]);
    },
    pair: (name) => setState(name, "open"),
    setState,
    holdWebhooks(name: string) {
      if (!heldWebhooks.has(name)) heldWebhooks.set(name, []);
    },
    async releaseWebhooks(name: string) {
      const held = heldWebhooks.get(name) ?? [];
      heldWebhooks.delete(name);
      const inst = instances.get(name);
      if (inst) for (const { event, data } of held) await postWebhook(inst, event, data);
    },
    loseInstance: (name) => {
      const inst = instances.get(name);
      if (inst) cancelReconnect(inst);
      instances.delete(name);
    },
    get droppedPollVotes() {
      return droppedVotes;
    },
    async pollVote(messageId, voter, selected) {
      const m = messages.find((x) => x.id === messageId && x.endpoint === "sendPoll");
      if (!m) throw new Error(`no poll ${messageId}`);
      if (versionNumber(version) < versionNumber("2.3.7")) {
        droppedVotes++;
        return;
      }
      const inst = instances.get(m.instance)!;
      const lid = `${[...voter].reverse().join("")}77@lid`;
      await postWebhook(inst, "messages.upsert", {
        key: { remoteJid: m.number, fromMe: false, id: baileysId(), participant: lid, participantAlt: `${voter}@s.whatsapp.net` },
        pushName: "Votante",
        message: {
          pollUpdateMessage: {
            pollCreationMessageKey: { remoteJid: m.number, fromMe: true, id: messageId },
            vote: { encPayload: "ZW5j", encIv: "aXY=", selectedOptions: selected },
            senderTimestampMs: Date.now(),
          },
        },
        pollUpdates: (m.body.values as string[]).map((name) => ({ name, voters: selected.includes(name) ? [lid] : [] })),
        messageType: "pollUpdateMessage",
        messageTimestamp: Math.floor(Date.now() / 1000),
        instanceId: randomUUID(),
        source: "android",
      });
    },
    async groupPost(name, groupId, from, text, options = {}) {
      const inst = instances.get(name)!;
      const id = options.id ?? baileysId();
      const phone = participantJid(from);
      const participant = options.lid ?? phone;
      if (!groupPosts.some((x) => x.id === id)) groupPosts.push({ id, instance: name, groupJid: groupId, participant, text, deleted: false });
      await postWebhook(inst, "messages.upsert", {
        key: { remoteJid: groupId, fromMe: false, id, participant, ...(options.lid ? { participantAlt: phone } : {}) },
        pushName: "Membro",
        status: "DELIVERY_ACK",
        message: { conversation: text, messageContextInfo: { deviceListMetadataVersion: 2 } },
        contextInfo: null,
        messageType: "conversation",
        messageTimestamp: Math.floor(Date.now() / 1000),
        instanceId: randomUUID(),
        source: "android",
      });
      return id;
    },
    async receipt(messageId, status) {
      const m = messages.find((x) => x.id === messageId);
      if (!m) throw new Error(`no message ${messageId}`);
      // Baileys reports group receipts as message-receipt.update, which Evolution does not forward (PR #2674).
      if (m.number.endsWith("@g.us")) {
        dropped++;
        return;
      }
      const inst = instances.get(m.instance)!;
      await postWebhook(inst, "messages.update", {
        messageId: randomUUID(),
        keyId: messageId,
        remoteJid: m.number,
        fromMe: true,
        participant: m.number,
        status,
        instanceId: randomUUID(),
      });
    },
    stop: stopListening,
    start: () => new Promise<void>((r) => server.listen(port, "127.0.0.1", r)),
    close: () => {
      knobs.slowSendMs = 0;
      for (const i of instances.values()) cancelReconnect(i);
      for (const t of pendingCodes) clearTimeout(t);
      pendingCodes.clear();
      closed = true;
      for (const t of retryTimers) clearTimeout(t);
      retryTimers.clear();
      return stopListening();
    },
  };
}
