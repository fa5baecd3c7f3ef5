/**
 * OpenAPI-driven fuzz (docs/testing.md "Fuzz"): every operation of /api/openapi.json gets valid samples
 * generated from its schemas and mutated ones (each field removed, wrong types, null, empty, 10,000
 * characters, unicode, NUL, lone surrogates, huge and negative numbers, 5,000 items, objects for
 * strings, unknown fields, odd path parameters, malformed JSON, wrong content type, empty body); the
 * OAuth endpoints and the simulator's control endpoints get hand-written schemas and lists. Asserted:
 * no 5xx, every 4xx in the spec's envelope naming the faulty field, no stack trace or SQL in any body,
 * no state change on a 4xx, the server alive and its memory bounded afterwards.
 *
 * Seeded: FUZZ_SEED (default below, printed at start and in every failure) reproduces a run; FUZZ_RUNS
 * sets the mutated samples per operation (`npm run fuzz` runs more).
 */
import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import { type SQL, sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { rowsOf } from "../../db/params";
import { campaigns, channels, integrations, launches, segmentGroups, segments, tenantSettings, webhookConfigs } from "../../db/schema";
import { newTenant, request, type Api, type ApiResponse } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";
import { authorizeApp, registerApp, signedInUser, type EndUser } from "../oauth-client";
import { arbitraryFor, fieldsOf, invalidUnicode, mayAccept, withValueAt, type Field, type Hint, type Schema } from "./schema-arbitrary";

// Thousands of requests from one address and one key: the limits themselves are tested in rate-limit.test.ts.
for (const k of ["API_KEY", "PARTNER", "OAUTH_IP", "FAILED_AUTH"]) process.env[`RATE_LIMIT_${k}_PER_MINUTE`] = "10000000";

const seed = Number(process.env.FUZZ_SEED ?? 20260615);
const runs = Number(process.env.FUZZ_RUNS ?? 14);
const validRuns = Math.max(2, Math.round(runs / 3));
const timeout = 60_000 + runs * 4_000;
console.log(`[fuzz] FUZZ_SEED=${seed} FUZZ_RUNS=${runs} (reproduce: FUZZ_SEED=${seed} FUZZ_RUNS=${runs} npx vitest run test/fuzz)`);

let server: TestServer;
let doc: { paths: Record<string, Record<string, Operation>> };
let owner: Api;
let other: Api;
let simTenant: Api;
let user: EndUser;
let partnerToken: string;
let app: { client_id: string; client_secret: string; redirect_uri: string };
const ids = { channel: "", segment: "", campaign: "", launch: "", groups: [] as string[], monitoring: "" };
const otherIds = { channel: "", segment: "", campaign: "", launch: "" };
const simIds = { channel: "", group: "", poll: "" };
let rssBefore = 0;

interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean; schema: Schema }[];
  requestBody?: { content: { "application/json": { schema: Schema } } };
}

beforeAll(async () => {
  server = await startTestServer();
  process.env.APP_URL = server.url;
  process.env.NEXTAUTH_URL = server.url;
  doc = (await request(server.url, "GET", "/api/openapi.json")).json;
  const fixture = async (api: Api) => {
    const ch = (await api("POST", "/api/external/create-channel", { name: "Canal" })).json;
    const groups = (await api("GET", `/api/external/list-groups/${ch.id_channel}`)).json.groups.map((g: { id_group: string }) => g.id_group) as string[];
    const seg = (await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [ch.id_channel], groups: groups.slice(0, 5) })).json;
    const camp = (await api("POST", "/api/external/create-campaign/message", { name: "Oferta", id_segment: seg.id_segment, message: "Olá" })).json;
    expect(camp.id_campaign).toMatch(/^campaign_/);
    const launch = (
      await api("POST", "/api/external/create-launch", {
        name: "Turma",
        id_channel: [ch.id_channel],
        group_template: { name: "Turma #{n}" },
        initial_groups: 0,
      })
    ).json;
    expect(launch.id_launch).toMatch(/^launch_/);
    return {
      channel: ch.id_channel as string,
      segment: seg.id_segment as string,
      campaign: camp.id_campaign as string,
      launch: launch.id_launch as string,
      groups,
    };
  };
  owner = await newTenant(server.url, { channelLimit: 1000 });
  const mine = await fixture(owner);
  Object.assign(ids, { ...mine, groups: mine.groups.slice(0, 5), monitoring: mine.groups[10] });
  other = await newTenant(server.url);
  Object.assign(otherIds, await fixture(other));
  simTenant = await newTenant(server.url);
  const sim = await fixture(simTenant);
  const poll = await simTenant("POST", "/api/external/create-campaign/poll", {
    name: "Enquete",
    id_segment: sim.segment,
    poll: { question: "Quando?", options: ["19h", "20h"], multiple_answers: false },
  });
  expect(poll.status).toBe(201);
  Object.assign(simIds, { channel: sim.channel, group: sim.groups[0], poll: poll.json.id_campaign });

  const developer = await newTenant(server.url);
  const registered = await registerApp(developer.tenantId, { scopes: ["statistics:read", "campaigns:read", "settings:read"] });
  app = { client_id: registered.app.client_id, client_secret: registered.client_secret as string, redirect_uri: "http://127.0.0.1:8765/callback" };
  user = await signedInUser(server.url);
  partnerToken = (await authorizeApp(server.url, user, app, "statistics:read campaigns:read")).access_token;
  rssBefore = process.memoryUsage().rss;
}, 120_000);
afterAll(() => server?.close());

// ── Assertions ───────────────────────────────────────────────────────────────────────────────────

/** Stack frames, source paths, SQL or the driver's name: nothing internal may leak into a body. */
const leaks = [/\n\s+at /, /\bat \S+ \(.*:\d+:\d+\)/, /\.ts:\d/, /\.js:\d+:\d+/, /\bSELECT\b/, /\bINSERT INTO\b/, /postgres/i, /pglite/i, /node_modules/];

interface Sent {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

const describeSent = (s: Sent) => `${s.method} ${s.path.slice(0, 300)} headers=${JSON.stringify(s.headers ?? {})} body=${(s.body ?? "").slice(0, 600)}`;

function fail(sent: Sent, res: ApiResponse, why: string): never {
  throw new Error(`[fuzz] ${why}\n  FUZZ_SEED=${seed}\n  sent: ${describeSent(sent)}\n  got ${res.status}: ${res.text.slice(0, 800)}`);
}

/** What every answer must satisfy, whatever the shape of its errors. */
function checkCommon(sent: Sent, res: ApiResponse) {
  if (res.status >= 500) fail(sent, res, "a 5xx");
  for (const re of leaks) if (re.test(res.text)) fail(sent, res, `the body leaks internals (${re})`);
}

/** The spec's envelope on a 4xx: success false, error the reason phrase, message non-empty. */
function checkEnvelope(sent: Sent, res: ApiResponse) {
  checkCommon(sent, res);
  if (res.status < 400) return;
  const b = res.json;
  if (b?.success !== false) fail(sent, res, "a 4xx without success:false");
  if (b.error !== STATUS_CODES[res.status]) fail(sent, res, `error is not the reason phrase ${STATUS_CODES[res.status]}`);
  if (typeof b.message !== "string" || b.message.length === 0) fail(sent, res, "a 4xx without a message");
  if (b.code !== undefined && typeof b.code !== "string") fail(sent, res, "code is not a string");
}

async function send(sent: Sent): Promise<ApiResponse> {
  const res = await fetch(server.url + sent.path, { method: sent.method, headers: sent.headers, body: sent.body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Everything a request could change for a tenant (rows, not counters: names, groups, settings, URLs), every
 * column of every row, in primary-key order. One statement: it runs twice around each refused request,
 * thousands of times a run, where a query per table made it half of the file's time.
 */
async function stateOf(tenantId: string) {
  const db = await getDb();
  // Of the webhook configuration, the URLs only: the signing secret is made on the account's first webhook call, a
  // refused test-webhook too (docs/testing.md "Fuzz").
  const rows = (table: SQL, order: SQL, where: SQL = sql`t.tenant_id = ${tenantId}`) =>
    sql`(select coalesce(json_agg(t order by ${order}), '[]'::json) from ${table} t where ${where})`;
  const [{ state }] = rowsOf<{ state: string }>(
    await db.execute(sql`select json_build_object(
      'channels', ${rows(sql`${channels}`, sql`t.id`)},
      'segments', ${rows(sql`${segments}`, sql`t.id`)},
      'groups', ${rows(sql`${segmentGroups}`, sql`t.segment_id, t.id_group`, sql`t.segment_id in (select id from ${segments} where tenant_id = ${tenantId})`)},
      'campaigns', ${rows(sql`${campaigns}`, sql`t.id`)},
      'launches', ${rows(sql`${launches}`, sql`t.id`)},
      'settings', ${rows(sql`${tenantSettings}`, sql`t.tenant_id`)},
      'webhooks', (select coalesce(json_agg(json_build_object('a', w.campaign_status_url, 'b', w.campaign_progress_url, 'c', w.channel_status_url, 'd', w.group_activity_url)), '[]'::json)
        from ${webhookConfigs} w where w.tenant_id = ${tenantId}
        and coalesce(nullif(w.campaign_status_url, ''), nullif(w.campaign_progress_url, ''), nullif(w.channel_status_url, ''), nullif(w.group_activity_url, '')) is not null),
      'integrations', ${rows(sql`${integrations}`, sql`t.type`)}
    )::text as state`),
  );
  return state;
}

interface Expect {
  /** The dotted field path the 400 must name (the mutated value certainly breaks its schema). */
  field?: string;
  /** The status the answer must have. */
  status?: number;
  /** Any status in the list. */
  statuses?: number[];
}

/** Sends, checks the envelope and the expectation; on a mutating 4xx, that the tenant's state is unchanged. */
async function exchange(sent: Sent, tenantId: string | undefined, want: Expect = {}): Promise<ApiResponse> {
  const mutating = sent.method !== "GET" && tenantId !== undefined;
  const before = mutating ? await stateOf(tenantId) : "";
  const res = await send(sent);
  checkEnvelope(sent, res);
  if (want.status !== undefined && res.status !== want.status) fail(sent, res, `expected ${want.status}`);
  if (want.statuses && !want.statuses.includes(res.status)) fail(sent, res, `expected one of ${want.statuses.join(", ")}`);
  if (want.field !== undefined) {
    if (res.status !== 400) fail(sent, res, `expected 400 naming ${want.field}`);
    if (!String(res.json.message).includes(want.field)) fail(sent, res, `the 400's message does not name ${want.field}`);
  }
  if (mutating && res.status >= 400) {
    const after = await stateOf(tenantId);
    if (after !== before) {
      const [b, a] = [JSON.parse(before), JSON.parse(after)] as Record<string, unknown>[];
      const changed = Object.keys(b).filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]));
      fail(
        sent,
        res,
        `a 4xx changed the tenant's state: ${changed.map((k) => `${k}: ${JSON.stringify(b[k]).slice(0, 300)} → ${JSON.stringify(a[k]).slice(0, 300)}`).join("; ")}`,
      );
    }
  }
  return res;
}

async function check<T>(name: string, property: fc.IAsyncPropertyWithHooks<T>, numRuns: number) {
  try {
    await fc.assert(property, { seed, numRuns, endOnFailure: true });
  } catch (err) {
    (err as Error).message = `${name} (FUZZ_SEED=${seed} FUZZ_RUNS=${runs}): ${(err as Error).message}`;
    throw err;
  }
}

// ── Values ───────────────────────────────────────────────────────────────────────────────────────

const long = "x".repeat(10_000);
/** The wrong values a mutation puts in a field. */
const odd = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    "",
    long,
    "a\u0000b",
    "\ud83d",
    "x\udc00y",
    {},
    { a: "b" },
    [],
    ["x"],
    true,
    0,
    -1,
    1.5,
    -1e308,
    1e308,
    2 ** 63,
    Number.MAX_SAFE_INTEGER + 2,
    "1",
    "true",
    "null",
    "__proto__",
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "Olá 👋🏽 مرحبا 你好 \u202e",
  ),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constant(Array.from({ length: 5000 }, () => "x")),
);

const tenantOf = (security: Operation["security"]) => (security?.some((s) => "partnerOAuth" in s) ? "partner" : "owner");

const hint: Hint = (path, s) => {
  const name = path[path.length - 1];
  const parent = path[path.length - 2];
  if (name === "id_segment") return fc.constant(ids.segment);
  if (name === "id_channel" && s.type === "string") return fc.constant(ids.channel);
  if (parent === "id_channel" && name === "0") return fc.constant(ids.channel);
  if (name === "id_group") return fc.constant(ids.monitoring);
  if (parent === "groups" && name === "0") return fc.constantFrom(...ids.groups);
  if (name?.endsWith("_url") && path[0]?.endsWith("_url")) return fc.constantFrom("", null);
  if (name === "scheduled_at") return fc.constant(undefined);
  if (name === "start" || name === "end") return fc.constantFrom("08:00", "09:30", "18:00");
  return undefined;
};

/** Drops keys whose value is undefined (a hint's way of leaving an optional field out). */
const clean = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(clean)
    : v && typeof v === "object"
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, x]) => x !== undefined)
            .map(([k, x]) => [k, clean(x)]),
        )
      : v;

const ownerHeaders = () => ({ "x-api-key": owner.key });
const partnerHeaders = () => ({ authorization: `Bearer ${partnerToken}` });

// ── The operations of the OpenAPI document ───────────────────────────────────────────────────────

interface Op {
  method: string;
  template: string;
  op: Operation;
  partner: boolean;
  body?: Schema;
}

const realParam = (name: string): string =>
  ({ id_channel: ids.channel, id_segment: ids.segment, id_campaign: ids.campaign, id_launch: ids.launch, type: "campaign_status" })[name] ?? "x";
const otherParam = (name: string): string | undefined =>
  ({ id_channel: otherIds.channel, id_segment: otherIds.segment, id_campaign: otherIds.campaign, id_launch: otherIds.launch })[name];

const fill = (template: string, values: Record<string, string>) => template.replace(/\{([^}]+)\}/g, (_, n: string) => values[n] ?? realParam(n));

function operations(): Op[] {
  return Object.entries(doc.paths).flatMap(([template, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      op,
      partner: tenantOf(op.security) === "partner",
      body: op.requestBody?.content["application/json"].schema,
    })),
  );
}

/** A body each operation with a path parameter accepts, so that the path decides the answer. */
const validBodies = (): Record<string, string> => ({
  "/api/external/edit-channel/{id_channel}": JSON.stringify({ name: "Canal" }),
  "/api/external/edit-segment/{id_segment}": JSON.stringify({ name: "Seg" }),
  "/api/external/edit-monitoring/group/{id_segment}": JSON.stringify({ id_channel: ids.channel, id_group: ids.monitoring }),
  "/api/external/edit-launch/{id_launch}": JSON.stringify({ name: "Turma" }),
  "/api/external/launch-groups/{id_launch}": JSON.stringify({ adopt: { id_channel: ids.channel, groups: [ids.groups[0]] } }),
  "/api/external/launch-leads/{id_launch}": JSON.stringify({ leads: [{ phone: "11987654321" }] }),
  "/api/external/edit-series/{id_series}": JSON.stringify({ name: "Série" }),
  "/api/external/undo-moderation/{id_launch}": JSON.stringify({ id_group: ids.groups[0], participant: "5511987654321" }),
});

/** Odd path parameter values (raw, already as they go on the wire). */
const oddPathValues = [
  "..%2F..%2Flist-settings",
  "..",
  "%2e%2e",
  "x".repeat(3000),
  encodeURIComponent("канал_ü_👋"),
  "%00",
  "%E0%A4%A",
  "%",
  "channel_00000000-0000-0000-0000-000000000000",
  "segment_00000000-0000-0000-0000-000000000000",
  "campaign_00000000-0000-0000-0000-000000000000",
  "launch_00000000-0000-0000-0000-000000000000",
  "CHANNEL_0B6F1C3E-8F7A-4D0E-9A51-3C2D8E4F5A60",
  "%20",
  "null",
  "1e400",
];

describe("OpenAPI fuzz", () => {
  it("the document lists the operations the fuzz expects", () => {
    const all = operations();
    expect(all.length).toBeGreaterThanOrEqual(20);
    expect(all.filter((o) => o.partner).map((o) => o.template)).toEqual(["/api/external/partner/campaigns", "/api/external/partner/statistics"]);
  });

  it(
    "owner operations: valid samples and mutated bodies",
    async () => {
      for (const o of operations().filter((x) => !x.partner && x.body)) {
        const schema = o.body as Schema;
        const fields = fieldsOf(schema);
        const sample = arbitraryFor(schema, hint).map(clean);
        const path = fill(o.template, {});
        const idempotent = o.op.parameters?.some((p) => p.name === "Idempotency-Key");
        const key = idempotent ? fc.option(fc.constantFrom("fresh", "", " ", "k".repeat(300), "é"), { nil: undefined }) : fc.constant(undefined);
        const headersWith = (k: string | undefined) => ({
          ...ownerHeaders(),
          "content-type": "application/json",
          ...(k === undefined ? {} : { "idempotency-key": k === "fresh" ? randomUUID() : k }),
        });

        await check(
          `${o.method} ${o.template} valid`,
          fc.asyncProperty(sample, key, async (body, k) => {
            await exchange({ method: o.method, path, body: JSON.stringify(body), headers: headersWith(k) }, owner.tenantId);
          }),
          validRuns,
        );

        const unknown = fc.record({ kind: fc.constant("unknown" as const), field: fc.constantFrom<Field | undefined>(undefined, ...fields), value: odd });
        // A body without fields (e.g. rotate-hooks-token's `{}`) can only gain unknown ones.
        const mutation =
          fields.length === 0
            ? unknown
            : fc.oneof(
                fc.record({ kind: fc.constant("remove" as const), field: fc.constantFrom(...fields) }),
                fc.record({ kind: fc.constant("set" as const), field: fc.constantFrom(...fields), value: odd }),
                unknown,
              );
        await check(
          `${o.method} ${o.template} mutated`,
          fc.asyncProperty(sample, mutation, key, async (body, m, k) => {
            let mutated: unknown;
            let field: string | undefined;
            if (m.kind === "remove") {
              mutated = withValueAt(body, m.field.path, undefined, true);
              if (m.field.required && m.field.path.length === 1) field = m.field.path[0];
            } else if (m.kind === "set") {
              mutated = withValueAt(body, m.field.path, m.value);
              if (!mayAccept(m.field.schema, m.value)) field = m.field.path.join(".");
            } else {
              const at = m.field?.schema.properties ? m.field.path : [];
              mutated = withValueAt(body, [...at, "zz_unknown_field"], m.value);
            }
            const text = JSON.stringify(mutated);
            // JSON.stringify writes a lone surrogate as \udXXX, which the server reads back as one.
            if (m.kind === "set" && typeof m.value === "string" && invalidUnicode(m.value) && !mayAccept(m.field.schema, m.value))
              field = m.field.path.join(".");
            // An invalid Idempotency-Key is refused before the body is read.
            if (k !== undefined && k !== "fresh") field = undefined;
            await exchange({ method: o.method, path, body: text, headers: headersWith(k) }, owner.tenantId, { field });
          }),
          runs,
        );
      }
    },
    timeout * 3,
  );

  it(
    "owner operations: malformed JSON, wrong content type, empty body, odd top-level values",
    async () => {
      const broken: { body: string; type?: string; status?: number }[] = [
        { body: '{"name":', status: 400 },
        { body: "{'name':'x'}", status: 400 },
        { body: '{"name":"x"', status: 400 },
        { body: "\u0000", status: 400 },
        { body: '{"name":"x"}', type: "text/plain", status: 400 },
        { body: "name=x", type: "application/x-www-form-urlencoded", status: 400 },
        { body: '{"name":"x"}', type: "multipart/form-data; boundary=x", status: 400 },
        { body: "" },
        { body: "   " },
        { body: "null" },
        { body: "[]" },
        { body: "42" },
        { body: '"x"' },
        { body: "true" },
        { body: '{"__proto__":{"admin":true}}' },
        { body: '{"constructor":{"prototype":{"x":1}}}' },
        { body: `[${"[".repeat(5000)}${"]".repeat(5000)}]` },
        { body: `${'{"a":'.repeat(3000)}1${"}".repeat(3000)}` },
        { body: '{"name":"\\ud800"}' },
        { body: '{"name":"a\\u0000b"}' },
      ];
      for (const o of operations().filter((x) => !x.partner && x.method !== "GET")) {
        const path = fill(o.template, {});
        for (const b of broken) {
          const headers: Record<string, string> = { ...ownerHeaders(), "content-type": b.type ?? "application/json" };
          const res = await exchange({ method: o.method, path, body: b.body, headers }, owner.tenantId);
          // A body-less POST (pause, resume, cancel, test-webhook) ignores what it is sent.
          if (o.body && b.status !== undefined && res.status !== b.status) fail({ method: o.method, path, body: b.body, headers }, res, `expected ${b.status}`);
          // An empty or non-object body is refused by any operation with a required field, naming it.
          const required = o.body?.required ?? [];
          if (o.body && ["", "   ", "null"].includes(b.body) && required.length && !String(res.json.message).includes(required[0]))
            fail({ method: o.method, path, body: b.body, headers }, res, `does not name the required ${required[0]}`);
        }
      }
    },
    timeout,
  );

  it(
    "path parameters: another tenant's id is 404, odd values are 400 or 404",
    async () => {
      for (const o of operations().filter((x) => x.template.includes("{"))) {
        const name = /\{([^}]+)\}/.exec(o.template)?.[1] as string;
        // A valid body for the operations that take one (launch-leads/{id_launch} is also a GET, which takes none).
        const body = o.body ? validBodies()[o.template] : undefined;
        const headers = { ...ownerHeaders(), "content-type": "application/json" };
        const foreign = otherParam(name);
        if (foreign) {
          const before = await stateOf(other.tenantId);
          await exchange({ method: o.method, path: fill(o.template, { [name]: foreign }), body, headers }, owner.tenantId, { status: 404 });
          expect(await stateOf(other.tenantId), "another tenant's resource changed").toBe(before);
        }
        for (const v of oddPathValues) {
          await exchange({ method: o.method, path: fill(o.template, { [name]: v }), body, headers }, owner.tenantId, { statuses: [400, 404] });
        }
      }
    },
    timeout,
  );

  it(
    "credentials: none, wrong, the alias header, a partner token on owner operations, an API key on partner operations",
    async () => {
      for (const o of operations()) {
        const path = fill(o.template, {});
        const body = o.body ? JSON.stringify(fc.sample(arbitraryFor(o.body, hint).map(clean), { seed, numRuns: 1 })[0]) : undefined;
        const json = { "content-type": "application/json" };
        const refused = [401, 403];
        const credentials: Record<string, string>[] = [
          {},
          { "x-api-key": "sk_live_wrong" },
          { "x-api-key": "x".repeat(5000) },
          { authorization: "Bearer ???" },
          { authorization: "Basic Og==" },
        ];
        for (const auth of credentials) {
          await exchange({ method: o.method, path, body, headers: { ...json, ...auth } }, owner.tenantId, { status: 401 });
        }
        if (o.partner) {
          await exchange({ method: o.method, path, headers: ownerHeaders() }, undefined, { status: 401 });
        } else {
          await exchange({ method: o.method, path, body, headers: { ...json, ...partnerHeaders() } }, owner.tenantId, { statuses: refused });
          await exchange({ method: o.method, path, body, headers: { ...json, "api-key": owner.key } }, owner.tenantId);
        }
      }
    },
    timeout,
  );

  it(
    "partner operations: query parameters",
    async () => {
      const value = fc.oneof(
        fc.integer({ min: -5, max: 400 }).map(String),
        fc.constantFrom("", "0", "-1", "abc", "1.5", "1e400", "99999999999999999999999", "0x10", " 1", "1;DROP TABLE campaigns", "%00", "NaN", "Infinity"),
        fc.string({ unit: "binary", maxLength: 20 }).map(encodeURIComponent),
        fc.constant("9".repeat(5000)),
      );
      for (const o of operations().filter((x) => x.partner)) {
        const names = (o.op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
        await check(
          `${o.method} ${o.template} query`,
          fc.asyncProperty(fc.constantFrom(...names, "zz_unknown"), value, fc.boolean(), async (name, v, twice) => {
            const q = `${name}=${v}${twice ? `&${name}=2` : ""}`;
            await exchange({ method: "GET", path: `${o.template}?${q}`, headers: partnerHeaders() }, undefined);
          }),
          runs,
        );
      }
    },
    timeout,
  );
});

// ── Simulator control endpoints ──────────────────────────────────────────────────────────────────

const simulatorBodies: { path: () => string; schema: Schema }[] = [
  {
    path: () => `/api/simulator/channels/${simIds.channel}/state`,
    schema: { type: "object", properties: { connected: { type: "boolean" } }, required: ["connected"] },
  },
  {
    path: () => `/api/simulator/groups/${encodeURIComponent(simIds.group)}/failures`,
    schema: {
      anyOf: [
        { type: "object", properties: { fail_next: { type: "integer", minimum: 0, maximum: 1_000_000 } }, required: ["fail_next"] },
        { type: "object", properties: { always: { type: "boolean" } }, required: ["always"] },
      ],
    },
  },
  {
    path: () => `/api/simulator/polls/${simIds.poll}/${encodeURIComponent(simIds.group)}/votes`,
    schema: {
      type: "object",
      properties: { votes: { type: "object", properties: { "19h": { type: "integer", minimum: 0, maximum: 1024 } }, required: ["19h"] } },
      required: ["votes"],
    },
  },
  { path: () => "/api/simulator/latency", schema: { type: "object", properties: { ms: { type: "integer", minimum: 0, maximum: 60_000 } }, required: ["ms"] } },
];

describe("simulator fuzz", () => {
  it(
    "control bodies, odd paths and queries",
    async () => {
      const headers = () => ({ "x-api-key": simTenant.key, "content-type": "application/json" });
      for (const s of simulatorBodies) {
        const fields = s.schema.anyOf ? s.schema.anyOf.flatMap((a) => fieldsOf(a)) : fieldsOf(s.schema);
        await check(
          `POST ${s.path()}`,
          fc.asyncProperty(
            arbitraryFor(s.schema, () => undefined),
            fc.constantFrom(...fields),
            odd,
            fc.boolean(),
            async (body, f, v, remove) => {
              const mutated = withValueAt(body, f.path, v, remove);
              const field = !remove && !s.schema.anyOf && !mayAccept(f.schema, v) ? f.path.join(".") : undefined;
              await exchange({ method: "POST", path: s.path(), body: JSON.stringify(mutated), headers: headers() }, undefined, { field });
            },
          ),
          runs,
        );
        for (const body of ['{"x":', "", "null", "[]", '"x"', long]) await exchange({ method: "POST", path: s.path(), body, headers: headers() }, undefined);
      }
      for (const v of oddPathValues) {
        await exchange({ method: "POST", path: `/api/simulator/channels/${v}/state`, body: '{"connected":true}', headers: headers() }, undefined, {
          statuses: [400, 404],
        });
        await exchange({ method: "POST", path: `/api/simulator/groups/${v}/failures`, body: '{"always":false}', headers: headers() }, undefined, {
          statuses: [400, 404],
        });
        for (const path of [`/api/simulator/polls/${v}/${encodeURIComponent(simIds.group)}/votes`, `/api/simulator/polls/${simIds.poll}/${v}/votes`]) {
          await exchange({ method: "POST", path, body: '{"votes":{"19h":1}}', headers: headers() }, undefined, { statuses: [400, 404] });
        }
        await exchange({ method: "GET", path: `/api/simulator/messages?id_channel=${v}&id_group=${v}&id_campaign=${v}`, headers: headers() }, undefined, {
          statuses: [200, 400],
        });
      }
      for (const path of ["/api/simulator/", "/api/simulator/x", "/api/simulator/latency/..", "/api/simulator/messages/%E0%A4%A"]) {
        await exchange({ method: "POST", path, body: "{}", headers: headers() }, undefined, { statuses: [404, 405] });
      }
      await exchange({ method: "POST", path: "/api/simulator/latency", body: '{"ms":0}', headers: {} }, undefined, { status: 401 });
    },
    timeout,
  );
});

// ── OAuth endpoints (not in the OpenAPI document) ────────────────────────────────────────────────

/** Token, revoke, introspect: RFC 6749 §5.2 errors, `{error, error_description?}`. */
function checkOAuthToken(sent: Sent, res: ApiResponse) {
  checkCommon(sent, res);
  if (res.status >= 400 && (typeof res.json?.error !== "string" || res.json.error.length === 0)) fail(sent, res, "an OAuth error without an error code");
}

/** Authorize and decision: the spec's consent shape `{success:false, error:<oauth code>, message}`. */
function checkConsent(sent: Sent, res: ApiResponse) {
  checkCommon(sent, res);
  if (res.status >= 400) {
    const b = res.json;
    if (b?.success !== false || typeof b.error !== "string" || typeof b.message !== "string" || !b.message) fail(sent, res, "not the consent error shape");
  }
}

const oauthValue = fc.oneof(
  fc.constantFrom(
    "",
    "x",
    "x".repeat(10_000),
    "a\u0000b",
    "\ud800",
    "%",
    "%E0%A4%A",
    "S256",
    "plain",
    "code",
    "token",
    "authorization_code",
    "refresh_token",
    "client_credentials",
  ),
  fc.string({ unit: "binary", maxLength: 30 }),
);

describe("OAuth fuzz", () => {
  it(
    "token, revoke and introspect: odd forms and client credentials",
    async () => {
      const basic = (s: string) => `Basic ${Buffer.from(s).toString("base64")}`;
      const authHeader = fc.oneof(
        fc.constant(undefined),
        fc.constant(() => basic(`${app.client_id}:${app.client_secret}`)),
        fc.constantFrom("Basic %%%", "Basic Og==", basic("%zz:x"), basic("%E0%A4%A:%"), basic(`${"x".repeat(5000)}:y`), "Bearer x", basic("a\u0000b:c")),
      );
      const form = fc.dictionary(
        fc.constantFrom(
          "grant_type",
          "code",
          "redirect_uri",
          "code_verifier",
          "refresh_token",
          "client_id",
          "client_secret",
          "token",
          "token_type_hint",
          "scope",
          "zz",
        ),
        oauthValue,
        { maxKeys: 6 },
      );
      const contentType = fc.constantFrom("application/x-www-form-urlencoded", "application/json", "text/plain", undefined);
      const endpoint = fc.constantFrom("/api/oauth/token", "/api/oauth/revoke", "/api/oauth/introspect");
      await check(
        "OAuth token endpoints",
        fc.asyncProperty(endpoint, form, authHeader, contentType, fc.boolean(), async (path, f, auth, type, asJson) => {
          const headers: Record<string, string> = {};
          if (type) headers["content-type"] = type;
          if (auth) headers.authorization = typeof auth === "function" ? auth() : auth;
          let body: string;
          try {
            body = asJson ? JSON.stringify(f) : new URLSearchParams(f).toString();
          } catch {
            body = "";
          }
          const sent = { method: "POST", path, body, headers };
          checkOAuthToken(sent, await send(sent));
        }),
        runs * 4,
      );
      for (const body of ["%", "a=%E0%A4%A", "=&=&", "x".repeat(70_000)]) {
        const sent = { method: "POST", path: "/api/oauth/token", body, headers: { "content-type": "application/x-www-form-urlencoded" } };
        checkOAuthToken(sent, await send(sent));
      }
    },
    timeout,
  );

  it(
    "authorize and decision: odd parameters and cookies",
    async () => {
      const fieldNames = ["client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method", "approve", "zz"];
      const fields = fc.dictionary(fc.constantFrom(...fieldNames), oauthValue, { maxKeys: 8 });
      const cookie = fc.constantFrom<(() => string) | string | undefined>(
        undefined,
        () => user.cookie,
        "next-auth.session-token=%E0%A4%A",
        "next-auth.session-token=%",
        "next-auth.session-token=garbage",
        `next-auth.session-token=${"x".repeat(6000)}`,
        "=;;==; a",
      );
      await check(
        "OAuth authorize/decision",
        fc.asyncProperty(fields, cookie, fc.boolean(), fc.boolean(), async (f, c, decision, realClient) => {
          if (realClient) f.client_id = app.client_id;
          const headers: Record<string, string> = {};
          if (c) headers.cookie = typeof c === "function" ? c() : c;
          const query = new URLSearchParams(f).toString();
          const sent: Sent = decision
            ? {
                method: "POST",
                path: "/api/oauth/authorize/decision",
                body: query,
                headers: { ...headers, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
              }
            : { method: "GET", path: `/api/oauth/authorize?${query}`, headers };
          const res = await send(sent);
          // The decision redirects (303) on success and to the redirect URI with an error on refusal.
          if (res.status !== 303) checkConsent(sent, res);
        }),
        runs * 4,
      );
    },
    timeout,
  );
});

describe("after the fuzz", () => {
  it("the server still answers and its memory is bounded", async () => {
    const res = await owner("GET", "/api/external/list-settings");
    expect(res.status).toBe(200);
    const partner = await request(server.url, "GET", "/api/external/partner/statistics", undefined, partnerHeaders());
    expect(partner.status).toBe(200);
    const growthMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    console.log(`[fuzz] RSS growth during the fuzz: ${growthMb.toFixed(0)} MB`);
    expect(growthMb).toBeLessThan(400);
  });
});
