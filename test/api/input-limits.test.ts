import { afterEach, beforeAll, afterAll, describe, expect, it } from "vitest";
import { expectEnvelope, newTenant, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

/** docs/decisions.md#limits-abuse-retention, "Sizes" and "Media URLs": what a careless or hostile body gets (a 400 naming the field, never a 500). */

let server: TestServer;
let api: Api;
let channel: string;
let segment: string;
let groups: string[];

beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url);
  channel = (await api("POST", "/api/external/create-channel", { name: "Canal" })).json.id_channel;
  groups = (await api("GET", `/api/external/list-groups/${channel}`)).json.groups.map((g: { id_group: string }) => g.id_group);
  segment = (await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [channel], groups: groups.slice(0, 2) })).json.id_segment;
});
afterAll(() => server.close());

const savedAllowPrivate = process.env.WEBHOOK_ALLOW_PRIVATE;
afterEach(() => {
  if (savedAllowPrivate === undefined) delete process.env.WEBHOOK_ALLOW_PRIVATE;
  else process.env.WEBHOOK_ALLOW_PRIVATE = savedAllowPrivate;
});

const nul = "Vendas\u0000";
const loneHigh = "Oferta \uD83D fim";
const loneLow = "\uDE00 oferta";

function expect400Naming(res: Awaited<ReturnType<Api>>, field: string) {
  const body = expectEnvelope(res, 400, "Bad Request");
  expect(body.message).toContain(`${field}:`);
  return body;
}

describe("NUL and lone surrogates are a 400 naming the field, not a 500", () => {
  it("create-channel", async () => {
    expect400Naming(await api("POST", "/api/external/create-channel", { name: nul }), "name");
    expect400Naming(await api("POST", "/api/external/create-channel", { name: loneHigh }), "name");
    expect400Naming(await api("POST", "/api/external/create-channel", { name: loneLow }), "name");
  });

  it("edit-channel", async () => {
    const body = expect400Naming(await api("PUT", `/api/external/edit-channel/${channel}`, { name: nul }), "name");
    expect(body.message).toMatch(/NUL/);
    expect400Naming(await api("PUT", `/api/external/edit-channel/${channel}`, { name: loneHigh }), "name");
  });

  it("create-campaign/message: message, name, file_name, media_url", async () => {
    const base = { name: "Oferta", id_segment: segment, message: "Olá" };
    expect400Naming(await api("POST", "/api/external/create-campaign/message", { ...base, message: `Olá${"\u0000"}` }), "message");
    expect400Naming(await api("POST", "/api/external/create-campaign/message", { ...base, message: loneHigh }), "message");
    expect400Naming(await api("POST", "/api/external/create-campaign/message", { ...base, name: nul }), "name");
    const doc = { ...base, message_type: "document", media_url: "https://cdn.example.com/a.pdf" };
    expect400Naming(await api("POST", "/api/external/create-campaign/message", { ...doc, file_name: "a\u0000.pdf" }), "file_name");
    expect400Naming(await api("POST", "/api/external/create-campaign/message", { ...doc, media_url: "https://cdn.example.com/a\u0000.pdf" }), "media_url");
  });

  it("create-campaign/carousel: a card's text, a button's label", async () => {
    const card = { image_url: "https://cdn.example.com/1.jpg", text: "Card", buttons: [{ label: "Ver", type: "URL", url: "https://loja.example.com" }] };
    const send = (c: object) =>
      api("POST", "/api/external/create-campaign/carousel", { name: "C", id_segment: segment, carousel_data: { message: "m", cards: [c] } });
    expect400Naming(await send({ ...card, text: loneLow }), "carousel_data.cards.0.text");
    expect400Naming(await send({ ...card, buttons: [{ ...card.buttons[0], label: "V\u0000" }] }), "carousel_data.cards.0.buttons.0.label");
  });

  it("create-segment, edit-webhooks, edit-integrations", async () => {
    expect400Naming(await api("POST", "/api/external/create-segment", { name: nul, id_channel: [channel], groups: groups.slice(0, 1) }), "name");
    expect400Naming(await api("PATCH", "/api/external/edit-webhooks", { channel_status_url: "https://hooks.example.com/\u0000" }), "channel_status_url");
    expect400Naming(await api("PATCH", "/api/external/edit-integrations", { type: "hotmart", credentials: { client_id: loneHigh } }), "credentials.client_id");
  });

  it("a well-formed pair (an emoji) is accepted", async () => {
    const res = await api("POST", "/api/external/create-channel", { name: "Vendas 😀" });
    expect(res.status).toBe(201);
    expect(res.json.name).toBe("Vendas 😀");
  });
});

describe("sizes", () => {
  it("message: 65,536 characters pass, 65,537 are a 400 naming message", async () => {
    const base = { name: "Longa", id_segment: segment };
    expect(
      (await api("POST", "/api/external/create-campaign/message", { ...base, message: "a".repeat(65_536), scheduled_at: "01/01/2099 - 10:00" })).status,
    ).toBe(201);
    const body = expect400Naming(await api("POST", "/api/external/create-campaign/message", { ...base, message: "a".repeat(65_537) }), "message");
    expect(body.message).toMatch(/65536/);
  });

  it("a card's text over 1,024 characters; names over 120", async () => {
    const card = { image_url: "https://cdn.example.com/1.jpg", text: "x".repeat(1025) };
    expect400Naming(
      await api("POST", "/api/external/create-campaign/carousel", { name: "C", id_segment: segment, carousel_data: { message: "m", cards: [card] } }),
      "carousel_data.cards.0.text",
    );
    expect400Naming(await api("POST", "/api/external/create-channel", { name: "n".repeat(121) }), "name");
    expect400Naming(await api("PUT", `/api/external/edit-segment/${segment}`, { name: "n".repeat(121) }), "name");
    expect400Naming(await api("POST", "/api/external/create-campaign/message", { name: "n".repeat(121), id_segment: segment, message: "m" }), "name");
    expect((await api("POST", "/api/external/create-channel", { name: "n".repeat(120) })).status).toBe(201);
  });

  it("a segment's groups beyond SEGMENT_GROUP_LIMIT (50,000) are refused while parsing: 400 naming groups", async () => {
    const many = Array.from({ length: 50_001 }, (_, i) => `${120363000000000000 + i}@g.us`);
    const started = performance.now();
    const body = expect400Naming(await api("POST", "/api/external/create-segment", { name: "Grande", id_channel: [channel], groups: many }), "groups");
    expect(body.message).toMatch(/at most 50000/);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe("many bad items", () => {
  it("a list of thousands of invalid group ids is one short 400: the first problems named, the rest counted", async () => {
    const bad = Array.from({ length: 5_000 }, (_, i) => `not-a-group-${i}`);
    const res = await api("POST", "/api/external/create-segment", { name: "Ruim", id_channel: [channel], groups: bad });
    const body = expect400Naming(res, "groups.0");
    expect(body.message).toMatch(/and 4980 more problems$/);
    expect(res.text.length).toBeLessThan(5_000);
  });
});

describe("media URLs (media_url, image_url): https only, no private or internal hosts", () => {
  const media = (media_url: string) =>
    api("POST", "/api/external/create-campaign/message", {
      name: "Img",
      id_segment: segment,
      message: "",
      message_type: "image",
      media_url,
      scheduled_at: "01/01/2099 - 10:00",
    });
  const carousel = (image_url: string) =>
    api("POST", "/api/external/create-campaign/carousel", {
      name: "C",
      id_segment: segment,
      scheduled_at: "01/01/2099 - 10:00",
      carousel_data: { message: "m", cards: [{ image_url, text: "t" }] },
    });

  const refused = [
    "https://127.0.0.1/a.jpg",
    "https://10.1.2.3/a.jpg",
    "https://192.168.0.10/a.jpg",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::1]/a.jpg",
    "https://[::ffff:127.0.0.1]/a.jpg",
    "https://[fd00::1]/a.jpg",
    "https://2130706433/a.jpg", // 127.0.0.1 in decimal
    "https://0x7f.1/a.jpg", // 127.0.0.1 in hex, shortened
    "https://0177.0.0.1/a.jpg", // octal
    "https://0.0.0.0/a.jpg",
    "https://localhost/a.jpg",
    "https://cdn.localhost/a.jpg",
    "https://printer.local/a.jpg",
    "https://metadata.google.internal/a.jpg",
    "https://evolution-api/a.jpg",
  ];

  it.each(refused)("%s is a 400 naming media_url", async (u) => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    const body = expect400Naming(await media(u), "media_url");
    expect(body.message).toMatch(/private, loopback, link-local or reserved/);
  });

  it("the same rule for a carousel card's image_url", async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    expect400Naming(await carousel("https://192.168.1.1/x.jpg"), "carousel_data.cards.0.image_url");
    expect400Naming(await carousel("https://intranet.internal/x.jpg"), "carousel_data.cards.0.image_url");
    expect((await carousel("https://cdn.example.com/x.jpg")).status).toBe(201);
  });

  it("http is refused; a public https host or IP literal is accepted", async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    expect400Naming(await media("http://cdn.example.com/a.jpg"), "media_url");
    expect((await media("https://cdn.example.com/a.jpg")).status).toBe(201);
    expect((await media("https://93.184.216.34/a.jpg")).status).toBe(201);
  });

  it("WEBHOOK_ALLOW_PRIVATE=1 lifts the address rule (not the https one)", async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "1";
    expect((await media("https://127.0.0.1/a.jpg")).status).toBe(201);
    expect((await media("https://evolution-api/a.jpg")).status).toBe(201);
    expect400Naming(await media("http://127.0.0.1/a.jpg"), "media_url");
  });
});
