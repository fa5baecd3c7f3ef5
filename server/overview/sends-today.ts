import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tsParam } from "../../db/errors";
import { rowsOf } from "../../db/params";
import { brasiliaParts } from "../time/brasilia";

/**
 * The tenant's messages sent today (Brasília day) per hour: its campaigns' deliveries marked sent today,
 * monitoring copies included (as a number's `sent_today` counts them). Only campaigns that may have sent
 * today are read (not finished before the last 26 hours).
 */
export async function sendsToday(db: Db, tenantId: string, now: Date): Promise<{ total: number; by_hour: number[] }> {
  const today = brasiliaParts(now).date;
  const since = new Date(now.getTime() - 26 * 3_600_000);
  const rows = rowsOf<{ hour: number; n: number }>(
    await db.execute(sql`
      select extract(hour from d.sent_at at time zone 'America/Sao_Paulo')::int as hour, count(*)::int as n
      from campaigns c join deliveries d on d.campaign_id = c.id
      where c.tenant_id = ${tenantId}
        and (c.finished_at is null or c.finished_at >= ${tsParam(since)})
        and c.started_at is not null
        and d.state = 'sent' and d.sent_at >= ${tsParam(since)}
        and to_char(d.sent_at at time zone 'America/Sao_Paulo', 'YYYY-MM-DD') = ${today}
      group by 1`),
  );
  const byHour = Array.from({ length: 24 }, () => 0);
  for (const r of rows) byHour[Number(r.hour)] = Number(r.n);
  return { total: byHour.reduce((a, b) => a + b, 0), by_hour: byHour };
}
