import { randomBytes } from "node:crypto";
import { eq, like, or } from "drizzle-orm";
import type { Db, Tx } from "../../../db/client";
import { launchSlugs, launches } from "../../../db/schema";
import { Conflict } from "../../errors";

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
 * The first free slug of `base`, `base-2`, `base-3`, … (docs/decisions.md#the-join-link-in-detail, "Slugs"). A slug is
 * taken while any launch has it now or ever had it (launch_slugs). The insert may still lose a race to
 * another request: the caller retries when claimSlug says so.
 */
export async function freeSlug(db: Db | Tx, base: string): Promise<string> {
  const [former, current] = await Promise.all([
    db
      .select({ slug: launchSlugs.slug })
      .from(launchSlugs)
      .where(or(eq(launchSlugs.slug, base), like(launchSlugs.slug, `${base}-%`))),
    db
      .select({ slug: launches.slug })
      .from(launches)
      .where(or(eq(launches.slug, base), like(launches.slug, `${base}-%`))),
  ]);
  const taken = new Set([...former, ...current].map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** The 409 of a slug that another launch has, or had: a slug once used stays its launch's forever. */
export const slugTaken = (slug: string) =>
  new Conflict(`slug: ${slug} is already taken (a slug once used stays with its launch, so its old links keep working); choose another one.`, "slug_taken");

/**
 * Makes `slug` one of `launchId`'s slugs, in the caller's transaction: true when it is now that launch's
 * (newly, or it already was: a launch may take back one of its own old slugs), false when another launch
 * of any tenant has it or had it. Two transactions claiming one slug meet on launch_slugs' primary key:
 * the second waits for the first and then sees its row.
 */
export async function claimSlug(tx: Tx, launchId: string, slug: string, now: Date): Promise<boolean> {
  const inserted = await tx.insert(launchSlugs).values({ slug, launchId, createdAt: now }).onConflictDoNothing().returning({ slug: launchSlugs.slug });
  if (inserted.length > 0) return true;
  const [owner] = await tx.select({ launchId: launchSlugs.launchId }).from(launchSlugs).where(eq(launchSlugs.slug, slug));
  return owner?.launchId === launchId;
}
