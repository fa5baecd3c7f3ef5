import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startupWarnings } from "../env";
import { sendWebhook } from "./send-webhook";
import { isPrivateAddress, webhookUrlProblem, type LookupFn } from "../net/target-address";

/** A resolver that answers `address` for every name, as a rebinding DNS server would. */
const resolvesTo = (address: string, family = 4): LookupFn =>
  ((_host: string, options: unknown, cb?: unknown) => {
    const callback = (typeof options === "function" ? options : cb) as (...a: unknown[]) => void;
    const all = typeof options === "object" && options !== null && (options as { all?: boolean }).all;
    process.nextTick(() => (all ? callback(null, [{ address, family }]) : callback(null, address, family)));
  }) as unknown as LookupFn;

let server: Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    if (req.url === "/redirect") {
      res.writeHead(307, { location: `http://127.0.0.1:${port}/target` });
      return res.end();
    }
    res.writeHead(200);
    res.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
afterEach(() => {
  process.env.WEBHOOK_ALLOW_PRIVATE = "1";
  (process.env as Record<string, string>).NODE_ENV = "test";
});

describe("which addresses are private", () => {
  it.each([
    "127.0.0.1",
    "10.2.3.4",
    "172.31.255.255",
    "192.168.0.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:a00:1",
    "::7f00:1",
    "::127.0.0.1",
    "::ffff:0:7f00:1",
    "64:ff9b::7f00:1",
    "3fff::1",
    "not-an-ip",
  ])("%s is refused", (ip) => expect(isPrivateAddress(ip)).toBe(true));
  it.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])("%s is public", (ip) => expect(isPrivateAddress(ip)).toBe(false));
});

describe("at registration", () => {
  it("a hostname that resolves to loopback is refused; to a public address accepted", async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    expect(await webhookUrlProblem("https://rebind.example.test/hook", { lookup: resolvesTo("127.0.0.1") })).toMatch(/private/);
    expect(await webhookUrlProblem("https://rebind.example.test/hook", { lookup: resolvesTo("::1", 6) })).toMatch(/private/);
    expect(await webhookUrlProblem("https://ok.example.test/hook", { lookup: resolvesTo("93.184.216.34") })).toBeNull();
  });

  it("WEBHOOK_ALLOW_PRIVATE=1 is honoured in every mode, production included", async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "1";
    for (const mode of ["production", "development", "test"]) {
      (process.env as Record<string, string>).NODE_ENV = mode;
      expect(await webhookUrlProblem("http://127.0.0.1/hook")).toBeNull();
    }
    (process.env as Record<string, string>).NODE_ENV = "production";
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    expect(await webhookUrlProblem("http://127.0.0.1/hook")).toMatch(/private/);
  });

  it("the server warns at start when WEBHOOK_ALLOW_PRIVATE=1", () => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "1";
    expect(startupWarnings().join("\n")).toMatch(/WEBHOOK_ALLOW_PRIVATE=1/);
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    expect(startupWarnings()).toEqual([]);
  });
});

describe("at connect time, after DNS", () => {
  const send = (url: string, lookup?: LookupFn) => sendWebhook(url, "{}", { "webhook-id": "msg_1" }, { lookup, timeoutMs: 2000 });

  it.each([
    ["127.0.0.1", () => `http://127.0.0.1:${port}/x`],
    ["localhost", () => `http://localhost:${port}/x`],
    ["[::ffff:127.0.0.1]", () => `http://[::ffff:127.0.0.1]:${port}/x`],
    ["169.254.169.254", () => "http://169.254.169.254/latest/meta-data/"],
    ["10.x", () => "http://10.255.255.1/x"],
    ["[::7f00:1] (IPv4-compatible loopback)", () => `http://[::7f00:1]:${port}/x`],
  ])("%s is refused without a request reaching it", async (_name, url) => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    const before = hits;
    const result = await send(url());
    expect(result.status).toBe(0);
    expect(result.error).toMatch(/not allowed/);
    expect(hits).toBe(before);
  });

  it("a public-looking hostname that resolves to loopback (DNS rebinding) is refused", async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE = "0";
    const before = hits;
    const result = await send(`http://rebind.example.test:${port}/x`, resolvesTo("127.0.0.1"));
    expect(result).toMatchObject({ status: 0, error: expect.stringMatching(/not allowed/) });
    // Spellings the filtering agent's own ranges miss: an IPv4-compatible loopback, a local-use NAT64 address.
    for (const [address, family] of [
      ["::7f00:1", 6],
      ["64:ff9b:1::a00:1", 6],
    ] as const) {
      expect(await send(`http://rebind.example.test:${port}/x`, resolvesTo(address, family))).toMatchObject({
        status: 0,
        error: expect.stringMatching(/not allowed/),
      });
    }
    expect(hits).toBe(before);
    process.env.WEBHOOK_ALLOW_PRIVATE = "1";
    expect((await send(`http://rebind.example.test:${port}/x`, resolvesTo("127.0.0.1"))).status).toBe(200);
  });

  it("a redirect (to loopback) is not followed: 3xx is the answer, the target is never called", async () => {
    const before = hits;
    const result = await send(`http://127.0.0.1:${port}/redirect`);
    expect(result.status).toBe(307);
    expect(hits).toBe(before + 1);
  });

  it("a receiver that does not answer in time is status 0 with a time-out error", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const started = Date.now();
      const result = await sendWebhook(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, "{}", {}, { timeoutMs: 300 });
      expect(result).toMatchObject({ status: 0, error: expect.stringMatching(/timed out/) });
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
