import { z } from "zod";
import { env } from "./env";
import { mediaHostProblem } from "./net/target-address";
import { nameMaxLength, urlMaxLength } from "./text-limits";

/**
 * The one way input schemas take a string from a client (REST facade and tRPC alike). Each has a
 * maximum length (so it shows in the OpenAPI document and is checked while parsing) and refuses what
 * PostgreSQL cannot store or a client cannot mean: NUL (text columns refuse it: 22021/22P05, which
 * used to surface as a 500) and a lone UTF-16 surrogate (not a character; it has no UTF-8 form).
 * Each refusal is a 400 naming the field.
 */

/** NUL, or a high surrogate not followed by a low one, or a low one not preceded by a high one. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what this refuses.
const illFormed = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const illFormedMessage = "must not contain NUL characters or unpaired surrogates (invalid Unicode)";

/** Whether `s` holds a NUL or a lone surrogate. */
export const isIllFormed = (s: string) => illFormed.test(s);

export interface TextOptions {
  /** Most characters (UTF-16 code units, as JavaScript and JSON Schema's maxLength count). */
  max: number;
  /** Fewest characters (after trimming when `trim`); 1 says "is required". */
  min?: number;
  /** Strip surrounding whitespace first (names, labels). */
  trim?: boolean;
}

/** A bounded, well-formed string: `text({ max: 120, min: 1, trim: true })`. */
export function text({ max, min, trim }: TextOptions) {
  let s = z.string();
  if (trim) s = s.trim();
  if (min !== undefined) s = s.min(min, min === 1 ? "is required" : `must have at least ${min} characters`);
  return s.max(max, `must be at most ${max} characters`).refine((v) => !isIllFormed(v), illFormedMessage);
}

export { nameMaxLength, urlMaxLength } from "./text-limits";

export const name = () => text({ max: nameMaxLength, min: 1, trim: true });

/** An absolute URL of one of `protocols` (default http and https), bounded and well formed. */
export function url({ max = urlMaxLength, protocols = ["http", "https"] }: { max?: number; protocols?: string[] } = {}) {
  const only = protocols.length === 1 ? `an ${protocols[0]} URL` : `an ${protocols.join(" or ")} URL`;
  return z
    .url({ protocol: new RegExp(`^(${protocols.join("|")})$`), error: `must be ${only}` })
    .max(max, `must be at most ${max} characters`)
    .refine((v) => !isIllFormed(v), illFormedMessage);
}

/**
 * A URL the messaging gateway will download (media_url, a carousel card's image_url): https only, and
 * not aimed at the operator's own network — an IP literal in a private, loopback, link-local or reserved
 * range (in any form URL parsing normalises: decimal, octal, hex, IPv4-mapped IPv6) or an internal name
 * (`localhost`, `*.localhost`, `*.local`, `*.internal`, a single label…) is refused.
 * `WEBHOOK_ALLOW_PRIVATE=1` lifts the address rule, as it does for webhooks. Names are not resolved
 * here: the gateway resolves them when it downloads, so it must run with egress filtering.
 */
export function mediaUrl() {
  return url({ protocols: ["https"] }).superRefine((v, ctx) => {
    if (env.webhooks.allowPrivate) return;
    const problem = mediaHostProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
}
