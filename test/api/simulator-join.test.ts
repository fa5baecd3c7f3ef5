import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { getServices } from "../../server/services";
import type { SimulatorProvider } from "../../server/messaging/simulator";
import { newTenant } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

// `{"join": N}` adds N distinct new people (issue 24: its random numbers could collide with each other or with a
// member, and "409 when the group is at 1024" once failed on it). The draws are made to collide here on purpose:
// the simulator's people are `55119` + randomInt(100_000_000).
const draws = vi.hoisted(() => ({ queue: [] as number[] }));
vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:crypto")>();
  const randomInt = ((...args: Parameters<typeof real.randomInt>) => {
    if (args[0] === 100_000_000 && draws.queue.length > 0) return draws.queue.shift();
    return (real.randomInt as (...a: unknown[]) => unknown)(...args);
  }) as typeof real.randomInt;
  return { ...real, default: { ...real, randomInt }, randomInt };
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const person = (n: number) => `55119${String(n).padStart(8, "0")}`;

describe("POST /api/simulator/groups/{id_group}/participants {join: N}", () => {
  it("adds N distinct people who were not in the group, whatever the draws", async () => {
    const t = await newTenant(server.url);
    const channel = (await t("POST", "/api/external/create-channel", { name: "Canal" })).json.id_channel as string;
    const provider = (await getServices()).provider as SimulatorProvider;
    const g = await provider.createGroup(channel, { name: "Turma", adminsOnly: false, admins: [] });
    const path = `/api/simulator/groups/${encodeURIComponent(g.id_group)}/participants`;
    expect((await t("POST", path, { join: [person(7)] })).json.members).toBe(2);
    // A member drawn again, then the same new person twice, then new ones.
    draws.queue.push(7, 8, 8, 7, 9, 9, 10, 11);
    const res = await t("POST", path, { join: 3 });
    expect(res.status).toBe(200);
    expect(res.json.joined).toHaveLength(3);
    expect(new Set(res.json.joined).size).toBe(3);
    expect(res.json.joined).not.toContain(person(7));
    expect(res.json.members).toBe(5);
    expect((await provider.groupState(channel, g.id_group)).size).toBe(5);
  });
});
