import type { Db } from "../../db/client";
import { env } from "../env";
import { EvolutionProvider } from "./evolution";
import type { MessagingProvider } from "./provider";
import { SimulatorProvider } from "./simulator";

export function createProvider(db: Db): MessagingProvider {
  switch (env.messagingProvider) {
    case "simulator":
      return new SimulatorProvider(db, {
        pairingMs: env.simulatorPairingMs,
        groupsPerChannel: env.simulatorGroupsPerChannel,
        rateWindowMs: env.simulatorRateWindowMs,
      });
    case "evolution":
      return new EvolutionProvider(db, {
        apiUrl: env.evolution.apiUrl,
        apiKey: env.evolution.apiKey,
        webhookBaseUrl: env.evolution.webhookBaseUrl,
        timeoutMs: env.evolution.timeoutMs,
        retries: env.evolution.retries,
        groupsTtlMs: env.evolution.groupsTtlSeconds * 1000,
        groupsTimeoutMs: env.evolution.groupsTimeoutMs,
        reconcileAfterMs: env.evolution.reconcileAfterSeconds * 1000,
        reconnectGraceMs: env.evolution.reconnectGraceSeconds * 1000,
      });
  }
}
