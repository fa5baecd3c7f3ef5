import { randomUUID } from "node:crypto";
import { getDb } from "../../db/client";
import { createTenant } from "../../server/auth/create-tenant";
import { apiFor, request } from "../helpers";
import { signIn } from "../oauth-client";

export const password = "senha-segura-123";

/** The dashboard's tRPC as the browser calls it: queries by GET, mutations by same-origin JSON POST. */
export function dashboard(baseUrl: string, cookie: string) {
  return {
    query: (path: string, input?: unknown) =>
      request(baseUrl, "GET", `/api/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, undefined, { cookie }),
    mutate: (path: string, input?: unknown) => request(baseUrl, "POST", `/api/trpc/${path}`, input ?? {}, { cookie, origin: baseUrl }),
  };
}

/** A new account whose owner is signed in, with the owner's API key. */
export async function ownerAccount(baseUrl: string, name = "Loja da Ana") {
  const email = `owner-${randomUUID()}@example.test`;
  const { tenantId, apiKey, userId } = await createTenant(await getDb(), { name, email, password });
  const cookie = await signIn(baseUrl, email, password);
  return { tenantId, userId, email, cookie, api: apiFor(baseUrl, tenantId, apiKey), apiKey, trpc: dashboard(baseUrl, cookie) };
}

/** The session cookie a response sets (the account switcher, accepting an invitation). */
export const sessionCookieOf = (headers: Headers) =>
  headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .find((c) => c.startsWith("next-auth.session-token="));

/** Invites `role`, signs the person up through the link, and signs them in: their cookie and e-mail. */
export async function joinThroughInvitation(baseUrl: string, owner: { trpc: ReturnType<typeof dashboard> }, role: string) {
  const email = `${role}-${randomUUID()}@example.test`;
  const invited = await owner.trpc.mutate("members.invite", { email, role });
  if (invited.status !== 200) throw new Error(`invite failed: ${invited.text}`);
  const path: string = invited.json.result.data.path;
  const token = path.split("/").pop()!;
  const signedUp = await request(baseUrl, "POST", "/api/trpc/members.signUpWithInvitation", { token, name: `Pessoa ${role}`, password }, { origin: baseUrl });
  if (signedUp.status !== 200) throw new Error(`sign-up failed: ${signedUp.text}`);
  const cookie = await signIn(baseUrl, email, password);
  return { email, token, path, cookie, trpc: dashboard(baseUrl, cookie) };
}
