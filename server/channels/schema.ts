import { z } from "zod";
import { name } from "../text";
import { tokenSchema } from "../ids";
import { idGroup } from "../messaging/group-id";
import { numberHealthShape } from "../settings/schema";
import { channelHealth, channelStatus } from "../webhooks/events";

// A channel's status and health are what channel_status webhooks carry too: defined with the events.
export { channelHealth, channelStatus };

const isoTime = z.iso.datetime({ offset: true });

export const idChannel = tokenSchema("channel").meta({ description: "Channel token", example: "channel_0b6f1c3e-8f7a-4d0e-9a51-3c2d8e4f5a60" });

export { idGroup };

const channelName = name();

export const createChannelInput = z.object({ name: channelName });
export const createChannelOutput = z.object({
  success: z.literal(true),
  name: z.string(),
  id_channel: z.string(),
  channel_ref: z.string().meta({
    description:
      "The messaging platform's own reference for this connection: the Evolution API instance name (equal to id_channel) with MESSAGING_PROVIDER=evolution, `sim-…` with the simulator. A new channel is `connecting` until its number is paired (QR code or pairing code, in the dashboard).",
  }),
  status: channelStatus,
  timestamp: z.iso.datetime({ offset: true }),
});

const limitField = <T extends z.ZodType>(field: T) =>
  field.nullable().meta({ description: `${field.description ?? ""} On a channel: null means the tenant's value (number_health).`.trim() });

/** A channel's own budget: the `number_health` fields, null = the tenant's value. */
const limitsShape = {
  daily_message_cap: limitField(numberHealthShape.daily_message_cap),
  warmup_days: limitField(numberHealthShape.warmup_days),
  warmup_first_day_cap: limitField(numberHealthShape.warmup_first_day_cap),
  min_send_gap_seconds: limitField(numberHealthShape.min_send_gap_seconds),
  group_create_cap: limitField(numberHealthShape.group_create_cap),
};
export const channelLimits = z
  .object(limitsShape)
  .meta({ description: "This channel's overrides of the tenant's number_health settings, every field present; null: the tenant's value." });

/** CONTRACT §7 "Reading channels through the API": list-channels' items, info-channel and edit-channel. */
export const channelObject = z.object({
  id_channel: z.string(),
  name: z.string(),
  status: channelStatus,
  phone: z.string().nullable().meta({ description: "The channel's own number, digits with country code; null until paired.", example: "5511912345678" }),
  health: channelHealth,
  limits: channelLimits,
  created_at: isoTime,
});
export type ChannelObject = z.infer<typeof channelObject>;

export const listChannelsOutput = z.object({ success: z.literal(true), channels: z.array(channelObject) });
export const infoChannelInput = z.object({ id_channel: idChannel });
export const infoChannelOutput = channelObject.extend({ success: z.literal(true) });

export const editChannelInput = z.object({
  id_channel: idChannel,
  name: channelName,
  limits: z
    .strictObject(
      Object.fromEntries(Object.entries(limitsShape).map(([k, v]) => [k, v.optional()])) as {
        [K in keyof typeof limitsShape]: z.ZodOptional<(typeof limitsShape)[K]>;
      },
      {
        error: (iss) =>
          iss.code === "unrecognized_keys"
            ? `unknown propert${iss.keys.length > 1 ? "ies" : "y"} ${iss.keys.join(", ")} (allowed: ${Object.keys(limitsShape).join(", ")})`
            : undefined,
      },
    )
    .optional()
    .meta({
      description:
        "Beyond the published API: this channel's own budget, only the fields to change; a number replaces the tenant's value for this channel, " +
        "null goes back to it (CONTRACT §7 Budgets).",
    }),
});
export const editChannelOutput = channelObject.extend({
  success: z.literal(true),
  message: z.string(),
  timestamp: isoTime,
});

export const listGroupsInput = z.object({ id_channel: idChannel });
export const group = z.object({ id_group: z.string(), name: z.string() });
export const listGroupsOutput = z.object({
  success: z.literal(true),
  id_channel: z.string(),
  total_groups: z.number().int(),
  groups: z.array(group),
  timestamp: z.iso.datetime({ offset: true }),
});

export const channelSummary = z.object({
  id_channel: z.string(),
  name: z.string(),
  status: channelStatus,
  channel_ref: z.string(),
  created_at: z.iso.datetime({ offset: true }),
});

export const channelPairingOutput = z.object({
  provider: z.enum(["simulator", "evolution"]),
  status: channelStatus,
  /** A data URL of the QR code to scan in WhatsApp › Linked devices. */
  qr_code: z.string().nullable(),
  /** An 8-character code to type on the phone instead (asked for with phone_number). */
  pairing_code: z.string().nullable(),
  /** When the pairing code stops working (ISO; WhatsApp keeps a code about 60 s). */
  pairing_code_expires_at: z.iso.datetime({ offset: true }).nullable(),
  /** A pairing code was asked for and the gateway has not given it yet (it comes within seconds; poll again). */
  pairing_code_pending: z.boolean(),
  /** No live pairing session (logged out, or too many QR codes: `refused`): ask again ("Gerar novamente"). */
  session_closed: z.boolean(),
  /** The simulator pairs by itself. */
  automatic: z.boolean(),
});

/**
 * What a tenant sees of the gateway's start-up check: whether it answered, and when it was checked. Never an
 * operator detail (docs/security.md#operator-details): not its URL, version, warnings or configuration reminders,
 * which are the operator's and go to the server's log.
 */
export const gatewayCheckOutput = z.object({
  provider: z.literal("evolution"),
  checkedAt: z.string(),
  reachable: z.boolean(),
});
