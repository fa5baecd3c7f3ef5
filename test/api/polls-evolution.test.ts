import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeEvolution } from "../fake-evolution";
import { expectEnvelope, until, type Api } from "../helpers";
import { startEvolutionWithRunner } from "../evolution-service";

// Polls with MESSAGING_PROVIDER=evolution against the fake gateway (2.3.7 by default, as EVOLUTION-FACTS.md describes it).
let fake: FakeEvolution;
let api: Api;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ fake, api, stop } = await startEvolutionWithRunner({ channelLimit: 50 }));
});
afterAll(() => stop());

async function segment(count: number) {
  const { json } = await api("POST", "/api/external/create-channel", { name: "Evo" });
  const id = json.id_channel as string;
  await fake.pair(id);
  await until(
    async () => (await api("PUT", `/api/external/edit-channel/${id}`, { name: "Evo" })).json.status,
    (s) => s === "connected",
  );
  const groups = (await api("GET", `/api/external/list-groups/${id}`)).json.groups.map((g: { id_group: string }) => g.id_group).slice(0, count);
  const seg = await api("POST", "/api/external/create-segment", { name: "Seg", id_channel: [id], groups });
  return { channel: id, segment: seg.json.id_segment as string, groups: groups as string[] };
}

const info = (id: string) => api("GET", `/api/external/info-campaign/${id}`);
const votesOf = async (id: string) => (await info(id)).json.poll.options.map((o: { votes: number | null }) => o.votes);

describe("polls through Evolution API", () => {
  it("sendPoll to three groups; votes posted by the gateway add up per option; a resent or changed vote is not counted twice", async () => {
    const s = await segment(3);
    const res = await api("POST", "/api/external/create-campaign/poll", {
      name: "Enquete",
      id_segment: s.segment,
      poll: { question: "Vem para a live?", options: ["Sim", "Não", "Talvez"], multiple_answers: true },
    });
    expect(res.status).toBe(201);
    const id = res.json.id_campaign as string;
    await until(
      () => info(id),
      (r) => r.json.status === "completed",
    );
    const polls = fake.messages.filter((m) => m.instance === s.channel);
    expect(polls.map((m) => m.number).sort()).toEqual([...s.groups].sort());
    // Evolution's SendPollDto: name, selectableCount (0: any number of answers), values.
    for (const m of polls)
      expect(m).toMatchObject({ endpoint: "sendPoll", body: { name: "Vem para a live?", selectableCount: 0, values: ["Sim", "Não", "Talvez"] } });
    expect((await info(id)).json.poll).toEqual({
      question: "Vem para a live?",
      multiple_answers: true,
      options: [
        { text: "Sim", votes: 0 },
        { text: "Não", votes: 0 },
        { text: "Talvez", votes: 0 },
      ],
      votes_available: true,
    });

    const [a, b, c] = s.groups.map((g) => polls.find((m) => m.number === g)!.id);
    await fake.pollVote(a, "5511900000001", ["Sim"]);
    await fake.pollVote(a, "5511900000002", ["Sim", "Talvez"]);
    await fake.pollVote(b, "5511900000003", ["Não"]);
    await fake.pollVote(c, "5511900000004", ["Sim"]);
    await fake.pollVote(c, "5511900000005", ["Talvez"]);
    await fake.webhooksSettled();
    expect(await votesOf(id)).toEqual([3, 1, 2]);

    // The same vote again (WhatsApp resends, the gateway retries): counted once.
    await fake.pollVote(c, "5511900000005", ["Talvez"]);
    // A voter changes their mind; another takes their vote back.
    await fake.pollVote(b, "5511900000003", ["Sim"]);
    await fake.pollVote(a, "5511900000002", []);
    await fake.webhooksSettled();
    expect(await votesOf(id)).toEqual([3, 0, 1]);

    // A gateway before 2.3.7 drops vote messages before any webhook: votes are unavailable, never zeros.
    fake.upgrade("2.3.6");
    // An upgrade restarts the gateway: its instances reconnect, and the service reads its version again.
    await fake.setState(s.channel, "open");
    const dropped = fake.droppedPollVotes;
    await fake.pollVote(a, "5511900000009", ["Não"]);
    expect(fake.droppedPollVotes).toBe(dropped + 1);
    const old = await until(
      () => info(id),
      (r) => r.json.poll.votes_available === false,
    );
    expect(old.json.poll.options).toEqual([
      { text: "Sim", votes: null },
      { text: "Não", votes: null },
      { text: "Talvez", votes: null },
    ]);
    fake.upgrade("2.3.7");
    await fake.setState(s.channel, "open");
  });

  it("a poll of 11 options is a 400 naming poll.options (Evolution's sendPoll takes at most 10)", async () => {
    const s = await segment(1);
    const res = await api("POST", "/api/external/create-campaign/poll", {
      name: "Enquete",
      id_segment: s.segment,
      poll: { question: "Qual dia?", options: Array.from({ length: 11 }, (_, i) => `Dia ${i + 1}`), multiple_answers: false },
    });
    expect(expectEnvelope(res, 400, "Bad Request").message).toMatch(/poll\.options.*at most 10/);
  });
});
