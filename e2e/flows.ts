/**
 * Steps several specs share: a fresh account, a connected channel, a segment. Each leaves the page
 * where a user would be after doing it, and checks only what the next step relies on.
 */
import type { BrowserContextOptions, Page } from "playwright-core";
import { assert, expectCount, expectText, expectUrl, expectVisible, type E2EContext } from "./harness";

export interface Account {
  company: string;
  email: string;
  password: string;
}

/** A new company and e-mail each run (the database may outlive one run when DATABASE_URL is set). */
export function newAccount(prefix = "e2e"): Account {
  const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return { company: `Empresa ${prefix.toUpperCase()} ${unique}`, email: `${prefix}-${unique}@example.com`, password: "senha-segura-123" };
}

export const nav = (page: Page, label: string) => page.getByRole("navigation", { name: "Navegação principal" }).getByRole("link", { name: label });

/**
 * A browser tab in a fresh context: screenshots it when `run` fails, and fails when the page threw
 * (uncaught errors in the browser are bugs even when every assertion passed). `options` change the
 * context (e2e/phone.ts: a phone's).
 */
export async function withPage(ctx: E2EContext, run: (page: Page) => Promise<void>, options: BrowserContextOptions = {}) {
  const context = await ctx.browser.newContext({ baseURL: ctx.baseUrl, locale: "pt-BR", viewport: { width: 1280, height: 860 }, ...options });
  const page = await context.newPage();
  const browserErrors: string[] = [];
  page.on("pageerror", (err) => browserErrors.push(err.message));
  try {
    await run(page);
    if (browserErrors.length) throw new Error(`errors in the browser: ${browserErrors.join(" | ")}`);
  } catch (err) {
    await ctx.screenshot(page, "failure").catch(() => {});
    throw err;
  } finally {
    await context.close();
  }
}

/** Sign-up from the login page; ends on /channels, signed in. */
export async function signUp(page: Page, account: Account) {
  await page.goto("/login");
  await page.getByRole("link", { name: "Criar conta" }).click();
  await expectUrl(page, /\/signup$/);
  await page.getByLabel("Nome da empresa").fill(account.company);
  await page.getByLabel("E-mail").fill(account.email);
  await page.getByLabel("Senha").fill(account.password);
  await page.getByRole("button", { name: "Criar conta" }).click();
  await expectUrl(page, /\/channels$/, 30_000);
  await expectText(page.locator(".sidebar .user"), account.company);
}

/** Creates a channel and waits until the simulator has paired it. */
export async function createChannel(page: Page, name: string) {
  await nav(page, "Canais").click();
  await expectUrl(page, /\/channels$/);
  await page.getByLabel("Nome do canal").fill(name);
  await page.getByRole("button", { name: "Criar canal" }).click();
  const row = page.getByRole("row").filter({ has: page.getByRole("link", { name, exact: true }) });
  await expectText(row, "Conectado");
}

/** A segment of the channel's groups whose names match `search` (all of them when omitted); ends on its page. */
export async function createSegment(
  page: Page,
  { name, channel, search, expectGroups }: { name: string; channel: string; search?: string; expectGroups: number },
) {
  await nav(page, "Segmentos").click();
  await expectUrl(page, /\/segments$/);
  await page.getByRole("link", { name: "Novo segmento" }).click();
  await expectUrl(page, /\/segments\/new$/);
  await page.getByLabel("Nome do segmento").fill(name);
  await page.getByRole("checkbox", { name: channel }).check();
  const boxes = page.getByRole("group", { name: channel }).getByRole("checkbox");
  await expectVisible(boxes);
  if (search) await page.getByLabel("Buscar grupos").fill(search);
  await expectCount(boxes, expectGroups);
  await page.getByRole("checkbox", { name: search ? "Selecionar todos os resultados" : "Selecionar todos" }).check();
  await expectVisible(page.getByText(`${expectGroups} grupos selecionados`));
  await page.getByRole("button", { name: "Criar segmento" }).click();
  await expectUrl(page, /\/segments\/segment_[0-9a-f-]+$/, 20_000);
  await expectVisible(page.getByRole("heading", { name, level: 1 }));
}

/** Creates an API key on its page and returns it (shown once, in clear). */
export async function createApiKey(page: Page, name: string): Promise<string> {
  await nav(page, "Chaves de API").click();
  await expectUrl(page, /\/api-keys$/);
  await page.getByLabel("Nome da chave").fill(name);
  await page.getByRole("button", { name: "Criar chave" }).click();
  const field = page.getByLabel("Nova chave de API");
  await expectVisible(field);
  const key = await field.inputValue();
  await page.getByRole("button", { name: "Já copiei, fechar" }).click();
  return key;
}

/** REST calls with an API key, as a script would make them: `call(method, path, body?)` answers the parsed body and fails on a non-2xx answer. */
export function apiCaller(baseUrl: string, apiKey: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { "x-api-key": apiKey, "content-type": "application/json" },
    });
    const text = await res.text();
    assert(res.ok, `${method} ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text);
  };
}

/** The id of a channel, read from its link on the channels page. */
export async function channelIdOf(page: Page, name: string): Promise<string> {
  await nav(page, "Canais").click();
  await expectUrl(page, /\/channels$/);
  const href = await page.getByRole("link", { name, exact: true }).getAttribute("href");
  const id = decodeURIComponent(href?.split("/").pop() ?? "");
  if (!id.startsWith("channel_")) throw new Error(`no channel link for ${name}: ${href}`);
  return id;
}

/**
 * A screenshot of the whole page as if the window were as tall as the page: sticky pieces (the
 * sidebar, the settings' save bar) then sit where they belong instead of over the content.
 */
export async function tallScreenshot(ctx: E2EContext, page: Page, name: string) {
  const viewport = page.viewportSize() ?? { width: 1280, height: 860 };
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
  try {
    await page.evaluate(() => window.scrollTo(0, 0));
    await ctx.screenshot(page, name);
  } finally {
    await page.setViewportSize(viewport);
  }
}

/**
 * The partner app's side after consent: exchanges the code on the redirect URI it landed on (confidential
 * client, PKCE) and checks that the access token reads partner statistics. Returns the access token.
 */
export async function exchangeCodeAndReadStatistics(
  baseUrl: string,
  client: { clientId: string; clientSecret: string; redirectUri: string; verifier: string },
  landed: URL,
): Promise<string> {
  const token = await fetch(`${baseUrl}/api/oauth/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}`,
    },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: landed.searchParams.get("code") ?? "",
      redirect_uri: client.redirectUri,
      code_verifier: client.verifier,
    }),
  });
  const tokens = (await token.json()) as { access_token?: string };
  assert(token.status === 200 && tokens.access_token, `code exchange failed: ${token.status} ${JSON.stringify(tokens)}`);
  const stats = await fetch(`${baseUrl}/api/external/partner/statistics`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
  assert(stats.status === 200, `partner statistics answered ${stats.status}`);
  return tokens.access_token;
}
