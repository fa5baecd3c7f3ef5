import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "../../db/client";
import { createCallerFactory } from "../../server/trpc";
import { appRouter } from "../../server/root";
import { getServices } from "../../server/services";
import { getSettings } from "../../server/settings/get-settings";
import { expectEnvelope, newTenant, request, type Api } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const LIST = "/api/external/list-settings";
const EDIT = "/api/external/edit-settings";

const day = { enabled: true, start: "08:00", end: "20:00", windows: [] };
/** docs/decisions.md#settings, written out independently of server/settings/defaults.ts. */
const contractDefaults = {
  dispatch_rates: { min_dispatch_rate: 5, max_dispatch_rate: 15, dispatches_per_loop: 1, min_campaign_interval: 30, max_campaign_interval: 60 },
  preferences: { link_preview_mode: "ask_always", link_preview_type: "auto", forward_message_enabled: false },
  queue: { concurrent_mode: "disabled" },
  // CONTRACT §7 "Budgets".
  number_health: { daily_message_cap: null, warmup_days: 0, warmup_first_day_cap: 50, min_send_gap_seconds: 0, group_create_cap: 20 },
  // docs/decisions.md#test-send: none until the tenant lists some.
  test_groups: [],
  sending_schedule: {
    enabled: false,
    finish_queued_on_end: true,
    finish_queued_mode: "between_days",
    cancel_outside_hours: false,
    cancel_mode: "between_days",
    days: { monday: day, tuesday: day, wednesday: day, thursday: day, friday: day, saturday: day, sunday: day },
  },
};

/** 400 in the spec's envelope whose message names `field` (and every extra fragment). */
async function expect400(api: Api, body: unknown, field: string, ...fragments: string[]) {
  const res = await api("PATCH", EDIT, body);
  const env = expectEnvelope(res, 400, "Bad Request");
  expect(env.message).toContain(field);
  for (const f of fragments) expect(env.message).toContain(f);
  return env;
}

describe("list-settings", () => {
  it("answers the defaults for a tenant that never saved", async () => {
    const api = await newTenant(server.url);
    const res = await api("GET", LIST);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ success: true, settings: contractDefaults });
  });

  it("401 without or with a wrong key, in the envelope", async () => {
    expectEnvelope(await request(server.url, "GET", LIST), 401, "Unauthorized");
    expectEnvelope(await request(server.url, "PATCH", EDIT, { queue: { concurrent_mode: "enabled" } }), 401, "Unauthorized");
    const wrong = { "x-api-key": `sk_live_${"a".repeat(40)}` };
    expectEnvelope(await request(server.url, "GET", LIST, undefined, wrong), 401, "Unauthorized");
  });
});

describe("edit-settings", () => {
  it("changes one field, answers updated=[its path] and the full settings, and keeps it", async () => {
    const api = await newTenant(server.url);
    const res = await api("PATCH", EDIT, { dispatch_rates: { min_dispatch_rate: 10 } });
    expect(res.status).toBe(200);
    const expected = { ...contractDefaults, dispatch_rates: { ...contractDefaults.dispatch_rates, min_dispatch_rate: 10 } };
    expect(res.json).toEqual({ success: true, updated: ["dispatch_rates.min_dispatch_rate"], settings: expected });
    expect((await api("GET", LIST)).json.settings).toEqual(expected);
    // A later edit of another section keeps the first one.
    const next = await api("PATCH", EDIT, { preferences: { link_preview_mode: "never" } });
    expect(next.json.updated).toEqual(["preferences.link_preview_mode"]);
    expect(next.json.settings.dispatch_rates.min_dispatch_rate).toBe(10);
    expect((await api("GET", LIST)).json.settings).toEqual({ ...expected, preferences: { ...expected.preferences, link_preview_mode: "never" } });
  });

  it("answers updated=[] when every value sent is the current one", async () => {
    const api = await newTenant(server.url);
    const same = await api("PATCH", EDIT, { dispatch_rates: { max_dispatch_rate: 15 }, queue: { concurrent_mode: "disabled" } });
    expect(same.status).toBe(200);
    expect(same.json).toEqual({ success: true, updated: [], settings: contractDefaults });
    await api("PATCH", EDIT, { sending_schedule: { days: { friday: { windows: [{ start: "09:00", end: "12:00" }] } } } });
    const again = await api("PATCH", EDIT, { sending_schedule: { days: { friday: { windows: [{ start: "09:00", end: "12:00" }] } } } });
    expect(again.json.updated).toEqual([]);
  });

  it("lists every changed leaf as a dotted path; a day's windows count as one", async () => {
    const api = await newTenant(server.url);
    const res = await api("PATCH", EDIT, {
      dispatch_rates: { min_dispatch_rate: 20, max_dispatch_rate: 40, dispatches_per_loop: 5 },
      sending_schedule: {
        enabled: true,
        cancel_mode: "always",
        days: {
          monday: {
            start: "09:30",
            windows: [
              { start: "09:30", end: "12:00" },
              { start: "12:00", end: "13:00" },
              { start: "14:00", end: "18:00" },
            ],
          },
          sunday: { enabled: false },
        },
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.updated).toEqual([
      "dispatch_rates.min_dispatch_rate",
      "dispatch_rates.max_dispatch_rate",
      "dispatch_rates.dispatches_per_loop",
      "sending_schedule.enabled",
      "sending_schedule.cancel_mode",
      "sending_schedule.days.monday.start",
      "sending_schedule.days.monday.windows",
      "sending_schedule.days.sunday.enabled",
    ]);
    const s = (await api("GET", LIST)).json.settings;
    expect(s.sending_schedule.days.monday).toEqual({
      enabled: true,
      start: "09:30",
      end: "20:00",
      windows: [
        { start: "09:30", end: "12:00" },
        { start: "12:00", end: "13:00" },
        { start: "14:00", end: "18:00" },
      ],
    });
    expect(s.sending_schedule.days.sunday).toEqual({ ...day, enabled: false });
    expect(s.sending_schedule.days.tuesday).toEqual(day);
    // Clearing the windows is one change again.
    const cleared = await api("PATCH", EDIT, { sending_schedule: { days: { monday: { windows: [] } } } });
    expect(cleared.json.updated).toEqual(["sending_schedule.days.monday.windows"]);
  });

  it("accepts the bounds themselves", async () => {
    const api = await newTenant(server.url);
    const low = await api("PATCH", EDIT, {
      dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 1, min_campaign_interval: 0, max_campaign_interval: 0 },
      sending_schedule: { days: { monday: { start: "00:00", end: "23:59" } } },
    });
    expect(low.status).toBe(200);
    const high = await api("PATCH", EDIT, {
      dispatch_rates: {
        min_dispatch_rate: 3600,
        max_dispatch_rate: 3600,
        dispatches_per_loop: 100,
        min_campaign_interval: 86400,
        max_campaign_interval: 86400,
      },
    });
    expect(high.status).toBe(200);
    expect(high.json.settings.dispatch_rates).toEqual({
      min_dispatch_rate: 3600,
      max_dispatch_rate: 3600,
      dispatches_per_loop: 100,
      min_campaign_interval: 86400,
      max_campaign_interval: 86400,
    });
    // Fractions of a second are allowed for rates and intervals.
    expect((await api("PATCH", EDIT, { dispatch_rates: { min_dispatch_rate: 2.5 } })).status).toBe(200);
  });

  it("accepts a min and max changed together even when the min alone would break the rule", async () => {
    const api = await newTenant(server.url);
    const res = await api("PATCH", EDIT, { dispatch_rates: { min_dispatch_rate: 100, max_dispatch_rate: 200 } });
    expect(res.status).toBe(200);
    expect(res.json.updated).toEqual(["dispatch_rates.min_dispatch_rate", "dispatch_rates.max_dispatch_rate"]);
  });

  it("200 on the tRPC path the dashboard uses (the same procedures)", async () => {
    const api = await newTenant(server.url);
    const { db, provider } = await getServices();
    const caller = createCallerFactory(appRouter)({
      db,
      provider,
      caller: { kind: "session", tenantId: api.tenantId, userId: "u", role: "owner" },
      now: new Date(),
    });
    const edited = await caller.settings.edit({ queue: { concurrent_mode: "per_channel" } });
    expect(edited.updated).toEqual(["queue.concurrent_mode"]);
    expect((await caller.settings.get()).settings.queue.concurrent_mode).toBe("per_channel");
    expect((await api("GET", LIST)).json.settings.queue.concurrent_mode).toBe("per_channel");
  });

  it("getSettings (for the dispatch engine) answers the merged settings, 404 for an unknown tenant", async () => {
    const api = await newTenant(server.url);
    await api("PATCH", EDIT, { dispatch_rates: { dispatches_per_loop: 7 } });
    const db = await getDb();
    const s = await getSettings(db, api.tenantId);
    expect(s.dispatch_rates.dispatches_per_loop).toBe(7);
    expect(s.sending_schedule.days.sunday).toEqual(day);
    await expect(getSettings(db, "tenant_does_not_exist")).rejects.toMatchObject({ status: 404 });
  });
});

describe("edit-settings validation (400 naming the field)", () => {
  let api: Api;
  beforeAll(async () => {
    api = await newTenant(server.url);
  });

  const numeric: [string, string, number[]][] = [
    ["dispatch_rates", "min_dispatch_rate", [-1, -0.5, 3600.5, 3601]],
    ["dispatch_rates", "max_dispatch_rate", [-1, 3601, 1e9]],
    ["dispatch_rates", "dispatches_per_loop", [0, -3, 101, 1.5]],
    ["dispatch_rates", "min_campaign_interval", [-1, 86401]],
    ["dispatch_rates", "max_campaign_interval", [-1, 86401]],
  ];
  for (const [section, field, values] of numeric) {
    for (const value of values) {
      it(`${section}.${field} = ${value}`, async () => {
        await expect400(api, { [section]: { [field]: value } }, `${section}.${field}:`);
      });
    }
  }

  it("names the allowed range", async () => {
    await expect400(api, { dispatch_rates: { min_dispatch_rate: 3601 } }, "dispatch_rates.min_dispatch_rate:", "3600", "seconds");
    await expect400(api, { dispatch_rates: { max_campaign_interval: 86401 } }, "dispatch_rates.max_campaign_interval:", "86400");
    await expect400(api, { dispatch_rates: { dispatches_per_loop: 1.5 } }, "dispatch_rates.dispatches_per_loop:", "integer", "1", "100");
  });

  it("refuses strings, null and booleans where numbers belong (no coercion)", async () => {
    await expect400(api, { dispatch_rates: { min_dispatch_rate: "10" } }, "dispatch_rates.min_dispatch_rate:");
    await expect400(api, { dispatch_rates: { min_dispatch_rate: "" } }, "dispatch_rates.min_dispatch_rate:");
    await expect400(api, { dispatch_rates: { dispatches_per_loop: null } }, "dispatch_rates.dispatches_per_loop:");
    await expect400(api, { dispatch_rates: { dispatches_per_loop: true } }, "dispatch_rates.dispatches_per_loop:");
  });

  it('refuses non-booleans where booleans belong ("false" does not become true)', async () => {
    await expect400(api, { preferences: { forward_message_enabled: "false" } }, "preferences.forward_message_enabled:");
    await expect400(api, { sending_schedule: { enabled: 1 } }, "sending_schedule.enabled:");
    await expect400(api, { sending_schedule: { days: { monday: { enabled: "no" } } } }, "sending_schedule.days.monday.enabled:");
    await expect400(api, { sending_schedule: { cancel_outside_hours: null } }, "sending_schedule.cancel_outside_hours:");
  });

  const enums: [string, string, string[]][] = [
    ["preferences", "link_preview_mode", ["ask_always", "always", "never"]],
    ["preferences", "link_preview_type", ["auto", "large", "small"]],
    ["queue", "concurrent_mode", ["disabled", "per_channel", "enabled"]],
    ["sending_schedule", "finish_queued_mode", ["same_day", "between_days"]],
    ["sending_schedule", "cancel_mode", ["between_days", "always"]],
  ];
  for (const [section, field, allowed] of enums) {
    it(`${section}.${field}: a wrong value names the allowed ones`, async () => {
      await expect400(api, { [section]: { [field]: "sometimes" } }, `${section}.${field}:`, allowed.join(", "));
      await expect400(api, { [section]: { [field]: 3 } }, `${section}.${field}:`);
    });
  }

  it("refuses times not in HH:mm 00:00–23:59", async () => {
    for (const bad of ["8:00", "24:00", "12:60", "noon", "08:00:00", "", " 08:00"]) {
      await expect400(api, { sending_schedule: { days: { monday: { start: bad } } } }, "sending_schedule.days.monday.start:", "HH:mm");
    }
    await expect400(api, { sending_schedule: { days: { tuesday: { end: 2000 } } } }, "sending_schedule.days.tuesday.end:");
    await expect400(
      api,
      { sending_schedule: { days: { friday: { windows: [{ start: "09:00", end: "25:00" }] } } } },
      "sending_schedule.days.friday.windows.0.end:",
      "HH:mm",
    );
    await expect400(api, { sending_schedule: { days: { friday: { windows: [{ start: "09:00" }] } } } }, "sending_schedule.days.friday.windows.0.end:");
  });

  it("a day's start must be before its end (naming the field sent)", async () => {
    // Default end is 20:00: a start of 20:00 or later breaks it.
    await expect400(api, { sending_schedule: { days: { monday: { start: "20:00" } } } }, "sending_schedule.days.monday.start:", "before end (20:00)");
    await expect400(api, { sending_schedule: { days: { monday: { start: "21:15" } } } }, "sending_schedule.days.monday.start:");
    // Default start is 08:00: an end of 08:00 or earlier breaks it, and the end is named.
    await expect400(api, { sending_schedule: { days: { wednesday: { end: "08:00" } } } }, "sending_schedule.days.wednesday.end:", "after start (08:00)");
    await expect400(api, { sending_schedule: { days: { sunday: { start: "10:00", end: "09:00" } } } }, "sending_schedule.days.sunday.start:");
  });

  it("each window's start must be before its end", async () => {
    await expect400(
      api,
      { sending_schedule: { days: { monday: { windows: [{ start: "12:00", end: "09:00" }] } } } },
      "sending_schedule.days.monday.windows.0.start:",
    );
    await expect400(
      api,
      {
        sending_schedule: {
          days: {
            monday: {
              windows: [
                { start: "09:00", end: "10:00" },
                { start: "11:00", end: "11:00" },
              ],
            },
          },
        },
      },
      "sending_schedule.days.monday.windows.1.start:",
    );
  });

  it("windows must not overlap", async () => {
    const env = await expect400(
      api,
      {
        sending_schedule: {
          days: {
            monday: {
              windows: [
                { start: "08:00", end: "12:00" },
                { start: "11:00", end: "14:00" },
              ],
            },
          },
        },
      },
      "sending_schedule.days.monday.windows.1:",
      "overlaps",
      "08:00–12:00",
    );
    expect(env.message).not.toContain("windows.0:");
    await expect400(
      api,
      {
        sending_schedule: {
          days: {
            monday: {
              windows: [
                { start: "08:00", end: "12:00" },
                { start: "08:00", end: "09:00" },
              ],
            },
          },
        },
      },
      "sending_schedule.days.monday.windows.1:",
      "overlaps",
    );
  });

  it("windows must be sorted by start", async () => {
    await expect400(
      api,
      {
        sending_schedule: {
          days: {
            thursday: {
              windows: [
                { start: "14:00", end: "16:00" },
                { start: "08:00", end: "10:00" },
              ],
            },
          },
        },
      },
      "sending_schedule.days.thursday.windows.1:",
      "sorted",
    );
  });

  it("at most 48 windows per day", async () => {
    const windows = Array.from({ length: 49 }, (_, i) => ({
      start: `${String(Math.floor(i / 2)).padStart(2, "0")}:${i % 2 ? "30" : "00"}`,
      end: `${String(Math.floor(i / 2)).padStart(2, "0")}:${i % 2 ? "59" : "29"}`,
    }));
    await expect400(api, { sending_schedule: { days: { monday: { windows } } } }, "sending_schedule.days.monday.windows:", "48");
  });

  it("an unknown day key is refused by name", async () => {
    await expect400(api, { sending_schedule: { days: { funday: { enabled: false } } } }, "sending_schedule.days:", "funday", "monday");
    await expect400(api, { sending_schedule: { days: { Monday: { enabled: false } } } }, "sending_schedule.days:", "Monday");
  });

  it("unknown properties are refused by name, at every level", async () => {
    await expect400(api, { colour: "blue" }, "colour", "dispatch_rates, preferences, queue, number_health, test_groups, sending_schedule");
    await expect400(api, { queue: { concurrent_mode: "enabled" }, extra: 1, other: 2 }, "extra, other");
    await expect400(api, { dispatch_rates: { min_dispatch_rate: 10, speed: 3 } }, "dispatch_rates:", "speed");
    await expect400(api, { sending_schedule: { days: { monday: { start: "09:00", lunch: true } } } }, "sending_schedule.days.monday:", "lunch");
    await expect400(
      api,
      { sending_schedule: { days: { monday: { windows: [{ start: "09:00", end: "10:00", tz: "UTC" }] } } } },
      "sending_schedule.days.monday.windows.0:",
      "tz",
    );
  });

  it("an empty body, an empty section or a body that is not an object is refused", async () => {
    await expect400(api, {}, "body:", "send at least one");
    expectEnvelope(await api("PATCH", EDIT), 400, "Bad Request");
    await expect400(api, { dispatch_rates: {} }, "dispatch_rates:", "send at least one");
    await expect400(api, { sending_schedule: { days: {} } }, "sending_schedule.days:", "send at least one");
    await expect400(api, { sending_schedule: { days: { monday: {} } } }, "sending_schedule.days.monday:");
    await expect400(api, { queue: "disabled" }, "queue:");
    expectEnvelope(await api("PATCH", EDIT, "[1,2]"), 400, "Bad Request");
    expectEnvelope(await api("PATCH", EDIT, "{not json"), 400, "Bad Request");
  });

  it("min > max after merging, naming whichever side was sent", async () => {
    await expect400(api, { dispatch_rates: { min_dispatch_rate: 20 } }, "dispatch_rates.min_dispatch_rate:", "≤ max_dispatch_rate (15)");
    await expect400(api, { dispatch_rates: { max_dispatch_rate: 3 } }, "dispatch_rates.max_dispatch_rate:", "≥ min_dispatch_rate (5)");
    await expect400(api, { dispatch_rates: { min_campaign_interval: 61 } }, "dispatch_rates.min_campaign_interval:", "≤ max_campaign_interval (60)");
    await expect400(api, { dispatch_rates: { max_campaign_interval: 29 } }, "dispatch_rates.max_campaign_interval:", "≥ min_campaign_interval (30)");
    await expect400(api, { dispatch_rates: { min_dispatch_rate: 9, max_dispatch_rate: 8 } }, "dispatch_rates.min_dispatch_rate:", "(8)");
  });

  it("uses the saved values, not the defaults, for the merged check", async () => {
    const t = await newTenant(server.url);
    expect((await t("PATCH", EDIT, { dispatch_rates: { max_dispatch_rate: 100 } })).status).toBe(200);
    expect((await t("PATCH", EDIT, { dispatch_rates: { min_dispatch_rate: 50 } })).status).toBe(200);
    await expect400(t, { dispatch_rates: { max_dispatch_rate: 40 } }, "dispatch_rates.max_dispatch_rate:", "(50)");
    await expect400(t, { dispatch_rates: { min_dispatch_rate: 101 } }, "dispatch_rates.min_dispatch_rate:", "(100)");
  });

  it("names every problem at once, and a refused edit changes nothing", async () => {
    const env = await expect400(
      api,
      { dispatch_rates: { min_dispatch_rate: -1, dispatches_per_loop: 0 }, queue: { concurrent_mode: "x" } },
      "dispatch_rates.min_dispatch_rate:",
      "dispatch_rates.dispatches_per_loop:",
      "queue.concurrent_mode:",
    );
    expect(env.code).toBe("validation_error");
    await expect400(
      api,
      { dispatch_rates: { max_dispatch_rate: 1000 }, sending_schedule: { days: { monday: { start: "21:00" } } } },
      "sending_schedule.days.monday.start:",
    );
    expect((await api("GET", LIST)).json.settings).toEqual(contractDefaults);
  });
});

describe("tenants and concurrency", () => {
  it("one tenant's edit never shows up for another", async () => {
    const a = await newTenant(server.url);
    const b = await newTenant(server.url);
    await a("PATCH", EDIT, { queue: { concurrent_mode: "enabled" }, sending_schedule: { days: { monday: { enabled: false } } } });
    expect((await b("GET", LIST)).json.settings).toEqual(contractDefaults);
    const bEdit = await b("PATCH", EDIT, { dispatch_rates: { dispatches_per_loop: 3 } });
    expect(bEdit.json.updated).toEqual(["dispatch_rates.dispatches_per_loop"]);
    expect(bEdit.json.settings.queue.concurrent_mode).toBe("disabled");
    const aSettings = (await a("GET", LIST)).json.settings;
    expect(aSettings.queue.concurrent_mode).toBe("enabled");
    expect(aSettings.dispatch_rates.dispatches_per_loop).toBe(1);
  });

  it("two edits of different fields at the same time both survive", async () => {
    for (let round = 0; round < 5; round++) {
      const api = await newTenant(server.url);
      const [r1, r2, r3] = await Promise.all([
        api("PATCH", EDIT, { dispatch_rates: { dispatches_per_loop: 10 + round } }),
        api("PATCH", EDIT, { preferences: { forward_message_enabled: true } }),
        api("PATCH", EDIT, { sending_schedule: { days: { saturday: { start: "10:00" } } } }),
      ]);
      expect([r1.status, r2.status, r3.status]).toEqual([200, 200, 200]);
      expect(r1.json.updated).toEqual(["dispatch_rates.dispatches_per_loop"]);
      expect(r2.json.updated).toEqual(["preferences.forward_message_enabled"]);
      expect(r3.json.updated).toEqual(["sending_schedule.days.saturday.start"]);
      const s = (await api("GET", LIST)).json.settings;
      expect(s.dispatch_rates.dispatches_per_loop).toBe(10 + round);
      expect(s.preferences.forward_message_enabled).toBe(true);
      expect(s.sending_schedule.days.saturday.start).toBe("10:00");
    }
  });
});

describe("OpenAPI document", () => {
  it("documents both settings operations with units, bounds and the strict partial body", async () => {
    const doc = (await request(server.url, "GET", "/api/openapi.json")).json;
    const list = doc.paths["/api/external/list-settings"].get;
    const edit = doc.paths["/api/external/edit-settings"].patch;
    expect(Object.keys(list.responses).sort()).toEqual(["200", "401", "404", "429", "500"]);
    expect(Object.keys(edit.responses).sort()).toEqual(["200", "400", "401", "404", "413", "429", "500"]);
    const body = edit.requestBody.content["application/json"].schema;
    expect(body.additionalProperties).toBe(false);
    const rates = body.properties.dispatch_rates;
    expect(rates.additionalProperties).toBe(false);
    expect(rates.properties.min_dispatch_rate).toMatchObject({ type: "number", minimum: 0, maximum: 3600 });
    expect(rates.properties.min_dispatch_rate.description).toContain("Seconds");
    expect(rates.properties.dispatches_per_loop).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
    const out = list.responses["200"].content["application/json"].schema.properties.settings;
    expect(out.properties.preferences.properties.link_preview_mode.enum).toEqual(["ask_always", "always", "never"]);
    expect(out.properties.sending_schedule.properties.days.required).toEqual(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]);
  });
});
