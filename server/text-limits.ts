/**
 * Input sizes shared by the API's schemas (server/text.ts) and the dashboard's form fields, so a form
 * never accepts what the API refuses. No imports: client components load it.
 */

/** Names of things a tenant creates (channel, segment, campaign, API key, integration label, partner app): docs/decisions.md#limits-abuse-retention ("Sizes"). */
export const nameMaxLength = 120;
export const urlMaxLength = 2048;
/** Dashboard passwords (docs/security.md, "Dashboard sign-in throttling"). */
export const passwordMinLength = 10;
export const passwordMaxLength = 200;
