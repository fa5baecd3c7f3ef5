/**
 * BENCH_DB_TRACE=1 on PostgreSQL: what the server itself spends on the bench's statements, beside the driver's view
 * (bench/connection-trace.ts). While recording, pg_stat_activity is sampled every 10 ms on a connection of its own: the
 * bench database's active backends by what they wait on (a lock: on rows or a relation another transaction holds; CPU:
 * none), by statement. And the database logs every statement running 5 ms or more (log_min_duration_statement, set on
 * the bench's database only): the server's own time, read back from the server's log when it is readable.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import postgres from "postgres";
import { printTable, round } from "./common";

const serverLog = process.env.BENCH_PG_LOG ?? "/var/log/postgresql/postgresql-15-main.log";

export async function postgresWaits(url: string) {
  const name = new URL(url).pathname.slice(1);
  const sql = postgres(url, { max: 1, onnotice: () => {}, fetch_types: false });
  await sql.unsafe(`alter database ${name} set log_min_duration_statement = 5`);
  const samples = new Map<string, number>();
  let taken = 0;
  let timer: NodeJS.Timeout | undefined;
  let logFrom = 0;
  return {
    start() {
      logFrom = existsSync(serverLog) ? statSync(serverLog).size : 0;
      const sample = async () => {
        const rows = await sql.unsafe<{ wait: string | null; query: string }[]>(
          `select coalesce(wait_event_type || ':' || wait_event, 'running') as wait, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) as query
           from pg_stat_activity where datname = $1 and state = 'active' and pid <> pg_backend_pid()`,
          [name],
        );
        taken++;
        for (const r of rows) samples.set(`${r.wait} | ${r.query}`, (samples.get(`${r.wait} | ${r.query}`) ?? 0) + 1);
        timer = setTimeout(() => void sample().catch(() => {}), 10);
      };
      void sample();
    },
    async stop() {
      clearTimeout(timer);
      console.log(`[pg] ${taken} samples of pg_stat_activity (every 10 ms): active backends by wait, statement (a lock wait is "Lock:…")`);
      const top = [...samples].sort((a, b) => b[1] - a[1]).slice(0, 20);
      printTable([["samples", "wait | statement"], ...top.map(([k, n]) => [n, k])]);
      const locks = [...samples].filter(([k]) => k.startsWith("Lock:")).reduce((s, [, n]) => s + n, 0);
      const logged = existsSync(serverLog) ? readFileSync(serverLog, "utf8").slice(logFrom) : "";
      const durations = new Map<string, number[]>();
      for (const m of logged.matchAll(
        new RegExp(`@${name} LOG:  duration: ([\\d.]+) ms  (?:execute [^:]*|statement|parse [^:]*|bind [^:]*): (.{0,90})`, "g"),
      )) {
        const key = m[2].replace(/\s+/g, " ");
        durations.set(key, [...(durations.get(key) ?? []), Number(m[1])]);
      }
      console.log(`[pg] statements that ran 5 ms or more in the server (its log, ${serverLog}), by statement:`);
      const slowest = [...durations].sort((a, b) => b[1].reduce((x, y) => x + y, 0) - a[1].reduce((x, y) => x + y, 0)).slice(0, 15);
      printTable([
        ["count", "total ms", "max ms", "statement"],
        ...slowest.map(([k, d]) => [d.length, round(d.reduce((x, y) => x + y, 0)), round(Math.max(...d)), k]),
      ]);
      await sql.end({ timeout: 1 });
      return { pg_activity_samples: taken, pg_lock_wait_samples: locks };
    },
  };
}
