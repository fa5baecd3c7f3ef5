import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { env } from "../env";

/**
 * Passwords: scrypt, N=2^17, r=8, p=1 (128 MiB and roughly a third of a second of one core per hash),
 * OWASP's recommended scrypt setting. Stored as `scrypt$N$r$p$salt$hash` (base64), so hashes made with
 * older parameters (N=2^15 before) still verify; needsRehash says when to store a new one.
 */
export const passwordParams = { N: 2 ** 17, r: 8, p: 1 } as const;
const keyLength = 32;
/** Above 128·N·r (128 MiB) with room for Node's own accounting; the default (32 MiB) refuses N=2^17. */
const maxmem = 256 * 1024 * 1024;
/** What a stored hash may ask for: a tampered row must not make a sign-in allocate gigabytes. */
const maxStoredN = 2 ** 20;

function scrypt(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password.normalize("NFKC"), salt, keyLength, { ...opts, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/**
 * The parameters new hashes get. Tests only (NODE_ENV=test, which vitest sets):
 * PASSWORD_SCRYPT_N_FOR_TESTS (a power of two, e.g. 1024) makes the hundred throwaway accounts a
 * test run creates cheaper (N=2^17 costs about 1 s more per account on a busy 2-core machine). It is
 * never read in any other mode, so a deployment always hashes with passwordParams.
 */
function currentParams(): { N: number; r: number; p: number } {
  const N = env.passwordScryptNForTests;
  return N !== undefined && (N & (N - 1)) === 0 ? { ...passwordParams, N } : passwordParams;
}

export async function hashPassword(password: string): Promise<string> {
  const { N, r, p } = currentParams();
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, { N, r, p });
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

function parse(stored: string) {
  const [scheme, N, r, p, salt, hash] = stored.split("$");
  const params = { N: Number(N), r: Number(r), p: Number(p) };
  if (
    scheme !== "scrypt" ||
    !salt ||
    !hash ||
    !(params.N >= 2 && params.N <= maxStoredN) ||
    !(params.r >= 1 && params.r <= 32) ||
    !(params.p >= 1 && params.p <= 16)
  ) {
    return undefined;
  }
  return { ...params, salt: Buffer.from(salt, "base64"), hash: Buffer.from(hash, "base64") };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) return false;
  const key = await scrypt(password, parsed.salt, { N: parsed.N, r: parsed.r, p: parsed.p });
  return key.length === parsed.hash.length && timingSafeEqual(key, parsed.hash);
}

/** True when `stored` was made with weaker parameters than today's: rehash it after the next successful sign-in. */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  if (!parsed) return true;
  const { N, r, p } = currentParams();
  return parsed.N < N || parsed.r < r || parsed.p < p || parsed.hash.length !== keyLength;
}

const dummies = new Map<number, Promise<string>>();

/**
 * Verifies against a throwaway hash made with today's parameters, for an email that has no account:
 * the answer then takes as long as a wrong password for a real one, so timing does not tell which
 * emails exist. (Made on first use: `next build` imports this module.)
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  const { N } = currentParams();
  let dummy = dummies.get(N);
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString("base64"));
    dummies.set(N, dummy);
  }
  await verifyPassword(password, await dummy);
  return false;
}
