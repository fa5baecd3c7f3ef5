import { randomBytes, randomUUID, scryptSync } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { users } from "../../db/schema";
import { createTenant } from "../../server/auth/create-tenant";
import { hashPassword, passwordParams } from "../../server/auth/password";
import { throttledMessage, throttledRetryAfter } from "../../server/auth/sign-in-error";
import { request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { attemptSignIn, median } from "./sign-in-client";

/** docs/decisions.md#limits-abuse-retention, "Dashboard sign-in", through next-auth's HTTP routes, with the production hash parameters. */
const testHashN = process.env.PASSWORD_SCRYPT_N_FOR_TESTS;
delete process.env.PASSWORD_SCRYPT_N_FOR_TESTS;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const password = "senha-segura-123";

async function account() {
  const email = `s-${randomUUID()}@example.test`;
  const { tenantId } = await createTenant(await getDb(), { name: "Loja", email, password });
  return { email, tenantId };
}

const log = (...a: unknown[]) => console.log("[sign-in timings]", ...a);

describe("dashboard sign-in", () => {
  it("signs in with the right password", async () => {
    const { email } = await account();
    expect(await attemptSignIn(server.url, email.toUpperCase(), password)).toMatchObject({ signedIn: true, error: null });
  });

  it("after 10 wrong passwords the account is locked for 15 minutes: " +
    "the 11th and 12th, and then the right password, are refused fast, without hashing", async () => {
    const { email } = await account();
    const wrong: number[] = [];
    for (let i = 0; i < 10; i++) {
      const a = await attemptSignIn(server.url, email, `errada-${i}-xxxxxx`);
      expect(a).toMatchObject({ signedIn: false, error: "CredentialsSignin" });
      wrong.push(a.ms);
    }
    const locked: number[] = [];
    for (const pw of ["errada-10-xxxxxx", "errada-11-xxxxxx", password]) {
      const a = await attemptSignIn(server.url, email, pw);
      expect(a.signedIn).toBe(false);
      const wait = throttledRetryAfter(a.error);
      expect(wait, String(a.error)).toBeGreaterThan(14 * 60 - 60);
      expect(wait).toBeLessThanOrEqual(15 * 60);
      locked.push(a.ms);
    }
    log(`wrong password (hashed) median ${median(wrong).toFixed(0)} ms; locked median ${median(locked).toFixed(0)} ms`);
    expect(median(locked)).toBeLessThan(median(wrong) / 3);
    // Another account from the same address is not locked.
    const other = await account();
    expect((await attemptSignIn(server.url, other.email, password)).signedIn).toBe(true);
  }, 120_000);

  it("the login page's pt-BR message says when to try again", () => {
    expect(throttledMessage(12 * 60 - 5)).toBe("Muitas tentativas. Tente novamente em 12 minutos.");
    expect(throttledMessage(30)).toBe("Muitas tentativas. Tente novamente em 1 minuto.");
  });

  it("an unknown email costs what a wrong password costs", async () => {
    const { email } = await account();
    await attemptSignIn(server.url, `ninguem-${randomUUID()}@example.test`, "qualquer-coisa-1"); // the dummy hash is made once
    const unknown: number[] = [];
    const wrong: number[] = [];
    for (let i = 0; i < 3; i++) {
      const u = await attemptSignIn(server.url, `ninguem-${randomUUID()}@example.test`, "qualquer-coisa-1");
      expect(u).toMatchObject({ signedIn: false, error: "CredentialsSignin" });
      unknown.push(u.ms);
      const w = await attemptSignIn(server.url, email, "qualquer-coisa-1");
      expect(w).toMatchObject({ signedIn: false, error: "CredentialsSignin" });
      wrong.push(w.ms);
    }
    log(`unknown email median ${median(unknown).toFixed(0)} ms; known email, wrong password median ${median(wrong).toFixed(0)} ms`);
    const ratio = median(unknown) / median(wrong);
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  }, 120_000);

  it("a hash made with the old parameters (scrypt N=2^15) still verifies and is replaced by one with today's on sign-in", async () => {
    const { email } = await account();
    const salt = randomBytes(16);
    const key = scryptSync(password.normalize("NFKC"), salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const old = `scrypt$${2 ** 15}$8$1$${salt.toString("base64")}$${key.toString("base64")}`;
    const db = await getDb();
    await db.update(users).set({ passwordHash: old }).where(eq(users.email, email));

    expect((await attemptSignIn(server.url, email, "nao-e-esta-senha")).signedIn).toBe(false);
    const [stillOld] = await db.select().from(users).where(eq(users.email, email));
    expect(stillOld.passwordHash).toBe(old);

    expect((await attemptSignIn(server.url, email, password)).signedIn).toBe(true);
    const [row] = await db.select().from(users).where(eq(users.email, email));
    expect(row.passwordHash).not.toBe(old);
    expect(row.passwordHash.startsWith(`scrypt$${passwordParams.N}$8$1$`)).toBe(true);
    expect(passwordParams.N).toBeGreaterThanOrEqual(2 ** 17);
    expect((await attemptSignIn(server.url, email, password)).signedIn).toBe(true);
  }, 60_000);
});

describe("password hashing", () => {
  it("new hashes use scrypt N=2^17, r=8, p=1; PASSWORD_SCRYPT_N_FOR_TESTS is ignored outside NODE_ENV=test", async () => {
    const saved = process.env.NODE_ENV;
    process.env.PASSWORD_SCRYPT_N_FOR_TESTS = "1024";
    try {
      expect(await hashPassword("x".repeat(10))).toMatch(/^scrypt\$1024\$8\$1\$/);
      (process.env as Record<string, string>).NODE_ENV = "production";
      expect(await hashPassword("x".repeat(10))).toMatch(/^scrypt\$131072\$8\$1\$/);
    } finally {
      (process.env as Record<string, string>).NODE_ENV = saved!;
      delete process.env.PASSWORD_SCRYPT_N_FOR_TESTS;
    }
  });
});

describe("dashboard sign-up (tRPC account.signUp)", () => {
  // The sign-up limit, not the hash, is under test here: the cheap test hash (test/setup.ts) for its 10 accounts.
  beforeAll(() => {
    if (testHashN) process.env.PASSWORD_SCRYPT_N_FOR_TESTS = testHashN;
  });
  afterAll(() => {
    delete process.env.PASSWORD_SCRYPT_N_FOR_TESTS;
  });
  // Same-origin JSON, as the sign-up page sends it (docs/security.md, "Dashboard mutations").
  const signUp = (body: object) => request(server.url, "POST", "/api/trpc/account.signUp", body, { origin: server.url });

  it("refuses a password under 10 characters, naming it", async () => {
    const res = await signUp({ name: "Loja", email: `c-${randomUUID()}@example.test`, password: "123456789" });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/password/);
    expect(res.text).toMatch(/at least 10 characters/);
  });

  it("allows 10 sign-ups per client address per hour; the 11th is 429", async () => {
    // The test server is one client address; the short-password refusal above parsed nothing and counted nothing.
    for (let i = 0; i < 10; i++) {
      const res = await signUp({ name: `Loja ${i}`, email: `c-${randomUUID()}@example.test`, password });
      expect(res.status, res.text).toBe(200);
    }
    const res = await signUp({ name: "Loja 11", email: `c-${randomUUID()}@example.test`, password });
    expect(res.status, res.text).toBe(429);
    expect(res.json.error.data.domainCode).toBe("sign_up_limited");
  }, 180_000);
});
