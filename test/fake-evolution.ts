import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local stand-in for an Evolution API v2 server (node:http on 127.0.0.1) following its documented
 * requests and answers: the `apikey` header, instance/create|connect|connectionState|logout|delete,
 * webhook/set, group/fetchAllGroups?getParticipants=, message/sendText|sendMedia|sendWhatsAppAudio,
 * chat/findMessages, Evolution's error body `{status, error, response: {message: [...]}}`, and the
 * webhooks it posts (`{event, instance, data, date_time, …}`). Knobs inject slow answers, 5xx, 429 and
 * answers lost after the message went out.
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
}

export interface FakeEvolution {
  url: string;
  apiKey: string;
  instances: Map<string, FakeInstance>;
  messages: FakeMessage[];
  webhookDeliveries: { url: string; status: number; body: unknown }[];
  counters: { fetchAllGroups: number; sends: number; findMessages: number };
  knobs: {
    latencyMs: number;
    groupsLatencyMs: number;
    /** The next N sends answer 500 without sending. */
    failSends: number;
    /** The next N sends go out but the connection is dropped before the answer. */
    dropAnswers: number;
    /** fetchAllGroups answers 429 while true. */
    rateLimitGroups: boolean;
    /** Ignore the `messageId` option (older gateways): ids are random. */
    ignoreMessageId: boolean;
  };
  pair(name: string): Promise<void>;
  setState(name: string, state: FakeInstance["state"]): Promise<void>;
  receipt(messageId: string, status: "SERVER_ACK" | "DELIVERY_ACK" | "READ" | "PLAYED"): Promise<void>;
  close(): Promise<void>;
}

const errorBody = (status: number, error: string, message: unknown[]) => ({ status, error, response: { message } });

export async function startFakeEvolution(opts: { apiKey?: string; groupsPerInstance?: number } = {}): Promise<FakeEvolution> {
  const apiKey = opts.apiKey ?? "fake-global-key";
  const instances = new Map<string, FakeInstance>();
  const messages: FakeMessage[] = [];
  const webhookDeliveries: FakeEvolution["webhookDeliveries"] = [];
  const counters = { fetchAllGroups: 0, sends: 0, findMessages: 0 };
  const knobs: FakeEvolution["knobs"] = { latencyMs: 0, groupsLatencyMs: 0, failSends: 0, dropAnswers: 0, rateLimitGroups: false, ignoreMessageId: false };
  let base = "";

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
        if (knobs.rateLimitGroups) {
          res.writeHead(429, { "content-type": "application/json", "retry-after": "1" });
          return res.end(JSON.stringify(errorBody(429, "Too Many Requests", ["rate-overlimit"])));
        }
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
        if (action === "sendText" && typeof body.text !== "string") return send(400, errorBody(400, "Bad Request", [['instance requires property "text"']]));
        if (action === "sendMedia" && (typeof body.media !== "string" || typeof body.mediatype !== "string")) return send(400, errorBody(400, "Bad Request", [['instance requires property "media"']]));
        if (action === "sendWhatsAppAudio" && typeof body.audio !== "string") return send(400, errorBody(400, "Bad Request", [['instance requires property "audio"']]));
        if (inst.state !== "open") return send(400, errorBody(400, "Bad Request", ["Connection Closed"]));
        if (knobs.failSends > 0) {
          knobs.failSends--;
          return send(500, errorBody(500, "Internal Server Error", ["Error: Timed Out"]));
        }
        const id = !knobs.ignoreMessageId && typeof body.messageId === "string" ? body.messageId : `BAE5${randomUUID().replaceAll("-", "").slice(0, 12).toUpperCase()}`;
        const timestamp = Math.floor(Date.now() / 1000);
        messages.push({ instance: name, endpoint: action, id, number, body, timestamp });
        if (knobs.dropAnswers > 0) {
          knobs.dropAnswers--;
          req.socket.destroy();
          return;
        }
        const content =
          action === "sendText"
            ? { extendedTextMessage: { text: body.text } }
            : action === "sendWhatsAppAudio"
              ? { audioMessage: { mimetype: "audio/mp4", ptt: true } }
              : { [`${body.mediatype}Message`]: { caption: body.caption, mimetype: "application/octet-stream" } };
        return send(201, { key: { remoteJid: number, fromMe: true, id }, pushName: "", status: "PENDING", message: content, contextInfo: null, messageType: Object.keys(content)[0], messageTimestamp: timestamp, instanceId: randomUUID(), source: "unknown" });
      }
      case "POST chat/findMessages": {
        counters.findMessages++;
        const where = ((body.where as { key?: { id?: string; remoteJid?: string; fromMe?: boolean } }) ?? {}).key ?? {};
        const found = messages.filter(
          (m) => m.instance === name && (!where.id || m.id === where.id) && (!where.remoteJid || m.number === where.remoteJid),
        );
        const records = found.map((m) => ({
          id: randomUUID(),
          key: { id: m.id, fromMe: true, remoteJid: m.number },
          pushName: "",
          messageType: m.endpoint === "sendText" ? "extendedTextMessage" : "imageMessage",
          message: m.endpoint === "sendText" ? { extendedTextMessage: { text: m.body.text } } : { imageMessage: { caption: m.body.caption } },
          messageTimestamp: m.timestamp,
          instanceId: randomUUID(),
          source: "unknown",
          MessageUpdate: [],
        }));
        return send(200, { messages: { total: records.length, pages: records.length ? 1 : 0, currentPage: 1, records } });
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
    webhookDeliveries,
    counters,
    knobs,
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
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
