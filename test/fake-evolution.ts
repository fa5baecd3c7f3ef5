import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for an Evolution API v2 server (node:http on 127.0.0.1) following its documented
 * requests and answers: the `apikey` header, instance/create|connect|connectionState|logout|delete,
 * webhook/set, group/fetchAllGroups?getParticipants=, message/sendText|sendMedia|sendWhatsAppAudio,
 * chat/findMessages, Evolution's error body `{status, error, response: {message: [...]}}`, and the
 * webhooks it posts (`{event, instance, data, date_time, …}`).
 *
 * Sending behaves as Evolution really does (../shared/EVOLUTION-FACTS.md, docs/evolution.md) unless a
 * test opts into `mode: "friendly"`: `messageId` is ignored up to 2.3.7 (ids are Baileys' own `3EB0…`;
 * `version: "2.4.0"` honours it for text and media, never for audio); a message is stored (and seen by
 * findMessages, and announced by a `send.message` event) only once WhatsApp accepted it, after
 * `acceptDelayMs`; the HTTP answer can come late or never although the message went out; send failures
 * are HTTP 400 with Evolution's texts; a media preparation failure is 500 (not sent); no 429 anywhere.
 */
export interface FakeInstance {
  name: string;
  hash: string;
  state: "open" | "connecting" | "close";
  webhook?: { url: string; events?: string[]; enabled?: boolean };
  groups: { id: string; subject: string }[];
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
  message: string;
  status?: number;
  /** How many sends it fails (default 1). */
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
  /** Every send POST the gateway received (whatever became of it). */
  sendRequests: { endpoint: string; number: string; body: Record<string, unknown>; at: number }[];
  version: string;
  mode: "default" | "friendly";
  webhookDeliveries: { url: string; status: number; body: unknown }[];
  counters: { fetchAllGroups: number; sends: number; findMessages: number };
  knobs: {
    latencyMs: number;
    groupsLatencyMs: number;
    /** The next N sends answer 400 `Error: Timed Out` without sending. */
    failSends: number;
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
    /** fetchAllGroups answers 500 rate-overlimit while true. */
    rateLimitGroups: boolean;
    /** Ignore the `messageId` option: ids are Baileys' own. Default true below 2.4.0 (false in friendly mode). */
    ignoreMessageId: boolean;
  };
  /** Makes the next send(s) (to one group, or any) fail with this text; HTTP 400 unless `status`. */
  failSend(failure: FakeSendFailure): void;
  /** Resolves when no send is still being worked on. */
  idle(): Promise<void>;
  pair(name: string): Promise<void>;
  setState(name: string, state: FakeInstance["state"]): Promise<void>;
  receipt(messageId: string, status: "SERVER_ACK" | "DELIVERY_ACK" | "READ" | "PLAYED"): Promise<void>;
  close(): Promise<void>;
}

const errorBody = (status: number, error: string, message: unknown[]) => ({ status, error, response: { message } });

export interface FakeEvolutionOptions {
  apiKey?: string;
  groupsPerInstance?: number;
  /** The gateway's version (`GET /`): "2.3.7" (default) ignores `messageId`; "2.4.0" honours it for text and media. */
  version?: string;
  /**
   * "default" behaves as Evolution does; "friendly" is the old, kinder double (honours `messageId` on
   * every route, stores at once): only for unit tests that need it.
   */
  mode?: "default" | "friendly";
}

/** a.b.c → comparable number. */
const versionNumber = (v: string) => v.split(/[.-]/).slice(0, 3).reduce((n, part) => n * 1000 + (Number.parseInt(part, 10) || 0), 0);

/** Evolution's mimetype comes from `fileName` only (mime-types lookup); unknown → the string "false". */
const mimeByExtension: Record<string, string> = {
  pdf: "application/pdf", jpg: "image/jpeg", jpeg: "image/jpeg", png: "image/png", webp: "image/webp", gif: "image/gif",
  mp4: "video/mp4", "3gp": "video/3gpp", mov: "video/quicktime", ogg: "audio/ogg", mp3: "audio/mpeg", m4a: "audio/mp4",
  doc: "application/msword", docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xls: "application/vnd.ms-excel", xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  zip: "application/zip", txt: "text/plain", csv: "text/csv",
};
export const fakeMimetype = (fileName: string | undefined) => {
  const ext = fileName && fileName.includes(".") ? fileName.split(".").pop()!.toLowerCase() : "";
  return mimeByExtension[ext] ?? "false";
};

export async function startFakeEvolution(opts: FakeEvolutionOptions = {}): Promise<FakeEvolution> {
  const apiKey = opts.apiKey ?? "fake-global-key";
  const version = opts.version ?? "2.3.7";
  const mode = opts.mode ?? "default";
  const friendly = mode === "friendly";
  const instances = new Map<string, FakeInstance>();
  const messages: FakeMessage[] = [];
  const sendRequests: FakeEvolution["sendRequests"] = [];
  const webhookDeliveries: FakeEvolution["webhookDeliveries"] = [];
  const counters = { fetchAllGroups: 0, sends: 0, findMessages: 0 };
  const knobs: FakeEvolution["knobs"] = {
    latencyMs: 0,
    groupsLatencyMs: 0,
    failSends: 0,
    sendFailures: [],
    dropAnswers: 0,
    loseSends: 0,
    slowSends: 0,
    slowSendMs: 3000,
    acceptDelayMs: friendly ? 0 : 30,
    sendMessageEvents: true,
    rateLimitGroups: false,
    ignoreMessageId: !friendly && versionNumber(version) < versionNumber("2.4.0"),
  };
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

  const groupsFor = (name: string) => {
    const seed = [...name].reduce((a, c) => (a * 31 + c.charCodeAt(0)) % 1_000_000_007, 7);
    return Array.from({ length: opts.groupsPerInstance ?? 5 }, (_, i) => ({
      id: `120363${String(seed).padStart(10, "0")}${String(i + 1).padStart(2, "0")}@g.us`,
      subject: `Grupo Evo ${String(i + 1).padStart(2, "0")}`,
    }));
  };

  async function postWebhook(inst: FakeInstance, event: string, data: unknown) {
    if (!inst.webhook?.url || inst.webhook.enabled === false) return;
    const eventConst = event.toUpperCase().replaceAll(".", "_");
    if (inst.webhook.events?.length && !inst.webhook.events.includes(eventConst)) return;
    const body = { event, instance: inst.name, data, destination: inst.webhook.url, date_time: new Date().toISOString(), sender: "5511999990000@s.whatsapp.net", server_url: base, apikey: inst.hash };
    try {
      const res = await fetch(inst.webhook.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      await res.text();
      webhookDeliveries.push({ url: inst.webhook.url, status: res.status, body });
    } catch {
      webhookDeliveries.push({ url: inst.webhook.url, status: 0, body });
    }
  }

  async function setState(name: string, state: FakeInstance["state"]) {
    const inst = instances.get(name);
    if (!inst) throw new Error(`no instance ${name}`);
    inst.state = state;
    await postWebhook(inst, "connection.update", { instance: name, state, statusReason: state === "open" ? 200 : 401 });
  }

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) => {
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(payload));
    };
    const url = new URL(req.url ?? "/", base);
    if (req.method === "GET" && url.pathname === "/") {
      return send(200, { status: 200, message: "Welcome to the Evolution API, it is working!", version, clientName: "evolution_exchange", manager: `${base}/manager`, documentation: "https://doc.evolution-api.com" });
    }
    if (req.headers.apikey !== apiKey) return send(401, errorBody(401, "Unauthorized", ["Unauthorized"]));
    if (knobs.latencyMs) await new Promise((r) => setTimeout(r, knobs.latencyMs));
    const [, area, action, rawName] = url.pathname.split("/");
    const name = rawName ? decodeURIComponent(rawName) : "";
    const key = `${req.method} ${area}/${action}`;

    if (key === "POST instance/create") {
      const instanceName = body.instanceName;
      if (typeof instanceName !== "string" || !instanceName) return send(400, errorBody(400, "Bad Request", [['instance requires property "instanceName"']]));
      if (instances.has(instanceName)) return send(403, errorBody(403, "Forbidden", [`This name "${instanceName}" is already in use.`]));
      const inst: FakeInstance = { name: instanceName, hash: randomUUID().toUpperCase(), state: "connecting", groups: groupsFor(instanceName) };
      const wh = body.webhook as FakeInstance["webhook"] | undefined;
      if (wh?.url) inst.webhook = wh;
      instances.set(instanceName, inst);
      return send(201, {
        instance: { instanceName, instanceId: randomUUID(), integration: body.integration ?? "WHATSAPP-BAILEYS", webhookWaBusiness: null, accessTokenWaBusiness: "", status: "created" },
        hash: inst.hash,
        webhook: { webhookUrl: wh?.url, webhookByEvents: false, webhookBase64: false },
        websocket: {},
        rabbitmq: {},
        sqs: {},
        settings: { rejectCall: false, msgCall: "", groupsIgnore: false, alwaysOnline: false, readMessages: false, readStatus: false, syncFullHistory: false },
        qrcode: body.qrcode ? { pairingCode: null, code: `2@${instanceName}`, base64: `data:image/png;base64,QR-${instanceName}`, count: 1 } : undefined,
      });
    }

    const inst = instances.get(name);
    if (!inst) return send(404, errorBody(404, "Not Found", [`The "${name}" instance does not exist`]));

    switch (key) {
      case "GET instance/connectionState":
        return send(200, { instance: { instanceName: name, state: inst.state } });
      case "GET instance/connect": {
        if (inst.state === "open") return send(200, { instance: { instanceName: name, state: "open" } });
        const number = url.searchParams.get("number");
        inst.state = "connecting";
        return send(200, { pairingCode: number ? "WZYEH1YY" : null, code: `2@${name}`, base64: `data:image/png;base64,QR-${name}`, count: 2 });
      }
      case "POST webhook/set": {
        const wh = body.webhook as FakeInstance["webhook"] | undefined;
        if (!wh?.url) return send(400, errorBody(400, "Bad Request", [['webhook requires property "url"']]));
        inst.webhook = wh;
        return send(201, { id: randomUUID(), url: wh.url, enabled: wh.enabled ?? true, events: wh.events ?? [], webhookByEvents: false, webhookBase64: false });
      }
      case "DELETE instance/logout":
        if (inst.state === "close") return send(400, errorBody(400, "Bad Request", [`The "${name}" instance is not connected`]));
        await setState(name, "close");
        return send(200, { status: "SUCCESS", error: false, response: { message: "Instance logged out" } });
      case "DELETE instance/delete":
        if (inst.state === "open") return send(400, errorBody(400, "Bad Request", [`The "${name}" instance needs to be disconnected`]));
        instances.delete(name);
        return send(200, { status: "SUCCESS", error: false, response: { message: "Instance deleted" } });
      case "GET group/fetchAllGroups": {
        counters.fetchAllGroups++;
        if (!url.searchParams.has("getParticipants")) return send(400, errorBody(400, "Bad Request", ["The getParticipants needs to be informed in the query"]));
        if (knobs.rateLimitGroups) return send(500, errorBody(500, "Internal Server Error", ["rate-overlimit"]));
        if (knobs.groupsLatencyMs) await new Promise((r) => setTimeout(r, knobs.groupsLatencyMs));
        if (inst.state !== "open") return send(400, errorBody(400, "Bad Request", ["Connection Closed"]));
        return send(200, inst.groups.map((g) => ({ ...g, subjectOwner: "5511999990000@s.whatsapp.net", subjectTime: 1714769954, pictureUrl: null, size: 3, creation: 1714769954, owner: "5511999990000@s.whatsapp.net", desc: "", restrict: false, announce: false })));
      }
      case "POST message/sendText":
      case "POST message/sendMedia":
      case "POST message/sendWhatsAppAudio": {
        counters.sends++;
        const number = body.number;
        if (typeof number !== "string" || !number) return send(400, errorBody(400, "Bad Request", [['instance requires property "number"']]));
        sendRequests.push({ endpoint: action, number, body, at: Date.now() });
        if (action === "sendText" && typeof body.text !== "string") return send(400, errorBody(400, "Bad Request", [['instance requires property "text"']]));
        if (action === "sendMedia" && (typeof body.media !== "string" || typeof body.mediatype !== "string")) return send(400, errorBody(400, "Bad Request", [['instance requires property "media"']]));
        if (action === "sendWhatsAppAudio" && typeof body.audio !== "string") return send(400, errorBody(400, "Bad Request", [['instance requires property "audio"']]));
        const media = action === "sendMedia" ? (body.media as string) : action === "sendWhatsAppAudio" ? (body.audio as string) : undefined;
        // class-validator: a URL with a TLD, or base64.
        if (media !== undefined && !/^https?:\/\/[^/\s]+\.[a-z]{2,}(\/|$|\?)/i.test(media) && !/^[A-Za-z0-9+/=]{16,}$/.test(media)) {
          return send(400, errorBody(400, "Bad Request", [["Owned media must be a url or base64"]]));
        }
        if (inst.state !== "open") return send(400, errorBody(400, "Bad Request", [evolutionSendErrors.connectionClosed]));
        if (knobs.failSends > 0) {
          knobs.failSends--;
          return send(400, errorBody(400, "Bad Request", [evolutionSendErrors.timedOut]));
        }
        const failure = knobs.sendFailures.find((f) => (f.times ?? 1) > 0 && (!f.number || f.number === number));
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
            if (!last.includes(".")) return send(500, errorBody(500, "Internal Server Error", ["TypeError: Cannot read properties of undefined (reading 'split')"]));
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
      case "POST chat/findMessages": {
        counters.findMessages++;
        const where = ((body.where as { key?: { id?: string; remoteJid?: string; fromMe?: boolean } }) ?? {}).key ?? {};
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
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    apiKey,
    instances,
    messages,
    sendRequests,
    version,
    mode,
    webhookDeliveries,
    counters,
    knobs,
    failSend: (failure) => void knobs.sendFailures.push({ times: 1, ...failure }),
    idle: async () => {
      while (working.size) await Promise.all([...working]);
    },
    pair: (name) => setState(name, "open"),
    setState,
    async receipt(messageId, status) {
      const m = messages.find((x) => x.id === messageId);
      if (!m) throw new Error(`no message ${messageId}`);
      const inst = instances.get(m.instance)!;
      await postWebhook(inst, "messages.update", { messageId: randomUUID(), keyId: messageId, remoteJid: m.number, fromMe: true, participant: m.number, status, instanceId: randomUUID() });
    },
    close: () =>
      new Promise<void>((r) => {
        knobs.slowSendMs = 0;
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
