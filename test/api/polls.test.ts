import { describe, expect, it } from "vitest";
import { tenantWithSegment } from "../campaigns";
import { expectEnvelope, newTenant, request, until, type Api } from "../helpers";
import { testServerWithRunner } from "../server-with-runner";

const server = testServerWithRunner();

const poll = { question: "Qual horário prefere para a live?", options: ["19h", "20h", "21h"], multiple_answers: false };

async function sentPoll(groupCount: number, body: Record<string, unknown> = {}) {
  const t = await tenantWithSegment(server.url, groupCount, 10);
  const res = await t.api("POST", "/api/external/create-campaign/poll", { name: "Enquete da live", id_segment: t.segment, poll, ...body });
  expect(res.status).toBe(201);
  const id = res.json.id_campaign as string;
  await until(
    () => t.api("GET", `/api/external/info-campaign/${id}`),
    (r) => r.json.status === "completed",
  );
  return { ...t, id, created: res.json };
}

const vote = (api: Api, id: string, group: string, votes: Record<string, unknown>) =>
  api("POST", `/api/simulator/polls/${id}/${encodeURIComponent(group)}/votes`, { votes });

describe("create-campaign/poll", () => {
  it("sends one poll per group and sums the votes cast in three groups in info-campaign; a repeated vote is not counted twice", async () => {
    const { api, id, groups, created } = await sentPoll(3);
    expect(created).toMatchObject({ success: true, name: "Enquete da live", status: "pending", message_type: "poll", options_count: 3, scheduled_at: null });

    const log = (await api("GET", `/api/simulator/messages?id_campaign=${id}`)).json.messages;
    expect(log).toHaveLength(3);
    expect(log.every((m: { message_type: string; text: string }) => m.message_type === "poll" && m.text === poll.question)).toBe(true);

    // Before any vote: zeros, because the simulator reports votes (votes_available).
    const before = await api("GET", `/api/external/info-campaign/${id}`);
    expect(before.json.poll).toEqual({
      question: poll.question,
      multiple_answers: false,
      options: [
        { text: "19h", votes: 0 },
        { text: "20h", votes: 0 },
        { text: "21h", votes: 0 },
      ],
      votes_available: true,
    });

    expect((await vote(api, id, groups[0], { "19h": 3, "20h": 1 })).status).toBe(200);
    expect((await vote(api, id, groups[1], { "19h": 2, "21h": 4 })).status).toBe(200);
    const third = await vote(api, id, groups[2], { "20h": 5 });
    expect(third.status).toBe(200);
    expect(third.json).toMatchObject({ success: true, id_campaign: id, id_group: groups[2], votes: { "20h": 5 } });
    // The same votes reported again (a gateway resending): the same voters, nothing added.
    expect((await vote(api, id, groups[2], { "20h": 5 })).status).toBe(200);

    const info = await api("GET", `/api/external/info-campaign/${id}`);
    expect(info.json.message_type).toBe("poll");
    expect(info.json.groups).toEqual({ total: 3, sent: 3, pending: 0, failed: 0 });
    expect(info.json.poll.options).toEqual([
      { text: "19h", votes: 5 },
      { text: "20h", votes: 6 },
      { text: "21h", votes: 4 },
    ]);

    // Fewer votes in a group: those voters took their vote back.
    expect((await vote(api, id, groups[1], { "21h": 1 })).status).toBe(200);
    const after = await api("GET", `/api/external/info-campaign/${id}`);
    expect(after.json.poll.options.map((o: { votes: number }) => o.votes)).toEqual([5, 6, 1]);
  });

  it("a message campaign has poll: null", async () => {
    const t = await tenantWithSegment(server.url, 1, 10);
    const res = await t.api("POST", "/api/external/create-campaign/message", { name: "Texto", id_segment: t.segment, message: "Olá" });
    const info = await t.api("GET", `/api/external/info-campaign/${res.json.id_campaign}`);
    expect(info.json.poll).toBeNull();
  });

  it("answers 400 naming the field for a bad poll", async () => {
    const t = await tenantWithSegment(server.url, 1, 10);
    const create = (p: unknown) => t.api("POST", "/api/external/create-campaign/poll", { name: "Enquete", id_segment: t.segment, poll: p });
    const cases: [unknown, string][] = [
      [{ ...poll, question: "x".repeat(256) }, "poll.question"],
      [{ ...poll, question: "  " }, "poll.question"],
      [{ ...poll, options: ["só uma"] }, "poll.options"],
      [{ ...poll, options: Array.from({ length: 13 }, (_, i) => `Opção ${i + 1}`) }, "poll.options"],
      [{ ...poll, options: ["Sim", "y".repeat(101)] }, "poll.options.1"],
      [{ ...poll, options: ["Sim", "Não", " sim "] }, "poll.options.2"],
      [{ ...poll, options: ["Sim", 2] }, "poll.options.1"],
      [{ ...poll, multiple_answers: "yes" }, "poll.multiple_answers"],
      [{ question: poll.question, options: poll.options }, "poll.multiple_answers"],
      [undefined, "poll"],
    ];
    for (const [p, field] of cases) {
      const res = await create(p);
      expect(expectEnvelope(res, 400, "Bad Request").message, JSON.stringify(p)).toContain(field);
    }
    const missingName = await t.api("POST", "/api/external/create-campaign/poll", { id_segment: t.segment, poll });
    expect(expectEnvelope(missingName, 400, "Bad Request").message).toContain("name");
    const badSchedule = await t.api("POST", "/api/external/create-campaign/poll", {
      name: "E",
      id_segment: t.segment,
      poll,
      scheduled_at: "01/01/2020 - 10:00",
    });
    expect(expectEnvelope(badSchedule, 400, "Bad Request").message).toContain("scheduled_at");
    // Twelve options are fine on the simulator (WhatsApp's limit).
    const twelve = await create({ ...poll, options: Array.from({ length: 12 }, (_, i) => `Opção ${i + 1}`) });
    expect(twelve.status).toBe(201);
  });

  it("the vote control: 400 naming the field, 404 for another tenant's campaign or a group the poll did not reach", async () => {
    const { api, id, groups } = await sentPoll(1);
    expect(expectEnvelope(await vote(api, id, groups[0], { "22h": 1 }), 400, "Bad Request").message).toContain("votes.22h");
    expect(expectEnvelope(await vote(api, id, groups[0], { "19h": -1 }), 400, "Bad Request").message).toContain("votes.19h");
    expect(expectEnvelope(await vote(api, id, groups[0], { "19h": "3" }), 400, "Bad Request").message).toContain("votes.19h");
    expect(expectEnvelope(await vote(api, id, groups[0], {}), 400, "Bad Request").message).toContain("votes");
    expect(expectEnvelope(await vote(api, "campaign_x", groups[0], { "19h": 1 }), 400, "Bad Request").message).toContain("id_campaign");
    expect(expectEnvelope(await vote(api, id, "120363999999999999@g.us", { "19h": 1 }), 404, "Not Found").message).toBeTruthy();

    const stranger = await newTenant(server.url);
    expect(expectEnvelope(await vote(stranger, id, groups[0], { "19h": 1 }), 404, "Not Found").message).toBeTruthy();
    expect((await api("GET", `/api/external/info-campaign/${id}`)).json.poll.options[0].votes).toBe(0);
  });
});

describe("the OpenAPI document", () => {
  it("documents create-campaign/poll (201, Idempotency-Key, the poll's bounds) and info-campaign's poll", async () => {
    const doc = (await request(server.url, "GET", "/api/openapi.json")).json;
    const op = doc.paths["/api/external/create-campaign/poll"].post;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "404"]));
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key");
    const body = op.requestBody.content["application/json"].schema;
    expect(body.required).toEqual(expect.arrayContaining(["name", "id_segment", "poll"]));
    const pollSchema = body.properties.poll;
    expect(pollSchema.required).toEqual(expect.arrayContaining(["question", "options", "multiple_answers"]));
    expect(pollSchema.properties.question.maxLength).toBe(255);
    expect(pollSchema.properties.options).toMatchObject({ minItems: 2, maxItems: 12, items: { maxLength: 100 } });
    expect(pollSchema.properties.options.description).toMatch(/distinct/);
    expect(pollSchema.properties.multiple_answers.type).toBe("boolean");
    const answer = op.responses["201"].content["application/json"].schema;
    expect(answer.properties.message_type.const ?? answer.properties.message_type.enum?.[0]).toBe("poll");

    const info = doc.paths["/api/external/info-campaign/{id_campaign}"].get.responses["200"].content["application/json"].schema;
    const results = JSON.stringify(info.properties.poll);
    for (const field of ["question", "options", "votes", "votes_available", "multiple_answers"]) expect(results).toContain(`"${field}"`);
    expect(results).toMatch(/not zero/);
    expect(info.required).toContain("poll");
  });
});
