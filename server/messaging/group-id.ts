/**
 * A WhatsApp group id: `<digits>@g.us` (`120363…@g.us`), or the legacy form of groups created before
 * 2018, `<creator phone>-<creation timestamp>@g.us` (Evolution API issue #743). Every place that
 * accepts a group id uses this pattern.
 */
export const groupIdPattern = /^(?:\d{5,40}|\d{5,20}-\d{5,20})@g\.us$/;
