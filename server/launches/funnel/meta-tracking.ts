import { encryptSecret } from "../../crypto/secret-box";
import { BadRequest } from "../../errors";
import type { Launch } from "../launch/find-launch";
import type { MetaTrackingChanges, MetaTrackingInput } from "../launch/schema";

/** The launches columns that hold `tracking.meta` (db/schema.ts); all null: off. */
export interface MetaColumns {
  metaPixelId: string | null;
  metaAccessToken: string | null;
  metaEventName: string | null;
  metaTestEventCode: string | null;
}

const off: MetaColumns = { metaPixelId: null, metaAccessToken: null, metaEventName: null, metaTestEventCode: null };

/** create-launch: the columns of `tracking.meta`, the token encrypted (server/crypto/secret-box.ts). */
export function metaColumns(meta: MetaTrackingInput | undefined): MetaColumns {
  if (!meta) return off;
  return {
    metaPixelId: meta.pixel_id,
    metaAccessToken: encryptSecret(meta.access_token),
    metaEventName: meta.event_name,
    metaTestEventCode: meta.test_event_code ?? null,
  };
}

/**
 * edit-launch: `null` turns the events off; the fields sent replace the launch's, the others stay (a launch
 * without tracking.meta needs pixel_id and access_token: 400 naming the one missing). Undefined: no change.
 */
export function editedMetaColumns(launch: Launch, changes: MetaTrackingChanges | null | undefined): MetaColumns | undefined {
  if (changes === undefined) return undefined;
  if (changes === null) return off;
  const current = launch.metaPixelId !== null;
  for (const field of ["pixel_id", "access_token"] as const) {
    if (!current && changes[field] === undefined) throw new BadRequest(`tracking.meta.${field}: is required when the launch has no tracking.meta yet.`);
  }
  return {
    metaPixelId: changes.pixel_id ?? launch.metaPixelId,
    metaAccessToken: changes.access_token !== undefined ? encryptSecret(changes.access_token) : launch.metaAccessToken,
    metaEventName: changes.event_name ?? launch.metaEventName ?? "Lead",
    metaTestEventCode: changes.test_event_code === undefined ? launch.metaTestEventCode : changes.test_event_code,
  };
}

/** info-launch's `tracking`: never the token. */
export function trackingOut(launch: Launch) {
  return {
    meta:
      launch.metaPixelId === null
        ? null
        : {
            pixel_id: launch.metaPixelId,
            event_name: launch.metaEventName ?? "Lead",
            test_event_code: launch.metaTestEventCode,
            access_token_set: true as const,
          },
  };
}
