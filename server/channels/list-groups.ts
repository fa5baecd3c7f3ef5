import type { Db } from "../../db/client";
import { Unavailable } from "../errors";
import { ProviderUnavailableError, type MessagingProvider, type ProviderGroup } from "../messaging/provider";
import { findChannel } from "./find-channel";

/** The groups of one of the tenant's channels, as the platform reports them now. */
export async function listGroups(db: Db, provider: MessagingProvider, tenantId: string, channelId: string) {
  const channel = await findChannel(db, tenantId, channelId);
  return { channel, groups: await queryGroups(provider, channel.id) };
}

/** Provider failures become the spec's 503: the groups cannot be queried. */
export async function queryGroups(provider: MessagingProvider, channelId: string): Promise<ProviderGroup[]> {
  try {
    return await provider.listGroups(channelId);
  } catch (err) {
    if (err instanceof ProviderUnavailableError) throw new Unavailable(`The groups of channel ${channelId} cannot be queried: ${err.message}`);
    throw err;
  }
}
