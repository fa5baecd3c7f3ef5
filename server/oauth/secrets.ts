import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Lifetimes (docs/decisions.md#oauth). */
export const codeLifetimeMs = 60_000;
export const accessTokenLifetimeMs = 60 * 60_000;
export const refreshTokenLifetimeMs = 30 * 24 * 60 * 60_000;
export const pendingRequestLifetimeMs = 10 * 60_000;

/** 256-bit random values; the prefix only helps people (and secret scanners) tell them apart. */
export const newSecret = (prefix: "pcs" | "pat" | "prt" | "pac") => `${prefix}_${randomBytes(32).toString("base64url")}`;

export const newClientId = () => `client_${randomBytes(16).toString("base64url")}`;

export const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

/** Compares a presented secret with a stored SHA-256 hash in constant time. */
export function matchesHash(presented: string, storedHash: string | null): boolean {
  if (!storedHash) return false;
  const a = Buffer.from(sha256(presented), "hex");
  const b = Buffer.from(storedHash, "hex");
  return a.length === b.length && timingSafeEqual(a, b);
}

/** RFC 7636 S256: BASE64URL(SHA256(ASCII(code_verifier))). */
export const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");
