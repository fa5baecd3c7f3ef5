import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { rowsOf } from "../../db/params";
import { phoneKeySql } from "./phone-sql";
import { fullForm, normalisePhone, participantKey, phoneKey, phoneSet, platformForm, samePhone, uniquePhones } from "./phone";

describe("the phone codec", () => {
  it("reads a number as typed: digits with the country code, 55 in front of a Brazilian DDD + number", () => {
    expect(normalisePhone("+55 (31) 98765-4321")).toBe("5531987654321");
    expect(normalisePhone("31 98765-4321")).toBe("5531987654321");
    expect(normalisePhone("+1 415 555 0106")).toBe("14155550106");
    expect(normalisePhone("abc")).toBeNull();
  });

  it("writes the platform's form as Evolution's formatBRNumber does: DDD ≥ 31 and 7–9 after the 9 lose it", () => {
    expect(platformForm("5531987654321")).toBe("553187654321");
    expect(platformForm("5511987654321")).toBe("5511987654321");
    expect(platformForm("5528987654321")).toBe("5528987654321");
    expect(platformForm("5531961234567")).toBe("5531961234567");
    expect(platformForm("14155550106")).toBe("14155550106");
    expect(fullForm("553187654321")).toBe("5531987654321");
    expect(fullForm("553132345678")).toBe("553132345678");
  });

  it("compares with or without the ninth digit, both ways; a LID only through its pairing", () => {
    expect(samePhone("+55 31 98765-4321", "553187654321")).toBe(true);
    expect(samePhone("553187654321", "5531987654321")).toBe(true);
    expect(samePhone("5511987654321", "551187654321")).toBe(true);
    expect(samePhone("5531987654321", "5531987654322")).toBe(false);
    expect(samePhone("", "")).toBe(false);
    expect(phoneKey("5531987654321")).toBe(phoneKey("553187654321"));
    const pairs = new Map([["123@lid", "553187654321"]]);
    expect(participantKey("123@lid", (l) => pairs.get(l))).toBe(phoneKey("5531987654321"));
    expect(participantKey("124@lid", (l) => pairs.get(l))).toBe("124@lid");
    const staff = phoneSet(["5531987654321", "999@lid"]);
    expect(staff.has("553187654321")).toBe(true);
    expect(staff.has("999@lid")).toBe(true);
    expect(staff.has("553187654322")).toBe(false);
    expect(uniquePhones(["5531987654321", "553187654321", "5511987654321"])).toEqual(["5531987654321", "5511987654321"]);
  });

  it("drops a 9 only before a mobile's subscriber number (starting 6–9): 55 + DDD + 9 + [2-5]… is not a landline's key", () => {
    expect(phoneKey("5531987654321")).toBe("553187654321");
    expect(phoneKey("5531967654321")).toBe("553167654321");
    // 9 + 3234-5678: a landline's digits after a 9 are not a mobile; it must not meet the landline 55 31 3234-5678.
    expect(phoneKey("5531932345678")).toBe("5531932345678");
    expect(samePhone("5531932345678", "553132345678")).toBe(false);
    expect(samePhone("5511952345678", "551152345678")).toBe(false);
    expect(phoneKey("553132345678")).toBe("553132345678");
  });

  it("phone-sql.ts computes the same key in the database (PGlite and PostgreSQL)", async () => {
    const numbers = [
      "5531987654321",
      "553187654321",
      "5531967654321",
      "5531932345678",
      "5531922345678",
      "5531952345678",
      "553132345678",
      "5511987654321",
      "5511900000001",
      "14155550106",
      "55319876543210",
      "123456789@lid",
      "",
    ];
    const db = await getDb();
    for (const n of numbers) {
      const [{ k }] = rowsOf<{ k: string }>(await db.execute(sql`select ${phoneKeySql(sql`${n}::text`)} as k`));
      expect([n, k]).toEqual([n, phoneKey(n)]);
    }
  });
});
