import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { createTenant } from "../../server/auth/create-tenant";
import { request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { signIn } from "../oauth-client";
import { attemptSignIn, signOutSession } from "./sign-in-client";

/**
 * CONTRACT §4 "Sessions": signing out, changing the password and a throttled lock end every dashboard
 * session of the user at once (docs/security.md, "Sessions"), through next-auth's routes and /api/trpc
 * as the dashboard calls them. The account limit is lowered to 3 for this file (its own process).
 */
process.env.RATE_LIMIT_SIGN_IN_PER_ACCOUNT = "3";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const password = "senha-segura-123";

async function account() {
  const email = `sess-${randomUUID()}@example.test`;
  await createTenant(await getDb(), { name: "Loja", email, password });
  return email;
}

/** A dashboard query with the session cookie: 200 while the session is in force, 401 once it ended. */
const keysList = (cookie: string) => request(server.url, "GET", "/api/trpc/apiKeys.list", undefined, { cookie });

/** A dashboard mutation as the browser sends it: same origin, JSON. */
const mutate = (path: string, body: unknown, cookie: string) => request(server.url, "POST", `/api/trpc/${path}`, body, { cookie, origin: server.url });

describe("dashboard sessions end together", () => {
  it("signing out in one browser refuses every session of that user (tRPC and the consent API), and no one else's", async () => {
    const email = await account();
    const [a, b] = [await signIn(server.url, email, password), await signIn(server.url, email, password)];
    const other = await signIn(server.url, await account(), password);
    for (const cookie of [a, b, other]) expect((await keysList(cookie)).status).toBe(200);

    await signOutSession(server.url, a);

    for (const cookie of [a, b]) {
      const res = await keysList(cookie);
      expect(res.status, res.text).toBe(401);
      expect(res.json.error.data.domainCode).toBe("session_required");
    }
    // The consent API reads the same session: login required.
    const consent = await request(server.url, "GET", "/api/oauth/authorize?client_id=x", undefined, { cookie: b });
    expect(consent.status).toBe(401);
    expect(consent.json.error).toBe("login_required");
    // next-auth's own session endpoint says no session, and clears the cookie.
    const session = await fetch(`${server.url}/api/auth/session`, { headers: { cookie: b } });
    expect(await session.json()).toEqual({});
    expect(session.headers.getSetCookie().some((c) => c.startsWith("next-auth.session-token=;"))).toBe(true);

    expect((await keysList(other)).status).toBe(200);
    // Signing in again gives a working session.
    expect((await keysList(await signIn(server.url, email, password))).status).toBe(200);
  }, 60_000);

  it("changing the password keeps this session (a new cookie), refuses the others and the old cookie; the new password signs in", async () => {
    const email = await account();
    const [a, b] = [await signIn(server.url, email, password), await signIn(server.url, email, password)];

    const changed = await mutate("account.changePassword", { currentPassword: password, newPassword: "outra-senha-segura" }, a);
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json.result.data).toEqual({ changed: true });
    const renewed = changed.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .find((c) => c.startsWith("next-auth.session-token="));
    expect(renewed).toBeDefined();
    expect(changed.headers.getSetCookie().join()).toMatch(/HttpOnly.*SameSite=Lax|SameSite=Lax.*HttpOnly/i);

    expect((await keysList(renewed!)).status).toBe(200);
    expect((await keysList(a)).status).toBe(401);
    expect((await keysList(b)).status).toBe(401);
    expect((await attemptSignIn(server.url, email, password)).signedIn).toBe(false);
    expect((await attemptSignIn(server.url, email, "outra-senha-segura")).signedIn).toBe(true);
  }, 60_000);

  it("a password change needs the current password and a new one of 10+ characters (400 naming the field); nothing ends on a refusal", async () => {
    const email = await account();
    const a = await signIn(server.url, email, password);
    const b = await signIn(server.url, email, password);

    const wrong = await mutate("account.changePassword", { currentPassword: "nao-e-a-senha", newPassword: "outra-senha-segura" }, a);
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toMatch(/^currentPassword: /);
    const short = await mutate("account.changePassword", { currentPassword: password, newPassword: "curta" }, a);
    expect(short.status).toBe(400);
    expect(short.text).toMatch(/newPassword/);
    expect(short.text).toMatch(/at least 10 characters/);
    const signedOut = await mutate("account.changePassword", { currentPassword: password, newPassword: "outra-senha-segura" }, "");
    expect(signedOut.status).toBe(401);

    for (const cookie of [a, b]) expect((await keysList(cookie)).status).toBe(200);
    expect((await attemptSignIn(server.url, email, password)).signedIn).toBe(true);
  }, 60_000);

  it("a throttled lock (the account's failed sign-ins past the limit) refuses every session of the account", async () => {
    const email = await account();
    const a = await signIn(server.url, email, password);
    const b = await signIn(server.url, email, password);
    const other = await signIn(server.url, await account(), password);
    for (let i = 0; i < 2; i++) expect((await attemptSignIn(server.url, email, `errada-${i}-xxxxxx`)).error).toBe("CredentialsSignin");
    // Two failures of three: not locked yet, the sessions go on.
    expect((await keysList(a)).status).toBe(200);

    expect((await attemptSignIn(server.url, email, "errada-2-xxxxxx")).error).toBe("CredentialsSignin");
    for (const cookie of [a, b]) expect((await keysList(cookie)).status).toBe(401);
    expect((await keysList(other)).status).toBe(200);
  }, 60_000);

  it("wrong current passwords count as failed sign-ins: the lock they reach ends the session that tried", async () => {
    const email = await account();
    const a = await signIn(server.url, email, password);
    const b = await signIn(server.url, email, password);
    for (let i = 0; i < 3; i++) {
      const res = await mutate("account.changePassword", { currentPassword: `errada-${i}-xxxxxx`, newPassword: "outra-senha-segura" }, a);
      expect(res.status).toBe(400);
    }
    for (const cookie of [a, b]) expect((await keysList(cookie)).status).toBe(401);
    const locked = await attemptSignIn(server.url, email, password);
    expect(locked.signedIn).toBe(false);
    expect(locked.error).toMatch(/^TooManyAttempts:/);
  }, 60_000);
});
