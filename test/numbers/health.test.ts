/**
 * The health core (server/numbers/health.ts): one place a state changes and emits `channel_status`; the
 * cool-down's doubling; the SQL test of "can send" the dispatch claim uses.
 */
import { asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tableAs } from "../../db/relation";
import { channels, outboxEvents } from "../../db/schema";
import { changeHealth, coolingConfig, markCapped, recordRateLimited, sendableChannelSql } from "../../server/numbers/health";
import { getServices } from "../../server/services";
import { tenantWithSegment } from "../campaigns";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

async function healthEvents(channelId: string) {
  const { db } = await getServices();
  const rows = await db
    .select({ payload: outboxEvents.payload })
    .from(outboxEvents)
    .where(
      sql`${outboxEvents.type} = 'channel_status' and ${outboxEvents.payload} -> 'data' ->> 'id_channel' = ${channelId} and ${outboxEvents.payload} -> 'data' ? 'health'`,
    )
    .orderBy(asc(outboxEvents.id));
  return rows.map((r) => (r.payload as { data: { health: { state: string } } }).data.health.state);
}

async function sendable(channelId: string, now: Date) {
  const { db } = await getServices();
  const [row] = await db
    .select({ ok: sendableChannelSql(tableAs(channels, "c"), now) })
    .from(sql`${channels} c`)
    .where(sql`c.id = ${channelId}`);
  return row.ok;
}

describe("number health", () => {
  it("cools a rate-limited number for 1 min, doubling per signal within the hour, not again while cooling, back to 1 min after a quiet hour", async () => {
    const { db } = await getServices();
    const { channel } = await tenantWithSegment(server.url, 1);
    const { baseMs } = coolingConfig();
    const t0 = new Date("2026-12-01T15:00:00Z");
    const at = (ms: number) => new Date(t0.getTime() + ms);
    expect(await sendable(channel, t0)).toBe(true);

    expect((await recordRateLimited(db, channel, t0))?.getTime()).toBe(t0.getTime() + baseMs);
    expect(await sendable(channel, at(baseMs - 1))).toBe(false);
    // Another in-flight send of the same loop answers rate-limited: the cool-down is not doubled by it.
    expect((await recordRateLimited(db, channel, at(10)))?.getTime()).toBe(t0.getTime() + baseMs);
    expect(await sendable(channel, at(baseMs))).toBe(true);
    // A new signal after the cool-down, within the hour: twice as long.
    expect((await recordRateLimited(db, channel, at(baseMs + 5)))?.getTime()).toBe(t0.getTime() + baseMs + 5 + 2 * baseMs);
    // After a quiet hour: 1 min again.
    const later = at(baseMs * 200);
    expect((await recordRateLimited(db, channel, later))?.getTime()).toBe(later.getTime() + baseMs);
    // ok → cooling is one change of state; cooling → cooling (longer) is not a new event (the first: the pairing's, in ok).
    expect(await healthEvents(channel)).toEqual(["ok", "cooling"]);
  });

  it("caps a number until the next 00:00 in Brasília, and a ban is not softened by a rate limit", async () => {
    const { db } = await getServices();
    const { channel } = await tenantWithSegment(server.url, 1);
    const now = new Date("2026-12-01T15:00:00Z");
    const capped = await markCapped(db, channel, now);
    expect(capped?.healthUntil?.toISOString()).toBe("2026-12-02T03:00:00.000Z");
    expect(await sendable(channel, new Date("2026-12-02T02:59:59Z"))).toBe(false);
    expect(await sendable(channel, new Date("2026-12-02T03:00:00Z"))).toBe(true);

    await changeHealth(db, channel, { state: "banned", reason: "403 forbidden", until: null }, now);
    expect(await recordRateLimited(db, channel, now)).toBeNull();
    const [row] = await db.select().from(channels).where(eq(channels.id, channel));
    expect(row.healthState).toBe("banned");
    expect(await sendable(channel, new Date("2027-01-01T00:00:00Z"))).toBe(false);
    expect(await healthEvents(channel)).toEqual(["ok", "capped", "banned"]);
  });
});
