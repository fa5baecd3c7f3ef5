/**
 * Who counts as a lead in a launch (docs/decisions.md#members): everyone but the staff — the launch's
 * `staff_numbers`, the template's `admins` and the channels' own numbers. Numbers compare through the phone
 * codec (server/phones/phone.ts: any formatting, with or without the Brazilian ninth digit, so staff typed
 * `+55 31 98765-4321` is the participant `553187654321` the gateway reports); an opaque platform id
 * (`…@lid`) only as itself (a LID whose number the launch's channels know is recorded under the number: lid-phones.ts).
 */
import type { LaunchGroupTemplate } from "../../../db/schema";
import type { MessagingProvider } from "../../messaging/provider";
import { phoneSet } from "../../phones/phone";

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
  const staff = phoneSet([...launch.staffNumbers, ...(launch.groupTemplate.admins ?? []), ...own]);
  return (participant) => staff.has(participant);
}
