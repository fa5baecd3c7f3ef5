/**
 * What a stranger or an attacker meets on the real production server (docs/decisions.md#limits-abuse-retention):
 *  - security headers on pages and API answers;
 *  - a 64 MiB body without credentials answered 401 within 3 s, the server's memory (VmRSS of its
 *    process) growing by less than 40 MB;
 *  - a dashboard opened at http://127.0.0.1:<port> with APP_URL (and NEXTAUTH_URL) unset, so the
 *    server calls itself `localhost`: sign in, approve a partner app, exchange the code.
 * The last two start their own server (as crash.spec.ts does): PGlite in a temporary DATA_DIR, or a
 * fresh database beside DATABASE_URL's, removed at the end.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { sendLarge } from "../test/large-body";
import { exchangeCodeAndReadStatistics, nav, newAccount, signUp, withPage } from "./flows";
import { assert, expectUrl, expectVisible, type E2EContext, type E2ETest } from "./harness";
import { createDatabase, freePort, startServer, stopServer, tempDataDir, type ServerProcess } from "./server-process";

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A production server of this spec's own, with APP_URL and NEXTAUTH_URL unset; stopped and removed after `run`. */
async function withOwnServer(ctx: E2EContext, name: string, run: (server: ServerProcess) => Promise<void>) {
  const data = tempDataDir(`gcs-e2e-${name}-`);
  const database = process.env.DATABASE_URL ? await createDatabase(process.env.DATABASE_URL, `gcs_e2e_${name}`) : undefined;
  let server: ServerProcess | undefined;
  try {
    server = await startServer({
      port: await freePort(4000),
      dataDir: data.dir,
      databaseUrl: database?.url,
      logFile: path.join(ctx.artifactsDir, `server-${name}.log`),
      log: ctx.log,
      unsetEnv: ["APP_URL", "NEXTAUTH_URL"],
    });
    await run(server);
  } finally {
    if (server) await stopServer(server);
    await database?.drop();
    data.remove();
  }
}

/** GET with the path exactly as written (fetch would normalise `..` and `%2e%2e` before sending). */
function rawGet(baseUrl: string, path: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname, port, path, method: "GET" }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB$/m);
  if (!line) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(line[1]);
}

export const tests: E2ETest[] = [
  {
    name: "security headers on pages and API answers",
    async run({ baseUrl, log }) {
      const login = await fetch(`${baseUrl}/login`);
      assert(login.status === 200, `/login answered ${login.status}`);
      const h = login.headers;
      assert(h.get("x-content-type-options") === "nosniff", `/login x-content-type-options: ${h.get("x-content-type-options")}`);
      assert(h.get("referrer-policy") === "strict-origin-when-cross-origin", `/login referrer-policy: ${h.get("referrer-policy")}`);
      assert(h.get("content-security-policy")?.includes("frame-ancestors 'none'"), `/login CSP: ${h.get("content-security-policy")}`);
      // APP_URL is http here: no HSTS.
      assert(!h.has("strict-transport-security"), "HSTS on an http APP_URL");
      for (const p of ["/api/external/list-channels", "/api/openapi.json", "/api/trpc/channels.list", "/docs"]) {
        const res = await fetch(`${baseUrl}${p}`);
        assert(res.headers.get("x-content-type-options") === "nosniff", `${p} (${res.status}) lacks nosniff`);
        assert(res.headers.get("referrer-policy") === "strict-origin-when-cross-origin", `${p} (${res.status}) lacks referrer-policy`);
      }
      // Raw paths (node:http sends them as written) that Next.js routes to the consent and login pages.
      for (const [raw, page] of [
        ["/api/%2e%2e/oauth/authorize", "/oauth/authorize"],
        ["/api/../login", "/login"],
      ]) {
        const res = await rawGet(baseUrl, raw);
        // Signed out, the consent page sends the browser to the login (a redirect from the page itself).
        const page200 = res.status === 200 && res.body.includes("<html");
        const toLogin = res.status >= 300 && res.status < 400 && String(res.headers.location).includes("/login");
        assert(page200 || (page === "/oauth/authorize" && toLogin), `${raw} answered ${res.status} (expected the ${page} page)`);
        assert(String(res.headers["content-security-policy"]).includes("frame-ancestors 'none'"), `${raw} CSP: ${res.headers["content-security-policy"]}`);
        assert(res.headers["x-frame-options"] === "DENY", `${raw} x-frame-options: ${res.headers["x-frame-options"]}`);
      }
      log("nosniff, referrer-policy and CSP frame-ancestors 'none' present (raw /api/%2e%2e/… and /api/../… pages included)");
    },
  },
  {
    name: "a 64 MiB body without credentials: 401 within 3 s, server memory grows < 40 MB",
    async run(ctx) {
      await withOwnServer(ctx, "bodies", async (server) => {
        // Warm up the facade's code paths so the measurement sees only the body.
        for (let i = 0; i < 3; i++) {
          const a = await sendLarge(server.url, { path: "/api/external/create-channel", total: 1024, contentLength: false });
          assert(a.status === 401, `warm-up answered ${a.status}`);
        }
        await sleep(500);
        const before = rssKiB(server.pid);
        // Streamed (no Content-Length): authenticated first, answered 401, never read.
        const streamed = await sendLarge(server.url, { path: "/api/external/create-channel", total: 64 * MiB, contentLength: false });
        assert(streamed.status === 401, `the streamed 64 MiB body answered ${streamed.status}: ${streamed.body}`);
        assert(streamed.ms < 3000, `answered in ${streamed.ms} ms`);
        // Declared: 413 from Content-Length before anything is read.
        const declared = await sendLarge(server.url, { path: "/api/external/create-channel", total: 64 * MiB });
        assert(declared.status === 413, `the declared 64 MiB body answered ${declared.status}`);
        assert(declared.ms < 3000, `answered in ${declared.ms} ms`);
        // A chunked body to a route of Next.js (tRPC): cut off at its cap.
        const trpc = await sendLarge(server.url, { path: "/api/trpc/auth.signUp", total: 64 * MiB, contentLength: false });
        assert(trpc.status === 413, `a streamed 64 MiB tRPC body answered ${trpc.status}`);
        await sleep(500);
        const after = rssKiB(server.pid);
        const grewMB = (after - before) / 1024;
        ctx.log(
          `RSS before ${(before / 1024).toFixed(1)} MB, after ${(after / 1024).toFixed(1)} MB (+${grewMB.toFixed(1)} MB); ` +
            `answers in ${streamed.ms} / ${declared.ms} / ${trpc.ms} ms`,
        );
        assert(grewMB < 40, `the server's RSS grew by ${grewMB.toFixed(1)} MB`);
      });
    },
  },
  {
    name: "opened at 127.0.0.1 with APP_URL unset: sign in, approve a partner app, exchange the code",
    async run(ctx) {
      await withOwnServer(ctx, "origin", async (server) => {
        const baseUrl = server.url; // http://127.0.0.1:<port>; the server believes it is http://localhost:<port>
        const own: E2EContext = { ...ctx, baseUrl };
        const callback = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<h1>retorno recebido</h1>"));
        await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
        const redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
        try {
          const user = newAccount("origin");
          await withPage(own, async (page) => {
            // Sign-up signs in (next-auth at 127.0.0.1 while NEXTAUTH_URL says localhost).
            await signUp(page, user);
            await nav(page, "Apps").click();
            await expectUrl(page, /\/apps$/);
            await page.getByLabel("Nome do app").fill("App Origem");
            await page.getByLabel("Página do app").fill("https://app.example.com");
            await page.getByLabel("Política de privacidade").fill("https://app.example.com/privacidade");
            await page.getByLabel("URIs de redirecionamento").fill(redirectUri);
            await page.getByRole("button", { name: "Registrar app" }).click();
            await expectVisible(page.getByLabel("client_secret", { exact: true }), 30_000);
            const clientId = await page.getByLabel("client_id", { exact: true }).inputValue();
            const clientSecret = await page.getByLabel("client_secret", { exact: true }).inputValue();
            await page.getByRole("button", { name: "Já copiei, fechar" }).click();

            // Signed out, then through the login page with a callbackUrl back to the consent page.
            await page.goto("about:blank");
            await page.context().clearCookies();
            const verifier = randomBytes(32).toString("base64url");
            const state = randomBytes(16).toString("base64url");
            const consentUrl = `/oauth/authorize?${new URLSearchParams({
              client_id: clientId,
              redirect_uri: redirectUri,
              response_type: "code",
              scope: "statistics:read",
              state,
              code_challenge: createHash("sha256").update(verifier).digest("base64url"),
              code_challenge_method: "S256",
            })}`;
            await page.goto(consentUrl);
            await expectUrl(page, /^http:\/\/127\.0\.0\.1:\d+\/login\?callbackUrl=/);
            await page.getByLabel("E-mail").fill(user.email);
            await page.getByLabel("Senha").fill(user.password);
            await page.getByRole("button", { name: "Entrar" }).click();
            await expectVisible(page.getByRole("heading", { name: "Autorizar App Origem?" }), 30_000);
            assert(new URL(page.url()).host === new URL(baseUrl).host, `left 127.0.0.1 for ${page.url()}`);
            await ctx.screenshot(page, "edge-consent-127");
            await page.getByRole("button", { name: "Autorizar" }).click();

            await expectUrl(page, new RegExp(`^${redirectUri.replace(/[.?]/g, "\\$&")}\\?code=`));
            const landed = new URL(page.url());
            assert(landed.searchParams.get("state") === state, "state must come back");
            await exchangeCodeAndReadStatistics(baseUrl, { clientId, clientSecret, redirectUri, verifier }, landed);
            ctx.log("approved at 127.0.0.1; the code exchanged for a working token");

            // Signing out stays on the host the browser used (next-auth's own redirect would name localhost).
            await page.goto("/channels");
            await page.getByRole("button", { name: "Sair" }).click();
            await expectUrl(page, /^http:\/\/127\.0\.0\.1:\d+\/login/);
          });
        } finally {
          callback.close();
        }
      });
    },
  },
];
