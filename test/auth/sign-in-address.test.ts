import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { createTenant } from "../../server/auth/create-tenant";
import { throttledRetryAfter } from "../../server/auth/sign-in-error";
import { request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { attemptSignIn } from "./sign-in-client";

/**
 * The per-address sign-in limit (50 failures per 15 minutes by default), with the limit lowered to 3
 * for this file (its own process, its own client address) so the test does not hash 50 passwords.
 */
process.env.RATE_LIMIT_SIGN_IN_PER_ADDRESS = "3";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe("sign-in failures per client address", () => {
  it("beyond the limit every attempt from the address is refused (any account, the right password too) and counts as a failed authentication", async () => {
    const email = `a-${randomUUID()}@example.test`;
    await createTenant(await getDb(), { name: "Loja", email, password: "senha-segura-123" });
    // Three different accounts, one failure each: no account is near its own limit.
    for (let i = 0; i < 3; i++) {
      expect((await attemptSignIn(server.url, `x${i}-${randomUUID()}@example.test`, "errada-xxxxxx")).error).toBe("CredentialsSignin");
    }
    const refused = await attemptSignIn(server.url, email, "senha-segura-123");
    expect(refused.signedIn).toBe(false);
    expect(throttledRetryAfter(refused.error)).toBeGreaterThan(0);

    // Throttled sign-ins count as failed authentications of the address (RATE_LIMIT_FAILED_AUTH_PER_MINUTE, 20):
    // after 20 of them the REST facade refuses the address before looking at credentials.
    for (let i = 0; i < 19; i++) expect((await attemptSignIn(server.url, email, "senha-segura-123")).signedIn).toBe(false);
    const res = await request(server.url, "GET", "/api/external/list-settings", undefined, { "x-api-key": `sk_live_${"a".repeat(40)}` });
    expect(res.status).toBe(429);
    expect(res.json.message).toMatch(/failed authentication/);
  }, 60_000);
});
