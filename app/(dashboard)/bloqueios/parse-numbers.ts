/** Numbers edit-blocklist takes at once (server/moderation/schema.ts's blocklistMax). */
export const blocklistMax = 1000;

/** A phone as edit-blocklist takes it: digits with the country code (the server's phoneNumber). */
const phone = /^[1-9][0-9]{7,14}$/;

/**
 * Numbers pasted one a line or separated by commas or semicolons; "+55 (11) 98765-4321" is 5511987654321. What is not a
 * number comes back as typed, so the page can name it.
 */
export function parsePastedNumbers(text: string): { numbers: string[]; invalid: string[] } {
  const numbers: string[] = [];
  const invalid: string[] = [];
  for (const raw of text.split(/[\n,;]+/).map((s) => s.trim())) {
    if (!raw) continue;
    const digits = raw.replace(/[\s()+.-]/g, "");
    if (phone.test(digits)) numbers.push(digits);
    else invalid.push(raw);
  }
  return { numbers: [...new Set(numbers)], invalid };
}
