/**
 * Who counts as a lead in a launch (docs/decisions.md#members): everyone but the staff — the launch's
 * `staff_numbers`, the template's `admins` and the channels' own numbers. Phone numbers compare by their
 * digits (`+55 11 99999-0001` is `5511999990001`); an opaque platform id (`…@lid`) only as itself (a LID
 * whose number the launch's channels know is recorded under the number: lid-phones.ts).
 */
import type { LaunchGroupTemplate } from "../../db/schema";
import type { MessagingProvider } from "../messaging/provider";

const digitsOf = (s: string) => s.replace(/\D/g, "");

/** The key a participant is compared by: digits for a phone number, the string itself for an opaque id. */
export const participantKey = (participant: string) => (participant.includes("@") ? participant : digitsOf(participant));

export interface StaffSource {
  staffNumbers: string[];
  groupTemplate: Pick<LaunchGroupTemplate, "admins">;
  channelIds: string[];
}

/** The channels' own numbers: asked of the provider once and kept (a number never changes under a channel). */
const ownNumbers = new WeakMap<object, Map<string, string>>();

async function ownNumbersOf(provider: Pick<MessagingProvider, "ownNumber">, channelIds: string[]): Promise<string[]> {
  let known = ownNumbers.get(provider);
  if (!known) {
    known = new Map();
    ownNumbers.set(provider, known);
  }
  const out: string[] = [];
  for (const id of channelIds) {
    let n = known.get(id);
    if (n === undefined) {
      // Not paired yet, or the gateway cannot say now: not kept, asked again next time.
      const asked = await provider.ownNumber(id).catch(() => null);
      if (asked) {
        n = asked;
        known.set(id, asked);
      }
    }
    if (n) out.push(n);
  }
  return out;
}

/** A predicate: is this participant staff in this launch? */
export async function staffMatcher(provider: Pick<MessagingProvider, "ownNumber">, launch: StaffSource): Promise<(participant: string) => boolean> {
  const own = await ownNumbersOf(provider, launch.channelIds);
  const keys = new Set([...launch.staffNumbers, ...(launch.groupTemplate.admins ?? []), ...own].map(participantKey).filter((k) => k !== ""));
  return (participant) => keys.has(participantKey(participant));
}
