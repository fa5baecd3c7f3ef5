/**
 * Test send and variations in a real browser (docs/decisions.md#test-send, #message-variations): two test
 * groups chosen in the settings, a text with variations previewed in the composer (count and three variants,
 * a bad text refused as typed), "Enviar teste" reaching only the test groups, then the campaign sent and the
 * deliveries table showing the text each group got.
 */
import type { Page } from "playwright-core";
import { channelIdOf, createApiKey, createChannel, createSegment, nav, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, expectCount, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

const channel = "Canal Testes";
const segment = "Turma de abril";
const groups = 9; // "Grupo 01" … "Grupo 09"
const text = "{Olá|Oi|E aí}, {{grupo}}!";

interface Logged {
  id_group: string;
  id_campaign: string | null;
  text: string;
}

export const tests: E2ETest[] = [
  {
    name: "test send from the composer to the test groups, variations previewed, each group its own text",
    async run(ctx) {
      const { log, baseUrl } = ctx;
      const screenshot = (page: Page, name: string) => tallScreenshot(ctx, page, name);
      await withPage(ctx, async (page) => {
        await signUp(page, newAccount("vari"));
        const apiKey = await createApiKey(page, "Chave do simulador");
        const api = async <T>(path: string): Promise<T> => {
          const res = await fetch(`${baseUrl}${path}`, { headers: { "x-api-key": apiKey } });
          assert(res.ok, `GET ${path} answered ${res.status}`);
          return (await res.json()) as T;
        };
        await createChannel(page, channel);
        const idChannel = await channelIdOf(page, channel);
        await createSegment(page, { name: segment, channel, search: "Grupo 0", expectGroups: groups });
        const channelGroups = (await api<{ groups: { id_group: string; name: string }[] }>(`/api/external/list-groups/${idChannel}`)).groups;
        const nameOf = new Map(channelGroups.map((g) => [g.id_group, g.name]));

        // Settings: two test groups outside the segment.
        await nav(page, "Configurações").click();
        await expectUrl(page, /\/settings$/);
        const testGroups = page.getByRole("region", { name: "Grupos de teste" });
        await testGroups.getByLabel("Canal", { exact: true }).selectOption({ label: channel });
        for (const name of ["Grupo 15", "Grupo 16"]) {
          await testGroups.getByLabel("Grupo de teste").selectOption({ label: name });
          await testGroups.getByRole("button", { name: "Adicionar grupo de teste" }).click();
        }
        await expectCount(testGroups.getByRole("listitem"), 2);
        // No pauses, so the campaign below ends within the test's time.
        for (const label of [
          "Pausa mínima entre envios",
          "Pausa máxima entre envios",
          "Intervalo mínimo entre campanhas",
          "Intervalo máximo entre campanhas",
        ]) {
          await page.getByLabel(label).fill("0");
        }
        await page.getByRole("button", { name: "Salvar alterações" }).click();
        await expectText(page.getByRole("region", { name: "Salvar configurações" }).getByRole("status"), /Salvo\.[\s\S]*Grupos de teste/);
        log("two test groups saved in the settings (Grupo 15, Grupo 16), pauses 0 s");

        // Composer: a bad text is refused as typed; a good one shows its count and three variants.
        await nav(page, "Campanhas").click();
        await page.getByRole("link", { name: "Nova campanha" }).click();
        await expectUrl(page, /\/campaigns\/new$/);
        await page.getByLabel("Nome da campanha").fill("Variações de abril");
        await page.getByLabel("Segmento", { exact: true }).selectOption({ label: `${segment} (${groups} grupos)` });
        const message = page.getByLabel("Mensagem", { exact: true });
        await message.fill("{Olá|Oi, {{grupo}}!");
        await expectText(page.getByTestId("variations-error"), /Mensagem: unbalanced braces/);
        await message.fill("Oi {{nome}}");
        await expectText(page.getByTestId("variations-error"), /unknown variable \{\{nome\}\}/);
        await message.fill(text);
        await expectText(page.getByTestId("variations-count"), "3 variações");
        const previews = page.getByTestId("variations-preview").getByRole("listitem");
        await expectCount(previews, 3);
        assert(
          (await previews.allInnerTexts()).join(" | ") === "Olá, Nome do grupo! | Oi, Nome do grupo! | E aí, Nome do grupo!",
          `previews: ${(await previews.allInnerTexts()).join(" | ")}`,
        );
        await screenshot(page, "variations-01-composer-previews");
        log("composer: 3 variations previewed; unbalanced braces and an unknown variable shown as typed");

        // Enviar teste: only the two test groups, with the segment's first groups' names, one variant after another.
        await page.getByRole("button", { name: "Enviar teste" }).click();
        const results = page.getByTestId("test-send-results");
        await expectText(results, "Teste enviado a 2 de 2 grupos de teste.", 20_000);
        await expectText(results, "Olá, Grupo 01!");
        await expectText(results, "Oi, Grupo 02!");
        await screenshot(page, "variations-02-test-sent");
        const tests = (await api<{ messages: Logged[] }>(`/api/simulator/messages?id_channel=${idChannel}`)).messages;
        assert(tests.length === 2, `expected 2 messages after the test send, got ${tests.length}`);
        assert(
          tests.every((m) => m.id_campaign === null) && new Set(tests.map((m) => nameOf.get(m.id_group))).size === 2,
          `the test went elsewhere: ${JSON.stringify(tests)}`,
        );
        assert(
          tests.map((m) => nameOf.get(m.id_group)).every((n) => n === "Grupo 15" || n === "Grupo 16"),
          `not the test groups: ${JSON.stringify(tests)}`,
        );
        log("Enviar teste: Grupo 15 and Grupo 16 got it, nothing else");

        // The campaign: each group its own name; the deliveries table shows what each got.
        await page.getByRole("button", { name: "Criar e enviar agora" }).click();
        await expectUrl(page, /\/campaigns\/campaign_[0-9a-f-]+$/, 20_000);
        await expectText(page.getByTestId("campaign-status"), "Concluída", 90_000);
        const idCampaign = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
        const sent = (await api<{ messages: Logged[] }>(`/api/simulator/messages?id_campaign=${idCampaign}`)).messages;
        assert(sent.length === groups, `expected ${groups} messages, got ${sent.length}`);
        const rows = page.getByRole("table", { name: "Entregas por grupo" }).locator("tbody tr");
        await expectCount(rows, groups);
        for (const m of sent) {
          assert(/^(Olá|Oi|E aí), Grupo 0\d!$/.test(m.text) && m.text.includes(nameOf.get(m.id_group)!), `group ${m.id_group} got "${m.text}"`);
          await expectVisible(
            rows
              .filter({ hasText: nameOf.get(m.id_group)! })
              .getByTestId("sent-text")
              .filter({ hasText: m.text }),
          );
        }
        await screenshot(page, "variations-03-deliveries-text");
        log(`campaign ${idCampaign}: ${groups} groups, each its own name, the deliveries table shows each text`);
      });
    },
  },
];
