/**
 * The dashboard in a real browser, as a new customer uses it: sign up, get an API key, connect a
 * channel, build a segment with a monitoring group. The key read from the page is then used on the
 * REST API, and revoked.
 */
import { nav } from "./flows";
import { assert, eventually, expectCount, expectHidden, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const account = { company: `Empresa E2E ${unique}`, email: `e2e-${unique}@example.com`, password: "senha-segura-123" };

export const tests: E2ETest[] = [
  {
    name: "sign-up, API key, channel, segment and monitoring group",
    async run({ baseUrl, browser, screenshot, log }) {
      const context = await browser.newContext({ baseURL: baseUrl, locale: "pt-BR", viewport: { width: 1280, height: 860 } });
      const page = await context.newPage();
      const browserErrors: string[] = [];
      page.on("pageerror", (err) => browserErrors.push(err.message));
      try {
        // The root sends a stranger to the login page, which links to sign-up.
        await page.goto("/");
        await expectUrl(page, /\/login$/);
        await page.getByRole("link", { name: "Criar conta" }).click();
        await expectUrl(page, /\/signup$/);

        await page.getByLabel("Nome da empresa").fill(account.company);
        await page.getByLabel("E-mail").fill(account.email);
        await page.getByLabel("Senha").fill(account.password);
        await screenshot(page, "01-signup");
        await page.getByRole("button", { name: "Criar conta" }).click();
        await expectUrl(page, /\/channels$/, 30_000);
        await expectVisible(page.getByRole("heading", { name: "Canais", level: 1 }));
        await expectText(page.locator(".sidebar .user"), account.company);
        log("signed up and landed on /channels");

        // API key: shown once, in clear.
        await nav(page, "Chaves de API").click();
        await expectUrl(page, /\/api-keys$/);
        await page.getByLabel("Nome da chave").fill("Chave E2E");
        await page.getByRole("button", { name: "Criar chave" }).click();
        const keyField = page.getByLabel("Nova chave de API");
        await expectVisible(keyField);
        const apiKey = await keyField.inputValue();
        assert(/^sk_live_[A-Za-z0-9]{32,}$/.test(apiKey), `unexpected API key format: ${apiKey}`);
        await expectVisible(page.getByText("não será mostrada novamente"));
        await expectVisible(page.getByRole("button", { name: "Copiar chave" }));
        const keyRow = page.getByRole("row").filter({ hasText: "Chave E2E" });
        await expectText(keyRow, "Ativa");
        await expectText(keyRow, apiKey.slice(0, 12));
        await screenshot(page, "02-api-keys");
        await page.getByRole("button", { name: "Já copiei, fechar" }).click();
        await expectHidden(keyField);
        log("API key created");

        // Channel: create, wait for pairing, rename inline.
        await nav(page, "Canais").click();
        await expectUrl(page, /\/channels$/);
        await page.getByLabel("Nome do canal").fill("Canal E2E");
        await page.getByRole("button", { name: "Criar canal" }).click();
        const channelRow = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Canal E2E", exact: true }) });
        await expectText(channelRow, "Conectado");
        await page.getByRole("button", { name: "Renomear o canal Canal E2E" }).click();
        await page.getByLabel("Novo nome do canal Canal E2E").fill("Canal Lançamento");
        await page.getByRole("button", { name: "Salvar" }).click();
        const channelLink = page.getByRole("link", { name: "Canal Lançamento", exact: true });
        await expectVisible(channelLink);
        await screenshot(page, "03-channels");

        // Channel detail: the simulator's 20 groups.
        await channelLink.click();
        await expectUrl(page, /\/channels\/channel_[0-9a-f-]+$/);
        const channelId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
        await expectVisible(page.getByRole("heading", { name: "Grupos (20)" }));
        const groupRows = page.getByRole("table", { name: "Grupos do canal" }).locator("tbody tr");
        await expectCount(groupRows, 20);
        await expectText(groupRows.first(), "Grupo 01");
        await expectText(groupRows.last(), "Grupo 20");
        await screenshot(page, "04-channel-groups");
        log(`channel ${channelId} shows 20 groups`);

        // The key read from the page works on the REST API.
        const rest = await fetch(`${baseUrl}/api/external/list-groups/${channelId}`, { headers: { "x-api-key": apiKey } });
        const restBody = (await rest.json()) as { total_groups?: number; groups?: unknown[] };
        assert(rest.status === 200, `list-groups with the new key answered ${rest.status}: ${JSON.stringify(restBody)}`);
        assert(restBody.total_groups === 20 && restBody.groups?.length === 20, `list-groups body: ${JSON.stringify(restBody).slice(0, 200)}`);
        log("GET /api/external/list-groups with the key: 200, 20 groups");

        // Segment: channel, then groups picked with the search box, select-all and one by hand.
        await nav(page, "Segmentos").click();
        await expectUrl(page, /\/segments$/);
        await page.getByRole("link", { name: "Novo segmento" }).click();
        await expectUrl(page, /\/segments\/new$/);
        await page.getByLabel("Nome do segmento").fill("Segmento E2E");
        await page.getByRole("checkbox", { name: "Canal Lançamento" }).check();
        await expectCount(page.getByRole("group", { name: "Canal Lançamento" }).getByRole("checkbox"), 20);
        await page.getByLabel("Buscar grupos").fill("Grupo 0");
        await expectCount(page.getByRole("group", { name: "Canal Lançamento" }).getByRole("checkbox"), 9);
        await page.getByRole("checkbox", { name: "Selecionar todos os resultados" }).check();
        await expectVisible(page.getByText("9 grupos selecionados"));
        await page.getByLabel("Buscar grupos").fill("");
        await page.getByRole("checkbox", { name: "Grupo 10", exact: true }).check();
        await expectVisible(page.getByText("10 grupos selecionados"));
        await screenshot(page, "05-new-segment");
        await page.getByRole("button", { name: "Criar segmento" }).click();
        await expectUrl(page, /\/segments\/segment_[0-9a-f-]+$/, 20_000);
        await expectVisible(page.getByRole("heading", { name: "Segmento E2E", level: 1 }));
        await expectText(page.locator(".page-header"), "10 grupos");
        await expectCount(page.getByRole("table", { name: "Grupos do segmento" }).locator("tbody tr"), 10);
        log("segment created with 10 groups");

        // Monitoring group: only groups outside the segment are offered; set one, then change it.
        const monitoring = page.getByTestId("monitoring-group");
        await expectText(monitoring, "Nenhum grupo de monitoramento configurado");
        const groupSelect = page.getByRole("combobox", { name: "Grupo de monitoramento", exact: true });
        await eventually(async () => {
          const offered = await groupSelect.evaluate((s: HTMLSelectElement) => [...s.options].filter((o) => o.value && !o.disabled).map((o) => o.text));
          assert(offered.length === 10, `expected the 10 groups outside the segment, got ${JSON.stringify(offered)}`);
          assert(
            offered.every((name) => name >= "Grupo 11"),
            `a group of the segment is offered as monitoring group: ${JSON.stringify(offered)}`,
          );
        });
        await groupSelect.selectOption({ label: "Grupo 15" });
        await page.getByRole("button", { name: "Definir grupo de monitoramento" }).click();
        await expectText(monitoring, /Atual: Grupo 15 no canal Canal Lançamento/);
        await groupSelect.selectOption({ label: "Grupo 16" });
        await page.getByRole("button", { name: "Alterar grupo de monitoramento" }).click();
        await expectText(monitoring, /Atual: Grupo 16 no canal Canal Lançamento/);
        await expectVisible(page.getByText("Grupo de monitoramento salvo."));
        await screenshot(page, "06-segment");
        log("monitoring group set, then changed");

        // The list shows the result.
        await nav(page, "Segmentos").click();
        const segmentRow = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Segmento E2E" }) });
        await expectText(segmentRow, /Segmento E2E\s*10\s*Grupo 16 \(Canal Lançamento\)/);
        await screenshot(page, "07-segments");

        // Revoking the key from the dashboard shuts it out of the API.
        await nav(page, "Chaves de API").click();
        await page.getByRole("button", { name: "Revogar a chave Chave E2E" }).click();
        await page.getByRole("button", { name: "Confirmar revogação" }).click();
        await expectText(page.getByRole("row").filter({ hasText: "Chave E2E" }), "Revogada em");
        const revoked = await fetch(`${baseUrl}/api/external/list-groups/${channelId}`, { headers: { "x-api-key": apiKey } });
        assert(revoked.status === 401, `a revoked key answered ${revoked.status}`);
        log("revoked key answers 401");

        // Sign out; the dashboard sends back to the login, which honours callbackUrl.
        await page.getByRole("button", { name: "Sair" }).click();
        await expectUrl(page, /\/login/);
        await page.goto("/segments");
        await expectUrl(page, /\/login/);

        // Errors from the server reach the user, in Portuguese.
        await page.goto("/signup");
        await page.getByLabel("Nome da empresa").fill("Outra empresa");
        await page.getByLabel("E-mail").fill(account.email);
        await page.getByLabel("Senha").fill(account.password);
        await page.getByRole("button", { name: "Criar conta" }).click();
        await expectText(page.locator("form").getByRole("alert"), "Já existe uma conta com este e-mail.");

        await page.goto("/login?callbackUrl=%2Fsegments");
        await page.getByLabel("E-mail").fill(account.email);
        await page.getByLabel("Senha").fill("senha-errada");
        await page.getByRole("button", { name: "Entrar" }).click();
        await expectText(page.locator("form").getByRole("alert"), "E-mail ou senha incorretos.");
        await page.getByLabel("Senha").fill(account.password);
        await page.getByRole("button", { name: "Entrar" }).click();
        await expectUrl(page, /\/segments$/, 20_000);
        await expectVisible(page.getByRole("link", { name: "Segmento E2E" }));
        log("signed out, signed back in to /segments");

        assert(browserErrors.length === 0, `errors in the browser: ${browserErrors.join(" | ")}`);
      } catch (err) {
        await screenshot(page, "failure").catch(() => {});
        throw err;
      } finally {
        await context.close();
      }
    },
  },
];
