import { afterEach, describe, expect, it } from "vitest";
import { sameOrigin } from "../../server/http/same-origin";

// The consent decision's origin check (docs/decisions.md#limits-abuse-retention, "Consent decision"). Next.js hands route
// handlers a URL on its own hostname (`localhost`), whatever host the browser used.
const decision = (headers: Record<string, string>) => new Request("http://localhost:3000/api/oauth/authorize/decision", { method: "POST", headers });

afterEach(() => {
  delete process.env.APP_URL;
});

describe("sameOrigin", () => {
  it("accepts the origin the browser used (scheme + Host) with APP_URL unset", () => {
    expect(sameOrigin(decision({ origin: "http://127.0.0.1:4123", host: "127.0.0.1:4123" }))).toBe(true);
  });

  it("accepts APP_URL's origin, and X-Forwarded-Host/-Proto as the front server left them", () => {
    process.env.APP_URL = "https://campaigns.example.com";
    expect(sameOrigin(decision({ origin: "https://campaigns.example.com", host: "10.0.0.5:3000" }))).toBe(true);
    expect(
      sameOrigin(decision({ origin: "https://edge.example.com", host: "10.0.0.5:3000", "x-forwarded-host": "edge.example.com", "x-forwarded-proto": "https" })),
    ).toBe(true);
  });

  it("refuses another origin, another port, another scheme, and no evidence at all", () => {
    expect(sameOrigin(decision({ origin: "https://evil.example", host: "127.0.0.1:4123" }))).toBe(false);
    expect(sameOrigin(decision({ origin: "http://127.0.0.1:9999", host: "127.0.0.1:4123" }))).toBe(false);
    expect(sameOrigin(decision({ origin: "https://127.0.0.1:4123", host: "127.0.0.1:4123" }))).toBe(false);
    expect(sameOrigin(decision({ host: "127.0.0.1:4123" }))).toBe(false);
    expect(sameOrigin(decision({ host: "127.0.0.1:4123", "sec-fetch-site": "same-origin" }))).toBe(true);
  });
});
