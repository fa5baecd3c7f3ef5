import { validate } from "@scalar/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "../helpers";
import { startTestServer, type TestServer } from "../http-server";

let server: TestServer;
let doc: any;
beforeAll(async () => {
  server = await startTestServer();
  doc = (await request(server.url, "GET", "/api/openapi.json")).json;
});
afterAll(() => server.close());

describe("OpenAPI document", () => {
  it("lists the spec's paths and methods", () => {
    const ops = Object.entries(doc.paths).flatMap(([p, item]: [string, any]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    expect(ops).toEqual(
      expect.arrayContaining([
        "POST /api/external/create-channel",
        "PUT /api/external/edit-channel/{id_channel}",
        "GET /api/external/list-groups/{id_channel}",
        "POST /api/external/create-segment",
        "PUT /api/external/edit-segment/{id_segment}",
        "POST /api/external/monitoring/group",
        "PUT /api/external/edit-monitoring/group/{id_segment}",
        "GET /api/external/list-audit-log",
      ]),
    );
    expect(doc.servers[0].url).toMatch(/^http/);
    // The audit log's filters (docs/team.md#audit-log).
    expect(doc.paths["/api/external/list-audit-log"].get.parameters.map((p: any) => p.name)).toEqual(["since", "until", "actor_type", "action", "cursor"]);
  });

  it("documents both API key headers, 201s, Idempotency-Key and the error envelope", () => {
    const schemes = Object.values(doc.components.securitySchemes) as any[];
    expect(
      schemes
        .filter((s) => s.type === "apiKey")
        .map((s) => s.name)
        .sort(),
    ).toEqual(["api-key", "x-api-key"]);
    // Partner endpoints: OAuth 2.0 bearer tokens with their scope.
    expect(doc.components.securitySchemes.partnerOAuth.flows.authorizationCode.tokenUrl).toMatch(/\/api\/oauth\/token$/);
    expect(doc.paths["/api/external/partner/statistics"].get.security).toEqual([{ partnerOAuth: ["statistics:read"] }]);
    const create = doc.paths["/api/external/create-channel"].post;
    expect(Object.keys(create.responses)).toContain("201");
    expect(create.responses["200"]).toBeUndefined();
    expect(create.parameters.some((p: any) => p.name === "Idempotency-Key" && p.schema.maxLength === 255)).toBe(true);
    expect(create.responses["403"].content["application/json"].schema.$ref).toBe("#/components/schemas/ErrorEnvelope");
    expect(create.responses["429"].headers["Retry-After"]).toBeDefined();
    expect(doc.components.schemas.ErrorEnvelope.required).toEqual(["success", "error", "message"]);
    expect(doc.paths["/api/external/list-groups/{id_channel}"].get.responses["503"]).toBeDefined();
    // launch-leads takes 10,000 leads: its body cap is larger than the others' (docs/launches.md#leads).
    expect(doc.paths["/api/external/launch-leads/{id_launch}"].post.responses["413"].description).toContain("8 MiB");
    expect(doc.paths["/api/external/launch-leads/{id_launch}"].get.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(["status", "format", "page"]),
    );
    expect(doc.info.description).toContain("idempotency_key_reused");
  });

  it("each operation's security says what the code accepts: owner operations an API key only, partner operations a bearer token with their scope", () => {
    const ops = Object.entries(doc.paths).flatMap(([p, item]: [string, any]) =>
      Object.entries(item).map(([m, op]: [string, any]) => ({ id: `${m.toUpperCase()} ${p}`, op })),
    );
    expect(ops.length).toBeGreaterThan(15);
    for (const { id, op } of ops) {
      if (id.includes("/partner/")) {
        expect(op.security, id).toHaveLength(1);
        expect(Object.keys(op.security[0]), id).toEqual(["partnerOAuth"]);
      } else {
        expect(op.security, id).toEqual([{ apiKey: [] }, { apiKeyAlias: [] }]);
      }
    }
    expect(doc.paths["/api/external/partner/campaigns"].get.security).toEqual([{ partnerOAuth: ["campaigns:read"] }]);
    expect(doc.paths["/api/external/test-webhook/{type}"].post.security).toEqual([{ apiKey: [] }, { apiKeyAlias: [] }]);
  });

  it("publishes the size limits (docs/decisions.md#limits-abuse-retention, Sizes) as maxLength / maxItems", () => {
    const body = (path: string, method = "post") => doc.paths[path][method].requestBody.content["application/json"].schema;
    const message = body("/api/external/create-campaign/message");
    expect(message.properties.message.maxLength).toBe(65_536);
    expect(message.properties.name.maxLength).toBe(120);
    expect(message.properties.media_url.maxLength).toBe(2048);
    const carousel = body("/api/external/create-campaign/carousel");
    expect(carousel.properties.carousel_data.properties.cards.items.properties.text.maxLength).toBe(1024);
    expect(body("/api/external/create-channel").properties.name.maxLength).toBe(120);
    const segment = body("/api/external/create-segment");
    expect(segment.properties.name.maxLength).toBe(120);
    expect(segment.properties.groups.maxItems).toBe(50_000);
  });

  it("documents info-campaign's monitoring_group apart from its groups", () => {
    const schema = doc.paths["/api/external/info-campaign/{id_campaign}"].get.responses["200"].content["application/json"].schema;
    const copy = JSON.stringify(schema.properties.monitoring_group);
    for (const field of ["id_group", "id_channel", "status", "sent_at"]) expect(copy).toContain(`"${field}"`);
    expect(copy).toContain('"sending"');
    expect(schema.required).toContain("monitoring_group");
  });

  it("documents info-campaign's reads_available and what partner total_reads counts", () => {
    const schema = doc.paths["/api/external/info-campaign/{id_campaign}"].get.responses["200"].content["application/json"].schema;
    expect(schema.properties.reads_available.type).toBe("boolean");
    expect(schema.properties.reads_available.description).toMatch(/Evolution/);
    expect(schema.required).toContain("reads_available");
    const stats = doc.paths["/api/external/partner/statistics"].get.responses["200"].content["application/json"].schema;
    expect(stats.properties.statistics.properties.total_reads.description).toMatch(/only reads the platform reported/);
  });

  it("accepts legacy <phone>-<timestamp>@g.us group ids where group ids are accepted", () => {
    const groups = doc.paths["/api/external/create-segment"].post.requestBody.content["application/json"].schema.properties.groups.items;
    expect(new RegExp(groups.pattern).test("551199998888-1514827292@g.us")).toBe(true);
    expect(new RegExp(groups.pattern).test("120363012345678901@g.us")).toBe(true);
    expect(new RegExp(groups.pattern).test("12-3@g.us")).toBe(false);
  });

  it("publishes the channel status values", () => {
    const schema = doc.paths["/api/external/edit-channel/{id_channel}"].put.responses["200"].content["application/json"].schema;
    expect(schema.properties.status.enum).toEqual(["connecting", "connected", "disconnected"]);
  });

  it("is a valid OpenAPI 3.1 document, webhooks included", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const { valid, errors } = await validate(structuredClone(doc));
    expect(errors).toEqual([]);
    expect(valid).toBe(true);
  });

  it("publishes each webhook event type under webhooks, with the body's schema (server/webhooks/events.ts)", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual(["campaign_progress", "campaign_status", "channel_status", "group_activity"]);
    for (const [type, item] of Object.entries(doc.webhooks) as [string, any][]) {
      const schema = item.post.requestBody.content["application/json"].schema;
      expect(schema.properties.type.const, type).toBe(type);
      expect(schema.required, type).toEqual(["type", "timestamp", "data"]);
      expect(Object.keys(item.post.responses), type).toEqual(["2XX"]);
    }
    const data = (type: string) => doc.webhooks[type].post.requestBody.content["application/json"].schema.properties.data;
    expect(data("campaign_status").required).toEqual(["id_campaign", "name", "status", "groups"]);
    expect(data("channel_status").properties.health.required).toContain("daily_cap");
    const events = data("group_activity").oneOf ?? data("group_activity").anyOf;
    expect(events.map((e: any) => e.properties.event.const)).toEqual([
      "group_created",
      "group_full",
      "link_broken",
      "members_changed",
      "traffic_alert",
      "purchase",
      "buyer_removed",
      "moderation",
      "group_action",
    ]);
  });
});
