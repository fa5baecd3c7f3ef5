import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { expectEnvelope, newTenant, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

/**
 * CONTRACT §3 "Webhooks": edit-webhooks accepts only http(s) URLs and refuses private, loopback and
 * link-local targets at save (400 naming the field) unless WEBHOOK_ALLOW_PRIVATE=1. Issue 23 saved
 * `http://localhost./` and `http://[::7f00:1]/` (refused only at connect time); these are those and the
 * other spellings of the same targets. No name below needs DNS: each is refused before any lookup.
 */
let server: TestServer;
let api: Api;
beforeAll(async () => {
  server = await startTestServer();
  api = await newTenant(server.url);
});
afterAll(() => server.close());
afterEach(() => {
  process.env.WEBHOOK_ALLOW_PRIVATE = "0";
});
process.env.WEBHOOK_ALLOW_PRIVATE = "0";

const refused = [
  // The two seen in issue 23.
  "http://localhost./",
  "http://[::7f00:1]/",
  // Trailing dots, and other names of this machine or network.
  "http://localhost../hook",
  "http://LOCALHOST./hook",
  "http://localhost%2e/hook",
  "http://api.localhost./hook",
  "https://printer.local./hook",
  "https://metadata.google.internal./computeMetadata/v1/",
  "http://n8n:5678/webhook",
  "http://n8n.:5678/webhook",
  // IPv4 in decimal, octal, hex, short and trailing-dot forms, 0.0.0.0.
  "http://2130706433/",
  "http://017700000001/",
  "http://0177.0.0.1/",
  "http://0x7f.1/",
  "http://127.1/",
  "http://127.0.0.1./",
  "http://0/",
  "http://0.0.0.0:8080/",
  "http://169.254.169.254./latest/meta-data/",
  "http://10.0.0.1/",
  // IPv6: IPv4-compatible, mapped, translated, NAT64 (well-known and local-use), 6to4, unspecified, loopback, ULA, link-local.
  "http://[::127.0.0.1]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[0:0:0:0:0:ffff:7f00:1]/",
  "http://[::ffff:0:7f00:1]/",
  "http://[64:ff9b::7f00:1]/",
  "http://[64:ff9b:1::a00:1]/",
  "http://[2002:7f00:1::]/",
  "http://[::]/",
  "http://[::1]/",
  "http://[fd00::1]/",
  "http://[fe80::1]/",
];

describe("edit-webhooks refuses private targets at save", () => {
  it.each(refused)("%s is 400 naming the field, and nothing is saved", async (url) => {
    const res = await api("PATCH", "/api/external/edit-webhooks", { campaign_status_url: url });
    const body = expectEnvelope(res, 400, "Bad Request");
    expect(body.message).toMatch(/^campaign_status_url: must not point to a private, loopback, link-local or reserved address/);
    expect((await api("GET", "/api/external/list-webhooks")).json.webhooks.campaign_status_url).not.toBe(url);
  });

  it("names each refused field, and saves none of the request", async () => {
    const res = await api("PATCH", "/api/external/edit-webhooks", {
      campaign_status_url: "https://93.184.216.34/hook",
      channel_status_url: "http://localhost./",
      group_activity_url: "http://[::7f00:1]/",
    });
    const body = expectEnvelope(res, 400, "Bad Request");
    expect(body.message).toMatch(/channel_status_url: must not point/);
    expect(body.message).toMatch(/group_activity_url: must not point/);
    expect(body.message).not.toMatch(/campaign_status_url/);
    expect((await api("GET", "/api/external/list-webhooks")).json.webhooks.campaign_status_url).not.toBe("https://93.184.216.34/hook");
  });

  it("accepts a public address; only http(s); WEBHOOK_ALLOW_PRIVATE=1 lifts the address rule", async () => {
    const ok = await api("PATCH", "/api/external/edit-webhooks", {
      campaign_status_url: "https://93.184.216.34/hook",
      campaign_progress_url: "http://[2606:4700:4700::1111]/h",
    });
    expect(ok.status, ok.text).toBe(200);
    expect(
      expectEnvelope(await api("PATCH", "/api/external/edit-webhooks", { channel_status_url: "ftp://93.184.216.34/x" }), 400, "Bad Request").message,
    ).toMatch(/^channel_status_url: must be an http or https URL/);
    process.env.WEBHOOK_ALLOW_PRIVATE = "1";
    const allowed = await api("PATCH", "/api/external/edit-webhooks", { channel_status_url: "http://localhost./", group_activity_url: "http://[::7f00:1]/" });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.json.webhooks).toMatchObject({ channel_status_url: "http://localhost./", group_activity_url: "http://[::7f00:1]/" });
  });
});
