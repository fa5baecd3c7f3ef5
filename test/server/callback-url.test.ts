import { describe, expect, it } from "vitest";
import { isSameOriginPath, safeCallbackUrl } from "../../server/auth/callback-url";
import { authOptions } from "../../server/auth/next-auth";

const origin = "http://localhost:3000";

describe("redirects after sign-in: only same-origin paths", () => {
  const hostile = [
    "/%09/evil.example",
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r\n/evil.example",
    "//evil.example",
    "/\\evil.example",
    "/%5Cevil.example",
    "/%2Fevil.example",
    "/%252F%252Fevil.example",
    "/%2F%2Fevil.example",
    "/\u0000/evil.example",
    "/%00/evil.example",
    "/\u007f/evil.example",
    "/%E0%A4%A", // malformed escape
    "https://evil.example/",
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    "data:text/html,hi",
    "evil.example",
    "\t//evil.example",
    " //evil.example",
    "https://localhost:3000//evil.example",
    "http://localhost:3000//evil.example",
    "http://localhost:3000/%09/evil.example",
    "https://localhost:3000/%09/evil.example",
    "http://localhost:3000@evil.example/",
  ];
  for (const value of hostile) {
    it(`refuses ${JSON.stringify(value)}`, () => {
      expect(safeCallbackUrl(value, origin)).toBe("/overview");
    });
  }

  it("keeps plain paths, and a same-origin URL as its path", () => {
    expect(safeCallbackUrl("/campaigns?x=1#y", origin)).toBe("/campaigns?x=1#y");
    expect(safeCallbackUrl("/oauth/authorize?client_id=a&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb", origin)).toBe(
      "/oauth/authorize?client_id=a&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb",
    );
    expect(safeCallbackUrl("http://localhost:3000/segments", origin)).toBe("/segments");
    expect(safeCallbackUrl(undefined, origin)).toBe("/overview");
    expect(isSameOriginPath("/a/b")).toBe(true);
  });

  it("next-auth's redirect callback applies the same rule", async () => {
    const redirect = authOptions.callbacks!.redirect!;
    const baseUrl = origin;
    expect(await redirect({ url: "/%09/evil.example", baseUrl })).toBe(`${baseUrl}/overview`);
    expect(await redirect({ url: "https://evil.example/x", baseUrl })).toBe(`${baseUrl}/overview`);
    expect(await redirect({ url: "/login", baseUrl })).toBe(`${baseUrl}/login`);
    expect(await redirect({ url: `${baseUrl}/campaigns`, baseUrl })).toBe(`${baseUrl}/campaigns`);
  });
});
