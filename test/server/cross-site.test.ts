import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { users } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { apiFor, request, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { signIn } from "../oauth-client";

/**
 * CONTRACT §4 "Dashboard mutations": a tRPC POST is refused (403) unless same-origin (Origin, else
 * Sec-Fetch-Site: same-origin) and application/json, before any procedure runs (docs/security.md,
 * "Dashboard mutations"). Issue 23 saw a multipart form post with the session cookie and
 * `Origin: https://evil.example` rotate the webhook signing secret.
 */
let server: TestServer;
let api: Api;
let cookie: string;
const password = "senha-segura-123";

beforeAll(async () => {
  server = await startTestServer();
  const email = `xs-${randomUUID()}@example.test`;
  const { tenantId, apiKey } = await createTenant(await getDb(), { name: "Loja", email, password });
  api = apiFor(server.url, tenantId, apiKey);
  cookie = await signIn(server.url, email, password);
});
afterAll(() => server.close());

const signingSecret = async () => (await api("GET", "/api/external/list-webhooks")).json.webhooks.signing_secret as string;

const rotate = (headers: Record<string, string>, body: BodyInit = "{}") =>
  fetch(`${server.url}/api/trpc/webhooks.rotateSecret`, { method: "POST", headers: { cookie, ...headers }, body });

async function expectRefused(res: Response) {
  expect(res.status).toBe(403);
  const body = (await res.json()) as { error: { data: { httpStatus: number; domainCode: string } } };
  expect(body.error.data).toMatchObject({ httpStatus: 403, domainCode: "cross_site_refused" });
}

describe("tRPC mutations are same-origin JSON only", () => {
  it("a cross-site form post (multipart, the session cookie, Origin: evil) is 403 and the secret stays", async () => {
    const before = await signingSecret();
    const form = new FormData();
    form.append("x", "1");
    await expectRefused(await rotate({ origin: "https://evil.example" }, form));
    // The same form from this origin is still refused: only JSON reaches a procedure.
    await expectRefused(await rotate({ origin: server.url }, form));
    const urlencoded = new URLSearchParams({ x: "1" });
    await expectRefused(await rotate({ origin: "https://evil.example", "content-type": "application/x-www-form-urlencoded" }, urlencoded));
    await expectRefused(await rotate({ "sec-fetch-site": "cross-site", "content-type": "text/plain" }, "{}"));
    expect(await signingSecret()).toBe(before);
  });

  it("a cross-site JSON post is 403 and changes nothing; so is one with neither Origin nor Sec-Fetch-Site", async () => {
    const before = await signingSecret();
    await expectRefused(await rotate({ origin: "https://evil.example", "content-type": "application/json" }));
    // A sibling subdomain passes SameSite=Lax, not this check.
    await expectRefused(await rotate({ origin: server.url.replace("127.0.0.1", "evil.127.0.0.1.nip.io"), "content-type": "application/json" }));
    await expectRefused(await rotate({ "sec-fetch-site": "same-site", "content-type": "application/json" }));
    await expectRefused(await rotate({ "content-type": "application/json" }));
    expect(await signingSecret()).toBe(before);

    // A public procedure too: no account is made by another site.
    const email = `evil-${randomUUID()}@example.test`;
    const signUp = await request(server.url, "POST", "/api/trpc/account.signUp", { name: "Evil", email, password }, { origin: "https://evil.example" });
    expect(signUp.status).toBe(403);
    expect(await (await getDb()).select().from(users).where(eq(users.email, email))).toEqual([]);
  });

  it("a same-origin JSON post works, by Origin or by Sec-Fetch-Site: same-origin (charset allowed)", async () => {
    const before = await signingSecret();
    const byOrigin = await rotate({ origin: server.url, "content-type": "application/json; charset=utf-8" });
    expect(byOrigin.status, await byOrigin.clone().text()).toBe(200);
    const rotated = ((await byOrigin.json()) as { result: { data: { signing_secret: string } } }).result.data.signing_secret;
    expect(rotated).not.toBe(before);
    expect(await signingSecret()).toBe(rotated);

    const byFetchMetadata = await rotate({ "sec-fetch-site": "same-origin", "content-type": "application/json" });
    expect(byFetchMetadata.status).toBe(200);
    expect(await signingSecret()).not.toBe(rotated);
  });

  it("queries (GET) are not affected", async () => {
    const res = await request(server.url, "GET", "/api/trpc/apiKeys.list", undefined, { cookie });
    expect(res.status).toBe(200);
  });
});
