import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb, openDatabase, type Db } from "../../db/client";
import { users } from "../../db/schema";
import { verifyPassword } from "../../server/auth/password";

/**
 * The admin CLI keeps the owner's password out of argv (docs/operations.md#admin-cli): `--password-stdin`
 * (the documented way) or GCS_ADMIN_PASSWORD; `--password PW` still works (CONTRACT §1) with a warning on
 * stderr. Each case checks what a `ps` listing of the CLI would have shown (its argv) and that the stored
 * hash verifies the password. PGlite (its own data directory) or, with DATABASE_URL, this file's database.
 */
const root = path.resolve(__dirname, "../..");
const slow = { timeout: 60_000 };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  argv: string[];
}

let dir: string;
let env: Record<string, string | undefined>;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "gcs-admin-pw-"));
  env = process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { DATABASE_URL: undefined, DATA_DIR: path.join(dir, "data") };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `npm run admin -- …` minus npm, with `stdin` written to its standard input. */
function admin(args: string[], opts: { stdin?: string; env?: Record<string, string | undefined> } = {}): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, GCS_ADMIN_PASSWORD: undefined, ...env, ...opts.env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const argv = [process.execPath, "--import", "tsx", "scripts/admin.ts", ...args];
  const child = spawn(argv[0], argv.slice(1), { cwd: root, env: childEnv, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  child.stdin.end(opts.stdin ?? "");
  return new Promise((resolve) => child.once("close", (code) => resolve({ code: code ?? 1, stdout, stderr, argv })));
}

/** The stored hash of `email`'s password, read after the CLI exited (on PGlite it owned the directory meanwhile). */
async function storedHash(email: string): Promise<string> {
  const read = async (db: Db) => (await db.select({ hash: users.passwordHash }).from(users).where(eq(users.email, email)))[0]?.hash;
  if (env.DATABASE_URL) return read(await getDb());
  const database = await openDatabase({ dataDir: env.DATA_DIR, migrate: false });
  try {
    return await read(database.db);
  } finally {
    await database.close();
  }
}

const created = (r: Run) => {
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout.trim())).toMatchObject({ tenant_id: expect.stringMatching(/^tenant_/), api_key: expect.stringMatching(/^sk_live_/) });
};

describe("admin create-tenant keeps the password out of argv", slow, () => {
  it("--password-stdin: the first line of standard input; nothing in argv, nothing on stderr", async () => {
    const email = `pw-${randomUUID()}@example.com`;
    const password = "senha pela entrada 1";
    const r = await admin(["create-tenant", "--name", "Loja Stdin", "--email", email, "--password-stdin"], { stdin: `${password}\nignored second line\n` });
    created(r);
    expect(r.stderr).toBe("");
    expect(r.argv.join(" ")).not.toContain(password);
    expect(await verifyPassword(password, await storedHash(email))).toBe(true);
  });

  it("GCS_ADMIN_PASSWORD: from the environment, not argv", async () => {
    const email = `pw-${randomUUID()}@example.com`;
    const password = "senha-do-ambiente-2";
    const r = await admin(["create-tenant", "--name", "Loja Env", "--email", email], { env: { GCS_ADMIN_PASSWORD: password } });
    created(r);
    expect(r.stderr).toBe("");
    expect(r.argv.join(" ")).not.toContain(password);
    expect(await verifyPassword(password, await storedHash(email))).toBe(true);
  });

  it("--password PW still works (CONTRACT §1) but warns on stderr", async () => {
    const email = `pw-${randomUUID()}@example.com`;
    const r = await admin(["create-tenant", "--name", "Loja Argv", "--email", email, "--password", "senha-na-linha-3"]);
    created(r);
    expect(r.stderr).toMatch(/^warning: --password leaves the password in the process list and shell history; use --password-stdin/);
    expect(await verifyPassword("senha-na-linha-3", await storedHash(email))).toBe(true);
  });

  it("refuses (exit 2, one line): no password, an empty stdin, a short one, both flags", async () => {
    const base = ["create-tenant", "--name", "Loja", "--email", `pw-${randomUUID()}@example.com`];
    const cases = await Promise.all([
      admin(base),
      admin([...base, "--password-stdin"], { stdin: "" }),
      admin([...base, "--password-stdin"], { stdin: "curta\n" }),
      admin([...base, "--password-stdin", "--password", "senha-segura-123"], { stdin: "senha-segura-123\n" }),
    ]);
    const lines = cases.map((r) => {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      return r.stderr.trim();
    });
    expect(lines[0]).toMatch(/a password is required: --password-stdin \(or GCS_ADMIN_PASSWORD\)/);
    expect(lines[1]).toMatch(/--password-stdin: standard input held no password/);
    expect(lines[2]).toMatch(/the password must have at least 10 characters/);
    expect(lines[3]).toMatch(/either --password or --password-stdin/);
  });
});
