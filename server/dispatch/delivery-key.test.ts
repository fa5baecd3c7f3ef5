import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newId } from "../ids";
import { groupIdPattern } from "../messaging/group-id";
import { decodeDeliveryKey, encodeDeliveryKey } from "./delivery-key";

describe("the delivery key", () => {
  it("is the campaign and the group joined by a colon, for the ids we make (the form provider logs and SQL hold)", () => {
    const campaignId = newId("campaign");
    for (const groupId of ["120363012345678901@g.us", "5511999999999-1600000000@g.us"]) {
      expect(groupIdPattern.test(groupId)).toBe(true);
      expect(encodeDeliveryKey(campaignId, groupId)).toBe(`${campaignId}:${groupId}`);
      expect(decodeDeliveryKey(`${campaignId}:${groupId}`)).toEqual({ campaignId, groupId });
    }
  });

  it("round-trips parts that hold colons and percent signs", () => {
    for (const [campaignId, groupId] of [
      ["campaign:1", "g:1@g.us"],
      ["a::b", "::"],
      ["%3A", "%25:"],
      ["100%", ""],
      ["x", "a:b:c"],
    ]) {
      expect(decodeDeliveryKey(encodeDeliveryKey(campaignId, groupId))).toEqual({ campaignId, groupId });
    }
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string(), (campaignId, groupId) => {
        expect(decodeDeliveryKey(encodeDeliveryKey(campaignId, groupId))).toEqual({ campaignId, groupId });
      }),
    );
  });

  it("is none of ours without a colon or a campaign part", () => {
    expect(decodeDeliveryKey("campaign_1")).toBeNull();
    expect(decodeDeliveryKey(":120363012345678901@g.us")).toBeNull();
  });
});
