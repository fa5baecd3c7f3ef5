import { z } from "zod";
import { name } from "../text";
import { idPattern } from "../ids";
import { groupIdPattern } from "../messaging/group-id";

export const channelStatus = z.enum(["connecting", "connected", "disconnected"]).meta({
  description: "connecting (awaiting pairing) → connected ⇄ disconnected",
});

export const idChannel = z
  .string()
  .regex(idPattern("channel"), "must be a channel token of the form channel_<uuid>")
  .meta({ description: "Channel token", example: "channel_0b6f1c3e-8f7a-4d0e-9a51-3c2d8e4f5a60" });

export const idGroup = z
  .string()
  .regex(groupIdPattern, "must be a group id of the form <digits>@g.us (or the legacy <phone>-<timestamp>@g.us)")
  .meta({ example: "120363012345678901@g.us" });

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

export const editChannelInput = z.object({ id_channel: idChannel, name: channelName });
export const editChannelOutput = z.object({
  success: z.literal(true),
  id_channel: z.string(),
  name: z.string(),
  status: channelStatus,
  message: z.string(),
  timestamp: z.iso.datetime({ offset: true }),
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

export const gatewayCheckOutput = z.object({
  provider: z.literal("evolution"),
  checkedAt: z.string(),
  reachable: z.boolean(),
  version: z.string().nullable(),
  warnings: z.array(z.string()),
  reminders: z.array(z.string()),
});
