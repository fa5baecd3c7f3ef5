import { describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import type { MessagingProvider } from "./messaging/provider";
import { appRouter } from "./root";
import {
  accountPartnerForbiddenProcedure,
  accountProcedure,
  type AppMeta,
  type Caller,
  createCallerFactory,
  partnerProcedure,
  router,
  sessionProcedure,
} from "./trpc";

// The rungs as test-webhook (403 for partners), owner endpoints (401) and partner endpoints use them.
const ladder = router({
  ownerOnly: accountPartnerForbiddenProcedure("admin").query(({ ctx }) => ctx.tenantId),
  owner: accountProcedure("viewer").query(({ ctx }) => ctx.tenantId),
  edit: accountProcedure("editor").mutation(({ ctx }) => ctx.tenantId),
  keys: sessionProcedure("admin").query(({ ctx }) => ctx.userId),
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

describe("procedure ladder for members' roles (docs/team.md#roles)", () => {
  const member = (role: "viewer" | "editor" | "admin" | "owner"): Caller => ({ kind: "session", tenantId: "tenant_1", userId: "user_1", role });

  it("a member below the least role: 403 forbidden naming it; at or above: in; an API key acts as the whole account", async () => {
    await expect(call(member("viewer")).edit()).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("editor") });
    expect(await call(member("editor")).edit()).toBe("tenant_1");
    await expect(call(member("editor")).keys()).rejects.toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("admin") });
    await expect(call(member("editor")).ownerOnly()).rejects.toMatchObject({ code: "FORBIDDEN", cause: { code: "forbidden" } });
    expect(await call(member("owner")).keys()).toBe("user_1");
    expect(await call(member("viewer")).owner()).toBe("tenant_1");
    expect(await call(apiKey).edit()).toBe("tenant_1");
  });

  it("every procedure of the app declares who it is for, and every account or dashboard one the least role it needs", () => {
    const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { meta?: AppMeta } }>);
    expect(procedures.length).toBeGreaterThan(50);
    const undeclared = procedures.filter(([, p]) => {
      const meta = p._def.meta;
      if (!meta?.access) return true;
      return (meta.access === "account" || meta.access === "session") && !meta.role;
    });
    expect(undeclared.map(([path]) => path)).toEqual([]);
  });
});
