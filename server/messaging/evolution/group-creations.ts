/**
 * The record of the group creations asked of Evolution (docs/evolution.md#group-creation-that-never-duplicates),
 * one row per (channel, key), written before the POST so that a lost answer, a failure after WhatsApp made
 * the group, or a crash mid-create is looked up instead of creating again.
 */
import { and, asc, eq, isNotNull, ne, or, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { evolutionGroupCreations } from "../../../db/schema";

export type GroupCreation = typeof evolutionGroupCreations.$inferSelect;

/** What a look-up of a creation found: its group, proof that none was made, or not yet either. */
export type CreationOutcome = { kind: "made"; groupId: string } | { kind: "absent" } | { kind: "unknown"; reason: string };

export class GroupCreations {
  constructor(
    private readonly db: Db,
    private readonly channelId: string,
  ) {}

  private where(key: string) {
    return and(eq(evolutionGroupCreations.channelId, this.channelId), eq(evolutionGroupCreations.key, key));
  }

  async get(key: string): Promise<GroupCreation | undefined> {
    const [row] = await this.db.select().from(evolutionGroupCreations).where(this.where(key));
    return row;
  }

  /** Unsettled creations of this name on the channel, or under this key (its name may have changed since): this key's first, then oldest first. */
  pendingFor(subject: string, key: string): Promise<GroupCreation[]> {
    return this.db
      .select()
      .from(evolutionGroupCreations)
      .where(
        and(
          eq(evolutionGroupCreations.channelId, this.channelId),
          eq(evolutionGroupCreations.state, "pending"),
          or(eq(evolutionGroupCreations.subject, subject), eq(evolutionGroupCreations.key, key)),
        ),
      )
      .orderBy(sql`${evolutionGroupCreations.key} = ${key} desc`, asc(evolutionGroupCreations.startedAt));
  }

  /**
   * Records a creation about to be asked (compare-and-set): false when this key is already being created
   * (another request or process holds it), so no second POST goes out.
   */
  async begin(key: string, subject: string, startedAt: Date, settlesAt: Date): Promise<boolean> {
    const fresh = { subject, state: "pending" as const, groupId: null, startedAt, settlesAt, error: null, updatedAt: startedAt };
    const rows = await this.db
      .insert(evolutionGroupCreations)
      .values({ channelId: this.channelId, key, ...fresh })
      .onConflictDoUpdate({
        target: [evolutionGroupCreations.channelId, evolutionGroupCreations.key],
        set: fresh,
        setWhere: eq(evolutionGroupCreations.state, "absent"),
      })
      .returning({ key: evolutionGroupCreations.key });
    return rows.length > 0;
  }

  /** The POST failed with `error`; a listing from `settlesAt` on proves the group absent. */
  async failed(key: string, error: string, settlesAt: Date): Promise<GroupCreation> {
    const [row] = await this.db.update(evolutionGroupCreations).set({ error, settlesAt, updatedAt: new Date() }).where(this.where(key)).returning();
    return row;
  }

  async made(key: string, groupId: string) {
    await this.db.update(evolutionGroupCreations).set({ state: "made", groupId, updatedAt: new Date() }).where(this.where(key));
  }

  async absent(key: string, error: string | null) {
    await this.db.update(evolutionGroupCreations).set({ state: "absent", error, updatedAt: new Date() }).where(this.where(key));
  }

  /** The group an earlier creation made goes to the creation asking now (under its key); a record of that key not made is replaced. */
  async claim(fromKey: string, toKey: string) {
    if (fromKey === toKey) return;
    await this.db.transaction(async (tx) => {
      await tx.delete(evolutionGroupCreations).where(and(this.where(toKey), ne(evolutionGroupCreations.state, "made")));
      await tx.update(evolutionGroupCreations).set({ key: toKey, updatedAt: new Date() }).where(this.where(fromKey));
    });
  }

  /** Groups other creations on the channel already made (never taken as this one's). */
  async groupsOfOthers(key: string): Promise<Set<string>> {
    const rows = await this.db
      .select({ groupId: evolutionGroupCreations.groupId })
      .from(evolutionGroupCreations)
      .where(and(eq(evolutionGroupCreations.channelId, this.channelId), ne(evolutionGroupCreations.key, key), isNotNull(evolutionGroupCreations.groupId)));
    return new Set(rows.map((r) => r.groupId!));
  }
}
