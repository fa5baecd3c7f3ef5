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
  const cookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
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
