import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isApiPath } from "../../server/http/security-headers";
import { startTestServer, type TestServer } from "../http-server";

/**
 * CONTRACT §4 "Security headers (paths)": the headers are chosen on the path Next.js routes, so a page
 * reached through a raw path under /api/ (`/api/%2e%2e/oauth/authorize`: the consent page;
 * `/api/../login`: the login page) still gets the CSP and frame headers. node:http sends the path
 * exactly as written (fetch would normalise it first). The test server sets the headers as the
 * production front server does; e2e/edge.spec.ts checks the real pages behind these paths.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function rawGet(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method: "GET" }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("security headers follow the routed path, not the raw one", () => {
  it("raw paths that lead out of /api/ to a page carry the page headers (CSP, X-Frame-Options)", async () => {
    for (const path of [
      "/api/%2e%2e/oauth/authorize",
      "/api/../login",
      "/api/%2E%2e/login?x=1",
      "/api/.%2e/signup",
      "/api//..//login",
      "/api\\..\\login",
      "/api/%2e%2e%2flogin",
    ]) {
      const { headers } = await rawGet(path);
      expect(headers["content-security-policy"], path).toContain("frame-ancestors 'none'");
      expect(headers["x-frame-options"], path).toBe("DENY");
      expect(headers["x-content-type-options"], path).toBe("nosniff");
    }
  });

  it("API paths keep the API headers only", async () => {
    for (const path of ["/api/openapi.json", "/api/oauth/authorize?client_id=x", "/api/external/list-settings", "/api/trpc/./apiKeys.list"]) {
      const { headers } = await rawGet(path);
      expect(headers["content-security-policy"], path).toBeUndefined();
      expect(headers["x-content-type-options"], path).toBe("nosniff");
    }
    expect(isApiPath("/api/external/edit-channel/channel_1")).toBe(true);
    expect(isApiPath("/oauth/authorize")).toBe(false);
    expect(isApiPath("//api/../login")).toBe(false);
    expect(isApiPath("/api/x/../../login")).toBe(false);
  });
});
