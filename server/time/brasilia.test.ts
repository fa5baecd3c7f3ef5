import { formatInTimeZone } from "date-fns-tz/formatInTimeZone";
import { describe, expect, it } from "vitest";
import { type BrasiliaPattern, brasiliaParts, formatBrasilia } from "./brasilia";

const patterns: BrasiliaPattern[] = ["yyyy-MM-dd", "dd/MM/yyyy", "dd/MM/yyyy - HH:mm", "i"];

describe("formatBrasilia", () => {
  it("writes the dates the server validates and compares", () => {
    const d = new Date("2026-11-22T02:59:59Z"); // Saturday 21/11 23:59:59 in Brasília, Sunday in UTC
    expect(patterns.map((p) => formatBrasilia(d, p))).toEqual(["2026-11-21", "21/11/2026", "21/11/2026 - 23:59", "6"]);
    expect(formatBrasilia(new Date("2026-11-22T03:00:00Z"), "i")).toBe("7");
    expect(() => formatBrasilia(new Date(Number.NaN), "yyyy-MM-dd")).toThrow(RangeError);
  });

  it("agrees with date-fns-tz's formatInTimeZone, across Brazil's old daylight-saving changes", () => {
    // Every 7 h 13 min 17 s from 2017 to 2020 (DST until February 2019), and the instants around each change.
    const instants = ["2018-11-04T02:59:59Z", "2018-11-04T03:00:00Z", "2019-02-17T01:59:59Z", "2019-02-17T02:00:00Z"].map((s) => Date.parse(s));
    for (let t = Date.parse("2017-01-01T00:00:00Z"); t < Date.parse("2020-01-01T00:00:00Z"); t += 26_000_000 + 17_000) instants.push(t);
    for (const t of instants) {
      const d = new Date(t);
      for (const p of patterns) expect(formatBrasilia(d, p), `${d.toISOString()} ${p}`).toBe(formatInTimeZone(d, "America/Sao_Paulo", p));
    }
  });
});

describe("brasiliaParts", () => {
  it("agrees with date-fns-tz's clock in Brasília, across the old daylight-saving changes", () => {
    const instants = ["2018-11-04T02:59:59Z", "2018-11-04T03:00:00Z", "2019-02-17T01:59:59Z", "2019-02-17T02:00:00Z"].map((s) => Date.parse(s));
    for (let t = Date.parse("2017-01-01T00:00:00Z"); t < Date.parse("2027-01-01T00:00:00Z"); t += 26_000_000 + 17_000) instants.push(t);
    for (const t of instants) {
      const d = new Date(t);
      const want = { date: formatInTimeZone(d, "America/Sao_Paulo", "yyyy-MM-dd"), time: formatInTimeZone(d, "America/Sao_Paulo", "HH:mm") };
      expect(brasiliaParts(d), d.toISOString()).toEqual(want);
    }
    expect(() => brasiliaParts(new Date(Number.NaN))).toThrow(RangeError);
  });
});
