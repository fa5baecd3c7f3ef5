import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inBackground, requestsBeforeAnEngine } from "./connection-priority";
import { type Database, openDatabase } from "./client";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Embedded PGlite only: PostgreSQL's pool has connections of their own.
describe("embedded PGlite's one connection", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({});
    await database.db.execute(sql`create table turns (n serial primary key, who text not null)`);
  }, 60_000);
  afterAll(() => database.close());

  /** An engine's transaction holding the connection across an await (a step between two of its statements) until `until`. */
  const engineTransaction = (who: string, until: Promise<unknown>, holding = () => {}) =>
    inBackground(() =>
      database.db.transaction(async (tx) => {
        await tx.execute(sql`insert into turns (who) values (${`${who} begins`})`);
        holding();
        await until;
        await tx.execute(sql`insert into turns (who) values (${`${who} ends`})`);
      }),
    );
  /** Engine A's transaction, holding the connection until its answer is called. */
  const holdConnection = async () => {
    let release!: () => void;
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const done = engineTransaction("engine A", new Promise<void>((r) => (release = r)), holding);
    await held;
    return () => {
      release();
      return done;
    };
  };
  // Awaited inside: drizzle runs a statement when it is awaited, and it takes its turn in the context awaiting it.
  const engineStatement = (who: string) =>
    inBackground(async () => {
      await database.db.execute(sql`insert into turns (who) values (${who})`);
    });
  const requestStatement = async () => {
    await database.db.execute(sql`insert into turns (who) values ('request')`);
  };
  const order = async () => {
    const rows = (await database.db.execute<{ who: string }>(sql`select who from turns order by n`)) as unknown as { rows: { who: string }[] };
    await database.db.execute(sql`truncate turns restart identity`);
    return rows.rows.map((r) => r.who);
  };

  it("gives a request's statement the connection before the engines' waiting ones, never inside their transaction", async () => {
    const release = await holdConnection();
    const queued = [engineStatement("engine B"), engineTransaction("engine C", Promise.resolve())];
    await sleep(1);
    const request = requestStatement();
    await sleep(1);
    await Promise.all([release(), ...queued, request]);
    const turns = await order();
    expect(turns.slice(0, 3)).toEqual(["engine A begins", "engine A ends", "request"]);
    // The engines keep their own order among themselves (whichever reached the connection first), a transaction whole.
    expect(turns.slice(3).join(", ")).toMatch(/^(engine B, engine C begins, engine C ends|engine C begins, engine C ends, engine B)$/);
  });

  it("lets an engine go after a few requests in a row: engines are delayed, never starved", async () => {
    const release = await holdConnection();
    const engine = engineStatement("engine B");
    await sleep(1);
    const requests = Array.from({ length: requestsBeforeAnEngine + 2 }, () => requestStatement());
    await sleep(1);
    await Promise.all([release(), engine, ...requests]);
    const turns = await order();
    expect(turns.indexOf("engine B")).toBe(2 + requestsBeforeAnEngine);
    expect(turns).toHaveLength(3 + requestsBeforeAnEngine + 2);
  });
});
