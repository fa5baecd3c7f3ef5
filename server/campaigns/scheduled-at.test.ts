import { formatInTimeZone } from "date-fns-tz/formatInTimeZone";
import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { toBrasiliaIso } from "../time/brasilia";
import { parseScheduledAt } from "./scheduled-at";

const now = new Date("2026-11-21T20:40:30Z"); // 17:40:30 in Brasília

describe("scheduled_at", () => {
  it("reads DD/MM/YYYY - HH:mm as Brasília time (UTC-3)", () => {
    expect(parseScheduledAt("25/12/2026 - 09:30", now).toISOString()).toBe("2026-12-25T12:30:00.000Z");
    expect(toBrasiliaIso(new Date("2026-12-25T12:30:00Z"))).toBe("2026-12-25T09:30:00-03:00");
  });

  it("crosses midnight: 00:15 Brasília is 03:15 UTC of the same date", () => {
    expect(parseScheduledAt("22/11/2026 - 00:15", now).toISOString()).toBe("2026-11-22T03:15:00.000Z");
  });

  it("a minute that has already begun is past; the next minute is future", () => {
    expect(() => parseScheduledAt("21/11/2026 - 17:40", now)).toThrow(DomainError);
    expect(parseScheduledAt("21/11/2026 - 17:41", now).toISOString()).toBe("2026-11-21T20:41:00.000Z");
  });

  it("refuses malformed and impossible dates, naming the field", () => {
    for (const bad of ["2026-12-25 09:30", "25/12/2026 09:30", "25/12/2026 - 9:30", "31/02/2027 - 10:00", "10/13/2027 - 10:00", "10/10/2027 - 24:00"]) {
      expect(() => parseScheduledAt(bad, now), bad).toThrow(/scheduled_at/);
    }
  });

  it("formats with the offset in force at each instant, across Brazil's old daylight-saving changes", () => {
    // Brazil kept DST until 2019: 2018-11-04 00:00 -03 became 01:00 -02; 2019-02-17 00:00 -02 became 23:00 -03.
    expect(toBrasiliaIso(new Date("2018-11-04T02:59:59Z"))).toBe("2018-11-03T23:59:59-03:00");
    expect(toBrasiliaIso(new Date("2018-11-04T03:00:00Z"))).toBe("2018-11-04T01:00:00-02:00");
    expect(toBrasiliaIso(new Date("2019-02-17T01:59:59Z"))).toBe("2019-02-16T23:59:59-02:00");
    expect(toBrasiliaIso(new Date("2019-02-17T02:00:00Z"))).toBe("2019-02-16T23:00:00-03:00");
    // And agrees with date-fns-tz everywhere in between, every 7 h 13 min 17 s for two years.
    for (let t = Date.parse("2018-01-01T00:00:00Z"); t < Date.parse("2020-01-01T00:00:00Z"); t += 26_000_000 + 17_000) {
      const d = new Date(t);
      expect(toBrasiliaIso(d), d.toISOString()).toBe(formatInTimeZone(d, "America/Sao_Paulo", "yyyy-MM-dd'T'HH:mm:ssXXX"));
    }
  });
});
