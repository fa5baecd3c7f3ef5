/**
 * The small set of domain errors. Each carries its HTTP status, a machine code and the extras
 * of the spec's envelope; server/http/envelope.ts maps them to responses in one place.
 */
export type EnvelopeExtras = {
  current?: number;
  max?: number;
  limitExceeded?: boolean;
  limitType?: string;
};

export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extras: EnvelopeExtras = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequest extends DomainError {
  constructor(message: string, code = "validation_error", extras: EnvelopeExtras = {}) {
    super(400, code, message, extras);
  }
}

export class Unauthorized extends DomainError {
  constructor(message = "API key is invalid or absent. Send it in the x-api-key header.", code = "unauthorized") {
    super(401, code, message);
  }
}

export class Forbidden extends DomainError {
  constructor(message: string, code = "forbidden") {
    super(403, code, message);
  }
}

export class LimitReached extends DomainError {
  constructor(message: string, current: number, max: number, code = "limit_reached") {
    super(403, code, message, { current, max });
  }
}

export class NotFound extends DomainError {
  constructor(message: string) {
    super(404, "not_found", message);
  }
}

export class Conflict extends DomainError {
  constructor(message: string, code = "conflict") {
    super(409, code, message);
  }
}

export class Unavailable extends DomainError {
  constructor(message: string, code = "service_unavailable") {
    super(503, code, message);
  }
}

export class NotImplemented extends DomainError {
  constructor(message: string) {
    super(501, "not_implemented", message);
  }
}

export class RateLimited extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    code = "rate_limited",
  ) {
    super(429, code, message);
  }
}

/**
 * Makes `instanceof cls` hold for instances made by another copy of the same module. Next.js bundles
 * instrumentation (which builds the shared services) apart from each route, and the REST server loads
 * a copy of its own: an error thrown by the provider of one copy must be recognised by the code of
 * another. A class is known by a registered symbol on its prototype, which subclasses inherit.
 */
export function recognisedAcrossCopies(classes: Record<string, abstract new (...args: never[]) => unknown>) {
  for (const [name, cls] of Object.entries(classes)) {
    const brand = Symbol.for(`group-campaigns.${name}`);
    Object.defineProperty(cls.prototype, brand, { value: true });
    Object.defineProperty(cls, Symbol.hasInstance, { value: (v: unknown) => typeof v === "object" && v !== null && brand in v });
  }
}

recognisedAcrossCopies({ DomainError, BadRequest, Unauthorized, Forbidden, LimitReached, NotFound, Conflict, Unavailable, NotImplemented, RateLimited });
