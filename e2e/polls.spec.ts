/**
 * A poll campaign in a real browser (docs/polls.md#the-campaign-page): a poll composed in "Nova campanha" (Enquete:
 * Pergunta, Opções, a repeated option refused, the phone preview) and sent to three groups; the
 * campaign page's "Resultado da enquete" card shows one bar per option at zero, then, as votes are cast in the three
 * groups through the simulator's control, the bars and counts follow without a reload (the page keeps polling),
 * summed over the groups as info-campaign's `poll` gives them. The card fits a 390 px wide phone.
 */
import type { Page } from "playwright-core";
import { apiCaller, channelIdOf, createApiKey, createChannel, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, eventually, expectCount, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

/** What the chart shows: option → votes (its data-votes), and each bar's width as a share of the track. */
async function shownVotes(page: Page) {
  return page.getByTestId("poll-option").evaluateAll((rows) =>
    rows.map((row) => {
      const track = row.querySelector(".poll-track") as HTMLElement;
      const fill = row.querySelector(".poll-fill") as HTMLElement;
      return {
        option: row.getAttribute("data-option"),
        votes: Number(row.getAttribute("data-votes")),
        share: track.clientWidth > 0 ? fill.clientWidth / track.clientWidth : 0,
        text: row.textContent ?? "",
      };
    }),
  );
}

export const tests: E2ETest[] = [
  {
    name: "campaign page: a poll's results chart follows the votes cast in three groups",
    async run(ctx) {
      const { log, baseUrl } = ctx;
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("poll"));
        const call = apiCaller(baseUrl, await createApiKey(page, "Chave do simulador"));
        await createChannel(page, "Celular");
        const channel = await channelIdOf(page, "Celular");
        const groups = ((await call("GET", `/api/external/list-groups/${channel}`)).groups as { id_group: string }[]).slice(0, 3).map((g) => g.id_group);
        const segment = (await call("POST", "/api/external/create-segment", { name: "Turma", id_channel: [channel], groups })).id_segment;
        await call("PATCH", "/api/external/edit-settings", {
          dispatch_rates: { min_dispatch_rate: 0, max_dispatch_rate: 0, dispatches_per_loop: 10, min_campaign_interval: 0, max_campaign_interval: 0 },
        });
        assert(segment, "no segment");

        // The composer: Enquete, its question and options, the preview as WhatsApp draws a poll.
        await page.goto("/campaigns/new");
        await page.getByLabel("Nome da campanha").fill("Melhor dia da aula");
        await page.getByLabel("Segmento", { exact: true }).selectOption({ label: "Turma (3 grupos)" });
        await page.getByRole("tab", { name: "Enquete" }).click();
        await page.getByLabel("Pergunta").fill("Qual o melhor dia para a aula ao vivo?");
        await page.getByLabel("Opção 1", { exact: true }).fill("Segunda");
        await page.getByLabel("Opção 2", { exact: true }).fill("Quarta");
        await page.getByRole("button", { name: "+ Adicionar opção" }).click();
        await page.getByLabel("Opção 3", { exact: true }).fill(" segunda ");
        await expectVisible(page.getByText("A opção 3 repete outra"));
        const submit = page.getByRole("button", { name: "Criar e enviar agora" });
        assert(await submit.isDisabled(), "a poll with a repeated option can be submitted");
        await page.getByLabel("Opção 3", { exact: true }).fill("Sexta");
        const preview = page.getByTestId("poll-preview");
        await expectText(preview, /Qual o melhor dia para a aula ao vivo\?\s*Selecione uma opção\s*Segunda\s*Quarta\s*Sexta/);
        await page.getByLabel("Permitir várias respostas").check();
        await expectText(preview, "Selecione uma ou mais opções");
        await page.getByLabel("Permitir várias respostas").uncheck();
        await ctx.screenshot(page, "poll-composer");
        await submit.click();
        await expectUrl(page, /\/campaigns\/campaign_[0-9a-f-]+$/, 20_000);
        const id = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
        log(`poll ${id} to ${groups.length} groups, composed in the dashboard`);
        const sent = (await call("GET", `/api/simulator/messages?id_campaign=${id}`)).messages as {
          message_type: string;
          poll: { question: string; options: string[]; multiple_answers: boolean };
        }[];
        assert(
          sent.length === 3 &&
            sent.every(
              (m) =>
                m.message_type === "poll" &&
                m.poll.question === "Qual o melhor dia para a aula ao vivo?" &&
                m.poll.options.join("|") === "Segunda|Quarta|Sexta" &&
                m.poll.multiple_answers === false,
            ),
          `the simulator's log: ${JSON.stringify(sent)}`,
        );

        await expectVisible(page.getByRole("heading", { name: "Resultado da enquete" }));
        await expectText(page.getByTestId("campaign-status"), "Concluída", 30_000);
        const chart = page.getByTestId("poll-results");
        await expectText(chart, "Qual o melhor dia para a aula ao vivo?");
        await expectCount(page.getByTestId("poll-option"), 3);
        const start = await shownVotes(page);
        assert(start.map((r) => `${r.option}=${r.votes}`).join(",") === "Segunda=0,Quarta=0,Sexta=0", `before any vote: ${JSON.stringify(start)}`);

        // Votes in three groups, cast while the page is open: 2+0+1 Segunda, 3+1+0 Quarta, 0+2+4 Sexta.
        const cast = [
          { Segunda: 2, Quarta: 3 },
          { Quarta: 1, Sexta: 2 },
          { Segunda: 1, Sexta: 4 },
        ];
        for (const [i, votes] of cast.entries()) {
          await call("POST", `/api/simulator/polls/${id}/${encodeURIComponent(groups[i])}/votes`, { votes });
        }
        const api = (await call("GET", `/api/external/info-campaign/${id}`)).poll.options as { text: string; votes: number }[];
        assert(api.map((o) => o.votes).join(",") === "3,4,6", `info-campaign: ${JSON.stringify(api)}`);
        await eventually(async () => {
          const shown = await shownVotes(page);
          assert(shown.map((r) => r.votes).join(",") === "3,4,6", `the chart shows ${JSON.stringify(shown)}`);
          // Each bar is its option's share of the 13 votes (the transition has ended).
          for (const r of shown) assert(Math.abs(r.share - r.votes / 13) < 0.03, `bar of ${r.option}: ${r.share} of the track for ${r.votes}/13`);
          assert(shown[2].text.includes("6") && shown[2].text.includes("46%"), `Sexta's count: ${shown[2].text}`);
        }, 20_000);
        await expectText(chart, "13 votos");
        await tallScreenshot(ctx, page, "poll-results");

        // A phone: the card stays inside the screen.
        await page.setViewportSize({ width: 390, height: 844 });
        await expectVisible(chart);
        const overflow = await page.evaluate(() => {
          const card = document.querySelector('[data-testid="poll-results"]') as HTMLElement;
          return { card: card.scrollWidth - card.clientWidth, page: document.documentElement.scrollWidth - document.documentElement.clientWidth };
        });
        assert(overflow.card <= 0, `the poll card overflows by ${overflow.card}px at 390 px`);
        await ctx.screenshot(page, "poll-results-phone");
      });
    },
  },
];
