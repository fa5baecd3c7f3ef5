/**
 * Partner apps in a real browser: a developer registers an app in the portal (client_id and the
 * secret shown once; the app's webhook signing secret); a signed-out user opens the consent URL, signs in, sees the app and its scopes,
 * approves, and lands on the app's redirect URI with a code that the app exchanges for tokens.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exchangeCodeAndReadStatistics, nav, newAccount, signUp, withPage } from "./flows";
import { assert, expectText, expectUrl, expectVisible, type E2ETest } from "./harness";

export const tests: E2ETest[] = [
  {
    name: "developer portal, sign-in from the consent page, approve, code exchange",
    async run(ctx) {
      const { baseUrl, log, screenshot } = ctx;
      // The partner app's callback: a local page that just says it got the code.
      const callback = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<h1>App do parceiro: retorno recebido</h1>"));
      await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
      const redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
      try {
        let clientId = "";
        let clientSecret = "";
        await withPage(ctx, async (page) => {
          await signUp(page, newAccount("dev"));
          await nav(page, "Apps").click();
          await expectUrl(page, /\/apps$/);
          await page.getByLabel("Nome do app").fill("Painel BI Parceiro");
          await page.getByLabel("Página do app").fill("https://bi.example.com");
          await page.getByLabel("Política de privacidade").fill("https://bi.example.com/privacidade");
          await page.getByLabel("URIs de redirecionamento").fill(redirectUri);
          await page.getByLabel("Webhook do app").fill("https://bi.example.com/webhook");
          await page.getByRole("checkbox", { name: /campaigns:read/ }).check();
          await page.getByRole("button", { name: "Registrar app" }).click();
          await expectVisible(page.getByLabel("client_secret", { exact: true }));
          clientId = await page.getByLabel("client_id", { exact: true }).inputValue();
          clientSecret = await page.getByLabel("client_secret", { exact: true }).inputValue();
          assert(/^client_/.test(clientId) && /^pcs_/.test(clientSecret), `unexpected credentials ${clientId} ${clientSecret}`);
          await screenshot(page, "oauth-01-portal");
          await page.getByRole("button", { name: "Já copiei, fechar" }).click();
          const card = page.getByRole("article", { name: "App Painel BI Parceiro" });
          await expectText(card, "statistics:read");
          // The app's webhook signing secret: masked, then shown.
          await card.getByRole("button", { name: "Mostrar" }).click();
          const webhookSecret = await card.getByLabel("Segredo de assinatura do webhook de Painel BI Parceiro").inputValue();
          assert(/^whsec_[A-Za-z0-9+/=]{20,}$/.test(webhookSecret), `unexpected webhook secret ${webhookSecret}`);
          await screenshot(page, "oauth-01-portal-webhook-secret");
          log(`registered ${clientId}`);
        });

        const user = newAccount("oauth");
        await withPage(ctx, async (page) => {
          await signUp(page, user);
          // Leave the dashboard first: signed out under it, its next poll sends the tab to /login, a
          // navigation that could abort the one to the consent URL (seen once in CI as ERR_ABORTED).
          await page.goto("about:blank");
          await page.context().clearCookies(); // signed out
          const verifier = randomBytes(32).toString("base64url");
          const state = randomBytes(16).toString("base64url");
          const consentUrl = `/oauth/authorize?${new URLSearchParams({
            client_id: clientId,
            redirect_uri: redirectUri,
            response_type: "code",
            scope: "statistics:read campaigns:read",
            state,
            code_challenge: createHash("sha256").update(verifier).digest("base64url"),
            code_challenge_method: "S256",
          })}`;
          const first = await page.goto(consentUrl);
          await expectUrl(page, /\/login\?callbackUrl=/);
          assert(first !== null, "no response for the consent URL");
          await page.getByLabel("E-mail").fill(user.email);
          await page.getByLabel("Senha").fill(user.password);
          await page.getByRole("button", { name: "Entrar" }).click();

          // Back on the same request, signed in: the app, its links and each scope.
          await expectVisible(page.getByRole("heading", { name: "Autorizar Painel BI Parceiro?" }), 30_000);
          const consent = await page.request.get(consentUrl, { maxRedirects: 0 });
          assert(consent.headers()["content-security-policy"]?.includes("frame-ancestors 'none'"), "the consent page must forbid framing");
          await expectVisible(page.getByRole("link", { name: "Política de privacidade" }));
          const permissions = page.getByRole("list", { name: "Permissões pedidas" });
          await expectText(permissions, "estatísticas agregadas");
          await expectText(permissions, "lista das suas campanhas");
          await expectText(permissions, "Sensível");
          await screenshot(page, "oauth-02-consent");
          await page.getByRole("button", { name: "Autorizar" }).click();

          await expectUrl(page, new RegExp(`^${redirectUri.replace(/[.?]/g, "\\$&")}\\?code=`));
          const landed = new URL(page.url());
          assert(landed.searchParams.get("state") === state, "state must come back");
          assert(landed.searchParams.get("iss") === baseUrl, `iss must be the issuer, got ${landed.searchParams.get("iss")}`);
          log("approved and landed on the redirect URI");

          const accessToken = await exchangeCodeAndReadStatistics(baseUrl, { clientId, clientSecret, redirectUri, verifier }, landed);
          log("code exchanged; the token reads partner statistics");

          // The user sees the app among the authorized ones and can revoke it.
          await page.goto("/apps");
          const row = page.getByRole("row").filter({ hasText: "Painel BI Parceiro" });
          await expectVisible(row);
          await row.getByRole("button", { name: "Revogar acesso de Painel BI Parceiro" }).click();
          await expectText(page.locator("section").filter({ hasText: "Apps autorizados" }), "Nenhum app autorizado.");
          const after = await fetch(`${baseUrl}/api/external/partner/statistics`, { headers: { authorization: `Bearer ${accessToken}` } });
          assert(after.status === 401, `a revoked token must be refused, got ${after.status}`);
        });
      } finally {
        callback.close();
      }
    },
  },
];
