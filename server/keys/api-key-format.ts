import { createHash, randomBytes } from "node:crypto";

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `sk_live_` + 40 base62 characters (about 238 bits), without modulo bias. */
export function generateApiKey(): string {
  let out = "";
  while (out.length < 40) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && out.length < 40) out += base62[byte % 62];
    }
  }
  return `sk_live_${out}`;
}

export const sha256Hex = (value: string) => createHash("sha256").update(value).digest("hex");

export const apiKeyPattern = /^sk_live_[0-9A-Za-z]{32,}$/;
