import { describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import type { MessagingProvider } from "./messaging/provider";
import { createCallerFactory, ownerPartnerForbiddenProcedure, ownerProcedure, partnerProcedure, router, type Caller } from "./trpc";

// The rungs as test-webhook (403 for partners), owner endpoints (401) and partner endpoints use them.
const ladder = router({
  ownerOnly: ownerPartnerForbiddenProcedure.query(({ ctx }) => ctx.tenantId),
  owner: ownerProcedure.query(({ ctx }) => ctx.tenantId),
  stats: partnerProcedure("statistics:read").query(({ ctx }) => ctx.partner.appId),
});

const call = (caller: Caller) => createCallerFactory(ladder)({ db: {} as Db, provider: {} as MessagingProvider, caller, now: new Date() });
const partner: Caller = { kind: "partner", tenantId: "tenant_1", appId: "client_1", grantId: "g1", scopes: ["statistics:read"] };
const apiKey: Caller = { kind: "apiKey", tenantId: "tenant_1", apiKeyId: "key_1" };

describe("procedure ladder for partner tokens", () => {
  it("a partner token: 403 where the spec says so (test-webhook), 401 on other owner endpoints, in on its scope", async () => {
    await expect(call(partner).ownerOnly()).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(call(partner).owner()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(await call(partner).stats()).toBe("client_1");
  });

  it("an API key: in on owner endpoints, 401 on partner endpoints; a token without the scope: 403", async () => {
    expect(await call(apiKey).ownerOnly()).toBe("tenant_1");
    await expect(call(apiKey).stats()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(call({ ...partner, scopes: ["campaigns:read"] } as Caller).stats()).rejects.toMatchObject({ code: "FORBIDDEN" });
  });
});
