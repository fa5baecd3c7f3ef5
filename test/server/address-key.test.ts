import { describe, expect, it } from "vitest";
import { addressKey } from "../../server/http/client-address";

describe("addressKey: one key per IPv4 address and per IPv6 /64", () => {
  it("keeps an IPv4 address as it is, and folds an IPv4-mapped IPv6 address into it", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:cb00:7107")).toBe("203.0.113.7");
  });

  it("gives every address of one /64 the same key, whatever its spelling", () => {
    const keys = ["2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:0DB8:0001:0002:0:0:0:9", "2001:db8:1:2::a%eth0", "2001:db8:1:2:0:0:1.2.3.4"].map(
      addressKey,
    );
    expect(new Set(keys)).toEqual(new Set(["2001:db8:1:2::/64"]));
  });

  it("tells neighbouring /64s apart", () => {
    expect(addressKey("2001:db8:1:3::1")).not.toBe(addressKey("2001:db8:1:2::1"));
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
  });

  it("keys what it cannot parse as it is", () => {
    expect(addressKey("unknown")).toBe("unknown");
    expect(addressKey("1:2:3")).toBe("1:2:3");
  });
});
