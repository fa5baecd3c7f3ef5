import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/client";
import { channels } from "../../db/schema";
import { BadRequest, NotFound, Unavailable } from "../errors";
import { type MessagingProvider, type ProviderGroup, ProviderUnavailableError } from "../messaging/provider";

export interface TestGroup {
  id_channel: string;
  id_group: string;
}

/** A test group as the platform shows it now: its name, or why it cannot be sent to. */
export type TestGroupLookup = TestGroup & ({ name: string; problem?: undefined } | { name?: undefined; problem: NotFound | BadRequest | Unavailable });

/**
 * The test groups looked up on the platform (docs/decisions.md#test-send): each channel must be the tenant's
 * (another tenant's is as unknown as a missing one: 404 naming the field) and reach its group now (400 naming
 * the field); a channel whose groups cannot be queried is a 503. One list-groups call per channel.
 */
export async function lookUpTestGroups(db: Db, provider: MessagingProvider, tenantId: string, groups: TestGroup[], field = "test_groups") {
  const ids = [...new Set(groups.map((g) => g.id_channel))];
  const owned = ids.length
    ? await db
        .select({ id: channels.id })
        .from(channels)
        .where(and(eq(channels.tenantId, tenantId), inArray(channels.id, ids)))
    : [];
  const listed = new Map<string, ProviderGroup[] | Unavailable>();
  for (const { id } of owned) {
    try {
      listed.set(id, await provider.listGroups(id));
    } catch (err) {
      if (!(err instanceof ProviderUnavailableError)) throw err;
      listed.set(id, new Unavailable(`The groups of channel ${id} cannot be queried: ${err.message}`));
    }
  }
  return groups.map((g, i): TestGroupLookup => {
    const reach = listed.get(g.id_channel);
    if (!reach) return { ...g, problem: new NotFound(`${field}.${i}.id_channel: channel ${g.id_channel} not found.`) };
    if (reach instanceof Unavailable) return { ...g, problem: reach };
    const group = reach.find((p) => p.id_group === g.id_group);
    if (!group) return { ...g, problem: new BadRequest(`${field}.${i}.id_group: group ${g.id_group} is not reached by channel ${g.id_channel}.`) };
    return { ...g, name: group.name };
  });
}

/** New test groups, refused at the first that is not the tenant's or not reached (edit-settings). */
export async function checkTestGroups(db: Db, provider: MessagingProvider, tenantId: string, groups: TestGroup[]) {
  const problem = (await lookUpTestGroups(db, provider, tenantId, groups)).find((g) => g.problem)?.problem;
  if (problem) throw problem;
}
