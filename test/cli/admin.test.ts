import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb, openDatabase, type Database } from "../../db/client";
import { ownerWaitMs } from "../../db/data-dir-lock";
import { partnerApps, tenants } from "../../db/schema";
import { apiKeyPattern } from "../../server/keys/api-key-format";
import { verifyApiKey } from "../../server/keys/verify-api-key";

const root = path.resolve(__dirname, "../..");

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npm run admin -- …` the way an operator would, minus npm: node with the tsx loader; `stdin` is its standard input. */
function admin(args: string[], env: Record<string, string | undefined>, stdin = ""): Promise<CliResult> {
  return new Promise((resolve) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
    const child = execFile(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args], { cwd: root, env: childEnv }, (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin);
  });
}

/** A successful command: exactly one JSON line on stdout. */
function jsonLine(r: CliResult) {
  expect(r, r.stderr).toMatchObject({ code: 0 });
  const lines = r.stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

/** A refusal: one plain line on stderr, no stack trace. */
function plainError(r: CliResult, code: number) {
  expect(r.code, r.stdout + r.stderr).toBe(code);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trim().split("\n");
  expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  return lines[0];
}

const email = () => `cli-${randomUUID()}@example.com`;

// Each case spawns the CLI (1-3 s on an idle machine); a loaded 2-core machine can triple that.
const slow = { timeout: 60_000 };

describe("admin CLI arguments", slow, () => {
  const env = { DATABASE_URL: undefined, DATA_DIR: path.join(tmpdir(), "gcs-admin-never-created") };

  it("prints usage for --help, and exits 2 with one plain line on usage errors", async () => {
    const [help, ...results] = await Promise.all([
      admin(["--help"], env),
      admin([], env),
      admin(["frobnicate"], env),
      admin(["create-tenant", "--name", "Loja", "--email", email()], env),
      admin(["create-api-key", "--email", email(), "--bogus"], env),
      admin(["set-channel-limit", "--email", email(), "--max", "lots"], env),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("create-tenant --name NAME --email EMAIL --password-stdin");
    expect(help.stdout).toContain("create-tenant --name NAME --email EMAIL --password PW");
    expect(help.stdout).toContain("set-channel-limit --email EMAIL --max N");
    const messages = results.map((r) => plainError(r, 2));
    expect(messages[0]).toMatch(/command is required/);
    expect(messages[1]).toMatch(/unknown command "frobnicate"/);
    expect(messages[2]).toMatch(/a password is required: --password-stdin/);
    expect(messages[3]).toMatch(/--bogus/);
    expect(messages[4]).toMatch(/--max must be a whole number/);
  });
});

describe("admin CLI on PGlite", slow, () => {
  let dir: string;
  let env: Record<string, string | undefined>;
  const owner = email();
  let first: { tenant_id: string; api_key: string };
  let second: { tenant_id: string; api_key: string };
  let partnerClientId = "";

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "gcs-admin-"));
    env = { DATABASE_URL: undefined, DATA_DIR: path.join(dir, "data") };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("migrates a fresh data directory", async () => {
    expect(jsonLine(await admin(["migrate"], env))).toEqual({ migrated: true, database: "pglite", data_dir: env.DATA_DIR });
  });

  it("create-tenant prints one JSON line with the tenant and its key", async () => {
    first = jsonLine(await admin(["create-tenant", "--name", "Loja CLI", "--email", owner, "--password-stdin"], env, "senha-segura-123\n"));
    expect(Object.keys(first).sort()).toEqual(["api_key", "tenant_id"]);
    expect(first.tenant_id).toMatch(/^tenant_/);
    expect(first.api_key).toMatch(apiKeyPattern);
  });

  it("refuses a second account with the same e-mail, whatever its case", async () => {
    const r = await admin(["create-tenant", "--name", "Outra", "--email", owner.toUpperCase(), "--password-stdin"], env, "senha-segura-123\n");
    expect(plainError(r, 1)).toMatch(/already exists/);
  });

  it("create-api-key issues another key for the same tenant", async () => {
    second = jsonLine(await admin(["create-api-key", "--email", owner], env));
    expect(second.tenant_id).toBe(first.tenant_id);
    expect(second.api_key).toMatch(apiKeyPattern);
    expect(second.api_key).not.toBe(first.api_key);
  });

  it("set-channel-limit changes the tenant's limit", async () => {
    expect(jsonLine(await admin(["set-channel-limit", "--email", owner, "--max", "25"], env))).toEqual({
      tenant_id: first.tenant_id,
      channel_limit: 25,
    });
  });

  it("add-member and set-role (docs/team.md): another user joins the account with a role; the last owner stays an owner", async () => {
    const member = `membro-${randomUUID()}@example.test`;
    jsonLine(await admin(["create-tenant", "--name", "Agência", "--email", member, "--password-stdin"], env, "senha-segura-123\n"));
    const added = jsonLine(await admin(["add-member", "--email", owner, "--member", member, "--role", "viewer"], env));
    expect(added).toMatchObject({ tenant_id: first.tenant_id, role: "viewer" });
    expect(plainError(await admin(["add-member", "--email", owner, "--member", member, "--role", "viewer"], env), 1)).toMatch(/already a member/);
    expect(jsonLine(await admin(["set-role", "--email", owner, "--member", member, "--role", "editor"], env))).toMatchObject({ role: "editor" });
    expect(plainError(await admin(["set-role", "--email", owner, "--member", owner, "--role", "admin"], env), 1)).toMatch(/last owner/);
    expect(plainError(await admin(["set-role", "--email", owner, "--member", member, "--role", "boss"], env), 2)).toMatch(/--role must be one of/);
  }, 300_000); // six CLI runs, each starting tsx

  it("create-partner-app prints the client_id (and the secret of a confidential app) with its scopes approved", async () => {
    const confidential = jsonLine(
      await admin(
        [
          "create-partner-app",
          "--email",
          owner,
          "--name",
          "BI Parceiro",
          "--redirect-uri",
          "https://bi.example.com/cb",
          "--redirect-uri",
          "http://127.0.0.1:9000/cb",
          "--scopes",
          "statistics:read settings:read",
        ],
        env,
      ),
    );
    expect(Object.keys(confidential).sort()).toEqual(["client_id", "client_secret"]);
    expect(confidential.client_secret).toMatch(/^pcs_[A-Za-z0-9_-]{43}$/);
    partnerClientId = confidential.client_id;
    const pub = jsonLine(
      await admin(
        ["create-partner-app", "--email", owner, "--name", "App Móvel", "--redirect-uri", "http://localhost:7000/cb", "--scopes", "campaigns:read", "--public"],
        env,
      ),
    );
    expect(Object.keys(pub)).toEqual(["client_id"]);
    expect(
      plainError(
        await admin(["create-partner-app", "--email", owner, "--name", "X", "--redirect-uri", "http://bi.example.com/cb", "--scopes", "statistics:read"], env),
        2,
      ),
    ).toMatch(/--redirect-uri .*https/);
    expect(
      plainError(
        await admin(["create-partner-app", "--email", owner, "--name", "X", "--redirect-uri", "https://bi.example.com/cb", "--scopes", "admin:write"], env),
        2,
      ),
    ).toMatch(/--scopes/);
  });

  it("names an unknown e-mail plainly", async () => {
    const r = await admin(["create-api-key", "--email", "nobody@example.com"], env);
    expect(plainError(r, 1)).toBe("no account with e-mail nobody@example.com");
  });

  it("wrote durably, and refuses plainly while another process owns the directory", async () => {
    const database = await openDatabase({ dataDir: env.DATA_DIR, migrate: false });
    try {
      const now = new Date();
      expect(await verifyApiKey(database.db, first.api_key, now)).toMatchObject({ tenantId: first.tenant_id });
      expect(await verifyApiKey(database.db, second.api_key, now)).toMatchObject({ tenantId: first.tenant_id });
      const [tenant] = await database.db.select().from(tenants).where(eq(tenants.id, first.tenant_id));
      expect(tenant.channelLimit).toBe(25);
      const [app] = await database.db.select().from(partnerApps).where(eq(partnerApps.id, partnerClientId));
      expect(app).toMatchObject({ tenantId: first.tenant_id, clientType: "confidential", approvedScopes: ["statistics:read", "settings:read"] });
      expect(app.clientSecretHash).toMatch(/^[0-9a-f]{64}$/);

      // While this process owns the directory, as the running server would, the CLI waits for it, then refuses plainly.
      const t0 = Date.now();
      const r = await admin(["create-api-key", "--email", owner], env);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(ownerWaitMs);
      const message = plainError(r, 1);
      expect(message).toContain(`is in use by another process (pid ${process.pid})`);
      expect(message).toContain(`still running after ${ownerWaitMs / 1000} s`);
      expect(message).toMatch(/stop the server first/);
    } finally {
      await database.close();
    }
  });
});

describe.runIf(process.env.DATABASE_URL)("admin CLI on PostgreSQL", slow, () => {
  const env = { DATABASE_URL: process.env.DATABASE_URL, DATA_DIR: path.join(tmpdir(), "gcs-admin-unused") };
  const owner = email();
  let database: Database | undefined;

  afterAll(async () => {
    await database?.close();
  });

  it("creates a tenant, a key and a limit beside another open connection", async () => {
    // Another process holding connections (the running server) does not stop the CLI on PostgreSQL.
    database = await openDatabase({ url: process.env.DATABASE_URL, migrate: false });
    expect(jsonLine(await admin(["migrate"], env))).toEqual({ migrated: true, database: "postgres" });

    const created = jsonLine(await admin(["create-tenant", "--name", "Loja PG", "--email", owner, "--password-stdin"], env, "senha-segura-123\n"));
    const key = jsonLine(await admin(["create-api-key", "--email", owner], env));
    expect(key.tenant_id).toBe(created.tenant_id);
    jsonLine(await admin(["set-channel-limit", "--email", owner, "--max", "3"], env));

    const db = await getDb();
    expect(await verifyApiKey(db, created.api_key, new Date())).toMatchObject({ tenantId: created.tenant_id });
    expect(await verifyApiKey(db, key.api_key, new Date())).toMatchObject({ tenantId: created.tenant_id });
    const [tenant] = await db.select().from(tenants).where(eq(tenants.id, created.tenant_id));
    expect(tenant.channelLimit).toBe(3);
  });

  it("refuses a duplicate e-mail and an unknown one plainly", async () => {
    const [dup, unknown] = await Promise.all([
      admin(["create-tenant", "--name", "Outra", "--email", owner, "--password-stdin"], env, "senha-segura-123\n"),
      admin(["set-channel-limit", "--email", "nobody-pg@example.com", "--max", "1"], env),
    ]);
    expect(plainError(dup, 1)).toMatch(/already exists/);
    expect(plainError(unknown, 1)).toBe("no account with e-mail nobody-pg@example.com");
  });
});
