/**
 * Values that must be one per process, kept on one globalThis key.
 *
 * Why globalThis: the server process loads this code several times. In the production server
 * (.next/serve.cjs) the esbuild bundle of scripts/serve.ts has its own copy of server/, Next.js'
 * instrumentation bundle (instrumentation.ts: database, provider, engines) another, and every route
 * bundle (app/api/…) yet another; `next dev` adds more. A module-level `let` would exist once per copy:
 * two database connections, two rate-limit tables, a wake-up sent to a copy no engine listens to.
 * One key on globalThis is shared by all copies. Add a slot here (name and what it holds), never a
 * new globalThis key elsewhere.
 *
 * Not here: db/client.ts keeps the process's database on its own key (`__gcsDatabase`): db/ is the
 * bottom layer and imports nothing from server/ (.dependency-cruiser.cjs).
 */
export type ProcessSlot =
  /** server/services.ts: the composition root (database, provider, provider events wired), a Promise. */
  | "services"
  /** server/http/rest.ts: trpc-to-openapi's handler and the route table, built once (building the handler builds the OpenAPI document). */
  | "openApiHandler"
  /** server/http/rate-limit.ts: the limiters of the current database. */
  | "rateLimiters"
  /** server/keys/verify-api-key.ts: keys that authenticated recently (API_KEY_CACHE_SECONDS). */
  | "apiKeyCache"
  /** server/webhooks/send-webhook.ts: keep-alive HTTP(S) agents with the SSRF filter, strict and private. */
  | "webhookAgents"
  /** server/webhooks/wake.ts: the webhook engine's wake-up listeners. */
  | "webhookWakers"
  /** server/http/client-address.ts: true once a front server sets the client-address header. */
  | "clientAddressSet"
  /** server/dispatch/wake.ts: the dispatch engines' wake-up listeners. */
  | "dispatchWakers"
  /** server/dispatch/wake.ts: engines told when a campaign is canceled (Inngest stops its run). */
  | "cancelListeners"
  /** server/messaging/gateway-check.ts: the last start-up check of the gateway (Evolution). */
  | "gatewayCheck"
  /** server/launches/launch/wake.ts: the launch engine's wake-up listeners. */
  | "launchWakers"
  /** server/groups/actions/wake.ts: the group-action engine's wake-up listeners. */
  | "groupActionWakers"
  /** server/launches/link/public-link.ts: launches by slug for the public link (at most ~1 s old), and when each last sent link_broken. */
  | "launchLinks"
  /** server/launches/launch/launch-lock.ts: per launch, the chain of group creations in progress. */
  | "launchLocks"
  /** server/groups/members/group-admins.ts: each group's admins as the platform lists them (moderation's exemption), per channel. */
  | "groupAdmins"
  /** server/groups/members/lid-phones.ts: the phone a launch's channels paired a LID with, as moderation last read it. */
  | "lidPhones";

const key = Symbol.for("group-campaigns.process-state");
const holder = globalThis as unknown as Record<symbol, Partial<Record<ProcessSlot, unknown>>>;
holder[key] ??= {};
const state = holder[key];

/** The slot's value, created by `create` the first time any copy of the code asks for it. */
export function processWide<T>(slot: ProcessSlot, create: () => T): T {
  if (!(slot in state)) state[slot] = create();
  return state[slot] as T;
}

/** A slot its owner reads, sets and clears (a value that may be replaced, or dropped after a failure). */
export function processSlot<T>(slot: ProcessSlot): { get(): T | undefined; set(value: T | undefined): void } {
  return {
    get: () => state[slot] as T | undefined,
    set: (value) => {
      if (value === undefined) delete state[slot];
      else state[slot] = value;
    },
  };
}
