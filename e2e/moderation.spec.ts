/**
 * Moderation in a real browser (docs/moderation.md#dashboard): the launch page's Moderação card set to Testar then
 * Aplicar; the Números bloqueados page (a bad number named, numbers pasted, one unblocked); blocklisted and foreign
 * numbers joining the launch's group through the simulator show as decisions (would_remove, then removed); "Desfazer"
 * on the removal shows the group's invite link and takes the number off the blocklist. Then members' messages: a link
 * posted through the simulator is deleted and shown, an allowed domain passes, the second offence removes the member
 * and "Desfazer" on that removal shows the invite.
 */
import type { Page } from "playwright-core";
import { apiCaller, channelIdOf, createApiKey, createChannel, nav, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, eventually, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

const blockedFirst = "5511987650091";
const blockedSecond = "5511987650092";
const foreign = "14155550123";
const member = "5511987650093";

/** The Moderação card's decision row for a participant and an action label (the table refreshes every 5 s). */
const decision = (page: Page, participant: string, action: string) =>
  page.getByRole("table", { name: "Decisões da moderação" }).getByRole("row").filter({ hasText: participant }).filter({ hasText: action });

async function saveMode(page: Page, mode: "Testar" | "Aplicar") {
  const card = page.getByRole("region", { name: "Moderação" });
  await card.getByRole("radio", { name: new RegExp(`^${mode}`) }).check();
  await card.getByRole("button", { name: "Salvar moderação" }).click();
  await expectText(card.getByTestId("moderation-mode"), mode);
  await expectVisible(card.getByText("Moderação salva."));
}

/** A new account with a channel and a launch of one group, set up as a script would; the group's id URL-encoded. */
async function accountWithLaunch(baseUrl: string, page: Page, name: string) {
  await signUp(page, newAccount("moder"));
  const call = apiCaller(baseUrl, await createApiKey(page, `Chave ${name}`));
  await createChannel(page, `Canal ${name}`);
  const channelId = await channelIdOf(page, `Canal ${name}`);
  const launch = await call("POST", "/api/external/create-launch", {
    name,
    id_channel: [channelId],
    group_template: { name: `${name} #{n}`, admins_only: false, admins: [] },
    initial_groups: 1,
  });
  const group = encodeURIComponent(launch.groups[0].id_group);
  const join = (participant: string) => call("POST", `/api/simulator/groups/${group}/participants`, { join: [participant] });
  return { call, launch, group, join };
}

export const tests: E2ETest[] = [
  {
    name: "moderation: the Moderação card in Testar then Aplicar; blocked and foreign joins as decisions; the blocklist page; Desfazer shows the invite",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      await withPage(ctx, async (page) => {
        const { call, launch, group, join } = await accountWithLaunch(baseUrl, page, "Turma Moderada");

        // Testar, with Brazil as the only country: the card saves through edit-launch.
        await page.goto(`${baseUrl}/launches/${launch.id_launch}`);
        const card = page.getByRole("region", { name: "Moderação" });
        await expectText(card.getByTestId("moderation-mode"), "Desligada");
        await expectVisible(card.getByText("Nenhuma decisão ainda"));
        await card.getByLabel("Códigos de país permitidos").fill("+55");
        await card.getByLabel("Palavras proibidas").fill("renda extra\npix grátis");
        await saveMode(page, "Testar");
        const saved = (await call("GET", `/api/external/info-launch/${launch.id_launch}`)).moderation;
        assert(
          saved.mode === "shadow" && JSON.stringify(saved.country_codes) === '["55"]' && saved.banned_words.length === 2,
          `info-launch's moderation after the card: ${JSON.stringify(saved)}`,
        );
        log("moderation saved in Testar from the card");

        // The blocklist page: a bad number is named, then two numbers pasted at once.
        await nav(page, "Números bloqueados").click();
        await expectUrl(page, /\/bloqueios$/);
        await expectVisible(page.getByText("Nenhum número bloqueado."));
        const numbers = page.getByLabel("Números", { exact: true });
        await numbers.fill(`${blockedFirst}\n12ab`);
        await page.getByRole("button", { name: "Bloquear" }).click();
        await expectVisible(page.getByText("Número inválido: 12ab."));
        await numbers.fill(`${blockedFirst}\n+55 (11) 98765-0092`);
        await page.getByRole("button", { name: "Bloquear" }).click();
        await expectVisible(page.getByText("2 números adicionados"));
        const list = page.getByRole("table", { name: "Números bloqueados" });
        await expectVisible(list.getByRole("cell", { name: blockedFirst }));
        await expectVisible(list.getByRole("cell", { name: blockedSecond }));
        log("two numbers blocked from the page; the bad one named");

        // In Testar a blocked and a foreign join are recorded, nothing done.
        await join(blockedFirst);
        await join(foreign);
        await page.goto(`${baseUrl}/launches/${launch.id_launch}`);
        await expectText(decision(page, blockedFirst, "Removeria (teste)"), "Número bloqueado", 20_000);
        await expectText(decision(page, foreign, "Removeria (teste)"), "País fora da lista", 20_000);
        const members = await call("GET", `/api/simulator/groups/${group}/participants`);
        assert(
          members.participants.some((p: { participant: string }) => p.participant === foreign),
          `in Testar the foreign number was removed: ${JSON.stringify(members)}`,
        );

        // Aplicar: the second blocked number is removed when it joins.
        await saveMode(page, "Aplicar");
        await join(blockedSecond);
        const removal = decision(page, blockedSecond, "Removido do grupo");
        await expectText(removal, "Número bloqueado", 20_000);
        await tallScreenshot(ctx, page, "launch-moderation");
        log("decisions shown: would_remove in Testar, removed in Aplicar");

        // Desfazer: the invite link to send, and the number off the blocklist (no one is re-added by force).
        await removal.getByRole("button", { name: "Desfazer" }).click();
        const undone = page.getByTestId("moderation-undone");
        await expectText(undone, "Ninguém é readicionado à força");
        const invite = await undone.getByLabel("Convite do grupo").inputValue();
        assert(/^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9]{22}$/.test(invite), `the invite shown: ${invite}`);
        await ctx.screenshot(page, "launch-moderation-undone");

        await nav(page, "Números bloqueados").click();
        await expectVisible(list.getByRole("cell", { name: blockedFirst }));
        assert((await list.getByRole("cell", { name: blockedSecond }).count()) === 0, "the removal undone left its number on the blocklist");
        await page.getByRole("button", { name: `Desbloquear ${blockedFirst}` }).click();
        await expectVisible(page.getByText("Nenhum número bloqueado."));
        const left = await call("GET", "/api/external/list-blocklist");
        assert(left.total === 0, `list-blocklist after unblocking: ${JSON.stringify(left)}`);
        log("Desfazer showed the invite; the blocklist emptied from the page");
      });
    },
  },
  {
    name: "moderation: links posted in a group in Aplicar are deleted, the second removes the member, Desfazer on that removal; an allowed domain passes",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      await withPage(ctx, async (page) => {
        const { call, launch, group, join } = await accountWithLaunch(baseUrl, page, "Turma Mensagens");
        await join(member);

        await page.goto(`${baseUrl}/launches/${launch.id_launch}`);
        const card = page.getByRole("region", { name: "Moderação" });
        await card.getByLabel("Domínios permitidos").fill("https://meucurso.com.br/aula");
        await card.getByLabel("Avisos até remover").fill("2");
        await saveMode(page, "Aplicar");
        // The URL typed keeps its hostname, as saved.
        await eventually(async () => assert((await card.getByLabel("Domínios permitidos").inputValue()) === "meucurso.com.br", "the domain as saved"));

        const post = (text: string) => call("POST", `/api/simulator/groups/${group}/messages`, { from: member, text });
        await post("A aula está em https://ao-vivo.meucurso.com.br/hoje");
        const spam = await post("Entra no meu grupo: https://chat.whatsapp.com/AbCdEfGhIjKlMnOpQrStUv");
        const first = decision(page, member, "Mensagem apagada");
        await expectText(first, "Link", 20_000);
        await expectText(first, "Entra no meu grupo");
        const table = page.getByRole("table", { name: "Decisões da moderação" });
        assert((await table.getByRole("row").filter({ hasText: "A aula está" }).count()) === 0, "the link to the allowed domain was judged");
        await eventually(async () => {
          await new Promise((r) => setTimeout(r, 500)); // at most 2 requests a second (the API key's limit)
          const { messages } = await call("GET", `/api/simulator/groups/${group}/messages`);
          const m = messages.find((x: { id_message: string }) => x.id_message === spam.id_message);
          assert(m?.deleted === true, `the link message is not deleted: ${JSON.stringify(m)}`);
        }, 30_000);
        log("the link deleted and shown; the allowed domain passed");

        // The second offence reaches strikes_to_remove (2): removed; Desfazer shows the invite to send them.
        await post("Renda extra: https://renda-extra.xyz/ganhe");
        const removal = decision(page, member, "Removido do grupo");
        await expectText(removal, "Link", 20_000);
        await tallScreenshot(ctx, page, "launch-moderation-messages");
        await removal.getByRole("button", { name: "Desfazer" }).click();
        const undone = page.getByTestId("moderation-undone");
        await expectText(undone, member);
        assert(/^https:\/\/chat\.whatsapp\.com\//.test(await undone.getByLabel("Convite do grupo").inputValue()), "no invite shown after Desfazer");
        log("the second link removed the member; Desfazer showed the invite");
      });
    },
  },
];
