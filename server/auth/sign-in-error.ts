/**
 * How a throttled dashboard sign-in reaches the login page. next-auth 4 hands an error thrown in
 * `authorize` to the client as `?error=<message>` (and as `error` from `signIn(…, {redirect:false})`),
 * so the message carries the wait: `TooManyAttempts:<seconds>`. No imports: the login form (a client
 * component) reads it too.
 */
const prefix = "TooManyAttempts:";

export const throttledSignInError = (retryAfterSeconds: number) => `${prefix}${Math.max(1, Math.ceil(retryAfterSeconds))}`;

/** The seconds to wait, when `error` says the sign-in was throttled. */
export function throttledRetryAfter(error: string | null | undefined): number | undefined {
  if (!error?.startsWith(prefix)) return undefined;
  const seconds = Number(error.slice(prefix.length));
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

/** "Muitas tentativas. Tente novamente em 12 minutos." (pt-BR, whole minutes, rounded up). */
export function throttledMessage(retryAfterSeconds: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return `Muitas tentativas. Tente novamente em ${minutes} ${minutes === 1 ? "minuto" : "minutos"}.`;
}
