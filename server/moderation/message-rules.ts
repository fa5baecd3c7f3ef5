/**
 * The text rules of moderation (docs/moderation.md#messages), pure: a link outside the allow-list (an invite to another
 * WhatsApp group is a link), a banned word (whole word, case- and accent-insensitive). Floods need the sender's recent
 * messages and are counted by moderate-messages.ts.
 */
import type { LaunchModerationSettings } from "../../db/schema";

/** At most 100 characters of a message (whole code points), what events and the log keep. */
export const excerptOf = (text: string) => [...text].slice(0, 100).join("");

/** Lower case without accents: "Grátis" and "GRATIS" are one word. */
export const foldText = (text: string) => text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();

/** Top-level domains a bare host (no scheme, no www.) is read as a link with: common ones, so "ok.obrigado" is no link. */
const bareTlds = "com|net|org|br|io|ly|me|gl|co|info|xyz|site|online|app|link|shop|store|biz|tv|us|to|gg|cc|click|top|live|pro|vip|club|page|dev|ai|in";
const linkPattern = new RegExp(
  String.raw`(?:https?:\/\/|www\.)[^\s<>"']+|\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:${bareTlds})\b(?:\/[^\s<>"']*)?`,
  "giu",
);

/** The hostnames of the links in a text (lower case). */
export function linkHosts(text: string): string[] {
  const hosts: string[] = [];
  for (const m of text.toLowerCase().matchAll(linkPattern)) {
    const raw = m[0].replace(/^https?:\/\//, "");
    const host = raw.split(/[/?#:]/, 1)[0].replace(/[.,;!)]+$/, "");
    if (host) hosts.push(host);
  }
  return hosts;
}

const allowed = (host: string, domains: string[]) => domains.some((d) => host === d || host.endsWith(`.${d}`));

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const wordCache = new Map<string, RegExp | null>();

/** One expression for a launch's banned words (cached by the list): whole words, after folding case and accents. */
function bannedPattern(words: string[]): RegExp | null {
  const key = JSON.stringify(words);
  let re = wordCache.get(key);
  if (re === undefined) {
    const folded = [...new Set(words.map((w) => foldText(w.trim())).filter((w) => w !== ""))];
    re = folded.length ? new RegExp(`(?<![\\p{L}\\p{N}_])(?:${folded.map(escapeRegExp).join("|")})(?![\\p{L}\\p{N}_])`, "u") : null;
    if (wordCache.size > 1000) wordCache.clear();
    wordCache.set(key, re);
  }
  return re;
}

export type TextRule = "link" | "banned_word";

/** The first text rule the message breaks, or null. */
export function textRuleBroken(settings: LaunchModerationSettings, text: string): TextRule | null {
  if (settings.block_links && linkHosts(text).some((h) => !allowed(h, settings.allowed_domains))) return "link";
  if (settings.banned_words.length > 0 && bannedPattern(settings.banned_words)?.test(foldText(text))) return "banned_word";
  return null;
}
