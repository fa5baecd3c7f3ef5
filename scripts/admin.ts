/**
 * The operator's CLI (docs/decisions.md#running-the-service): `npm run admin -- <command> [options]`.
 * Success prints one JSON line on stdout; a failure prints one plain line on stderr and exits
 * 1 (2 for a usage error). On PGlite the data directory belongs to one process: stop the server first.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { Database, Db } from "../db/client";
import { DataDirInUseError, DataDirUnusableError } from "../db/data-dir-lock";
import { env } from "../server/env";
import { DomainError } from "../server/errors";

// The database stack loads in about a second: imported when a command gets that far, so --help
// and usage errors answer at once.
const load = {
  client: () => import("../db/client"),
  schema: () => import("../db/schema"),
  drizzle: () => import("drizzle-orm"),
  signUpInput: async () => (await import("../server/auth/router")).signUpInput,
  createTenant: async () => (await import("../server/auth/create-tenant")).createTenant,
  createApiKey: async () => (await import("../server/keys/create-api-key")).createApiKey,
  partnerApps: () => import("../server/oauth/partner-apps"),
  registerAppInput: async () => (await import("../server/oauth/schema")).registerAppInput,
  members: () => import("../server/members/manage-members"),
  audit: () => import("../server/audit/record-audit"),
};

const roles = ["owner", "admin", "editor", "viewer"] as const;

function memberArgs(values: Values) {
  const role = required(values, "role");
  if (!(roles as readonly string[]).includes(role)) throw new UsageError(`--role must be one of ${roles.join(", ")}, got "${role}"`);
  return { email: required(values, "email"), member: required(values, "member"), role: role as (typeof roles)[number] };
}

const usage = `Usage: npm run admin -- <command> [options]

Commands:
  migrate                                   apply pending database migrations
  create-tenant --name NAME --email EMAIL --password-stdin
                                            create a tenant, its owner and a first API key; the
                                            password (at least 10 characters) is the first line of
                                            standard input, or GCS_ADMIN_PASSWORD when set;
                                            prints {"tenant_id":"…","api_key":"sk_live_…"}
  create-tenant --name NAME --email EMAIL --password PW
                                            the same, the password in the command line: still
                                            accepted, but visible to ps and kept in shell history
  create-api-key --email EMAIL              issue another API key for that account's tenant
  set-channel-limit --email EMAIL --max N   set how many channels the tenant may have
  reencrypt-integrations                    after a key rotation: rewrite integration credentials
                                            still under ENCRYPTION_KEY_PREVIOUS under ENCRYPTION_KEY
  create-partner-app --email EMAIL --name N --redirect-uri U [--redirect-uri U2]
                     --scopes "statistics:read campaigns:read" [--public]
                                            register a partner app, its scopes approved; prints
                                            {"client_id":"…","client_secret":"…"} (no secret with --public)
  add-member --email EMAIL --member MEMBER_EMAIL --role owner|admin|editor|viewer
                                            add an existing user to that account with a role
  set-role --email EMAIL --member MEMBER_EMAIL --role owner|admin|editor|viewer
                                            change a member's role (ends their sessions; the last
                                            owner stays an owner)
  approve-partner-app --client-id ID [--scopes "settings:read"]
                                            approve an app's requested scopes (all when omitted)

Database: PostgreSQL when DATABASE_URL is set, else embedded PGlite under DATA_DIR (default ./.data).
On PGlite stop the server first: one process owns the data directory.`;

/** Wrong command line: exit code 2. */
class UsageError extends Error {}
/** A refusal the operator can act on: exit code 1, message shown as is. */
class AdminError extends Error {}

type Options = NonNullable<ParseArgsConfig["options"]>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

interface Command {
  options: Options;
  /** Checks its arguments first, then opens the database through `db` only when it needs it. */
  run(values: Values, db: () => Promise<Db>): Promise<Record<string, unknown>>;
}

const commands: Record<string, Command> = {
  "reencrypt-integrations": {
    options: {},
    async run(_values, db) {
      const { reencryptIntegrations } = await import("../server/integrations/list-integrations");
      return reencryptIntegrations(await db());
    },
  },

  migrate: {
    options: {},
    async run(_values, db) {
      await db(); // opening migrates
      return env.databaseUrl ? { migrated: true, database: "postgres" } : { migrated: true, database: "pglite", data_dir: env.dataDir };
    },
  },

  "create-tenant": {
    options: { name: { type: "string" }, email: { type: "string" }, password: { type: "string" }, "password-stdin": { type: "boolean" } },
    async run(values, db) {
      const password = await ownerPassword(values);
      const parsed = (await load.signUpInput()).safeParse({ name: values.name, email: values.email, password });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const field = String(issue.path[0] ?? "");
        if (field === "password") {
          throw new UsageError(password === undefined ? "a password is required: --password-stdin (or GCS_ADMIN_PASSWORD)" : `the password ${issue.message}`);
        }
        throw new UsageError(values[field] === undefined ? `--${field} is required` : `--${field} ${issue.message}`);
      }
      const createTenant = await load.createTenant();
      const { tenantId, apiKey } = await createTenant(await db(), parsed.data);
      return { tenant_id: tenantId, api_key: apiKey };
    },
  },

  "create-api-key": {
    options: { email: { type: "string" } },
    async run(values, db) {
      const email = required(values, "email");
      const conn = await db();
      const tenantId = await tenantOf(conn, email);
      const key = await (await load.createApiKey())(conn, tenantId, "Admin CLI key");
      return { tenant_id: tenantId, api_key: key.apiKey };
    },
  },

  "set-channel-limit": {
    options: { email: { type: "string" }, max: { type: "string" } },
    async run(values, db) {
      const email = required(values, "email");
      const max = required(values, "max");
      if (!/^\d{1,9}$/.test(max)) throw new UsageError(`--max must be a whole number ≥ 0, got "${max}"`);
      const conn = await db();
      const tenantId = await tenantOf(conn, email);
      const [{ tenants }, { eq }] = await Promise.all([load.schema(), load.drizzle()]);
      await conn
        .update(tenants)
        .set({ channelLimit: Number(max) })
        .where(eq(tenants.id, tenantId));
      return { tenant_id: tenantId, channel_limit: Number(max) };
    },
  },

  "add-member": {
    options: { email: { type: "string" }, member: { type: "string" }, role: { type: "string" } },
    async run(values, db) {
      const { email, member, role } = memberArgs(values);
      const conn = await db();
      const tenantId = await tenantOf(conn, email);
      const { addMember } = await load.members();
      const { cliActor } = await load.audit();
      const { userId } = await addMember(conn, { tenantId, actor: cliActor, now: new Date() }, { email: member, role });
      return { tenant_id: tenantId, user_id: userId, role };
    },
  },

  "set-role": {
    options: { email: { type: "string" }, member: { type: "string" }, role: { type: "string" } },
    async run(values, db) {
      const { email, member, role } = memberArgs(values);
      const conn = await db();
      const tenantId = await tenantOf(conn, email);
      const [{ users }, { eq }, { changeRole }, { cliActor }] = await Promise.all([load.schema(), load.drizzle(), load.members(), load.audit()]);
      const [user] = await conn.select({ id: users.id }).from(users).where(eq(users.email, member.trim().toLowerCase()));
      if (!user) throw new AdminError(`no user with e-mail ${member}`);
      await changeRole(conn, { tenantId, actor: cliActor, now: new Date() }, { userId: user.id, role });
      return { tenant_id: tenantId, user_id: user.id, role };
    },
  },

  "create-partner-app": {
    options: {
      email: { type: "string" },
      name: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
      scopes: { type: "string" },
      public: { type: "boolean" },
    },
    async run(values, db) {
      const email = required(values, "email");
      const input = {
        name: required(values, "name"),
        redirect_uris: (values["redirect-uri"] as string[] | undefined) ?? [],
        scopes: required(values, "scopes")
          .split(/[\s,]+/)
          .filter(Boolean),
        client_type: values.public ? ("public" as const) : ("confidential" as const),
      };
      const parsed = (await load.registerAppInput()).safeParse(input);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const flag = { redirect_uris: "redirect-uri", scopes: "scopes", name: "name" }[String(issue.path[0])] ?? String(issue.path[0]);
        throw new UsageError(`--${flag} ${issue.message}`);
      }
      const conn = await db();
      const tenantId = await tenantOf(conn, email);
      // The operator registers it, so its requested scopes are approved at once.
      const { app, clientSecret } = await (await load.partnerApps()).registerPartnerApp(conn, tenantId, parsed.data, { approveAll: true });
      return clientSecret ? { client_id: app.id, client_secret: clientSecret } : { client_id: app.id };
    },
  },

  "approve-partner-app": {
    options: { "client-id": { type: "string" }, scopes: { type: "string" } },
    async run(values, db) {
      const clientId = required(values, "client-id");
      const scopes = typeof values.scopes === "string" ? values.scopes.split(/[\s,]+/).filter(Boolean) : undefined;
      return (await load.partnerApps()).approvePartnerScopes(await db(), clientId, scopes);
    },
  },
};

/**
 * The new owner's password, kept out of argv (docs/operations.md#admin-cli): `ps` and shell history show a
 * command line to anyone on the machine. `--password-stdin` reads the first line of standard input (a
 * pipe, a file, or typed); otherwise GCS_ADMIN_PASSWORD. `--password PW` still works (CONTRACT §1) and
 * says on stderr why it should not be used.
 */
async function ownerPassword(values: Values): Promise<string | undefined> {
  const inArgv = values.password;
  if (typeof inArgv === "string" && values["password-stdin"]) throw new UsageError("use either --password or --password-stdin, not both");
  if (values["password-stdin"]) {
    const line = await firstLineOfStdin();
    if (line === "") throw new UsageError("--password-stdin: standard input held no password");
    return line;
  }
  if (typeof inArgv === "string") {
    console.error("warning: --password leaves the password in the process list and shell history; use --password-stdin or GCS_ADMIN_PASSWORD");
    return inArgv;
  }
  return process.env.GCS_ADMIN_PASSWORD || undefined;
}

/** Standard input up to its first line break (or its end), without the break. */
async function firstLineOfStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    if (chunk.includes(0x0a)) break;
  }
  return Buffer.concat(chunks).toString("utf8").split(/\r?\n/)[0];
}

function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value;
}

async function tenantOf(db: Db, email: string): Promise<string> {
  const [{ users }, { eq }] = await Promise.all([load.schema(), load.drizzle()]);
  const [user] = await db.select({ tenantId: users.tenantId }).from(users).where(eq(users.email, email.trim().toLowerCase()));
  if (!user) throw new AdminError(`no account with e-mail ${email}`);
  return user.tenantId;
}

/** One line for the operator: what went wrong, never a stack trace (ADMIN_DEBUG=1 shows it). */
function explain(err: unknown): string {
  if (err instanceof UsageError) return `${err.message} (usage: npm run admin -- --help)`;
  if (err instanceof AdminError || err instanceof DataDirInUseError || err instanceof DataDirUnusableError || err instanceof DomainError) return err.message;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  if (env.databaseUrl && (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "3D000" || code === "28P01")) {
    return `cannot use the PostgreSQL database of DATABASE_URL (${safeUrl(env.databaseUrl)}): ${e.cause?.message ?? e.message ?? code}`;
  }
  return `admin failed: ${e?.cause?.message ?? e?.message ?? String(err)}`;
}

const safeUrl = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--help" || name === "-h" || name === "help") {
    console.log(usage);
    return 0;
  }
  const command = name === undefined ? undefined : commands[name];
  let database: Database | undefined;
  try {
    if (name === undefined) throw new UsageError(`a command is required: ${Object.keys(commands).join(", ")}`);
    if (!command) throw new UsageError(`unknown command "${name}"`);
    if (rest.includes("--help") || rest.includes("-h")) {
      console.log(usage);
      return 0;
    }
    let values: Values;
    try {
      values = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }).values;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const db = async () => {
      const { openDatabase } = await load.client();
      database ??= await openDatabase({ url: env.databaseUrl, dataDir: env.dataDir });
      return database.db;
    };
    const result = await command.run(values, db);
    console.log(JSON.stringify(result));
    return 0;
  } catch (err) {
    console.error(explain(err).replace(/\s*\n\s*/g, " "));
    if (process.env.ADMIN_DEBUG) console.error(err);
    return err instanceof UsageError ? 2 : 1;
  } finally {
    await database?.close().catch(() => {});
  }
}

// Exit explicitly: a database driver left with an open handle must not keep the CLI alive.
main(process.argv.slice(2)).then((code) => process.exit(code));
