/**
 * A small HTTP client for Evolution API v2: the `apikey` header, a time-out on every call, retries with
 * backoff for calls that are safe to repeat, and Evolution's error body
 * (`{status, error, response: {message}}`) turned into one error type.
 */
export interface EvolutionClientOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Extra attempts for calls that are safe to repeat (reads, idempotent writes). */
  retries: number;
  /** First backoff step; doubles each retry. */
  backoffMs?: number;
}

/** The gateway answered with a non-2xx status. */
export class EvolutionHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "EvolutionHttpError";
  }
}

/**
 * No answer. `notSent`: the request never reached the gateway (connection refused, no such host), so
 * a send did not happen; otherwise (time-out, reset after the request was written) a send's outcome is unknown.
 */
export class EvolutionUnreachableError extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
    readonly notSent = false,
  ) {
    super(message);
    this.name = "EvolutionUnreachableError";
  }
}

/**
 * Evolution 2.4 answers every route but `/` with 503 `{code: "LICENSE_REQUIRED", register_url, message}`
 * until the instance is activated (`src/licensing/runtime.ts` gateMiddleware, in front of every router):
 * the request was not handled at all, so nothing was sent or made. The gateway is unavailable, not
 * "outcome unknown"; asking again changes nothing until someone activates it.
 */
export class EvolutionNotActivatedError extends EvolutionUnreachableError {
  constructor(
    message: string,
    readonly registerUrl: string | null,
  ) {
    super(message, false, true);
    this.name = "EvolutionNotActivatedError";
  }
}

/**
 * What Evolution says `[object Object]` for: an error object it caught and stringified (`error.toString()` of its
 * own exceptions, which are plain objects) — in a send to a group, its NotFoundException('Group not found') for a
 * group whose metadata WhatsApp would not give (whatsapp.baileys.service.ts sendMessageWithTyping; docs/evolution.md).
 */
export const objectObjectText = "[object Object] (Evolution API stringified an error object: for a send to a group, its 'Group not found')";

/** Evolution's error bodies carry the text in `response.message` (string or array) or `message`. */
export function evolutionErrorText(body: unknown, fallback: string): string {
  const b = body as { response?: { message?: unknown }; message?: unknown; error?: unknown } | undefined;
  const raw = b?.response?.message ?? b?.message ?? b?.error;
  const flat = Array.isArray(raw) ? raw.map((m) => (typeof m === "string" ? m : JSON.stringify(m))).join("; ") : raw;
  const text = typeof flat === "string" && flat ? flat : fallback;
  return text.replace(/^\[object Object\]$/, objectObjectText);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class EvolutionClient {
  constructor(private readonly opts: EvolutionClientOptions) {}

  /**
   * One call. `retry: true` repeats it after a network error, a time-out, 429 or 5xx (honouring
   * Retry-After up to 30 s); sends pass `retry: false` and reconcile an unknown outcome themselves.
   */
  async request<T>(
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: string,
    options: { body?: unknown; query?: Record<string, string>; retry?: boolean; timeoutMs?: number } = {},
  ): Promise<T> {
    const url = new URL(this.opts.baseUrl + path);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    const attempts = options.retry ? 1 + Math.max(0, this.opts.retries) : 1;
    let lastError: Error = new EvolutionUnreachableError("not attempted", false);
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) {
        const hinted = lastError instanceof EvolutionHttpError ? lastError.retryAfterMs : undefined;
        await sleep(hinted ?? (this.opts.backoffMs ?? 250) * 2 ** (attempt - 1));
      }
      try {
        return await this.once<T>(method, url, options.body, options.timeoutMs ?? this.opts.timeoutMs);
      } catch (err) {
        lastError = err as Error;
        const retryable =
          (err instanceof EvolutionUnreachableError && !(err instanceof EvolutionNotActivatedError)) ||
          (err instanceof EvolutionHttpError && (err.status === 429 || err.status >= 500));
        if (!retryable) throw err;
      }
    }
    throw lastError;
  }

  private async once<T>(method: string, url: URL, body: unknown, timeoutMs: number): Promise<T> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, {
        method,
        headers: { apikey: this.opts.apiKey, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: "error",
      });
      text = await res.text();
    } catch (err) {
      const timedOut = (err as Error)?.name === "TimeoutError" || (err as Error)?.name === "AbortError";
      const code = String((err as { cause?: { code?: unknown } })?.cause?.code ?? "");
      const notSent = !timedOut && ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"].includes(code);
      throw new EvolutionUnreachableError(
        timedOut
          ? `Evolution API did not answer ${url.pathname} within ${timeoutMs} ms`
          : `Evolution API unreachable (${(err as Error).message}${code ? ` ${code}` : ""})`,
        timedOut,
        notSent,
      );
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    const gate = parsed as { code?: unknown; register_url?: unknown; message?: unknown } | undefined;
    if (res.status === 503 && gate?.code === "LICENSE_REQUIRED") {
      const registerUrl = typeof gate.register_url === "string" ? gate.register_url : null;
      throw new EvolutionNotActivatedError(
        // The operator's activation URL stays on the error (the start-up check logs it), never in a message a tenant may read.
        "Evolution API is not activated (503 LICENSE_REQUIRED): nothing is handled until it is",
        registerUrl,
      );
    }
    if (!res.ok) {
      const retryAfter = Number(res.headers.get("retry-after"));
      throw new EvolutionHttpError(
        res.status,
        `Evolution API ${url.pathname} answered ${res.status}: ${evolutionErrorText(parsed, res.statusText)}`,
        parsed,
        Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 30) * 1000 : undefined,
      );
    }
    return parsed as T;
  }
}
