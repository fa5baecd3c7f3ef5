import { describe, expect, it } from "vitest";
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
});
