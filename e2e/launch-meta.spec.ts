/**
 * Meta's Conversions API in a real browser (docs/launches.md#metas-conversions-api): the launch form's Meta fields
 * saved with the launch, a visit of the join link, the event at a loopback receiver standing in for
 * graph.facebook.com (scripts/e2e.ts points the server's META_GRAPH_URL at E2E_META_GRAPH_PORT), and the launch
 * page's log: the event sent, then one Meta refused with its message; the token is never shown.
 */
import { startReceiver } from "../test/webhooks/receiver";
import { createChannel, nav, newAccount, signUp, tallScreenshot, withPage } from "./flows";
import { assert, eventually, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

const channel = "Canal Meta";
const pixel = "123456789012345";
const token = "EAAG-token-secreto-e2e";

export const tests: E2ETest[] = [
  {
    name: "launch: Meta pixel saved from the form, a click's server event sent, the log on the launch page",
    async run(ctx) {
      const { baseUrl, log } = ctx;
      const port = Number(process.env.E2E_META_GRAPH_PORT);
      assert(port > 0, "E2E_META_GRAPH_PORT is not set (run through scripts/e2e.ts)");
      const receiver = await startReceiver({ port });
      try {
        await withPage(ctx, async (page) => {
          await signUp(page, newAccount("meta"));
          await createChannel(page, channel);
          await nav(page, "Lançamentos").click();
          await page.getByRole("link", { name: "Novo lançamento" }).click();
          await expectUrl(page, /\/launches\/new$/);
          await page.getByLabel("Nome do lançamento").fill("Turma Meta E2E");
          await page.getByRole("checkbox", { name: channel }).check();
          await page.getByLabel("ID do pixel").fill(pixel);
          const tokenField = page.getByLabel("Token de acesso");
          assert((await tokenField.getAttribute("type")) === "password", "the token is typed in a password field");
          await tokenField.fill(token);
          await page.getByLabel("Código de teste").fill("TEST777");
          await page.getByRole("button", { name: "Criar lançamento" }).click();
          await expectUrl(page, /\/launches\/launch_[0-9a-f-]+$/, 30_000);

          // The settings shown back, never the token.
          const panel = page.getByTestId("meta-panel");
          await expectText(panel.getByTestId("meta-pixel"), pixel);
          await expectText(panel.getByTestId("meta-event-name"), "Lead");
          await expectText(panel.getByTestId("meta-token"), "Salvo");
          await expectText(panel, "Nenhum evento ainda");
          assert(!(await page.content()).includes(token), "the token is on the launch page");
          log("launch created with tracking.meta from the form");

          // A visitor from an ad: the server sends the Lead event a moment later (the meta-events job, every 2 s).
          const joinUrl = await page.getByTestId("join-url").inputValue();
          const visit = await fetch(`${baseUrl}${new URL(joinUrl).pathname}?utm_source=facebook&fbclid=IwAR-E2e`, {
            redirect: "manual",
            headers: { "user-agent": "Mozilla/5.0 (Linux; Android 14) Mobile Safari/537.36" },
          });
          assert(visit.status === 302, `the link answered ${visit.status}`);
          await eventually(async () => assert(receiver.received.length === 1, `requests at the receiver: ${receiver.received.length}`), 30_000);
          const req = receiver.received[0];
          assert(req.path === `/v25.0/${pixel}/events`, `request path ${req.path}`);
          const body = JSON.parse(req.body);
          assert(body.access_token === token && body.test_event_code === "TEST777", `request body: ${req.body}`);
          const [event] = body.data;
          assert(event.event_name === "Lead" && event.action_source === "website", `event: ${JSON.stringify(event)}`);
          assert(/^fb\.1\.\d{13}\.IwAR-E2e$/.test(event.user_data.fbc), `fbc: ${event.user_data.fbc}`);

          // The log follows (it polls): one event, sent at the first attempt.
          const rows = panel.getByTestId("meta-event-row");
          await expectText(rows.first(), /Lead\s*\(fbclid\)\s*Enviado\s*1/, 30_000);
          await expectText(panel.getByTestId("meta-totals"), "1 enviados");
          log("the click's event reached the receiver and the log shows it sent");

          // Meta refuses the next one (a 400 is final): the log shows its message.
          receiver.respond({
            status: 400,
            body: JSON.stringify({ error: { message: "Invalid OAuth access token", type: "OAuthException", code: 190, fbtrace_id: "E2E" } }),
          });
          const second = await fetch(`${baseUrl}${new URL(joinUrl).pathname}`, { redirect: "manual" });
          assert(second.status === 302, `the link answered ${second.status}`);
          await expectText(rows.first().getByTestId("meta-event-state"), "Falhou", 30_000);
          await expectText(rows.first().getByTestId("meta-event-error"), "HTTP 400: Invalid OAuth access token");
          await expectText(panel.getByTestId("meta-totals"), /1 enviados · 0 na fila · 1 falharam/);
          await tallScreenshot(ctx, page, "launch-meta");

          // Another event name, the token kept (left empty).
          await panel.getByRole("button", { name: "Alterar" }).click();
          const form = page.getByRole("form", { name: "API de Conversões da Meta" });
          await expectVisible(form);
          assert((await form.getByLabel("Token de acesso").inputValue()) === "", "the token field starts empty");
          await form.getByLabel("Evento").fill("CompleteRegistration");
          await form.getByRole("button", { name: "Salvar" }).click();
          await expectText(panel.getByTestId("meta-event-name"), "CompleteRegistration");
          await expectText(panel.getByTestId("meta-token"), "Salvo");
          log("the settings edited, the token kept");
        });
      } finally {
        await receiver.close();
      }
    },
  },
];
