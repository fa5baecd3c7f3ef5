/**
 * One pass of the welcome engine (CONTRACT §8 "Welcome"; docs/launches.md#welcome): the batches due at `now` are made
 * (welcome-batches.ts), then the unsent ones sent or settled (send-welcomes.ts). Every launch, or `launchId`'s (a wake-up
 * after its joins were recorded). The engines (inngest/engines/welcomes.ts) run it: the in-process runner
 * (inngest/in-process/welcome-runner.ts) and the `welcome-engine` Inngest function, the same step for both.
 */
import type { Db } from "../../../db/client";
import type { MessagingProvider } from "../../messaging/provider";
import { sendWelcomes } from "./send-welcomes";
import { makeWelcomeBatches } from "./welcome-batches";

export async function runWelcomes(db: Db, provider: MessagingProvider, now: Date, launchId?: string): Promise<{ made: number; sent: number }> {
  const made = await makeWelcomeBatches(db, now, launchId);
  const sent = await sendWelcomes(db, provider, now, launchId);
  return { made, sent };
}
