/**
 * The delivery key `<campaign>:<group>`: stable per (campaign, group), the key a provider may deduplicate
 * on, reconciliation looks up, and receipts come back with. Providers keep it opaque; only this file
 * makes or reads one.
 *
 * Campaign ids (`campaign_<uuid>`) and group ids (`<digits>@g.us`) hold no colon, so a key is the two
 * joined by one (provider logs store it so, e2e/crash.spec.ts joins them so in SQL). Should a campaign
 * id ever hold a colon or a percent sign, they are percent-escaped; the group part is everything after
 * the first colon, colons included.
 */
export const encodeDeliveryKey = (campaignId: string, groupId: string) => deliveryKeys(campaignId)(groupId);

/** The keys of one campaign's groups, its part escaped once (a loop keys 100 groups of one campaign). */
export function deliveryKeys(campaignId: string): (groupId: string) => string {
  const prefix = `${campaignId.replaceAll("%", "%25").replaceAll(":", "%3A")}:`;
  return (groupId) => prefix + groupId;
}

/** The parts of a key, or null when it is none of ours (no colon, or an empty campaign part). */
export const decodeDeliveryKey = (key: string): { campaignId: string; groupId: string } | null => {
  const i = key.indexOf(":");
  if (i <= 0) return null;
  return { campaignId: key.slice(0, i).replace(/%3A|%25/g, (e) => (e === "%3A" ? ":" : "%")), groupId: key.slice(i + 1) };
};
