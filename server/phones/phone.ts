/**
 * The service's one phone codec (docs/launches.md#one-phone-codec): how a number is read, how the platform
 * writes it, and how two numbers are compared. Every comparison of numbers goes through it (staff, template
 * admins, the channels' own numbers, leads, buyers, the gateway's participants).
 *
 * The Brazilian ninth digit: mobiles have 9 + 8 digits since 2012–2016, but WhatsApp still addresses many
 * accounts made before by the old 8 digits, and Evolution's `formatBRNumber` (src/utils/createJid.ts; the
 * same in channel.service.ts) writes 55 + DDD ≥ 31 + 9 + [7-9]xxxxxxx without the 9; DDD 11–28 keep it.
 * So one person may come as `5531987654321` (typed by the tenant) and as `553187654321` (the platform):
 * the comparison key drops the ninth digit of every Brazilian mobile, so both ways meet.
 *
 * Pure (no database, no domain): messaging, the domains and the pages may all import it. Its SQL twin is
 * phone-sql.ts. A LID (`<digits>@lid`) is an opaque id, never a number: it meets a phone only through a
 * pairing (lid-phones.ts), which `participantKey` takes as a look-up.
 */

/** Every digit of `s`, in order (`+55 (31) 98765-4321` → `5531987654321`). */
export const digitsOf = (s: string) => s.replace(/\D/g, "");

/**
 * A phone as a person or a form types it, to digits with the country code: spaces, `+`, `-`, `.` and
 * parentheses are dropped; without a leading `+`, 10 or 11 digits are a Brazilian number (DDD + number) and
 * get `55`. Null when it cannot be a phone number (8–15 digits, not starting with 0).
 */
export function normalisePhone(raw: string): string | null {
  const s = raw.trim();
  if (!/^\+?[\d\s().-]+$/.test(s)) return null;
  const digits = digitsOf(s);
  const phone = !s.startsWith("+") && (digits.length === 10 || digits.length === 11) ? `55${digits}` : digits;
  return /^[1-9]\d{7,14}$/.test(phone) ? phone : null;
}

const brMobileWithNinth = /^55(\d{2})9(\d{8})$/;
const brMobileWithoutNinth = /^55(\d{2})([6-9]\d{7})$/;

/**
 * The number as Evolution writes it in a JID (`formatBRNumber`): 55 + DDD ≥ 31 + 9 + a subscriber number
 * starting 7–9 loses the 9; anything else is left as it is. Digits in, digits out.
 */
export function platformForm(phone: string): string {
  const m = brMobileWithNinth.exec(phone);
  return m && Number(m[1]) >= 31 && Number(m[2][0]) >= 7 ? `55${m[1]}${m[2]}` : phone;
}

/** The number with its ninth digit: a Brazilian mobile written with 8 digits (starting 6–9) gets its 9 back. */
export function fullForm(phone: string): string {
  const m = brMobileWithoutNinth.exec(phone);
  return m && Number(m[1]) >= 11 ? `55${m[1]}9${m[2]}` : phone;
}

/** A Brazilian mobile with its ninth digit: 55 + DDD + 9 + a subscriber number starting 6–9 (mobiles' range). */
const brMobileKeyed = /^55(\d{2})9([6-9]\d{7})$/;

/**
 * The key two numbers are compared by (digits in): a Brazilian mobile (55 + DDD + 9 + 8 digits starting 6–9)
 * without its ninth digit, whatever its DDD, so the tenant's form and the platform's meet both ways; any other
 * number as it is. A 9 before a subscriber number starting 2–5 is not a ninth digit (those 8 digits are a
 * landline's): `55 31 9 3234-5678` keeps it and never meets the landline `55 31 3234-5678`. Stored as
 * `match_key` (launch_leads, purchases); phone-sql.ts computes the same in SQL.
 */
export function phoneKey(phone: string): string {
  const m = brMobileKeyed.exec(phone);
  return m ? `55${m[1]}${m[2]}` : phone;
}

/** Are these the same number (any formatting, with or without the ninth digit)? Empty is nobody. */
export function samePhone(a: string | null | undefined, b: string | null | undefined): boolean {
  const x = digitsOf(a ?? "");
  return x !== "" && phoneKey(x) === phoneKey(digitsOf(b ?? ""));
}

export const isLid = (participant: string) => participant.endsWith("@lid");

/**
 * The key a participant (a number in any form, or an opaque id `…@lid`) is compared by: a number's
 * `phoneKey`; a LID's paired number's when `phoneOfLid` knows it, else the LID itself (it meets only itself).
 */
export function participantKey(participant: string, phoneOfLid?: (lid: string) => string | undefined): string {
  if (participant.includes("@")) {
    const phone = isLid(participant) ? phoneOfLid?.(participant) : undefined;
    return phone ? phoneKey(digitsOf(phone)) : participant;
  }
  return phoneKey(digitsOf(participant));
}

/** A set of numbers (and LIDs) to look participants up in, by their keys. */
export function phoneSet(numbers: Iterable<string>, phoneOfLid?: (lid: string) => string | undefined) {
  const keys = new Set([...numbers].map((n) => participantKey(n, phoneOfLid)).filter((k) => k !== ""));
  return { has: (participant: string) => keys.has(participantKey(participant, phoneOfLid)), size: keys.size };
}

/** The numbers without repeats (the same number with and without its ninth digit is one): the first of each kept. */
export function uniquePhones(numbers: Iterable<string>): string[] {
  const seen = new Set<string>();
  return [...numbers].filter((n) => {
    const k = participantKey(n);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
