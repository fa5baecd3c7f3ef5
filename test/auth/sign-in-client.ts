/** The documented script sign-in (GET /api/auth/csrf, POST /api/auth/callback/credentials), timed, for the throttling tests. */

export interface SignInAttempt {
  signedIn: boolean;
  /** next-auth's error code: CredentialsSignin, TooManyAttempts:<seconds>, … */
  error: string | null;
  /** Milliseconds the credentials POST took (the part that hashes, or is refused). */
  ms: number;
}

export async function attemptSignIn(baseUrl: string, email: string, password: string, headers: Record<string, string> = {}): Promise<SignInAttempt> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`, { headers });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookie = cookiesOf(csrf);
  const started = performance.now();
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { ...headers, "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
  });
  const ms = performance.now() - started;
  const signedIn = res.headers.getSetCookie().some((c) => c.startsWith("next-auth.session-token="));
  // next-auth answers a redirect: to the callback URL, or to its error page with ?error=.
  const text = await res.text();
  const url = res.headers.get("location") ?? (JSON.parse(text) as { url: string }).url;
  return { signedIn, error: new URL(url, baseUrl).searchParams.get("error"), ms };
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The `name=value` pairs of a response's Set-Cookie headers, joined for a Cookie header. */
export const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");

/** Signs out the session of `cookie` as the dashboard does (next-auth's POST /api/auth/signout with its CSRF token). */
export async function signOutSession(baseUrl: string, cookie: string): Promise<void> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`, { headers: { cookie } });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const res = await fetch(`${baseUrl}/api/auth/signout`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: [cookie, cookiesOf(csrf)].filter(Boolean).join("; ") },
    body: new URLSearchParams({ csrfToken, json: "true" }),
  });
  await res.text();
  if (!res.headers.getSetCookie().some((c) => c.startsWith("next-auth.session-token=;"))) throw new Error(`sign-out did not clear the cookie (${res.status})`);
}
