import { describe, expect, it, vi } from "vitest";

/** Two copies of a module, as Next.js' bundles (instrumentation, each route) and the REST server have. */
async function twoCopies<T>(load: () => Promise<T>): Promise<[T, T]> {
  const first = await load();
  vi.resetModules();
  const second = await load();
  return [first, second];
}

describe("errors thrown by one copy of a module and checked by another", () => {
  it("domain errors keep their class and their family, and only theirs", async () => {
    const [a, b] = await twoCopies(() => import("./errors"));
    expect(a.NotFound).not.toBe(b.NotFound);
    const err = new a.Unavailable("gateway down");
    expect(err instanceof b.Unavailable).toBe(true);
    expect(err instanceof b.DomainError).toBe(true);
    expect(err instanceof b.NotFound).toBe(false);
    expect(new a.DomainError(500, "x", "y") instanceof b.Unavailable).toBe(false);
    expect(new Error("plain") instanceof b.DomainError).toBe(false);
    expect((null as unknown) instanceof b.DomainError).toBe(false);
  });

  it("a provider that is down is recognised as such (list-groups answers 503, not 500)", async () => {
    const [a, b] = await twoCopies(() => import("./messaging/provider"));
    expect(new a.ProviderUnavailableError("offline") instanceof b.ProviderUnavailableError).toBe(true);
    expect(new a.ProviderUnavailableError("offline") instanceof b.ProviderSendError).toBe(false);
    expect(new a.ProviderSendError("refused", true) instanceof b.ProviderSendError).toBe(true);
  });
});
