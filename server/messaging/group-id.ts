import { z } from "zod";

/**
 * A WhatsApp group id: `<digits>@g.us` (`120363…@g.us`), or the legacy form of groups created before
 * 2018, `<creator phone>-<creation timestamp>@g.us` (Evolution API issue #743). Every place that
 * accepts a group id uses this pattern.
 */
export const groupIdPattern = /^(?:\d{5,40}|\d{5,20}-\d{5,20})@g\.us$/;

export const idGroup = z
  .string()
  .regex(groupIdPattern, "must be a group id of the form <digits>@g.us (or the legacy <phone>-<timestamp>@g.us)")
  .meta({ example: "120363012345678901@g.us" });
