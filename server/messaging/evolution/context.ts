import { createHash } from "node:crypto";
import type { Db } from "../../../db/client";
import { type ProviderEvents, ProviderUnavailableError } from "../provider";
import { type EvolutionClient, EvolutionHttpError, EvolutionUnreachableError } from "./client";

export interface EvolutionOptions {
  apiUrl: string;
  apiKey: string;
  /** Our public base address; the gateway posts to `<base>/api/evolution/webhook/<channel>` with the secret in a header. */
  webhookBaseUrl: string;
  timeoutMs: number;
  retries: number;
  groupsTtlMs: number;
  /** Time-out of one group listing (EVOLUTION_GROUPS_TIMEOUT_MS, default 300 s): it is never retried. */
  groupsTimeoutMs?: number;
  /** How long a pairing code request waits for the logged-out session to reach `close` (default 15 s). */
  closeWaitMs?: number;
  backoffMs?: number;
  /** A lost answer is looked up this long after the attempt (EVOLUTION_RECONCILE_AFTER_SECONDS). Default 300 s. */
  reconcileAfterMs?: number;
  /** Time-out of one group creation (never retried). Default 60 s. */
  groupCreateTimeoutMs?: number;
  /**
   * How long a paired number may be reconnecting (the gateway says `connecting`, or sends answer `Connection Closed`)
   * and still count as able to send (EVOLUTION_RECONNECT_GRACE_SECONDS). Default 30 s.
   */
  reconnectGraceMs?: number;
  /** How long the gateway's version is trusted before it is read again (default 10 min; a reconnect reads it again too). */
  versionTtlMs?: number;
}

/** What every part of the provider shares: the database, the options, the gateway's client and the event bus. */
export interface EvolutionContext {
  db: Db;
  opts: EvolutionOptions;
  client: EvolutionClient;
  events: ProviderEvents;
  /** A lost answer is looked up this long after the attempt. */
  reconcileAfterMs: number;
}

export const sha256 = (value: string) => createHash("sha256").update(value).digest();

/** The gateway no longer has this instance (deleted by hand, DEL_INSTANCE, a wiped database). */
export const isLostInstance = (err: unknown) =>
  err instanceof EvolutionHttpError && err.status === 404 && /instance does not exist|instance.*not found/i.test(err.message);

export function timestampOf(value: string | number | undefined): Date | undefined {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000) : undefined;
}

/** A gateway failure on anything but a send: the platform cannot answer now. */
export function unavailable(err: unknown, what: string): never {
  if (err instanceof ProviderUnavailableError) throw err;
  if (err instanceof EvolutionUnreachableError || err instanceof EvolutionHttpError) {
    throw new ProviderUnavailableError(`${what}: ${err.message}`);
  }
  throw err;
}
