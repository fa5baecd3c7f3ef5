/** The groups a provider lists and, for launches, creates and administers (MessagingProvider; provider.ts). */
import { recognisedAcrossCopies } from "../errors";
import type { LidPhone } from "./provider-events";

export interface ProviderGroup {
  id_group: string;
  name: string;
  /** Only admins may post (WhatsApp's `announce`): a send may be refused unless the number is an admin. Internal (dashboard only). */
  adminsOnly?: boolean;
}

/** A group to create (docs/decisions.md#launches): the launch's template with `{n}` already replaced. */
export interface NewGroup {
  /**
   * The caller's name for this creation (a launch's slot): asked again with the same key, a provider that
   * can lose answers answers the group it already made instead of making another.
   */
  key?: string;
  name: string;
  description?: string;
  /** A public http(s) image URL set as the group's picture. */
  pictureUrl?: string;
  /** Only admins may post (WhatsApp's `announce`). */
  adminsOnly: boolean;
  /** Phone numbers (digits with country code) added at creation and promoted to admin. */
  admins: string[];
}

/**
 * What the platform says of one participant after a creation, an add or a promotion (Baileys answers each
 * participant with its own status: a refusal is not an error; docs/evolution.md#who-is-in-a-group).
 * `admin`/`member`: the platform lists it in the group; `absent`: it is not in it (`reason`: the platform's
 * status, e.g. `403` privacy, `408` left recently, or `not_added` when a creation dropped it); `unknown`: the
 * answer cannot tell (read the group back before counting it in).
 */
export interface ParticipantOutcome {
  phone: string;
  state: "admin" | "member" | "absent" | "unknown";
  reason?: string;
}

/** A created group. */
export interface CreatedGroup extends ProviderGroup {
  /** Each of the requested admins as the platform's answer lists it (absent: the platform gave no list). */
  participants?: ParticipantOutcome[];
  /** The platform failed or lost its answer after making the group, and the provider found it (it is this creation's group). */
  adopted?: boolean;
  /** The platform throttled the number while making it (WhatsApp's rate-overlimit): make no other group on it now. */
  rateLimited?: boolean;
}

/** What the invite-link check needs to know about a group the channel administers. */
export interface GroupState {
  /** false: the group is gone, or the number is no longer in it. */
  exists: boolean;
  /** The channel's number is an admin (only admins can read or renew the invite link). */
  admin: boolean;
  /** Everyone in the group, the channel's number included. */
  size: number;
  /** The LID ⇄ phone pairings its participant list carried (a platform that lists people by LID). */
  pairs?: LidPhone[];
}

/**
 * One setting change of a group (a group action, docs/groups.md), as the platform applies it. Each is one system
 * notice members see ("X changed the group's settings so only admins can send messages", "X changed the subject…").
 */
export type GroupChange =
  | { kind: "announce"; on: boolean }
  | { kind: "locked"; on: boolean }
  | { kind: "subject"; subject: string }
  | { kind: "description"; description: string }
  /** `image`: the picture's bytes, base64 (JPEG or PNG); `sha256`: their hash (hex). */
  | { kind: "picture"; image: string; sha256: string }
  | { kind: "participants"; action: "promote" | "demote" | "remove"; participants: string[] }
  /** Members' messages deleted for everyone (moderation): the platform's message id and who sent it (the sender's platform id). */
  | { kind: "delete_messages"; messages: { id: string; sender: string }[] };

/** A group's metadata as the platform shows it now: what a group action's read-back compares. */
export interface GroupSettings {
  subject: string;
  description: string;
  /** Only admins send. */
  announce: boolean;
  /** Only admins edit the group's info. */
  locked: boolean;
  /** The picture's SHA-256 where the platform tells it (the simulator); undefined where it does not (Evolution). */
  pictureSha256?: string | null;
  /** Phone numbers (digits) of the members, admins included. */
  members: string[];
  admins: string[];
}

/**
 * The platform refused a group change for good: the channel's number is not an admin of the group (`not_admin`), or the
 * group is gone for it (`group_gone`). Nothing was changed.
 */
export class GroupChangeRefusedError extends Error {
  constructor(
    readonly refusal: "not_admin" | "group_gone",
    message: string,
  ) {
    super(message);
    this.name = "GroupChangeRefusedError";
  }
}

recognisedAcrossCopies({ GroupChangeRefusedError });
