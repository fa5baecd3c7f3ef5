/** An OAuth error (RFC 6749 §4.1.2.1, §5.2): `error` is the RFC code, `description` says what to fix. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = "OAuthError";
  }
}

export const isOAuthError = (e: unknown): e is OAuthError => (e as { name?: string })?.name === "OAuthError";
