import { randomUUID } from "node:crypto";
import { isIP } from "node:net";
import { decryptSecret, encryptSecret } from "../../crypto/secret-box";
import { env } from "../../env";
import { normalizeAddress } from "../../http/client-address";

/**
 * One server event of Meta's Conversions API, as sent in the request's `data` list (docs/launches.md#metas-conversions-api):
 * the parameters of
 * https://developers.facebook.com/documentation/ads-commerce/conversions-api/parameters/server-event and
 * https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters
 * (a website event needs `client_user_agent`, `action_source` and `event_source_url`).
 */
export interface MetaServerEvent {
  event_name: string;
  /** Unix seconds of the click. */
  event_time: number;
  /** Unique per click: Meta keeps one of a browser and a server event with the same name and id. */
  event_id: string;
  action_source: "website";
  event_source_url: string;
  user_data: { client_ip_address?: string; client_user_agent?: string; fbc?: string };
}

/**
 * The event as meta_events keeps it until it is delivered (docs/launches.md#metas-conversions-api): the visitor's
 * address sealed with the secret box (server/crypto/secret-box.ts, ENCRYPTION_KEY), never in the clear. Meta takes
 * `client_ip_address` unhashed, so it cannot be hashed instead; it is opened only to build the request
 * (`deliverable`) and removed from the row once the event is finished (sent, failed, canceled, too old).
 */
export type StoredMetaEvent = Omit<MetaServerEvent, "user_data"> & {
  user_data: Omit<MetaServerEvent["user_data"], "client_ip_address"> & { sealed_client_ip_address?: string };
};

/**
 * The event as Meta takes it: the sealed address opened. One that cannot be opened (ENCRYPTION_KEY changed without
 * ENCRYPTION_KEY_PREVIOUS) goes without it: Meta matches on the rest.
 */
export function deliverable(stored: StoredMetaEvent): MetaServerEvent {
  const { sealed_client_ip_address: sealed, ...userData } = stored.user_data ?? {};
  let address: string | undefined;
  try {
    address = sealed ? decryptSecret(sealed) : undefined;
  } catch {
    address = undefined;
  }
  return { ...stored, user_data: { ...(address ? { client_ip_address: address } : {}), ...userData } };
}

/** What of a visit of the join link the event is made of. */
export interface MetaClick {
  eventName: string;
  at: Date;
  /** The path and query as visited. */
  url: URL;
  clientAddress: string;
  userAgent: string | undefined;
}

/**
 * The event of a counted click, as stored (the address sealed: StoredMetaEvent). `fbc` is built from the visit's `fbclid` as Meta's ClickID guide formats it,
 * `fb.1.<creation time in ms>.<fbclid>` (subdomain index 1; the value kept as it came: it is case sensitive;
 * https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/fbp-and-fbc).
 */
export function metaClickEvent(click: MetaClick): StoredMetaEvent {
  const ms = click.at.getTime();
  const address = normalizeAddress(click.clientAddress);
  const fbclid = click.url.searchParams.get("fbclid");
  return {
    event_name: click.eventName,
    event_time: Math.floor(ms / 1000),
    event_id: randomUUID(),
    action_source: "website",
    event_source_url: `${env.appUrl}${click.url.pathname}${click.url.search}`,
    user_data: {
      ...(isIP(address) !== 0 ? { sealed_client_ip_address: encryptSecret(address) } : {}),
      ...(click.userAgent ? { client_user_agent: click.userAgent } : {}),
      ...(fbclid ? { fbc: `fb.1.${ms}.${fbclid}` } : {}),
    },
  };
}
