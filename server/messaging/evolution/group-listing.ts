import { eq } from "drizzle-orm";
import { evolutionInstances } from "../../../db/schema";
import { groupIdPattern } from "../group-id";
import { type ProviderGroup, ProviderUnavailableError } from "../provider";
import { unavailable, type EvolutionContext } from "./context";
import type { Instances } from "./instances";

/** One group of `fetchAllGroups` (Evolution picks Baileys' fields; no participants with getParticipants=false): `owner` is its creator's JID or LID. */
interface ListedGroup {
  id: string;
  subject?: string;
  creation?: number;
  owner?: string;
}

/** A listing of a channel's groups: when it started (ms), the gateway's answer, and the groups campaigns can go to. */
interface GroupListing {
  startedAt: number;
  raw: ListedGroup[];
  groups: ProviderGroup[];
}

/** Groups a campaign can go to: community parents cannot receive messages. */
function sendableGroups(list: unknown): ProviderGroup[] {
  return (Array.isArray(list) ? list : [])
    .filter(
      (g): g is { id: string; subject?: string; announce?: boolean; isCommunity?: boolean } =>
        typeof g?.id === "string" && groupIdPattern.test(g.id) && g.isCommunity !== true,
    )
    .map((g) => ({ id_group: g.id, name: g.subject ?? "", ...(g.announce === true ? { adminsOnly: true } : {}) }));
}

/** A channel's groups as the gateway lists them: cached, one listing at a time. */
export class GroupListings {
  private groupFetches = new Map<string, Promise<GroupListing>>();
  /** Each channel's latest listing, with the fields a creation is recognised by (kept in memory only). */
  private readonly lastListings = new Map<string, GroupListing>();

  constructor(
    private readonly ctx: EvolutionContext,
    private readonly instances: Instances,
  ) {}

  async forgetGroup(channelId: string, groupId: string) {
    const cached = (await this.instances.row(channelId)).groups;
    if (!cached?.some((g) => g.id_group === groupId)) return;
    await this.ctx.db
      .update(evolutionInstances)
      .set({ groups: cached.filter((g) => g.id_group !== groupId) })
      .where(eq(evolutionInstances.channelId, channelId));
  }

  /**
   * Groups of a connected channel. A fresh cache (EVOLUTION_GROUPS_TTL_SECONDS) is served as is; a
   * stale one is served at once while one background listing refreshes it (stale-while-revalidate);
   * with no cache the caller waits for the listing. One listing at a time per channel: concurrent
   * callers share it, because each `fetchAllGroups` is a slow job on the gateway that a client
   * time-out does not stop. Community parents are left out; admins-only groups are flagged.
   */
  async listGroups(channelId: string): Promise<ProviderGroup[]> {
    const status = await this.instances.getStatus(channelId);
    if (status !== "connected") throw new ProviderUnavailableError(`Channel ${channelId} is ${status}: its groups cannot be queried.`);
    const row = await this.instances.row(channelId);
    if (row.groups && row.groupsFetchedAt && Date.now() - row.groupsFetchedAt.getTime() < this.ctx.opts.groupsTtlMs) return row.groups;
    const pending = this.refreshGroups(channelId, row.instanceName);
    if (row.groups) {
      pending.catch((err) => console.warn(`[evolution] background group listing of ${row.instanceName} failed: ${(err as Error).message}`));
      return row.groups;
    }
    try {
      return (await pending).groups;
    } catch (err) {
      unavailable(err, `Evolution API cannot list the groups of ${row.instanceName}`);
    }
  }

  /** The channel's one listing in progress, or a new one. */
  private refreshGroups(channelId: string, instanceName: string): Promise<GroupListing> {
    let pending = this.groupFetches.get(channelId);
    if (!pending) {
      pending = this.fetchGroups(channelId, instanceName).finally(() => this.groupFetches.delete(channelId));
      this.groupFetches.set(channelId, pending);
    }
    return pending;
  }

  /**
   * A listing of the channel's groups that started at or after `since` (ms): the last one when it did,
   * else the one in progress when it did, else a new one — still one listing at a time per channel.
   */
  async groupsListedSince(channelId: string, instanceName: string, since: number): Promise<GroupListing> {
    for (;;) {
      const last = this.lastListings.get(channelId);
      if (last && last.startedAt >= since) return last;
      const running = this.groupFetches.get(channelId);
      if (!running) return this.refreshGroups(channelId, instanceName);
      // Started before `since`: let it end (never two jobs at once on the gateway), then look again.
      await running.catch(() => undefined);
    }
  }

  private async fetchGroups(channelId: string, instanceName: string): Promise<GroupListing> {
    // Taken before the request: a group made before this moment is in the answer.
    const startedAt = Date.now();
    const res = await this.instances.onInstance(channelId, () =>
      this.ctx.client.request<unknown>("GET", `/group/fetchAllGroups/${encodeURIComponent(instanceName)}`, {
        query: { getParticipants: "false" },
        // Never retried: a second call starts a second full job on the gateway (one picture per group, minutes on large accounts).
        retry: false,
        timeoutMs: this.ctx.opts.groupsTimeoutMs ?? 300_000,
      }),
    );
    if (!Array.isArray(res)) throw new ProviderUnavailableError(`Evolution API gave no group list for ${instanceName}.`);
    const groups = sendableGroups(res);
    await this.ctx.db.update(evolutionInstances).set({ groups, groupsFetchedAt: new Date() }).where(eq(evolutionInstances.channelId, channelId));
    const raw = (res as ListedGroup[]).filter((g) => typeof g?.id === "string");
    const listing = { startedAt, raw, groups };
    this.lastListings.set(channelId, listing);
    return listing;
  }
}
