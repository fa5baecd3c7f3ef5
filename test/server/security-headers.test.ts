import { describe, expect, it } from "vitest";
import { bodyCap } from "../../server/http/body-limit";
import { securityHeaders } from "../../server/http/security-headers";

describe("security headers (server/http/security-headers.ts)", () => {
  it("pages get CSP frame-ancestors 'none'; API answers nosniff and Referrer-Policy; HSTS only for an https APP_URL", () => {
    const page = securityHeaders("/login", "http://localhost:3000");
    expect(page["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(page["x-content-type-options"]).toBe("nosniff");
    expect(page["referrer-policy"]).toBe("strict-origin-when-cross-origin");
    expect(page["strict-transport-security"]).toBeUndefined();
    const api = securityHeaders("/api/external/list-channels", "https://campaigns.example.com");
    expect(api["content-security-policy"]).toBeUndefined();
    expect(api["x-content-type-options"]).toBe("nosniff");
    expect(api["strict-transport-security"]).toMatch(/^max-age=\d+/);
  });
});

describe("body caps by path (docs/decisions.md#limits-abuse-retention)", () => {
  it("matches the table", () => {
    const KiB = 1024;
    const MiB = 1024 * KiB;
    expect(bodyCap("/api/external/create-channel")).toBe(MiB);
    expect(bodyCap("/api/external/create-segment")).toBe(4 * MiB);
    expect(bodyCap("/api/external/edit-segment/segment_1")).toBe(4 * MiB);
    expect(bodyCap("/api/external/create-segments-extra")).toBe(MiB);
    expect(bodyCap("/api/oauth/token")).toBe(64 * KiB);
    expect(bodyCap("/api/oauth/authorize/decision")).toBe(64 * KiB);
    expect(bodyCap("/api/trpc/channels.list")).toBe(MiB);
    expect(bodyCap("/api/auth/callback/credentials")).toBe(MiB);
    expect(bodyCap("/api/evolution/webhook/channel_1/secret")).toBe(4 * MiB);
    expect(bodyCap("/api/hooks/hotmart/abc")).toBe(256 * KiB);
    expect(bodyCap("/api/simulator/latency")).toBe(MiB);
  });
});
