import type { Db } from "../../db/client";
import { env } from "../env";
import type { MessagingProvider } from "./provider";
import { SimulatorProvider } from "./simulator";

export function createProvider(db: Db): MessagingProvider {
  switch (env.messagingProvider) {
    case "simulator":
      return new SimulatorProvider(db, { pairingMs: env.simulatorPairingMs, groupsPerChannel: env.simulatorGroupsPerChannel });
    case "evolution":
      throw new Error("MESSAGING_PROVIDER=evolution is not available in this build yet; use the simulator.");
  }
}
