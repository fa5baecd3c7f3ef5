import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterEach } from "vitest";
import { getDb } from "../db/client";
import { tenants } from "../db/schema";
import { createTenant } from "../server/auth/create-tenant";

export interface Api {
  (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  key: string;
  tenantId: string;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** A fresh tenant and a client that calls the REST facade with its API key. */
export async function newTenant(baseUrl: string, opts: { name?: string; channelLimit?: number } = {}): Promise<Api> {
  const db = await getDb();
  const email = `t-${randomUUID()}@example.test`;
  const { tenantId, apiKey } = await createTenant(db, { name: opts.name ?? "Loja Teste", email, password: "senha-segura-123" });
  if (opts.channelLimit) await db.update(tenants).set({ channelLimit: opts.channelLimit }).where(eq(tenants.id, tenantId));
  return apiFor(baseUrl, tenantId, apiKey);
}

/** A client that calls the REST facade with a tenant's API key. */
export function apiFor(baseUrl: string, tenantId: string, apiKey: string): Api {
  const api = (async (method, path, body, headers = {}) => request(baseUrl, method, path, body, { "x-api-key": apiKey, ...headers })) as Api;
  api.key = apiKey;
  api.tenantId = tenantId;
  return api;
}

export async function request(baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] ??= "application/json";
  }
  const res = await fetch(baseUrl + path, init);
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
 * How often a test polls the REST API, at most: twice a second. An API key may make 300 requests a minute; at
 * `until`'s 50 ms a wait of 15 s spends them (then every answer is 429), and on a loaded machine the polling
 * itself takes CPU from what it waits for.
 */
export const restPollMs = 500;

/** Calls `fn` every `everyMs` (50 ms; `restPollMs` for the REST API) until `ok` holds or `ms` pass; returns the last value either way. */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000, everyMs = 50): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Polls `probe` (as `until` does) until it gives a truthy value, returned; throws after `ms`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000, everyMs = 50): Promise<T> {
  const v = await until(async () => probe(), Boolean, ms, everyMs);
  if (!v) throw new Error(`timed out waiting for ${what}`);
  return v;
}

/** Asserts the spec's error envelope and returns it. */
export function expectEnvelope(res: ApiResponse, status: number, reason: string) {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  const body = res.json;
  if (body?.success !== false || body.error !== reason || typeof body.message !== "string" || body.message.length === 0) {
    throw new Error(`not the error envelope: ${res.text}`);
  }
  return body as { success: false; error: string; message: string; code?: string; current?: number; max?: number };
}

/** The variables that select Inngest (inngestConfigured in server/env.ts). */
export const inngestEnv = ["INNGEST_EVENT_KEY", "INNGEST_SIGNING_KEY", "INNGEST_DEV"] as const;

/** For test files that switch the engine by setting INNGEST_*: put the variables back after each test. */
export function restoreInngestEnvAfterEach() {
  const saved = Object.fromEntries(inngestEnv.map((k) => [k, process.env[k]]));
  afterEach(() => {
    for (const k of inngestEnv) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
}

/** edit-settings' body for zero pacing (no pause between loops or campaigns) at `dispatchesPerLoop` groups a loop. */
export const zeroPacingWith = (dispatchesPerLoop: number) => ({
  dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: dispatchesPerLoop, min_campaign_interval: 0, max_campaign_interval: 0 },
});

/** Zero pacing, 10 groups a loop: edit-settings' body for tests that want campaigns to finish at once. */
export const zeroPacing = zeroPacingWith(10);

/** A new tenant with `n` simulator channels: their ids, numbers (info-channel's `phone`) and the groups each lists; `settings` first when given. */
export async function tenantWithNumbers(baseUrl: string, n: number, settings?: unknown) {
  const t = await newTenant(baseUrl, { channelLimit: 20 });
  if (settings !== undefined) {
    const res = await t("PATCH", "/api/external/edit-settings", settings);
    if (res.status !== 200) throw new Error(`edit-settings answered ${res.status}: ${res.text}`);
  }
  const numbers: { id: string; phone: string; groups: string[] }[] = [];
  for (let i = 0; i < n; i++) {
    const id = (await t("POST", "/api/external/create-channel", { name: `Número ${i + 1}` })).json.id_channel as string;
    const phone = (await t("GET", `/api/external/info-channel/${id}`)).json.phone as string;
    const groups = ((await t("GET", `/api/external/list-groups/${id}`)).json.groups as { id_group: string }[]).map((g) => g.id_group);
    numbers.push({ id, phone, groups });
  }
  return { t, numbers };
}

/** Another of the tenant's numbers joins each group and is promoted there (simulator §7: it reaches them from then on), as launch teams do. */
export async function joinAsAdmin(t: Api, groups: string[], phone: string) {
  for (const g of groups) {
    for (const body of [{ join: [phone] }, { promote: [phone] }]) {
      const res = await t("POST", `/api/simulator/groups/${encodeURIComponent(g)}/participants`, body);
      if (res.status !== 200) throw new Error(`simulator participants ${JSON.stringify(body)} answered ${res.status}: ${res.text}`);
    }
  }
}
