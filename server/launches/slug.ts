import { randomBytes } from "node:crypto";
import { like, or, eq } from "drizzle-orm";
import type { Db, Tx } from "../../db/client";
import { launches } from "../../db/schema";

const maxLength = 60;

/** The slug a name suggests: lowercase ASCII letters and digits, accents dropped, other runs become `-`; null under 3 characters. */
export function slugFromName(name: string): string | null {
  const base = name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    // Room for a `-NNN` suffix when the slug is taken.
    .slice(0, maxLength - 4)
    .replace(/-+$/g, "");
  return base.length >= 3 ? base : null;
}

/** A random slug for names with fewer than 3 usable characters (10 characters of [a-z0-9]). */
export function randomSlug(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(randomBytes(10), (b) => alphabet[b % alphabet.length]).join("");
}

/**
 * The first free slug of `base`, `base-2`, `base-3`, … (docs/decisions.md#launches, "Slugs"). The insert
 * may still lose a race to another request: the caller retries on the unique violation.
 */
export async function freeSlug(db: Db | Tx, base: string): Promise<string> {
  const taken = new Set(
    (
      await db
        .select({ slug: launches.slug })
        .from(launches)
        .where(or(eq(launches.slug, base), like(launches.slug, `${base}-%`)))
    ).map((r) => r.slug),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
